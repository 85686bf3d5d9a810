"""README 'Where things are': a rule id leads to the module that emits it in one hop."""

from __future__ import annotations

from pathlib import Path

from checker.checks.catalog import all_rules

RULES = all_rules()

REPO = Path(__file__).resolve().parents[1]
# rule-id family -> the modules the README names for it
FAMILIES = {
    "TREE": ("checker/checks/structure.py", "checker/tree.py", "checker/engine.py"),
    "SYS": ("checker/checks/system.py",),
    "MEAS": ("checker/checks/measurements.py",),
    "PERF": ("checker/checks/performance.py", "checker/checks/inferred.py"),
    "LAT": ("checker/checks/latency.py",),
    "ACC": ("checker/checks/accuracy.py",),
    "COMPL": ("checker/checks/compliance.py", "checker/test06.py"),
    "INFER": ("checker/checks/inferred.py",),
    "ENDPOINTS": ("checker/checks/endpoints.py",),
    "POWER": ("checker/checks/power.py",),
}


def test_every_rule_is_emitted_where_the_readme_says() -> None:
    text = {rel: (REPO / rel).read_text(encoding="utf-8") for mods in FAMILIES.values() for rel in mods}
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Where things are") : readme.index("## Layout")]
    for family, modules in FAMILIES.items():
        assert f"`{family}-*`" in section or f"`*-{family}-*`" in section
        assert all(f"`{m}`" in section for m in modules), family
    misplaced = []
    for rule in RULES:
        family = "ENDPOINTS" if "-ENDPOINTS-" in rule or rule == "LAT-E2E" else rule.split("-", 1)[0]
        modules = FAMILIES.get(family)
        assert modules is not None, f"{rule}: a rule family the README table does not name"
        if not any(f'"{rule}"' in text[m] for m in modules):
            misplaced.append(rule)
    assert not misplaced, f"rules not emitted in the modules README names for their family: {misplaced}"
