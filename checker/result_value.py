"""The result value of one result directory, as the official checker computes it (catalogue D8, D17).

One computation serves the summary CSV row (``checker.checks.inferred`` -> ``ResultEntry.summary``) and the
re-derivation of published table rows (``checker.audit.table.rederive``, ``inference-audit table --tree``):

- the LoadGen key is ``Benchmark.result_field_overrides[effective scenario]`` (tokens/s for the LLMs) or
  ``Round.result_fields[effective scenario]`` (RESULT_FIELD_NEW / RESULT_FIELD_BENCHMARK_OVERWRITE);
- SingleStream/MultiStream latencies are converted once, here, from ns to ms;
- a directory scenario other than the log's effective scenario is an inferred result (edge systems) with the
  official formulas of ``get_inferred_result`` (v5.1.1 checker L1775); Interactive must come from a Server run and
  is not an inferred result.

Pure functions over a parsed detail log and the round's rules: no I/O, no findings. Callers turn a
:class:`ResultStatus` other than ``OK`` into their own finding or problem text.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Protocol

from rules.models import Benchmark, Round, Scenario

NS_PER_MS = 1_000_000
LATENCY_SCENARIOS = (Scenario.SINGLE_STREAM, Scenario.MULTI_STREAM)

# (directory scenario, effective scenario of the log) pairs the official checker infers a result for
INFERABLE = frozenset(
    {
        (Scenario.OFFLINE, Scenario.SINGLE_STREAM),
        (Scenario.OFFLINE, Scenario.MULTI_STREAM),
        (Scenario.MULTI_STREAM, Scenario.SINGLE_STREAM),
    }
)


class DetailValues(Protocol):
    """What the computation reads from a parsed ``mlperf_log_detail.txt`` (``checker.parsers.mllog.DetailLog``)."""

    @property
    def effective_scenario(self) -> str | None: ...

    def float_value(self, key: str) -> float | None: ...

    def line_of(self, key: str) -> int | None: ...


class ResultStatus(Enum):
    OK = "ok"
    NO_EFFECTIVE_SCENARIO = "no effective_scenario in the detail log"
    NO_RESULT_KEY = "the round has no result key for the effective scenario"
    MISSING_VALUE = "the result key is missing from the detail log"
    INTERACTIVE_NOT_SERVER = "an Interactive result must come from a Server run"
    NOT_INFERABLE = "the directory scenario cannot be inferred from the log's scenario"


@dataclass(frozen=True)
class ResultValue:
    """The summary-CSV result of one directory. ``value`` is in the CSV's unit (ms for SingleStream/MultiStream);
    None when the logs do not give it (see ``status``; an inferred result whose inputs are missing is OK with
    ``value`` None, which the official checker reports as 0)."""

    status: ResultStatus
    effective: Scenario | None = None
    value: float | None = None
    units: str = ""
    inferred: bool = False
    key: str | None = None  # LoadGen key, or the formula of an inferred result
    line: int | None = None  # line of ``key`` in the detail log (None for a formula)


def result_key(rnd: Round, bench: Benchmark | None, effective: Scenario) -> str | None:
    """LoadGen key of the result (catalogue D8: per-benchmark override, else the round default): Round.result_key."""
    return rnd.result_key(bench, effective)


def result_units(rnd: Round, bench: Benchmark | None, directory: Scenario) -> str:
    """Units the official checker writes in the summary CSV for a performance result: Round.units_for."""
    return rnd.units_for(bench, directory) or ""


def _inferred(log: DetailValues, directory: Scenario, effective: Scenario) -> tuple[float | None, str, int | None]:
    """Catalogue D17 (get_inferred_result): value (None when its inputs are missing or zero), formula, line."""
    if directory is Scenario.OFFLINE and effective is Scenario.SINGLE_STREAM:
        key = "result_qps_without_loadgen_overhead"
        return log.float_value(key), key, log.line_of(key)
    if directory is Scenario.OFFLINE and effective is Scenario.MULTI_STREAM:
        spq = log.float_value("effective_samples_per_query")
        mean_ns = log.float_value("result_mean_query_latency_ns") or log.float_value("result_mean_latency_ns")
        value = spq * 1000.0 / (mean_ns / NS_PER_MS) if spq and mean_ns else None
        return value, "effective_samples_per_query * 1000 / (result_mean_query_latency_ns / 1e6)", None
    # MultiStream from SingleStream: 8 x the early-stopping latency (the 99th percentile without early stopping)
    es = log.float_value("early_stopping_latency_ms")
    if es is None:
        es = log.float_value("result_99.00_percentile_latency_ns")
    return (es * 8 / NS_PER_MS if es else None), "8 * early_stopping_latency_ms / 1e6", None


def compute_result(
    log: DetailValues, rnd: Round, bench: Benchmark | None, directory: Scenario | None
) -> ResultValue:
    """The result of a directory named ``directory`` (None: take the log's own scenario) from its detail log."""
    effective = Scenario.parse(log.effective_scenario or "")
    if effective is None:
        return ResultValue(ResultStatus.NO_EFFECTIVE_SCENARIO)
    scen = directory or effective
    units = result_units(rnd, bench, scen)
    key = result_key(rnd, bench, effective)
    if key is None:
        return ResultValue(ResultStatus.NO_RESULT_KEY, effective, units=units)
    value = log.float_value(key)
    if value is None:
        return ResultValue(ResultStatus.MISSING_VALUE, effective, units=units, key=key)
    if effective in LATENCY_SCENARIOS:
        value /= NS_PER_MS
    line = log.line_of(key)
    if scen is effective:
        return ResultValue(ResultStatus.OK, effective, value, units, False, key, line)
    if scen is Scenario.INTERACTIVE:
        if effective is not Scenario.SERVER:
            return ResultValue(ResultStatus.INTERACTIVE_NOT_SERVER, effective, units=units, key=key, line=line)
        return ResultValue(ResultStatus.OK, effective, value, units, False, key, line)
    if (scen, effective) not in INFERABLE:
        return ResultValue(ResultStatus.NOT_INFERABLE, effective, units=units, key=key, line=line)
    inferred, formula, formula_line = _inferred(log, scen, effective)
    return ResultValue(ResultStatus.OK, effective, inferred, units, True, formula, formula_line)

