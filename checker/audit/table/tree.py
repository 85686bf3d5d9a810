"""``--tree``: compare every table row with the logs it points to, and list tree results the table lacks.

Findings: TABLE-REDERIVE (result, scenario or accuracy differs from the logs, or the result would be an inference
the rules do not allow: ERROR; the inferred flag differs from the logs and from what the HEAD checker writes:
WARNING), TABLE-LOCATION-RUN (an endpoints result's Location names performance/run_1: WARNING), TABLE-LOGS-MISSING
(the row's directory is not in the tree: INFO, listed), TABLE-LOGS-UNREADABLE (the directory is there but its
logs cannot be used: WARNING), TABLE-MISSING-ROW (a result in the tree whose own LoadGen log says VALID has no
row: WARNING).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from checker.audit.table.accuracy_text import parse_accuracy_string, values_match
from checker.audit.table.checks import location_run_finding, row_benchmark
from checker.audit.table.model import POWER_UNITS, ResultTable, TableRow
from checker.audit.table.rederive import PERF_DETAIL, Rederived, rederive, within_rounding
from checker.checks.rule_registry import INFO, WARN, Case, RuleInfo, register, registered_finding
from checker.findings import Finding, Severity, UnusableInput
from checker.parsers.mllog import parse_detail_text
from checker.safe_io import SafeTree
from checker.tree import discover, walk_submitter
from rules.models import Round, Scenario

RULES = register(
    __name__,
    RuleInfo(
        "TABLE-REDERIVE",
        "-",
        "table --tree: a row's result, scenario or accuracy differs from its logs, or its logs "
        "are of a scenario the rules allow no inference from (WARNING: its inferred flag)",
        source="official checker D8 (RESULT_FIELD_NEW / per-LLM overrides)",  # the result
        cases={
            "not-inferable": Case(
                source="RULES_HEAD:326-337; CHK_HEAD_perf:515-537 (inferred_check), 665-666"
            ),
            "scenario": Case(source="LoadGen effective_scenario"),
            "endpoints-qps": Case(
                source="CHK_HEAD: get_performance_metric_check reports RESULT_FIELD_ENDPOINTS (qps) for endpoints "
                "results before the per-benchmark tokens/s override"
            ),
            "accuracy": Case(source="catalogue E3/E13 (acc_patterns)"),
            "not-edge": Case(
                source="RULES_HEAD:326-328; CHK_HEAD_perf:515-523 (inferred_check; the v5.1.1 checker does not check "
                "the system type)"
            ),
            "inferred-flag": Case(source="catalogue D17"),
        },
    ),
    RuleInfo(
        "TABLE-LOCATION-RUN",
        "-",
        "table --tree: a Location naming performance/run_1 of an MLPerf Endpoints result, "
        "which has none (the HEAD checker writes LoadGen's path for every result)",
        WARN,
        source="HEAD submission_checker/results.py:106-107; CHK_HEAD:2029-2035, 2055-2061",
    ),
    RuleInfo(
        "TABLE-LOGS-MISSING",
        "-",
        "table --tree: the row's result directory is not in the tree (listed)",
        INFO,
    ),
    RuleInfo(
        "TABLE-LOGS-UNREADABLE",
        "-",
        "table --tree: the row's directory is there but its logs cannot be used",
        WARN,
    ),
    RuleInfo(
        "TABLE-MISSING-ROW",
        "-",
        "table --tree: a result whose LoadGen log says VALID has no row",
        WARN,
        beyond=True,
    ),
)
# TABLE-LOCATION (a row's Location names a run directory the result lacks) is emitted by checker.audit.table.checks
# (location_run_finding), which registers it

DEFAULT_REL_TOL = 1e-4
ENDPOINTS_SUMMARY = "performance/result_summary.json"  # an endpoints (not LoadGen) result


class RowStatus(str, Enum):
    MATCH = "match"
    MISMATCH = "mismatch"
    LOGS_MISSING = "logs-missing"
    UNREADABLE = "logs-unreadable"
    NOT_CHECKED = "not-checked"  # no location or unknown benchmark


@dataclass(frozen=True)
class RowComparison:
    row: TableRow
    status: RowStatus
    derived: Rederived | None = None


@dataclass(frozen=True)
class TreeComparison:
    root: str
    rows: tuple[RowComparison, ...]
    missing_rows: tuple[str, ...]  # result dirs (relative to the repository root) without a row
    findings: tuple[Finding, ...]


class _Tree:
    """The tree the user pointed at; locations are relative to the repository root above it."""

    def __init__(self, root: Path, rnd: Round) -> None:
        if not root.is_dir():
            raise UnusableInput("--tree: not a directory", str(root))
        self.layout = discover(root, rnd.structure.divisions)
        if not self.layout.submitters:
            raise UnusableInput("--tree: no <division>/<submitter> directories found", str(root))
        self.safe = SafeTree(self.layout.checked)
        rel = os.path.relpath(self.layout.checked, self.layout.base)
        self.prefix = "" if rel == "." else rel.replace(os.sep, "/")

    def relative(self, location: str) -> str | None:
        loc = location.strip("/")
        if not self.prefix:
            return loc
        if loc == self.prefix or loc.startswith(self.prefix + "/"):
            return loc[len(self.prefix) + 1 :]
        return None

    def result_dirs(self) -> list[str]:
        out: list[str] = []
        for division, name in self.layout.submitters:
            sub = walk_submitter(self.layout.base, self.layout.checked, division, name)
            out.extend(r.path for r in sub.results)
        return sorted(out)


def compare_with_tree(
    table: ResultTable, root: Path, rnd: Round, rel_tol: float = DEFAULT_REL_TOL
) -> TreeComparison:
    check = TreeCheck(table, root, rnd, rel_tol)
    comparisons = [check.add(row) for row in table.rows]
    missing, findings = check.finish()
    return TreeComparison(str(root), tuple(comparisons), missing, tuple(check.findings) + findings)


def checker_writes_inferred(scenario: str | None, logged: str | None) -> bool:
    """The inferred flag the HEAD checker's summary writes for a row of ``scenario`` (the directory's name) whose
    log says ``logged`` (results.py:118-119: a string comparison whose exception is in lower case). A row it flags
    so without an inference carries the cause in TABLE-INFERRED-CHECKER (checks.py), not a second finding here."""
    if scenario is None or logged is None:
        return False
    return scenario != logged and (logged, scenario) != ("server", "interactive")


class TreeCheck:
    """:func:`compare_with_tree` one row at a time: :meth:`add` compares a row (its findings are appended to
    :attr:`findings`), :meth:`finish` lists the tree's results no row named. Between rows it holds the result
    directories rows named that are in the tree (to tell which are missing), not the rows."""

    def __init__(self, header: ResultTable, root: Path, rnd: Round, rel_tol: float = DEFAULT_REL_TOL) -> None:
        self.table = header
        self.root = root
        self.round = rnd
        self.rel_tol = rel_tol
        self.tree = _Tree(root, rnd)
        self.findings: list[Finding] = []
        self.covered: set[str] = set()

    def emit(
        self,
        row: TableRow,
        rule: str,
        field: str | None,
        message: str,
        *,
        severity: Severity | None = None,
        path: str | None = None,
        line: int | None = None,
        case: str | None = None,
    ) -> None:
        """A finding of ``rule`` about ``row``; severity, "beyond official" and source default to the rule's
        registration (its ``case``'s)."""
        col = f", column '{self.table.column(field)}'" if field else ""
        self.findings.append(
            registered_finding(
                rule=rule,
                severity=severity,
                message=f"{row.label()}{col}: {message}",
                result=row.location,
                scope=f"row {row.row}",
                path=path or self.table.path,
                line=line if path else row.line,
                case=case,
            )
        )

    def add(self, row: TableRow) -> RowComparison:
        table, root, rnd, tree, emit = self.table, self.root, self.round, self.tree, self.emit
        bench = row_benchmark(rnd, row, table)
        if row.location is None or bench is None:
            return RowComparison(row, RowStatus.NOT_CHECKED)
        rel = tree.relative(row.location)
        if rel is None or not tree.safe.is_dir(rel):
            result = RowComparison(row, RowStatus.LOGS_MISSING)
            emit(row, "TABLE-LOGS-MISSING", "location", f"no directory {row.location} in {root}")
            return result
        self.covered.add(row.location.strip("/").lower())
        if row.units in POWER_UNITS:
            # the power row the official summary writes after a result's performance row (v5.1.1 checker
            # L2195-2226, HEAD results.py:133-137): its value is the power metric, not a LoadGen result
            return RowComparison(row, RowStatus.NOT_CHECKED)
        published = (row.location_text or "").strip().lstrip("./").rstrip("/")
        run_dir = published[len(row.location.strip("/")) :].strip("/") if published else ""
        endpoints = tree.safe.is_file(f"{rel}/{ENDPOINTS_SUMMARY}")
        if run_dir and not tree.safe.is_dir(f"{rel}/{run_dir}"):
            if endpoints:
                emit(
                    row,
                    "TABLE-LOCATION-RUN",
                    "location",
                    f"'{row.location_text}' names {run_dir}/, which an MLPerf Endpoints result has none of (its "
                    f"performance result is {ENDPOINTS_SUMMARY}): the HEAD checker writes every row's Location as the "
                    "directory of LoadGen's performance/run_1/mlperf_log_detail.txt path (results.py:106-107, "
                    "CHK_HEAD:2029-2035 PERFORMANCE_LOG_PATH), an endpoints result's too",
                )
            else:
                self.findings.append(location_run_finding(table, rnd, row, run_dir))
        metrics = tuple(v.metric for v in parse_accuracy_string(row.accuracy or ""))
        derived = rederive(tree.safe, rel, rnd, bench, metrics)
        if derived.not_inferable is not None:
            emit(
                row,
                "TABLE-REDERIVE",
                "scenario",
                f"'{row.scenario}' but the log was run as {derived.effective_scenario}: {derived.not_inferable} "
                "(an edge system may infer MultiStream from SingleStream and Offline from either; an Interactive "
                "result is a Server run), so the published number is not a result of this scenario",
                case="not-inferable",
            )
            return RowComparison(row, RowStatus.MISMATCH, derived)
        if derived.value is None:
            result = RowComparison(row, RowStatus.UNREADABLE, derived)
            emit(
                row,
                "TABLE-LOGS-UNREADABLE",
                "result",
                "; ".join(derived.problems) or "no result in the logs",
            )
            return result
        ok = True
        scen = Scenario.parse(row.scenario) if row.scenario else None
        eff = Scenario.parse(derived.effective_scenario) if derived.effective_scenario else None
        if scen is not None and eff is not None and not derived.inferred and scen.loadgen_scenario is not eff:
            ok = False
            emit(
                row,
                "TABLE-REDERIVE",
                "scenario",
                f"'{row.scenario}' but the log was run as {derived.effective_scenario} (effective_scenario)",
                case="scenario",
            )
        qps = derived.endpoints_qps
        if (
            row.result is not None
            and qps is not None
            and not within_rounding(row.result, row.result_text, derived.value, self.rel_tol)
            and within_rounding(row.result, row.result_text, qps, self.rel_tol)
        ):
            ok = False
            emit(
                row,
                "TABLE-REDERIVE",
                "result",
                f"table says {row.result_text} {row.units or ''}: that is the endpoints result's queries/s "
                f"({qps:.6g}, {row.location.strip('/')}/{ENDPOINTS_SUMMARY}); in {row.units or 'the round units'} "
                f"the result is {derived.value:.6g} ({derived.key})",
                case="endpoints-qps",
            )
        elif row.result is not None and not within_rounding(
            row.result, row.result_text, derived.value, self.rel_tol
        ):
            ok = False
            emit(
                row,
                "TABLE-REDERIVE",
                "result",
                f"table says {row.result_text}, the logs give {derived.value:.6g} ({derived.key}"
                + (f", {row.location.strip('/')}/{PERF_DETAIL}:{derived.line}" if derived.line else "")
                + "); "
                f"difference {100 * (row.result - derived.value) / derived.value:+.3f}%",
            )
        for printed in parse_accuracy_string(row.accuracy or ""):
            measured = derived.accuracy.get(printed.metric)
            if measured is not None and not values_match(printed, measured):
                ok = False
                emit(
                    row,
                    "TABLE-REDERIVE",
                    "accuracy",
                    f"{printed.metric} {printed.text} but accuracy/accuracy.txt gives {measured:g}",
                    case="accuracy",
                )
        edge = row.suite is None or "edge" in row.suite.lower()
        if derived.inferred and not edge:
            ok = False
            emit(
                row,
                "TABLE-REDERIVE",
                "scenario",
                f"'{row.scenario}' is inferred from a {derived.effective_scenario} run, but only an edge system may "
                f"infer a result ('{row.suite}' is not edge)",
                case="not-edge",
            )
        if (
            row.inferred is not None
            and row.inferred != derived.inferred
            and not (row.inferred and checker_writes_inferred(row.scenario, derived.logged_scenario))
        ):
            emit(
                row,
                "TABLE-REDERIVE",
                "inferred",
                f"{'1' if row.inferred else '0'} but the result {'is' if derived.inferred else 'is not'} inferred "
                f"from another scenario's run ({derived.effective_scenario})",
                severity=Severity.WARNING,
                case="inferred-flag",
            )
        return RowComparison(row, RowStatus.MATCH if ok else RowStatus.MISMATCH, derived)

    def finish(self) -> tuple[tuple[str, ...], tuple[Finding, ...]]:
        """(result directories of the tree without a row, their TABLE-MISSING-ROW findings)."""
        tree, covered, table = self.tree, self.covered, self.table
        findings: list[Finding] = []
        missing: list[str] = []
        for rel_dir in tree.result_dirs():
            if rel_dir.lower() in covered:
                continue
            rel = tree.relative(rel_dir)
            if rel is None:
                continue
            read = tree.safe.read_text(f"{rel}/performance/run_1/mlperf_log_detail.txt")
            if read.text is None:
                continue
            log = parse_detail_text(read.text)
            if log.result_validity != "VALID" or not tree.safe.is_file(f"{rel}/accuracy/accuracy.txt"):
                continue
            missing.append(rel_dir)
            findings.append(
                registered_finding(
                    rule="TABLE-MISSING-ROW",
                    message=f"{rel_dir}: a result whose LoadGen log says VALID (with an accuracy run) has no row in the "
                    "table (run `inference-audit check` for the full verdict)",
                    result=rel_dir,
                    scope="table",
                    path=table.path,
                )
            )
        return tuple(missing), tuple(findings)
