"""A rule is one unit (issue 22): its title, severity, fix and source are declared once, in the ``RuleInfo`` its
module registers; one factory (:func:`checker.checks.rule_registry.registered_finding`) makes every finding from it; and
each rule id is emitted by the module that registers it, the file ``inference-audit rules ids RULE`` names.

The tests read the source (the AST), so they hold for every emit site, not only the ones a fixture case reaches.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

from checker.checks.rule_registry import RuleInfo, registered
from rules.cli import rule_families

ROOT = Path(__file__).resolve().parent.parent
# the packages whose modules register and emit the rule families: the checker's (check, audit) and the harness's (run)
PACKAGES = ("checker", "loadgen_sut")
FAMILIES = ("check", "audit", "run")
# calls that name a rule id without making a finding: the registration, and a run page's explanation of a verdict
# finding (loadgen_sut/report/explain.py: ``Explanation(rule="RUN-LOADGEN-INVALID")`` says what that finding means)
NOT_EMITS = frozenset({"RuleInfo", "Case", "Explanation"})
# the calls that make a finding: the factory, and the methods that fill in where it is (a result, a log line, a
# table row, a read problem's file) and hand the rest to the factory
FACTORY_CALLS = frozenset({"registered_finding", "finding", "log_finding", "problem", "emit"})
# the one module that constructs Finding (checker/findings.py defines it)
FACTORY_MODULE = "checker/checks/rule_registry.py"


def _modules() -> Iterator[tuple[str, ast.Module]]:
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            yield path.relative_to(ROOT).as_posix(), ast.parse(path.read_text(encoding="utf-8"))


MODULES = dict(_modules())


def _name(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _calls(tree: ast.Module) -> Iterator[ast.Call]:
    return (node for node in ast.walk(tree) if isinstance(node, ast.Call))


def _constant(node: ast.expr) -> bool:
    """A text fixed when the module is written: a literal, a module constant (UPPER_CASE), an f-string or
    concatenation of those. Text that quotes the case (a value, a path, a count) is not."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.Name):
        return node.id.isupper()
    if isinstance(node, ast.JoinedStr):
        return all(
            isinstance(v, ast.Constant) or (isinstance(v, ast.FormattedValue) and _constant(v.value))
            for v in node.values
        )
    if isinstance(node, ast.BinOp):
        return _constant(node.left) and _constant(node.right)
    return False


def _rule_ids() -> dict[str, RuleInfo]:
    """Every registered rule id of the families (check, audit, run), with its registration."""
    out: dict[str, RuleInfo] = {}
    for name, family in rule_families().items():
        if name not in FAMILIES:
            continue
        for rule, info in family.rules().items():
            out[rule] = registered(rule)
            assert info.source_file == out[rule].source_file
    return out


RULE_IDS = _rule_ids()


def _id_of(node: ast.expr) -> str | None:
    """The registered rule id ``node`` names: a literal, or a literal after a prefix (``prefix + "LAT-TTFT"``, the
    ``COMPL-`` form of a compliance test's performance log)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        node = node.right
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in RULE_IDS:
        return node.value
    return None


def _emitted_ids(tree: ast.Module) -> Iterator[tuple[str, ast.Call]]:
    """(rule id, call) for every registered id a call of the module passes as an argument: the emit sites (a factory
    call, or a helper that emits the rule it is given, as ``load_detail(ctx, rel, "PERF-LOG")``). A ``RuleInfo`` is
    the registration, not an emit site."""
    for call in _calls(tree):
        if _name(call) in NOT_EMITS:
            continue
        for arg in [*call.args, *(kw.value for kw in call.keywords if kw.arg == "rule")]:
            rule = _id_of(arg)
            if rule is not None:
                yield rule, call


def _ids_in_code(tree: ast.Module) -> set[str]:
    """The registered ids the module's code names outside its registrations and docstrings: in a call, or in the
    table a loop emits them from (``("TTFT", key, ..., "LAT-TTFT")``, a claim rule's checks)."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _name(node) in NOT_EMITS:
            skip |= {id(n) for n in ast.walk(node)}
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            doc = node.body[0] if node.body else None
            if isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant):
                skip.add(id(doc.value))
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and id(node) not in skip
        and isinstance(node.value, str)
        and node.value in RULE_IDS
    }


def test_no_constant_fix_or_source_at_an_emit_site() -> None:
    """(a) A constant fix or source belongs in the rule's ``RuleInfo`` (or one of its ``cases``); an emit site gives
    one only where the text depends on the case."""
    found = [
        f"{rel}:{call.lineno} {_name(call)}(..., {kw.arg}={ast.unparse(kw.value)[:60]})"
        for rel, tree in MODULES.items()
        for call in _calls(tree)
        if _name(call) in FACTORY_CALLS
        for kw in call.keywords
        if kw.arg in ("fix", "source") and _constant(kw.value)
    ]
    assert not found, "constant fix/source at emit sites (move them into the rule's RuleInfo):\n" + "\n".join(
        found
    )


def test_every_case_an_emit_site_names_is_registered() -> None:
    """``case="..."`` names a case of the rule's registration (the factory raises KeyError otherwise: a bug)."""
    bad = []
    for rel, tree in MODULES.items():
        for call in _calls(tree):
            case = next((kw.value for kw in call.keywords if kw.arg == "case"), None)
            if not isinstance(case, ast.Constant) or _name(call) not in FACTORY_CALLS:
                continue
            rules = [a.value for a in call.args if isinstance(a, ast.Constant) and a.value in RULE_IDS]
            for rule in rules:
                if case.value not in RULE_IDS[rule].cases:
                    bad.append(f"{rel}:{call.lineno} {rule} case={case.value!r}")
    assert not bad, "cases the rule does not register:\n" + "\n".join(bad)


def test_finding_is_constructed_by_the_factory_only() -> None:
    """(b) No module but the factory constructs ``Finding(...)``: severity, "beyond official", "trial", fix and
    source always come from the registration unless the emit site overrides them."""
    found = [
        f"{rel}:{call.lineno}"
        for rel, tree in MODULES.items()
        if rel != FACTORY_MODULE
        for call in _calls(tree)
        if _name(call) == "Finding"
    ]
    assert not found, "Finding(...) outside the factory:\n" + "\n".join(found)


def test_each_rule_is_emitted_by_its_registering_module_only() -> None:
    """(c) One emit module per rule id: the module that registers it (a rule judged in two places is two copies that
    drift apart; a shared rule is one function, which both callers call)."""
    emitters: dict[str, set[str]] = defaultdict(set)
    for rel, tree in MODULES.items():
        for rule, _call in _emitted_ids(tree):
            emitters[rule].add(rel)
    elsewhere = {
        rule: sorted(mods - {RULE_IDS[rule].source_file})
        for rule, mods in emitters.items()
        if mods - {RULE_IDS[rule].source_file}
    }
    assert not elsewhere, f"rule ids emitted outside their registering module: {elsewhere}"


@pytest.mark.parametrize("rule", sorted(RULE_IDS))
def test_rules_ids_names_the_file_that_emits_the_rule(rule: str) -> None:
    """(d) ``inference-audit rules ids RULE`` prints the registering module's file (``RuleInfo.source_file``); that
    file's code emits the rule: one hop from an id to its code."""
    rel = RULE_IDS[rule].source_file
    assert rel in MODULES, f"{rule}: {rel} is not a module of {PACKAGES}"
    assert rule in _ids_in_code(MODULES[rel]), f"{rule}: {rel} names it only in its registration"
