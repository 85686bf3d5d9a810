"""Severity on published tables: an error says that a number, or its validity, is wrong; what the official checker
writes for a correct result is a warning that names its cause and the official line.

Each rule case is a real published row (the v6.1 summary.json of ../shared, the v5.1 summary_results.json, the v5.1.1
checker's own summary CSV) with at most one change. The HEAD checker's summary writes ``inferred = 1`` whenever the
row's scenario differs, as a string, from the log's effective_scenario (submission_checker/results.py:118-119), so
its Interactive, lower-case and MLPerf Endpoints rows say inferred although they were measured.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from checker.audit.table.checks import check_table
from checker.audit.table.parse import load_table
from checker.findings import Finding, Severity
from rules import load_round

pytestmark = pytest.mark.shared

# The two rows the v5.1.1 checker's summary CSV writes for a result with MLPerf power: its performance, then its
# power metric in Watts (v5.1.1 submission_checker.py L2162-2226), as it printed them for the whole v5.1 tree
CHECKER_CSV_POWER_ROWS = """\
Organization,Availability,Division,SystemType,SystemName,Platform,Model,MlperfModel,Scenario,Result,Accuracy,\
number_of_nodes,host_processor_model_name,host_processors_per_node,host_processor_core_count,accelerator_model_name,\
accelerators_per_node,Location,framework,operating_system,notes,compliance,errors,version,inferred,has_power,Units,\
weight_data_types
Lenovo,available,closed,"datacenter","ThinkSystem SR680a V3 (8x B200-SXM-180GB, TensorRT)",SR680a_V3_B200SXMx8_TRT,\
whisper,whisper,Offline,43698.6,ACCURACY: 97.78448185616261,1,"Intel(R) Xeon(R) Platinum 8568Y+",2,56,\
"NVIDIA B200-SXM-180GB","8",closed/Lenovo/results/SR680a_V3_B200SXMx8_TRT/whisper/Offline,"TensorRT 10.8, CUDA 12.8",\
"Ubuntu 24.04","B200 TGP 1000W",1,0,v5.1,0,True,Samples/s,"fp16"
Lenovo,available,closed,"datacenter","ThinkSystem SR680a V3 (8x B200-SXM-180GB, TensorRT)",SR680a_V3_B200SXMx8_TRT,\
whisper,whisper,Offline,7636.489583333332,ACCURACY: 97.78448185616261,1,"Intel(R) Xeon(R) Platinum 8568Y+",2,56,\
"NVIDIA B200-SXM-180GB","8",closed/Lenovo/results/SR680a_V3_B200SXMx8_TRT/whisper/Offline,"TensorRT 10.8, CUDA 12.8",\
"Ubuntu 24.04","B200 TGP 1000W",1,0,v5.1,0,True,Watts,"fp16"
"""


@pytest.fixture(scope="module")
def v61_rows(shared_dir: Path) -> dict[str, dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = json.loads(
        (shared_dir / "data/mlperf-inference-v6.1/summary.json").read_text(encoding="utf-8")
    )
    return rows


def _row(rows: dict[str, dict[str, Any]], platform: str, model: str, scenario: str) -> dict[str, Any]:
    (row,) = [
        r for r in rows.values() if (r["Platform"], r["Model"], r["Scenario"]) == (platform, model, scenario)
    ]
    return dict(row)


def _check(tmp_path: Path, row: dict[str, Any]) -> list[Finding]:
    path = tmp_path / "summary.json"
    path.write_text(json.dumps({"0": row}, indent=1), encoding="utf-8")
    return check_table(load_table(path), load_round("v6.1"))


def _by_rule(findings: list[Finding]) -> dict[str, list[Finding]]:
    out: dict[str, list[Finding]] = {}
    for f in findings:
        out.setdefault(f.rule, []).append(f)
    return out


AMD = "8xMI355X_2xEPYC_9575F"
HPE_EDGE = "HPE_PROLIANT_DL345_GEN12_RTX_PRO_4500_PCIE_32GBx1"
VR = "VR-NVL72_VR-288GB_aarch64x72_TRT"
GB300 = "GB300-NVL72_GB300-288GB_aarch64x72_TRT"

# (real row, one change, rule expected on the 'inferred' / 'Scenario' column, its severity, words its message has)
CASES: list[tuple[tuple[str, str, str], dict[str, Any], str | None, Severity | None, tuple[str, ...]]] = [
    # a LoadGen Interactive result, as published: the Server log's 'Server' is not 'Interactive'
    ((AMD, "llama2-70b-99.9", "Interactive"), {}, "TABLE-INFERRED-CHECKER", Severity.WARNING,
     ("results.py:118-119", "('server', 'interactive') is written in lower case")),
    # an MLPerf Endpoints Offline result (bare score): effective_scenario is config.yaml's 'offline'
    ((VR, "deepseek-r1", "Offline"), {}, "TABLE-INFERRED-CHECKER", Severity.WARNING,
     ("MLPerf Endpoints result", "CHK_HEAD:2259")),
    # a lower-case SingleStream directory on an edge system
    ((HPE_EDGE, "yolo-95", "singlestream"), {}, "TABLE-INFERRED-CHECKER", Severity.WARNING,
     ("named 'singlestream'",)),
    # the rules' own name for an inferred MultiStream copy: inferred = 1 may be true, nothing to say about it
    ((HPE_EDGE, "yolo-95", "multistream"), {}, None, None, ()),
    # the same SingleStream result in LoadGen's spelling still inferred: no artefact explains it, SingleStream is
    # never inferred
    ((HPE_EDGE, "yolo-95", "singlestream"),
     {"Scenario": "SingleStream",
      "Location": "./closed/HPE/results/HPE_PROLIANT_DL345_GEN12_RTX_PRO_4500_PCIE_32GBx1/yolo-95/SingleStream/"
                  "performance/run_1"},
     "TABLE-INFERRED", Severity.ERROR, ("no SingleStream result may be inferred", "RULES_HEAD:326-337")),
    # a measured LoadGen Server result marked inferred
    ((AMD, "llama2-70b-99.9", "Server"), {"inferred": 1}, "TABLE-INFERRED", Severity.ERROR,
     ("no Server result may be inferred",)),
    # a datacenter Offline result marked inferred: only an edge system may infer
    ((AMD, "llama2-70b-99.9", "Offline"), {"inferred": 1}, "TABLE-INFERRED", Severity.ERROR,
     ("only an edge system's result may be inferred",)),
]  # fmt: skip


@pytest.mark.parametrize(("key", "change", "rule", "severity", "words"), CASES)
def test_inferred_flag(
    v61_rows, tmp_path: Path, key: tuple[str, str, str], change: dict[str, Any], rule: str | None,
    severity: Severity | None, words: tuple[str, ...],
) -> None:  # fmt: skip
    findings = _by_rule(_check(tmp_path, {**_row(v61_rows, *key), **change}))
    inferred = findings.get("TABLE-INFERRED", []) + findings.get("TABLE-INFERRED-CHECKER", [])
    if rule is None:
        assert inferred == []
        return
    assert [(f.rule, f.severity) for f in inferred] == [(rule, severity)]
    assert "column 'inferred'" in inferred[0].message
    said = f"{inferred[0].message} ({inferred[0].source})"
    for w in words:
        assert w in said, said
    assert not [f for fs in findings.values() for f in fs if f.severity is Severity.ERROR and f.rule != rule]


def test_lower_case_scenario_is_a_warning_naming_its_directory(v61_rows, tmp_path: Path) -> None:
    published = _by_rule(_check(tmp_path, _row(v61_rows, HPE_EDGE, "yolo-95", "multistream")))
    (case,) = published["TABLE-SCENARIO-CASE"]
    assert case.severity is Severity.WARNING and "TABLE-SCENARIO" not in published
    assert "the result directory is named so" in case.message and "RULES_HEAD:341-343" in case.message
    # the same name beside a directory of another scenario is an error: the row is not its directory's result
    moved = {**_row(v61_rows, HPE_EDGE, "yolo-95", "multistream"), "Scenario": "offline"}
    found = _by_rule(_check(tmp_path, moved))
    assert [f.severity for f in found["TABLE-SCENARIO"]] == [Severity.ERROR]
    assert "'multistream'" in found["TABLE-SCENARIO"][0].message


@pytest.mark.parametrize(
    ("key", "score", "beyond"),
    [
        # wan-2.2: the HEAD checker accepts any endpoints score (accuracy_check.py:108-136)
        ((GB300, "wan-2.2-t2v-a14b", "Offline"), "0.6901", True),
        # qwen3-vl: the one endpoints benchmark whose score the HEAD checker holds to the target
        ((VR, "qwen3-vl-235b-a22b", "Offline"), "0.7701", False),
    ],
)
def test_endpoints_score_below_target_is_an_error(
    v61_rows, tmp_path: Path, key: tuple[str, str, str], score: str, beyond: bool
) -> None:
    assert not _by_rule(_check(tmp_path, _row(v61_rows, *key))).get("TABLE-ACCURACY")  # as published
    (acc,) = _by_rule(_check(tmp_path, {**_row(v61_rows, *key), "Accuracy": score}))["TABLE-ACCURACY"]
    assert acc.severity is Severity.ERROR and acc.beyond_official is beyond
    assert ("does not check an endpoints result's accuracy" in acc.message) is beyond


def test_v61_sample_as_published_has_no_error(audit, shared_dir: Path) -> None:
    """The 104 published rows of ../shared, with and without their logs: warnings that name the official
    checker's artefacts, no error (was: 46 errors with --tree, 40 without)."""
    tree = shared_dir / "data/mlperf-inference-v6.1"
    run = audit("table", str(tree / "summary.json"), "--tree", str(tree))
    assert run.code == 0, run.out
    assert run.findings(severity="error") == []
    counts = {r: len(run.findings(r, "warning")) for r in
              ("TABLE-INFERRED-CHECKER", "TABLE-SCENARIO-CASE", "TABLE-LOCATION-RUN", "TABLE-REDERIVE")}  # fmt: skip
    assert counts == {
        "TABLE-INFERRED-CHECKER": 32, "TABLE-SCENARIO-CASE": 8, "TABLE-LOCATION-RUN": 6, "TABLE-REDERIVE": 0,
    }  # fmt: skip
    (run_1,) = [f for f in run.findings("TABLE-LOCATION-RUN") if "deepseek-r1/Offline" in f["message"]]
    assert "results.py:106-107" in run_1["message"]
    assert audit("table", str(tree / "summary.json")).findings(severity="error") == []


def test_v51_table_as_published_has_no_error(audit, v51_tree: Path) -> None:
    run = audit("table", str(v51_tree / "summary_results.json"), "--tree", str(v51_tree))
    assert run.code == 0 and run.findings(severity="error") == []


def test_checker_csv_power_row_is_not_a_duplicate(audit, tmp_path: Path) -> None:
    path = tmp_path / "summary.csv"
    path.write_text(CHECKER_CSV_POWER_ROWS, encoding="utf-8")
    run = audit("table", str(path))
    assert run.report is not None and run.report["table"]["format"] == "checker-csv"
    assert run.findings(severity="error") == [], run.out
    twice = tmp_path / "twice.csv"
    twice.write_text(CHECKER_CSV_POWER_ROWS + CHECKER_CSV_POWER_ROWS.splitlines()[-1] + "\n", encoding="utf-8")
    dupes = audit("table", str(twice)).findings("TABLE-DUPLICATE", "error")
    assert [f["scope"] for f in dupes] == ["row 3"]  # the same power row twice still is one


SERVER = "closed/MiTAC/results/8xMI325X_2xEPYC_9755/llama2-70b-99/Server"  # 5.1-0068, a measured Server result
SINGLE = "open/NVIDIA/results/Jetson-Thor_TRT/llama3.1-8b-edge/SingleStream"  # 5.1-0389, edge SingleStream


def _moved(
    v51_tree: Path, tmp_path: Path, location: str, scenario: str, change: dict[str, Any]
) -> tuple[Path, Path]:
    """A tree holding the real result of ``location`` under the directory of ``scenario``, and a table of its real
    row saying so (with ``change``)."""
    new_loc = location.rsplit("/", 1)[0] + "/" + scenario
    tree = tmp_path / "tree"
    shutil.copytree(v51_tree / location, tree / new_loc)
    rows = json.loads((v51_tree / "summary_results.json").read_text(encoding="utf-8"))
    (row,) = [r for r in rows if r["Location"] == location]
    row = {**row, "Scenario": scenario, "Location": new_loc, **change}
    table = tmp_path / "summary_results.json"
    table.write_text(json.dumps([row], indent=1), encoding="utf-8")
    return table, tree


def test_server_log_published_as_offline_is_an_error(audit, v51_tree: Path, tmp_path: Path) -> None:
    """No Offline result may be inferred from a Server run: with the logs it is an error, not unreadable logs."""
    table, tree = _moved(v51_tree, tmp_path, SERVER, "Offline", {"Performance_Units": "Tokens/s"})
    run = audit("table", str(table), "--tree", str(tree))
    (err,) = run.findings("TABLE-REDERIVE", "error")
    assert "was run as Server" in err["message"] and "RULES_HEAD:326-337" in err["source"]
    assert run.findings("TABLE-LOGS-UNREADABLE") == []


def test_inference_on_a_datacenter_system_is_an_error(audit, v51_tree: Path, tmp_path: Path) -> None:
    """An Offline result inferred from a SingleStream run is an edge system's privilege (the v5.1.1 checker does not
    check the system type; the rules and the HEAD checker do)."""
    table, tree = _moved(v51_tree, tmp_path, SINGLE, "Offline", {"Suite": "datacenter", "inferred": 1})
    run = audit("table", str(table), "--tree", str(tree))
    rederive = run.findings("TABLE-REDERIVE", "error")
    assert any("only an edge system may infer" in f["message"] for f in rederive), run.out
    edge, _ = _moved(v51_tree, tmp_path / "edge", SINGLE, "Offline", {"inferred": 1})
    assert not [
        f for f in audit("table", str(edge), "--tree", str(tmp_path / "edge" / "tree")).findings("TABLE-REDERIVE")
        if "only an edge system" in f["message"]
    ]  # fmt: skip


HEAD_V51_SUMMARY = Path(__file__).resolve().parent / "fixtures" / "head-checker-v5.1-summary.csv.gz"


def test_head_checker_summary_of_the_whole_v51_tree_has_no_error(audit, v51_tree: Path, tmp_path: Path) -> None:
    """The HEAD checker's own summary of the whole v5.1 tree (1,413 rows; fixtures/make_head_v51_summary.sh): its
    Interactive, lower-case and power rows, its Tokens/s for llama3.1-8b Interactive. Was 1,297 errors with
    --tree (375 TABLE-INFERRED, 876 TABLE-SCENARIO, 19 TABLE-DUPLICATE, 19 TABLE-REDERIVE, 8 TABLE-UNITS)."""
    import gzip

    table = tmp_path / "summary.csv"
    table.write_bytes(gzip.decompress(HEAD_V51_SUMMARY.read_bytes()))
    run = audit("table", str(table), "--round", "v5.1", "--tree", str(v51_tree))
    assert run.findings(severity="error") == [], run.out
    assert run.report is not None and run.report["table"]["rows"] == 1413
    assert len(run.findings("TABLE-INFERRED-CHECKER", "warning")) == 375
    assert len(run.findings("TABLE-SCENARIO-CASE", "warning")) == 876
    assert run.report["tree_counts"]["match"] == 58  # the rows whose directories are in ../shared, lower-case too
    assert run.findings("TABLE-REDERIVE") == []


def test_tokens_per_second_is_the_unit_of_the_value(v51_tree: Path, tmp_path: Path) -> None:
    """llama3.1-8b Interactive: the v5.1.1 checker writes Queries/s over a tokens/s value (a warning), the HEAD checker
    Tokens/s (SPECIAL_UNIT_DICT, whatever the round): no error; a unit that is neither is one."""
    rows = json.loads((v51_tree / "summary_results.json").read_text(encoding="utf-8"))
    row = next(r for r in rows if (r["Model"], r["Scenario"]) == ("llama3.1-8b", "Interactive"))

    def units(value: str) -> list[Finding]:
        path = tmp_path / "summary_results.json"
        path.write_text(json.dumps([{**row, "Performance_Units": value}]), encoding="utf-8")
        return [f for f in check_table(load_table(path), load_round("v5.1")) if f.rule == "TABLE-UNITS"]

    assert row["Performance_Units"] == "Queries/s"
    assert [f.severity for f in units("Queries/s")] == [Severity.WARNING]
    assert units("Tokens/s") == []
    assert [f.severity for f in units("Samples/s")] == [Severity.ERROR]
