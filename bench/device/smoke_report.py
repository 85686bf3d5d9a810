"""Read the GPU smoke run's two harness runs and write ``gpu_smoke.json`` (plus the files worth keeping).

    python3 bench/device/smoke_report.py --offline WORK/offline --server WORK/server --model MODEL_DIR \\
        --steps WORK/steps.tsv --device cuda --out "$OUT"

Each of ``--offline`` / ``--server`` is the ``--out`` directory given to ``inference-audit run``; its one
``runs/<run_id>/run-record.json`` is read with the harness's own model (:class:`RunRecord`) and the test's
``mlperf_log_detail.txt`` with the checker's parser (:mod:`checker.parsers.mllog`), so TTFT/TPOT are
LoadGen's own percentiles (over ``result_query_count`` queries), never re-derived here.

Into ``--out`` (flat, at most 8 files, as the device tool brings back): ``gpu_smoke.json``,
``{offline,server}-run-record.json`` and ``{offline,server}-mlperf_log_summary.txt``. The shell script
adds ``nvidia-smi.txt`` and ``smoke.log``.
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import sys
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from checker.parsers.mllog import DetailLog, parse_detail_file
from checker.version import tool_version
from loadgen_sut.record import RECORD_FILE, RunRecord
from loadgen_sut.settings import TestSettingsModel

REPORT_FILE = "gpu_smoke.json"
REPORT_SCHEMA = "inference-audit/gpu-smoke/1"
BUILD_FILE = "build.json"  # written by build_model.py into the model directory
SCENARIOS = ("offline", "server")
NOTE = (
    "random-weight Llama through `inference-audit run --engine transformers`; performance trials with "
    "shortened min_duration and trial settings: a smoke measurement, never a submission result"
)


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class LatencyPct(_Frozen):
    """LoadGen's p50/p99 in ms over ``count`` queries (None: not logged)."""

    p50_ms: float | None
    p99_ms: float | None
    count: int


class Step(_Frozen):
    name: str
    exit_status: int
    wall_s: float


class RunSummary(_Frozen):
    scenario: str
    run_dir: str
    verdict: str  # the harness's: VALID / INVALID / NOT_SUBMITTABLE / INCOMPLETE
    verdict_reasons: tuple[str, ...] = ()
    test_status: str | None = None
    test_error: str | None = None
    loadgen_validity: str | None = None
    loadgen_invalid_reasons: tuple[str, ...] = ()
    min_duration_met: bool | None = None
    min_queries_met: bool | None = None
    early_stopping_met: bool | None = None
    perf_constraints_met: bool | None = None
    loadgen_errors: int = 0
    query_count: int | None = None
    ttft_ms: LatencyPct  # LoadGen's (Offline: not logged, None)
    tpot_ms: LatencyPct
    latency_ms: LatencyPct
    harness_ttft_p99_ms: float | None = None  # the SUT's own clock, for comparison
    harness_tpot_p99_ms: float | None = None
    tokens_per_s: float | None = None
    samples_per_s: float | None = None
    scheduled_samples_per_s: float | None = None  # Server: the rate LoadGen actually issued
    target_qps: float | None = None
    min_duration_ms: int | None = None
    min_query_count: int | None = None
    sut_completed: int = 0
    sut_failed: int = 0
    output_tokens: int = 0
    mean_output_tokens: float | None = None
    wall_s: float | None = None
    max_new_tokens: int | None = None
    batch_size: str | None = None
    engine_dtype: str | None = None
    detail_log: str | None = None
    summary_log: str | None = None


def _ms(ns: float | None) -> float | None:
    return None if ns is None else round(ns / 1e6, 3)


def _pct(detail: DetailLog, kind: str, count: int) -> LatencyPct:
    return LatencyPct(
        p50_ms=_ms(detail.percentile_ns(kind, 50)), p99_ms=_ms(detail.percentile_ns(kind, 99)), count=count
    )


def _target_qps(settings: TestSettingsModel | None) -> float | None:
    if settings is None:
        return None
    if settings.scenario == "Offline":
        return settings.offline_expected_qps
    return settings.server_target_qps


def find_record(run_out: Path) -> Path:
    """The one ``runs/<id>/run-record.json`` under a run's ``--out`` (the newest if several)."""
    records = sorted(run_out.glob(f"runs/*/{RECORD_FILE}"))
    if not records:
        raise FileNotFoundError(f"no runs/*/{RECORD_FILE} under {run_out}")
    return records[-1]


def summarize_run(scenario: str, run_out: Path) -> tuple[RunSummary, RunRecord]:
    """One run's summary from its record and LoadGen's detail log (raises OSError/ValueError if unreadable)."""
    record_path = find_record(run_out)
    record = RunRecord.model_validate_json(record_path.read_text(encoding="utf-8"))
    run_dir = record_path.parent
    test = next(
        (t for t in record.tests if t.name == "performance"), record.tests[0] if record.tests else None
    )
    common: dict[str, Any] = {
        "scenario": scenario,
        "run_dir": str(run_dir),
        "verdict": record.verdict.status,
        "verdict_reasons": record.verdict.reasons,
        "max_new_tokens": record.generation.get("max_new_tokens"),
        "batch_size": record.engine.parameters.get("batch_size") if record.engine else None,
        "engine_dtype": record.engine.precision if record.engine else None,
    }
    empty = LatencyPct(p50_ms=None, p99_ms=None, count=0)
    if test is None:
        return RunSummary(**common, ttft_ms=empty, tpot_ms=empty, latency_ms=empty), record
    detail_path = run_dir / test.directory / "mlperf_log_detail.txt"
    summary_path = run_dir / test.directory / "mlperf_log_summary.txt"
    common.update(
        test_status=test.status,
        test_error=test.error,
        sut_completed=test.sut.completed,
        sut_failed=test.sut.failed,
        output_tokens=test.sut.output_tokens,
        mean_output_tokens=test.output_tokens.mean if test.output_tokens else None,
        wall_s=test.wall_s,
        target_qps=_target_qps(test.loadgen_settings),
        harness_ttft_p99_ms=test.client_ttft_p99_ms.value if test.client_ttft_p99_ms else None,
        harness_tpot_p99_ms=test.client_tpot_p99_ms.value if test.client_tpot_p99_ms else None,
        min_duration_ms=test.loadgen_settings.min_duration_ms if test.loadgen_settings else None,
        min_query_count=test.loadgen_settings.min_query_count if test.loadgen_settings else None,
        summary_log=str(summary_path) if summary_path.is_file() else None,
    )
    if not detail_path.is_file():
        return RunSummary(**common, ttft_ms=empty, tpot_ms=empty, latency_ms=empty), record
    detail = parse_detail_file(detail_path)
    queries = detail.int_value("result_query_count") or detail.int_value("generated_query_count") or 0
    # LoadGen's percentiles are over all the run's samples: one per query in Server, and all in
    # Offline's one query (generated_samples_per_query of them)
    per_query = detail.int_value("generated_samples_per_query") if scenario == "offline" else 1
    count = queries * (per_query or 0)
    tokens_per_s = detail.float_value("result_completed_tokens_per_second")
    if tokens_per_s is None:
        tokens_per_s = detail.float_value("result_tokens_per_second")  # Offline
    samples_per_s = detail.float_value("result_completed_samples_per_sec")
    if samples_per_s is None:
        samples_per_s = detail.float_value("result_samples_per_second")  # Offline
    return (
        RunSummary(
            **common,
            loadgen_validity=detail.result_validity,
            loadgen_invalid_reasons=tuple(str(v) for v in detail.values("result_invalid_reason") if str(v)),
            min_duration_met=detail.bool_value("result_min_duration_met"),
            min_queries_met=detail.bool_value("result_min_queries_met"),
            early_stopping_met=detail.early_stopping_met,
            perf_constraints_met=detail.bool_value("result_perf_constraints_met"),
            loadgen_errors=detail.num_errors(),
            query_count=queries,
            ttft_ms=_pct(detail, "first_token", count),
            tpot_ms=_pct(detail, "time_per_output_token", count),
            latency_ms=_pct(detail, "latency", count),
            tokens_per_s=tokens_per_s,
            samples_per_s=samples_per_s,
            scheduled_samples_per_s=detail.float_value("result_scheduled_samples_per_sec"),
            detail_log=str(detail_path),
        ),
        record,
    )


def measurement_gaps(summary: RunSummary) -> list[str]:
    """What a run should have measured and did not: Offline its token rate, Server its TTFT/TPOT."""
    if summary.scenario == "offline":
        return [] if summary.tokens_per_s is not None else ["offline: LoadGen logged no tokens per second"]
    if summary.ttft_ms.p99_ms is None or summary.tpot_ms.p99_ms is None:
        return [f"{summary.scenario}: LoadGen logged no TTFT/TPOT percentiles"]
    return []


# a harness run exits 1 for a finished run that LoadGen or the rules judge INVALID: that is a result
# (in "runs"), not a failure of the step
_RUN_STEPS = ("offline-calibration", "offline", "server")


def step_problem(step: Step) -> str:
    """'' when the step did its job; else what went wrong."""
    if step.exit_status == 0 or (step.name in _RUN_STEPS and step.exit_status == 1):
        return ""
    if step.exit_status in (124, 137):
        return f"step {step.name} timed out or was skipped at the deadline (exit {step.exit_status})"
    return f"step {step.name} exited {step.exit_status}"


def read_steps(path: Path | None) -> list[Step]:
    """``name<TAB>exit_status<TAB>wall_s`` lines written by gpu_smoke.sh."""
    if path is None or not path.is_file():
        return []
    steps = []
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.split("\t")
        if len(parts) == 3:
            steps.append(Step(name=parts[0], exit_status=int(parts[1]), wall_s=float(parts[2])))
    return steps


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def build_report(
    runs: dict[str, Path],
    model_dir: Path | None,
    steps: list[Step],
    device: str,
    calibration: Path | None = None,
) -> tuple[dict[str, Any], dict[str, Path]]:
    """The report, and the files to keep (name in OUT -> source). The calibration run is summarised
    but its files are not kept (the device tool brings back at most 8 files)."""
    problems: list[str] = []
    summaries: dict[str, RunSummary | None] = {}
    keep: dict[str, Path] = {}
    records: list[RunRecord] = []
    for scenario, run_out in runs.items():
        try:
            summary, record = summarize_run(scenario, run_out)
        except (OSError, ValueError, ValidationError) as exc:
            problems.append(f"{scenario}: no usable run record: {exc}")
            summaries[scenario] = None
            continue
        summaries[scenario] = summary
        records.append(record)
        keep[f"{scenario}-{RECORD_FILE}"] = Path(summary.run_dir) / RECORD_FILE
        if summary.summary_log:
            keep[f"{scenario}-mlperf_log_summary.txt"] = Path(summary.summary_log)
        problems += measurement_gaps(summary)
    model: dict[str, Any] | None = None
    if model_dir is not None:
        build = model_dir / BUILD_FILE
        try:
            model = {"dir": str(model_dir), **json.loads(build.read_text(encoding="utf-8"))}
        except (OSError, ValueError) as exc:
            problems.append(f"model: cannot read {build}: {exc}")
    calibrated: RunSummary | None = None
    if calibration is not None:
        try:
            calibrated, _ = summarize_run("offline", calibration)
        except (OSError, ValueError, ValidationError) as exc:
            problems.append(f"offline calibration: no usable run record: {exc}")
    problems += [step_problem(s) for s in steps if step_problem(s)]
    engine = next((r.engine for r in records if r.engine is not None), None)
    hardware = records[0].hardware if records else None
    server, offline = summaries.get("server"), summaries.get("offline")
    report: dict[str, Any] = {
        "schema": REPORT_SCHEMA,
        "created_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "note": NOTE,
        "device": device,
        "gpu": list(hardware.accelerators) if hardware else [],
        "host": hardware.model_dump() if hardware else None,
        "versions": {
            "python": platform.python_version(),
            "torch": engine.parameters.get("torch") if engine else _version("torch"),
            "transformers": engine.version if engine else _version("transformers"),
            "mlcommons-loadgen": _version("mlcommons-loadgen") or _version("mlcommons_loadgen"),
            "inference-audit": tool_version(),
        },
        "model": model,
        "engine_dtype": engine.precision if engine else None,
        "headline": {
            "server_ttft_ms": server.ttft_ms.model_dump() if server else None,
            "server_tpot_ms": server.tpot_ms.model_dump() if server else None,
            "offline_tokens_per_s": offline.tokens_per_s if offline else None,
            "server_tokens_per_s": server.tokens_per_s if server else None,
            "validity": {k: (v.loadgen_validity if v else None) for k, v in summaries.items()},
            "verdict": {k: (v.verdict if v else None) for k, v in summaries.items()},
        },
        "runs": {k: (v.model_dump() if v else None) for k, v in summaries.items()},
        "offline_calibration": calibrated.model_dump() if calibrated else None,
        "steps": [s.model_dump() for s in steps],
        "problems": problems,
    }
    return report, keep


def write_outputs(report: dict[str, Any], keep: dict[str, Path], out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, src in keep.items():
        dst = out / name
        shutil.copyfile(src, dst)
        written.append(dst)
    path = out / REPORT_FILE
    path.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    written.append(path)
    return written


def headline_text(report: dict[str, Any]) -> str:
    lines = [f"gpu smoke on {report['device']} ({', '.join(report['gpu']) or 'no GPU seen by nvidia-smi'}):"]
    m = report.get("model")
    if m:
        lines.append(
            f"  model {m.get('size')}: {m.get('parameters', 0) / 1e6:.1f} M parameters, {report.get('engine_dtype')}"
        )
    for scn in SCENARIOS:
        r = report["runs"].get(scn)
        if r is None:
            lines.append(f"  {scn}: no result")
            continue
        t, p = r["ttft_ms"], r["tpot_ms"]
        lat = (
            f"TTFT p50/p99 {t['p50_ms']}/{t['p99_ms']} ms, TPOT p50/p99 {p['p50_ms']}/{p['p99_ms']} ms (n={t['count']})"
            if scn != "offline"
            else f"latency p50/p99 {r['latency_ms']['p50_ms']}/{r['latency_ms']['p99_ms']} ms (n={t['count']})"
        )
        lines.append(
            f"  {scn}: {r['verdict']} (LoadGen {r['loadgen_validity']}); {lat}; {r['tokens_per_s']} tokens/s, "
            f"{r['samples_per_s']} samples/s at target {r['target_qps']} QPS"
        )
        lines += [f"    - {why}" for why in r["verdict_reasons"]]
    cal = report.get("offline_calibration")
    if cal:
        lines.append(
            f"  offline calibration: {cal['samples_per_s']} samples/s over {cal['sut_completed']} samples"
        )
    lines += [f"  problem: {p}" for p in report["problems"]]
    return "\n".join(lines)


def suggest_qps(offline_out: Path, fraction: float) -> float | None:
    """``fraction`` x an Offline run's samples/s (None: no Offline result): the Offline run's expected QPS
    from a calibration run (fraction > 1, so that it lasts its min_duration), or a Server rate that the
    engine can hold (fraction < 1)."""
    try:
        summary, _ = summarize_run("offline", offline_out)
    except (OSError, ValueError, ValidationError):
        return None
    if summary.samples_per_s is None or summary.samples_per_s <= 0:
        return None
    return round(summary.samples_per_s * fraction, 2)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--offline", type=Path, help="the Offline run's --out directory")
    ap.add_argument("--server", type=Path, help="the Server run's --out directory")
    ap.add_argument("--model", type=Path, default=None, help="the model directory (its build.json)")
    ap.add_argument("--steps", type=Path, default=None, help="steps.tsv written by gpu_smoke.sh")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--out", type=Path, default=None, help="where gpu_smoke.json and the kept files go")
    ap.add_argument(
        "--suggest-qps",
        type=float,
        default=None,
        metavar="FRACTION",
        help="only print FRACTION x the --offline run's samples/s (nothing if it has none) and exit",
    )
    ap.add_argument(
        "--calibration", type=Path, default=None, help="the Offline calibration run's --out directory"
    )
    args = ap.parse_args(argv)
    if args.suggest_qps is not None:
        if args.offline is None:
            ap.error("--suggest-qps needs --offline")
        qps = suggest_qps(args.offline, args.suggest_qps)
        if qps is not None:
            print(f"{qps:g}")
        return 0 if qps is not None else 1
    if args.out is None:
        ap.error("--out is required")
    runs = {k: v for k, v in (("offline", args.offline), ("server", args.server)) if v is not None}
    report, keep = build_report(runs, args.model, read_steps(args.steps), args.device, args.calibration)
    write_outputs(report, keep, args.out)
    print(headline_text(report))
    print(f"wrote {args.out / REPORT_FILE}")
    measured = all(
        v is not None and not measurement_gaps(RunSummary.model_validate(v)) for v in report["runs"].values()
    )
    return 0 if measured else 1


if __name__ == "__main__":
    sys.exit(main())
