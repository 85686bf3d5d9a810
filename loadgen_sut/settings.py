"""LoadGen test settings: a typed mirror built from a Round, converted to ``mlperf_loadgen`` once.

The official ``mlperf.conf`` values are compiled into the installed LoadGen wheel; a run applies
them with ``TestSettings.FromConfig(user.conf, <conf model>, <LoadGen scenario>)`` (Interactive is
Server traffic with the ``<model>-interactive`` keys). This module

- parses a ``user.conf`` the way LoadGen does (``model.Scenario.key = value``, whitespace-separated
  tokens, lookup order ``model.Scenario`` > ``*.Scenario`` > ``model.*`` > ``*.*``) and reports lines
  LoadGen would reject or silently ignore;
- builds the *expected* effective settings from the round's rules plus the user.conf overrides;
- judges which overrides make a result non-compliant (fine for trials, refused for submissions);
- converts to ``mlperf_loadgen.TestSettings`` in the child process that runs the test and reads
  the object back so the installed LoadGen's compiled values can be compared with the round.

Units are in the field names; LoadGen's own units (ns, ms, fraction) are used only at the boundary.
"""

from __future__ import annotations

import importlib.metadata
import math
import re
from collections.abc import Sequence
from decimal import Decimal
from enum import Enum
from fractions import Fraction
from pathlib import Path
from typing import Any

import mlperf_loadgen as lg
from pydantic import BaseModel, ConfigDict

from checker.findings import Finding, Severity, UnusableInput
from rules.models import Benchmark, Round, Scenario, Seeds
from rules.registry import list_rounds, load_round

LOADGEN_DISTRIBUTION = "mlcommons-loadgen"
_NS_PER_MS = 1_000_000


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class RunMode(str, Enum):
    """What the user asked for on the command line."""

    PERFORMANCE = "performance"
    ACCURACY = "accuracy"
    SUBMISSION = "submission"
    # the whole submission flow (tests, tree, checker) with trial settings; never submittable
    SUBMISSION_TRIAL = "submission-trial"
    FIND_PEAK = "find-peak"

    @property
    def is_submission_flow(self) -> bool:
        return self in (RunMode.SUBMISSION, RunMode.SUBMISSION_TRIAL)


class TestMode(str, Enum):
    """One LoadGen test's mode (``mlperf_loadgen.TestMode``)."""

    PERFORMANCE_ONLY = "PerformanceOnly"
    ACCURACY_ONLY = "AccuracyOnly"
    FIND_PEAK_PERFORMANCE = "FindPeakPerformance"

    __test__ = False  # not a pytest class


# --------------------------------------------------------------------------------------------
# user.conf


class ConfEntry(_Frozen):
    """One ``model.Scenario.key = value`` line as LoadGen reads it."""

    model: str
    scenario: str
    key: str
    value: str
    line: int

    @property
    def text(self) -> str:
        return f"{self.model}.{self.scenario}.{self.key} = {self.value}"


class UserConf(_Frozen):
    """A parsed user.conf: its entries (in file order) and lines LoadGen would mishandle."""

    path: str | None
    entries: tuple[ConfEntry, ...] = ()
    problems: tuple[Finding, ...] = ()

    def lookup(self, model: str, scenario: str, key: str) -> ConfEntry | None:
        """LoadGen's lookup order; within one pattern the last line wins (it fills a map)."""
        for m, s in ((model, scenario), ("*", scenario), (model, "*"), ("*", "*")):
            hit = None
            for e in self.entries:
                if e.model == m and e.scenario == s and e.key == key:
                    hit = e
            if hit is not None:
                return hit
        return None

    def applying_to(self, model: str, scenario: str) -> tuple[ConfEntry, ...]:
        """Entries whose pattern matches this model and scenario (the ones that can take effect)."""
        return tuple(
            e
            for e in self.entries
            if e.model in (model, "*")
            and e.scenario in (scenario, "*")
            and self.lookup(model, scenario, e.key) == e
        )


# LoadGen's tokenizer: ``std::getline`` (lines end at "\n" only) and ``operator>>`` (C-locale isspace).
_C_SPACE = re.compile(r"[ \t\n\v\f\r]+")


def _tokens(line: str) -> list[str]:
    return [t for t in _C_SPACE.split(line) if t]


def parse_user_conf_text(text: str, path: str | None = None) -> UserConf:
    """Parse user.conf text with LoadGen's tokenizer rules (``test_settings_internal.cc``, measured on 6.0.17).

    LoadGen splits each line on (ASCII) whitespace: the first token is the key, the second must be
    ``=``, every further token is a value (the last one wins) that must read completely as an integer
    (``strtoul(s, &end, 0)``) or a double (``strtod``). A ``#`` token ends the line before the value
    only: ``key = 5 # note`` is an error (``#`` is read as a value) and LoadGen then rejects the whole
    file. ``k=v`` without spaces is one token and is silently ignored, so are ``key`` and ``key =``;
    ``#comment`` (no space) followed by more words is an error. Every such line is reported here so the
    user does not believe a setting applied when it did not. What a value *means* depends on the key
    (:func:`loadgen_value`); that is judged when the settings are planned.
    """
    entries: list[ConfEntry] = []
    problems: list[Finding] = []
    for line_nr, line in enumerate(text.split("\n"), start=1):
        tokens = _tokens(line)
        if not tokens or tokens[0] == "#":
            continue
        where = {"path": path, "line": line_nr}
        if len(tokens) > 1 and tokens[1] == "#":
            continue  # 'key # ...': LoadGen stops at the '#' before any '='
        if "=" in tokens[0] and tokens[0] != "=" and len(tokens) == 1:
            problems.append(
                Finding(
                    rule="RUN-CONF-SYNTAX",
                    severity=Severity.ERROR,
                    message=f"{tokens[0]!r}: LoadGen needs spaces around '=' ('key = value'); it would ignore this line",
                    fix="write 'model.Scenario.key = value'",
                    **where,
                )
            )
            continue
        if len(tokens) >= 2 and tokens[1] != "=":
            problems.append(
                Finding(
                    rule="RUN-CONF-SYNTAX",
                    severity=Severity.ERROR,
                    message=f"expected 'key = value', got {line.strip()!r} (LoadGen logs error_invalid_config "
                    "and rejects the whole file)",
                    fix="comments need '# ' with a space; settings need 'model.Scenario.key = value'",
                    **where,
                )
            )
            continue
        if len(tokens) < 3:
            problems.append(
                Finding(
                    rule="RUN-CONF-SYNTAX",
                    severity=Severity.ERROR,
                    message=f"{line.strip()!r}: no value; LoadGen silently ignores this line",
                    fix="comments need '# ' with a space; settings need 'model.Scenario.key = value'",
                    **where,
                )
            )
            continue
        key, values = tokens[0], tokens[2:]
        bad = [v for v in values if not loadgen_accepts_number(v)]
        if bad:
            what = (
                "a '#' after the value is read as one more value, not as a comment"
                if "#" in bad
                else f"value {bad[0]!r} is not an integer or a number"
            )
            problems.append(
                Finding(
                    rule="RUN-CONF-SYNTAX",
                    severity=Severity.ERROR,
                    message=f"{key}: {what} (LoadGen logs error_invalid_config and rejects the whole file)",
                    fix="one number per line; comments on lines of their own",
                    **where,
                )
            )
            continue
        value = values[-1]
        if len(values) > 1:
            problems.append(
                Finding(
                    rule="RUN-CONF-NUMBER",
                    severity=Severity.ERROR,
                    message=f"{key}: {len(values)} values {' '.join(values)!r}: LoadGen keeps only the last, {value}",
                    fix="one value per line",
                    **where,
                )
            )
        parts = key.rsplit(".", 2)
        if len(parts) != 3 or not all(parts):
            problems.append(
                Finding(
                    rule="RUN-CONF-SYNTAX",
                    severity=Severity.ERROR,
                    message=f"{key!r}: keys are 'model.Scenario.key' (model may be '*')",
                    **where,
                )
            )
            continue
        model, scenario, name = parts
        if scenario != "*" and scenario not in {s.value for s in Scenario}:
            problems.append(
                Finding(
                    rule="RUN-CONF-SCENARIO",
                    severity=Severity.WARNING,
                    message=f"{key!r}: scenario {scenario!r} matches nothing (LoadGen is case-sensitive: "
                    "SingleStream, MultiStream, Server, Offline)",
                    **where,
                )
            )
        if name not in KNOWN_KEYS:
            problems.append(
                Finding(
                    rule="RUN-CONF-UNKNOWN-KEY",
                    severity=Severity.WARNING,
                    message=f"{key!r}: LoadGen does not read key {name!r}",
                    **where,
                )
            )
        entries.append(ConfEntry(model=model, scenario=scenario, key=name, value=value, line=line_nr))
    return UserConf(path=path, entries=tuple(entries), problems=tuple(problems))


# --------------------------------------------------------------------------------------------
# numbers as LoadGen reads them
#
# Measured on mlcommons-loadgen 6.0.17 (FromConfig on a user.conf, TestSettings read back) and read in
# loadgen/test_settings_internal.cc: a value token is accepted when strtoul(s, &end, 0) or strtod(s, &end)
# consumes all of it; an integer key is then applied as strtoull(s, NULL, 0) * multiplier (uint64_t,
# wrapping), a double key as strtod(s, NULL) * multiplier. So an integer key reads only the leading
# integer of its text in C's base-0 syntax: '6e5' -> 6, '1e30' -> 1, '1.5' -> 1, '010' -> 8 (octal),
# '08' -> 0, 'inf'/'nan' -> 0, '-5' -> 2^64-5, '18446744073709551616' -> 2^64-1.

_U64 = 1 << 64
_I64_MAX = (1 << 63) - 1
_STRTOUL_FULL = re.compile(r"[+-]?(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)\Z")
_DEC_FLOAT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\Z")
_HEX_FLOAT = re.compile(r"[+-]?0[xX]([0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)([pP][+-]?\d+)?\Z")
_SPECIAL_FLOAT = re.compile(r"[+-]?(inf|infinity|nan(\([0-9A-Za-z_]*\))?)\Z", re.IGNORECASE)


def loadgen_accepts_number(text: str) -> bool:
    """Whether LoadGen's conf parser accepts this value token (a whole strtoul or strtod number)."""
    return bool(
        _STRTOUL_FULL.match(text) or _DEC_FLOAT.match(text) or _HEX_FLOAT.match(text) or _SPECIAL_FLOAT.match(text)
    )


def c_strtoull(text: str) -> tuple[int, bool]:
    """C ``strtoull(text, NULL, 0)``: (value, out of range). Reads the longest integer prefix, base 0."""
    i, neg = 0, False
    if text[:1] in ("+", "-"):
        neg, i = text[0] == "-", 1
    rest = text[i:]
    if re.match(r"0[xX][0-9a-fA-F]", rest):
        digits, base = re.match(r"[0-9a-fA-F]*", rest[2:]).group(), 16  # type: ignore[union-attr]
    elif rest.startswith("0"):
        digits, base = re.match(r"[0-7]*", rest).group(), 8  # type: ignore[union-attr]
    else:
        digits, base = re.match(r"[0-9]*", rest).group(), 10  # type: ignore[union-attr]
    if not digits:
        return 0, False
    magnitude = int(digits, base)
    if magnitude >= _U64:
        return _U64 - 1, True  # ERANGE: ULLONG_MAX, the sign is not applied
    return ((-magnitude) % _U64 if neg else magnitude), False


def c_strtod(text: str) -> float:
    """C ``strtod(text, NULL)`` for a token LoadGen accepted (decimal, hex float, inf, nan; C locale)."""
    if _SPECIAL_FLOAT.match(text):
        body = text.lstrip("+-").lower()
        sign = -1.0 if text.startswith("-") else 1.0
        return math.copysign(math.nan, sign) if body.startswith("nan") else sign * math.inf
    if _HEX_FLOAT.match(text):
        try:
            return float.fromhex(text)
        except OverflowError:
            return -math.inf if text.startswith("-") else math.inf
    return float(text)  # decimal: both are correctly rounded; overflow -> inf like HUGE_VAL


def _apparent(text: str) -> Fraction | None:
    """The exact number the text seems to write (decimal as written, hex as hex); None for inf/nan."""
    if _SPECIAL_FLOAT.match(text):
        return None
    if _HEX_FLOAT.match(text):
        if re.fullmatch(r"[+-]?0[xX][0-9a-fA-F]+", text):
            return Fraction(int(text, 16))
        try:
            return Fraction(float.fromhex(text))
        except OverflowError:
            return None
    return Fraction(Decimal(text))


class KeyType(_Frozen):
    """How LoadGen reads one key: integer (strtoull) or double (strtod), times a multiplier."""

    kind: str  # "integer" | "double"
    multiplier: int | float = 1
    flag: str | None = None  # integer flags: "eq1" (true only for 1) or "ne0" (true unless 0)
    from_user_conf: bool = True  # False: read from the compiled mlperf.conf only (seeds, test05, ...)


_INT = KeyType(kind="integer")
_EQ1 = KeyType(kind="integer", flag="eq1")
_NE0 = KeyType(kind="integer", flag="ne0")
_MS_TO_NS_INT = KeyType(kind="integer", multiplier=_NS_PER_MS)
_MS_TO_NS_DOUBLE = KeyType(kind="double", multiplier=1000.0 * 1000.0)
_DOUBLE = KeyType(kind="double")
_PERCENT = KeyType(kind="double", multiplier=0.01)
_CONF_ONLY_INT = KeyType(kind="integer", from_user_conf=False)

_KEY_TYPES: dict[str, KeyType] = {
    "mode": _INT,
    "use_token_latencies": _EQ1,
    "infer_token_latencies": _EQ1,
    "sample_concatenate_permutation": _EQ1,
    "performance_issue_unique": _NE0,
    "performance_issue_same": _NE0,
    "coalesce_queries": _NE0,
    "print_timestamps": _NE0,
    "ttft_latency": _MS_TO_NS_INT,
    "tpot_latency": _MS_TO_NS_INT,
    "target_latency_percentile": _PERCENT,
    "target_qps": _DOUBLE,
    "test05": KeyType(kind="integer", flag="eq1", from_user_conf=False),
    "accuracy_log_probability": KeyType(kind="double", multiplier=0.01, from_user_conf=False),
    **{k: _CONF_ONLY_INT for k in ("qsl_rng_seed", "sample_index_rng_seed", "schedule_rng_seed")},
    **{k: _CONF_ONLY_INT for k in ("test05_qsl_rng_seed", "test05_sample_index_rng_seed", "test05_schedule_rng_seed")},
}
_DURATION_KEYS = frozenset({"min_duration", "max_duration"})  # ms; LoadGen turns them into int64 ns


def key_type(key: str, lg_scenario: Scenario) -> KeyType:
    """How LoadGen reads ``key`` for a test of this (LoadGen) scenario: Server's target_latency is an integer
    (ms -> ns), SingleStream's and MultiStream's a double; every other unlisted key an integer."""
    if key == "target_latency":
        return _MS_TO_NS_INT if lg_scenario is Scenario.SERVER else _MS_TO_NS_DOUBLE
    return _KEY_TYPES.get(key, _INT)


class ConfNumber(_Frozen):
    """One user.conf value as LoadGen applies it, and whether the text means that."""

    key: str
    text: str
    kind: str
    value: int | float  # what LoadGen stores (multiplier applied; integers wrapped to uint64)
    read: int | float  # the number LoadGen read before the multiplier (strtoull / strtod)
    misread: str | None = None  # the text does not mean what LoadGen applies
    refused: str | None = None  # LoadGen would crash on or mis-apply it: never started with it

    @property
    def flag_on(self) -> bool:
        return self.read == 1 if key_type(self.key, Scenario.OFFLINE).flag == "eq1" else self.read != 0


def loadgen_value(key: str, text: str, lg_scenario: Scenario) -> ConfNumber:
    """What LoadGen applies for ``key = text`` in a test of ``lg_scenario`` (the text must be an accepted token)."""
    kt = key_type(key, lg_scenario)
    apparent = _apparent(text)
    misread = refused = None
    if kt.kind == "integer":
        read, overflow = c_strtoull(text)
        mult = int(kt.multiplier)
        value = (read * mult) % _U64
        if apparent is None:
            refused = f"{text!r} is not a number; LoadGen's integer parser reads it as {read}"
        elif apparent < 0:
            refused = f"negative: LoadGen reads {text!r} as the unsigned integer {read} (2^64 - {_U64 - read})"
        elif overflow:
            refused = f"{text!r} does not fit 64 bits: LoadGen reads it as 2^64 - 1 = {read}"
        elif read * mult > _I64_MAX or (key in _DURATION_KEYS and read * _NS_PER_MS > _I64_MAX):
            what = f"{read} x {mult}" if mult != 1 else str(read)
            refused = f"{what} overflows LoadGen's 64-bit arithmetic" + (
                f" (it would store {value})" if read * mult >= _U64 else ""
            )
        elif apparent != read:
            misread = f"LoadGen reads only the leading integer of {text!r} (C base-0 syntax): {read}, not {_num_text(apparent)}"
        elif kt.flag == "eq1" and read not in (0, 1):
            misread = f"{read} is neither 0 nor 1: LoadGen turns the setting on only for exactly 1, so this is off"
        elif key == "mode" and read not in (0, 1, 2, 3):
            misread = f"mode {read} is not 0-3: LoadGen logs error_invalid_config and keeps the mode"
        return ConfNumber(key=key, text=text, kind=kt.kind, value=value, read=read, misread=misread, refused=refused)
    dread = c_strtod(text)
    dvalue = dread * float(kt.multiplier)
    if not math.isfinite(dvalue):
        refused = f"{text!r} is {'not a number' if math.isnan(dread) else 'infinite'} as LoadGen reads it ({dvalue})"
    elif key == "target_qps" and dvalue <= 0:
        refused = f"target_qps {dvalue:g} is not positive: LoadGen's Server schedule never ends (measured: it hangs)"
    elif key == "target_latency" and dvalue <= 0:
        refused = f"target_latency {text} ms is not positive"
    elif key == "target_latency_percentile" and not 0 < dvalue <= 1:
        refused = f"target_latency_percentile {text} is outside (0, 100]"
    return ConfNumber(key=key, text=text, kind=kt.kind, value=dvalue, read=dread, misread=misread, refused=refused)


def _num_text(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{float(x):g}"


def load_user_conf(path: Path | None) -> UserConf:
    if path is None:
        return UserConf(path=None)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UnusableInput(f"cannot read user.conf: {exc.strerror or exc}", path=str(path)) from exc
    except UnicodeDecodeError as exc:
        raise UnusableInput("user.conf is not UTF-8 text", path=str(path)) from exc
    return parse_user_conf_text(text, str(path))


# Keys LoadGen reads from a conf file. "free": a submission may set it. Others are judged below.
FREE_KEYS = frozenset(
    {"target_qps", "coalesce_queries", "max_async_queries", "print_timestamps", "samples_per_query"}
)
SEED_KEYS = ("qsl_rng_seed", "sample_index_rng_seed", "schedule_rng_seed")
AUDIT_KEYS = frozenset(
    {
        "mode",
        "accuracy_log_rng_seed",
        "accuracy_log_probability",
        "accuracy_log_sampling_target",
        "performance_issue_unique",
        "performance_issue_same",
        "performance_issue_same_index",
        "test05",
        "test05_qsl_rng_seed",
        "test05_sample_index_rng_seed",
        "test05_schedule_rng_seed",
    }
)
KNOWN_KEYS = (
    FREE_KEYS
    | AUDIT_KEYS
    | frozenset(SEED_KEYS)
    | frozenset(
        {
            "min_duration",
            "max_duration",
            "min_query_count",
            "max_query_count",
            "performance_sample_count_override",
            "accuracy_sample_count_override",
            "sample_concatenate_permutation",
            "use_token_latencies",
            "ttft_latency",
            "tpot_latency",
            "target_latency",
            "target_latency_percentile",
            "infer_token_latencies",
            "token_latency_scaling_factor",
            "max_async_queries",
        }
    )
)


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
    tokens = benchmark.use_token_latencies_required or benchmark.is_llm
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
        server_target_latency_ns=benchmark.server_target_latency_ns if lg_scn is Scenario.SERVER else None,
        seeds=rnd.seeds,
    )


def _judge(
    entry: ConfEntry, official: TestSettingsModel, benchmark: Benchmark
) -> tuple[dict[str, Any], Override | None]:
    """The field update an entry makes (the value LoadGen applies, :func:`loadgen_value`), and its judgement."""
    key = entry.key
    lg_scn = official.loadgen_scenario
    num = loadgen_value(key, entry.value, lg_scn)

    def ov(setting: str, off: object, eff: object, ok: bool, why: str) -> Override:
        return Override(
            entry=entry,
            setting=setting,
            official=None if off is None else str(off),
            effective=str(eff),
            compliant=ok,
            reason=why,
        )

    if num.refused:  # never run (plan_settings refuses); judged non-compliant for the record
        return {}, ov(key, None, entry.value, False, num.refused)
    ival = int(num.value) if num.kind == "integer" else 0
    if key == "target_qps":
        qps = float(num.value)
        if lg_scn is Scenario.SERVER:
            return {"server_target_qps": qps}, ov(
                "server_target_qps", None, qps, True, "the offered load is the submitter's choice"
            )
        if lg_scn is Scenario.OFFLINE:
            return {"offline_expected_qps": qps}, ov(
                "offline_expected_qps", None, qps, True, "sizes the Offline query"
            )
        return {}, None
    if key == "target_latency" and lg_scn is Scenario.SINGLE_STREAM:
        ns = int(num.value)
        return {"single_stream_expected_latency_ns": ns}, ov(
            "single_stream_expected_latency_ns", None, ns, True, "expected latency only sizes the schedule"
        )
    if key == "target_latency" and lg_scn is Scenario.SERVER:
        off = official.server_target_latency_ns
        ok = off is not None and ival <= off
        return {"server_target_latency_ns": ival}, ov(
            "server_target_latency_ns", off, ival, ok, "the latency gate is fixed by the rules"
        )
    if key == "min_duration":
        ok = ival >= official.min_duration_ms
        return {"min_duration_ms": ival}, ov(
            "min_duration_ms",
            official.min_duration_ms,
            ival,
            ok,
            "runs must last at least the round's minimum duration",
        )
    if key == "max_duration":
        return {"max_duration_ms": ival}, ov(
            "max_duration_ms", 0, ival, ival == 0, "a maximum duration can end a run early"
        )
    if key == "min_query_count":
        ok = ival >= official.min_query_count
        return {"min_query_count": ival}, ov(
            "min_query_count", official.min_query_count, ival, ok, "fewer queries than the rules require"
        )
    if key == "max_query_count":
        return {"max_query_count": ival}, ov(
            "max_query_count", 0, ival, ival == 0, "a maximum query count can end a run early"
        )
    if key == "performance_sample_count_override":
        off_psc = official.performance_sample_count
        psc = ival or None  # 0: LoadGen uses the QSL's own performance sample count
        ok = psc is None or off_psc is None or psc >= off_psc
        return {"performance_sample_count": psc}, ov(
            "performance_sample_count",
            off_psc,
            psc,
            ok,
            "the loaded sample set may not be smaller than the round's",
        )
    if key == "accuracy_sample_count_override":
        acc = ival or None  # 0: the whole data set
        return {"accuracy_sample_count": acc}, ov(
            "accuracy_sample_count", None, acc, acc is None, "the accuracy run must cover the whole dataset"
        )
    if key == "sample_concatenate_permutation":
        on = num.flag_on
        ok = on or not benchmark.equal_issue_required
        return {"sample_concatenate_permutation": on}, ov(
            "sample_concatenate_permutation",
            official.sample_concatenate_permutation,
            on,
            ok,
            "equal-issue mode is required",
        )
    if key == "use_token_latencies":
        on = num.flag_on
        ok = on or not official.use_token_latencies
        return {"use_token_latencies": on}, ov(
            "use_token_latencies",
            official.use_token_latencies,
            on,
            ok,
            "LLM runs must report token latencies",
        )
    if key in ("ttft_latency", "tpot_latency"):
        if lg_scn is not Scenario.SERVER:
            return {}, None
        field = f"{key}_ns"
        off_ns = getattr(official, field)
        return {field: ival}, ov(
            field,
            off_ns,
            ival,
            off_ns is not None and ival == off_ns,
            "the token-latency gates are fixed by the rules",
        )
    if key == "target_latency_percentile":
        if lg_scn is Scenario.OFFLINE:
            return {}, None
        frac = float(num.value)
        off_pct = official.target_latency_percentile
        ok = off_pct is not None and abs(frac - off_pct) < 1e-9
        return {"target_latency_percentile": frac}, ov(
            "target_latency_percentile", off_pct, frac, ok, "the latency percentile is fixed by the rules"
        )
    if key in SEED_KEYS:
        return {}, ov(
            key,
            None,
            entry.value,
            False,
            "LoadGen ignores seeds in user.conf; the compiled mlperf.conf decides them",
        )
    if key in AUDIT_KEYS:
        return {}, ov(key, None, entry.value, False, "audit/compliance-test key: only an audit.config may set it")
    if key in ("infer_token_latencies", "token_latency_scaling_factor"):
        return {}, ov(key, None, entry.value, False, "token inference is fixed per benchmark by mlperf.conf")
    if key in FREE_KEYS:
        return {}, ov(key, None, entry.value, True, "tuning knob")
    return {}, None


def conf_number_findings(user_conf: UserConf, conf_model: str, lg_scenario: Scenario) -> tuple[list[Finding], list[str]]:
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
                Finding(
                    rule="RUN-CONF-NUMBER",
                    severity=Severity.ERROR,
                    message=f"{e.text}: {num.misread}; LoadGen applies {e.key} = {_applied_text(num)}",
                    path=user_conf.path,
                    line=e.line,
                    fix=f"write {e.key} as a plain decimal {'integer' if num.kind == 'integer' else 'number'}"
                    + (" (0 or 1)" if kt.flag == "eq1" else ""),
                )
            )
    return findings, refused


def _applied_text(num: ConfNumber) -> str:
    mult = key_type(num.key, Scenario.SERVER if num.key == "target_latency" and num.kind == "integer" else Scenario.OFFLINE).multiplier
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
        conf_problems=(*user_conf.problems, *number_problems),
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


# --------------------------------------------------------------------------------------------
# pre-run checks


def installed_loadgen_version() -> str | None:
    try:
        return importlib.metadata.version(LOADGEN_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return None


def _accepted_text(entry: str) -> str:
    """``"6.0."`` (a series) -> ``"6.0.x"``; ``"6.0.15"`` (one release) stays as it is."""
    return f"{entry}x" if entry.endswith(".") else entry


def _pip_requirement(entry: str) -> str:
    """The pip requirement installing an accepted entry: ``==6.0.*`` for a series, ``==6.0.15`` for a release."""
    return f"{LOADGEN_DISTRIBUTION}=={entry}*" if entry.endswith(".") else f"{LOADGEN_DISTRIBUTION}=={entry}"


def loadgen_version_findings(rnd: Round, installed: str | None) -> list[Finding]:
    """The installed LoadGen must be a release of the round (``Round.loadgen_runs``; else ``loadgen_versions``).

    A release carries one round's compiled mlperf.conf (seeds, gates, model keys): another round's release runs,
    but with the wrong seeds. The refusal names the release to install.
    """
    runs = rnd.loadgen_runs
    if runs is not None:
        fix: str | None = f"pip install '{runs.pip_requirement}'"
        accepted = runs.accepts(installed) if installed is not None else False
        want = (
            f"{runs.releases[0]}-{runs.releases[-1]}" if len(runs.releases) > 2 else ", ".join(runs.releases)
        )
        cite = runs.cite
    else:
        fix = f"pip install '{_pip_requirement(rnd.loadgen_versions[-1])}'" if rnd.loadgen_versions else None
        accepted = installed is not None and rnd.accepts_loadgen(installed)
        want = ", ".join(_accepted_text(p) for p in rnd.loadgen_versions) or "(none listed)"
        cite = rnd.loadgen_versions_cite
    if installed is None:
        return [
            Finding(
                rule="RUN-LOADGEN-MISSING",
                severity=Severity.ERROR,
                message=f"{LOADGEN_DISTRIBUTION} is not installed",
                fix=fix,
            )
        ]
    if accepted:
        return []
    return [
        Finding(
            rule="RUN-LOADGEN-VERSION",
            severity=Severity.ERROR,
            message=f"installed LoadGen {installed} is not a {rnd.name} release (needs {want}); its compiled "
            f"mlperf.conf (seeds, gates) is that of another round"
            + (f"; install it with: {fix}" if fix else ""),
            source=cite,
            fix=fix,
        )
    ]


def override_findings(planned: PlannedSettings, mode: RunMode) -> list[Finding]:
    """Non-compliant overrides: warnings in trials, errors (refusal) in submission mode."""
    sev = Severity.ERROR if mode is RunMode.SUBMISSION else Severity.WARNING
    out: list[Finding] = []
    for o in planned.non_compliant:
        out.append(
            Finding(
                rule="RUN-CONF-NONCOMPLIANT",
                severity=sev,
                message=f"{o.entry.text}: {o.setting} {o.official if o.official is not None else '(unset)'} -> "
                f"{o.effective}: {o.reason}; a result with this setting is not compliant",
                path=planned.conf_path,
                line=o.entry.line,
                fix="remove the line for a submission run (fine for performance/accuracy trials)",
            )
        )
    return out


def gates_text(planned: PlannedSettings) -> str:
    """Human summary of the effective gates for the scenario."""
    e = planned.effective
    parts = [
        f"{planned.benchmark} {e.scenario.value} (LoadGen {e.loadgen_scenario.value}, conf model {e.conf_model})"
    ]
    if e.ttft_latency_ns is not None and e.tpot_latency_ns is not None:
        pct = f"p{e.target_latency_percentile * 100:g}" if e.target_latency_percentile else "p99"
        parts.append(
            f"gates: {pct} TTFT < {e.ttft_latency_ns / _NS_PER_MS:g} ms, {pct} TPOT < {e.tpot_latency_ns / _NS_PER_MS:g} ms"
        )
    elif e.loadgen_scenario is Scenario.SERVER and e.server_target_latency_ns:
        parts.append(f"gate: p99 latency <= {e.server_target_latency_ns / _NS_PER_MS:g} ms")
    else:
        parts.append(
            "no latency gate (throughput scenario)"
            if e.loadgen_scenario is Scenario.OFFLINE
            else "latency is the result"
        )
    parts.append(f"min duration {e.min_duration_ms / 1000:g} s, min queries {e.min_query_count}")
    if e.server_target_qps is not None:
        parts.append(f"target {e.server_target_qps:g} QPS")
    if e.offline_expected_qps is not None:
        parts.append(f"expected {e.offline_expected_qps:g} samples/s")
    return "; ".join(parts)


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
                Finding(
                    rule="RUN-LOADGEN-CONF",
                    severity=Severity.ERROR,
                    message=f"LoadGen will use {name}={got}{whose} but round {round_name} requires {want} "
                    f"(compiled mlperf.conf of another round, or a user.conf override)",
                )
            )
    return out


def describe_overrides(overrides: Sequence[Override]) -> list[str]:
    return [
        f"line {o.entry.line}: {o.entry.text} -> {o.setting}={o.effective}"
        + ("" if o.compliant else f"  [NOT COMPLIANT: {o.reason}]")
        for o in overrides
    ]
