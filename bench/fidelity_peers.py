"""Peer load generators from PyPI (AIPerf, GuideLLM), driven at a fixed Poisson rate (for bench/sut_fidelity.py).

Each peer runs from its own venv (``bench/peers/setup_peers.sh``; any venv holding a peer's CLI does: ``--peers-venv``
or ``$PEERS_VENV``), against the token server, with a local word-level tokenizer (``bench/peers/make_tokenizer.py``)
because its default tokenizer comes from the Hugging Face hub: the venv's ``word-tokenizer``, else one built with the
venv's python in the output directory. What is read back from each peer's own JSON export:

* TTFT p50/p99 as the peer reports it (its percentile definition, not LoadGen's);
* TPOT p50/p99 as (e2e - TTFT) / (tokens - 1), LoadGen's formula: AIPerf ``inter_token_latency``,
  GuideLLM ``inter_token_latency_ms`` (GuideLLM's ``time_per_output_token_ms`` includes the TTFT);
* the request counts, successes and errors, and the request rate it reports.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fidelity_stats import NOT_MEASURED, Pct

DEFAULT_PEERS_VENV = Path(os.environ.get("PEERS_VENV", Path.home() / ".cache/inference-audit/venv-peers"))
PEERS = ("aiperf", "guidellm")
MAKE_TOKENIZER = Path(__file__).resolve().parent / "peers" / "make_tokenizer.py"


@dataclass(frozen=True)
class PeerRun:
    """How to run one peer once, and where its results land."""

    name: str
    argv: list[str]
    out_dir: Path


@dataclass(frozen=True)
class PeerReport:
    """What a peer reported about its own run."""

    name: str
    version: str | None
    ttft: Pct
    tpot: Pct
    requests_ok: int | None
    requests_failed: int | None
    reported_rate_per_s: float | None
    problem: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "ttft": self.ttft.to_json(),
            "tpot": self.tpot.to_json(),
            "requests_ok": self.requests_ok,
            "requests_failed": self.requests_failed,
            "reported_rate_per_s": self.reported_rate_per_s,
            "problem": self.problem,
        }


def failed_report(name: str, problem: str) -> PeerReport:
    return PeerReport(name, None, NOT_MEASURED, NOT_MEASURED, None, None, None, problem)


def available_peers(venv: Path, wanted: Sequence[str], work: Path) -> tuple[list[str], list[str], Path]:
    """(peers whose CLI exists in the venv, messages about the missing ones, the peers' tokenizer directory).

    The tokenizer is the venv's ``word-tokenizer`` (``setup_peers.sh`` makes it), else one written now into
    ``work/word-tokenizer`` by the venv's python (which has the ``tokenizers`` package the peers need)."""
    found: list[str] = []
    missing: list[str] = []
    for name in wanted:
        if (venv / "bin" / name).exists():
            found.append(name)
        else:
            missing.append(f"{name}: not in {venv} (run bench/peers/setup_peers.sh, or give --peers-venv)")
    tokenizer = venv / "word-tokenizer"
    if found and not (tokenizer / "tokenizer.json").exists():
        tokenizer = work / "word-tokenizer"
        proc = subprocess.run(
            [str(venv / "bin" / "python"), str(MAKE_TOKENIZER), str(tokenizer)],
            capture_output=True, text=True, check=False, timeout=120,
        )  # fmt: skip
        if proc.returncode != 0 or not (tokenizer / "tokenizer.json").exists():
            why = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
            missing.extend(f"{n}: no word tokenizer in {venv} and none could be made ({why})" for n in found)
            found = []
    return found, missing, tokenizer


def aiperf_run(
    venv: Path,
    tokenizer: Path,
    url: str,
    model: str,
    rate: float,
    requests: int,
    tokens: int,
    prompt_tokens: int,
    out_dir: Path,
) -> PeerRun:
    argv = [
        str(venv / "bin" / "aiperf"), "profile",
        "--model", model,
        "--url", url,
        "--endpoint-type", "completions",
        "--streaming",
        "--request-rate", f"{rate:g}",
        "--arrival-pattern", "poisson",
        "--request-count", str(requests),
        "--tokenizer", str(tokenizer),
        "--use-server-token-count",
        "--prompt-input-tokens-mean", str(prompt_tokens),
        "--prompt-output-tokens-mean", str(tokens),
        "--ui", "none",
        "--no-server-metrics",
        "--no-gpu-telemetry",
        "--output-artifact-dir", str(out_dir),
    ]  # fmt: skip
    return PeerRun("aiperf", argv, out_dir)


def guidellm_run(
    venv: Path,
    tokenizer: Path,
    url: str,
    model: str,
    rate: float,
    requests: int,
    tokens: int,
    prompt_tokens: int,
    out_dir: Path,
) -> PeerRun:
    argv = [
        str(venv / "bin" / "guidellm"), "run",
        "--backend", f"kind=openai_http,target={url},model={model}",
        "--profile", f"kind=poisson,rate={rate:g}",
        "--constraint", f"kind=max_requests,count={requests}",
        "--data", f"kind=synthetic_text,prompt_tokens={prompt_tokens},output_tokens={tokens}",
        "--tokenizer", f"kind=hf_auto,model={tokenizer}",
        "--output", f"kind=json,path={out_dir / 'guidellm.json'}",
        "--disable-progress",
    ]  # fmt: skip
    return PeerRun("guidellm", argv, out_dir)


def _pct_from(stats: Any, p50: str, p99: str, count: str) -> Pct:
    if not isinstance(stats, dict):
        return NOT_MEASURED
    try:
        return Pct(float(stats[p50]), float(stats[p99]), int(stats[count]))
    except (KeyError, TypeError, ValueError):
        return NOT_MEASURED


def read_aiperf(out_dir: Path) -> PeerReport:
    path = out_dir / "profile_export_aiperf.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return failed_report("aiperf", f"no readable {path}: {exc}")
    ok = data.get("completed_request_count", data.get("request_count", {}))
    ok_n = int(ok["avg"]) if isinstance(ok, dict) and "avg" in ok else None
    errors = data.get("error_summary") or []
    failed = (
        sum(int(e.get("count", 0)) for e in errors if isinstance(e, dict))
        if isinstance(errors, list)
        else None
    )
    rate = data.get("request_throughput", {})
    return PeerReport(
        "aiperf",
        str(data.get("aiperf_version")) if data.get("aiperf_version") else None,
        _pct_from(data.get("time_to_first_token"), "p50", "p99", "count"),
        _pct_from(data.get("inter_token_latency"), "p50", "p99", "count"),
        ok_n,
        failed,
        float(rate["avg"]) if isinstance(rate, dict) and "avg" in rate else None,
    )


def read_guidellm(out_dir: Path) -> PeerReport:
    path = out_dir / "guidellm.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        bench = data["benchmarks"][0]
        metrics = bench["metrics"]
    except (OSError, ValueError, KeyError, IndexError, TypeError) as exc:
        return failed_report("guidellm", f"no readable benchmark in {path}: {exc}")
    totals = metrics.get("request_totals", {})

    def pct(name: str) -> Pct:
        ok = metrics.get(name, {}).get("successful", {})
        if not isinstance(ok, dict) or not isinstance(ok.get("percentiles"), dict):
            return NOT_MEASURED
        pcts = ok["percentiles"]
        count = int(totals.get("successful", ok.get("count", 0)))
        return Pct(float(pcts["p50"]), float(pcts["p99"]), count)

    duration = bench.get("duration")
    ok_n = int(totals["successful"]) if "successful" in totals else None
    rate = (
        ok_n / float(duration)
        if ok_n is not None and isinstance(duration, (int, float)) and duration
        else None
    )
    version = data.get("metadata", {}).get("guidellm_version")
    failed = int(totals.get("errored", 0)) + int(totals.get("incomplete", 0)) if totals else None
    return PeerReport(
        "guidellm", str(version) if version else None, pct("time_to_first_token_ms"), pct("inter_token_latency_ms"),
        ok_n, failed, rate,
    )  # fmt: skip


def make_run(
    name: str, venv: Path, tokenizer: Path, url: str, model: str, rate: float, requests: int, tokens: int,
    prompt_tokens: int, out_dir: Path,
) -> PeerRun:  # fmt: skip
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    maker = aiperf_run if name == "aiperf" else guidellm_run
    return maker(venv, tokenizer, url, model, rate, requests, tokens, prompt_tokens, out_dir)


def read_report(name: str, out_dir: Path) -> PeerReport:
    return read_aiperf(out_dir) if name == "aiperf" else read_guidellm(out_dir)
