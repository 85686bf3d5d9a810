"""A system-level error is one finding: copied into each result it invalidates (its verdict), counted once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from checker.cli.check import main
from checker.engine import check_tree
from checker.report.outcome import all_findings, counts, per_rule
from rules import load_round
from tests.checker.fixture_cases import materialize

SYSTEM = "closed/RedHat/systems/XE8640_4xH100_vLLM.json"
SPEC = {"base": "llm", "mutations": [{"op": "json_set", "path": SYSTEM, "key": "division", "value": "open"}]}


def test_a_copied_system_error_is_counted_and_listed_once(tmp_path: Path) -> None:
    root = materialize(SPEC, tmp_path / "tree")
    report = check_tree(root, load_round("v5.1"), workers=1)
    # the copies stay in the results: each one's findings give its verdict
    assert len(report.results) == 2
    for r in report.results:
        assert not r.valid and [f.rule for f in r.findings] == ["SYS-DIVISION"], r.findings
    division = [f for f in all_findings(report) if f.rule == "SYS-DIVISION"]
    assert len(division) == 1 and division[0].result is None and division[0].path == SYSTEM
    assert ("SYS-DIVISION", division[0].severity, 1) in per_rule(report)
    assert counts(report).errors == sum(1 for f in report.findings if f.severity.value == "error")


def test_the_reports_say_the_same_count(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = materialize(SPEC, tmp_path / "tree")
    out_json = tmp_path / "report.json"
    assert main([str(root), "--round", "v5.1", "--json", str(out_json)]) == 1
    data = json.loads(out_json.read_text(encoding="utf-8"))
    tree_errors = [f for f in data["findings"] if f["severity"] == "error"]
    assert data["counts"]["errors"] == len(tree_errors) == 3, data["counts"]
    assert [f["rule"] for f in tree_errors].count("SYS-DIVISION") == 1
    text = capsys.readouterr().out
    (line,) = [ln for ln in text.splitlines() if ln.strip().startswith("SYS-DIVISION")]
    assert line.split()[-1] == "1", line
    assert "3 error(s)" in text, text[-400:]
