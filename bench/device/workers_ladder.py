"""Where the client saturates with 1, 2, 4, 8 and 14 HTTP client workers: a Server ladder to 5,000 req/s.

Made for a 16-core host (the device machine; ``bench/device/workers_ladder.sh`` is the one call), runnable anywhere
at a tiny scale (``--quick``). ``--servers`` local token servers (``bench/token_server.py``, each an endpoint) answer
with a fixed timing; for each worker count the rates are climbed, one short ``inference-audit run --engine openai
--client-workers N`` Server performance test each, until one saturates:

- LoadGen's result is not VALID, or the run's verdict is CLIENT_BOUND (``RUN-CLIENT-BOUND``: the client's own
  delays or CPU), or a sample failed, or the samples completed per second fell under 95 % of those LoadGen
  scheduled (``result_scheduled_samples_per_sec``: the Poisson schedule as it came, not the target rate).

The rest of that worker count's rates are skipped; the table says the highest rate held and where and why it
saturated. The whole ladder keeps to ``--total-s`` (a level that would not fit is skipped and said so).

    python3 bench/device/workers_ladder.py --quick --out /tmp/ladder     # ~1-2 minutes, 2 workers at most
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
from checker.parsers.mllog import parse_detail_file  # noqa: E402  (run as a script: the repository on the path)

SERVER = REPO / "bench" / "token_server.py"
HELD_SHARE = 0.95


def start_servers(n: int, work: Path, args: argparse.Namespace) -> tuple[list[subprocess.Popen[bytes]], list[str]]:
    procs, urls = [], []
    for i in range(n):
        port_file = work / f"server_{i}.port"
        port_file.unlink(missing_ok=True)
        log = (work / f"server_{i}.log").open("wb")
        procs.append(subprocess.Popen(
            [sys.executable, str(SERVER), "--port", "0", "--port-file", str(port_file), "--ttft-ms", f"{args.ttft_ms:g}",
             "--tpot-ms", f"{args.tpot_ms:g}", "--tokens", str(args.tokens), "--model", "token-server",
             "--owned-by", "vllm"], stdout=log, stderr=subprocess.STDOUT))  # fmt: skip
        deadline = time.monotonic() + 30
        while not (port_file.exists() and port_file.read_text().strip()):
            if procs[-1].poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"workers_ladder: token server {i} did not start (see {work / f'server_{i}.log'})")
            time.sleep(0.05)
        urls.append(f"http://127.0.0.1:{int(port_file.read_text())}")
    return procs, urls


def run_level(workers: int, rate: float, urls: list[str], work: Path, args: argparse.Namespace) -> dict[str, Any]:
    out = work / f"w{workers}" / f"r{rate:g}"
    out.mkdir(parents=True, exist_ok=True)
    conf = out / "user.conf"
    conf.write_text(f"*.Server.target_qps = {rate:g}\n*.Server.min_duration = {int(args.duration_s * 1000)}\n"
                    f"*.Server.min_query_count = {args.min_queries}\n*.Server.sample_concatenate_permutation = 0\n")  # fmt: skip
    cmd = [sys.executable, "-m", "loadgen_sut.cli", "run", "--engine", "openai", "--model", "token-server",
           *[a for u in urls for a in ("--endpoint", u)], "--client-workers", str(workers),
           "--max-concurrency", "4096", "--max-new-tokens", str(args.tokens), "--benchmark", "llama3.1-8b",
           "--round", "v6.0", "--scenario", "Server", "--mode", "performance", "--user-conf", str(conf),
           "--out", str(out), "--progress-interval", "0"]  # fmt: skip
    t0 = time.monotonic()
    with (out / "run.log").open("wb") as log:
        try:
            subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, timeout=args.duration_s * 5 + 90, check=False)
        except subprocess.TimeoutExpired:
            return {"workers": workers, "rate": rate, "held": False, "why": "timed out", "took_s": time.monotonic() - t0}
    row: dict[str, Any] = {"workers": workers, "rate": rate, "took_s": time.monotonic() - t0}
    records = sorted(out.glob("runs/*/run-record.json"))
    if not records:
        row.update(held=False, why=f"no run record (see {out / 'run.log'})")
        return row
    rec = json.loads(records[-1].read_text())
    test = rec["tests"][0] if rec.get("tests") else {}
    lgr = test.get("loadgen") or {}
    sut = test.get("sut") or {}
    diag = test.get("client") or {}
    details = sorted(out.glob("runs/*/performance/mlperf_log_detail.txt"))
    detail = parse_detail_file(details[-1]) if details else None
    completed_s = detail.float_value("result_completed_samples_per_sec") if detail else None
    scheduled_s = detail.float_value("result_scheduled_samples_per_sec") if detail else None
    why = []
    if lgr.get("result_validity") != "VALID":
        why.append(f"LoadGen {lgr.get('result_validity')}")
    bound = [f["message"] for f in rec["verdict"]["findings"] if f["rule"] == "RUN-CLIENT-BOUND"]
    if bound:
        why.append("CLIENT_BOUND: " + bound[0].split("CLIENT-BOUND: ", 1)[-1][:160])
    if sut.get("failed"):
        why.append(f"{sut['failed']} failed")
    if completed_s is not None and completed_s < HELD_SHARE * (scheduled_s or rate):
        why.append(f"completed {completed_s:.0f}/s of {scheduled_s or rate:.0f}/s scheduled")
    row.update(
        held=not why,
        why="; ".join(why),
        validity=lgr.get("result_validity"),
        completed_per_s=completed_s,
        scheduled_per_s=scheduled_s,
        ttft_p99_ms=((lgr.get("ttft_p99_ns") or {}).get("value") or 0) / 1e6 or None,
        client_cpu_cores=diag.get("process_cpu_cores"),
        loadgen_process_cpu_s=diag.get("loadgen_process_cpu_s"),
        reporter=diag.get("reporter_thread_cpu_fraction"),
        busiest_loop=diag.get("loop_thread_cpu_fraction"),
    )
    return row


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--quick", action="store_true", help="a tiny ladder (workers 1,2; 100 and 200 req/s; 2 s each)")
    p.add_argument("--workers", default=None, help="worker counts (default 1,2,4,8,14)")
    p.add_argument("--rates", default=None, help="Server rates in req/s (default 500,1000,2000,3000,4000,5000)")
    p.add_argument("--duration-s", type=float, default=None, help="LoadGen min_duration per level (default 5)")
    p.add_argument("--servers", type=int, default=None, help="local token servers, one endpoint each (default 6)")
    p.add_argument("--min-queries", type=int, default=500,
                   help="LoadGen min_query_count per level (default 500: its early stopping needs 459 at p99)")  # fmt: skip
    p.add_argument("--tokens", type=int, default=16)
    p.add_argument("--ttft-ms", type=float, default=20.0)
    p.add_argument("--tpot-ms", type=float, default=2.0)
    p.add_argument("--total-s", type=float, default=None, help="the whole ladder's time budget (default 450)")
    p.add_argument("--out", type=Path, default=REPO / "out" / "workers_ladder")
    args = p.parse_args(argv)
    q = args.quick
    workers = [int(x) for x in (args.workers or ("1,2" if q else "1,2,4,8,14")).split(",")]
    rates = [float(x) for x in (args.rates or ("100,200" if q else "500,1000,2000,3000,4000,5000")).split(",")]
    args.duration_s = args.duration_s or (2.0 if q else 5.0)
    servers = args.servers or (1 if q else 6)
    total_s = args.total_s or (240.0 if q else 450.0)
    work = args.out.resolve()
    work.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    print(f"workers_ladder: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; {servers} token server(s): "
          f"TTFT {args.ttft_ms:g} ms, {args.tpot_ms:g} ms/token, {args.tokens} tokens; workers {workers}; "
          f"rates {rates}; {args.duration_s:g} s a level; budget {total_s:g} s", flush=True)  # fmt: skip
    procs, urls = start_servers(servers, work, args)
    rows: list[dict[str, Any]] = []
    summary: list[dict[str, Any]] = []
    try:
        for w in workers:
            held, sat = None, None
            for rate in rates:
                left = total_s - (time.monotonic() - started)
                if left < args.duration_s + 25:
                    sat = {"rate": rate, "why": f"not run: {left:.0f} s of the budget left"}
                    break
                row = run_level(w, rate, urls, work, args)
                rows.append(row)
                print(f"  {w:2d} worker(s) {rate:6g} req/s: {'held' if row['held'] else 'SATURATED'}"
                      f"  completed {row.get('completed_per_s') or 0:7.1f}/s  TTFT p99 {row.get('ttft_p99_ms') or 0:7.1f} ms"
                      f"  client CPU {row.get('client_cpu_cores') or 0:5.2f} cores  {row['took_s']:4.0f} s"
                      f"  {row['why']}", flush=True)  # fmt: skip
                if not row["held"]:
                    sat = {"rate": rate, "why": row["why"]}
                    break
                held = rate
            summary.append({"workers": w, "highest_held": held, "saturated": sat})
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=10)
    print("\nworkers  highest rate held  saturates at")
    for s in summary:
        sat = s["saturated"]
        where = "-- (held every rate)" if sat is None else f"{sat['rate']:g} req/s: {sat['why']}"
        print(f"  {s['workers']:5d}  {s['highest_held'] or 0:17g}  {where}")
    doc = {"cpus": os.cpu_count(), "loadavg_end": os.getloadavg(), "servers": servers, "tokens": args.tokens,
           "ttft_ms": args.ttft_ms, "tpot_ms": args.tpot_ms, "duration_s": args.duration_s, "rows": rows,
           "summary": summary, "took_s": time.monotonic() - started}  # fmt: skip
    (work / "workers_ladder.json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(f"took {time.monotonic() - started:.0f} s; all numbers: {work / 'workers_ladder.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
