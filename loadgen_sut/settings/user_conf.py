"""The user's user.conf lines LoadGen would mishandle, as the run's RUN-CONF-* findings.

The file is parsed as LoadGen reads it by :mod:`checker.parsers.loadgen_conf` (the one parser of LoadGen's conf files,
which the checker uses too); this module turns its :class:`~checker.parsers.loadgen_conf.ConfProblem` records into
findings of the run family.
"""

from __future__ import annotations

from checker.checks.rule_registry import WARN, RuleInfo, register, registered_finding
from checker.findings import Finding
from checker.parsers.loadgen_conf import UserConf

# ERRORs refuse --mode submission; the other modes run with them as WARNINGs (loadgen_sut.run.preflight)
RULES = register(
    __name__,
    RuleInfo(
        "RUN-CONF-SYNTAX", "-", "user.conf: a line LoadGen rejects or silently ignores (WARNING outside --mode "
        "submission)",
    ),
    RuleInfo(
        "RUN-CONF-NUMBER", "-", "user.conf: several values on a line, or a number LoadGen reads otherwise than "
        "written (WARNING outside --mode submission)",
    ),
    RuleInfo("RUN-CONF-SCENARIO", "-", "user.conf: a scenario that matches nothing (LoadGen is case-sensitive)", WARN),
    RuleInfo("RUN-CONF-UNKNOWN-KEY", "-", "user.conf: a key LoadGen does not read", WARN),
)


# ConfProblem.kind -> the rule it breaks
RULE_OF_KIND = {
    "SYNTAX": "RUN-CONF-SYNTAX",
    "NUMBER": "RUN-CONF-NUMBER",
    "SCENARIO": "RUN-CONF-SCENARIO",
    "UNKNOWN-KEY": "RUN-CONF-UNKNOWN-KEY",
}


def conf_findings(conf: UserConf) -> tuple[Finding, ...]:
    """One RUN-CONF-* finding per line of ``conf`` that LoadGen would mishandle."""
    return tuple(
        registered_finding(RULE_OF_KIND[p.kind], p.message, path=p.path, line=p.line, fix=p.fix) for p in conf.problems
    )


def misread_number(conf: UserConf, line: int, message: str, fix: str) -> Finding:
    """RUN-CONF-NUMBER for a value LoadGen reads otherwise than written (found when the plan reads the value back as
    LoadGen would, :mod:`loadgen_sut.settings.plan`); the parser's own problems of the rule are :func:`conf_findings`'."""
    return registered_finding("RUN-CONF-NUMBER", message, path=conf.path, line=line, fix=fix)
