"""The rule registry: every rule id the tools emit is registered by the module that emits it.

Each emitting module declares its rules at its top, in one block::

    RULES = register(__name__, RuleInfo("PERF-SEEDS", "D7", "RNG seeds differ from the round's"), ...)

``RuleInfo`` holds the rule's id, the official-checker catalogue entry it implements (``official-checker-catalogue.md``
sections A-H; ``-`` for none), its title, its default severity, how the official v5.1.1 checker differs where it does
(``official``; ``None``: same verdict), whether the official tooling lacks the check (``beyond``), what to do about a
finding (``fix``) and the rule text or LoadGen key that makes it a rule (``source``). A rule whose failure cases call
for different remedies names them (``cases``: ``Case(fix, source)`` by name; an emit site picks one with ``case=``).
A finding's severity, "beyond" flag, fix and source come from here (:func:`registered_finding`, the one factory;
:meth:`checker.checks.context.ResultContext.finding` fills in the result), so an emit site gives them only where they
depend on the case (a trial, the open division, a value the message quotes).

One registry, three families of rules, each a list of the modules that register them (:func:`rules_of` imports them):

- the submission checker (``TREE-``, ``SYS-``, ``PERF-``, ...): :data:`EMITTING_MODULES`, :func:`all_rules`; the README's
  "What it checks" table is generated from it (``inference-audit rules ids --markdown``);
- the table and claim auditors (``TABLE-``, ``PEER-``, the messaging rules ``CMP-01``, ``LBL-02``, ...):
  :data:`AUDIT_MODULES`, :func:`audit_rules` (``inference-audit rules ids --family audit --markdown``);
- the verdict of an ``inference-audit run`` (``RUN-``): registered by the harness's own modules, which the checker
  never imports; the harness lists them (``loadgen_sut.run_rules``; ``inference-audit rules ids --family run --markdown``).

Tests keep the README tables equal to the generated ones. From a rule id to its code in one hop: ``RuleInfo.module``
(``inference-audit rules ids PERF-SEEDS`` prints it, for a rule of any family).

Compliance TEST01/TEST04 performance logs are checked with the PERF-/LAT- rules under a ``COMPL-`` prefix
(e.g. ``COMPL-PERF-SEEDS``): :func:`rule_info` resolves those to the PERF-/LAT- entry.
"""

from __future__ import annotations

import importlib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from checker.findings import Finding, Severity

# every module of the submission checker that registers rules (imported by all_rules)
EMITTING_MODULES = (
    "checker.tree",
    "checker.engine",
    "checker.checks.structure",
    "checker.checks.system",
    "checker.checks.measurements",
    "checker.checks.performance",
    "checker.checks.performance_log",
    "checker.checks.inferred",
    "checker.checks.endpoints",
    "checker.checks.latency",
    "checker.checks.accuracy",
    "checker.checks.accuracy_run",
    "checker.checks.compliance",
    "checker.checks.compliance_logs",
    "checker.checks.power",
)
# every module of the table and claim auditors that registers rules (imported by audit_rules)
AUDIT_MODULES = (
    "checker.audit.table.checks",
    "checker.audit.table.scenario_check",
    "checker.audit.table.accuracy_check",
    "checker.audit.table.duplicates",
    "checker.audit.table.derived",
    "checker.audit.table.tree",
    "checker.audit.claim.comparison",
    "checker.audit.claim.labelling",
    "checker.audit.claim.figures",
    "checker.audit.claim.resolve",
    "checker.audit.peers.rules",
)
# where the RUN-* rules are listed (the checker never imports the harness: this is a name to print, not to import)


@dataclass(frozen=True, slots=True)
class Case:
    """One failure case of a rule with its own remedy and cited text (``None``: the finding has none)."""

    fix: str | None = None
    source: str | None = None


@dataclass(frozen=True, slots=True)
class RuleInfo:
    rule: str
    catalogue: str
    title: str
    severity: Severity = Severity.ERROR
    official: str | None = None  # official behaviour where this tool's verdict differs
    beyond: bool = False
    # its findings are what trial settings produce (a short run, few queries or samples, a partial data set): a
    # full-length run with the round's official settings and data set does not have them (Finding.trial)
    trial: bool = False
    fix: str | None = (
        None  # what to do about a finding (an emit site overrides it only with text quoting the case)
    )
    source: str | None = None  # the rule text or LoadGen key that makes it a rule
    # failure cases whose fix or source differ from the rule's (an emit site names one: registered_finding(case=...))
    cases: Mapping[str, Case] = field(default_factory=dict)
    module: str = ""  # the registering module (set by register)

    @property
    def source_file(self) -> str:
        """The registering module as a path from the repository root (``checker/checks/performance.py``)."""
        return self.module.replace(".", "/") + ".py"


WARN, INFO = Severity.WARNING, Severity.INFO
# the official checker the rules' sources cite by line (official-checker-catalogue.md calls it OLD: the v5.1.1 tag of
# tools/submission/submission_checker.py, which the published v5.1 verdicts were made with); HEAD is cited by name
OLD = "official checker v5.1.1"


def official_behaviour(checker: str | None, by_checker: Mapping[str, str], why: str) -> str:
    """The sentence of a finding that goes beyond some official checkers: what the round's (``"HEAD"`` or a tag:
    :attr:`rules.models.Round.official_checker`) does with it, from ``by_checker``; where that does not fail it
    ("only logs this"), ``why`` this tool rejects it. A checker ``by_checker`` does not know is not described."""
    does = by_checker.get(checker or "")
    if does is None:
        return why[:1].upper() + why[1:]
    if does.startswith("fails"):
        return f"The {checker} checker {does}"
    return f"The {checker} checker {does}; {why}"


_REGISTRY: dict[str, RuleInfo] = {}


def register(module: str, *infos: RuleInfo) -> Mapping[str, RuleInfo]:
    """Register ``infos`` as emitted by ``module`` (its ``__name__``); a rule id registered twice (by two modules, or
    twice in one module's list) is a bug, refused before anything is registered."""
    ids = Counter(info.rule for info in infos)
    twice = sorted(r for r, n in ids.items() if n > 1)
    if twice:
        raise ValueError(f"rule {', '.join(twice)} registered twice by {module}")
    for info in infos:
        known = _REGISTRY.get(info.rule)
        if known is not None and known.module != module:
            raise ValueError(f"rule {info.rule} registered by {known.module} and {module}")
    out: dict[str, RuleInfo] = {}
    for info in infos:
        entry = replace(info, module=module)
        _REGISTRY[info.rule] = entry
        out[info.rule] = entry
    return out


def rules_of(modules: Sequence[str]) -> Mapping[str, RuleInfo]:
    """The rules ``modules`` register, in the order of ``modules`` (imports them). A family of rules is its list of
    modules: :data:`EMITTING_MODULES`, :data:`AUDIT_MODULES`, or one a package outside the checker keeps itself."""
    for name in modules:
        importlib.import_module(name)
    order = {m: i for i, m in enumerate(modules)}
    return dict(
        sorted(
            ((r, i) for r, i in _REGISTRY.items() if i.module in order), key=lambda kv: order[kv[1].module]
        )
    )


def all_rules() -> Mapping[str, RuleInfo]:
    """Every rule of the submission checker, in the order of :data:`EMITTING_MODULES` (imports them)."""
    return rules_of(EMITTING_MODULES)


def audit_rules() -> Mapping[str, RuleInfo]:
    """Every rule of the table and claim auditors, in the order of :data:`AUDIT_MODULES` (imports them)."""
    return rules_of(AUDIT_MODULES)


def registered(rule: str) -> RuleInfo:
    """The entry of a rule its own module registered (emit sites use it: no import of every module)."""
    info = _REGISTRY.get(rule) or _REGISTRY.get(rule.removeprefix("COMPL-"))
    if info is None:
        raise KeyError(f"rule {rule} is not registered (add a RuleInfo to its module's RULES)")
    return info


def registered_finding(
    rule: str,
    message: str,
    *,
    severity: Severity | None = None,
    beyond_official: bool | None = None,
    result: str | None = None,
    scope: str | None = None,
    path: str | None = None,
    line: int | None = None,
    source: str | None = None,
    fix: str | None = None,
    trial: bool | None = None,
    case: str | None = None,
) -> Finding:
    """The one factory of findings: a finding of a registered ``rule``. Severity, "beyond official", "trial", fix and
    source default to its registration (fix and source to those of its ``case`` where one is named); pass them only
    where they depend on the case. A ``case`` the rule does not register is a bug (KeyError)."""
    info = registered(rule)
    remedy: RuleInfo | Case = info if case is None else info.cases[case]
    return Finding(
        rule=rule,
        severity=info.severity if severity is None else severity,
        message=message,
        result=result,
        scope=scope,
        path=path,
        line=line,
        source=remedy.source if source is None else source,
        fix=remedy.fix if fix is None else fix,
        beyond_official=info.beyond if beyond_official is None else beyond_official,
        trial=info.trial if trial is None else trial,
    )


def resolve_rule(rule: str, rules: Mapping[str, RuleInfo]) -> RuleInfo | None:
    """``rule``'s entry in ``rules``; ``COMPL-PERF-*`` / ``COMPL-LAT-*`` resolve to their PERF-/LAT- entry."""
    if rule in rules:
        return rules[rule]
    if rule.startswith("COMPL-") and rule[len("COMPL-") :] in rules:
        return rules[rule[len("COMPL-") :]]
    return None


def rule_info(rule: str) -> RuleInfo | None:
    """Look a checker rule up; ``COMPL-PERF-*`` / ``COMPL-LAT-*`` resolve to their PERF-/LAT- entry."""
    return resolve_rule(rule, all_rules())


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def rules_table(rules: Iterable[RuleInfo], *, catalogue: bool = True) -> str:
    """A markdown table of ``rules``: id, (catalogue entry,) what it checks, default severity, registering module."""
    head = (
        ["rule", "catalogue", "checks", "severity", "code"]
        if catalogue
        else ["rule", "checks", "severity", "code"]
    )
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for info in rules:
        what = _cell(info.title + (" (beyond official)" if info.beyond else ""))
        cells = [f"`{info.rule}`", *([info.catalogue] if catalogue else []), what, info.severity.value]
        rows.append("| " + " | ".join(cells) + f" | `{info.source_file}` |")
    return "\n".join(rows) + "\n"


def rules_markdown() -> str:
    """The README's rule table (id, catalogue entry, what it checks, severity, where it is registered), then the list
    of rules whose verdict differs from the official v5.1.1 checker."""
    rules = all_rules().values()
    text = rules_table(rules)
    differs = [f"- `{info.rule}`: official: {info.official}." for info in rules if info.official]
    if differs:
        text += (
            "\nWhere this tool's verdict differs from the official v5.1.1 checker, it is on purpose and backed by rule "
            "text\n(each has a fixture case citing it; none changes a verdict on the published v5.1 subset):\n\n"
            + "\n".join(differs)
            + "\n"
        )
    return text


def audit_rules_markdown() -> str:
    """The README's table of the table and claim auditors' rules (``--markdown --audit``)."""
    return rules_table(audit_rules().values(), catalogue=False) + (
        "\nA claim or peer rule is an ERROR where the results are not comparable or the claim lacks what the rule "
        "requires,\nand INFO where the claim meets it (`checker/audit/claim/report.py` `issue_finding`).\n"
    )


@dataclass(frozen=True, slots=True)
class RuleFamily:
    """One family of rule ids for ``inference-audit rules ids``: its rules and its generated docs table. Each family is
    an entry point of group ``inference_audit.rule_families`` (pyproject.toml), so the ``rules`` command lists the
    families without importing the packages that register them (entry points come in no set order: ``position``
    orders the families, the listing of every rule id and the default of ``--markdown`` being the first)."""

    position: int
    rules: Callable[[], Mapping[str, RuleInfo]]
    markdown: Callable[[], str]

    def resolve(self, rule: str) -> RuleInfo | None:
        """``rule``'s entry in this family (``COMPL-PERF-*`` / ``COMPL-LAT-*``: their PERF-/LAT- entry)."""
        return resolve_rule(rule, self.rules())


CHECK_FAMILY = RuleFamily(0, all_rules, rules_markdown)
AUDIT_FAMILY = RuleFamily(1, audit_rules, audit_rules_markdown)
