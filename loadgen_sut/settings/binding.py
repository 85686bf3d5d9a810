"""What the installed LoadGen's Python binding offers: optional ``TestSettings`` attributes, one ``hasattr``
each, and the refusal of a run that needs one the release lacks.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import mlperf_loadgen as lg

from checker.parsers.mllog import parse_detail_file
from loadgen_sut.settings.modes import LOADGEN_DISTRIBUTION, _Frozen
from loadgen_sut.settings.plan import SettingsError, TestSettingsModel
from loadgen_sut.settings.preflight import installed_loadgen_version

# --------------------------------------------------------------------------------------------
# what the installed LoadGen's Python binding offers


class OptionalSetting(_Frozen):
    """A ``TestSettings`` attribute this harness uses that not every accepted LoadGen release binds."""

    attribute: str  # the mlperf_loadgen.TestSettings attribute
    field: str  # the TestSettingsModel field it reads back into
    bound_since: str  # the first mlcommons-loadgen release on PyPI that binds it (measured)
    when_missing: str  # what that release does instead


# Measured on the PyPI wheels (dir(TestSettings) and the detail log of a run per release):
# - sample_concatenate_permutation: bound from 6.0.3 on; 5.0.x/5.1.x apply it in C++ from mlperf.conf and
#   user.conf (their logs carry requested_/effective_sample_concatenate_permutation) but cannot read it back.
# - accuracy_sample_count_override: bound from 6.0.6 on; 5.x and 6.0.3-6.0.5 have no such setting at all:
#   their FromConfig ignores the user.conf key and the accuracy test logs every sample.
OPTIONAL_LOADGEN_SETTINGS: tuple[OptionalSetting, ...] = (
    OptionalSetting(
        attribute="sample_concatenate_permutation",
        field="sample_concatenate_permutation",
        bound_since="6.0.3",
        when_missing="applied from mlperf.conf/user.conf but not readable from Python; "
        "read back from the detail log's effective_sample_concatenate_permutation after the test",
    ),
    OptionalSetting(
        attribute="accuracy_sample_count_override",
        field="accuracy_sample_count",
        bound_since="6.0.6",
        when_missing="not a setting of this release: a user.conf accuracy_sample_count_override is ignored "
        "and the accuracy test covers the whole data set",
    ),
)


def unavailable_loadgen_settings(ts: Any = None) -> tuple[str, ...]:
    """The optional ``TestSettings`` attributes the installed LoadGen lacks (one ``hasattr`` each).

    ``ts``: a ``TestSettings`` (or stand-in) to inspect; default a fresh ``mlperf_loadgen.TestSettings()``
    (constructing one applies no conf, so it is safe before the process's one ``FromConfig``).
    """
    probe = lg.TestSettings() if ts is None else ts
    return tuple(o.attribute for o in OPTIONAL_LOADGEN_SETTINGS if not hasattr(probe, o.attribute))


def _needs(settings: TestSettingsModel, opt: OptionalSetting) -> bool:
    """Whether a run with these settings depends on ``opt`` (the release without it would run something else)."""
    if opt.attribute == "accuracy_sample_count_override":
        return settings.accuracy_sample_count is not None  # asked for by a user.conf line
    # sample_concatenate_permutation: every release applies it in C++; only the read-back differs
    return False


def require_loadgen_settings(
    settings: TestSettingsModel, unavailable: Sequence[str]
) -> tuple[OptionalSetting, ...]:
    """Refuse (``SettingsError``) a run that needs a setting the installed LoadGen lacks; else the unavailable ones.

    Call before LoadGen starts; ``unavailable`` is :func:`unavailable_loadgen_settings`'s answer.
    """
    missing = tuple(o for o in OPTIONAL_LOADGEN_SETTINGS if o.attribute in unavailable)
    needed = [o for o in missing if _needs(settings, o)]
    if needed:
        release = installed_loadgen_version() or "(version unknown)"
        what = "; ".join(
            f"the settings ask for {o.attribute} = {getattr(settings, o.field)}, but {LOADGEN_DISTRIBUTION} {release} "
            f"has no TestSettings.{o.attribute} ({o.when_missing}); {LOADGEN_DISTRIBUTION} {o.bound_since} and later have it"
            for o in needed
        )
        raise SettingsError(
            f"refusing to start LoadGen: {what}. Remove the user.conf line, or install a release of the round that "
            "has the setting"
        )
    return missing


def unavailable_text(missing: Sequence[OptionalSetting]) -> list[str]:
    """One line per unavailable setting: what the installed release does about it."""
    release = installed_loadgen_version() or "unknown"
    return [f"{o.attribute}: not in {LOADGEN_DISTRIBUTION} {release}, {o.when_missing}" for o in missing]


def read_back_from_log(
    actual: TestSettingsModel, detail: Path, missing: tuple[OptionalSetting, ...]
) -> TestSettingsModel:
    """Settings the release cannot read back from Python, taken from its detail log after the test.

    Only ``sample_concatenate_permutation`` is logged (``effective_sample_concatenate_permutation``) by the
    releases that do not bind it; a missing log or key keeps the value asked for.
    """
    if not any(o.attribute == "sample_concatenate_permutation" for o in missing) or not detail.is_file():
        return actual
    logged = parse_detail_file(detail).bool_value("effective_sample_concatenate_permutation")
    if logged is None:
        return actual
    return actual.model_copy(update={"sample_concatenate_permutation": logged})
