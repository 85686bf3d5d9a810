"""Every claim rule with one claim that breaks it and one that honours it.

Cases are data: ``fixtures/claims/<RULE>[-aspect]/{break,honour}.yaml``, looked up in 20 real rows of the v5.1
table (``fixtures/v51-rows.json``). A ``break`` claim must get an ERROR under that rule id (and exit 1); an
``honour`` claim must get none under it, and — every honour claim here being otherwise clean — exit 0.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rules.messaging import load_messaging
from schemas import schema_errors

CLAIMS = Path(__file__).resolve().parents[1] / "fixtures" / "claims"
CASES = sorted(p.name for p in CLAIMS.iterdir() if p.is_dir())
# the rule a case directory is about: "CMP-01-variant" -> "CMP-01", "D-16" -> "D-16"
RULE = re.compile(r"^([A-Z]+-\d+)")
# what each case blocks outright (not comparable) rather than asks the claim to state
BLOCKERS = {"CMP-01", "CMP-02", "CMP-03", "CMP-04", "CMP-05", "CMP-09", "DRV-02", "PWR-01", "D-16"}


def rule_of(case: str) -> str:
    m = RULE.match(case)
    assert m, case
    return m.group(1)


def test_every_case_has_both_claims_and_a_known_rule() -> None:
    md = load_messaging()
    known = {r.id for r in md.messaging_rules} | {d.id for d in md.discrepancies}
    assert len(CASES) >= 20
    for case in CASES:
        assert (CLAIMS / case / "break.yaml").is_file() and (CLAIMS / case / "honour.yaml").is_file(), case
        assert rule_of(case) in known, case


@pytest.mark.parametrize("case", CASES)
def test_break(audit, rows_table: Path, case: str) -> None:
    rule = rule_of(case)
    run = audit("claim", str(CLAIMS / case / "break.yaml"), "--table", str(rows_table))
    assert run.code == 1, run.out
    errors = run.findings(rule, "error")
    assert errors, run.out
    assert not schema_errors(run.report, "claim-report")
    verdict = run.report["verdict"]
    if rule in BLOCKERS:
        assert verdict == "not-comparable", run.out
        assert any(r["rule"] == rule and r["kind"] == "not-comparable" for r in run.report["rules"])
        assert "verdict: results NOT COMPARABLE (" in run.out and rule in run.out.splitlines()[-1]
    else:
        assert verdict in ("comparable-with-disclosures", "comparable"), run.out
        assert any(r["rule"] == rule and r["satisfied"] is False for r in run.report["rules"])
    # every finding names its rule's source
    assert all(f["source"] for f in errors)


@pytest.mark.parametrize("case", CASES)
def test_honour(audit, rows_table: Path, case: str) -> None:
    rule = rule_of(case)
    run = audit("claim", str(CLAIMS / case / "honour.yaml"), "--table", str(rows_table))
    assert run.findings(rule, "error") == [], run.out
    assert run.code == 0, run.out
    assert run.report["verdict"] in ("comparable", "comparable-with-disclosures")
    # the citation the claim must carry is always printed
    assert run.report["footnote"][-1] == load_messaging().sentence("trademark_legend")
    assert "citation and footnote the claim must carry:" in run.out
