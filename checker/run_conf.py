"""A LoadGen setting a detail log does not record, read from the measurement directory's mlperf.conf and user.conf.

LoadGen before 5.0 reads mlperf.conf from the file the harness names (not compiled in) and logs fewer ``effective_*``
keys: a 4.x detail log has no ``effective_sample_concatenate_permutation``. For such a run the setting it used is the
one its configuration files give, which the submission copies into its measurement directory; the v4.1 checker reads
equal-issue mode from exactly there (``check_measurement_dir``, CHK_v4.1:2444-2488: mlperf.conf, then user.conf).

The files are read as LoadGen reads them (:func:`checker.parsers.loadgen_conf.parse_user_conf_text`): per file the
most specific pattern wins (``model.Scenario``, ``*.Scenario``, ``model.*``, ``*.*``; within one pattern the last
line), and user.conf, loaded after mlperf.conf, overrides it where it sets the key.
"""

from __future__ import annotations

from dataclasses import dataclass

from checker.checks.context import ResultContext
from checker.parsers.loadgen_conf import ConfEntry, parse_user_conf_text

CONF_FILES = ("mlperf.conf", "user.conf")  # LoadGen's load order: the later file overrides


@dataclass(frozen=True, slots=True)
class ConfSetting:
    """Where the setting came from: the file (tree-relative) and its ``model.Scenario.key = value`` line."""

    path: str
    entry: ConfEntry

    @property
    def where(self) -> str:
        return f"{self.path}:{self.entry.line} ({self.entry.text})"


def measured_conf_setting(ctx: ResultContext, key: str) -> ConfSetting | None:
    """The value of ``key`` for this result's benchmark and LoadGen scenario in its measurement directory's
    mlperf.conf and user.conf; None when neither sets it (or the benchmark has no mlperf.conf model)."""
    bench, scen = ctx.benchmark, ctx.scenario
    if bench is None or bench.mlperf_conf_model is None or scen is None:
        return None
    found: ConfSetting | None = None
    for name in CONF_FILES:
        rel = f"{ctx.measurement_dir}/{name}"
        if not ctx.exists_file(rel):
            continue
        text = ctx.files.text(rel).text
        if not text:
            continue
        hit = parse_user_conf_text(text, rel).lookup(
            bench.mlperf_conf_model, scen.loadgen_scenario.value, key
        )
        if hit is not None:
            found = ConfSetting(rel, hit)
    return found
