"""Every command on a corpus of small hostile inputs: exit 0, 1 or 2, never an exception, a traceback or exit 3.

Peer-tool exports with NaN, infinite, negative, huge, quoted, null or mistyped numbers (``claim``); results tables
with NaN and absurd cells (``table``, ``claim --table``); crafted JSON reports and run records (``report``); deeply
nested data sets (``dataset``); an accuracy log that is not UTF-8 or nests 100,000 deep (``verify``)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from loadgen_sut.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "audit" / "fixtures"
PEERS = FIXTURES / "peers"
EXPORTS = (
    "vllm_bench_serve_c256.json",
    "guidellm_benchmarks.json",
    "aiperf_profile_export_aiperf.json",
    "genai_perf_profile_export_genai_perf.json",
)
FLOAT = r'(": )(\d+\.\d+)'
TRANSFORMS: dict[str, Callable[[str], str]] = {
    "nan": lambda t: re.sub(FLOAT, r"\1NaN", t),
    "inf": lambda t: re.sub(FLOAT, r"\1Infinity", t),
    "negative": lambda t: re.sub(FLOAT, r"\1-\2", t),
    "huge": lambda t: re.sub(FLOAT, r"\g<1>1e308", t),
    "long-int": lambda t: re.sub(r'(": )(\d+)([,}])', lambda m: m.group(1) + "9" * 90 + m.group(3), t),
    "quoted": lambda t: re.sub(r'(": )(\d+(\.\d+)?)', r'\1"\2"', t),
    "null": lambda t: re.sub(r'(": )(\d+(\.\d+)?)', r"\1null", t),
    "list": lambda t: re.sub(r'(": )(\d+(\.\d+)?)', r"\1[]", t),
    "object": lambda t: re.sub(r'(": )("[^"]*")', r"\1{}", t),
}


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    t0 = time.perf_counter()
    code = main(list(argv))
    assert time.perf_counter() - t0 < 30
    out = capsys.readouterr()
    text = out.out + out.err
    assert code in (0, 1, 2), text[-2000:]
    assert "Traceback" not in text and "internal error" not in text, text[-2000:]
    return code, text


@pytest.mark.parametrize("transform", sorted(TRANSFORMS))
@pytest.mark.parametrize("export", EXPORTS)
def test_claim_on_a_hostile_peer_export(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], export: str, transform: str
) -> None:
    text = TRANSFORMS[transform](json.dumps(json.loads((PEERS / export).read_text(encoding="utf-8"))))
    path = tmp_path / export
    path.write_text(text, encoding="utf-8")
    _run(capsys, "claim", str(path))
    _run(capsys, "claim", "--text", "27,000 tokens/s on llama2-70b-99", str(path))


def test_table_and_claim_on_absurd_cells(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = json.loads((FIXTURES / "v51-rows.json").read_text(encoding="utf-8"))
    rows[0]["Performance_Result"] = float("nan")
    rows[1]["Performance_Result"] = 1e308
    rows[2]["Performance_Result"] = -1.0
    rows[3]["Accuracy"] = "ROUGE1: NaN  ROUGE2: inf"
    rows[4]["a#"] = 10**50
    rows[5]["Nodes"] = "1e999"
    rows[6]["ID"] = "５.１-０００７"
    table = tmp_path / "table.json"
    table.write_text(json.dumps(rows), encoding="utf-8")
    code, _ = _run(capsys, "table", str(table))
    assert code == 1
    _run(capsys, "claim", "--text", "27,000 tokens/s on llama2-70b-99 Offline", "--table", str(table))


@pytest.mark.parametrize(
    "document",
    [
        {"tool": "inference-audit", "kind": "table-report"},
        {"tool": "inference-audit", "kind": "claim-report", "findings": [1]},
        {"tool": "inference-audit", "kind": "table-report", "table": {"path": 3}, "findings": [], "counts": {}},
        {"tool": "inference-audit sweep"},
        {"run_id": "x", "tests": [1]},
        {"run_id": "x\u001b[2J", "tests": []},
        {"tool": "check-submission", "results": "x"},
        [],
        5,
    ],
)
def test_report_on_a_crafted_json_report(tmp_path: Path, capsys: pytest.CaptureFixture[str], document: object) -> None:
    path = tmp_path / "report.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    code, text = _run(capsys, "report", str(path), "--html", str(tmp_path / "page.html"))
    assert code == 2 and str(path) in text


def test_report_and_package_on_a_non_utf8_run_record(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "run-record.json").write_bytes(b'{"run_id": "\xff"}')
    assert _run(capsys, "report", str(run), "--html", str(tmp_path / "page.html"))[0] == 2
    assert _run(capsys, "package", str(run), "--tree", str(tmp_path / "tree"), "--submitter", "X")[0] == 2


def test_dataset_on_deeply_nested_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    assert _run(capsys, "dataset", "qwen3-vl", str(deep), str(tmp_path / "out.parquet"))[0] == 2
    assert not (tmp_path / "out.parquet").exists()


@pytest.mark.parametrize("content", [b"[\n\xff\xfe\n]\n", b"[\n" + b"[" * 100_000 + b"\n]\n"], ids=["not-utf8", "deep"])
def test_verify_on_a_hostile_accuracy_log(tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "mlperf_log_accuracy.json").write_bytes(content)
    code, text = _run(capsys, "verify", "TEST06", str(run), "--out", str(tmp_path / "out"), "--benchmark", "llama3.1-8b")
    assert code == 2 and "mlperf_log_accuracy.json" in text


def test_verify_with_a_non_utf8_detail_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    run.mkdir()
    entry = '{"seq_id": 0, "qsl_idx": 0, "data": "0100000002000000", "token_count": 2}'
    (run / "mlperf_log_accuracy.json").write_text(f"[\n{entry}\n]\n", encoding="utf-8")
    (run / "mlperf_log_detail.txt").write_bytes(b':::MLLOG {"key": "effective_scenario", "value": "\xff"}\n')
    code, text = _run(capsys, "verify", "TEST06", str(run), "--out", str(tmp_path / "out"), "--benchmark", "llama3.1-8b")
    assert code == 2 and "mlperf_log_detail.txt:1: not UTF-8" in text


@pytest.mark.parametrize(
    ("spec", "content", "what"),
    [
        ("jsonl", "[" * 100_000 + "]" * 100_000 + "\n", "nested deeper"),
        ("jsonl", '{"prompt": "a", "prompt": "b"}\n', "appears twice"),
        ("cnndm", '[{"input": "a", "output": ' + "9" * 500 + "}]", "number too long"),
    ],
)
def test_run_dataset_of_hostile_json_is_unusable_naming_the_file(
    tmp_path: Path, spec: str, content: str, what: str
) -> None:
    from checker.findings import UnusableInput
    from loadgen_sut.datasets import load_dataset

    path = tmp_path / "data.json"
    path.write_text(content, encoding="utf-8")
    t0 = time.perf_counter()
    with pytest.raises(UnusableInput, match=what) as info:
        load_dataset(f"{spec}:{path}")
    assert time.perf_counter() - t0 < 5 and str(path) in str(info.value)
