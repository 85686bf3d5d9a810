"""Measurement fidelity and throughput of the LoadGen SUT, against a server that records the truth.

A token server (``bench/token_server.py``: TTFT 200 ms, 20 ms per token, 64 tokens by default) records when it
received each request and when it sent each token. At each Server rate (default 10, 25, 44, 100, 200, 340 req/s)
this script

1. runs ``inference-audit run --engine openai --scenario Server --mode performance`` against it, with a user.conf
   that sets the rate and a short ``min_duration`` (and turns equal-issue off so the query count follows the
   duration), in its own subprocess;
2. reads what the SUT reported (LoadGen's detail log: ``result_first_token_{50,99}``,
   ``result_time_per_output_token_{50,99}``, ``result_validity``, completed samples per second);
3. reads what the server observed for the same requests, and the SUT process tree's CPU time;
4. drives the same server at the same rate, with the same number of requests, with each installed peer
   (AIPerf, GuideLLM from PyPI, see ``bench/peers/setup_peers.sh``), and reads the same numbers;
5. measures LoadGen's own floor at that rate (``bench/loadgen_floor.py``: a Python SUT that reports the first
   token inside the issue callback), the part of any LoadGen SUT's TTFT that is LoadGen's issue lateness
   (``--no-floor`` skips it).

Timestamps, explicitly:

* server view (the reference): TTFT = server send time of the first token - server receive time of the request;
  TPOT = (last send - first send) / (tokens - 1). Both in wall-clock ns, taken by the server process.
* client view (what a client reports): the SUT's TTFT is LoadGen's, measured from the query's *scheduled* issue
  time to ``FirstTokenComplete``; a peer's from its own request start to its first chunk.
* error = client-reported percentile - server-observed percentile over the same run; it holds the client's
  dispatch delay (scheduled time -> request on the socket) plus its receive delay (token on the socket ->
  recorded). The server's own lateness (observed TTFT - configured TTFT) is printed as its noise floor.
* CPU per query: user+system CPU of the client's process tree (threads and worker processes) sampled from /proc,
  interpolated over the window in which the server saw that client's requests (first receive to last send),
  divided by the requests in it. The whole-process CPU (start-up and log writing included) is in the JSON.

Output: a table on stdout, and ``OUT/fidelity.json`` with every number (``--out``, default ``out/fidelity``).

    python3 bench/sut_fidelity.py --quick          # ~1-2 minutes: one level, one peer run
    python3 bench/sut_fidelity.py                  # the full ladder (~10-15 minutes on 2 cores)
    python3 bench/sut_fidelity.py --levels 44,340 --peers aiperf
    python3 bench/sut_fidelity.py --levels 25,50 --repeat 3   # rounds interleave SUT and peers; medians judged

On a small shared machine one run's p99 moves by several ms with whatever else runs (the server's own
lateness shows it); ``--repeat N`` runs each level N times, SUT and peers taking turns, and judges the
targets on the median of the per-round errors (every round is in the table and the JSON).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import resource
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fidelity_peers import (
    DEFAULT_PEERS_VENV,
    PEERS,
    PeerReport,
    available_peers,
    failed_report,
    make_run,
    read_report,
)
from fidelity_stats import NOT_MEASURED, Pct, ServerView, error_ms, server_view
from proc_cpu import TreeCpuSampler

from checker.parsers.mllog import DetailLog, parse_detail_file

REPO = Path(__file__).resolve().parents[1]
SERVER_SCRIPT = REPO / "bench" / "token_server.py"
FLOOR_SCRIPT = REPO / "bench" / "loadgen_floor.py"
FULL_LEVELS = (10.0, 25.0, 44.0, 100.0, 200.0, 340.0)
QUICK_LEVELS = (50.0,)
# LoadGen needs >= 459 queries for early stopping to pass at p99 with no over-latency query
EARLY_STOPPING_MIN_QUERIES = 459


# ------------------------------------------------------------------------------------------- token server
def default_server_python(peers_venv: Path) -> Path:
    """The peers venv's interpreter when uvloop is importable there (the server is stdlib + optional uvloop)."""
    venv_python = peers_venv / "bin" / "python"
    if venv_python.exists() and any((peers_venv / "lib").glob("python3*/site-packages/uvloop/__init__.py")):
        return venv_python
    return Path(sys.executable)


class TokenServer:
    """The recording server, as a subprocess."""

    def __init__(self, args: argparse.Namespace, work: Path) -> None:
        port_file = work / "token_server.port"
        port_file.unlink(missing_ok=True)
        self.log_path = work / "token_server.log"
        self._log = self.log_path.open("wb")
        cmd = [
            str(args.server_python), str(SERVER_SCRIPT), "--port", "0", "--port-file", str(port_file),
            "--ttft-ms", f"{args.ttft_ms:g}", "--tpot-ms", f"{args.tpot_ms:g}", "--tokens", str(args.tokens),
            "--model", args.model, "--owned-by", args.owned_by,
        ]  # fmt: skip
        self.proc = subprocess.Popen(
            cmd, stdout=self._log, stderr=subprocess.STDOUT, preexec_fn=_niceness(args.nice)
        )
        deadline = time.monotonic() + 30
        while not (port_file.exists() and port_file.read_text().strip()):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise SystemExit(f"sut_fidelity: the token server did not start; see {self.log_path}")
            time.sleep(0.05)
        self.url = f"http://127.0.0.1:{int(port_file.read_text())}"

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(self.url + path, timeout=120) as resp:
            return json.loads(resp.read())

    def cpu_s(self) -> float:
        return float(self.get("/_bench/stats")["cpu_s"])

    def take_records(self) -> list[dict[str, Any]]:
        records = self.get("/_bench/records?reset=1")["records"]
        assert isinstance(records, list)
        return records

    def wait_idle(self, timeout_s: float = 60.0) -> None:
        deadline = time.monotonic() + timeout_s
        while self.get("/_bench/stats")["active_streams"] and time.monotonic() < deadline:
            time.sleep(0.2)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()


# ------------------------------------------------------------------------------------------- one client run
@dataclass
class ClientRun:
    """One client (the SUT or a peer) at one rate: its process's CPU and the server's records of its requests."""

    returncode: int | None
    wall_s: float
    cpu_total_s: float
    cpu_window_s: float | None
    server: ServerView
    server_cpu_s: float
    log: Path

    def cpu_per_query_ms(self) -> float | None:
        if self.cpu_window_s is None or not self.server.requests:
            return None
        return self.cpu_window_s / self.server.requests * 1e3

    def to_json(self) -> dict[str, Any]:
        return {
            "returncode": self.returncode,
            "wall_s": self.wall_s,
            "cpu_total_s": self.cpu_total_s,
            "cpu_window_s": self.cpu_window_s,
            "cpu_per_query_ms": self.cpu_per_query_ms(),
            "cpu_total_per_query_ms": self.cpu_total_s / self.server.requests * 1e3
            if self.server.requests
            else None,
            "server": self.server.to_json(),
            "server_cpu_s": self.server_cpu_s,
            "server_cpu_per_query_ms": self.server_cpu_s / self.server.requests * 1e3
            if self.server.requests
            else None,
            "log": str(self.log),
        }


def _niceness(nice: int) -> Callable[[], None] | None:
    """A preexec_fn setting the child's nice value (negative needs root): keeps other jobs on a shared machine
    from preempting the server and the clients under test, the same for every client."""
    if nice == 0:
        return None

    def apply() -> None:
        os.setpriority(os.PRIO_PROCESS, 0, nice)

    return apply


AUTOGROUP = Path("/proc/self/autogroup")


def set_session_priority(nice: int) -> str | None:
    """With Linux's autogroup scheduling, nice values only rank processes within one session; other sessions
    (other people's jobs on a shared machine) share the CPU per session. Give this session's group the same nice
    value, so the server and clients under test are not preempted by them. Returns what was done, or None."""
    if nice == 0 or not AUTOGROUP.exists():
        return None
    try:
        AUTOGROUP.write_text(f"{nice}\n")
    except OSError as exc:
        return f"could not set the session's autogroup nice to {nice}: {exc}"
    return f"session autogroup nice {nice}"


def set_session_priority_back() -> None:
    with contextlib.suppress(OSError):
        AUTOGROUP.write_text("0\n")


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_client(
    cmd: list[str], cwd: Path, log: Path, server: TokenServer, nominal_ttft_ms: float, timeout_s: float,
    nice: int, env: dict[str, str] | None = None,
) -> ClientRun:  # fmt: skip
    """Run one client process to completion while sampling its CPU; collect the server's records of it."""
    server.wait_idle()
    server.take_records()  # drop anything left from before
    server_cpu0 = server.cpu_s()
    children0 = _children_cpu_s()
    start = time.monotonic()
    with log.open("wb") as out:
        proc = subprocess.Popen(
            cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, env=env, preexec_fn=_niceness(nice)
        )
        sampler = TreeCpuSampler(proc.pid).start()
        try:
            returncode: int | None = proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            returncode = None
        finally:
            sampler.stop()
    wall_s = time.monotonic() - start
    cpu_total_s = _children_cpu_s() - children0
    server.wait_idle()
    records = server.take_records()
    server_cpu_s = server.cpu_s() - server_cpu0
    view = server_view(records, nominal_ttft_ms)
    window = sampler.cpu_s_between(*view.window_ns) if view.window_ns else None
    return ClientRun(returncode, wall_s, cpu_total_s, window, view, server_cpu_s, log)


# ------------------------------------------------------------------------------------------- the SUT
@dataclass(frozen=True)
class SutReport:
    """What LoadGen reported for one SUT run (from its detail log)."""

    validity: str | None
    invalid_reasons: tuple[str, ...]
    ttft: Pct
    tpot: Pct
    completed_per_s: float | None
    scheduled_per_s: float | None
    num_errors: int | None
    detail_log: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "validity": self.validity,
            "invalid_reasons": list(self.invalid_reasons),
            "ttft": self.ttft.to_json(),
            "tpot": self.tpot.to_json(),
            "completed_per_s": self.completed_per_s,
            "scheduled_per_s": self.scheduled_per_s,
            "num_errors": self.num_errors,
            "detail_log": self.detail_log,
        }


def _ms(ns: float | None) -> float | None:
    return None if ns is None else ns / 1e6


def read_sut_report(out_dir: Path) -> SutReport:
    logs = sorted(out_dir.rglob("mlperf_log_detail.txt"))
    if not logs:
        return SutReport(None, ("no mlperf_log_detail.txt under the run's output",), NOT_MEASURED, NOT_MEASURED,
                         None, None, None, None)  # fmt: skip
    detail: DetailLog = parse_detail_file(logs[0])
    # LoadGen's percentiles are over all the samples of the run; its sample count is result_query_count
    # (or the generated count when that key is absent)
    count = detail.int_value("result_query_count") or detail.int_value("generated_query_count") or 0
    reasons = tuple(str(v) for v in detail.values("result_invalid_reason"))
    return SutReport(
        validity=detail.result_validity,
        invalid_reasons=reasons,
        ttft=Pct(
            _ms(detail.percentile_ns("first_token", 50)), _ms(detail.percentile_ns("first_token", 99)), count
        ),
        tpot=Pct(
            _ms(detail.percentile_ns("time_per_output_token", 50)),
            _ms(detail.percentile_ns("time_per_output_token", 99)),
            count,
        ),
        completed_per_s=detail.float_value("result_completed_samples_per_sec"),
        scheduled_per_s=detail.float_value("result_scheduled_samples_per_sec"),
        num_errors=detail.num_errors(),
        detail_log=str(logs[0]),
    )


def level_duration_s(args: argparse.Namespace, qps: float) -> float:
    """Long enough for the percentile (min queries) and LoadGen's early stopping, capped by --max-duration-s."""
    want = max(args.min_duration_s, args.min_queries / qps)
    return min(max(want, args.min_duration_s), max(args.max_duration_s, args.min_duration_s))


def write_user_conf(path: Path, qps: float, duration_s: float) -> None:
    path.write_text(
        "# written by bench/sut_fidelity.py: a short performance run at a fixed Server rate (not a submission)\n"
        f"*.Server.target_qps = {qps:g}\n"
        f"*.Server.min_duration = {int(duration_s * 1000)}\n"
        "*.Server.min_query_count = 100\n"
        "*.Server.sample_concatenate_permutation = 0\n",
        encoding="utf-8",
    )


def sut_command(args: argparse.Namespace, url: str, conf: Path, out_dir: Path) -> list[str]:
    return [
        sys.executable, "-m", "loadgen_sut.cli", "run",
        "--engine", "openai", "--endpoint", url, "--model", args.model,
        "--benchmark", args.benchmark, "--scenario", "Server", "--round", args.round,
        "--mode", "performance", "--user-conf", str(conf), "--out", str(out_dir),
        *args.sut_arg,
    ]  # fmt: skip


def run_floor(
    args: argparse.Namespace, qps: float, duration_s: float, level_dir: Path, env: dict[str, str], timeout_s: float
) -> dict[str, Any]:
    """LoadGen's TTFT with a do-nothing Python SUT at this rate: the issue lateness no SUT can remove."""
    print(f"  level {qps:g} req/s: LoadGen floor (null SUT) ...", file=sys.stderr, flush=True)
    cmd = [sys.executable, str(FLOOR_SCRIPT), "--qps", f"{qps:g}", "--duration-s", f"{duration_s:g}",
           "--out", str(level_dir / "loadgen_floor")]  # fmt: skip
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout_s,
                              preexec_fn=_niceness(args.nice), check=False)  # fmt: skip
    except subprocess.TimeoutExpired:
        return {"problem": f"timed out after {timeout_s:g} s"}
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        return {"problem": f"exit status {proc.returncode}: {proc.stderr.strip()[-300:]}"}
    floor: dict[str, Any] = json.loads(lines[-1])
    return floor


# ------------------------------------------------------------------------------------------- the ladder
def run_level(
    args: argparse.Namespace, server: TokenServer, qps: float, peers: list[str], work: Path, round_no: int = 1
) -> dict[str, Any]:
    level_dir = work / f"qps_{qps:g}" / (f"round_{round_no}" if args.repeat > 1 else "")
    level_dir.mkdir(parents=True, exist_ok=True)
    duration_s = level_duration_s(args, qps)
    conf = level_dir / "user.conf"
    write_user_conf(conf, qps, duration_s)
    sut_out = level_dir / "sut"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    timeout_s = duration_s * 3 + 180
    what = f"  level {qps:g} req/s" + (f" round {round_no}/{args.repeat}" if args.repeat > 1 else "")
    print(f"{what}: SUT run, min_duration {duration_s:g} s ...", file=sys.stderr, flush=True)
    sut_run = run_client(sut_command(args, server.url, conf, sut_out), level_dir, level_dir / "sut.log", server,
                         args.ttft_ms, timeout_s, args.nice, env)  # fmt: skip
    sut = read_sut_report(sut_out)
    result: dict[str, Any] = {
        "target_qps": qps,
        "round": round_no,
        "min_duration_s": duration_s,
        "loadavg_1min_start": os.getloadavg()[0],
        "sut": {"run": sut_run.to_json(), "reported": sut.to_json()},
        "peers": {},
    }
    if args.floor:
        result["loadgen_floor"] = run_floor(args, qps, duration_s, level_dir, env, timeout_s)
    n_requests = sut_run.server.requests or max(int(qps * duration_s), 1)
    for name in peers:
        peer_dir = level_dir / name
        run = make_run(name, args.peers_venv, args.peer_tokenizer, server.url, args.model, qps, n_requests,
                       args.tokens, args.prompt_tokens, peer_dir)  # fmt: skip
        print(f"{what}: {name}, {n_requests} requests ...", file=sys.stderr, flush=True)
        peer_run = run_client(
            run.argv, peer_dir, level_dir / f"{name}.log", server, args.ttft_ms, timeout_s, args.nice
        )
        report: PeerReport = read_report(name, peer_dir)
        if peer_run.returncode != 0 and report.problem is None:
            report = failed_report(name, f"exit status {peer_run.returncode}; see {peer_run.log}")
        result["peers"][name] = {"run": peer_run.to_json(), "reported": report.to_json()}
    return result


# ------------------------------------------------------------------------------------------- the table
def _f(v: float | None, fmt: str = "{:.1f}") -> str:
    return "-" if v is None else fmt.format(v)


def _err(v: float | None) -> str:
    return "-" if v is None else f"{v:+.1f}"


def _verdict(name: str, qps: float, run: dict[str, Any], rep: dict[str, Any]) -> str:
    """LoadGen's verdict for the SUT; for a peer, whether it held the rate (the server saw >= 90 % of it)."""
    if name == "SUT":
        return rep["validity"] or f"no result (exit {run['returncode']})"
    if rep.get("problem"):
        return "failed"
    rate = run["server"]["rate_per_s"]
    return "held" if rate is not None and rate >= 0.9 * qps else "behind"


def table_rows(level: dict[str, Any], with_round: bool = False) -> list[list[str]]:
    rows: list[list[str]] = []
    clients: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
        ("SUT", level["sut"]["run"], level["sut"]["reported"])
    ]
    clients += [(name, p["run"], p["reported"]) for name, p in level["peers"].items()]
    for name, run, rep in clients:
        srv = run["server"]
        ttft, tpot = rep["ttft"], rep["tpot"]
        verdict = _verdict(name, level["target_qps"], run, rep)
        rows.append([
            f"{level['target_qps']:g}" + (f" r{level.get('round', 1)}" if with_round else ""), name,
            f"{_f(ttft['p50_ms'])} / {_f(srv['ttft']['p50_ms'])}",
            f"{_f(ttft['p99_ms'])} / {_f(srv['ttft']['p99_ms'])}",
            _err(error_ms(ttft["p99_ms"], srv["ttft"]["p99_ms"])),
            f"{ttft['count']}/{srv['ttft']['count']}",
            f"{_f(tpot['p50_ms'], '{:.2f}')} / {_f(srv['tpot']['p50_ms'], '{:.2f}')}",
            f"{_f(tpot['p99_ms'], '{:.2f}')} / {_f(srv['tpot']['p99_ms'], '{:.2f}')}",
            _err(error_ms(tpot["p99_ms"], srv["tpot"]["p99_ms"])),
            _f(srv["rate_per_s"]),
            verdict,
            _f(run["cpu_per_query_ms"], "{:.2f}"),
            _f(srv["ttft_late"]["p99_ms"]),
            _f(run["server_cpu_per_query_ms"], "{:.2f}"),
        ])  # fmt: skip
    floor = level.get("loadgen_floor")
    if floor is not None:
        blank = "-"
        rows.append([
            rows[0][0], "LG floor", f"{_f(floor.get('ttft_p50_ms'), '{:.2f}')} / -",
            f"{_f(floor.get('ttft_p99_ms'), '{:.2f}')} / -", blank, f"{floor.get('count', '-')}/-", blank, blank,
            blank, blank, "failed" if floor.get("problem") else blank, blank, blank, blank,
        ])  # fmt: skip
    return rows


HEADER = [
    "req/s", "client", "TTFT p50 rep/srv", "TTFT p99 rep/srv", "p99 err", "n rep/srv", "TPOT p50 rep/srv",
    "TPOT p99 rep/srv", "p99 err", "rate srv", "verdict", "CPU ms/q", "srv late p99", "srv CPU ms/q",
]  # fmt: skip


def print_table(levels: list[dict[str, Any]]) -> None:
    with_round = any(level.get("round", 1) > 1 for level in levels)
    rows = [HEADER] + [r for level in levels for r in table_rows(level, with_round)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADER))]
    for i, row in enumerate(rows):
        print("  ".join(cell.rjust(w) for cell, w in zip(row, widths, strict=True)))
        if i == 0:
            print("  ".join("-" * w for w in widths))
    print(
        "times in ms; rep = what the client reported, srv = what the token server observed for the same requests; "
        "err = rep - srv; CPU ms/q = client process-tree CPU over the load window per request; verdict: LoadGen's "
        "for the SUT, for a peer 'held' when the server saw >= 90 % of the rate; LG floor = LoadGen's TTFT with a "
        "do-nothing Python SUT at that rate (its issue lateness, part of every LoadGen SUT's TTFT)"
    )


def _median(values: list[float | None]) -> float | None:
    finite = sorted(v for v in values if v is not None)
    if not finite:
        return None
    mid = len(finite) // 2
    return finite[mid] if len(finite) % 2 else (finite[mid - 1] + finite[mid]) / 2


def _spread(values: list[float | None]) -> list[float | None]:
    finite = [v for v in values if v is not None]
    return [min(finite), max(finite)] if finite else [None, None]


def summary(levels: list[dict[str, Any]]) -> dict[str, Any]:
    """The issue's targets, judged per level on the median over its rounds: p99 TTFT error, highest VALID rate
    (VALID in every round), CPU per query vs the best peer."""
    out: dict[str, Any] = {"levels": []}
    best_sut_valid: float | None = None
    best_peer_ok: float | None = None
    by_rate: dict[float, list[dict[str, Any]]] = {}
    for level in levels:
        by_rate.setdefault(level["target_qps"], []).append(level)
    for qps, rounds in by_rate.items():
        sut_errs = [
            error_ms(r["sut"]["reported"]["ttft"]["p99_ms"], r["sut"]["run"]["server"]["ttft"]["p99_ms"])
            for r in rounds
        ]
        names = list(dict.fromkeys(name for r in rounds for name in r["peers"]))
        peer_errs_by_round = {
            name: [
                error_ms(r["peers"][name]["reported"]["ttft"]["p99_ms"], r["peers"][name]["run"]["server"]["ttft"]["p99_ms"])
                if name in r["peers"] else None
                for r in rounds
            ]
            for name in names
        }  # fmt: skip
        sut_err = _median(sut_errs)
        peer_errs = {name: _median(v) for name, v in peer_errs_by_round.items()}
        finite = {k: v for k, v in peer_errs.items() if v is not None}
        best_peer = min(finite, key=lambda k: abs(finite[k])) if finite else None
        peer_cpu = {
            name: _median([r["peers"][name]["run"]["cpu_per_query_ms"] for r in rounds if name in r["peers"]])
            for name in names
        }
        valid_rounds = sum(r["sut"]["reported"]["validity"] == "VALID" for r in rounds)
        if valid_rounds == len(rounds):
            best_sut_valid = max(best_sut_valid or 0.0, qps)
        for name in names:
            # a peer "holds" a rate when, in every round, it completed everything and the server saw >= 90 % of it
            held = all(
                name in r["peers"]
                and r["peers"][name]["reported"]["problem"] is None
                and r["peers"][name]["run"]["server"]["rate_per_s"] is not None
                and r["peers"][name]["run"]["server"]["rate_per_s"] >= 0.9 * qps
                for r in rounds
            )
            if held:
                best_peer_ok = max(best_peer_ok or 0.0, qps)
        if sut_err is None:
            target_ok = None
        elif qps <= 50:
            target_ok = abs(sut_err) <= 2.0
        elif best_peer is not None:
            target_ok = abs(sut_err) <= 0.25 * abs(finite[best_peer])
        else:
            target_ok = None
        out["levels"].append({
            "target_qps": qps,
            "rounds": len(rounds),
            "sut_valid_rounds": valid_rounds,
            "sut_ttft_p99_error_ms": sut_err,
            "sut_ttft_p99_error_ms_rounds": sut_errs,
            "sut_ttft_p99_error_ms_min_max": _spread(sut_errs),
            "peer_ttft_p99_error_ms": peer_errs,
            "peer_ttft_p99_error_ms_rounds": peer_errs_by_round,
            "best_peer": best_peer,
            "ttft_error_target_met": target_ok,
            "sut_cpu_per_query_ms": _median([r["sut"]["run"]["cpu_per_query_ms"] for r in rounds]),
            "peer_cpu_per_query_ms": peer_cpu,
            "server_late_p99_ms_rounds": [r["sut"]["run"]["server"]["ttft_late"]["p99_ms"] for r in rounds],
            "loadgen_floor_ttft_p99_ms": _median(
                [(r.get("loadgen_floor") or {}).get("ttft_p99_ms") for r in rounds]
            ),
        })  # fmt: skip
    out["highest_valid_sut_rate"] = best_sut_valid
    out["highest_rate_a_peer_held"] = best_peer_ok
    return out


def print_summary(s: dict[str, Any]) -> None:
    print()
    print("targets: TTFT p99 error within 2 ms up to 50 req/s, within a quarter of the best peer's above"
          " (medians over the rounds of a level)")  # fmt: skip
    for lv in s["levels"]:
        peers = ", ".join(f"{k} {_err(v)}" for k, v in lv["peer_ttft_p99_error_ms"].items()) or "no peer"
        cpus = ", ".join(f"{k} {_f(v, '{:.2f}')}" for k, v in lv["peer_cpu_per_query_ms"].items())
        met = {True: "met", False: "NOT met", None: "n/a"}[lv["ttft_error_target_met"]]
        lo, hi = lv["sut_ttft_p99_error_ms_min_max"]
        floor = lv.get("loadgen_floor_ttft_p99_ms")
        floor_text = f"; LoadGen floor p99 {floor:.2f} ms" if floor is not None else ""
        spread = f" [{_err(lo)} .. {_err(hi)} over {lv['rounds']} rounds]" if lv["rounds"] > 1 else ""
        print(f"  {lv['target_qps']:>6g} req/s: SUT p99 TTFT error {_err(lv['sut_ttft_p99_error_ms'])} ms{spread} "
              f"({met}); peers {peers}; CPU ms/query SUT {_f(lv['sut_cpu_per_query_ms'], '{:.2f}')}"
              + (f", {cpus}" if cpus else "") + floor_text)  # fmt: skip
    print(f"highest VALID SUT rate: {_f(s['highest_valid_sut_rate'], '{:g}')} req/s; highest rate a peer held "
          f"(>= 90 % of target, no failure): {_f(s['highest_rate_a_peer_held'], '{:g}')} req/s")  # fmt: skip


# ------------------------------------------------------------------------------------------- main
def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument(
        "--quick", action="store_true", help="one level (50 req/s), 12 s, one peer: a ~1-2 minute smoke run"
    )
    p.add_argument("--levels", help="comma-separated Server rates in req/s (default 10,25,44,100,200,340)")
    p.add_argument(
        "--min-duration-s", type=float, help="LoadGen min_duration per level (default 20, quick 12)"
    )
    p.add_argument("--min-queries", type=int, default=None,
                   help=f"stretch a level to this many queries (default {EARLY_STOPPING_MIN_QUERIES + 141}: "
                        "LoadGen's early stopping needs 459)")  # fmt: skip
    p.add_argument(
        "--max-duration-s", type=float, default=60.0, help="cap on the stretched duration (default 60)"
    )
    p.add_argument("--peers", default=None,
                   help="comma-separated peers to run at each level: aiperf,guidellm, or none "
                        "(default: every installed one; quick: aiperf)")  # fmt: skip
    p.add_argument("--peers-venv", type=Path, default=DEFAULT_PEERS_VENV,
                   help="venv holding the peers' CLIs (bin/aiperf, bin/guidellm); default $PEERS_VENV, else "
                        "~/.cache/inference-audit/venv-peers")  # fmt: skip
    p.add_argument("--ttft-ms", type=float, default=200.0)
    p.add_argument("--tpot-ms", type=float, default=20.0)
    p.add_argument("--tokens", type=int, default=64)
    p.add_argument("--prompt-tokens", type=int, default=128, help="synthetic prompt length for the peers")
    p.add_argument("--server-python", type=Path, default=None,
                   help="interpreter for the token server (default: the peers venv's python when it has uvloop, "
                        "which makes the server ~10 %% cheaper; else this one)")  # fmt: skip
    p.add_argument("--model", default="token-server")
    p.add_argument("--owned-by", default="vllm",
                   help="owned_by the server reports; 'vllm' makes the SUT use its vLLM request flavour")  # fmt: skip
    p.add_argument("--benchmark", default="llama3.1-8b")
    p.add_argument("--round", default="v6.0")
    p.add_argument("--sut-arg", action="append", default=[],
                   help="extra argument for 'inference-audit run' (repeatable)")  # fmt: skip
    p.add_argument("--nice", type=int, default=0,
                   help="nice value for the server and every client, and for this session's autogroup while it runs "
                        "(e.g. -10 as root on a shared machine; default 0)")  # fmt: skip
    p.add_argument("--no-floor", dest="floor", action="store_false",
                   help="skip LoadGen's floor (a do-nothing SUT at each rate)")  # fmt: skip
    p.add_argument("--repeat", type=int, default=1,
                   help="rounds per level, SUT and peers taking turns; targets judged on the medians (default 1)")  # fmt: skip
    p.add_argument("--out", type=Path, default=REPO / "out" / "fidelity", help="work and result directory")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.levels:
        try:
            levels = [float(x) for x in args.levels.split(",") if x.strip()]
        except ValueError:
            print(f"sut_fidelity: --levels must be numbers, got {args.levels!r}", file=sys.stderr)
            return 2
    else:
        levels = list(QUICK_LEVELS if args.quick else FULL_LEVELS)
    if not levels or any(not math.isfinite(q) or q <= 0 for q in levels):
        print("sut_fidelity: every level must be a positive rate", file=sys.stderr)
        return 2
    if args.repeat < 1:
        print("sut_fidelity: --repeat must be at least 1", file=sys.stderr)
        return 2
    if args.min_duration_s is None:
        args.min_duration_s = 12.0 if args.quick else 20.0
    if args.min_queries is None:
        args.min_queries = 0 if args.quick else EARLY_STOPPING_MIN_QUERIES + 141
    wanted = ["aiperf"] if args.quick and args.peers is None else (
        list(PEERS) if args.peers is None else [p for p in args.peers.split(",") if p and p != "none"])  # fmt: skip
    unknown = [p for p in wanted if p not in PEERS]
    if unknown:
        print(
            f"sut_fidelity: unknown peer(s) {', '.join(unknown)} (known: {', '.join(PEERS)})", file=sys.stderr
        )
        return 2
    work: Path = args.out.resolve()
    work.mkdir(parents=True, exist_ok=True)
    peers, missing, args.peer_tokenizer = available_peers(args.peers_venv, wanted, work)
    for message in missing:
        print(f"sut_fidelity: skipping peer {message}", file=sys.stderr)
    if args.server_python is None:
        args.server_python = default_server_python(args.peers_venv)
    priority = set_session_priority(args.nice)
    if priority:
        print(f"sut_fidelity: {priority}", file=sys.stderr)
    server = TokenServer(args, work)
    results: list[dict[str, Any]] = []
    started = time.time()
    try:
        print(f"token server at {server.url}: TTFT {args.ttft_ms:g} ms, TPOT {args.tpot_ms:g} ms, "
              f"{args.tokens} tokens; levels {', '.join(f'{q:g}' for q in levels)} req/s; "
              f"peers: {', '.join(peers) or 'none'}", file=sys.stderr, flush=True)  # fmt: skip
        for qps in levels:
            for round_no in range(1, args.repeat + 1):
                results.append(run_level(args, server, qps, peers, work, round_no))
                _write_json(work, args, levels, peers, missing, results, started)
    finally:
        server.stop()
        if priority and not priority.startswith("could not"):
            set_session_priority_back()
    print_table(results)
    s = summary(results)
    print_summary(s)
    path = _write_json(work, args, levels, peers, missing, results, started, s)
    print(f"\nall numbers: {path}")
    return 0


def _write_json(
    work: Path, args: argparse.Namespace, levels: list[float], peers: list[str], missing: list[str],
    results: list[dict[str, Any]], started: float, s: dict[str, Any] | None = None,
) -> Path:  # fmt: skip
    doc = {
        "what": "bench/sut_fidelity.py: SUT-reported vs token-server-observed TTFT/TPOT, validity, CPU per query",
        "started_unix_s": started,
        "machine": {"cpus": os.cpu_count(), "loadavg_end": os.getloadavg(), "nice": args.nice},
        "server": {"ttft_ms": args.ttft_ms, "tpot_ms": args.tpot_ms, "tokens": args.tokens},
        "benchmark": args.benchmark,
        "round": args.round,
        "levels_req_per_s": levels,
        "rounds_per_level": args.repeat,
        "peers": peers,
        "peers_skipped": missing,
        "percentile_definition": "LoadGen's (sorted[min(n-1, floor(n*p))]) for the SUT and the server; "
        "each peer's own for its reported values",
        "results": results,
        "summary": s,
    }
    path = work / "fidelity.json"
    path.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return path


if __name__ == "__main__":
    sys.exit(main())
