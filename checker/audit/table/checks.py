"""Judge the rows of a results table against one round's rules (no logs needed).

Each check returns :class:`~checker.findings.Finding` records naming the row (``scope``), the column (in the
message, as the source names it), the table file (``path``) and, for files with lines, the line.

Rule ids: TABLE-VALUE (untyped cell), TABLE-ID, TABLE-VERSION, TABLE-BENCHMARK, TABLE-SUITE, TABLE-SCENARIO,
TABLE-SCENARIO-CASE, TABLE-LOCATION, TABLE-DIVISION, TABLE-AVAILABILITY, TABLE-RESULT, TABLE-UNITS, TABLE-POWER,
TABLE-INFERRED, TABLE-INFERRED-CHECKER; TABLE-ACCURACY is :mod:`checker.audit.table.accuracy_check` (which
:class:`RowChecker` calls), TABLE-DUPLICATE :mod:`checker.audit.table.duplicates` and TABLE-DERIVED (columns that are
not official metrics) :mod:`checker.audit.table.derived` (which :class:`TableChecks` calls).

Severity on a published table: an error says that a number, or its validity, is wrong; what the official checker
writes for a correct result (its inferred flag, the case of a directory's name) is a warning naming the cause and the
official line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from checker.audit.report_common import FindingLog
from checker.audit.table.accuracy_check import accuracy_findings
from checker.audit.table.accuracy_text import bare_accuracy
from checker.audit.table.derived import derived_column, derived_kind, derived_value
from checker.audit.table.duplicates import duplicate, duplicate_keys, exact_duplicates
from checker.audit.table.model import POWER_UNITS, ResultTable, TableRow
from checker.audit.table.parse import KNOWN_INFORMATIONAL
from checker.checks.catalog import WARN, Case, RuleInfo, register, registered_finding
from checker.findings import Finding, Severity
from rules.models import Benchmark, Round, Scenario

RULES = register(
    __name__,
    RuleInfo(
        "TABLE-VALUE",
        "-",
        "table: a cell that is not of its column's type",
        fix="write the value in the column's type",
    ),
    RuleInfo(
        "TABLE-ID",
        "-",
        "table: a result ID missing, not in the published form (5.1-0001) or of another round",
        source="MSG:62 (LBL-03); RES_v5.1 'ID' field",
        cases={"missing": Case(source="MSG:50 (LBL-02)"), "other-round": Case(source="MSG:62 (LBL-03)")},
    ),
    RuleInfo("TABLE-VERSION", "-", "table: a version that is not the round's"),
    RuleInfo(
        "TABLE-DIVISION",
        "-",
        "table: a division missing or not one of the round's",
        source="SUBRULES:702 (CMP-11)",
    ),
    RuleInfo(
        "TABLE-AVAILABILITY",
        "-",
        "table: an availability missing or not a category of the round",
        source="SUBRULES:719-727 (AVL-01)",
        cases={"missing": Case(source="SUBRULES:719 (AVL-01)")},
    ),
    RuleInfo("TABLE-BENCHMARK", "-", "table: a benchmark missing or not one of the round's"),
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
        "TABLE-LOCATION",
        "-",
        "table: a result directory of another division, or (WARNING) not a result path or of another system",
        cases={
            # table --tree: the Location names a run directory the result lacks (location_run_finding)
            "run-dir": Case(
                source="CHK_HEAD:2029-2035 (PERFORMANCE_LOG_PATH); HEAD submission_checker/results.py:106-107"
            )
        },
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
    RuleInfo("TABLE-SUITE", "-", "table: a suite that is not one, or (WARNING in Open) not the benchmark's"),
    RuleInfo(
        "TABLE-UNITS",
        "-",
        "table: units missing or not the ones the official checker writes",
        source="official checker: summary units (catalogue G, D8)",
        cases={
            "missing": Case(),
            "power-units": Case(source="MSG:112-116 (PWR-01)"),
            "tokens-key": Case(
                source="official checker: summary units vs RESULT_FIELD_BENCHMARK_OVERWRITE (catalogue D8, CSV units "
                "note)"
            ),
        },
    ),
    RuleInfo("TABLE-RESULT", "-", "table: a result value missing or not positive"),
    RuleInfo(
        "TABLE-POWER",
        "-",
        "table: a power result on a row without MLPerf-measured power",
        source="MSG:116 (PWR-01)",
        cases={"no-power-result": Case()},
    ),
)

RESULT_ID = re.compile(
    r"^([0-9]+)\.([0-9]+)-([0-9]{4})$"
)  # LBL-03: published form, e.g. 5.1-0001 (ASCII digits)
SUITES = ("datacenter", "edge")
_LATENCY_SCENARIOS = (Scenario.SINGLE_STREAM, Scenario.MULTI_STREAM)


def row_benchmark(rnd: Round, row: TableRow, table: ResultTable | None = None) -> Benchmark | None:
    """The row's benchmark: its benchmark column (MlperfModel) when that names one, else the model column (the
    HEAD checker's ``Model``, the benchmark directory; v6.1 writes display names such as 'VLM' in MlperfModel)."""
    fallback = table is None or table.column("benchmark") == "MlperfModel"
    for name in (row.benchmark, row.used_model) if fallback else (row.benchmark,):
        bench = rnd.benchmark(name) if name else None
        if bench is not None:
            return bench
    return None


# Official inference of one scenario's result from another's run, edge systems only (CHK_HEAD_perf:506-537):
# (scenario of the row, scenarios it may be inferred from)
INFERABLE_FROM: dict[Scenario, tuple[Scenario, ...]] = {
    Scenario.MULTI_STREAM: (Scenario.SINGLE_STREAM,),
    Scenario.OFFLINE: (Scenario.SINGLE_STREAM, Scenario.MULTI_STREAM),
}


class RowChecker:
    """Checks for one table under one round."""

    def __init__(self, table: ResultTable, rnd: Round) -> None:
        self.table = table
        self.round = rnd

    # ---- helpers -------------------------------------------------------------------------------------------
    def finding(
        self,
        row: TableRow,
        rule: str,
        field: str | None,
        message: str,
        *,
        severity: Severity | None = None,
        source: str | None = None,
        fix: str | None = None,
        beyond_official: bool | None = None,
        case: str | None = None,
    ) -> Finding:
        """A finding of ``rule`` about ``row`` (and its column ``field``); severity, "beyond official", fix and source
        default to the rule's registration (its ``case``'s)."""
        col = f", column '{self.table.column(field)}'" if field else ""
        return registered_finding(
            rule=rule,
            severity=severity,
            message=f"{row.label()}{col}: {message}",
            result=row.location,
            scope=f"row {row.row}",
            path=self.table.path,
            line=row.line,
            source=source,
            fix=fix,
            beyond_official=beyond_official,
            case=case,
        )

    def benchmark_of(self, row: TableRow) -> Benchmark | None:
        return row_benchmark(self.round, row, self.table)

    def expected_units(self, bench: Benchmark, scenario: Scenario) -> str | None:
        """Units the official checker writes for this benchmark and scenario (catalogue G / special units)."""
        return self.round.units_for(bench, scenario)

    def result_key(self, bench: Benchmark, scenario: Scenario) -> str | None:
        """LoadGen key of the result (catalogue D8: per-benchmark override, else the round default)."""
        return self.round.result_key(bench, scenario.loadgen_scenario)

    # ---- per row ------------------------------------------------------------------------------------------
    def check_row(self, row: TableRow) -> list[Finding]:
        out: list[Finding] = []
        for problem in row.problems:
            out.append(self.finding(row, "TABLE-VALUE", None, problem))
        out += self._id(row)
        out += self._version(row)
        out += self._division_availability(row)
        bench = self.benchmark_of(row)
        if row.benchmark is None:
            out.append(self.finding(row, "TABLE-BENCHMARK", "benchmark", "no benchmark given"))
        elif bench is None:
            out.append(
                self.finding(
                    row,
                    "TABLE-BENCHMARK",
                    "benchmark",
                    f"'{row.benchmark}' is not a benchmark of round {self.round.name} "
                    f"(known: {', '.join(sorted(self.round.benchmarks))})",
                    source=f"rules/data/{self.round.name}.yaml benchmarks",
                )
            )
        scenario = Scenario.parse(row.scenario) if row.scenario else None
        if row.scenario is None:
            out.append(self.finding(row, "TABLE-SCENARIO", "scenario", "no scenario given"))
        elif scenario is None:
            names = ", ".join(s.value for s in Scenario)
            out.append(
                self.finding(
                    row,
                    "TABLE-SCENARIO",
                    "scenario",
                    f"'{row.scenario}' is not a scenario ({names})",
                    case="not-a-scenario",
                )
            )
        if scenario is not None and row.scenario is not None and row.scenario != scenario.value:
            out.append(self._scenario_case(row, scenario))
        out += self._location(row)
        out += self._inferred(row, scenario, bench)
        if bench is not None:
            out += self._suite(row, bench)
            if scenario is not None:
                out += self._scenario_allowed(row, bench, scenario)
                out += self._units(row, bench, scenario)
            out += accuracy_findings(self, row, bench, scenario)
        out += self._result(row)
        out += self._power(row)
        return out

    def _id(self, row: TableRow) -> list[Finding]:
        if "id" not in self.table.columns:
            return []  # the checker's CSV has no ID column
        if row.id is None:
            return [self.finding(row, "TABLE-ID", "id", "no result ID", case="missing")]
        m = RESULT_ID.match(row.id)
        if m is None:
            return [
                self.finding(
                    row,
                    "TABLE-ID",
                    "id",
                    f"'{row.id}' is not an official result ID (form 5.1-0001)",
                )
            ]
        if f"{int(m.group(1))}.{int(m.group(2))}" != self.round.version:
            return [
                self.finding(
                    row,
                    "TABLE-ID",
                    "id",
                    f"result ID '{row.id}' is not of round {self.round.name} (IDs start '{self.round.version}-')",
                    case="other-round",
                )
            ]
        return []

    def _version(self, row: TableRow) -> list[Finding]:
        if row.version is None:
            return []
        if row.version.lower().lstrip("v") != self.round.version:
            return [
                self.finding(
                    row, "TABLE-VERSION", "version", f"'{row.version}' is not round {self.round.name}"
                )
            ]
        return []

    def _division_availability(self, row: TableRow) -> list[Finding]:
        out = []
        divisions = self.round.structure.divisions
        if row.division is None:
            if "division" in self.table.columns:
                out.append(self.finding(row, "TABLE-DIVISION", "division", "no division given"))
        elif row.division.lower() not in divisions:
            out.append(
                self.finding(
                    row,
                    "TABLE-DIVISION",
                    "division",
                    f"'{row.division}' is not a division ({', '.join(divisions)})",
                )
            )
        valid = self.round.system.valid_status
        if row.availability is None:
            if "availability" in self.table.columns:
                out.append(
                    self.finding(
                        row,
                        "TABLE-AVAILABILITY",
                        "availability",
                        "no availability given",
                        case="missing",
                    )
                )
        elif row.availability.lower() not in valid:
            out.append(
                self.finding(
                    row,
                    "TABLE-AVAILABILITY",
                    "availability",
                    f"'{row.availability}' is not an availability category ({', '.join(valid)})",
                )
            )
        return out

    def _suite(self, row: TableRow, bench: Benchmark) -> list[Finding]:
        if row.suite is None:
            return []
        suites = [s.strip().lower() for s in row.suite.split(",")]
        bad = [s for s in suites if s not in SUITES]
        if bad:
            return [
                self.finding(
                    row, "TABLE-SUITE", "suite", f"'{row.suite}' is not a suite ({', '.join(SUITES)})"
                )
            ]
        if not any(s in bench.categories for s in suites):
            sev = Severity.ERROR if self.closed(row) else Severity.WARNING
            return [
                self.finding(
                    row,
                    "TABLE-SUITE",
                    "suite",
                    f"{bench.name} is not a {row.suite} benchmark in {self.round.name} "
                    f"(categories: {', '.join(bench.categories)})",
                    severity=sev,
                )
            ]
        return []

    def closed(self, row: TableRow) -> bool:
        return (row.division or "").lower() in ("closed", "network")

    def _scenario_allowed(self, row: TableRow, bench: Benchmark, scenario: Scenario) -> list[Finding]:
        allowed: set[Scenario] = set()
        suites = [s.strip().lower() for s in (row.suite or "").split(",") if s.strip()]
        for key, sset in bench.scenarios.items():
            if not suites or any(s in key.split("+") for s in suites):
                allowed |= set(sset.required) | set(sset.optional) | set(sset.one_of)
        if not allowed or scenario in allowed:
            return []
        names = ", ".join(sorted(s.value for s in allowed))
        if self.closed(row):
            return [
                self.finding(
                    row,
                    "TABLE-SCENARIO",
                    "scenario",
                    f"{scenario.value} is not a scenario of {bench.name} ({row.suite or 'any suite'}: {names})",
                    source=f"rules/data/{self.round.name}.yaml benchmarks.{bench.name}.scenarios",
                )
            ]
        return [
            self.finding(
                row,
                "TABLE-SCENARIO",
                "scenario",
                f"{scenario.value} is not a Closed scenario of {bench.name} ({names}); allowed in Open",
                severity=Severity.INFO,  # the open division may run any scenario
                case="open",
            )
        ]

    def _location(self, row: TableRow) -> list[Finding]:
        if row.location is None:
            return []
        parts = row.location.strip("/").split("/")
        if len(parts) != 6 or parts[2] != "results":
            return [
                self.finding(
                    row,
                    "TABLE-LOCATION",
                    "location",
                    f"'{row.location}' is not <division>/<submitter>/results/<system>/<benchmark>/<scenario>",
                    severity=Severity.WARNING,
                )
            ]
        out = []
        if row.division and parts[0].lower() != row.division.lower():
            out.append(
                self.finding(
                    row,
                    "TABLE-LOCATION",
                    "division",
                    f"'{row.division}' but the result lives in '{parts[0]}/' ({row.location})",
                )
            )
        if row.scenario and Scenario.parse(parts[5]) is not None and parts[5].lower() != row.scenario.lower():
            out.append(
                self.finding(
                    row,
                    "TABLE-SCENARIO",
                    "scenario",
                    f"'{row.scenario}' but the result directory is '{parts[5]}' ({row.location})",
                )
            )
        if row.platform and parts[3] != row.platform:
            out.append(
                self.finding(
                    row,
                    "TABLE-LOCATION",
                    "platform",
                    f"'{row.platform}' but the result directory is under '{parts[3]}'",
                    severity=Severity.WARNING,
                )
            )
        return out

    def _scenario_case(self, row: TableRow, scenario: Scenario) -> Finding:
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
            cause = "the official checker maps any case of a scenario's name (CHK_HEAD:1539-1545 SCENARIO_MAPPING)"
        return self.finding(
            row,
            "TABLE-SCENARIO-CASE",
            "scenario",
            f"'{row.scenario}' is {scenario.value}, in another case than the rules and LoadGen write it; {cause}",
            fix=f"write '{scenario.value}'",
        )

    def _inferred(self, row: TableRow, scenario: Scenario | None, bench: Benchmark | None) -> list[Finding]:
        """``inferred`` = 1 on a result the rules allow no inference for (only an edge system may infer, and only
        MultiStream from SingleStream and Offline from either: RULES_HEAD:326-337, the HEAD checker's inferred_check
        CHK_HEAD_perf:515-537) is an error, unless the HEAD checker writes that flag for a measured result
        (:meth:`_inferred_by_checker`): then it is a warning naming the cause."""
        if not row.inferred or scenario is None:
            return []
        edge = row.suite is None or "edge" in row.suite.lower()
        if scenario in INFERABLE_FROM and edge:
            return []
        causes = self._inferred_by_checker(row, scenario, bench)
        if causes:
            return [
                self.finding(
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
            self.finding(
                row,
                "TABLE-INFERRED",
                "inferred",
                f"1 (inferred from another scenario's run), but {why}, and no artefact of the official checker "
                "(an Interactive result, a lower-case directory, an MLPerf Endpoints result) explains the flag: a "
                "result inferred so is not valid, one measured is mislabelled",
            )
        ]

    def _inferred_by_checker(self, row: TableRow, scenario: Scenario, bench: Benchmark | None) -> list[str]:
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
        if bench is not None and bench.name in self.round.endpoints_allowed_models:
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

    def _result(self, row: TableRow) -> list[Finding]:
        if row.result is None:
            if any("'" + self.table.column("result") + "'" in p for p in row.problems):
                return []
            return [self.finding(row, "TABLE-RESULT", "result", "no result value")]
        if row.result <= 0:
            return [
                self.finding(row, "TABLE-RESULT", "result", f"{row.result_text} is not a positive result")
            ]
        return []

    def _units(self, row: TableRow, bench: Benchmark, scenario: Scenario) -> list[Finding]:
        if "units" not in self.table.columns:
            return []
        expected = self.expected_units(bench, scenario)
        if row.units is None:
            return [
                self.finding(
                    row,
                    "TABLE-UNITS",
                    "units",
                    f"no units given (expected {expected or '?'})",
                    case="missing",
                )
            ]
        if row.units in POWER_UNITS:
            if row.power_result is None and not row.has_power:
                return [
                    self.finding(
                        row,
                        "TABLE-UNITS",
                        "units",
                        f"power units '{row.units}' on a row without MLPerf power measurement",
                        case="power-units",
                    )
                ]
            return []
        if expected is None:
            return []
        key = self.result_key(bench, scenario) or ""
        if row.units != expected and row.units == "Tokens/s" and "tokens" in key:
            # the unit of the value itself (LoadGen's tokens/s key), where the round's checker wrote another: the
            # HEAD checker writes Tokens/s for these benchmarks whatever the round (SPECIAL_UNIT_DICT, CHK_HEAD:1952-1980)
            return []
        if row.units != expected:
            return [
                self.finding(
                    row,
                    "TABLE-UNITS",
                    "units",
                    f"'{row.units}' does not fit {bench.name} {scenario.value} (the official checker writes '{expected}')",
                    fix=f"write '{expected}'",
                )
            ]
        if "tokens" in key and "okens" not in expected:
            return [
                self.finding(
                    row,
                    "TABLE-UNITS",
                    "units",
                    f"'{row.units}' as the official checker writes it, but the value is LoadGen's {key} (tokens/s)",
                    severity=Severity.WARNING,
                    beyond_official=True,  # the official checker writes these units
                    case="tokens-key",
                )
            ]
        return []

    def _power(self, row: TableRow) -> list[Finding]:
        if row.power_result is not None and row.has_power is False:
            return [
                self.finding(
                    row,
                    "TABLE-POWER",
                    "power_result",
                    "a power result on a row whose has_power is false",
                )
            ]
        if row.has_power and "power_result" in self.table.columns and row.power_result is None:
            return [
                self.finding(
                    row,
                    "TABLE-POWER",
                    "has_power",
                    "has_power is true but no power result is given",
                    severity=Severity.WARNING,
                    case="no-power-result",
                )
            ]
        return []


def location_run_finding(table: ResultTable, rnd: Round, row: TableRow, run_dir: str) -> Finding:
    """TABLE-LOCATION of ``table --tree``: the row's Location names a run directory its result does not hold."""
    msg = f"'{row.location_text}' names {run_dir}/, which is not in the result directory"
    return RowChecker(table, rnd).finding(row, "TABLE-LOCATION", "location", msg, case="run-dir")


def check_table(table: ResultTable, rnd: Round) -> list[Finding]:
    """Every finding on the table's rows, in the order ``inference-audit table`` reports them."""
    checks = TableChecks(table, rnd)
    out = FindingLog()
    for row in table.rows:
        out.extend(checks.add(row))
    checks.finish(lambda: iter(table.rows), out)
    return list(out)


class TableChecks:
    """The table checks, fed one row at a time (:meth:`add` returns that row's findings); :meth:`finish` gives the
    whole-table findings after the last row: duplicates, then derived columns with their values.

    What is held between rows is small: for duplicates a 64-bit hash of each key and the row number that first
    had it (the rows are not kept; the label of a row another one duplicates is read back by a second pass over
    the rows, ``rows_again``, which also compares the keys themselves, so that a hash collision cannot report a
    duplicate: should one happen, the duplicates are computed again with the keys held); for derived columns, the
    columns' names and the findings on their values.
    """

    def __init__(
        self, header: ResultTable, rnd: Round, new_log: Callable[[], FindingLog] = FindingLog
    ) -> None:
        self.checker = RowChecker(header, rnd)
        self._new_log = new_log
        self._seen: dict[int, int] = {}  # hash(key) -> the row number that first had it
        self._dupes: list[tuple[int, int, tuple[str, ...], Finding]] = []  # (row, first row, key, finding)
        self._extra_cols: dict[str, None] = {}
        self._kinds: dict[str, str | None] = {}
        self._values: dict[str, FindingLog] = {}  # derived column -> the findings on its values

    def add(self, row: TableRow) -> list[Finding]:
        checker = self.checker
        for key in duplicate_keys(row):
            h = hash(key)
            first = self._seen.get(h)
            if first is not None:
                self._dupes.append((row.row, first, key, duplicate(checker, row, key, "")))
                break
            self._seen[h] = row.row
        for col in row.extra:
            kind = self._kinds.get(col, "?")
            if kind == "?":
                kind = self._kinds[col] = None if col in KNOWN_INFORMATIONAL else derived_kind(col)
                if col not in KNOWN_INFORMATIONAL:
                    self._extra_cols[col] = None
            if kind is not None:
                found = derived_value(checker.table, row, col, kind)
                if found:
                    log = self._values.get(col)
                    if log is None:
                        log = self._values[col] = self._new_log()
                    log.extend(found)
        return checker.check_row(row)

    def finish(self, rows_again: Callable[[], Iterable[TableRow]], out: FindingLog) -> None:
        """Add the whole-table findings to ``out``."""
        out.extend(self._duplicates(rows_again))
        for col in self._extra_cols:
            if self._kinds[col] is not None:
                out.extend(derived_column(self.checker.table, col))
                values = self._values.get(col)
                if values is not None:
                    out.extend(values)

    def _duplicates(self, rows_again: Callable[[], Iterable[TableRow]]) -> list[Finding]:
        if not self._dupes:
            return []
        wanted = {first for _, first, _, _ in self._dupes}
        firsts: dict[int, tuple[str, list[tuple[str, ...]]]] = {}
        for row in rows_again():
            if row.row in wanted:
                firsts[row.row] = (row.label(), duplicate_keys(row))
        out = []
        for _, first, key, finding in self._dupes:
            label, keys = firsts.get(first, ("", []))
            if key not in keys:  # a hash collision: do it again with the keys themselves
                return exact_duplicates(self.checker, rows_again)
            out.append(finding.model_copy(update={"message": finding.message + label}))  # the label ends it
        return out
