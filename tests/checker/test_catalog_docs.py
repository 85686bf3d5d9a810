"""The rule registry drives the docs: the rule tables of docs/reference/ are generated from the registrations, and a
rule id leads to the module that emits it in one hop."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from checker.checks.rule_registry import (
    AUDIT_MODULES,
    RuleInfo,
    all_rules,
    audit_rules,
    audit_rules_markdown,
    register,
    registered,
    registered_finding,
    rules_markdown,
)
from checker.findings import Severity
from rules.messaging import load_messaging

REPO = Path(__file__).resolve().parent.parent.parent
# the generated tables (docs/check.md and docs/audit.md link them)
CHECK_RULES_DOC = REPO / "docs" / "reference" / "check-rules.md"
AUDIT_RULES_DOC = REPO / "docs" / "reference" / "audit-rules.md"


def test_check_rules_doc_is_the_generated_table() -> None:
    text = CHECK_RULES_DOC.read_text(encoding="utf-8")
    begin = text.index("<!-- rules:begin")
    body = text[text.index("\n", begin) + 1 : text.index("<!-- rules:end -->")]
    assert body == rules_markdown(), "docs/reference/check-rules.md is stale: inference-audit rules ids --markdown"


def test_catalogue_entries_are_complete() -> None:
    for info in all_rules().values():
        assert info.title and info.catalogue, info.rule
        assert info.rule.split("-", 1)[0] in {"TREE", "SYS", "MEAS", "PERF", "LAT", "INFER", "ACC", "COMPL", "POWER"}


def test_each_rule_is_emitted_by_the_module_that_registers_it() -> None:
    """Registration and emit site are one hop apart: the registering module names the rule again where it emits it."""
    lonely = []
    for rule, info in all_rules().items():
        source = (REPO / info.source_file).read_text(encoding="utf-8")
        if source.count(f'"{rule}"') < 2:
            lonely.append((rule, info.source_file))
    assert not lonely


def test_a_rule_cannot_be_registered_by_two_modules() -> None:
    all_rules()
    with pytest.raises(ValueError, match="PERF-SEEDS"):
        register("some.other.module", RuleInfo("PERF-SEEDS", "D7", "again"))


def test_severity_and_beyond_come_from_the_registration() -> None:
    info = registered("PERF-LOADGEN-VERSION")
    assert info.module == "checker.checks.performance_log" and info.beyond
    assert registered("COMPL-PERF-SEEDS").rule == "PERF-SEEDS"  # compliance runs reuse the PERF- entries
    with pytest.raises(KeyError):
        registered("NOPE-NOT-A-RULE")


def _generated_block(text: str, name: str) -> str:
    """The text between ``<!-- NAME:begin ... -->`` (its own line) and ``<!-- NAME:end -->``."""
    begin = text.find(f"<!-- {name}:begin")
    assert begin >= 0, f"no <!-- {name}:begin --> marker"
    return text[text.index("\n", begin) + 1 : text.index(f"<!-- {name}:end -->")]


def test_audit_rules_doc_is_the_generated_table() -> None:
    body = _generated_block(AUDIT_RULES_DOC.read_text(encoding="utf-8"), "audit-rules")
    assert body == audit_rules_markdown(), (
        "docs/reference/audit-rules.md is stale: inference-audit rules ids --family audit --markdown"
    )


def test_audit_entries_are_complete() -> None:
    """Every auditor rule has a title; a messaging rule id is one of rules/data/messaging.yaml (rule or discrepancy),
    and no auditor rule is in the submission checker's table."""
    md = load_messaging()
    rules = audit_rules()
    assert len(rules) > 50 and not set(rules) & set(all_rules())
    assert {i.module for i in rules.values()} == set(AUDIT_MODULES)
    for rule, info in rules.items():
        assert info.title and info.catalogue == "-", rule
        if not rule.startswith(("TABLE-", "PEER-")):
            try:
                md.rule(rule)
            except KeyError:
                md.discrepancy(rule)  # D-16: the Server metric (raises KeyError for an id in neither)


def test_findings_take_severity_and_beyond_from_the_registration() -> None:
    audit_rules()
    derived = registered_finding("TABLE-DERIVED", "a derived column", scope="table")
    assert derived.severity is Severity.WARNING and derived.beyond_official and derived.scope == "table"
    per_watt = registered_finding("TABLE-DERIVED", "per watt without power", severity=Severity.ERROR)
    assert per_watt.severity is Severity.ERROR and per_watt.beyond_official  # the case decides, the flag stays
    assert registered_finding("CMP-01", "x").severity is Severity.ERROR
    assert not registered_finding("TABLE-ID", "x", beyond_official=False).beyond_official


def test_rules_ids_command_finds_a_rule_of_any_family(capsys: pytest.CaptureFixture[str]) -> None:
    """``inference-audit rules ids RULE...``: one hop from an id (checker, auditor or run) to its module."""
    from loadgen_sut.cli import main

    assert main(["rules", "ids", "TABLE-REDERIVE", "CMP-01", "COMPL-PERF-SEEDS", "RUN-DEADLINE"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split("\t")[:3] == ["TABLE-REDERIVE", "error", "checker/audit/table/tree.py"]
    assert out[1].split("\t")[:3] == ["CMP-01", "error", "checker/audit/claim/comparison.py"]
    assert out[2].startswith("PERF-SEEDS\t")
    assert out[3].split("\t")[:3] == ["RUN-DEADLINE", "error", "loadgen_sut/run/verdict.py"]
    assert main(["rules", "ids", "NOPE-NOT-A-RULE"]) == 2
    assert "NOPE-NOT-A-RULE" in capsys.readouterr().err
    assert main(["rules", "ids", "--family", "audit", "TABLE-REDERIVE"]) == 0
    capsys.readouterr()
    assert main(["rules", "ids", "--family", "check", "TABLE-REDERIVE"]) == 2  # not a checker rule
    capsys.readouterr()
    assert main(["rules", "ids", "--family", "audit", "--markdown"]) == 0
    assert capsys.readouterr().out == audit_rules_markdown()
    assert main(["rules", "ids", "--markdown"]) == 0
    assert capsys.readouterr().out == rules_markdown()
    assert main(["rules", "ids"]) == 0
    listed = {line.split("\t")[0] for line in capsys.readouterr().out.splitlines()}
    assert set(all_rules()) | set(audit_rules()) <= listed and "RUN-DEADLINE" in listed


def test_the_checker_never_imports_the_harness() -> None:
    """loadgen_sut -> checker -> rules: no module of checker/ or rules/ imports loadgen_sut, by statement or by name."""
    offenders = []
    for root in ("checker", "rules"):
        for path in sorted((REPO / root).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names: list[str] = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom):
                    names = [node.module or ""]
                elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
                    func = ast.unparse(node.func)
                    if func.endswith(("import_module", "__import__")):
                        names = [str(node.args[0].value)]
                if any(n == "loadgen_sut" or n.startswith("loadgen_sut.") for n in names):
                    offenders.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert not offenders
