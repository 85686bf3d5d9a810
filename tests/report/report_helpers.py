"""Helpers for the HTML report tests: a real (simulated-engine) run, edits of its logs, headless Chromium."""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from checker.cli.check import main as check_main
from loadgen_sut.client_diag import LOOP_CPU_SATURATED, client_bound_finding, lag_stats
from loadgen_sut.engines.factory import EngineSpec
from loadgen_sut.record import RECORD_FILE, ClientDiagnostics, Percentile, RunRecord, Verdict
from loadgen_sut.sweep_model import Knee, LevelLatency, SweepLevel, SweepResult, SweepSettings, SweepSlo
from loadgen_sut.timeline import TIMELINE_FILE, SampleTiming, TimelineHeader, write_timeline

CHROMIUM = Path("/usr/bin/chromium")
REPO = Path(__file__).resolve().parents[2]
SUBMISSIONS = REPO / "submissions"  # the sample tree (simulated engine)
PEER = REPO / "tests" / "audit" / "fixtures" / "peers" / "guidellm_benchmarks.json"
# a 2.5-second Server trial at 200 QPS (~500 queries: enough for early stopping when no query is over the limit)
SERVER_TRIAL = "*.Server.target_qps = 200\n*.Server.min_duration = 2500\n"


def html_text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def plots(html: str) -> list[str]:
    """The ``data-plot`` keys of the page's figures, in order."""
    return re.findall(r'<figure class="plot[^"]*" data-plot="([^"]+)"', html)


def edit_detail(path: Path, **values: object) -> None:
    """Set the value of each key (``result_min_duration_met=False``) in a LoadGen detail log, as LoadGen writes a
    record (``:::MLLOG {json}``, one per line); a key the log lacks is appended."""
    lines = path.read_text(encoding="utf-8").splitlines()
    seen = set()
    out = []
    for line in lines:
        rec = json.loads(line[len(":::MLLOG ") :])
        if rec["key"] in values:
            rec["value"] = values[rec["key"]]
            seen.add(rec["key"])
        out.append(":::MLLOG " + json.dumps(rec))
    for key, value in values.items():
        if key not in seen:
            meta = {"is_error": False, "is_warning": False, "file": "test", "line_no": 0, "pid": 1, "tid": 1}
            rec = {"key": key, "value": value, "time_ms": 1.0, "namespace": "mlperf::logging",
                   "event_type": "POINT_IN_TIME", "metadata": meta}
            out.append(":::MLLOG " + json.dumps(rec))
    path.write_text("\n".join(out) + "\n", encoding="utf-8")


def copy_run(run_dir: Path, dest: Path) -> Path:
    shutil.copytree(run_dir, dest)
    return dest


def write_test_timeline(
    test_dir: Path, n: int, *, qps: float, ttft_ms: float, tpot_ms: float, tokens: int, slow_every: int = 0,
    slow_ttft_ms: float = 0.0, seed: int = 1,
) -> list[SampleTiming]:
    """A timeline of ``n`` samples issued at ``qps``: TTFT around ``ttft_ms`` (every ``slow_every``-th sample
    ``slow_ttft_ms`` instead), TPOT ``tpot_ms``, ``tokens`` output tokens each."""
    rng = np.random.default_rng(seed)
    samples = []
    for i in range(n):
        issued = int(i / qps * 1e9)
        ttft = slow_ttft_ms if slow_every and i % slow_every == slow_every - 1 else ttft_ms * float(rng.uniform(0.8, 1.2))
        first = issued + int(ttft * 1e6)
        done = first + int(tpot_ms * 1e6) * (tokens - 1)
        samples.append(SampleTiming(qsl_idx=i % 32, issued_ns=issued, dispatched_ns=issued + 20_000,
                                    first_token_ns=first, completed_ns=done, output_tokens=tokens, ok=True))
    samples.sort(key=lambda s: s.completed_ns or 0)
    write_timeline(test_dir / TIMELINE_FILE, TimelineHeader(t0_ns=0), samples)
    return samples


@dataclass(frozen=True)
class RealRun:
    """The session's real run (tests/report/conftest.py ``invalid_run``)."""

    run_dir: Path
    html: Path  # what 'run --html' wrote
    exit_code: int


@dataclass(frozen=True)
class Rendered:
    png: bytes
    dom: str
    network: str  # how the network was kept away: "no network namespace (unshare -n)" or the flags only


def _unshare_works() -> bool:
    exe = shutil.which("unshare")
    if exe is None:
        return False
    try:
        return subprocess.run([exe, "-n", "true"], capture_output=True, timeout=10, check=False).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def chromium(html: Path, work: Path, *, height: int = 3000) -> Rendered:
    """Open ``html`` in headless Chromium with the network off; its screenshot and its DOM after load."""
    profile = work / "chromium-profile"
    profile.mkdir(parents=True, exist_ok=True)
    base = [
        str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
        "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=http://127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
        f"--window-size=1280,{height}",
    ]
    prefix: list[str] = []
    network = "host resolver mapped to nowhere, proxy to a closed port"
    if _unshare_works():
        prefix = ["unshare", "-n"]
        network = "no network namespace (unshare -n), plus " + network
    env = {**os.environ, "HOME": str(work)}
    shot = work / (html.stem + ".png")
    url = html.resolve().as_uri()
    subprocess.run([*prefix, *base, f"--screenshot={shot}", url], capture_output=True, timeout=120, check=True, env=env)
    dom = subprocess.run([*prefix, *base, "--dump-dom", url], capture_output=True, timeout=120, check=True, env=env)
    return Rendered(shot.read_bytes(), dom.stdout.decode("utf-8"), network)


def png_is_not_blank(png: bytes) -> tuple[int, int, int]:
    """(width, height, distinct colours) of a PNG; raises if it is not one."""
    import io

    from PIL import Image

    assert png[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    im = Image.open(io.BytesIO(png)).convert("RGB")
    small = im.resize((320, max(1, im.height * 320 // im.width)))
    colours = small.getcolors(maxcolors=1 << 16)
    n = len(colours) if colours is not None else 1 << 16
    return im.width, im.height, n


def summary_table(tmp_path: Path, edit_row2: str | None) -> Path:
    """A results table (the checker's summary CSV columns) of the sample tree's two results."""
    report = tmp_path / "check.json"
    check_main([str(SUBMISSIONS), "--json", str(report)])
    rows = [r["summary"] for r in json.loads(report.read_text())["results"] if r["summary"]]
    path = tmp_path / "table.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        for i, r in enumerate(rows):
            w.writerow(dict(r, Result=edit_row2) if i == 1 and edit_row2 else r)
    return path


def _level(rate: float, ttft: float, tpot: float, goodput: float, within: bool) -> SweepLevel:
    lat = LevelLatency(ttft_p99_ms=Percentile(value=ttft, count=600), tpot_p99_ms=Percentile(value=tpot, count=600))
    return SweepLevel(offered_qps=rate, status="finished", run_id=f"r{rate:g}", run_dir=f"/nonexistent/r{rate:g}",
                      verdict="NOT_SUBMITTABLE", wall_s=10.0, loadgen_validity="VALID" if within else "INVALID",
                      scheduled_qps=rate, achieved_qps=min(rate, 30.0), query_count=600, loadgen_latency=lat,
                      goodput_qps=goodput, within_slo=within)  # fmt: skip


def write_sweep(path: Path) -> Path:
    """A sweep results file (the :class:`SweepResult` model): four levels, the knee at 30 req/s, 40 over the SLO."""
    settings = SweepSettings(round="v6.1", benchmark="llama3.1-8b", scenario="Server", spacing="list",
                             rates_qps=(10.0, 20.0, 30.0, 40.0), slo=SweepSlo(ttft_ms=2000, tpot_ms=100, source="round v6.1"),
                             duration_s=30, min_queries=100, engine=EngineSpec(kind="simulated", model="llama3.1-8b"),
                             dataset="builtin")  # fmt: skip
    levels = (_level(10, 300, 20, 10, True), _level(20, 900, 30, 19.8, True), _level(30, 1800, 60, 29, True),
              _level(40, 5200, 140, 12, False))  # fmt: skip
    result = SweepResult(tool_version="t", created_utc="c", updated_utc="u", simulated=True, complete=True,
                         settings=settings, levels=levels,
                         knee=Knee(rate_qps=30.0, first_failing_qps=40.0, bounded=True, highest_within_qps=30.0))
    path.write_text(result.model_dump_json(), encoding="utf-8")
    return path


def read_record(run_dir: Path) -> RunRecord:
    return RunRecord.model_validate_json((run_dir / RECORD_FILE).read_text(encoding="utf-8"))


def write_record(run_dir: Path, record: RunRecord) -> None:
    (run_dir / RECORD_FILE).write_text(record.model_dump_json(indent=2), encoding="utf-8")


def make_client_bound(run_dir: Path) -> tuple[ClientDiagnostics, list[SampleTiming]]:
    """A timeline whose dispatch lag grows from 1 ms to ~250 ms over 3 s (a client falling behind), the record's
    diagnostics from it (client_diag.lag_stats of the same lags), a loop thread over its CPU threshold, no timerfd
    (receive lag not measured), and the verdict the run would give (client_bound_finding)."""
    samples = []
    for i in range(600):
        issued = int(i * 5e6)
        dispatched = issued + int((1.0 + 0.42 * i) * 1e6)
        first = dispatched + 300_000_000
        samples.append(SampleTiming(qsl_idx=i % 32, issued_ns=issued, dispatched_ns=dispatched, first_token_ns=first,
                                    completed_ns=first + 19 * 25_000_000, output_tokens=20, ok=True))
    write_timeline(run_dir / "performance" / TIMELINE_FILE, TimelineHeader(t0_ns=0), samples)
    record = read_record(run_dir)
    perf = next(t for t in record.tests if t.name == "performance")
    assert perf.client is not None
    lags = [s.dispatch_lag_ns for s in samples if s.dispatch_lag_ns is not None]
    diag = perf.client.model_copy(update={"dispatch_lag": lag_stats(lags), "receive_lag": None,
                                          "loop_thread_cpu_fraction": LOOP_CPU_SATURATED + 0.03})
    bound = client_bound_finding("performance", diag, perf.loadgen_settings)
    assert bound is not None
    tests = tuple(t.model_copy(update={"client": diag}) if t.name == "performance" else t for t in record.tests)
    verdict = Verdict.of([*record.verdict.findings, bound])
    write_record(run_dir, record.model_copy(update={"tests": tests, "verdict": verdict}))
    return diag, samples
