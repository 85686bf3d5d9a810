"""docs/architecture.md 'Where things are': a rule id leads to the module that emits it in one hop."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from checker.checks.rule_registry import all_rules, audit_rules
from loadgen_sut.run_rules import run_rules

RULES = all_rules()

REPO = Path(__file__).resolve().parents[1]
ARCHITECTURE = REPO / "docs" / "architecture.md"
# rule-id family -> the modules docs/architecture.md names for it
FAMILIES = {
    "TREE": ("checker/checks/structure.py", "checker/tree.py", "checker/engine.py"),
    "SYS": ("checker/checks/system.py",),
    "MEAS": ("checker/checks/measurements.py",),
    "PERF": (
        "checker/checks/performance.py",
        "checker/checks/performance_log.py",
        "checker/checks/inferred.py",
    ),
    "LAT": ("checker/checks/latency.py",),
    "ACC": ("checker/checks/accuracy.py", "checker/checks/accuracy_run.py"),
    "COMPL": ("checker/checks/compliance.py", "checker/checks/compliance_logs.py"),
    "INFER": ("checker/checks/inferred.py",),
    "ENDPOINTS": ("checker/checks/endpoints.py",),
    "POWER": ("checker/checks/power.py",),
}


def test_every_rule_is_emitted_where_the_readme_says() -> None:
    text = {rel: (REPO / rel).read_text(encoding="utf-8") for mods in FAMILIES.values() for rel in mods}
    readme = ARCHITECTURE.read_text(encoding="utf-8")
    section = readme[readme.index("## Where things are") : readme.index("## Layout")]
    for family, modules in FAMILIES.items():
        assert f"`{family}-*`" in section or f"`*-{family}-*`" in section
        assert all(f"`{m}`" in section for m in modules), family
    misplaced = []
    for rule in RULES:
        family = "ENDPOINTS" if "-ENDPOINTS-" in rule or rule == "LAT-E2E" else rule.split("-", 1)[0]
        modules = FAMILIES.get(family)
        assert modules is not None, f"{rule}: a rule family docs/architecture.md does not name"
        if not any(f'"{rule}"' in text[m] for m in modules):
            misplaced.append(rule)
    assert not misplaced, f"rules not emitted in the modules docs/architecture.md names for their family: {misplaced}"


# the table and claim auditors' and the harness's rule families -> the modules docs/architecture.md names for them
AUDIT_FAMILIES = {
    "TABLE": (
        "checker/audit/table/checks.py",
        "checker/audit/table/scenario_check.py",
        "checker/audit/table/accuracy_check.py",
        "checker/audit/table/duplicates.py",
        "checker/audit/table/derived.py",
        "checker/audit/table/tree.py",
    ),
    "claim": (
        "checker/audit/claim/comparison.py",
        "checker/audit/claim/labelling.py",
        "checker/audit/claim/figures.py",
        "checker/audit/claim/resolve.py",
    ),
    "PEER": ("checker/audit/peers/rules.py",),
}
RUN_FAMILY = (
    "loadgen_sut/run/preflight.py",
    "loadgen_sut/run/plan.py",
    "loadgen_sut/run/verdict.py",
    "loadgen_sut/run/steps.py",
    "loadgen_sut/settings/user_conf.py",
    "loadgen_sut/settings/preflight.py",
    "loadgen_sut/settings/boundary.py",
    "loadgen_sut/client_diag.py",
    "loadgen_sut/scoring/score.py",
)
RUN_ID = re.compile(r"^RUN-[A-Z0-9]+(-[A-Z0-9]+)*$")
# TABLE-*, PEER-* and the messaging rules' ids (CMP-01, D-16, TM-01: rules/data/messaging.yaml)
AUDIT_ID = re.compile(r"^((TABLE|PEER)-[A-Z0-9]+(-[A-Z0-9]+)*|[A-Z]{1,4}-\d{2})$")


def _audit_family(rule: str) -> str:
    return rule.split("-", 1)[0] if rule.startswith(("TABLE-", "PEER-")) else "claim"


def _named_in(section: str, rel: str) -> bool:
    """docs/architecture.md names the module by its path, or (settings) by its name after `loadgen_sut/settings/`."""
    settings = "loadgen_sut/settings/"
    if rel.startswith(settings):
        return f"`{settings}`" in section and f"`{rel.removeprefix(settings)}`" in section
    return f"`{rel}`" in section


def test_run_and_audit_rules_are_registered_where_the_readme_says() -> None:
    readme = ARCHITECTURE.read_text(encoding="utf-8")
    section = readme[readme.index("## Where things are") : readme.index("## Layout")]
    for rel in (*RUN_FAMILY, *(m for mods in AUDIT_FAMILIES.values() for m in mods)):
        assert _named_in(section, rel), f"docs/architecture.md 'Where things are' does not name {rel}"
    misplaced = [r for r, i in audit_rules().items() if i.source_file not in AUDIT_FAMILIES[_audit_family(r)]]
    misplaced += [r for r, i in run_rules().items() if i.source_file not in RUN_FAMILY]
    assert not misplaced, f"rules registered outside the modules docs/architecture.md names for their family: {misplaced}"


def _literals(root: str) -> Iterator[tuple[str, int, str]]:
    """(file, line, text) of every string constant in the Python files under ``root``."""
    for path in sorted((REPO / root).rglob("*.py")):
        rel = path.relative_to(REPO).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), rel)):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                yield rel, node.lineno, node.value


def test_every_run_and_audit_rule_id_in_the_source_is_registered() -> None:
    """A rule id written anywhere in the harness or the auditors (an emit site, a hint, a status set) is registered,
    so the rule tables of docs/reference/ and ``python -m ... RULE`` know every id a finding can carry."""
    run, audit = run_rules(), audit_rules()
    unknown = [(f, n, t) for f, n, t in _literals("loadgen_sut") if RUN_ID.match(t) and t not in run]
    unknown += [(f, n, t) for f, n, t in _literals("checker/audit") if AUDIT_ID.match(t) and t not in audit]
    assert not unknown, f"rule ids not registered: {unknown}"
    # the checker never emits a RUN-* rule (they are the harness's)
    assert not [(f, n, t) for f, n, t in _literals("checker") if RUN_ID.match(t)]


def test_no_run_rule_id_is_built_at_run_time() -> None:
    """``f"RUN-{test}-FAILED"`` would hide an id from the registry and from a search: every id is written out."""
    built = []
    for path in sorted((REPO / "loadgen_sut").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.JoinedStr) and node.values:
                head = node.values[0]
                if isinstance(head, ast.Constant) and isinstance(head.value, str) and head.value.startswith("RUN-"):
                    built.append((path.relative_to(REPO).as_posix(), node.lineno))
    assert not built, f"RUN-* ids built from parts: {built}"


def test_each_run_and_audit_rule_is_emitted_by_the_module_that_registers_it() -> None:
    """Registration and emit site are one hop apart: the registering module names the rule again where it emits it."""
    lonely = []
    for rule, info in {**run_rules(), **audit_rules()}.items():
        source = (REPO / info.source_file).read_text(encoding="utf-8")
        if source.count(f'"{rule}"') < 2:
            lonely.append((rule, info.source_file))
    assert not lonely
