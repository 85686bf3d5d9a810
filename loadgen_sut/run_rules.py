"""The RUN-* rules: the verdict of an ``inference-audit run`` (``run-record.json`` ``verdict.findings``).

Each is registered, with its title, default severity and "beyond official" flag, by the harness module that emits it
(``RULES = register(__name__, RuleInfo(...))`` at the module's top), in the one rule registry
(:mod:`checker.checks.rule_registry`). The checker never imports the harness, so the list of the harness's emitting modules
lives here, and :func:`run_rules` imports them.

    inference-audit rules ids --family run --markdown   docs/reference/run-rules.md, the table of RUN-* rules
    inference-audit rules ids RUN-DEADLINE              where a rule is registered (and emitted)
"""

from __future__ import annotations

from collections.abc import Mapping

from checker.checks.rule_registry import RuleFamily, RuleInfo, rules_of, rules_table
from loadgen_sut.record import CLIENT_BOUND_RULE, INCOMPLETE_RULES

# every harness module that registers RUN-* rules, in the order of a run (imported by run_rules)
RUN_MODULES = (
    "loadgen_sut.settings.user_conf",
    "loadgen_sut.settings.preflight",
    "loadgen_sut.settings.boundary",
    "loadgen_sut.run.preflight",
    "loadgen_sut.run.plan",
    "loadgen_sut.run.verdict",
    "loadgen_sut.client_diag",
    "loadgen_sut.run.steps",
    "loadgen_sut.scoring.score",
)


def run_rules() -> Mapping[str, RuleInfo]:
    """Every RUN-* rule, in the order of :data:`RUN_MODULES` (imports them)."""
    return rules_of(RUN_MODULES)


def run_rules_markdown() -> str:
    """The table of RUN-* rules in docs/reference/run-rules.md (id, what it says, default severity, registering module),
    then what the severities make of the run's status."""
    rules = run_rules()
    incomplete = ", ".join(f"`{r}`" for r in rules if r in INCOMPLETE_RULES)
    return rules_table(rules.values(), catalogue=False) + (
        f"\nAn ERROR makes the run INVALID ({incomplete}: INCOMPLETE; `{CLIENT_BOUND_RULE}`: CLIENT_BOUND), a WARNING "
        "NOT_SUBMITTABLE\n(`loadgen_sut/record.py` `verdict_status`).\n"
    )


RUN_FAMILY = RuleFamily(2, run_rules, run_rules_markdown)  # an entry point of inference_audit.rule_families
