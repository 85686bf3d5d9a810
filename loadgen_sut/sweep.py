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

The results model is :mod:`loadgen_sut.sweep_model`, the judgement of a level and the knee
:mod:`loadgen_sut.sweep_knee`, the results file and its lock :mod:`loadgen_sut.sweep_file`.

Nothing here is a submission: the levels use trial settings (a short ``min_duration``, equal-issue off) and every
run is NOT_SUBMITTABLE by construction.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from checker.findings import UnusableInput
from checker.parsers.mllog import parse_detail_file
from checker.version import tool_version
from loadgen_sut.record import Percentile
from loadgen_sut.settings import RunMode, parse_user_conf_text
from loadgen_sut.sweep_file import ResultsFile, settings_differences, sweep_lock, utc_now
from loadgen_sut.sweep_knee import compare_peak, detail_latency, find_knee, summarize_timeline, within_slo
from loadgen_sut.sweep_model import (
    FindPeakResult,
    Knee,
    LevelLatency,
    Spacing,
    SweepLevel,
    SweepResult,
    SweepSettings,
    SweepSlo,
    TimelineSummary,
)
from loadgen_sut.timeline import TIMELINE_FILE, read_timeline
from rules.models import Benchmark, Scenario

if TYPE_CHECKING:  # the runner pulls in LoadGen and the scorers (seconds); readers of the model need neither
    from loadgen_sut.run.plan import RunRequest
    from loadgen_sut.runner import RunOutcome


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
# loadgen_sut.runner.run (a test may wrap it to count the runs)
RunLevel = Callable[["RunRequest", Printer], "RunOutcome"]


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
        source = f"round {round_name} {bench.name} {scenario.value} limits" + (
            f" ({limits.cite})" if limits.cite else ""
        )
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
        except (
            UnusableInput
        ) as exc:  # the level still counts (LoadGen's numbers); its goodput is not measured
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
    verdict = {True: "within SLO", False: "MISSES SLO", None: "SLO not judged (p99 not measured)"}[
        lv.within_slo
    ]
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
    validity = f"{lv.loadgen_validity}" + (
        f" ({'; '.join(why)})" if why and lv.loadgen_validity != "VALID" else ""
    )
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
        return (
            f"knee: >= {knee.rate_qps:g} req/s: every level met the SLO ({limits}); sweep higher to bound it"
        )
    extra = (
        f"; within again above it: {', '.join(f'{r:g}' for r in knee.within_above_knee)}"
        if knee.within_above_knee
        else ""
    )
    return (
        f"knee: {knee.rate_qps:g} req/s (p99s within {limits}); {knee.first_failing_qps:g} req/s misses it, so the "
        f"capacity lies in [{knee.rate_qps:g}, {knee.first_failing_qps:g}) req/s{extra}"
    )


def _run_quiet(
    run_level: RunLevel, request: RunRequest, verbose: bool, say: Printer
) -> tuple[RunOutcome, list[str]]:
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


def _result(
    plan: SweepPlan, created: str, levels: Sequence[SweepLevel], peak: FindPeakResult | None
) -> SweepResult:
    ordered = tuple(sorted(levels, key=lambda lv: lv.offered_qps))
    finished = {lv.offered_qps for lv in ordered if lv.status == "finished"}
    complete = all(r in finished for r in plan.settings.rates_qps) and (
        not plan.find_peak or (peak is not None and peak.status == "finished")
    )
    notes: list[str] = []
    if plan.settings.engine.kind == "simulated":
        notes.append("SIMULATED engine: no system was measured")
    if any(lv.status == "finished" and lv.timeline is None for lv in ordered):
        notes.append(
            f"goodput not measured where a level has no readable {TIMELINE_FILE} (see timeline_error)"
        )
    if any(lv.loadgen_early_stopping_met is False or lv.loadgen_min_duration_met is False for lv in ordered):
        notes.append(
            "LoadGen's result validity also needs its min duration and early stopping (enough queries for its p99 "
            "bound): short levels can be INVALID on that alone; the knee is judged on the p99s against the SLO, as "
            "LoadGen's FindPeakPerformance judges its runs (PerfConstraintsMet)"
        )
    return SweepResult(
        tool_version=tool_version(),
        created_utc=created,
        updated_utc=utc_now(),
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
    with sweep_lock(plan.work_dir):
        return _run_locked(plan, run_level, say)


def _resumed(
    plan: SweepPlan, results: ResultsFile
) -> tuple[str, dict[float, SweepLevel], dict[float, SweepLevel], FindPeakResult | None]:
    """What a rerun keeps of the results file: its creation time, its levels, those that finished (skipped) and a
    finished find-peak; a file written with other settings is refused."""
    previous = results.previous
    if previous is None:
        return utc_now(), {}, {}, None
    if previous.settings != plan.settings:
        diff = settings_differences(previous.settings, plan.settings)
        raise UnusableInput(
            f"--out {plan.out}: written by a sweep with other settings ({'; '.join(diff[:6])}"
            + (f"; {len(diff) - 6} more" if len(diff) > 6 else "")
            + "); refusing to mix them: rerun with the same settings to resume, or choose another --out"
        )
    peak = previous.find_peak if previous.find_peak and previous.find_peak.status == "finished" else None
    done = {lv.offered_qps: lv for lv in previous.levels if lv.status == "finished"}
    return previous.created_utc, {lv.offered_qps: lv for lv in previous.levels}, done, peak


def _announce(plan: SweepPlan, finished_before: int, say: Printer) -> None:
    settings, slo = plan.settings, plan.settings.slo
    label = " [SIMULATED ENGINE]" if settings.engine.kind == "simulated" else ""
    n = len(settings.rates_qps)
    say(
        f"[sweep]{label} {settings.round} {settings.benchmark} {settings.scenario}: {n} levels "
        f"({', '.join(f'{r:g}' for r in settings.rates_qps)} req/s), >= {settings.duration_s:g} s and >= "
        f"{settings.min_queries} queries each; SLO TTFT {slo.ttft_ms:g} ms, TPOT {slo.tpot_ms:g} ms ({slo.source})"
    )
    if finished_before:
        say(f"[sweep] resuming {plan.out}: {finished_before} of {n} levels finished before")


def _run_one_level(
    plan: SweepPlan, run_level: RunLevel, rate: float, say: Printer
) -> tuple[SweepLevel, list[str], bool]:
    """One level's LoadGen run, the run's output lines (shown when it failed) and whether the sweep must stop (the
    engine is not usable)."""
    request = dataclasses.replace(
        plan.base,
        mode=RunMode.PERFORMANCE,
        out=plan.work_dir,
        extra_conf=level_conf_lines(plan.settings, rate),
    )
    t0 = time.monotonic()
    outcome, lines = _run_quiet(run_level, request, plan.verbose, say)
    level = _level_from(outcome, rate, plan.settings, time.monotonic() - t0)
    if level.status == "finished":
        return level, lines, False
    test = outcome.record.tests[0] if outcome.record.tests else None
    return level, lines, test is not None and test.status in ("engine_unavailable", "setup_error")


def _say_summary(plan: SweepPlan, final: SweepResult, say: Printer) -> None:
    """The knee, the throughput and goodput, find-peak's answer and where the results are."""
    if final.knee is not None:
        say("[sweep] " + knee_line(final.knee, plan.settings.slo))
        k = final.knee
        if k.max_achieved_qps is not None:
            goodput = (
                f"; peak goodput {k.peak_goodput_qps:.3g} req/s at {k.peak_goodput_at_qps:g} offered"
                if k.peak_goodput_qps is not None and k.peak_goodput_at_qps is not None
                else ""
            )
            say(
                f"[sweep] throughput: at most {k.max_achieved_qps:.3g} req/s completed (at {k.max_achieved_at_qps:g} offered){goodput}"
            )
    if final.find_peak is not None:
        say(f"[sweep] find-peak: {final.find_peak.note or final.find_peak.error}")
    say(
        f"[sweep] results: {plan.out}"
        + ("" if final.complete else " (incomplete: rerun the same command to resume)")
    )


def _run_locked(plan: SweepPlan, run_level: RunLevel, say: Printer) -> SweepResult:
    results = ResultsFile(plan.out)  # read again under the lock
    settings = plan.settings
    created, levels, done, peak = _resumed(plan, results)
    _announce(plan, len(done), say)
    n = len(settings.rates_qps)
    t_start = time.monotonic()
    results.write(_result(plan, created, list(levels.values()), peak))
    try:
        for i, rate in enumerate(settings.rates_qps, start=1):
            if rate in done:
                say(f"[sweep] level {i}/{n} {rate:g} req/s: finished before ({done[rate].run_dir}), skipped")
                continue
            say(f"[sweep] level {i}/{n}: {rate:g} req/s ... ({time.monotonic() - t_start:.0f} s elapsed)")
            level, lines, stop = _run_one_level(plan, run_level, rate, say)
            levels[rate] = level
            results.write(_result(plan, created, list(levels.values()), peak))
            say(f"[sweep] level {i}/{n} {level_line(level)} [{level.wall_s:.0f} s]")
            if level.status != "finished" and not plan.verbose:
                for line in lines:
                    say("    " + line)
            if stop:
                say("[sweep] stopping: the engine is not usable (the next levels would fail the same way)")
                break
        knee = find_knee(list(levels.values()))
        if plan.find_peak and peak is None:
            peak = _find_peak(plan, knee, run_level, say)
            results.write(_result(plan, created, list(levels.values()), peak))
    except KeyboardInterrupt:
        finished = sum(1 for lv in levels.values() if lv.status == "finished")
        say(
            f"[sweep] interrupted: {finished} of {n} levels finished and are kept in {plan.out}; rerun the same command to resume"
        )
        raise
    final = _result(plan, created, list(levels.values()), peak)
    _say_summary(plan, final, say)
    return final


def _find_peak(plan: SweepPlan, knee: Knee, run_level: RunLevel, say: Printer) -> FindPeakResult | None:
    """LoadGen's FindPeakPerformance from the knee (its lower bound must meet the SLO): it widens the rate x2 until
    a run misses the limits, then bisects to 0.1 req/s (loadgen.cc FindBoundaries / FindPeakPerformanceBinarySearch)."""
    if knee.rate_qps is None:
        say(
            "[sweep] find-peak: not run: no level met the SLO, and LoadGen's search needs a starting rate that does"
        )
        return None
    start = knee.rate_qps
    say(
        f"[sweep] find-peak: LoadGen FindPeakPerformance from {start:g} req/s (several runs of >= {plan.settings.duration_s:g} s) ..."
    )
    request = dataclasses.replace(
        plan.base,
        mode=RunMode.FIND_PEAK,
        out=plan.work_dir,
        extra_conf=level_conf_lines(plan.settings, start),
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
