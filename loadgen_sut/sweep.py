"""``inference-audit sweep``: an SLO goodput sweep over rising Server rates, and its knee.

Each level is one real LoadGen Server run at an offered rate (``target_qps``), made by the same harness as
``inference-audit run --mode performance`` (:func:`loadgen_sut.runner.run`: its own run directory, LoadGen's logs,
``run-record.json``). For each level the results file holds

- what LoadGen says (``mlperf_log_detail.txt``): scheduled and completed samples per second, the result's
  validity, p50/p99 TTFT and TPOT, each with the number of samples it is taken over;
- what the SUT saw per sample (``sut_timeline.jsonl``, :mod:`loadgen_sut.timeline`): the same percentiles, and the
  **goodput**: completed requests per second that met both SLO limits (TTFT and TPOT of that request);
- whether LoadGen's p99 TTFT and p99 TPOT are within the SLO (:func:`within_slo`).

The **knee** (:func:`find_knee`) is the highest offered rate of the run of levels, from the lowest up, whose
LoadGen p99s are within the SLO: capacity, as LoadGen judges latency, lies between the knee and the first level
above it that is not. ``--find-peak`` also runs LoadGen's own FindPeakPerformance from the knee and records how
its answer compares.

The SLO is the round's Server (or Interactive) token-latency limits (:attr:`rules.models.Benchmark.token_latency_limits`)
unless one is declared. The sweep hands the same limits to LoadGen (``ttft_latency`` / ``tpot_latency``), so LoadGen's
own validity and FindPeakPerformance judge the same SLO as the knee.

Resumable: the results file is the state. A rerun with the same settings (:class:`SweepSettings`) skips the levels
that finished and runs the rest; a results file written with other settings is refused, never mixed. The file is
written atomically after every level (:mod:`checker.report.output`: a temporary file, fsync, rename), so a Ctrl-C
keeps every level that finished. A file at ``--out`` that is not a sweep results file is never overwritten.

Nothing here is a submission: the levels use trial settings (a short ``min_duration``, equal-issue off) and every
run is NOT_SUBMITTABLE by construction.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import math
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from checker.findings import UnusableInput
from checker.parsers.mllog import DetailLog, parse_detail_file
from checker.report.output import OutputTarget, json_document, plan_outputs, write_output
from checker.safe_io import parse_json
from checker.version import tool_version
from loadgen_sut.engines.factory import EngineSpec
from loadgen_sut.record import Percentile
from loadgen_sut.settings import RunMode, parse_user_conf_text
from loadgen_sut.timeline import TIMELINE_FILE, SampleTiming, Timeline, read_timeline
from rules.models import Benchmark, Scenario

if TYPE_CHECKING:  # the runner pulls in LoadGen and the scorers (seconds); readers of the model need neither
    from loadgen_sut.run.plan import RunRequest
    from loadgen_sut.runner import RunOutcome

SWEEP_TOOL: Literal["inference-audit sweep"] = "inference-audit sweep"
SWEEP_SCHEMA_VERSION: Literal[1] = 1
MAX_RESULTS_BYTES = 64 * 1024 * 1024
LOCK_FILE = ".sweep.lock"

# The user.conf keys the sweep sets for every level: a --user-conf may not set them for the Server scenario
# (LoadGen prefers a model-specific line to the sweep's '*' line, so the level would silently run other settings).
SWEPT_KEYS = (
    "target_qps",
    "min_duration",
    "min_query_count",
    "ttft_latency",
    "tpot_latency",
    "sample_concatenate_permutation",
)

Printer = Callable[[str], None]
RunLevel = Callable[["RunRequest", Printer], "RunOutcome"]  # loadgen_sut.runner.run (a test may wrap it to count the runs)


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


# ---------------------------------------------------------------------------------------------------------------
# the results model (published: the HTML report reads it)


class SweepSlo(_Frozen):
    """The limits every level is judged by: LoadGen's p99s for the knee, each request's own for goodput."""

    ttft_ms: float
    tpot_ms: float
    source: str  # "round v6.1 llama3.1-8b Server limits (CHK_HEAD:1778-1780)" or "declared (--slo-ttft-ms ...)"


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
    timeline: TimelineSummary | None = None  # None: no sut_timeline.jsonl in the test directory (or unreadable)
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
    max_achieved_qps: float | None = None  # the highest completed rate LoadGen measured (overloaded: the throughput)
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


# ---------------------------------------------------------------------------------------------------------------
# level schedule


def _round_rate(value: float) -> float:
    """6 significant digits: what the results file and user.conf show is what LoadGen is given."""
    return float(f"{value:.6g}")


def level_schedule(
    rates: Sequence[float] | None = None,
    start: float | None = None,
    stop: float | None = None,
    steps: int | None = None,
    spacing: Literal["linear", "geometric"] = "linear",
) -> tuple[Spacing, tuple[float, ...]]:
    """The offered rates, ascending: an explicit list, or ``steps`` rates from ``start`` to ``stop`` inclusive
    (evenly spaced, or in a constant ratio). Bad input: :class:`UnusableInput` naming the option."""
    if rates is not None:
        if start is not None or stop is not None or steps is not None:
            raise UnusableInput("give either --rates or --start/--stop/--steps, not both")
        if not rates:
            raise UnusableInput("--rates: no rate given")
        for r in rates:
            if not math.isfinite(r) or r <= 0:
                raise UnusableInput(f"--rates: {r:g} is not a positive rate")
        out = sorted(_round_rate(r) for r in rates)
        dupes = sorted({r for r in out if out.count(r) > 1})
        if dupes:
            raise UnusableInput(f"--rates: {', '.join(f'{d:g}' for d in dupes)} given more than once")
        return "list", tuple(out)
    if start is None or stop is None or steps is None:
        raise UnusableInput("give --rates R1,R2,... or all of --start, --stop and --steps")
    for name, v in (("--start", start), ("--stop", stop)):
        if not math.isfinite(v) or v <= 0:
            raise UnusableInput(f"{name} {v:g} is not a positive rate")
    if steps < 1:
        raise UnusableInput(f"--steps {steps} is less than 1")
    if steps == 1:
        if start != stop:
            raise UnusableInput("--steps 1 needs --start equal to --stop")
        return spacing, (_round_rate(start),)
    if stop <= start:
        raise UnusableInput(f"--stop {stop:g} must be above --start {start:g}")
    if spacing == "linear":
        values = [start + (stop - start) * i / (steps - 1) for i in range(steps)]
    else:
        ratio = (stop / start) ** (1.0 / (steps - 1))
        values = [start * ratio**i for i in range(steps)]
    values[-1] = stop
    out = [_round_rate(v) for v in values]
    if len(set(out)) != len(out):
        raise UnusableInput(f"--steps {steps} between {start:g} and {stop:g} gives equal rates at 6 digits")
    return spacing, tuple(out)


def level_conf_lines(settings: SweepSettings, rate_qps: float) -> tuple[str, ...]:
    """The user.conf lines of one level (appended after --user-conf; LoadGen runs Interactive as Server)."""
    return (
        f"*.Server.target_qps = {rate_qps!r}",
        f"*.Server.min_duration = {round(settings.duration_s * 1000)}",
        f"*.Server.min_query_count = {settings.min_queries}",
        f"*.Server.ttft_latency = {round(settings.slo.ttft_ms)}",
        f"*.Server.tpot_latency = {round(settings.slo.tpot_ms)}",
        "*.Server.sample_concatenate_permutation = 0",  # the query count follows the duration, not the data set
    )


def round_slo(
    bench: Benchmark, scenario: Scenario, ttft_ms: float | None, tpot_ms: float | None, round_name: str
) -> SweepSlo:
    """The declared SLO, or the round's limits for the scenario; whole milliseconds (LoadGen's ``ttft_latency``
    and ``tpot_latency`` are read as integers of ms: ``strtoull(value) * 1000000``, test_settings_internal.cc)."""
    limits = bench.token_latency_limits.get(scenario)
    if (ttft_ms is None or tpot_ms is None) and limits is None:
        raise UnusableInput(
            f"round {round_name} has no {scenario.value} token-latency limits for {bench.name}: "
            "declare the SLO with --slo-ttft-ms and --slo-tpot-ms"
        )
    ttft = ttft_ms if ttft_ms is not None else limits.ttft_ms  # type: ignore[union-attr]
    tpot = tpot_ms if tpot_ms is not None else limits.tpot_ms  # type: ignore[union-attr]
    for name, v in (("TTFT", ttft), ("TPOT", tpot)):
        if not math.isfinite(v) or v <= 0 or v != round(v):
            raise UnusableInput(
                f"SLO {name} {v:g} ms: LoadGen takes its latency limits in whole milliseconds "
                "(give --slo-ttft-ms / --slo-tpot-ms as whole numbers)"
            )
    declared = [f for f, v in (("--slo-ttft-ms", ttft_ms), ("--slo-tpot-ms", tpot_ms)) if v is not None]
    if limits is not None and not declared:
        source = f"round {round_name} {bench.name} {scenario.value} limits" + (f" ({limits.cite})" if limits.cite else "")
    elif limits is not None:
        source = f"declared ({', '.join(declared)}); the rest from round {round_name} {bench.name} {scenario.value}"
    else:
        source = "declared (--slo-ttft-ms, --slo-tpot-ms)"
    return SweepSlo(ttft_ms=float(ttft), tpot_ms=float(tpot), source=source)


def refuse_swept_keys(user_conf_text: str | None, where: str) -> None:
    """A user.conf may not set what the sweep sets per level (for the Server scenario, any model)."""
    if not user_conf_text:
        return
    conf = parse_user_conf_text(user_conf_text, where)
    for e in conf.entries:
        if e.key in SWEPT_KEYS and e.scenario in ("Server", "*"):
            raise UnusableInput(
                f"sets {e.key}, which the sweep sets for every level; remove the line "
                "(rates: --rates or --start/--stop/--steps; --duration-s, --min-queries, --slo-ttft-ms, --slo-tpot-ms)",
                path=where,
                line=e.line,
            )


# ---------------------------------------------------------------------------------------------------------------
# percentiles, goodput, the knee


def loadgen_percentile(values: Sequence[float], fraction: float) -> Percentile:
    """The percentile as LoadGen takes it: the sorted values at index floor(n * fraction)
    (``sample_latencies[sample_count * percentile]``, loadgen/results.cc ProcessLatencies); None when empty."""
    if not values:
        return Percentile(value=None, count=0)
    ordered = sorted(values)
    return Percentile(value=ordered[min(len(ordered) - 1, int(len(ordered) * fraction))], count=len(ordered))


def _meets(s: SampleTiming, ttft_ns: float, tpot_ns: float) -> bool:
    ttft = s.ttft_ns
    if ttft is None or ttft > ttft_ns:
        return False
    tpot = s.tpot_ns
    if tpot is None:  # a one-token output has no TPOT to miss; any other missing time is a miss
        return s.output_tokens == 1
    return tpot <= tpot_ns


def summarize_timeline(timeline: Timeline, slo: SweepSlo) -> TimelineSummary:
    """Goodput and percentiles of one level's timeline.

    A request is *good* when it completed normally (``ok``, a completion time) and its own TTFT (issue to first
    token) is at most the SLO's TTFT and its own TPOT ((completion - first token) / (tokens - 1)) at most the SLO's
    TPOT (a one-token output has no TPOT and meets that limit). Failed requests are never good. Goodput and the
    completed rate are per second of the window from the first issue to the last completion.
    """
    samples = timeline.samples
    done = [s for s in samples if s.ok and s.completed_ns is not None]
    ttft_lim = slo.ttft_ms * 1e6
    tpot_lim = slo.tpot_ms * 1e6
    good = sum(1 for s in done if _meets(s, ttft_lim, tpot_lim))
    window_s: float | None = None
    if samples and done:
        first = min(s.issued_ns for s in samples)
        last = max(s.completed_ns for s in done if s.completed_ns is not None)
        window_s = (last - first) / 1e9 if last > first else None
    ttfts = [t / 1e6 for t in (s.ttft_ns for s in done) if t is not None]
    tpots = [t / 1e6 for t in (s.tpot_ns for s in done) if t is not None]
    return TimelineSummary(
        samples=len(samples),
        completed=len(done),
        good=good,
        window_s=window_s,
        completed_qps=None if window_s is None else len(done) / window_s,
        goodput_qps=None if window_s is None else good / window_s,
        latency=LevelLatency(
            ttft_p50_ms=loadgen_percentile(ttfts, 0.50),
            ttft_p99_ms=loadgen_percentile(ttfts, 0.99),
            tpot_p50_ms=loadgen_percentile(tpots, 0.50),
            tpot_p99_ms=loadgen_percentile(tpots, 0.99),
        ),
    )


def detail_latency(log: DetailLog) -> LevelLatency:
    """LoadGen's p50/p99 TTFT and TPOT (ms), counted over ``result_query_count`` samples (Server: one each)."""
    count = log.int_value("result_query_count") or 0

    def pct(kind: str, p: float) -> Percentile | None:
        ns = log.percentile_ns(kind, p)
        return None if ns is None else Percentile(value=ns / 1e6, count=count)

    return LevelLatency(
        ttft_p50_ms=pct("first_token", 50.0),
        ttft_p99_ms=pct("first_token", 99.0),
        tpot_p50_ms=pct("time_per_output_token", 50.0),
        tpot_p99_ms=pct("time_per_output_token", 99.0),
    )


def within_slo(latency: LevelLatency | None, slo: SweepSlo, failed: int) -> bool | None:
    """LoadGen's p99 TTFT and p99 TPOT are at most the SLO and no sample failed. LoadGen's PerfConstraintsMet
    fails a run only when a p99 is above its limit (loadgen/results.cc), so a p99 equal to it is within.
    None when either p99 was not measured."""
    if latency is None or latency.ttft_p99_ms is None or latency.tpot_p99_ms is None:
        return None
    ttft, tpot = latency.ttft_p99_ms.value, latency.tpot_p99_ms.value
    if ttft is None or tpot is None:
        return None
    return ttft <= slo.ttft_ms and tpot <= slo.tpot_ms and failed == 0


def find_knee(levels: Sequence[SweepLevel]) -> Knee:
    """The knee of finished levels: walking up from the lowest rate, the last level within the SLO before the
    first one that is not (a failed level, or one whose p99s were not measured, is not within).

    A level within the SLO above the first one that missed it (noise near the knee) does not move the knee; it is
    listed in ``within_above_knee`` and ``highest_within_qps``.
    """
    ordered = sorted(levels, key=lambda lv: lv.offered_qps)
    knee: float | None = None
    first_failing: float | None = None
    above: list[float] = []
    for lv in ordered:
        ok = lv.status == "finished" and lv.within_slo is True
        if first_failing is None:
            if ok:
                knee = lv.offered_qps
            else:
                first_failing = lv.offered_qps
        elif ok:
            above.append(lv.offered_qps)
    within = [lv.offered_qps for lv in ordered if lv.status == "finished" and lv.within_slo is True]
    with_goodput = [lv for lv in ordered if lv.goodput_qps is not None]
    best = max(with_goodput, key=lambda lv: lv.goodput_qps or 0.0) if with_goodput else None
    with_achieved = [lv for lv in ordered if lv.achieved_qps is not None]
    fastest = max(with_achieved, key=lambda lv: lv.achieved_qps or 0.0) if with_achieved else None
    return Knee(
        rate_qps=knee,
        first_failing_qps=first_failing,
        bounded=first_failing is not None,
        highest_within_qps=max(within) if within else None,
        within_above_knee=tuple(above),
        peak_goodput_qps=best.goodput_qps if best else None,
        peak_goodput_at_qps=best.offered_qps if best else None,
        max_achieved_qps=fastest.achieved_qps if fastest else None,
        max_achieved_at_qps=fastest.offered_qps if fastest else None,
    )


def compare_peak(knee: Knee, peak_qps: float | None) -> tuple[bool | None, str]:
    """Does LoadGen's peak agree with the sweep? It should lie between the knee and the first failing level."""
    if peak_qps is None or knee.rate_qps is None:
        return None, "not comparable: " + ("LoadGen found no peak" if peak_qps is None else "the sweep has no knee")
    hi = knee.first_failing_qps
    agrees = knee.rate_qps <= peak_qps and (hi is None or peak_qps <= hi)
    span = f"[{knee.rate_qps:g}, {hi:g}]" if hi is not None else f">= {knee.rate_qps:g}"
    return agrees, (
        f"LoadGen's peak {peak_qps:g} req/s is {peak_qps / knee.rate_qps:.3g}x the knee; the sweep brackets the "
        f"capacity in {span} req/s: {'agrees' if agrees else 'DISAGREES'}"
    )


# ---------------------------------------------------------------------------------------------------------------
# the results file


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _read_own_results(path: Path, given: str) -> SweepResult:
    """An existing results file at --out: ours (returned) or refused, never overwritten."""
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_RESULTS_BYTES + 1)
    except OSError as exc:
        raise UnusableInput(f"--out {given}: cannot read it ({exc.strerror or exc})") from exc
    not_ours = f"--out {given}: exists and is not an inference-audit sweep results file; refusing to overwrite it (choose another --out)"
    if len(data) > MAX_RESULTS_BYTES:
        raise UnusableInput(not_ours)
    try:
        obj = parse_json(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise UnusableInput(not_ours) from None
    if not isinstance(obj, dict) or obj.get("tool") != SWEEP_TOOL:
        raise UnusableInput(not_ours)
    try:
        return SweepResult.model_validate(obj)
    except ValidationError as exc:
        detail = str(exc).splitlines()[0][:200]
        raise UnusableInput(
            f"--out {given}: a sweep results file this version cannot read ({detail}); refusing to overwrite it "
            "(choose another --out)"
        ) from None


def settings_differences(old: SweepSettings, new: SweepSettings) -> list[str]:
    """Top-level (and engine) fields that differ, as 'name: old -> new'."""
    a, b = old.model_dump(mode="json"), new.model_dump(mode="json")
    out: list[str] = []
    for key in a.keys() | b.keys():
        if a.get(key) == b.get(key):
            continue
        if isinstance(a.get(key), dict) and isinstance(b.get(key), dict):
            for sub in sorted(a[key].keys() | b[key].keys()):
                if a[key].get(sub) != b[key].get(sub):
                    out.append(f"{key}.{sub}: {a[key].get(sub)!r} -> {b[key].get(sub)!r}")
        else:
            out.append(f"{key}: {_short(a.get(key))} -> {_short(b.get(key))}")
    return sorted(out)


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


class ResultsFile:
    """The results file: judged by the output-path policy, then written atomically after every level."""

    def __init__(self, given: Path) -> None:
        self.given = given
        if str(given) == "-":
            raise UnusableInput("--out -: the sweep's results file is its state (for resuming): name a file")
        exists = os.path.lexists(given)
        # symlinks, directories, FIFOs, a missing directory: refused here whether or not the file exists
        (target,) = plan_outputs([("--out", given)], force=True)
        self.previous: SweepResult | None = _read_own_results(given, str(given)) if exists else None
        self.target: OutputTarget = target if exists else dataclasses.replace(target, replace=False)

    def write(self, result: SweepResult) -> None:
        write_output(self.target, json_document(result.model_dump(mode="json")))
        if not self.target.replace:  # from now on the file is ours: replace it
            self.target = dataclasses.replace(self.target, replace=True)


@contextlib.contextmanager
def _locked(work_dir: Path) -> Iterator[None]:
    """One sweep at a time per work directory (two would interleave their writes of the same results file)."""
    try:
        work_dir.mkdir(exist_ok=True)
        fd = os.open(work_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise UnusableInput(f"cannot use the work directory ({exc.strerror or exc})", path=str(work_dir)) from exc
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise UnusableInput("another sweep is running with this work directory", path=str(work_dir)) from None
        yield
    finally:
        os.close(fd)


# ---------------------------------------------------------------------------------------------------------------
# running


@dataclass(frozen=True)
class SweepPlan:
    settings: SweepSettings
    base: RunRequest  # round, benchmark, engine, data set, user.conf ...: each level replaces mode, out, extra_conf
    out: Path
    work_dir: Path
    find_peak: bool = False
    verbose: bool = False


def _level_from(outcome: RunOutcome, rate: float, settings: SweepSettings, wall_s: float) -> SweepLevel:
    record = outcome.record
    test = record.tests[0] if record.tests else None
    base: dict[str, Any] = {
        "offered_qps": rate,
        "run_id": record.run_id,
        "run_dir": str(outcome.run_dir),
        "verdict": record.verdict.status,
        "wall_s": round(wall_s, 3),
    }
    if test is None:
        return SweepLevel(status="failed", error="the LoadGen test did not run", **base)
    test_dir = outcome.run_dir / test.directory
    detail = test_dir / "mlperf_log_detail.txt"
    base.update(issued=test.sut.issued, completed=test.sut.completed, failed=test.sut.failed)
    if test.status != "finished" or not detail.is_file():
        why = test.error or ("no mlperf_log_detail.txt" if test.status == "finished" else test.status)
        return SweepLevel(status="failed", error=f"{test.status}: {why}", **base)
    log = parse_detail_file(detail)
    latency = detail_latency(log)
    timeline_path = test_dir / TIMELINE_FILE
    summary: TimelineSummary | None = None
    timeline_error: str | None = None
    if timeline_path.is_file():
        try:
            summary = summarize_timeline(read_timeline(timeline_path), settings.slo)
        except UnusableInput as exc:  # the level still counts (LoadGen's numbers); its goodput is not measured
            timeline_error = str(exc)
    lgr = test.loadgen
    return SweepLevel(
        status="finished",
        loadgen_validity=log.result_validity,
        loadgen_perf_constraints_met=log.bool_value("result_perf_constraints_met"),
        loadgen_min_duration_met=log.bool_value("result_min_duration_met"),
        loadgen_early_stopping_met=lgr.early_stopping_met if lgr else None,
        scheduled_qps=log.float_value("result_scheduled_samples_per_sec"),
        achieved_qps=log.float_value("result_completed_samples_per_sec"),
        query_count=log.int_value("result_query_count"),
        loadgen_latency=latency,
        timeline=summary,
        timeline_error=timeline_error,
        goodput_qps=summary.goodput_qps if summary else None,
        within_slo=within_slo(latency, settings.slo, test.sut.failed),
        **base,
    )


def _fmt_pct(p: Percentile | None, digits: int) -> str:
    if p is None or p.value is None:
        return "n/a"
    return f"{p.value:.{digits}f} ms (n={p.count})"


def level_line(lv: SweepLevel) -> str:
    if lv.status != "finished":
        return f"{lv.offered_qps:g} req/s: FAILED ({lv.error})"
    lat = lv.loadgen_latency or LevelLatency()
    good = f"{lv.goodput_qps:.2f} req/s" if lv.goodput_qps is not None else "n/a (no timeline)"
    verdict = {True: "within SLO", False: "MISSES SLO", None: "SLO not judged (p99 not measured)"}[lv.within_slo]
    achieved = f"{lv.achieved_qps:g}" if lv.achieved_qps is not None else "n/a"
    why = [
        what
        for what, met in (
            ("latency limits not met", lv.loadgen_perf_constraints_met),
            ("min duration not met", lv.loadgen_min_duration_met),
            ("early stopping not met: too few queries", lv.loadgen_early_stopping_met),
        )
        if met is False
    ]
    validity = f"{lv.loadgen_validity}" + (f" ({'; '.join(why)})" if why and lv.loadgen_validity != "VALID" else "")
    failed = f", {lv.failed} FAILED samples" if lv.failed else ""
    return (
        f"{lv.offered_qps:g} req/s: achieved {achieved} req/s, goodput {good}{failed}; LoadGen TTFT p99 "
        f"{_fmt_pct(lat.ttft_p99_ms, 1)}, TPOT p99 {_fmt_pct(lat.tpot_p99_ms, 2)}; LoadGen {validity}; {verdict}"
    )


def knee_line(knee: Knee, slo: SweepSlo) -> str:
    limits = f"TTFT {slo.ttft_ms:g} ms, TPOT {slo.tpot_ms:g} ms"
    if knee.rate_qps is None:
        first = f" ({knee.first_failing_qps:g} req/s)" if knee.first_failing_qps is not None else ""
        return f"knee: none: the lowest level{first} already misses the SLO ({limits})"
    if knee.first_failing_qps is None:
        return f"knee: >= {knee.rate_qps:g} req/s: every level met the SLO ({limits}); sweep higher to bound it"
    extra = f"; within again above it: {', '.join(f'{r:g}' for r in knee.within_above_knee)}" if knee.within_above_knee else ""
    return (
        f"knee: {knee.rate_qps:g} req/s (p99s within {limits}); {knee.first_failing_qps:g} req/s misses it, so the "
        f"capacity lies in [{knee.rate_qps:g}, {knee.first_failing_qps:g}) req/s{extra}"
    )


def _run_quiet(run_level: RunLevel, request: RunRequest, verbose: bool, say: Printer) -> tuple[RunOutcome, list[str]]:
    """Run one level; the runner's own lines are kept (shown with --verbose, or when the level fails)."""
    lines: list[str] = []

    def keep(line: str) -> None:
        lines.append(line)
        if verbose:
            say("    " + line)

    try:
        return run_level(request, keep), lines
    except (UnusableInput, KeyboardInterrupt):
        if not verbose:
            for line in lines:
                say("    " + line)
        raise


def _result(plan: SweepPlan, created: str, levels: Sequence[SweepLevel], peak: FindPeakResult | None) -> SweepResult:
    ordered = tuple(sorted(levels, key=lambda lv: lv.offered_qps))
    finished = {lv.offered_qps for lv in ordered if lv.status == "finished"}
    complete = all(r in finished for r in plan.settings.rates_qps) and (
        not plan.find_peak or (peak is not None and peak.status == "finished")
    )
    notes: list[str] = []
    if plan.settings.engine.kind == "simulated":
        notes.append("SIMULATED engine: no system was measured")
    if any(lv.status == "finished" and lv.timeline is None for lv in ordered):
        notes.append(f"goodput not measured where a level has no readable {TIMELINE_FILE} (see timeline_error)")
    if any(lv.loadgen_early_stopping_met is False or lv.loadgen_min_duration_met is False for lv in ordered):
        notes.append(
            "LoadGen's result validity also needs its min duration and early stopping (enough queries for its p99 "
            "bound): short levels can be INVALID on that alone; the knee is judged on the p99s against the SLO, as "
            "LoadGen's FindPeakPerformance judges its runs (PerfConstraintsMet)"
        )
    return SweepResult(
        tool_version=tool_version(),
        created_utc=created,
        updated_utc=_now(),
        simulated=plan.settings.engine.kind == "simulated",
        complete=complete,
        settings=plan.settings,
        levels=ordered,
        knee=find_knee(ordered) if ordered else None,
        find_peak=peak,
        notes=tuple(notes),
    )


def run_sweep(plan: SweepPlan, run_level: RunLevel | None = None, say: Printer = print) -> SweepResult:
    """Run (or resume) the sweep; the results file is written after every level. Ctrl-C: the file keeps every
    level that finished, then KeyboardInterrupt propagates."""
    if run_level is None:
        from loadgen_sut.runner import run as runner_run

        run_level = runner_run
    ResultsFile(plan.out)  # refuse a bad --out before the work directory is made
    with _locked(plan.work_dir):
        return _run_locked(plan, run_level, say)


def _run_locked(plan: SweepPlan, run_level: RunLevel, say: Printer) -> SweepResult:
    results = ResultsFile(plan.out)  # read again under the lock
    settings = plan.settings
    previous = results.previous
    if previous is not None and previous.settings != settings:
        diff = settings_differences(previous.settings, settings)
        raise UnusableInput(
            f"--out {plan.out}: written by a sweep with other settings ({'; '.join(diff[:6])}"
            + (f"; {len(diff) - 6} more" if len(diff) > 6 else "")
            + "); refusing to mix them: rerun with the same settings to resume, or choose another --out"
        )
    created = previous.created_utc if previous else _now()
    done: dict[float, SweepLevel] = {lv.offered_qps: lv for lv in (previous.levels if previous else ()) if lv.status == "finished"}
    peak = previous.find_peak if previous and previous.find_peak and previous.find_peak.status == "finished" else None
    levels: dict[float, SweepLevel] = {lv.offered_qps: lv for lv in (previous.levels if previous else ())}
    label = " [SIMULATED ENGINE]" if settings.engine.kind == "simulated" else ""
    n = len(settings.rates_qps)
    slo = settings.slo
    say(
        f"[sweep]{label} {settings.round} {settings.benchmark} {settings.scenario}: {n} levels "
        f"({', '.join(f'{r:g}' for r in settings.rates_qps)} req/s), >= {settings.duration_s:g} s and >= "
        f"{settings.min_queries} queries each; SLO TTFT {slo.ttft_ms:g} ms, TPOT {slo.tpot_ms:g} ms ({slo.source})"
    )
    if done:
        say(f"[sweep] resuming {plan.out}: {len(done)} of {n} levels finished before")
    t_start = time.monotonic()
    results.write(_result(plan, created, list(levels.values()), peak))
    try:
        for i, rate in enumerate(settings.rates_qps, start=1):
            if rate in done:
                say(f"[sweep] level {i}/{n} {rate:g} req/s: finished before ({done[rate].run_dir}), skipped")
                continue
            say(f"[sweep] level {i}/{n}: {rate:g} req/s ... ({time.monotonic() - t_start:.0f} s elapsed)")
            request = dataclasses.replace(
                plan.base,
                mode=RunMode.PERFORMANCE,
                out=plan.work_dir,
                extra_conf=level_conf_lines(settings, rate),
            )
            t0 = time.monotonic()
            outcome, lines = _run_quiet(run_level, request, plan.verbose, say)
            level = _level_from(outcome, rate, settings, time.monotonic() - t0)
            levels[rate] = level
            results.write(_result(plan, created, list(levels.values()), peak))
            say(f"[sweep] level {i}/{n} {level_line(level)} [{level.wall_s:.0f} s]")
            if level.status != "finished":
                if not plan.verbose:
                    for line in lines:
                        say("    " + line)
                test = outcome.record.tests[0] if outcome.record.tests else None
                if test is not None and test.status in ("engine_unavailable", "setup_error"):
                    say("[sweep] stopping: the engine is not usable (the next levels would fail the same way)")
                    break
        knee = find_knee(list(levels.values()))
        if plan.find_peak and peak is None:
            peak = _find_peak(plan, knee, run_level, say)
            results.write(_result(plan, created, list(levels.values()), peak))
    except KeyboardInterrupt:
        finished = sum(1 for lv in levels.values() if lv.status == "finished")
        say(f"[sweep] interrupted: {finished} of {n} levels finished and are kept in {plan.out}; rerun the same command to resume")
        raise
    final = _result(plan, created, list(levels.values()), peak)
    if final.knee is not None:
        say("[sweep] " + knee_line(final.knee, slo))
        k = final.knee
        if k.max_achieved_qps is not None:
            goodput = (
                f"; peak goodput {k.peak_goodput_qps:.3g} req/s at {k.peak_goodput_at_qps:g} offered"
                if k.peak_goodput_qps is not None and k.peak_goodput_at_qps is not None
                else ""
            )
            say(f"[sweep] throughput: at most {k.max_achieved_qps:.3g} req/s completed (at {k.max_achieved_at_qps:g} offered){goodput}")
    if peak is not None:
        say(f"[sweep] find-peak: {peak.note or peak.error}")
    say(f"[sweep] results: {plan.out}" + ("" if final.complete else " (incomplete: rerun the same command to resume)"))
    return final


def _find_peak(plan: SweepPlan, knee: Knee, run_level: RunLevel, say: Printer) -> FindPeakResult | None:
    """LoadGen's FindPeakPerformance from the knee (its lower bound must meet the SLO): it widens the rate x2 until
    a run misses the limits, then bisects to 0.1 req/s (loadgen.cc FindBoundaries / FindPeakPerformanceBinarySearch)."""
    if knee.rate_qps is None:
        say("[sweep] find-peak: not run: no level met the SLO, and LoadGen's search needs a starting rate that does")
        return None
    start = knee.rate_qps
    say(f"[sweep] find-peak: LoadGen FindPeakPerformance from {start:g} req/s (several runs of >= {plan.settings.duration_s:g} s) ...")
    request = dataclasses.replace(
        plan.base, mode=RunMode.FIND_PEAK, out=plan.work_dir, extra_conf=level_conf_lines(plan.settings, start)
    )
    t0 = time.monotonic()
    outcome, lines = _run_quiet(run_level, request, plan.verbose, say)
    wall = round(time.monotonic() - t0, 3)
    record = outcome.record
    test = record.tests[0] if record.tests else None
    common: dict[str, Any] = {
        "start_qps": start,
        "run_id": record.run_id,
        "run_dir": str(outcome.run_dir),
        "verdict": record.verdict.status,
        "wall_s": wall,
    }
    if test is None or test.status != "finished" or test.loadgen is None:
        why = "did not run" if test is None else (test.error or test.status)
        if not plan.verbose:
            for line in lines:
                say("    " + line)
        return FindPeakResult(status="failed", error=why, note=f"find-peak failed: {why}", **common)
    peak = test.loadgen.peak_target_qps
    agrees, note = compare_peak(knee, peak)
    if peak is None:
        note += " (its first run at the start rate missed the limits: 'Initial lower bound does not satisfy')"
    return FindPeakResult(status="finished", peak_qps=peak, agrees_with_knee=agrees, note=note, **common)


if __name__ == "__main__":
    if sys.argv[1:] == ["--schema"]:
        print(json.dumps(sweep_json_schema(), indent=2, sort_keys=True))
    else:
        print("usage: python -m loadgen_sut.sweep --schema", file=sys.stderr)
        sys.exit(2)
