"""Judge the rows of a results table against one round's rules (no logs needed).

Each check returns :class:`~checker.findings.Finding` records naming the row (``scope``), the column (in the
message, as the source names it), the table file (``path``) and, for files with lines, the line.

Rule ids: TABLE-VALUE (untyped cell), TABLE-ID, TABLE-VERSION, TABLE-BENCHMARK, TABLE-SUITE, TABLE-LOCATION,
TABLE-DIVISION, TABLE-AVAILABILITY, TABLE-RESULT, TABLE-UNITS, TABLE-POWER; :class:`RowChecker` calls
:mod:`checker.audit.table.scenario_check` (TABLE-SCENARIO, TABLE-SCENARIO-CASE, TABLE-INFERRED,
TABLE-INFERRED-CHECKER: a row's scenario and its inferred flag) and :mod:`checker.audit.table.accuracy_check`
(TABLE-ACCURACY); :class:`TableChecks` calls :mod:`checker.audit.table.duplicates` (TABLE-DUPLICATE) and
:mod:`checker.audit.table.derived` (TABLE-DERIVED, columns that are not official metrics).

Severity on a published table: an error says that a number, or its validity, is wrong; what the official checker
writes for a correct result (its inferred flag, the case of a directory's name) is a warning naming the cause and the
official line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from checker.audit.report_common import FindingLog
from checker.audit.table.accuracy_check import accuracy_findings
from checker.audit.table.derived import derived_column, derived_kind, derived_value
from checker.audit.table.duplicates import duplicate, duplicate_keys, exact_duplicates
from checker.audit.table.model import POWER_UNITS, ResultTable, TableRow
from checker.audit.table.parse import KNOWN_INFORMATIONAL
from checker.audit.table.scenario_check import (
    directory_scenario,
    inferred_findings,
    row_scenario,
    scenario_allowed,
)
from checker.checks.rule_registry import Case, RuleInfo, register, registered_finding
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


def row_benchmark(rnd: Round, row: TableRow, table: ResultTable | None = None) -> Benchmark | None:
    """The row's benchmark: its benchmark column (MlperfModel) when that names one, else the model column (the
    HEAD checker's ``Model``, the benchmark directory; v6.1 writes display names such as 'VLM' in MlperfModel)."""
    fallback = table is None or table.column("benchmark") == "MlperfModel"
    for name in (row.benchmark, row.used_model) if fallback else (row.benchmark,):
        bench = rnd.benchmark(name) if name else None
        if bench is not None:
            return bench
    return None


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
        scenario, written = row_scenario(self, row)
        out += written
        out += self._location(row)
        out += inferred_findings(self, row, scenario, bench)
        if bench is not None:
            out += self._suite(row, bench)
            if scenario is not None:
                out += scenario_allowed(self, row, bench, scenario)
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
        out += directory_scenario(self, row, parts[5])
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
