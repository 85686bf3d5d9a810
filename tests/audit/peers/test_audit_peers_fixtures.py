"""Result files written by the peer tools themselves are the contract of the peer parser.

Each directory ``fixtures/peers/<tool>-<version>/<case>/`` holds one file exactly as that release wrote it against
``bench/token_server.py`` (``bench/peers/capture_fixtures.py``; PROVENANCE.txt gives the command and the date).
For every one of them:

* each field the audit needs sits at the JSON path this release writes it to (``PATHS``), and the parser reads
  exactly what is there (``EXPECTED``): a later release that moves a field fails here once its files are
  captured, until that tool's reader (:mod:`checker.audit.peers.load` names them) reads the new layout;
* ``inference-audit claim`` on it names, under PEER-META, exactly the reproducibility fields the file lacks --
  never one it carries -- and says which of them the tool never writes.

A captured directory without an entry here fails: the contract must be written for every release captured.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from checker.audit.peers.layouts import (
    ITL_AIPERF,
    ITL_VLLM,
    LAYOUT_AIPERF_013,
    LAYOUT_GUIDELLM_08,
    LAYOUT_VLLM,
    NOT_WRITTEN,
)
from checker.audit.peers.load import detect_tool, load_peer_runs
from checker.audit.peers.model import REPRODUCIBILITY_FIELDS, ClientArchitecture, LoadMode, PeerRun, PeerTool

PEERS = Path(__file__).resolve().parents[1] / "fixtures" / "peers"
TOKENIZER = (
    "/root/.cache/inference-audit/venv-peers/word-tokenizer"  # the word-level tokenizer of the capture
)


def _captured() -> list[Path]:
    """Every captured result file: <tool>-<version>/<case>/<file>.json."""
    return sorted(p for p in PEERS.glob("*-*/*/*.json"))


def _case(path: Path) -> str:
    return f"{path.parent.parent.name}/{path.parent.name}"


def _at(data: Any, path: str) -> Any:
    """The value at a dotted JSON path; ``[n]`` indexes a list, ``[kind=profiling]`` picks the matching item."""
    node = data
    for part in path.replace("[", ".[").split("."):
        if not part:
            continue
        if part.startswith("["):
            inner = part[1:-1]
            if "=" in inner:
                key, want = inner.split("=", 1)
                node = next(x for x in node if isinstance(x, dict) and str(x.get(key)) == want)
            else:
                node = node[int(inner)]
        else:
            node = node[part]
    return node


# Where each release writes each field (the layout; shared by every case of that release).
PATHS: dict[str, dict[str, str]] = {
    "aiperf-0.13.0": {
        "tool_version": "aiperf_version",
        "run_id": "benchmark_id",
        "run_id (run_info)": "run_info.benchmark_id",
        "command": "run_info.cli_command",
        "model": "input_config.models.items[0].name",
        "tokenizer": "input_config.tokenizer.name",
        "load": "input_config.phases[kind=profiling].type",
        "requests": "input_config.phases[kind=profiling].requests",
        "input_tokens (configured)": "input_config.datasets[0].prompts.isl.mean",
        "output_tokens (configured)": "input_config.datasets[0].prompts.osl.mean",
        "output_tokens": "output_sequence_length.avg",
        "ttft p99": "time_to_first_token.p99",
        "ttft count": "time_to_first_token.count",
        "itl p99": "inter_token_latency.p99",
        "e2e p99": "request_latency.p99",
        "request_throughput": "request_throughput.avg",
        "output_throughput": "output_token_throughput.avg",
        "requests_completed": "request_count.avg",
    },
    "guidellm-0.8.1": {
        "tool_version": "metadata.guidellm_version",
        "run_id": "benchmarks[0].config.run_id",
        "model": "benchmarks[0].config.backend.model",
        "tokenizer": "config.spec.tokenizer.model",
        "load": "benchmarks[0].config.strategy.type_",
        "warmup": "benchmarks[0].config.warmup",
        "output_tokens (configured)": "config.spec.data[0].output_tokens",
        "ignore_eos (as sent)": "benchmarks[0].requests.successful[0].request_args",
        "output_tokens": "benchmarks[0].metrics.output_token_count.successful.mean",
        "ttft p99": "benchmarks[0].metrics.time_to_first_token_ms.successful.percentiles.p99",
        "ttft count": "benchmarks[0].metrics.time_to_first_token_ms.successful.count",
        "itl p99": "benchmarks[0].metrics.inter_token_latency_ms.successful.percentiles.p99",
        "tpot p99": "benchmarks[0].metrics.time_per_output_token_ms.successful.percentiles.p99",
        "e2e p99 (s)": "benchmarks[0].metrics.request_latency.successful.percentiles.p99",
        "requests_completed": "benchmarks[0].metrics.request_totals.successful",
        "request_throughput": "benchmarks[0].metrics.requests_per_second.successful.mean",
    },
    "vllm-bench-serve-0.32.0": {
        "run_id (date)": "date",
        "model": "model_id",
        "tokenizer": "tokenizer_id",
        "request_rate": "request_rate",
        "burstiness": "burstiness",
        "max_concurrency": "max_concurrency",
        "requests_completed": "completed",
        "output_tokens (total)": "total_output_tokens",
        "ttft p99": "p99_ttft_ms",
        "tpot p99": "p99_tpot_ms",
        "itl p99": "p99_itl_ms",
        "e2e p99": "p99_e2el_ms",
        "goodput": "request_goodput",
        "request_throughput": "request_throughput",
        "output_throughput": "output_throughput",
    },
    "inference-audit-0.1.0": {
        "tool_version": "tool_version",
        "run_id": "run_id",
        "command": "command",
        "scenario": "scenario",
        "request_rate": "settings.server_target_qps",
        "slo (TTFT)": "settings.ttft_latency_ns",
        "slo (TPOT)": "settings.tpot_latency_ns",
        "engine": "engine.name",
        "model": "engine.model",
        "precision": "engine.precision",
        "tokenizer": "engine.tokenizer",
        "hardware": "hardware.cpu_model",
        "ignore_eos": "generation.ignore_eos",
        "output_tokens": "tests[name=performance].output_tokens.mean",
        "ttft p99": "tests[name=performance].loadgen.ttft_p99_ns.value",
        "ttft count": "tests[name=performance].loadgen.ttft_p99_ns.count",
        "tpot p99": "tests[name=performance].loadgen.tpot_p99_ns.value",
        "slo met": "tests[name=performance].loadgen.perf_constraints_met",
        "validity": "tests[name=performance].loadgen.result_validity",
        "output_throughput": "tests[name=performance].loadgen.result_value",
    },
}

# What the parser reads from each captured file, and which reproducibility fields that file lacks.
EXPECTED: dict[str, dict[str, Any]] = {
    "aiperf-0.13.0/rate-50": {
        "tool": PeerTool.AIPERF, "tool_version": "0.13.0", "layout": LAYOUT_AIPERF_013,
        "client": ClientArchitecture.MULTI_PROCESS, "itl_formula": ITL_AIPERF,
        "model": "tiny-model", "tokenizer": TOKENIZER,
        "load_mode": LoadMode.RATE, "request_rate": 50.0, "concurrency": None, "arrival": "poisson",
        "warmup": "10 requests", "slo": "time_to_first_token:100 inter_token_latency:20", "ignore_eos": True,
        "run_id": "2b8d599c488b", "input_tokens_mean": 32.0, "output_tokens_mean": 16.0,
        "output_tokens_configured": 16.0, "requests_completed": 150,
        "ttft_count": 150, "has_goodput": True,
        "missing": {"engine", "model", "precision", "hardware"},
    },
    "aiperf-0.13.0/concurrency-8": {
        "tool": PeerTool.AIPERF, "tool_version": "0.13.0", "layout": LAYOUT_AIPERF_013,
        "model": "tiny-model", "tokenizer": TOKENIZER,
        "load_mode": LoadMode.CONCURRENCY, "concurrency": 8.0, "request_rate": None, "arrival": None,
        "warmup": "none", "slo": None, "ignore_eos": None,
        "run_id": "bd9c024065b2", "output_tokens_configured": 16.0, "requests_completed": 150,
        "ttft_count": 150, "has_goodput": False,
        "missing": {"engine", "model", "precision", "hardware", "slo"},
    },
    "guidellm-0.8.1/rate-50": {
        "tool": PeerTool.GUIDELLM, "tool_version": "0.8.1", "layout": LAYOUT_GUIDELLM_08,
        "client": ClientArchitecture.MULTI_PROCESS,
        "model": "tiny-model", "tokenizer": TOKENIZER,
        "load_mode": LoadMode.RATE, "request_rate": 50.0, "concurrency": None, "arrival": "poisson",
        "warmup": "10 (prefer_duration)", "slo": "ttft_ms:100 tpot_ms:20", "ignore_eos": True,
        "run_id": "165f5bac-89f7-4ae8-a8a1-fd2e723489ac", "output_tokens_mean": 16.0,
        "output_tokens_configured": 16.0, "requests_completed": 150,
        "ttft_count": 142, "has_goodput": True,
        "missing": {"engine", "model", "precision", "hardware"},
    },
    "guidellm-0.8.1/concurrency-8": {
        "tool": PeerTool.GUIDELLM, "tool_version": "0.8.1", "layout": LAYOUT_GUIDELLM_08,
        "model": "tiny-model", "tokenizer": TOKENIZER,
        "load_mode": LoadMode.CONCURRENCY, "concurrency": 8.0, "request_rate": None,
        "warmup": "none", "slo": None, "ignore_eos": True,
        "run_id": "f2d704a2-8d85-4591-a262-c8514bc3bb6b", "requests_completed": 150,
        "ttft_count": 150, "has_goodput": False,
        "missing": {"engine", "model", "precision", "hardware", "slo"},
    },
    "vllm-bench-serve-0.32.0/rate-50": {
        "tool": PeerTool.VLLM_BENCH, "tool_version": None, "layout": LAYOUT_VLLM,
        "client": ClientArchitecture.SINGLE_PROCESS, "itl_formula": ITL_VLLM,
        "model": "tiny-model", "tokenizer": TOKENIZER,
        "load_mode": LoadMode.RATE, "request_rate": 50.0, "concurrency": None, "arrival": "poisson",
        "warmup": None, "slo": None, "ignore_eos": None,
        "run_id": "20261201-095943", "input_tokens_mean": 32.0, "output_tokens_mean": 16.0,
        "requests_completed": 150, "ttft_count": 150, "has_goodput": True,
        "missing": {"engine", "model", "precision", "hardware", "tool_version", "slo", "warmup"},
    },
    "vllm-bench-serve-0.32.0/concurrency-8": {
        "tool": PeerTool.VLLM_BENCH, "layout": LAYOUT_VLLM,
        "load_mode": LoadMode.CONCURRENCY, "concurrency": 8.0, "request_rate": None, "arrival": None,
        "run_id": "20261201-095953", "output_tokens_min": 16.0, "output_tokens_max": 16.0,
        "requests_completed": 150, "ttft_count": 150, "has_goodput": False,
        "missing": {"engine", "model", "precision", "hardware", "tool_version", "slo", "warmup"},
    },
    "inference-audit-0.1.0/server-50qps": {
        "tool": PeerTool.INFERENCE_AUDIT, "tool_version": "0.1.0",
        "client": ClientArchitecture.LOADGEN, "itl_formula": ITL_AIPERF,
        "model": "llama3.1-8b (simulated)", "tokenizer": "simulated-word-tokenizer",
        "engine": "simulated (simulated engine: no serving engine)", "precision": "n/a (simulated)",
        "load_mode": LoadMode.RATE, "request_rate": 50.0, "concurrency": None, "arrival": "poisson",
        "slo": "TTFT p99 <= 2000 ms, TPOT p99 <= 100 ms", "slo_met": True, "validity": "INVALID",
        "warmup": "none (LoadGen times every query)", "ignore_eos": False,
        "run_id": "20261201T100325Z-cefee8", "output_tokens_min": 18.0, "output_tokens_max": 25.0,
        "requests_completed": 160, "ttft_count": 160, "has_goodput": False,
        # the record has the keys, with null values: dataset.input_tokens, engine.model_revision
        "missing": {"input_tokens", "model"},
    },
}  # fmt: skip
_DERIVED = {"missing", "ttft_count", "has_goodput"}


def _run(path: Path) -> PeerRun:
    runs = load_peer_runs(path)
    assert len(runs) == 1
    return runs[0]


def test_every_capture_has_a_contract() -> None:
    cases = {_case(p) for p in _captured()}
    assert cases, "no captured peer files"
    assert cases == set(EXPECTED), "write EXPECTED (and PATHS) for every captured <tool>-<version>/<case>"
    assert {c.split("/")[0] for c in cases} == set(PATHS)


@pytest.mark.parametrize("path", _captured(), ids=_case)
def test_provenance(path: Path) -> None:
    """Each capture names the release that wrote it, the exact command and the date."""
    text = (path.parent / "PROVENANCE.txt").read_text(encoding="utf-8")
    tool_version = path.parent.parent.name
    tool, version = tool_version.rsplit("-", 1)
    assert f"tool: {tool} {version}\n" in text
    assert "\ncommand: " in text and "\ndate (UTC): " in text
    assert f"file: {path.name}\n" in text


@pytest.mark.parametrize("path", _captured(), ids=_case)
def test_fields_where_this_release_writes_them(path: Path) -> None:
    """The fixture is the contract: every field sits at the path this release writes it to."""
    data = json.loads(path.read_text(encoding="utf-8"))
    moved = []
    for what, where in PATHS[path.parent.parent.name].items():
        try:
            value = _at(data, where)
        except (KeyError, IndexError, TypeError, StopIteration):
            moved.append(f"{what}: {where}")
            continue
        if value is None and what not in ("max_concurrency", "goodput"):
            moved.append(f"{what}: {where} is null")
    assert moved == [], f"{_case(path)}: fields not where the parser reads them: {moved}"


@pytest.mark.parametrize("path", _captured(), ids=_case)
def test_parser_reads_every_field(path: Path) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    expected = EXPECTED[_case(path)]
    run = _run(path)
    assert detect_tool(data) is expected["tool"]
    for attr, want in expected.items():
        if attr not in _DERIVED:
            assert getattr(run, attr) == want, f"{_case(path)}: {attr} = {getattr(run, attr)!r}, not {want!r}"
    assert (
        run.ttft is not None and run.ttft.count == expected["ttft_count"] and "p99" in run.ttft.percentiles_ms
    )
    assert (run.goodput is not None) is expected["has_goodput"]
    # the numbers are the file's own, unit-converted where the tool writes another unit
    paths = PATHS[path.parent.parent.name]
    ttft_p99 = float(_at(data, paths["ttft p99"]))
    scale = 1e-6 if run.tool is PeerTool.INFERENCE_AUDIT else 1.0  # LoadGen writes ns
    assert run.ttft.percentiles_ms["p99"] == pytest.approx(ttft_p99 * scale)
    if "command" in paths:
        command = _at(data, paths["command"])
        assert run.command == (command if isinstance(command, str) else " ".join(command))


@pytest.mark.parametrize("path", _captured(), ids=_case)
def test_missing_only_what_the_file_lacks(path: Path) -> None:
    expected = EXPECTED[_case(path)]
    run = _run(path)
    missing = {k for k, v in run.reproducibility().items() if v is None}
    assert missing == expected["missing"]
    if run.layout in NOT_WRITTEN:
        assert set(run.not_written) <= missing  # a field a layout "never writes" is indeed absent


def _meta_reasons(audit: Any, path: Path) -> list[str]:
    run = audit("claim", str(path))
    assert run.report is not None, run.out + run.err
    return [r["reason"] for r in run.report["rules"] if r["rule"] == "PEER-META" and r["satisfied"] is False]


@pytest.mark.parametrize("path", _captured(), ids=_case)
def test_no_peer_meta_for_a_field_in_the_file(audit: Any, path: Path) -> None:
    """The claim names under PEER-META exactly the fields the file lacks, never one it carries."""
    expected = EXPECTED[_case(path)]
    reasons = _meta_reasons(audit, path)
    assert len(reasons) == 1
    reason = reasons[0].split(" does not record: ", 1)[1]
    run = _run(path)
    for key, label in REPRODUCIBILITY_FIELDS.items():
        if key == "model":
            continue  # the model is recorded in every capture; only its revision may be missing
        shown = label in reason if key != "tool_version" else f"{run.tool.value} version" in reason
        assert shown is (key in expected["missing"]), f"{key}: {reason}"
    assert f"model revision (model '{run.model}' recorded)" in reason
    never = set(run.not_written)
    if never:
        assert reason.endswith(f"never writes {'it' if len(never) == 1 else 'these'})")


def test_load_is_never_reported_missing_on_current_aiperf(audit: Any) -> None:
    """The issue's case: AIPerf 0.13 writes the load as input_config.phases[] and the run id as benchmark_id."""
    for case in ("rate-50", "concurrency-8"):
        reason = " ".join(_meta_reasons(audit, PEERS / "aiperf-0.13.0" / case / "profile_export_aiperf.json"))
        assert "concurrency or request rate" not in reason and "run id" not in reason
        assert "benchmark tool" not in reason and "aiperf version" not in reason


def _rules(audit: Any, *files: Path) -> dict[str, list[str]]:
    run = audit("claim", *(str(f) for f in files))
    assert run.report is not None, run.out + run.err
    out: dict[str, list[str]] = {}
    for r in run.report["rules"]:
        if r["kind"] == "not-comparable" or r["satisfied"] is False:
            out.setdefault(r["rule"], []).append(r["reason"])
    return out


def test_our_run_beside_a_peer(audit: Any) -> None:
    """Our run record and an AIPerf run at the same offered load (50 req/s, Poisson): told exactly why not."""
    ours = PEERS / "inference-audit-0.1.0/server-50qps/run-record.json"
    peer = PEERS / "aiperf-0.13.0/rate-50/profile_export_aiperf.json"
    rules = _rules(audit, ours, peer)
    assert "PEER-LOAD" not in rules  # same rate, same arrival process
    assert "PEER-ITL" not in rules  # same formula: (e2e - TTFT) / (tokens - 1)
    assert any("different models" in r for r in rules["PEER-MODEL"])
    assert any("different tokenizers" in r for r in rules["PEER-TOKENIZER"])
    assert any("MLPerf LoadGen" in r for r in rules["PEER-CLIENT"])
    assert any("ignore_eos is off" in r for r in rules["PEER-EOS"])
    assert any("mean output lengths" in r for r in rules["PEER-OSL"])
    # LoadGen checks the SLO as p99 bounds, and they were met: no goodput demand on our run
    assert not any("inference-audit" in r for r in rules.get("PEER-GOODPUT", []))


def test_our_run_beside_a_peer_at_another_load(audit: Any) -> None:
    ours = PEERS / "inference-audit-0.1.0/server-50qps/run-record.json"
    peer = PEERS / "aiperf-0.13.0/concurrency-8/profile_export_aiperf.json"
    rules = _rules(audit, ours, peer)
    assert any("request-rate vs concurrency" in r for r in rules["PEER-LOAD"])


def test_same_rate_different_arrival(audit: Any, tmp_path: Path) -> None:
    data = json.loads((PEERS / "aiperf-0.13.0/rate-50/profile_export_aiperf.json").read_text())
    for phase in data["input_config"]["phases"]:
        phase["type"] = "constant"
    (tmp_path / "constant.json").write_text(json.dumps(data))
    rules = _rules(
        audit, PEERS / "aiperf-0.13.0/rate-50/profile_export_aiperf.json", tmp_path / "constant.json"
    )
    assert any("poisson vs constant" in r for r in rules["PEER-LOAD"])


def test_achieved_rate_far_from_configured(audit: Any) -> None:
    """GuideLLM 0.8.1 at --profile kind=poisson,rate=50 sent 150 requests in 1.4 s (its own numbers)."""
    rules = _rules(audit, PEERS / "guidellm-0.8.1/rate-50/guidellm-rate.json")
    assert any("configured 50 req/s" in r and "achieved" in r for r in rules["PEER-LOAD"])
    rules = _rules(audit, PEERS / "aiperf-0.13.0/rate-50/profile_export_aiperf.json")
    assert "PEER-LOAD" not in rules  # 48.5 of 50 req/s


def test_our_run_with_unmet_bounds(audit: Any, tmp_path: Path) -> None:
    data = json.loads((PEERS / "inference-audit-0.1.0/server-50qps/run-record.json").read_text())
    data["tests"][0]["loadgen"]["perf_constraints_met"] = False
    (tmp_path / "run-record.json").write_text(json.dumps(data))
    rules = _rules(audit, tmp_path / "run-record.json")
    assert any("were not met" in r for r in rules["PEER-GOODPUT"])


def test_genai_perf_nested_layout_is_not_taken_for_aiperf(tmp_path: Path) -> None:
    """GenAI-Perf 0.0.14+ nests input_config (endpoint, perf_analyzer, input, tokenizer) like AIPerf does its
    endpoint; perf_analyzer tells them apart. Source-derived (GenAI-Perf cannot run without perf_analyzer)."""
    data = json.loads((PEERS / "genai_perf_profile_export_genai_perf.json").read_text())
    data["input_config"] = {
        "model_names": ["gpt2"],
        "endpoint": {"type": "kserve", "streaming": True, "url": "localhost:8001"},
        "perf_analyzer": {"stimulus": {"request_rate": 20}, "warmup_request_count": 5},
        "input": {
            "synthetic_tokens": {"mean": 550},
            "output_tokens": {"mean": 20},
            "extra": {"ignore_eos": True},
        },
        "tokenizer": {"name": "gpt2", "revision": "main"},
    }
    (tmp_path / "g.json").write_text(json.dumps(data))
    run = _run(tmp_path / "g.json")
    assert (run.tool, run.model, run.load_mode, run.request_rate, run.warmup, run.ignore_eos) == (
        PeerTool.GENAI_PERF,
        "gpt2",
        LoadMode.RATE,
        20.0,
        "5",
        True,
    )
    assert (run.input_tokens_mean, run.output_tokens_configured, run.tokenizer) != (None, None, None)
