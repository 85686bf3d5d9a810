"""The rule registry: every rule id the checker emits is registered by the module that emits it.

Each check module declares its rules at its top, in one block::

    RULES = register(__name__, RuleInfo("PERF-SEEDS", "D7", "RNG seeds differ from the round's"), ...)

``RuleInfo`` holds the rule's id, the official-checker catalogue entry it implements (``official-checker-catalogue.md``
sections A-H; ``-`` for none), its title, its default severity, how the official v5.1.1 checker differs where it does
(``official``; ``None``: same verdict) and whether the official checker lacks the check (``beyond``). The severity and
the "beyond" flag of a finding come from here (:meth:`checker.checks.context.ResultContext.finding`), so an emit site
restates them only where they depend on the case (a trial, the open division).

:func:`all_rules` imports every emitting module and returns the registry: the README's "What it checks" table is
generated from it (``python -m checker.checks.catalog --markdown``) and a test keeps the two equal. From a rule id to its
code in one hop: ``RuleInfo.module`` (``python -m checker.checks.catalog PERF-SEEDS`` prints it).

Compliance TEST01/TEST04 performance logs are checked with the PERF-/LAT- rules under a ``COMPL-`` prefix
(e.g. ``COMPL-PERF-SEEDS``): :func:`rule_info` resolves those to the PERF-/LAT- entry.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Mapping
from dataclasses import dataclass, replace

from checker.findings import Severity

# every module that registers rules (imported by all_rules)
EMITTING_MODULES = (
    "checker.tree",
    "checker.engine",
    "checker.checks.structure",
    "checker.checks.system",
    "checker.checks.measurements",
    "checker.checks.performance",
    "checker.checks.inferred",
    "checker.checks.endpoints",
    "checker.checks.latency",
    "checker.checks.accuracy",
    "checker.checks.compliance",
    "checker.checks.power",
)


@dataclass(frozen=True, slots=True)
class RuleInfo:
    rule: str
    catalogue: str
    title: str
    severity: Severity = Severity.ERROR
    official: str | None = None  # official behaviour where this tool's verdict differs
    beyond: bool = False
    module: str = ""  # the registering module (set by register)

    @property
    def source_file(self) -> str:
        """The registering module as a path from the repository root (``checker/checks/performance.py``)."""
        return self.module.replace(".", "/") + ".py"


WARN, INFO = Severity.WARNING, Severity.INFO

_REGISTRY: dict[str, RuleInfo] = {}


def register(module: str, *infos: RuleInfo) -> Mapping[str, RuleInfo]:
    """Register ``infos`` as emitted by ``module`` (its ``__name__``); a rule id registered twice is a bug."""
    out: dict[str, RuleInfo] = {}
    for info in infos:
        known = _REGISTRY.get(info.rule)
        if known is not None and known.module != module:
            raise ValueError(f"rule {info.rule} registered by {known.module} and {module}")
        entry = replace(info, module=module)
        _REGISTRY[info.rule] = entry
        out[info.rule] = entry
    return out


def all_rules() -> Mapping[str, RuleInfo]:
    """Every registered rule, in the order of :data:`EMITTING_MODULES` (imports them)."""
    for name in EMITTING_MODULES:
        importlib.import_module(name)
    order = {m: i for i, m in enumerate(EMITTING_MODULES)}
    return dict(sorted(_REGISTRY.items(), key=lambda kv: order.get(kv[1].module, len(order))))


def registered(rule: str) -> RuleInfo:
    """The entry of a rule its own module registered (emit sites use it: no import of every module)."""
    info = _REGISTRY.get(rule) or _REGISTRY.get(rule.removeprefix("COMPL-"))
    if info is None:
        raise KeyError(f"rule {rule} is not registered (add a RuleInfo to its module's RULES)")
    return info


def rule_info(rule: str) -> RuleInfo | None:
    """Look a rule up; ``COMPL-PERF-*`` / ``COMPL-LAT-*`` resolve to their PERF-/LAT- entry."""
    rules = all_rules()
    if rule in rules:
        return rules[rule]
    if rule.startswith("COMPL-") and rule[len("COMPL-") :] in rules:
        return rules[rule[len("COMPL-") :]]
    return None


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def rules_markdown() -> str:
    """The README's rule table (id, catalogue entry, what it checks, severity, where it is registered), then the list
    of rules whose verdict differs from the official v5.1.1 checker."""
    rows = ["| rule | catalogue | checks | severity | code |", "|---|---|---|---|---|"]
    differs = []
    for info in all_rules().values():
        what = info.title + (" (beyond official)" if info.beyond else "")
        rows.append(f"| `{info.rule}` | {info.catalogue} | {_cell(what)} | {info.severity.value} | `{info.source_file}` |")
        if info.official:
            differs.append(f"- `{info.rule}`: official: {info.official}.")
    text = "\n".join(rows) + "\n"
    if differs:
        text += (
            "\nWhere this tool's verdict differs from the official v5.1.1 checker, it is on purpose and backed by rule "
            "text\n(each has a fixture case citing it; none changes a verdict on the published v5.1 subset):\n\n"
            + "\n".join(differs)
            + "\n"
        )
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m checker.checks.catalog", description="print the rule registry")
    ap.add_argument("rules", nargs="*", metavar="RULE", help="only these rule ids (COMPL-PERF-* resolve to PERF-*)")
    ap.add_argument("--markdown", action="store_true", help="the README table")
    args = ap.parse_args(argv)
    # run as __main__, this module is a second copy: the check modules register in checker.checks.catalog
    registry = importlib.import_module("checker.checks.catalog")
    if args.markdown:
        sys.stdout.write(registry.rules_markdown())
        return 0
    infos = list(registry.all_rules().values())
    if args.rules:
        found = {r: registry.rule_info(r) for r in args.rules}
        unknown = [r for r, i in found.items() if i is None]
        if unknown:
            print(f"unknown rule id(s): {', '.join(unknown)}", file=sys.stderr)
            return 2
        infos = [i for i in found.values() if i is not None]
    for info in infos:
        print(f"{info.rule}\t{info.severity.value}\t{info.source_file}\t{info.title}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
