"""The typed mirror of LoadGen's ``TestSettings`` and the plan of a run: the round's official settings, the
user.conf overrides on top, and which overrides make a result non-compliant (fine for trials, refused for
submissions). Units are in the field names.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from checker.findings import Finding, UnusableInput
from checker.parsers.loadgen_conf import (
    AUDIT_KEYS,
    FREE_KEYS,
    SEED_KEYS,
    ConfEntry,
    ConfNumber,
    UserConf,
    key_type,
    loadgen_value,
)
from loadgen_sut.settings.modes import _NS_PER_MS, TestMode, _Frozen
from loadgen_sut.settings.user_conf import conf_findings, misread_number
from rules.models import Benchmark, Round, Scenario, Seeds

# --------------------------------------------------------------------------------------------
# the mirror


class TestSettingsModel(_Frozen):
    """The LoadGen settings of one test, in explicit units.

    ``scenario`` is the round's scenario (Interactive allowed); ``loadgen_scenario`` what LoadGen
    runs. ``conf_model`` is the mlperf.conf model key FromConfig is called with. None = not set.
    """

    __test__ = False  # not a pytest class

    scenario: Scenario
    conf_model: str
    mode: TestMode = TestMode.PERFORMANCE_ONLY
    min_duration_ms: int
    max_duration_ms: int = 0
    min_query_count: int
    max_query_count: int = 0
    performance_sample_count: int | None = None
    accuracy_sample_count: int | None = None
    sample_concatenate_permutation: bool = False
    use_token_latencies: bool = False
    ttft_latency_ns: int | None = None
    tpot_latency_ns: int | None = None
    target_latency_percentile: float | None = None  # fraction, 0.99
    server_target_latency_ns: int | None = None
    server_target_qps: float | None = None
    offline_expected_qps: float | None = None
    single_stream_expected_latency_ns: int | None = None
    seeds: Seeds | None = None

    @property
    def loadgen_scenario(self) -> Scenario:
        return self.scenario.loadgen_scenario


class Override(_Frozen):
    """One user.conf entry that changes a value, judged against the round."""

    entry: ConfEntry
    setting: str
    official: str | None
    effective: str
    compliant: bool
    reason: str


class PlannedSettings(_Frozen):
    """What a run will use: the expected effective settings and how they differ from official."""

    round_name: str
    benchmark: str
    official: TestSettingsModel
    effective: TestSettingsModel
    overrides: tuple[Override, ...]
    conf_problems: tuple[Finding, ...]
    conf_path: str | None = None

    @property
    def non_compliant(self) -> tuple[Override, ...]:
        return tuple(o for o in self.overrides if not o.compliant)


class SettingsError(UnusableInput):
    """The benchmark/scenario/round combination cannot be run."""


def conf_model_key(benchmark: Benchmark, scenario: Scenario) -> str:
    """The mlperf.conf model key (``llama3_1-8b``; ``llama3_1-8b-interactive`` for Interactive)."""
    if scenario is Scenario.INTERACTIVE:
        if benchmark.mlperf_conf_interactive_model:
            return benchmark.mlperf_conf_interactive_model
        base = benchmark.mlperf_conf_model or benchmark.name
        return f"{base}-interactive"
    return benchmark.mlperf_conf_model or benchmark.name


def _allowed_scenarios(benchmark: Benchmark) -> set[Scenario]:
    out: set[Scenario] = set()
    for ss in benchmark.scenarios.values():
        out.update(ss.required)
        out.update(ss.optional)
        out.update(ss.one_of)
    return out


def official_settings(rnd: Round, benchmark: Benchmark, scenario: Scenario) -> TestSettingsModel:
    """The settings the round prescribes for this benchmark and scenario (no user.conf)."""
    if scenario not in _allowed_scenarios(benchmark):
        allowed = ", ".join(sorted(s.value for s in _allowed_scenarios(benchmark)))
        raise SettingsError(
            f"{benchmark.name} has no {scenario.value} scenario in {rnd.name} (it has: {allowed})"
        )
    lg_scn = scenario.loadgen_scenario
    defaults = rnd.scenario_defaults.get(lg_scn)
    min_duration_ms = max(rnd.min_duration_ms, defaults.min_duration_ms if defaults else 0)
    # LoadGen's min_query_count: Offline = the benchmark's samples per query (mlperf.conf);
    # early-stopping scenarios use the scenario default (the checker's large Server counts are
    # equal-issue consequences, not a LoadGen setting).
    min_q: int | None = None
    if lg_scn is Scenario.OFFLINE:
        min_q = benchmark.offline_min_samples_per_query or benchmark.min_query_count.get(lg_scn)
    elif lg_scn not in rnd.early_stopping_scenarios:
        min_q = benchmark.min_query_count.get(scenario) or benchmark.min_query_count.get(lg_scn)
    if min_q is None and defaults is not None and defaults.min_query_count is not None:
        min_q = defaults.min_query_count
    limits = benchmark.token_latency_limits.get(scenario)
    # token latencies as the round's mlperf.conf sets them for the benchmark (qwen3-vl: 0, CONF_HEAD:111), else on for
    # every LLM (TTFT/TPOT, tokens/s)
    conf_tokens = benchmark.mlperf_conf_flags.get("use_token_latencies")
    tokens = benchmark.use_token_latencies_required or (
        bool(conf_tokens) if conf_tokens is not None else benchmark.is_llm
    )
    percentile = defaults.target_latency_percentile if defaults and lg_scn is not Scenario.OFFLINE else None
    if percentile is not None and percentile > 1:
        percentile = percentile / 100.0
    return TestSettingsModel(
        scenario=scenario,
        conf_model=conf_model_key(benchmark, scenario),
        min_duration_ms=min_duration_ms,
        min_query_count=min_q if min_q is not None else 100,
        performance_sample_count=benchmark.performance_sample_count,
        sample_concatenate_permutation=benchmark.equal_issue_required,
        use_token_latencies=tokens,
        ttft_latency_ns=round(limits.ttft_ms * _NS_PER_MS) if limits and lg_scn is Scenario.SERVER else None,
        tpot_latency_ns=round(limits.tpot_ms * _NS_PER_MS) if limits and lg_scn is Scenario.SERVER else None,
        target_latency_percentile=percentile,
        server_target_latency_ns=benchmark.target_latency_ns_for(scenario)
        if lg_scn is Scenario.SERVER
        else None,
        seeds=rnd.seeds,
    )


_Judgement = tuple[dict[str, Any], Override | None]


@dataclass(frozen=True)
class _Judging:
    """One user.conf entry being judged: the number LoadGen applies and the official settings it changes."""

    entry: ConfEntry
    official: TestSettingsModel
    benchmark: Benchmark
    num: ConfNumber
    ival: int  # the number as an integer (0 for a float key)

    @property
    def lg_scn(self) -> Scenario:
        return self.official.loadgen_scenario

    def ov(self, setting: str, off: object, eff: object, ok: bool, why: str) -> Override:
        return Override(
            entry=self.entry,
            setting=setting,
            official=None if off is None else str(off),
            effective=str(eff),
            compliant=ok,
            reason=why,
        )

    def sets(self, setting: str, value: object, off: object, ok: bool, why: str) -> _Judgement:
        """The entry sets ``setting`` to ``value`` (official ``off``), compliant when ``ok``."""
        return {setting: value}, self.ov(setting, off, value, ok, why)


def _target_qps(c: _Judging) -> _Judgement:
    qps = float(c.num.value)
    if c.lg_scn is Scenario.SERVER:
        return c.sets("server_target_qps", qps, None, True, "the offered load is the submitter's choice")
    if c.lg_scn is Scenario.OFFLINE:
        return c.sets("offline_expected_qps", qps, None, True, "sizes the Offline query")
    return {}, None


def _target_latency(c: _Judging) -> _Judgement:
    if c.lg_scn is Scenario.SINGLE_STREAM:
        ns = int(c.num.value)
        return c.sets(
            "single_stream_expected_latency_ns", ns, None, True, "expected latency only sizes the schedule"
        )
    if c.lg_scn is Scenario.SERVER:
        off = c.official.server_target_latency_ns
        ok = off is not None and c.ival <= off
        return c.sets("server_target_latency_ns", c.ival, off, ok, "the latency gate is fixed by the rules")
    return {}, None


def _min_duration(c: _Judging) -> _Judgement:
    off = c.official.min_duration_ms
    return c.sets(
        "min_duration_ms", c.ival, off, c.ival >= off, "runs must last at least the round's minimum duration"
    )


def _max_duration(c: _Judging) -> _Judgement:
    return c.sets("max_duration_ms", c.ival, 0, c.ival == 0, "a maximum duration can end a run early")


def _min_query_count(c: _Judging) -> _Judgement:
    off = c.official.min_query_count
    return c.sets("min_query_count", c.ival, off, c.ival >= off, "fewer queries than the rules require")


def _max_query_count(c: _Judging) -> _Judgement:
    return c.sets("max_query_count", c.ival, 0, c.ival == 0, "a maximum query count can end a run early")


def _performance_sample_count(c: _Judging) -> _Judgement:
    off_psc = c.official.performance_sample_count
    psc = c.ival or None  # 0: LoadGen uses the QSL's own performance sample count
    ok = psc is None or off_psc is None or psc >= off_psc
    return c.sets(
        "performance_sample_count",
        psc,
        off_psc,
        ok,
        "the loaded sample set may not be smaller than the round's",
    )


def _accuracy_sample_count(c: _Judging) -> _Judgement:
    acc = c.ival or None  # 0: the whole data set
    return c.sets(
        "accuracy_sample_count", acc, None, acc is None, "the accuracy run must cover the whole dataset"
    )


def _equal_issue(c: _Judging) -> _Judgement:
    on = c.num.flag_on
    ok = on or not c.benchmark.equal_issue_required
    off = c.official.sample_concatenate_permutation
    return c.sets("sample_concatenate_permutation", on, off, ok, "equal-issue mode is required")


def _token_latencies(c: _Judging) -> _Judgement:
    on = c.num.flag_on
    ok = on or not c.official.use_token_latencies
    return c.sets(
        "use_token_latencies", on, c.official.use_token_latencies, ok, "LLM runs must report token latencies"
    )


def _token_latency_gate(c: _Judging) -> _Judgement:
    """ttft_latency / tpot_latency: a Server gate the rules fix."""
    if c.lg_scn is not Scenario.SERVER:
        return {}, None
    field = f"{c.entry.key}_ns"
    off_ns = getattr(c.official, field)
    ok = off_ns is not None and c.ival == off_ns
    return c.sets(field, c.ival, off_ns, ok, "the token-latency gates are fixed by the rules")


def _latency_percentile(c: _Judging) -> _Judgement:
    if c.lg_scn is Scenario.OFFLINE:
        return {}, None
    frac = float(c.num.value)
    off_pct = c.official.target_latency_percentile
    ok = off_pct is not None and abs(frac - off_pct) < 1e-9
    return c.sets(
        "target_latency_percentile", frac, off_pct, ok, "the latency percentile is fixed by the rules"
    )


# the keys that change a setting, each with its judgement
_JUDGES: dict[str, Callable[[_Judging], _Judgement]] = {
    "target_qps": _target_qps,
    "target_latency": _target_latency,
    "min_duration": _min_duration,
    "max_duration": _max_duration,
    "min_query_count": _min_query_count,
    "max_query_count": _max_query_count,
    "performance_sample_count_override": _performance_sample_count,
    "accuracy_sample_count_override": _accuracy_sample_count,
    "sample_concatenate_permutation": _equal_issue,
    "use_token_latencies": _token_latencies,
    "ttft_latency": _token_latency_gate,
    "tpot_latency": _token_latency_gate,
    "target_latency_percentile": _latency_percentile,
}


def _unapplied(c: _Judging) -> Override | None:
    """The judgement of a key that changes no setting of the mirror: seeds, audit keys, token inference (never
    compliant) and tuning knobs (always); None for any other."""
    key, value = c.entry.key, c.entry.value
    if key in SEED_KEYS:
        return c.ov(
            key,
            None,
            value,
            False,
            "LoadGen ignores seeds in user.conf; the compiled mlperf.conf decides them",
        )
    if key in AUDIT_KEYS:
        return c.ov(key, None, value, False, "audit/compliance-test key: only an audit.config may set it")
    if key in ("infer_token_latencies", "token_latency_scaling_factor"):
        return c.ov(key, None, value, False, "token inference is fixed per benchmark by mlperf.conf")
    if key in FREE_KEYS:
        return c.ov(key, None, value, True, "tuning knob")
    return None


def _judge(entry: ConfEntry, official: TestSettingsModel, benchmark: Benchmark) -> _Judgement:
    """The field update an entry makes (the value LoadGen applies, :func:`loadgen_value`), and its judgement."""
    num = loadgen_value(entry.key, entry.value, official.loadgen_scenario)
    if num.refused:  # never run (plan_settings refuses); judged non-compliant for the record
        c = _Judging(entry, official, benchmark, num, 0)
        return {}, c.ov(entry.key, None, entry.value, False, num.refused)
    c = _Judging(entry, official, benchmark, num, int(num.value) if num.kind == "integer" else 0)
    judge = _JUDGES.get(entry.key)
    return judge(c) if judge is not None else ({}, _unapplied(c))


def conf_number_findings(
    user_conf: UserConf, conf_model: str, lg_scenario: Scenario
) -> tuple[list[Finding], list[str]]:
    """The numbers of the entries LoadGen applies to this test: (misread findings, refusals).

    A misread (the text does not mean what LoadGen applies: ``6e5`` -> 6 for an integer key) is an ERROR
    finding (the runner downgrades conf findings to warnings outside submission mode). A refusal (LoadGen
    would crash on or mis-apply the value: negative or overflowing integers, NaN/inf, target_qps <= 0) is
    returned as text: such a test is never started, in any mode.
    """
    findings: list[Finding] = []
    refused: list[str] = []
    for e in user_conf.applying_to(conf_model, lg_scenario.value):
        kt = key_type(e.key, lg_scenario)
        if not kt.from_user_conf:
            continue  # LoadGen reads it from the compiled mlperf.conf only: the value is never applied
        num = loadgen_value(e.key, e.value, lg_scenario)
        where = f"{user_conf.path}:{e.line}" if user_conf.path else f"line {e.line}"
        if num.refused:
            refused.append(f"{where}: {e.text}: {num.refused}")
        elif num.misread:
            findings.append(
                misread_number(
                    user_conf,
                    e.line,
                    f"{e.text}: {num.misread}; LoadGen applies {e.key} = {_applied_text(num)}",
                    fix=f"write {e.key} as a plain decimal {'integer' if num.kind == 'integer' else 'number'}"
                    + (" (0 or 1)" if kt.flag == "eq1" else ""),
                )
            )
    return findings, refused


def _applied_text(num: ConfNumber) -> str:
    mult = key_type(
        num.key,
        Scenario.SERVER if num.key == "target_latency" and num.kind == "integer" else Scenario.OFFLINE,
    ).multiplier
    if num.kind == "integer" and mult != 1:
        return f"{num.read} (x {mult} = {num.value})"
    return str(num.value)


def plan_settings(
    rnd: Round,
    benchmark: Benchmark,
    scenario: Scenario,
    user_conf: UserConf,
    mode: TestMode = TestMode.PERFORMANCE_ONLY,
) -> PlannedSettings:
    """Expected effective settings: official values with the applicable user.conf entries applied.

    The values are the ones LoadGen applies (:func:`loadgen_value`). Refuses (``SettingsError``) a user.conf
    with a value LoadGen would crash on or mis-apply; lines whose text does not mean what LoadGen applies are
    added to the conf problems (errors; the runner makes them warnings outside submission mode).
    """
    official = official_settings(rnd, benchmark, scenario)
    number_problems, refused = conf_number_findings(user_conf, official.conf_model, official.loadgen_scenario)
    if refused:
        raise SettingsError(
            "refusing to start LoadGen with these user.conf values (it would crash, hang or apply something else): "
            + "; ".join(refused)
        )
    updates: dict[str, Any] = {"mode": mode}
    overrides: list[Override] = []
    for entry in user_conf.applying_to(official.conf_model, official.loadgen_scenario.value):
        upd, judged = _judge(entry, official, benchmark)
        updates.update(upd)
        if judged is not None:
            overrides.append(judged)
    if not updates.get("use_token_latencies", official.use_token_latencies):
        # LoadGen reads ttft_latency / tpot_latency only while token latencies are on
        for f in ("ttft_latency_ns", "tpot_latency_ns"):
            updates.pop(f, None)
        overrides = [o for o in overrides if o.setting not in ("ttft_latency_ns", "tpot_latency_ns")]
    effective = official.model_copy(update=updates)
    effective = TestSettingsModel.model_validate(effective.model_dump())
    return PlannedSettings(
        round_name=rnd.name,
        benchmark=benchmark.name,
        official=official,
        effective=effective,
        overrides=tuple(overrides),
        conf_problems=(*conf_findings(user_conf), *number_problems),
        conf_path=user_conf.path,
    )


def conf_applied_fields(user_conf: UserConf, planned: TestSettingsModel) -> dict[str, Any]:
    """The mirror fields the user.conf sets for this test, with the values LoadGen applies (for the probe)."""
    lg_scn = planned.loadgen_scenario
    out: dict[str, Any] = {}
    for e in user_conf.applying_to(planned.conf_model, lg_scn.value):
        kt = key_type(e.key, lg_scn)
        if not kt.from_user_conf or e.key == "mode":
            continue
        num = loadgen_value(e.key, e.value, lg_scn)
        if num.refused:
            continue
        v: Any = num.value
        field = {
            "min_duration": "min_duration_ms",
            "max_duration": "max_duration_ms",
            "min_query_count": "min_query_count",
            "max_query_count": "max_query_count",
            "performance_sample_count_override": "performance_sample_count",
            "accuracy_sample_count_override": "accuracy_sample_count",
            "sample_concatenate_permutation": "sample_concatenate_permutation",
            "use_token_latencies": "use_token_latencies",
        }.get(e.key)
        if e.key in ("performance_sample_count_override", "accuracy_sample_count_override"):
            v = int(v) or None
        elif e.key in ("sample_concatenate_permutation", "use_token_latencies"):
            v = num.flag_on
        if lg_scn is Scenario.SERVER:
            field = field or {
                "target_qps": "server_target_qps",
                "target_latency": "server_target_latency_ns",
                "ttft_latency": "ttft_latency_ns",
                "tpot_latency": "tpot_latency_ns",
                "target_latency_percentile": "target_latency_percentile",
            }.get(e.key)
        elif lg_scn is Scenario.OFFLINE:
            field = field or {"target_qps": "offline_expected_qps"}.get(e.key)
        elif lg_scn is Scenario.SINGLE_STREAM:
            field = field or {"target_latency_percentile": "target_latency_percentile"}.get(e.key)
            if e.key == "target_latency":
                field, v = "single_stream_expected_latency_ns", int(v)
        if field is None:
            continue
        if field in ("ttft_latency_ns", "tpot_latency_ns") and not planned.use_token_latencies:
            continue
        out[field] = v
    return out
