"""The rule registry drives the docs: the README's 'What it checks' table is generated from the registrations, and a
rule id leads to the module that emits it in one hop."""

from __future__ import annotations

from pathlib import Path

import pytest

from checker.checks.catalog import RuleInfo, all_rules, register, registered, rules_markdown

REPO = Path(__file__).resolve().parent.parent.parent
README = REPO / "README.md"


def test_readme_table_is_the_generated_one() -> None:
    text = README.read_text(encoding="utf-8")
    begin = text.index("<!-- rules:begin")
    body = text[text.index("\n", begin) + 1 : text.index("<!-- rules:end -->")]
    assert body == rules_markdown(), "README rule table is stale: python -m checker.checks.catalog --markdown"


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
    assert info.module == "checker.checks.performance" and info.beyond
    assert registered("COMPL-PERF-SEEDS").rule == "PERF-SEEDS"  # compliance runs reuse the PERF- entries
    with pytest.raises(KeyError):
        registered("NOPE-NOT-A-RULE")
