"""A row's scenario and its inferred flag: TABLE-SCENARIO (missing, not a scenario, not the benchmark's, not its
directory's), TABLE-SCENARIO-CASE, TABLE-INFERRED and TABLE-INFERRED-CHECKER.
:class:`checker.audit.table.checks.RowChecker` calls it for each row.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from checker.audit.table.accuracy_text import bare_accuracy
from checker.audit.table.model import TableRow
from checker.checks.rule_registry import WARN, Case, RuleInfo, register
from checker.findings import Finding, Severity
from rules.models import Benchmark, Scenario

if TYPE_CHECKING:  # the row checker calls this module: its type only
    from checker.audit.table.checks import RowChecker

RULES = register(
    __name__,
    RuleInfo(
        "TABLE-SCENARIO",
        "-",
        "table: a scenario missing, not a scenario, not the benchmark's (INFO in Open) or not "
        "its directory's",
        cases={"not-a-scenario": Case(source="SUBRULES:414"), "open": Case(source="RULES_HEAD:363 (DIV-02)")},
    ),
    RuleInfo(
        "TABLE-SCENARIO-CASE",
        "-",
        "table: a scenario written in another case than the rules write it (the HEAD "
        "checker writes the result directory's name, and maps a lower-case one)",
        WARN,
        source="SUBRULES:414; CHK_HEAD:1539-1545",
    ),
    RuleInfo(
        "TABLE-INFERRED",
        "-",
        "table: inferred = 1 on a result the rules allow no inference for (only an edge "
        "system's MultiStream or Offline result), and no artefact of the official checker explains it",
        source="RULES_HEAD:326-337; CHK_HEAD_perf:515-537 (inferred_check); catalogue D17",
        fix="write 0 if the result was measured in this scenario; an inferred one cannot be published",
    ),
    RuleInfo(
        "TABLE-INFERRED-CHECKER",
        "-",
        "table: inferred = 1 that the HEAD checker writes for a measured result (an "
        "Interactive result, a lower-case result directory, an MLPerf Endpoints result: results.py:118-119)",
        WARN,
        source="HEAD submission_checker/results.py:118-119; CHK_HEAD_perf:515-537 (inferred_check compares in lower "
        "case)",
        fix="write 0: the result was measured in this scenario",
    ),
)

# Official inference of one scenario's result from another's run, edge systems only (CHK_HEAD_perf:506-537):
# (scenario of the row, scenarios it may be inferred from)
INFERABLE_FROM: dict[Scenario, tuple[Scenario, ...]] = {
    Scenario.MULTI_STREAM: (Scenario.SINGLE_STREAM,),
    Scenario.OFFLINE: (Scenario.SINGLE_STREAM, Scenario.MULTI_STREAM),
}


def row_scenario(checker: RowChecker, row: TableRow) -> tuple[Scenario | None, list[Finding]]:
    """The row's scenario (``None``: none given, or not a scenario) and the findings on how it is written."""
    scenario = Scenario.parse(row.scenario) if row.scenario else None
    out: list[Finding] = []
    if row.scenario is None:
        out.append(checker.finding(row, "TABLE-SCENARIO", "scenario", "no scenario given"))
    elif scenario is None:
        names = ", ".join(s.value for s in Scenario)
        out.append(
            checker.finding(
                row,
                "TABLE-SCENARIO",
                "scenario",
                f"'{row.scenario}' is not a scenario ({names})",
                case="not-a-scenario",
            )
        )
    if scenario is not None and row.scenario is not None and row.scenario != scenario.value:
        out.append(scenario_case(checker, row, scenario))
    return scenario, out


def directory_scenario(checker: RowChecker, row: TableRow, directory: str) -> list[Finding]:
    """TABLE-SCENARIO of the row's Location: its result directory ``directory`` is another scenario's."""
    if row.scenario and Scenario.parse(directory) is not None and directory.lower() != row.scenario.lower():
        return [
            checker.finding(
                row,
                "TABLE-SCENARIO",
                "scenario",
                f"'{row.scenario}' but the result directory is '{directory}' ({row.location})",
            )
        ]
    return []


def scenario_allowed(
    checker: RowChecker, row: TableRow, bench: Benchmark, scenario: Scenario
) -> list[Finding]:
    allowed: set[Scenario] = set()
    suites = [s.strip().lower() for s in (row.suite or "").split(",") if s.strip()]
    for key, sset in bench.scenarios.items():
        if not suites or any(s in key.split("+") for s in suites):
            allowed |= set(sset.required) | set(sset.optional) | set(sset.one_of)
    if not allowed or scenario in allowed:
        return []
    names = ", ".join(sorted(s.value for s in allowed))
    if checker.closed(row):
        return [
            checker.finding(
                row,
                "TABLE-SCENARIO",
                "scenario",
                f"{scenario.value} is not a scenario of {bench.name} ({row.suite or 'any suite'}: {names})",
                source=f"rules/data/{checker.round.name}.yaml benchmarks.{bench.name}.scenarios",
            )
        ]
    return [
        checker.finding(
            row,
            "TABLE-SCENARIO",
            "scenario",
            f"{scenario.value} is not a Closed scenario of {bench.name} ({names}); allowed in Open",
            severity=Severity.INFO,  # the open division may run any scenario
            case="open",
        )
    ]


def scenario_case(checker: RowChecker, row: TableRow, scenario: Scenario) -> Finding:
    """TABLE-SCENARIO-CASE: the scenario in another case than the rules'. The HEAD checker writes the result
    directory's name as the row's scenario (results.py:86, loader.py:503) and maps a lower-case one
    (SCENARIO_MAPPING); the rules name the copies of inferred results ``offline`` / ``multistream``."""
    directory = row.location.strip("/").rsplit("/", 1)[-1] if row.location else None
    if directory == row.scenario:
        cause = (
            f"the result directory is named so ({row.location}): the HEAD checker writes the directory's name "
            "(HEAD submission_checker/results.py:86, loader.py:503) and maps it to the scenario (CHK_HEAD:1539-1545 SCENARIO_MAPPING)"
            + (
                "; the rules name the copy of an inferred result so (RULES_HEAD:341-343)"
                if row.scenario in ("offline", "multistream")
                else ""
            )
        )
    else:
        cause = (
            "the official checker maps any case of a scenario's name (CHK_HEAD:1539-1545 SCENARIO_MAPPING)"
        )
    return checker.finding(
        row,
        "TABLE-SCENARIO-CASE",
        "scenario",
        f"'{row.scenario}' is {scenario.value}, in another case than the rules and LoadGen write it; {cause}",
        fix=f"write '{scenario.value}'",
    )


def inferred_findings(
    checker: RowChecker, row: TableRow, scenario: Scenario | None, bench: Benchmark | None
) -> list[Finding]:
    """``inferred`` = 1 on a result the rules allow no inference for (only an edge system may infer, and only
    MultiStream from SingleStream and Offline from either: RULES_HEAD:326-337, the HEAD checker's inferred_check
    CHK_HEAD_perf:515-537) is an error, unless the HEAD checker writes that flag for a measured result
    (:func:`_inferred_by_checker`): then it is a warning naming the cause."""
    if not row.inferred or scenario is None:
        return []
    edge = row.suite is None or "edge" in row.suite.lower()
    if scenario in INFERABLE_FROM and edge:
        return []
    causes = _inferred_by_checker(checker, row, scenario, bench)
    if causes:
        return [
            checker.finding(
                row,
                "TABLE-INFERRED-CHECKER",
                "inferred",
                "1, but the result was measured in its own scenario: the HEAD checker writes inferred = 1 "
                "whenever the row's scenario differs, as a string, from the log's effective_scenario "
                "(submission_checker/results.py:118-119), and " + "; and ".join(causes),
            )
        ]
    why = (
        f"no {scenario.value} result may be inferred from another scenario's run"
        if scenario not in INFERABLE_FROM
        else f"only an edge system's result may be inferred ('{row.suite}' is not edge)"
    )
    return [
        checker.finding(
            row,
            "TABLE-INFERRED",
            "inferred",
            f"1 (inferred from another scenario's run), but {why}, and no artefact of the official checker "
            "(an Interactive result, a lower-case directory, an MLPerf Endpoints result) explains the flag: a "
            "result inferred so is not valid, one measured is mislabelled",
        )
    ]


def _inferred_by_checker(
    checker: RowChecker, row: TableRow, scenario: Scenario, bench: Benchmark | None
) -> list[str]:
    """Why the HEAD checker's summary writes inferred = 1 for this measured result (results.py:118-119
    compares the directory's name with the log's effective_scenario case-sensitively; its exception
    ``("server", "interactive")`` is in lower case and never matches LoadGen's ``Server``)."""
    causes = []
    bare = row.accuracy is not None and bare_accuracy(row.accuracy) is not None  # an endpoints score
    if scenario is Scenario.INTERACTIVE and not bare:
        causes.append(
            "an Interactive result is a run of LoadGen's Server scenario: 'Interactive' differs from the log's "
            "'Server' and the exception ('server', 'interactive') is written in lower case, so it never applies"
        )
    if row.scenario is not None and row.scenario != scenario.value:
        causes.append(
            f"the result directory is named '{row.scenario}' (the checker maps it, CHK_HEAD:1539-1545), which "
            f"differs from LoadGen's '{scenario.value}'"
        )
    if bench is not None and bench.name in checker.round.endpoints_allowed_models:
        causes.append(
            (
                "it is an MLPerf Endpoints result (its accuracy is the endpoints score alone)"
                if bare
                else f"{bench.name} may be an MLPerf Endpoints result (--tree tells)"
            )
            + ": the checker reads an endpoints result's effective_scenario from its config.yaml type, "
            "'offline' or 'online' (CHK_HEAD:2259), never the directory's name"
        )
    return causes
