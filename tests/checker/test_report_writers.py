"""The report writers (terminal, JSON, summary CSV, JUnit) on reports built from real v5.1 data.

The writers only read a CheckReport, so they are tested on one that carries what the official
checker said about the shared v5.1 trees (each invalid verdict becomes error findings quoting
the official messages; each summary row is the official one), independently of our own checks.
"""

from __future__ import annotations

import csv
import io
import json
import os
import stat
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from checker.findings import Finding, Severity
from checker.report.atomic import write_atomic
from checker.report.json_report import render_json, report_dict
from checker.report.junit import render_junit
from checker.report.outcome import counts, exit_code, filter_report, per_division, per_rule
from checker.report.summary_csv import render_summary_csv
from checker.report.terminal import finding_line, render_terminal
from checker.results import SUMMARY_CSV_COLUMNS, CheckReport, ResultEntry, SummaryRow
from schemas import schema_errors


def official_report(shared_dir: Path) -> tuple[CheckReport, list[str]]:
    """The report, and the order of the official summary CSV's rows (Location column)."""
    verdicts_csv = shared_dir / "data" / "official-verdicts" / "v5.1-subset-verdicts.csv"
    summary_csv = shared_dir / "data" / "official-verdicts" / "v5.1-subset-summary.csv"
    with summary_csv.open(newline="", encoding="utf-8") as fh:
        summary = list(csv.DictReader(fh))
    assert tuple(summary[0].keys()) == SUMMARY_CSV_COLUMNS
    by_location = {row["Location"]: row for row in summary}
    results = []
    with verdicts_csv.open(newline="", encoding="utf-8") as fh:
        for v in csv.DictReader(fh):
            findings: tuple[Finding, ...] = ()
            if v["verdict"] == "invalid":
                findings = tuple(
                    Finding(
                        rule="ACC-FILES",
                        severity=Severity.ERROR,
                        message=msg.strip(),
                        result=v["path"],
                        path=f"{v['path']}/accuracy",
                        source="official checker v5.1.1",
                        fix="add the accuracy/images folder",
                    )
                    for msg in v["errors"].split(" | ")
                )
            row = by_location.get(v["path"])
            results.append(
                ResultEntry(
                    path=v["path"],
                    division=v["division"],
                    submitter=v["submitter"],
                    system=v["system"],
                    benchmark=v["benchmark"],
                    mlperf_model=row["MlperfModel"] if row else None,
                    scenario=v["scenario"],
                    findings=findings,
                    summary=SummaryRow(values=dict(row)) if row else None,
                )
            )
    report = CheckReport(
        root=str(shared_dir / "data" / "mlperf-inference-v5.1"),
        round="v5.1",
        tool_version="0.1.0",
        results=tuple(results),
        findings=(
            Finding(
                rule="TREE-ROOT-FILES",
                severity=Severity.WARNING,
                message="summary_results.json: the root holds a file outside the division folders",
                scope="tree",
                path="summary_results.json",
            ),
        ),
    )
    return report, [row["Location"] for row in summary]


@pytest.fixture(scope="module")
def real(shared_dir: Path) -> tuple[CheckReport, list[str]]:
    return official_report(shared_dir)


def test_counts_and_exit_code(real: tuple[CheckReport, list[str]]) -> None:
    report, _ = real
    c = counts(report)
    assert (c.results, c.valid, c.invalid) == (62, 58, 4)
    assert c.errors == 12 and c.warnings == 1
    assert exit_code(report) == 1
    assert per_division(report) == {"closed": (36, 4), "open": (22, 0)}
    assert per_rule(report)[0] == ("ACC-FILES", Severity.ERROR, 12)


def test_ignore_makes_results_valid_and_select_keeps_only_matching(
    real: tuple[CheckReport, list[str]],
) -> None:
    report, _ = real
    ignored = filter_report(report, ignore=["ACC"])
    assert exit_code(ignored) == 0
    assert counts(ignored).valid == 62
    selected = filter_report(report, select=["TREE"])
    assert counts(selected).errors == 0 and counts(selected).warnings == 1
    assert filter_report(report, select=["ACC-FILES"]) == report.model_copy(update={"findings": ()})


def test_summary_csv_is_byte_identical_to_the_official_one(
    real: tuple[CheckReport, list[str]], shared_dir: Path
) -> None:
    report, order = real
    position = {loc: i for i, loc in enumerate(order)}
    ordered = sorted(report.results, key=lambda r: position.get(r.path, len(order)))
    data = render_summary_csv(report.model_copy(update={"results": tuple(ordered)}))
    official = (shared_dir / "data" / "official-verdicts" / "v5.1-subset-summary.csv").read_bytes()
    assert data == official


def test_summary_csv_skips_invalid_results(real: tuple[CheckReport, list[str]]) -> None:
    report, _ = real
    rows = list(csv.DictReader(io.StringIO(render_summary_csv(report).decode())))
    assert len(rows) == 58
    assert not any("stable-diffusion-xl" in r["Location"] for r in rows if r["Organization"] == "AMD")


def test_json_report_validates_and_round_trips(real: tuple[CheckReport, list[str]]) -> None:
    report, _ = real
    data = report_dict(report, round_detection="v5.1 (detected)", select=[], ignore=[])
    assert schema_errors(data, "check-report") == []
    loaded = json.loads(render_json(data))
    assert loaded == data
    assert loaded["schema_version"] == "1" and loaded["exit_code"] == 1 and loaded["valid"] is False
    paths = {r["path"] for r in loaded["results"]}
    assert "closed/RedHat/results/XE8640_4xH100_vLLM/llama3.1-8b/Offline" in paths
    invalid = [r for r in loaded["results"] if not r["valid"]]
    assert len(invalid) == 4 and all(r["findings"] for r in invalid)


def test_json_schema_rejects_a_broken_report(real: tuple[CheckReport, list[str]]) -> None:
    report, _ = real
    data = report_dict(report)
    data["results"][0]["findings"] = [{"rule": "x", "severity": "fatal", "message": ""}]
    assert schema_errors(data, "check-report")


def test_junit_has_one_testcase_per_result_and_failures_for_invalid(
    real: tuple[CheckReport, list[str]],
) -> None:
    report, _ = real
    root = ET.fromstring(render_junit(report))
    cases = root.findall(".//testcase")
    assert len(cases) == 62 + 1  # + the tree-level testcase
    failed = [c for c in cases if c.find("failure") is not None]
    assert len(failed) == 4
    assert all("stable-diffusion-xl" in c.get("name", "") for c in failed)
    assert root.get("tests") == "63" and root.get("failures") == "4"


def test_junit_survives_control_characters() -> None:
    bad = Finding(
        rule="LOG-PARSE", severity=Severity.ERROR, message="line holds \x00\x07 bytes", path="a/b.txt"
    )
    entry = ResultEntry(
        path="closed/X/results/s/b/Offline",
        division="closed",
        submitter="X",
        system="s",
        benchmark="b",
        mlperf_model=None,
        scenario="Offline",
        findings=(bad,),
    )
    report = CheckReport(root="/r", round="v5.1", tool_version="0", results=(entry,))
    root = ET.fromstring(render_junit(report))
    assert root.find(".//failure") is not None


def test_terminal_report_lists_verdicts_findings_and_summary(real: tuple[CheckReport, list[str]]) -> None:
    report, _ = real
    text = render_terminal(report, round_detection="v5.1 (detected from LoadGen 5.1)")
    assert "INVALID closed/AMD/results/8xMI325x_2xEPYC-9655/stable-diffusion-xl/Offline" in text
    assert "VALID   closed/RedHat/results/XE8640_4xH100_vLLM/llama3.1-8b/Offline" in text
    assert "[ACC-FILES] error:" in text and "— fix: add the accuracy/images folder" in text
    assert "62 results: 58 valid, 4 invalid" in text
    assert "closed      36 valid      4 invalid" in text
    quiet = render_terminal(report, quiet=True)
    assert "VALID   " not in quiet and quiet.count("INVALID ") == 4
    assert "[TREE-ROOT-FILES]" not in quiet  # warnings are not shown in quiet mode


def test_finding_line_format() -> None:
    f = Finding(
        rule="PERF-SEEDS",
        severity=Severity.ERROR,
        message="qsl_rng_seed is 1, expected 2",
        path="closed/X/results/s/b/Offline/performance/run_1/mlperf_log_detail.txt",
        line=12,
        fix="use the round's seeds",
        source="mlperf.conf",
        beyond_official=False,
    )
    assert finding_line(f) == (
        "closed/X/results/s/b/Offline/performance/run_1/mlperf_log_detail.txt:12 [PERF-SEEDS] error: "
        "qsl_rng_seed is 1, expected 2 — fix: use the round's seeds  (mlperf.conf)"
    )


def test_write_atomic_replaces_whole_file(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    target.write_text("old")
    write_atomic(target, b"new contents")
    assert target.read_bytes() == b"new contents"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]  # no temporary left behind


def test_write_atomic_keeps_the_mode_or_follows_the_umask(tmp_path: Path) -> None:
    fresh = tmp_path / "fresh.csv"
    old_umask = os.umask(0o022)
    try:
        write_atomic(fresh, b"x")
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o644
    kept = tmp_path / "kept.csv"
    kept.write_bytes(b"old")
    kept.chmod(0o640)
    write_atomic(kept, b"new")
    assert stat.S_IMODE(kept.stat().st_mode) == 0o640


def test_terminal_findings_are_short_and_verbose_adds_the_citations() -> None:
    """Issue 23: finding lines stay short on a terminal; --verbose (and every report) carries the citation."""
    f = Finding(
        rule="ACC-DATASET",
        severity=Severity.ERROR,
        message="the accuracy run covered 32 samples",
        result="closed/X/results/s/b/Offline",
        path="closed/X/results/s/b/Offline/accuracy/mlperf_log_detail.txt",
        line=7,
        fix="run the accuracy mode over the full data set",
        source="inference_rules.adoc (RULES_HEAD:474-475)",
        beyond_official=True,
    )
    entry = ResultEntry(
        path=f.result or "", division="closed", submitter="X", system="s", benchmark="b", mlperf_model=None,
        scenario="Offline", findings=(f,),
    )
    report = CheckReport(root=".", round="v5.1", tool_version="0", results=(entry,))
    short, verbose = render_terminal(report), render_terminal(report, verbose=True)
    assert "— fix: run the accuracy mode over the full data set" in short
    assert "RULES_HEAD" not in short and "[beyond the official checker]" not in short
    assert "(inference_rules.adoc (RULES_HEAD:474-475))  [beyond the official checker]" in verbose
