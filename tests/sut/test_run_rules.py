"""The RUN-* rules are registered by the harness modules that emit them: docs/reference/run-rules.md is generated from
the registrations, a rule id leads to its module in one hop, and emit sites take severity from the registration except
where the case decides (a trial, a downgrade outside --mode submission)."""

from __future__ import annotations

from pathlib import Path

import pytest

from checker.checks.rule_registry import all_rules, audit_rules
from checker.findings import Severity
from loadgen_sut.cli import main
from loadgen_sut.compliance import TEST07, TEST09
from loadgen_sut.record import CLIENT_BOUND_RULE, INCOMPLETE_RULES
from loadgen_sut.run import steps
from loadgen_sut.run_rules import RUN_MODULES, run_rules, run_rules_markdown
from loadgen_sut.settings import RunMode, loadgen_version_findings
from rules import load_round

REPO = Path(__file__).resolve().parents[2]
RUN_RULES_DOC = REPO / "docs" / "reference" / "run-rules.md"


def test_run_rules_doc_is_the_generated_table() -> None:
    text = RUN_RULES_DOC.read_text(encoding="utf-8")
    begin = text.find("<!-- run-rules:begin")
    assert begin >= 0, "docs/reference/run-rules.md has no <!-- run-rules:begin --> marker"
    body = text[text.index("\n", begin) + 1 : text.index("<!-- run-rules:end -->")]
    assert body == run_rules_markdown(), "docs/reference/run-rules.md is stale: inference-audit rules ids --family run --markdown"


def test_run_entries_are_complete() -> None:
    rules = run_rules()
    assert {i.module for i in rules.values()} == set(RUN_MODULES)
    assert not set(rules) & (set(all_rules()) | set(audit_rules()))
    for rule, info in rules.items():
        assert rule.startswith("RUN-") and info.title and info.catalogue == "-", rule
    # the verdict's status reads these ids: they are registered rules
    assert INCOMPLETE_RULES | {CLIENT_BOUND_RULE} <= set(rules)
    assert {steps.VERIFICATION_RULES[t] for t in (TEST07, TEST09)} == {"RUN-TEST07-FAILED", "RUN-TEST09-FAILED"}


def test_run_rules_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "ids", "--family", "run", "RUN-DEADLINE", "RUN-ACC-TARGET", "RUN-CLIENT-BOUND"]) == 0
    rows = [line.split("\t")[:3] for line in capsys.readouterr().out.splitlines()]
    assert rows == [
        ["RUN-DEADLINE", "error", "loadgen_sut/run/verdict.py"],
        ["RUN-ACC-TARGET", "error", "loadgen_sut/scoring/score.py"],
        ["RUN-CLIENT-BOUND", "error", "loadgen_sut/client_diag.py"],
    ]
    assert main(["rules", "ids", "--family", "run", "RUN-NOPE"]) == 2
    assert "RUN-NOPE" in capsys.readouterr().err
    assert main(["rules", "ids", "--family", "run", "--markdown"]) == 0
    assert capsys.readouterr().out == run_rules_markdown()


@pytest.mark.parametrize(
    ("mode", "own_dataset", "severity"),
    [
        (RunMode.SUBMISSION, False, Severity.ERROR),
        (RunMode.SUBMISSION_TRIAL, True, Severity.ERROR),
        (RunMode.SUBMISSION_TRIAL, False, Severity.WARNING),  # the round's threshold is for the test's own data set
    ],
)
def test_verification_failed_severity_is_the_registrations_unless_the_trial_decides(
    mode: RunMode, own_dataset: bool, severity: Severity
) -> None:
    for test in (TEST07, TEST09):
        f = steps.verification_failed(test, Path("verify_accuracy.txt"), mode, own_dataset)
        assert (f.rule, f.severity, f.beyond_official) == (f"RUN-{test}-FAILED", severity, False)


def test_audit_config_and_loadgen_findings_keep_their_severities() -> None:
    not_the_test = "effective_test_mode is 'AccuracyOnly', not 'PerformanceOnly' (the audit.config's mode = 2)"
    short = "sampling target 10 below the test's 990 samples"
    trial = steps.audit_findings(TEST07, [not_the_test, short], RunMode.SUBMISSION_TRIAL)
    assert [(f.rule, f.severity) for f in trial] == [
        ("RUN-AUDIT-CONFIG", Severity.ERROR),
        ("RUN-AUDIT-CONFIG", Severity.WARNING),
    ]
    submission = steps.audit_findings(TEST07, [short], RunMode.SUBMISSION)
    assert [f.severity for f in submission] == [Severity.ERROR]
    rnd = load_round("v6.1")
    assert [(f.rule, f.severity) for f in loadgen_version_findings(rnd, None)] == [
        ("RUN-LOADGEN-MISSING", Severity.ERROR)
    ]
    assert [(f.rule, f.severity) for f in loadgen_version_findings(rnd, "4.0.0")] == [
        ("RUN-LOADGEN-VERSION", Severity.ERROR)
    ]
