"""What the client costs with ``--client-workers``: the LoadGen process, a worker per token and per request, and
the fidelity on a small machine, each beside its reference measured in the same run.

Parts (``--parts``, default all):

- ``transport``: one-way sample frames (16 bytes) and completion frames (44 bytes) between two processes, as fast
  as they go, then completion frames paced one per millisecond (every frame finds the reader asleep: a Server
  run's regime), over the candidates for the wire: an ``AF_UNIX`` socketpair with our framing and batched reads
  (what ``loadgen_sut/worker_wire.py`` uses), its reader waiting in ``poll`` (the reporter's way) or in ``recv``,
  an ``os.pipe`` with the same framing (one pipe could take every worker's frames: no poll set),
  ``multiprocessing.Pipe`` (a message per ``send_bytes``), and pyzmq PUSH/PULL over ``ipc://`` when pyzmq is
  importable (it is not a dependency): CPU us per message on each side.
- ``serial``: the LoadGen process's CPU per query (``client_diagnostics.loadgen_process_cpu_s``: LoadGen's threads,
  the issue callback, the reporting thread) with workers that answer at once (the simulated engine, TTFT 0, TPOT
  0, 2 tokens) at Server rates, beside LoadGen's own floor at the same rate (``bench/loadgen_floor.py``: a SUT
  that completes inside the issue callback) and beside the in-process client. Target: <= 50 us per query.
- ``tokens``: a worker's CPU per request against the token server at two output lengths (one SSE event per token):
  the per-event and per-request costs (a line through the two), then the cores the four largest Server results
  of the issue's table need.
- ``ladder``: on this machine at 50, 200, 600 req/s against the token server (TTFT 200 ms, 20 ms/token, 64 tokens),
  ``bench/sut_fidelity.py``'s level (LoadGen's TTFT/TPOT p99 minus what the server observed, CPU per request of
  the client's process tree: utime + stime from ``/proc``) for the in-process client, 1 and 2 workers and AIPerf, in
  the same run, ``--ladder-rounds`` times (default 2) with the order of the clients reversed every other round; then
  the medians over the rounds and each run's load average. AIPerf runs from ``--peers-venv`` (default ``$PEERS_VENV``,
  else ``bench/peers/setup_peers.sh``'s venv); skipped with a note where it is not installed.

Every client runs under ``nice`` (``--nice``, default 10: the machine is shared); the load average is printed with
each part. ``--quick``: tiny rates and durations (a smoke run, ~2 minutes).

    python3 bench/sut_workers.py --quick
    python3 bench/sut_workers.py --parts serial,tokens --out /tmp/sut_workers
    PEERS_VENV=/path/to/venv-with-aiperf python3 bench/sut_workers.py --parts ladder --nice 0
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import os
import resource
import select
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sut_fidelity as fid  # bench/ is not a package: on sys.path above
from fidelity_peers import available_peers

from loadgen_sut.record import SutResult

REPO = Path(__file__).resolve().parents[1]
FLOOR_SCRIPT = REPO / "bench" / "loadgen_floor.py"
SERIAL_TARGET_US = 50.0

# the table: the largest closed Server results of the published v6.1 round (requests/s, tokens/request)
SYSTEMS: tuple[tuple[str, float, float | None], ...] = (
    ("512x MI355X gpt-oss-120b", 4200.0, 1280.0),
    ("72x GB300 llama2-70b-99.9", 3300.0, 285.0),
    ("72x VR qwen3-vl", 2323.0, None),
    ("8x B300 llama3.1-8b", 1360.0, 128.0),
)
HEADROOM = 0.7  # a worker's loop kept under 70 % of a core: queueing stays short (CLIENT_BOUND is judged at 90 %)


def _cpu_s() -> float:
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


def _loadavg() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


def _nice(n: int) -> Any:
    return (lambda: os.nice(n)) if n else None


# ------------------------------------------------------------------------------------------- transport
_SAMPLE = struct.Struct("<IBQI")  # head + (seq, idx): what the LoadGen process writes per sample
_DONE = struct.Struct("<IBQqqqqBI")  # head + a completion frame without data


def _socket_receiver(sock: socket.socket, n: int, size: int, use_poll: bool, out: Any) -> None:
    """Batched reads into one buffer, as the reporter thread reads a worker's socket; ``use_poll``: it waits in
    ``select.poll`` first (the reporter's way: one poll set for every worker), else in ``recv_into`` itself."""
    poller = None
    if use_poll:
        sock.setblocking(False)
        poller = select.poll()
        poller.register(sock.fileno(), select.POLLIN)

    def read(mv: memoryview) -> int:
        if poller is None:
            return sock.recv_into(mv)
        poller.poll(1000)
        try:
            return sock.recv_into(mv)
        except BlockingIOError:
            return -1

    _framed_reads(read, n, size, out)


def _fifo_receiver(fd: int, n: int, size: int, out: Any) -> None:
    """Batched blocking reads of an ``os.pipe`` into one buffer: every worker could write to one pipe (a write of at
    most ``PIPE_BUF`` bytes is atomic), so its reader would need no poll set."""
    _framed_reads(lambda mv: os.readv(fd, [mv]), n, size, out)


def _framed_reads(read: Any, n: int, size: int, out: Any) -> None:
    """Read ``n`` frames of ``size`` bytes with ``read(memoryview) -> bytes read`` (0: the end, -1: nothing yet)."""
    buf = bytearray(1 << 16)
    mv = memoryview(buf)
    c0 = _cpu_s()
    got = start = end = 0
    head = struct.Struct("<IB")
    while got < n:
        if len(buf) - end < size:
            buf[: end - start] = buf[start:end]
            start, end = 0, end - start
        k = read(mv[end:])
        if k == 0:
            break
        if k < 0:
            continue
        end += k
        while end - start >= size:
            head.unpack_from(buf, start)
            start += size
            got += 1
        if start == end:
            start = end = 0
    mv.release()
    out.send((got, _cpu_s() - c0))


def _pipe_receiver(conn: Any, n: int, out: Any) -> None:
    c0 = _cpu_s()
    got = 0
    while got < n:
        conn.recv_bytes()
        got += 1
    out.send((got, _cpu_s() - c0))


def _zmq_receiver(addr: str, n: int, out: Any) -> None:
    import zmq

    ctx = zmq.Context()
    s = ctx.socket(zmq.PULL)
    s.bind(addr)
    out.send("ready")
    c0 = _cpu_s()
    for _ in range(n):
        s.recv()
    out.send((n, _cpu_s() - c0))
    s.close()
    ctx.term()


_FRAMES = (("sample", _SAMPLE.pack(12, 1, 7, 3)), ("completion", _DONE.pack(39, 12, 7, 1, 2, 3, 64, 1, 0)))


def transport(n: int, paced_n: int, gap_s: float = 0.001) -> list[dict[str, Any]]:
    """Each candidate wire as fast as it goes (the frames' own cost: reads take what has come, in batches), then
    paced, one completion frame every ``gap_s`` (the regime of a Server run at a few hundred requests per second:
    every frame finds the reader asleep, so its CPU per frame is the wake-up's)."""
    rows = []
    for what, frame in _FRAMES:
        rows += _candidates(frame, what, n, 0.0)
    rows += _candidates(_FRAMES[1][1], f"completion, 1 per {gap_s * 1e3:g} ms", paced_n, gap_s)
    return rows


def _send_all(send: Any, frame: bytes, n: int, gap_s: float) -> None:
    # two loops, not one with a test in it: the back-to-back send cost is what is measured
    if not gap_s:
        for _ in range(n):
            send(frame)
        return
    for _ in range(n):
        send(frame)
        time.sleep(gap_s)


def _candidates(frame: bytes, what: str, n: int, gap_s: float) -> list[dict[str, Any]]:
    rows = []
    ctx = mp.get_context("fork")

    def measure(name: str, target: Any, targs: tuple[Any, ...], send: Any, ready: bool = False) -> None:
        res_r, res_w = ctx.Pipe(duplex=False)
        p = ctx.Process(target=target, args=(*targs, res_w))
        p.start()
        if ready:
            res_r.recv()
        c0, t0 = _cpu_s(), time.perf_counter()
        _send_all(send, frame, n, gap_s)
        got, rx_cpu = res_r.recv()
        rows.append(_row(name, what, n, _cpu_s() - c0, rx_cpu, time.perf_counter() - t0, got, gap_s))
        p.join()

    # socketpair, our framing: one send per frame (a Server issue), batched reads; waiting in poll (the
    # reporter's way, one poll set for every worker) or in recv (possible with one worker only)
    for use_poll in (False, True):
        a, b = socket.socketpair()
        label = "socketpair (ours), poll + recv" if use_poll else "socketpair, blocking recv"
        measure(label, _socket_receiver, (b, n, len(frame), use_poll), a.sendall)
        a.close()
        b.close()
    rfd, wfd = os.pipe()
    measure("os.pipe, blocking read", _fifo_receiver, (rfd, n, len(frame)), lambda data: os.write(wfd, data))
    os.close(rfd)
    os.close(wfd)
    r, w = ctx.Pipe(duplex=False)  # multiprocessing.Pipe: a message per send_bytes
    measure("multiprocessing.Pipe", _pipe_receiver, (r, n), w.send_bytes)
    try:
        import zmq
    except ImportError:
        rows.append({"transport": "pyzmq", "frame": what, "problem": "pyzmq is not installed"})
        return rows
    addr = f"ipc:///tmp/sut_workers_{os.getpid()}.ipc"
    zctx = zmq.Context()
    s = zctx.socket(zmq.PUSH)
    s.connect(addr)
    measure(f"pyzmq {zmq.__version__} PUSH/PULL ipc", _zmq_receiver, (addr, n), s.send, ready=True)
    s.close()
    zctx.term()
    return rows


def _row(name: str, what: str, n: int, tx_cpu: float, rx_cpu: float, wall: float, got: int, gap_s: float) -> dict[str, Any]:
    return {
        "transport": name,
        "frame": what,
        "messages": n,
        "received": got,
        "gap_s": gap_s,
        "send_cpu_us_per_msg": tx_cpu / n * 1e6,  # paced: with the sender's sleep (its wake-up) in it
        "recv_cpu_us_per_msg": rx_cpu / n * 1e6,
        "wall_us_per_msg": wall / n * 1e6,
    }


# ------------------------------------------------------------------------------------------- one SUT run
def run_sut(argv: list[str], out: Path, conf: str, nice: int, timeout_s: float) -> SutResult | None:
    """``inference-audit run ARGV`` (Server, performance) with ``conf`` as its user.conf; its sut_result.json."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "user.conf").write_text(conf, encoding="utf-8")
    cmd = [sys.executable, "-m", "loadgen_sut.cli", "run", *argv, "--benchmark", "llama3.1-8b", "--round", "v6.0",
           "--scenario", "Server", "--mode", "performance", "--user-conf", str(out / "user.conf"),
           "--out", str(out), "--progress-interval", "0"]  # fmt: skip
    with (out / "run.log").open("wb") as log:
        try:
            subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, timeout=timeout_s, preexec_fn=_nice(nice), check=False)
        except subprocess.TimeoutExpired:
            return None
    found = sorted(out.glob("runs/*/performance/sut_result.json"))
    return SutResult.model_validate_json(found[-1].read_text(encoding="utf-8")) if found else None


def _conf(qps: float, duration_s: float) -> str:
    return (f"*.Server.target_qps = {qps:g}\n*.Server.min_duration = {int(duration_s * 1000)}\n"
            "*.Server.min_query_count = 100\n*.Server.sample_concatenate_permutation = 0\n")  # fmt: skip


def _validity(out: Path) -> str | None:
    logs = sorted(out.glob("runs/*/performance/mlperf_log_detail.txt"))
    return fid.parse_detail_file(logs[-1]).result_validity if logs else None


# ------------------------------------------------------------------------------------------- serial cost
def serial(rates: list[float], duration_s: float, workers: int, work: Path, nice: int) -> list[dict[str, Any]]:
    rows = []
    sim = ["--engine", "simulated", "--sim-ttft-ms", "0", "--sim-tpot-ms", "0", "--sim-output-tokens", "2"]
    for qps in rates:
        level = work / f"serial_{qps:g}"
        print(f"  serial {qps:g} req/s (load average {_loadavg()}) ...", file=sys.stderr, flush=True)
        cmd = [sys.executable, str(FLOOR_SCRIPT), "--qps", f"{qps:g}", "--duration-s", f"{duration_s:g}",
               "--out", str(level / "floor")]  # fmt: skip
        env = dict(os.environ, PYTHONPATH=str(REPO))
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, preexec_fn=_nice(nice), check=False,
                              timeout=duration_s * 4 + 120)  # fmt: skip
        floor = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 and proc.stdout.strip() else {}
        row: dict[str, Any] = {"qps": qps, "loadavg": _loadavg(), "floor_us_per_query": floor.get("cpu_us_per_query")}
        for w in (0, workers):
            res = run_sut([*sim, "--client-workers", str(w)], level / f"w{w}", _conf(qps, duration_s), nice,
                          duration_s * 4 + 180)  # fmt: skip
            key = f"w{w}"
            if res is None or res.client_diagnostics is None or not res.sut or not res.sut.completed:
                row[key] = {"problem": f"no result; see {level / key / 'run.log'}"}
                continue
            diag = res.client_diagnostics
            done = res.sut.completed
            lg_cpu = diag.loadgen_process_cpu_s if w else diag.process_cpu_s
            row[key] = {
                "completed": done,
                "validity": _validity(level / key),
                "loadgen_process_us_per_query": lg_cpu / done * 1e6 if lg_cpu is not None else None,
                "client_us_per_query": diag.process_cpu_s / done * 1e6,
                "reporter_thread_cpu_fraction": diag.reporter_thread_cpu_fraction,
                "workers_cpu_s": [x.process_cpu_s for x in diag.workers],
            }
        rows.append(row)
    return rows


def marginal_costs(rows: list[dict[str, Any]], workers: int) -> dict[str, float | None]:
    """us per query from the growth of CPU per second between the first and the last rate (fixed costs cancel)."""
    if len(rows) < 2:
        return {}
    a, b = rows[0], rows[-1]

    def slope(ca: float | None, cb: float | None) -> float | None:
        if ca is None or cb is None:
            return None
        return (b["qps"] * cb - a["qps"] * ca) / (b["qps"] - a["qps"])

    def get(row: dict[str, Any], key: str) -> float | None:
        v = row.get(key, {})
        return v.get("loadgen_process_us_per_query") if isinstance(v, dict) else None

    return {
        "floor": slope(a.get("floor_us_per_query"), b.get("floor_us_per_query")),
        "workers": slope(get(a, f"w{workers}"), get(b, f"w{workers}")),
        "in_process": slope(get(a, "w0"), get(b, "w0")),
    }


# ------------------------------------------------------------------------------------------- per token
def tokens_cost(token_counts: tuple[int, int], qps: float, duration_s: float, work: Path, args: argparse.Namespace) -> dict[str, Any]:
    per_request: dict[int, float] = {}
    runs = {}
    for t in token_counts:
        sargs = argparse.Namespace(**{**vars(args), "ttft_ms": 1.0, "tpot_ms": 0.5, "tokens": t})
        (work / f"tokens_{t}").mkdir(parents=True, exist_ok=True)
        server = fid.TokenServer(sargs, work / f"tokens_{t}")
        try:
            print(f"  tokens {t} at {qps:g} req/s (load average {_loadavg()}) ...", file=sys.stderr, flush=True)
            res = run_sut(["--engine", "openai", "--endpoint", server.url, "--model", args.model,
                           "--client-workers", "1", "--max-new-tokens", str(t), "--min-new-tokens", "2"],
                          work / f"tokens_{t}" / "sut", _conf(qps, duration_s), args.nice, duration_s * 4 + 180)  # fmt: skip
        finally:
            server.stop()
        if res is None or res.client_diagnostics is None or not res.sut or not res.sut.completed:
            return {"problem": f"no result at {t} tokens; see {work / f'tokens_{t}' / 'sut' / 'run.log'}"}
        w = res.client_diagnostics.workers
        cpu = sum(x.process_cpu_s or 0.0 for x in w)
        per_request[t] = cpu / res.sut.completed * 1e6
        runs[t] = {"completed": res.sut.completed, "failed": res.sut.failed, "worker_cpu_s": cpu,
                   "worker_us_per_request": per_request[t], "output_tokens": res.sut.output_tokens}  # fmt: skip
    lo, hi = token_counts
    per_event = (per_request[hi] - per_request[lo]) / (hi - lo)
    fixed = per_request[lo] - lo * per_event
    return {"runs": runs, "us_per_event": per_event, "us_per_request": fixed}


def cores_table(per_event_us: float, per_request_us: float, serial_us: float | None) -> list[dict[str, Any]]:
    rows = []
    for name, rps, toks in SYSTEMS:
        worker_us = per_request_us + (toks or 0.0) * per_event_us
        cores = rps * worker_us / 1e6
        rows.append({
            "system": name, "req_per_s": rps, "tokens_per_request": toks,
            "worker_cores": cores, "client_workers": max(1, math.ceil(cores / HEADROOM)),
            "loadgen_process_core_share": rps * serial_us / 1e6 if serial_us is not None else None,
        })  # fmt: skip
    return rows


# ------------------------------------------------------------------------------------------- 2-core ladder
def ladder(levels: list[float], worker_counts: list[int], work: Path, args: argparse.Namespace) -> list[dict[str, Any]]:
    """Each level ``--ladder-rounds`` times, the clients in turn: round 1 in-process, 1, 2 workers, AIPerf; round 2
    the other way round (2 workers, AIPerf, 1, in-process), and so on, so that a drift of the machine's load
    (it is shared) does not always fall on the same client."""
    work.mkdir(parents=True, exist_ok=True)
    peers, missing, tokenizer = available_peers(args.peers_venv, ["aiperf"], work)
    for m in missing:
        print(f"sut_workers: skipping peer {m}", file=sys.stderr)
    fargs = fid.build_parser().parse_args([
        "--ttft-ms", "200", "--tpot-ms", "20", "--tokens", "64", "--nice", str(args.nice),
        "--min-duration-s", f"{args.ladder_duration_s:g}", "--min-queries", str(args.ladder_min_queries),
        "--no-floor",
    ])  # fmt: skip
    fargs.server_python = fid.default_server_python(args.peers_venv)
    fargs.peers_venv, fargs.peer_tokenizer = args.peers_venv, tokenizer
    fargs.repeat = 1
    server = fid.TokenServer(fargs, work)
    out = []
    try:
        for round_no in range(1, args.ladder_rounds + 1):
            order = worker_counts if round_no % 2 else worker_counts[::-1]
            for qps in levels:
                for i, w in enumerate(order):
                    fargs.sut_arg = ["--client-workers", str(w)]
                    print(f"  ladder round {round_no}, {qps:g} req/s, {w} worker(s) (load average {_loadavg()}) ...",
                          file=sys.stderr, flush=True)  # fmt: skip
                    with_peer = i == (len(order) - 1 if round_no % 2 else 0)
                    level = fid.run_level(fargs, server, qps, peers if with_peer else [], work / f"r{round_no}" / f"w{w}")
                    level["client_workers"] = w
                    level["round"] = round_no
                    level["loadavg_1min_end"] = os.getloadavg()[0]
                    out.append(level)
    finally:
        server.stop()
    return out


def ladder_medians(levels: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per rate and client (in-process, N workers, each peer): the median over the rounds of the TTFT and TPOT p99
    errors (reported - server-observed, ms), of the CPU per request (ms, the client's process tree, utime + stime),
    the verdicts, and the 1-minute load average at each run's start."""
    runs: dict[tuple[float, str], list[dict[str, Any]]] = {}
    for level in levels:
        qps = level["target_qps"]
        clients = [(f"w{level['client_workers']}", level["sut"])]
        clients += [(name, p) for name, p in level["peers"].items()]
        for name, c in clients:
            srv, rep = c["run"]["server"], c["reported"]
            runs.setdefault((qps, name), []).append({
                "ttft_p99_error_ms": fid.error_ms(rep["ttft"]["p99_ms"], srv["ttft"]["p99_ms"]),
                "tpot_p99_error_ms": fid.error_ms(rep["tpot"]["p99_ms"], srv["tpot"]["p99_ms"]),
                "cpu_per_request_ms": c["run"]["cpu_per_query_ms"],
                "verdict": fid._verdict("SUT" if name.startswith("w") else name, qps, c["run"], rep),
                "server_rate_per_s": srv["rate_per_s"],
                "loadavg_1min": level["loadavg_1min_start"],
            })  # fmt: skip
    out = []
    def order(key: tuple[float, str]) -> tuple[float, int, str]:  # w0, w1, w2, then the peers
        qps, name = key
        return (qps, int(name[1:]) if name[:1] == "w" and name[1:].isdigit() else 1 << 30, name)

    for (qps, name), rs in sorted(runs.items(), key=lambda kv: order(kv[0])):
        out.append({"qps": qps, "client": name, "rounds": rs} | {
            k: fid._median([r[k] for r in rs])
            for k in ("ttft_p99_error_ms", "tpot_p99_error_ms", "cpu_per_request_ms", "server_rate_per_s")
        } | {"verdicts": [r["verdict"] for r in rs], "loadavg_1min": [r["loadavg_1min"] for r in rs]})  # fmt: skip
    return out


def print_ladder(levels: list[dict[str, Any]], medians: list[dict[str, Any]]) -> None:
    rows = [fid.HEADER]
    for level in levels:
        for r in fid.table_rows(level, with_round=True):
            if r[1] == "SUT":
                r[1] = f"SUT w={level['client_workers']}"
            rows.append(r)
    widths = [max(len(r[i]) for r in rows) for i in range(len(fid.HEADER))]
    for i, row in enumerate(rows):
        print("  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)))
        if i == 0:
            print("  ".join("-" * w for w in widths))
    print("\nmedians over the rounds (w0 = in-process client, wN = N workers; errors = reported - server p99, ms; "
          "CPU = the client's process tree, utime + stime, ms per request):")  # fmt: skip
    print("  req/s  client    TTFT p99 err  TPOT p99 err  CPU ms/req  rate srv  verdicts            load avg (1 min)")
    for m in medians:
        print(f"  {m['qps']:5g}  {m['client']:<8}  {_f(m['ttft_p99_error_ms'], '{:+.1f}'):>12}  "
              f"{_f(m['tpot_p99_error_ms'], '{:+.2f}'):>12}  {_f(m['cpu_per_request_ms'], '{:.2f}'):>10}  "
              f"{_f(m['server_rate_per_s']):>8}  {','.join(m['verdicts']):<18}  "
              f"{' '.join(f'{x:.1f}' for x in m['loadavg_1min'])}")  # fmt: skip


# ------------------------------------------------------------------------------------------- main
def _f(v: Any, fmt: str = "{:.1f}") -> str:
    return "-" if v is None else fmt.format(v)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--quick", action="store_true", help="tiny rates and durations: a smoke run")
    p.add_argument("--parts", default="transport,serial,tokens,ladder")
    p.add_argument("--workers", type=int, default=2, help="client workers of the serial part (default 2)")
    p.add_argument("--nice", type=int, default=10)
    p.add_argument("--model", default="token-server")
    p.add_argument("--owned-by", default="vllm")
    p.add_argument("--peers-venv", type=Path, default=fid.DEFAULT_PEERS_VENV)
    p.add_argument("--ladder-duration-s", type=float, default=None)
    p.add_argument("--ladder-min-queries", type=int, default=None)
    p.add_argument("--ladder-rounds", type=int, default=None, help="rounds of the ladder, clients in turn (default 2)")
    p.add_argument("--out", type=Path, default=REPO / "out" / "sut_workers")
    args = p.parse_args(argv)
    parts = {x.strip() for x in args.parts.split(",") if x.strip()}
    unknown = parts - {"transport", "serial", "tokens", "ladder"}
    if unknown:
        print(f"sut_workers: unknown part(s) {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    q = args.quick
    if args.ladder_duration_s is None:
        args.ladder_duration_s = 4.0 if q else 12.0
    if args.ladder_min_queries is None:
        args.ladder_min_queries = 0 if q else 600
    if args.ladder_rounds is None:
        args.ladder_rounds = 1 if q else 2
    args.server_python = fid.default_server_python(args.peers_venv)
    work = args.out.resolve()
    work.mkdir(parents=True, exist_ok=True)
    doc: dict[str, Any] = {"what": "bench/sut_workers.py", "cpus": os.cpu_count(), "nice": args.nice,
                           "loadavg_start": _loadavg()}  # fmt: skip
    os.nice(args.nice)
    print(f"sut_workers: {os.cpu_count()} CPUs, load average {_loadavg()}, nice {args.nice}", flush=True)

    if "transport" in parts:
        rows = transport(20_000 if q else 200_000, 300 if q else 3000)
        doc["transport"] = rows
        print("\ntransport (CPU us per message; send side is the LoadGen process's for a sample frame):")
        for r in rows:
            if "problem" in r:
                print(f"  {r['transport']:<34} {r['frame']:<22} {r['problem']}")
                continue
            print(f"  {r['transport']:<34} {r['frame']:<22} send {r['send_cpu_us_per_msg']:6.2f}  "
                  f"receive {r['recv_cpu_us_per_msg']:6.2f}  wall {r['wall_us_per_msg']:6.2f}")  # fmt: skip

    serial_us = None
    if "serial" in parts:
        rows = serial([150.0, 300.0] if q else [2000.0, 5000.0], 3.0 if q else 10.0, args.workers, work, args.nice)
        doc["serial"] = rows
        marginal = marginal_costs(rows, args.workers)
        doc["serial_marginal_us_per_query"] = marginal
        print(f"\nserial cost in the LoadGen process (CPU us per query; target <= {SERIAL_TARGET_US:g}); workers answer at once:")
        print("  req/s  LoadGen floor  in-process client (LoadGen process)  "
              f"{args.workers} workers: LoadGen process / whole client  reporter thread  validity  load avg")
        for r in rows:
            w0, wn = r.get("w0", {}), r.get(f"w{args.workers}", {})
            print(f"  {r['qps']:5g}  {_f(r['floor_us_per_query']):>13}  {_f(w0.get('loadgen_process_us_per_query')):>35}  "
                  f"{_f(wn.get('loadgen_process_us_per_query')):>18} / {_f(wn.get('client_us_per_query')):<14}  "
                  f"{_f(wn.get('reporter_thread_cpu_fraction'), '{:.0%}'):>15}  {wn.get('validity')!s:>8}  {r['loadavg']}")  # fmt: skip
            if wn.get("loadgen_process_us_per_query") is not None:
                serial_us = wn["loadgen_process_us_per_query"]
        print(f"  marginal cost between the two rates (CPU per second's growth / rate's growth: the per-query part "
              f"without the fixed costs): LoadGen floor {_f(marginal.get('floor'))} us, LoadGen process with "
              f"{args.workers} workers {_f(marginal.get('workers'))} us, in-process client {_f(marginal.get('in_process'))} us")  # fmt: skip

    if "tokens" in parts:
        res = tokens_cost((8, 64) if q else (8, 128), 50.0 if q else 150.0, 3.0 if q else 10.0, work, args)
        doc["tokens"] = res
        if "problem" in res:
            print(f"\ntokens: {res['problem']}")
        else:
            print(f"\nworker cost: {res['us_per_event']:.1f} us per SSE event (one token each), "
                  f"{res['us_per_request']:.0f} us per request (load average {_loadavg()})")  # fmt: skip
            table = cores_table(res["us_per_event"], res["us_per_request"], serial_us)
            doc["cores"] = table
            print(f"cores for the issue's systems (one event per token: an upper bound, engines merge tokens under load; "
                  f"workers at {HEADROOM:.0%} of a core):")  # fmt: skip
            print("  system                         req/s  tokens/req  worker cores  --client-workers  LoadGen process core")
            for r in table:
                print(f"  {r['system']:<29} {r['req_per_s']:6g}  {_f(r['tokens_per_request'], '{:.0f}'):>10}  "
                      f"{r['worker_cores']:12.1f}  {r['client_workers']:16d}  {_f(r['loadgen_process_core_share'], '{:.0%}'):>20}")  # fmt: skip

    if "ladder" in parts:
        levels = ladder([50.0] if q else [50.0, 200.0, 600.0], [0, 1, 2], work / "ladder", args)
        medians = ladder_medians(levels)
        doc["ladder"], doc["ladder_medians"] = levels, medians
        print(f"\n{os.cpu_count()} cores, token server TTFT 200 ms / 20 ms per token / 64 tokens (load average {_loadavg()}):")
        print_ladder(levels, medians)
    doc["loadavg_end"] = _loadavg()
    path = work / "sut_workers.json"
    path.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(f"\nload average at the end {_loadavg()}; all numbers: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
