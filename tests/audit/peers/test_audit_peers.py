"""Peer-tool result files (GuideLLM, AIPerf, GenAI-Perf, vllm bench serve): parsing, and what keeps runs from
being comparable with each other or with MLPerf — one file breaking each rule, one honouring it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from checker.audit.peers.layouts import ITL_AIPERF, ITL_VLLM
from checker.audit.peers.load import load_peer_runs
from checker.audit.peers.model import ClientArchitecture, LoadMode, PeerTool
from checker.findings import UnusableInput

GUIDELLM = "guidellm_benchmarks.json"
AIPERF = "aiperf_profile_export_aiperf.json"
GENAI = "genai_perf_profile_export_genai_perf.json"
VLLM_HIGH = "vllm_bench_serve_c256.json"
VLLM_SHAREGPT = "vllm_bench_serve_sharegpt_detailed.json"

# every reproducibility field a file does not record, given in the claim
FULL_METADATA = {
    "engine": "vllm 0.9.1",
    "model_revision": "0e9e39f249a16976918f6564b8830bc894c89659",
    "precision": "bf16",
    "hardware": "1x H100-SXM-80GB",
    "slo": "TTFT p99 < 500 ms, ITL p95 < 50 ms",
    "run_id": "20260616T1200",
    "tool_version": "0.4.0",
}


def test_parse_each_tool(peers_dir: Path) -> None:
    g = load_peer_runs(peers_dir / GUIDELLM)[0]
    assert (g.tool, g.client, g.load_mode, g.concurrency) == (
        PeerTool.GUIDELLM,
        ClientArchitecture.MULTI_PROCESS,
        LoadMode.CONCURRENCY,
        16.0,
    )
    assert (g.tool_version, g.run_id, g.ignore_eos, g.output_tokens_configured) == (
        "0.4.0",
        "20260616T1200",
        True,
        128.0,
    )
    assert g.ttft is not None and g.ttft.percentiles_ms["p99"] == 390.0 and g.ttft.count == 960
    assert g.e2e is not None and g.e2e.mean_ms == pytest.approx(4710.0)  # request_latency is in seconds
    a = load_peer_runs(peers_dir / AIPERF)[0]
    assert (a.tool, a.model, a.concurrency, a.ignore_eos, a.warmup) == (
        PeerTool.AIPERF,
        "meta-llama/Llama-3.1-8B-Instruct",
        16.0,
        True,
        "32",
    )
    assert a.itl_formula == ITL_AIPERF and a.output_throughput_tps == 408.0
    n = load_peer_runs(peers_dir / GENAI)[0]
    assert (n.tool, n.client, n.model, n.concurrency, n.ignore_eos) == (
        PeerTool.GENAI_PERF,
        ClientArchitecture.NATIVE,
        "gpt2_vllm",
        1.0,
        True,
    )
    assert n.ttft is not None and n.ttft.mean_ms == pytest.approx(
        20.7577712
    )  # ns -> ms, values written as strings
    v = load_peer_runs(peers_dir / VLLM_HIGH)[0]
    assert (v.tool, v.client, v.concurrency, v.request_rate, v.itl_formula) == (
        PeerTool.VLLM_BENCH,
        ClientArchitecture.SINGLE_PROCESS,
        256.0,
        None,
        ITL_VLLM,
    )
    assert (v.output_tokens_mean, v.goodput, v.ignore_eos) == (128.0, None, None)
    d = load_peer_runs(peers_dir / VLLM_SHAREGPT)[0]
    assert (d.output_tokens_min, d.output_tokens_max) == (58.0, 402.0)
    assert d.ttft is not None and not d.ttft.has_tail  # --metric-percentiles 50


def test_not_a_result_file(tmp_path: Path) -> None:
    p = tmp_path / "x.json"
    p.write_text(json.dumps({"hello": 1}))
    with pytest.raises(UnusableInput, match="not a result file"):
        load_peer_runs(p)


def _claim(tmp_path: Path, peers_dir: Path, files: list[str], **extra: Any) -> Path:
    meta = extra.pop("metadata", None)
    results = []
    for f in files:
        entry: dict[str, Any] = {"file": str(peers_dir / f)}
        if meta is not None:
            entry["metadata"] = meta
        results.append(entry)
    path = tmp_path / "claim.yaml"
    path.write_text(
        json.dumps(
            {
                "text": extra.pop("text", "Throughput comparison of two runs (tokens/s)."),
                "results": results,
                **extra,
            }
        )
    )
    return path


def _rules(run: Any) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for r in run.report["rules"]:
        out.setdefault(r["rule"], []).append(r)
    return out


CASES = [
    # rule, files that break it, files that honour it, claim extras
    ("PEER-CLIENT", [VLLM_HIGH], [GUIDELLM], {}),
    ("PEER-EOS", [VLLM_SHAREGPT], [GUIDELLM], {}),
    ("PEER-OSL", [GUIDELLM, VLLM_SHAREGPT], [GUIDELLM, AIPERF], {}),
    ("PEER-PERCENTILES", [VLLM_SHAREGPT], [AIPERF], {"text": "TTFT latency comparison (ms)."}),
    ("PEER-GOODPUT", [AIPERF], None, {"slo": "TTFT p99 < 500 ms"}),
    (
        "PEER-ITL",
        [VLLM_SHAREGPT, AIPERF],
        [GUIDELLM, AIPERF],
        {"text": "ITL comparison (inter-token latency)."},
    ),
    ("PEER-LOAD", [VLLM_HIGH, GUIDELLM], [GUIDELLM, AIPERF], {}),
    ("PEER-TOKENIZER", [GENAI, AIPERF], [GUIDELLM, AIPERF], {}),
    ("PEER-MODEL", [GENAI, AIPERF], [GUIDELLM, AIPERF], {}),
]


@pytest.mark.parametrize(("rule", "breaking", "honouring", "extra"), CASES, ids=[c[0] for c in CASES])
def test_peer_rule(
    audit,
    peers_dir: Path,
    tmp_path: Path,
    rule: str,
    breaking: list[str],
    honouring: list[str] | None,
    extra: dict[str, Any],
) -> None:
    run = audit("claim", str(_claim(tmp_path, peers_dir, breaking, **dict(extra))))
    assert run.code == 1
    hits = [r for r in _rules(run).get(rule, []) if r["kind"] == "not-comparable" or r["satisfied"] is False]
    assert hits, run.out
    assert all(h["source"].startswith("ARTICLES:") for h in hits)
    if honouring is not None:
        run = audit("claim", str(_claim(tmp_path, peers_dir, honouring, **dict(extra))))
        bad = [
            r for r in _rules(run).get(rule, []) if r["kind"] == "not-comparable" or r["satisfied"] is False
        ]
        assert bad == [], run.out


def test_goodput_reported_under_slo(audit, peers_dir: Path, tmp_path: Path) -> None:
    data = json.loads((peers_dir / AIPERF).read_text())
    data["goodput"] = {"unit": "requests/sec", "avg": 3.05}
    (tmp_path / "peers").mkdir()
    (tmp_path / "peers" / AIPERF).write_text(json.dumps(data))
    run = audit("claim", str(_claim(tmp_path, tmp_path / "peers", [AIPERF], slo="TTFT p99 < 500 ms")))
    assert "PEER-GOODPUT" not in _rules(run)


def test_missing_metadata_then_supplied(audit, peers_dir: Path, tmp_path: Path) -> None:
    run = audit("claim", str(_claim(tmp_path, peers_dir, [GUIDELLM, AIPERF])))
    meta = [r for r in _rules(run)["PEER-META"] if r["satisfied"] is False]
    assert len(meta) == 2 and "serving engine and version" in meta[0]["reason"]
    assert run.code == 1 and run.report["verdict"] == "comparable-with-disclosures"
    run = audit("claim", str(_claim(tmp_path, peers_dir, [GUIDELLM, AIPERF], metadata=FULL_METADATA)))
    assert "PEER-META" not in _rules(run)


def test_comparable_peer_runs(audit, peers_dir: Path, tmp_path: Path) -> None:
    """Two AIPerf runs of the same setup, every field recorded, goodput under the declared SLO: comparable."""
    data = json.loads((peers_dir / AIPERF).read_text())
    data["goodput"] = {"unit": "requests/sec", "avg": 3.05}
    (tmp_path / "p").mkdir()
    for name in ("a.json", "b.json"):
        (tmp_path / "p" / name).write_text(json.dumps(data))
    run = audit(
        "claim",
        str(
            _claim(
                tmp_path,
                tmp_path / "p",
                ["a.json", "b.json"],
                metadata=FULL_METADATA,
                slo=FULL_METADATA["slo"],
            )
        ),
    )
    assert run.code == 0, run.out
    assert run.report["verdict"] == "comparable"


def test_peer_run_against_mlperf(audit, peers_dir: Path, rows_table: Path, tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(
        json.dumps(
            {
                "text": "Our vLLM box (409.6 tokens/s, unverified) vs MLPerf® Inference v5.1 5.1-0001.",
                "results": [
                    {"file": str(peers_dir / GUIDELLM)},
                    {"id": "5.1-0001", "benchmark": "llama2-70b-99", "scenario": "Offline"},
                ],
            }
        )
    )
    run = audit("claim", str(path), "--table", str(rows_table))
    assert run.report["verdict"] == "not-comparable"
    assert any(r["rule"] == "CMP-05" and r["kind"] == "not-comparable" for r in run.report["rules"])


def test_result_files_as_arguments(audit, peers_dir: Path) -> None:
    """``inference-audit claim a.json b.json``: peer files straight on the command line."""
    run = audit("claim", str(peers_dir / VLLM_HIGH), str(peers_dir / GUIDELLM))
    assert run.code == 1
    rules = _rules(run)
    assert {"PEER-CLIENT", "PEER-LOAD"} <= set(rules)
    assert [r["origin"] for r in run.report["results"]] == ["peer", "peer"]
