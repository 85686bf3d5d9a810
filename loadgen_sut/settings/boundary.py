"""The LoadGen boundary (child process only): the mirror converted to ``mlperf_loadgen.TestSettings`` once,
read back, and compared with the round (LoadGen's own units, ns/ms/fraction, appear only here).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import mlperf_loadgen as lg

from checker.checks.rule_registry import RuleInfo, register, registered_finding
from checker.findings import Finding
from loadgen_sut.settings.binding import require_loadgen_settings, unavailable_loadgen_settings
from loadgen_sut.settings.modes import TestMode
from loadgen_sut.settings.plan import Override, SettingsError, TestSettingsModel
from rules.models import Scenario, Seeds
from rules.registry import list_rounds, load_round

RULES = register(
    __name__,
    RuleInfo(
        "RUN-LOADGEN-CONF", "-", "a setting LoadGen will use (read back) is not the round's: another round's "
        "mlperf.conf or a user.conf override (WARNING outside --mode submission)",
    ),
)

# --------------------------------------------------------------------------------------------
# the LoadGen boundary (child process only)


def to_loadgen(settings: TestSettingsModel, user_conf_path: Path) -> Any:
    """Build ``mlperf_loadgen.TestSettings`` once: compiled mlperf.conf + user.conf via FromConfig.

    Must run at most once per process (LoadGen applies its compiled mlperf.conf only on the
    first ``FromConfig(..., conf_type=1)`` call of a process). Refuses (``SettingsError``) before
    ``FromConfig`` when the settings need an attribute the installed release lacks.
    """
    ts = lg.TestSettings()
    require_loadgen_settings(settings, unavailable_loadgen_settings(ts))
    rc = ts.FromConfig(str(user_conf_path), settings.conf_model, settings.loadgen_scenario.value)
    if rc != 0:
        raise SettingsError(
            f"LoadGen rejected the conf file (FromConfig returned {rc})", path=str(user_conf_path)
        )
    ts.scenario = getattr(lg.TestScenario, settings.loadgen_scenario.value)
    ts.mode = getattr(lg.TestMode, settings.mode.value)
    return ts


def from_loadgen(
    ts: Any, scenario: Scenario, conf_model: str, fallback: TestSettingsModel | None = None
) -> TestSettingsModel:
    """Read a ``mlperf_loadgen.TestSettings`` back into the mirror (what LoadGen will really use).

    A setting the release does not bind (:data:`OPTIONAL_LOADGEN_SETTINGS`) reads as the release
    behaves: no accuracy_sample_count_override -> None (the whole data set); no readable
    sample_concatenate_permutation -> ``fallback``'s value (the settings asked for, which the C++ side
    applies from the conf files; lgtest replaces it with the detail log's effective value after the test).
    """
    unavailable = unavailable_loadgen_settings(ts)
    lg_scn = scenario.loadgen_scenario
    server = lg_scn is Scenario.SERVER
    pct = {
        Scenario.SERVER: ts.server_target_latency_percentile,
        Scenario.SINGLE_STREAM: ts.single_stream_target_latency_percentile,
        Scenario.MULTI_STREAM: ts.multi_stream_target_latency_percentile,
    }.get(lg_scn)
    return TestSettingsModel(
        scenario=scenario,
        conf_model=conf_model,
        mode=TestMode(str(ts.mode).split(".")[-1]),
        min_duration_ms=int(ts.min_duration_ms),
        max_duration_ms=int(ts.max_duration_ms),
        min_query_count=int(ts.min_query_count),
        max_query_count=int(ts.max_query_count),
        performance_sample_count=int(ts.performance_sample_count_override) or None,
        accuracy_sample_count=None
        if "accuracy_sample_count_override" in unavailable
        else int(ts.accuracy_sample_count_override) or None,
        sample_concatenate_permutation=(
            fallback.sample_concatenate_permutation if fallback is not None else False
        )
        if "sample_concatenate_permutation" in unavailable
        else bool(ts.sample_concatenate_permutation),
        use_token_latencies=bool(ts.use_token_latencies),
        ttft_latency_ns=int(ts.ttft_latency) if server else None,
        tpot_latency_ns=int(ts.tpot_latency) if server else None,
        target_latency_percentile=float(pct) if pct is not None else None,
        server_target_latency_ns=int(ts.server_target_latency_ns) if server else None,
        server_target_qps=float(ts.server_target_qps) if server else None,
        offline_expected_qps=float(ts.offline_expected_qps) if lg_scn is Scenario.OFFLINE else None,
        single_stream_expected_latency_ns=int(ts.single_stream_expected_latency_ns)
        if lg_scn is Scenario.SINGLE_STREAM
        else None,
        seeds=Seeds(
            qsl_rng_seed=int(ts.qsl_rng_seed),
            sample_index_rng_seed=int(ts.sample_index_rng_seed),
            schedule_rng_seed=int(ts.schedule_rng_seed),
        ),
    )


_COMPARED = (
    "min_duration_ms",
    "performance_sample_count",
    "sample_concatenate_permutation",
    "use_token_latencies",
    "ttft_latency_ns",
    "tpot_latency_ns",
    "target_latency_percentile",
    "seeds",
)


def _seed_tuple(seeds: Seeds) -> tuple[int, int, int]:
    return (seeds.qsl_rng_seed, seeds.sample_index_rng_seed, seeds.schedule_rng_seed)


def rounds_with_seeds(seeds: tuple[int, int, int]) -> list[str]:
    """The known rounds whose rules carry these seeds (a LoadGen's compiled seeds tell its round)."""
    out = []
    for name in list_rounds():
        try:
            rnd = load_round(name)
        except (LookupError, ValueError, OSError):  # a round whose data does not load names nothing
            continue
        if rnd.seeds is not None and _seed_tuple(rnd.seeds) == seeds:
            out.append(rnd.name)
    return out


def compare_with_loadgen(
    expected: TestSettingsModel,
    actual: TestSettingsModel,
    round_name: str,
    skip: frozenset[str] = frozenset(),
) -> list[Finding]:
    """Where the installed LoadGen's compiled conf disagrees with the round's rules.

    ``skip``: settings a user.conf override changed (judged separately as overrides).
    """
    out = []
    for name in _COMPARED:
        if name in skip:
            continue
        want, got = getattr(expected, name), getattr(actual, name)
        if want is None:
            continue
        whose = ""
        if isinstance(want, Seeds) and isinstance(got, Seeds):
            want, got = _seed_tuple(want), _seed_tuple(got)
            if want != got:
                rounds = rounds_with_seeds(got)
                whose = (
                    f" (the seeds of round {', '.join(rounds)})"
                    if rounds
                    else " (the seeds of no known round)"
                )
        if isinstance(want, float) and isinstance(got, float) and abs(want - got) < 1e-9:
            continue
        if want != got:
            out.append(
                registered_finding(
                    rule="RUN-LOADGEN-CONF",
                    message=f"LoadGen will use {name}={got}{whose} but round {round_name} requires {want} "
                    f"(compiled mlperf.conf of another round, or a user.conf override)",
                )
            )
    out += _target_latency_finding(expected, actual, round_name, skip)
    return out


def _target_latency_finding(
    expected: TestSettingsModel, actual: TestSettingsModel, round_name: str, skip: frozenset[str]
) -> list[Finding]:
    """A run judged on its end-to-end latency (no token latencies: qwen3-vl) is judged by LoadGen against the
    target_latency it reads, which must be the round's bound: a lower one makes LoadGen call a compliant run INVALID
    (v6.1 qwen3-vl Interactive: no mlperf.conf key, LoadGen's default 10 ms against 1.5 s), a higher one the checker.
    Runs with token latencies are judged on TTFT/TPOT, where target_latency is not the gate."""
    want, got = expected.server_target_latency_ns, actual.server_target_latency_ns
    if "server_target_latency_ns" in skip or expected.use_token_latencies or want is None or got is None or want == got:
        return []
    return [
        registered_finding(
            rule="RUN-LOADGEN-CONF",
            message=f"LoadGen will judge the p99 latency against target_latency {got / 1e6:g} ms but round "
            f"{round_name}'s bound for {expected.scenario.value} is {want / 1e6:g} ms (no mlperf.conf key for "
            f"{expected.conf_model} in the installed LoadGen, or a user.conf override)",
        )
    ]


def describe_overrides(overrides: Sequence[Override]) -> list[str]:
    return [
        f"line {o.entry.line}: {o.entry.text} -> {o.setting}={o.effective}"
        + ("" if o.compliant else f"  [NOT COMPLIANT: {o.reason}]")
        for o in overrides
    ]
