"""Where the SUT's TTFT goes, hop by hop, against the recording token server (a diagnostic, not a target).

It runs one LoadGen Server test in this process with the SUT's own classes and stamps, in wall-clock ns:

1. ``issue``: LoadGen's issue callback (``LoadGenSUT.issue``, on LoadGen's thread);
2. ``write``: the request handed to the socket (``http_connection.Connection.start``);
3. the server's receive and first-send times (``bench/token_server.py`` records them);
4. ``rx``: the first token's bytes parsed (``_Stream.on_event`` that made the first token known);
5. ``ftc``: ``FirstTokenComplete`` called.

The per-request stamps are joined with the server's records by rank (requests go out in issue order, a
``1/qps`` apart on average; the join is only printed when the counts agree). LoadGen's own TTFT percentiles
come from its detail log; LoadGen's p99 minus the client's ``issue -> ftc`` p99 is what LoadGen's issue
lateness adds at the tail. ``INFERENCE_AUDIT_EVENT_LOOP=asyncio`` compares the standard loop.

    python3 bench/sut_hops.py --qps 50 --duration-s 12          # prints a table; --json for numbers
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from loadgen_floor import first_token_ms, run_server_test

from loadgen_sut import sut as sut_module
from loadgen_sut.engines import http_connection, sse_protocol
from loadgen_sut.engines.base import GenerationRequest
from loadgen_sut.engines.openai_http import OpenAIConfig, OpenAIEngine

REPO = Path(__file__).resolve().parents[1]
HOPS = (
    ("issue -> write", "issue", "write"),
    ("write -> server recv", "write", "srv_recv"),
    ("server TTFT", "srv_recv", "srv_first"),
    ("server send -> parsed", "srv_first", "rx"),
    ("parsed -> FirstTokenComplete", "rx", "ftc"),
    ("client: issue -> FirstTokenComplete", "issue", "ftc"),
)


class Stamps:
    """Wall-clock stamps from inside the SUT, installed by wrapping its methods for one run."""

    def __init__(self) -> None:
        self.issue: dict[int, int] = {}
        self.ftc: dict[int, int] = {}
        self.write: list[int] = []
        self.rx: list[int] = []

    def install(self) -> Callable[[], None]:
        """Wrap the SUT's hop points; returns the undo."""
        originals: list[tuple[Any, str, Any]] = []

        def wrap(owner: Any, name: str, make: Callable[[Any], Any]) -> None:
            raw = owner.__dict__[name]  # the descriptor itself (a staticmethod stays one when restored)
            originals.append((owner, name, raw))
            if isinstance(raw, staticmethod):
                setattr(owner, name, staticmethod(make(raw.__func__)))
            else:
                setattr(owner, name, make(getattr(owner, name)))

        def issue(orig: Any) -> Any:
            def f(sut: Any, ids: list[int], indices: list[int]) -> None:
                now = time.time_ns()
                for qid in ids:
                    self.issue[qid] = now
                orig(sut, ids, indices)

            return f

        def first_token(orig: Any) -> Any:
            def f(sut: Any, sample: Any, arr: Any) -> None:  # LoadGenSUT._send_first_token: before FirstTokenComplete
                self.ftc[sample.qid] = time.time_ns()
                orig(sut, sample, arr)

            return f

        def start(orig: Any) -> Any:
            def f(conn: Any, req: Any, raw: bytes) -> None:
                if isinstance(req, sse_protocol._Stream):  # a completion (not the /v1/models probe)
                    self.write.append(time.time_ns())
                orig(conn, req, raw)

            return f

        def on_event(orig: Any) -> Any:
            def f(stream: Any, data: bytes) -> bool:
                known = stream.first.done()
                now = time.time_ns()
                ok: bool = orig(stream, data)
                if not known and stream.first.done() and stream.error is None:
                    self.rx.append(now)
                return ok

            return f

        wrap(sut_module.LoadGenSUT, "issue", issue)
        wrap(sut_module.LoadGenSUT, "_send_first_token", first_token)
        wrap(http_connection.Connection, "start", start)
        wrap(sse_protocol._Stream, "on_event", on_event)

        def undo() -> None:
            for owner, name, orig in reversed(originals):
                setattr(owner, name, orig)

        return undo


def _pct_us(values: np.ndarray) -> dict[str, Any]:
    us = values / 1e3
    return {
        "p50_us": float(np.percentile(us, 50)),
        "p90_us": float(np.percentile(us, 90)),
        "p99_us": float(np.percentile(us, 99)),
        "max_us": float(us.max()),
        "count": int(us.size),
    }


def hop_table(stamps: Stamps, records: list[dict[str, Any]]) -> dict[str, Any]:
    """Per-hop percentiles; requests paired by rank (see the module docstring)."""
    completions = [r for r in records if str(r.get("path", "")).endswith("completions") and r.get("send_ns")]
    columns = {
        "issue": sorted(stamps.issue.values()),
        "write": sorted(stamps.write),
        "srv_recv": sorted(int(r["recv_ns"]) for r in completions),
        "srv_first": sorted(int(r["send_ns"][0]) for r in completions),
        "rx": sorted(stamps.rx),
        "ftc": sorted(stamps.ftc.values()),
    }
    counts = {k: len(v) for k, v in columns.items()}
    if len(set(counts.values())) != 1:
        return {"joined": False, "counts": counts}
    arrays = {k: np.asarray(v, dtype=np.int64) for k, v in columns.items()}
    return {
        "joined": True,
        "counts": counts,
        "hops": {label: _pct_us(arrays[b] - arrays[a]) for label, a, b in HOPS},
    }


def _start_server(work: Path, ttft_ms: float, tpot_ms: float, tokens: int) -> tuple[subprocess.Popen[bytes], str]:
    port_file = work / "port"
    proc = subprocess.Popen(
        [sys.executable, str(REPO / "bench" / "token_server.py"), "--port", "0", "--port-file", str(port_file),
         "--ttft-ms", f"{ttft_ms:g}", "--tpot-ms", f"{tpot_ms:g}", "--tokens", str(tokens), "--model", "m",
         "--owned-by", "vllm"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 30
    while not (port_file.exists() and port_file.read_text().strip()):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise SystemExit("sut_hops: the token server did not start")
        time.sleep(0.05)
    return proc, f"http://127.0.0.1:{int(port_file.read_text())}"


def run(qps: float, duration_s: float, ttft_ms: float, tpot_ms: float, tokens: int, work: Path) -> dict[str, Any]:
    server, url = _start_server(work, ttft_ms, tpot_ms, tokens)
    stamps = Stamps()
    undo = stamps.install()
    loop_thread = sut_module.LoopThread()
    try:
        engine = OpenAIEngine(OpenAIConfig(endpoints=(url,), model="m"))
        loop_thread.run(engine.start(), timeout_s=30)
        requests = {
            i: GenerationRequest(sample_index=i, prompt=f"prompt {i}", max_new_tokens=tokens) for i in range(32)
        }
        engine.prepare(requests)
        sut = sut_module.LoadGenSUT(engine, requests.__getitem__, report_first_token=True, loop_thread=loop_thread)
        detail = run_server_test(sut.construct(), qps, duration_s, work)
        loop_thread.run(engine.close(), timeout_s=30)
        sut.destroy()
        with urllib.request.urlopen(url + "/_bench/records?reset=1", timeout=60) as resp:
            records = json.loads(resp.read())["records"]
    finally:
        loop_thread.stop()
        undo()
        server.terminate()
        server.wait(10)
    return {
        "qps": qps,
        "event_loop": loop_thread.kind,
        "loadgen_ttft_ms": first_token_ms(detail),
        "validity": detail.result_validity,
        **hop_table(stamps, records),
    }


def print_table(result: dict[str, Any]) -> None:
    print(f"{result['qps']:g} req/s, {result['event_loop']}, LoadGen {result['validity']}: TTFT p50 "
          f"{result['loadgen_ttft_ms']['p50']:.3f} ms, p99 {result['loadgen_ttft_ms']['p99']:.3f} ms "
          f"(n={result['loadgen_ttft_ms']['count']})")  # fmt: skip
    if not result["joined"]:
        print(f"stamps and server records differ in count, not joined: {result['counts']}")
        return
    print(f"{'hop':38} {'p50 us':>9} {'p90 us':>9} {'p99 us':>9} {'max us':>9}  n")
    for label, v in result["hops"].items():
        print(f"{label:38} {v['p50_us']:9.0f} {v['p90_us']:9.0f} {v['p99_us']:9.0f} {v['max_us']:9.0f}  {v['count']}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--qps", type=float, default=50.0)
    p.add_argument("--duration-s", type=float, default=12.0)
    p.add_argument("--ttft-ms", type=float, default=200.0)
    p.add_argument("--tpot-ms", type=float, default=20.0)
    p.add_argument("--tokens", type=int, default=64)
    p.add_argument("--json", action="store_true", help="print the numbers as JSON")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="sut-hops-") as tmp:
        result = run(args.qps, args.duration_s, args.ttft_ms, args.tpot_ms, args.tokens, Path(tmp))
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        print_table(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
