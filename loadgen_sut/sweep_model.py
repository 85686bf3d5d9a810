"""The results model of ``inference-audit sweep`` (published: the HTML report reads it, ``sweep_json_schema``):
its settings, one entry per level, the knee and LoadGen's FindPeakPerformance."""

from __future__ import annotations

import json
import sys
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from loadgen_sut.engines.factory import EngineSpec
from loadgen_sut.record import Percentile

SWEEP_TOOL: Literal["inference-audit sweep"] = "inference-audit sweep"
SWEEP_SCHEMA_VERSION: Literal[1] = 1


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SweepSlo(_Frozen):
    """The limits every level is judged by: LoadGen's p99s for the knee, each request's own for goodput."""

    ttft_ms: float
    tpot_ms: float
    source: (
        str  # "round v6.1 llama3.1-8b Server limits (CHK_HEAD:1778-1780)" or "declared (--slo-ttft-ms ...)"
    )


Spacing = Literal["list", "linear", "geometric"]


class SweepSettings(_Frozen):
    """Everything that decides what the levels measure. A rerun resumes only when these are equal."""

    round: str
    benchmark: str
    scenario: str  # Server or Interactive (LoadGen runs both as its Server scenario)
    spacing: Spacing  # how rates_qps was made (--rates: "list")
    rates_qps: tuple[float, ...]  # offered rates, ascending
    slo: SweepSlo
    duration_s: float  # each level's LoadGen min_duration
    min_queries: int  # each level's LoadGen min_query_count
    engine: EngineSpec
    dataset: str
    dataset_limit: int | None = None
    user_conf_text: str | None = None  # the content of --user-conf (lines the sweep sets are refused)
    max_new_tokens: int | None = None
    min_new_tokens: int | None = 2
    ignore_eos: bool = False


class LevelLatency(_Frozen):
    """p50/p99 TTFT and TPOT in ms, each with its sample count (None: not measured)."""

    ttft_p50_ms: Percentile | None = None
    ttft_p99_ms: Percentile | None = None
    tpot_p50_ms: Percentile | None = None
    tpot_p99_ms: Percentile | None = None


class TimelineSummary(_Frozen):
    """What one level's ``sut_timeline.jsonl`` says, judged against the SLO."""

    samples: int  # lines in the timeline (issued samples)
    completed: int  # completed normally (ok) with a completion time
    good: int  # completed and within both SLO limits (see :func:`summarize_timeline`)
    window_s: float | None  # first issue to last completion (None: nothing completed)
    completed_qps: float | None  # completed / window_s
    goodput_qps: float | None  # good / window_s
    latency: LevelLatency


LevelStatus = Literal["finished", "failed"]


class SweepLevel(_Frozen):
    """One offered rate: one LoadGen Server run."""

    offered_qps: float
    status: LevelStatus  # finished: LoadGen wrote its detail log; failed: see error (rerun on resume)
    error: str | None = None
    run_id: str
    run_dir: str  # absolute
    verdict: str  # the run record's verdict (NOT_SUBMITTABLE for a trial that went through)
    wall_s: float
    # LoadGen (mlperf_log_detail.txt)
    loadgen_validity: str | None = None
    loadgen_perf_constraints_met: bool | None = None  # LoadGen's own p99-vs-limits judgement
    loadgen_min_duration_met: bool | None = None
    loadgen_early_stopping_met: bool | None = None
    scheduled_qps: float | None = None  # result_scheduled_samples_per_sec
    achieved_qps: float | None = None  # result_completed_samples_per_sec
    query_count: int | None = None
    loadgen_latency: LevelLatency | None = None
    # the SUT
    issued: int = 0
    completed: int = 0
    failed: int = 0
    timeline: TimelineSummary | None = (
        None  # None: no sut_timeline.jsonl in the test directory (or unreadable)
    )
    timeline_error: str | None = None  # why an existing sut_timeline.jsonl could not be read
    goodput_qps: float | None = None  # timeline.goodput_qps, repeated for readers of the level alone
    within_slo: bool | None = None  # :func:`within_slo`; None: LoadGen's p99s were not measured


class Knee(_Frozen):
    """The highest rate whose LoadGen p99 TTFT and TPOT stay within the SLO (see :func:`find_knee`)."""

    rate_qps: float | None  # None: the lowest level already missed the SLO (or did not finish)
    first_failing_qps: float | None  # the next level above the knee (None: every level met it: a lower bound)
    bounded: bool  # a level above the knee missed the SLO, so capacity < first_failing_qps
    highest_within_qps: float | None  # the highest level within the SLO anywhere (noise can put one above)
    within_above_knee: tuple[float, ...] = ()  # levels within the SLO above the first failing one
    peak_goodput_qps: float | None = None  # the highest goodput of any level (timeline)
    peak_goodput_at_qps: float | None = None
    max_achieved_qps: float | None = (
        None  # the highest completed rate LoadGen measured (overloaded: the throughput)
    )
    max_achieved_at_qps: float | None = None
    basis: str = "LoadGen p99 TTFT and TPOT (mlperf_log_detail.txt) <= the SLO, and no failed samples"


class FindPeakResult(_Frozen):
    """LoadGen's FindPeakPerformance, started at the knee, and how its answer compares."""

    status: LevelStatus
    error: str | None = None
    start_qps: float
    peak_qps: float | None = None  # "Found peak performance field" (None: not found)
    run_id: str
    run_dir: str
    verdict: str
    wall_s: float
    agrees_with_knee: bool | None = None  # knee <= peak <= first failing level (None: not comparable)
    note: str | None = None


class SweepResult(_Frozen):
    """``inference-audit sweep``'s results file: its settings, one entry per finished (or failed) level, the knee."""

    schema_version: Literal[1] = SWEEP_SCHEMA_VERSION
    tool: Literal["inference-audit sweep"] = SWEEP_TOOL
    tool_version: str
    created_utc: str
    updated_utc: str
    simulated: bool  # the simulated engine: no system was measured
    complete: bool  # every level finished (and find-peak, when asked)
    settings: SweepSettings
    levels: tuple[SweepLevel, ...] = ()  # ascending offered rate; levels not yet run are absent
    knee: Knee | None = None
    find_peak: FindPeakResult | None = None
    notes: tuple[str, ...] = ()


def sweep_json_schema() -> dict[str, Any]:
    schema = SweepResult.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema


if __name__ == "__main__":
    if sys.argv[1:] == ["--schema"]:
        print(json.dumps(sweep_json_schema(), indent=2, sort_keys=True))
    else:
        print("usage: python -m loadgen_sut.sweep_model --schema", file=sys.stderr)
        sys.exit(2)
