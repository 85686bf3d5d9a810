"""Load a peer tool's result file: read it as bounded JSON, tell which tool wrote it, and hand it to that tool's
reader, which makes the :class:`~checker.audit.peers.model.PeerRun` of each run in it:

- AIPerf and GenAI-Perf ``profile_export_*.json``: :mod:`checker.audit.peers.aiperf`;
- GuideLLM ``benchmarks.json``: :mod:`checker.audit.peers.guidellm`;
- ``vllm bench serve --save-result`` JSON: :mod:`checker.audit.peers.vllm_bench`;
- ``inference-audit run`` ``run-record.json``: :mod:`checker.audit.peers.run_record`.

A file in none of these shapes raises :class:`~checker.findings.UnusableInput` naming it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from checker.audit.peers.aiperf import read_aiperf_family
from checker.audit.peers.guidellm import read_guidellm
from checker.audit.peers.model import PeerRun, PeerTool
from checker.audit.peers.run_record import read_run_record
from checker.audit.peers.vllm_bench import read_vllm_bench
from checker.findings import UnusableInput
from checker.safe_io import display_name, read_input_bytes
from checker.safe_json import JsonProblem, parse_json


def load_peer_runs(path: Path) -> list[PeerRun]:
    """Every run in ``path`` (a GuideLLM file may hold a sweep of several)."""
    data = load_peer_json(path)
    tool = detect_tool(data)
    if tool is None:
        raise UnusableInput(
            "not a result file of GuideLLM (benchmarks.json), AIPerf / GenAI-Perf (profile_export_*.json), "
            "vllm bench serve (--save-result JSON) or inference-audit run (run-record.json)",
            str(path),
        )
    assert isinstance(data, dict)
    if tool is PeerTool.GUIDELLM:
        return read_guidellm(path, data)
    if tool is PeerTool.VLLM_BENCH:
        return [read_vllm_bench(path, data)]
    if tool is PeerTool.INFERENCE_AUDIT:
        return [read_run_record(path, data)]
    return [read_aiperf_family(path, data, tool)]


def load_peer_json(path: Path) -> Any:
    """The JSON document of a peer result file: a regular file (a FIFO or device is refused without blocking),
    capped in size, parsed with bounded depth and integer length; raises :class:`UnusableInput` naming it."""
    raw = read_input_bytes(path, what="result file")
    where = display_name(str(path))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnusableInput(f"cannot read the result file: not UTF-8 text (byte {exc.start})", where) from exc
    try:
        return parse_json(text)
    except JsonProblem as exc:
        raise UnusableInput(f"invalid JSON: {exc.msg}", where, exc.lineno) from exc


def detect_tool(data: Any) -> PeerTool | None:
    if not isinstance(data, dict):
        return None
    if (
        data.get("tool") == "inference-audit"
        and isinstance(data.get("settings"), dict)
        and isinstance(data.get("tests"), list)
    ):
        return PeerTool.INFERENCE_AUDIT
    benches = data.get("benchmarks")
    if isinstance(benches, list) and benches and isinstance(benches[0], dict) and "metrics" in benches[0]:
        return PeerTool.GUIDELLM
    cfg = data.get("input_config")
    if isinstance(cfg, dict) and isinstance(data.get("request_throughput"), dict):
        if "aiperf_version" in data or any(k in cfg for k in ("loadgen", "phases", "models")):
            return PeerTool.AIPERF
        if isinstance(cfg.get("endpoint"), dict) and "perf_analyzer" not in cfg:
            return PeerTool.AIPERF
        return PeerTool.GENAI_PERF
    if "request_throughput" in data and any(
        k in data for k in ("mean_ttft_ms", "output_throughput", "mean_e2el_ms")
    ):
        return PeerTool.VLLM_BENCH
    return None
