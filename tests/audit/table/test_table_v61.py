"""The v6.1 summary.json as published: an object of rows keyed "0", "1", ..., HEAD-checker columns, no IDs."""

from __future__ import annotations

import json
from pathlib import Path

from checker.audit.table.checks import check_table
from checker.audit.table.model import TableFormat
from checker.audit.table.parse import load_table
from rules import load_round

BASE = {
    "Organization": "NVIDIA", "Availability": "available", "Division": "closed", "SystemType": "datacenter",
    "SystemName": "NVIDIA Vera Rubin NVL72 (72x VR-288GB)", "Platform": "VR-NVL72", "Model": "qwen3-vl-235b-a22b",
    "MlperfModel": "VLM", "Scenario": "Interactive", "Result": 1306.6, "Accuracy": "0.781",
    "number_of_nodes": 18, "accelerator_model_name": "VR", "accelerators_per_node": 4, "total_accelerators": 72,
    "Location": "./closed/NVIDIA/results/VR-NVL72/qwen3-vl-235b-a22b/Interactive/performance/run_1",
    "framework": "x", "notes": "", "compliance": "closed", "errors": 0, "version": "v6.1", "inferred": 0,
    "has_power": False, "Units": "Queries/s", "weight_data_types": "fp4", "design_power_watts": None, "PrivateID": None,
}  # fmt: skip


def _table(tmp_path: Path, *rows: dict[str, object]):
    path = tmp_path / "summary.json"
    path.write_text(json.dumps({str(i): {**BASE, **r} for i, r in enumerate(rows)}, indent=4))
    return load_table(path)


def _rules(findings, rule):
    return [f for f in findings if f.rule == rule]


def test_keyed_object_reads_natively(tmp_path: Path) -> None:
    table = _table(tmp_path, {}, {"Scenario": "Offline", "Units": "Samples/s"})
    assert table.format is TableFormat.CHECKER_JSON
    assert len(table.rows) == 2 and table.rows[1].line is not None
    row = table.rows[0]
    assert row.location == "closed/NVIDIA/results/VR-NVL72/qwen3-vl-235b-a22b/Interactive"
    assert row.location_text is not None and row.location_text.endswith("performance/run_1")
    assert "NVIDIA" in row.identity() and "Interactive" in row.identity()


def test_interactive_target_and_bare_scores(tmp_path: Path) -> None:
    rnd = load_round("v6.1")
    table = _table(
        tmp_path,
        {},  # F1 0.781 >= Interactive target 0.779922: accepted (check-submission accepts it)
        {"Scenario": "Offline", "Units": "Samples/s"},  # 0.781 < 0.782397: below the Offline target
        {"Model": "wan-2.2-t2v-a14b", "MlperfModel": "text_to_video", "Scenario": "Offline",
         "Units": "Samples/s", "Accuracy": "0.7024", "Location": "./closed/NVIDIA/results/VR-NVL72/wan-2.2-t2v-a14b/Offline/performance/run_1"},
    )  # fmt: skip
    acc = _rules(check_table(table, rnd), "TABLE-ACCURACY")
    assert [f.scope for f in acc] == ["row 2"], [f.message for f in acc]
    assert "0.782397" in acc[0].message


def test_units_and_duplicates_are_no_false_alarms(tmp_path: Path) -> None:
    rnd = load_round("v6.1")
    gpt = {"Model": "gpt-oss-120b", "MlperfModel": "gpt-oss-120b", "Accuracy": "exact_match: 83.4"}
    table = _table(
        tmp_path,
        {**gpt, "Scenario": "Interactive", "Units": "Tokens/s", "Location": "./closed/N/results/S/gpt-oss-120b/Interactive/performance/run_1"},
        {**gpt, "Scenario": "Offline", "Units": "Tokens/s", "Division": "open", "Location": "./open/N/results/S/gpt-oss-120b/Offline/performance/run_1"},
        {**gpt, "Scenario": "Offline", "Units": "Tokens/s", "Location": "./closed/N/results/S/gpt-oss-120b/Offline/performance/run_1"},
    )  # fmt: skip
    findings = check_table(table, rnd)
    assert not _rules(findings, "TABLE-UNITS")
    assert not _rules(findings, "TABLE-DUPLICATE")


def test_real_problems_still_found(tmp_path: Path) -> None:
    rnd = load_round("v6.1")
    yolo = {"Model": "yolo-95", "MlperfModel": "yolo-95", "SystemType": "edge", "Units": "Latency (ms)",
            "Accuracy": "mAP: 53.1", "inferred": 1}
    table = _table(
        tmp_path,
        {"inferred": 1},  # Interactive: the HEAD checker's summary writes 1 for a measured result (warning)
        {**yolo, "Scenario": "singlestream", "Location": "./closed/H/results/S/yolo-95/singlestream/performance/run_1"},
        {**yolo, "Scenario": "SingleStream", "Location": "./closed/H/results/S/yolo-95/SingleStream/performance/run_1"},
    )  # fmt: skip
    findings = check_table(table, rnd)
    assert [f.scope for f in _rules(findings, "TABLE-INFERRED-CHECKER")] == ["row 1", "row 2"]
    assert [f.scope for f in _rules(findings, "TABLE-INFERRED")] == ["row 3"]  # SingleStream is never inferred
    assert any("'singlestream'" in f.message for f in _rules(findings, "TABLE-SCENARIO-CASE"))
    assert not [f for f in findings if f.severity.value == "error" and f.scope != "row 3"]


def test_endpoints_rows_are_rederived_from_their_result_summary() -> None:
    """--tree re-derives NVIDIA's VR-NVL72 endpoints rows from performance/result_summary.json (tokens/s for
    deepseek-r1, samples/s or queries/s for qwen3-vl) and accuracy_results.json; all six match the table."""
    import pytest

    from checker.audit.table.rederive import rederive
    from checker.safe_io import SafeTree

    shared = Path(__file__).resolve().parents[4] / "shared" / "data" / "mlperf-inference-v6.1"
    if not shared.is_dir():
        pytest.skip("../shared is not present")
    rnd = load_round("v6.1")
    tree = SafeTree(shared)
    base = "closed/NVIDIA/results/VR-NVL72_VR-288GB_aarch64x72_TRT"
    ds = rederive(tree, f"{base}/deepseek-r1/Interactive", rnd, rnd.benchmark("deepseek-r1"), ("ACC",))  # type: ignore[arg-type]
    assert ds.key == "result_completed_tokens_per_second" and round(ds.value or 0) == 652750
    assert ds.endpoints_qps is not None and round(ds.endpoints_qps, 1) == 168.4  # what the HEAD summary printed
    assert round(ds.accuracy["ACC"], 3) == 80.629
    qw = rederive(tree, f"{base}/qwen3-vl-235b-a22b/Offline", rnd, rnd.benchmark("qwen3-vl-235b-a22b"), ("ACC",))  # type: ignore[arg-type]
    assert qw.key == "result_samples_per_second" and round(qw.value or 0, 2) == 2392.70 and not qw.problems


def test_v61_table_report_validates_against_its_schema(tmp_path: Path) -> None:
    import pytest

    from loadgen_sut.cli import main
    from schemas import schema_errors

    table = Path(__file__).resolve().parents[4] / "shared" / "data" / "mlperf-inference-v6.1" / "summary.json"
    if not table.is_file():
        pytest.skip("../shared is not present")
    out = tmp_path / "r.json"
    assert main(["table", str(table), "--json", str(out)]) in (0, 1)
    assert schema_errors(json.loads(out.read_text(encoding="utf-8")), "table-report") == []
