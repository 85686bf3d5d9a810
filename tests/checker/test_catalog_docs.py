"""The README's 'What it checks' table lists every rule id the checker can emit."""

from __future__ import annotations

from pathlib import Path

from checker.checks.catalog import RULES

README = Path(__file__).resolve().parent.parent.parent / "README.md"


def test_every_rule_is_documented() -> None:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("### What it checks") : text.index("<!-- /section:check -->")]
    missing = [rule for rule in RULES if f"`{rule}`" not in section]
    assert not missing, missing


def test_catalogue_entries_are_complete() -> None:
    for info in RULES.values():
        assert info.title and info.catalogue, info.rule
        assert info.rule.split("-", 1)[0] in {"TREE", "SYS", "MEAS", "PERF", "LAT", "INFER", "ACC", "COMPL", "POWER"}
