"""What a check sees: the round, the submitter's walked tree, and one result directory with its files parsed lazily.

Each file is read at most once (through :mod:`checker.safe_io`) and parsed on first use; a file that cannot be read
turns into one finding, reported by the check family that owns that file.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from checker.checks.rule_registry import registered_finding
from checker.findings import Finding, Severity
from checker.parsers.endpoints import (
    ACCURACY_RESULTS,
    CONFIG_FILES,
    RESULT_SUMMARY,
    EndpointsRun,
    parse_endpoints,
)
from checker.parsers.mllog import DetailLog, SummaryLog, parse_detail_text, parse_summary_text
from checker.parsers.system_desc import SystemDesc, SystemDescRead, parse_system_desc
from checker.safe_io import JsonRead, ReadProblem, SafeTree, TextRead, json_read
from checker.tree import ResultDir, SubmitterTree
from rules.models import Benchmark, Round, Scenario


class FileCache:
    """Per-submitter cache: every file is read once."""

    def __init__(self, tree: SafeTree) -> None:
        self.tree = tree
        self._text: dict[str, TextRead] = {}
        self._json: dict[str, JsonRead] = {}
        self._detail: dict[str, tuple[DetailLog | None, ReadProblem | None]] = {}
        self._summary: dict[str, tuple[SummaryLog | None, ReadProblem | None]] = {}

    def text(self, rel: str, *, allow_empty: bool = False) -> TextRead:
        tr = self._text.get(rel)
        if tr is None:
            tr = self.tree.read_text(rel, allow_empty=True)
            self._text[rel] = tr
        if tr.text is not None and not tr.text and not allow_empty:
            return TextRead(None, ReadProblem(rel, "empty", f"{rel}: file is empty"))
        return tr

    def json(self, rel: str) -> JsonRead:
        jr = self._json.get(rel)
        if jr is None:
            tr = self.text(rel)
            # parsed with bounds: nesting depth, long integers (checker.safe_io.parse_json)
            jr = JsonRead(None, tr.problem) if tr.text is None else json_read(rel, tr.text)
            self._json[rel] = jr
        return jr

    def detail(self, rel: str) -> tuple[DetailLog | None, ReadProblem | None]:
        got = self._detail.get(rel)
        if got is None:
            tr = self.text(rel)
            got = (parse_detail_text(tr.text, rel), None) if tr.text is not None else (None, tr.problem)
            self._detail[rel] = got
            self._text.pop(rel, None)  # the parsed log keeps what it needs
        return got

    def forget_logs(self) -> None:
        """Drop everything but JSON documents (called after each result, to bound memory)."""
        self._text.clear()
        self._detail.clear()
        self._summary.clear()

    def summary(self, rel: str) -> tuple[SummaryLog | None, ReadProblem | None]:
        got = self._summary.get(rel)
        if got is None:
            tr = self.text(rel)
            got = (parse_summary_text(tr.text, rel), None) if tr.text is not None else (None, tr.problem)
            self._summary[rel] = got
        return got


@dataclass
class SubmitterContext:
    round: Round
    tree: SafeTree
    sub: SubmitterTree
    files: FileCache
    model_mapping: dict[str, str] = field(default_factory=dict)  # open division model_mapping.json
    findings: list[Finding] = field(default_factory=list)  # submitter-level findings
    _systems: dict[str, SystemDescRead] = field(
        default_factory=dict, repr=False
    )  # system -> parsed description

    @property
    def division(self) -> str:
        return self.sub.division

    @property
    def closed_or_network(self) -> bool:
        return self.sub.division in ("closed", "network")

    def system_read(self, system: str) -> SystemDescRead:
        """``systems/<system>.json`` read (safe reader) and parsed once: the record, or why there is none."""
        got = self._systems.get(system)
        if got is None:
            rel = self.round.structure.layout.system_file_of(self.sub.division, self.sub.name, system)
            tr = self.files.text(rel)
            got = SystemDescRead(None, tr.problem) if tr.text is None else parse_system_desc(rel, tr.text)
            self._systems[system] = got
        return got

    def system_desc(self, system: str) -> SystemDesc | None:
        """The parsed description of ``system`` (None when it is missing, unreadable or not a JSON object)."""
        return self.system_read(system).desc

    def resolve_model(self, benchmark_dir: str) -> str | None:
        """Directory name -> benchmark of the round (open model_mapping.json first, then the round's aliases and
        the official substring heuristics)."""
        return self.round.resolve(self.model_mapping.get(benchmark_dir, benchmark_dir))


@dataclass(slots=True)
class SummaryInputs:
    """What the checks compute for a result's summary-CSV row (the official ``log_result`` columns); None: not computed.

    Set by: ``result``/``inferred`` -- :mod:`checker.checks.inferred` (or endpoints); ``accuracy``/``accuracy_metrics``
    -- :mod:`checker.checks.accuracy` (or endpoints); ``compliance`` -- :mod:`checker.checks.compliance`;
    ``power_metric`` -- :mod:`checker.checks.power`; ``weight_data_types`` -- :mod:`checker.checks.measurements`.
    """

    result: float | None = None  # in the summary CSV's unit (ms for SingleStream/MultiStream)
    inferred: bool = False
    accuracy: str | None = None  # the CSV's Accuracy string
    accuracy_metrics: dict[str, str] = field(default_factory=dict)  # metric -> the text accuracy.txt shows
    compliance: int = 1  # 0: a compliance test failed (the official column)
    power_metric: float | None = None
    weight_data_types: str | None = None


@dataclass
class ResultContext:
    """One result directory under check."""

    sctx: SubmitterContext
    rd: ResultDir
    mlperf_model: str | None
    benchmark: Benchmark | None
    scenario: Scenario | None  # canonical scenario of the directory name
    system_desc: SystemDesc | None  # systems/<system>.json parsed (None: missing, unreadable, not an object)
    computed: SummaryInputs = field(
        default_factory=SummaryInputs
    )  # what the checks compute for the summary row
    _is_endpoints: bool | None = None
    _endpoints_run: EndpointsRun | None = None

    @property
    def round(self) -> Round:
        return self.sctx.round

    @property
    def files(self) -> FileCache:
        return self.sctx.files

    @property
    def closed_or_network(self) -> bool:
        return self.sctx.closed_or_network

    @property
    def system_type_key(self) -> str | None:
        return None if self.system_desc is None else self.system_desc.system_type_key

    def exists_file(self, rel: str) -> bool:
        return self.sctx.sub.is_file(rel) or self.sctx.tree.is_file(rel)

    def exists_dir(self, rel: str) -> bool:
        return self.sctx.sub.is_dir(rel) or self.sctx.tree.is_dir(rel)

    def list_files(self, rel_dir: str) -> list[str]:
        return self.sctx.sub.list_files(rel_dir)

    def finding(
        self,
        rule: str,
        message: str,
        *,
        severity: Severity | None = None,
        path: str | None = None,
        line: int | None = None,
        source: str | None = None,
        fix: str | None = None,
        beyond_official: bool | None = None,
        trial: bool | None = None,
        case: str | None = None,
    ) -> Finding:
        """A finding of ``rule`` about this result; severity, "beyond the official checker", "trial", fix and source
        default to its registration (:func:`~checker.checks.rule_registry.registered_finding`)."""
        return registered_finding(
            rule,
            message,
            severity=severity,
            beyond_official=beyond_official,
            trial=trial,
            result=self.rd.path,
            path=path,
            line=line,
            source=source,
            fix=fix,
            case=case,
        )

    def log_finding(
        self,
        rule: str,
        message: str,
        log: DetailLog,
        rel: str,
        key: str | None,
        *,
        source: str | None = None,
        fix: str | None = None,
        severity: Severity | None = None,
        beyond_official: bool | None = None,
        trial: bool | None = None,
        case: str | None = None,
    ) -> Finding:
        """A finding about LoadGen key ``key`` of the run log at ``rel`` (pointing at its line; for an Endpoints result,
        at the document the value came from)."""
        return self.finding(
            rule,
            message,
            severity=severity,
            path=log.document(key, rel) if key else rel,
            line=log.line_of(key) if key else None,
            source=source,
            fix=fix,
            beyond_official=beyond_official,
            trial=trial,
            case=case,
        )

    def problem(
        self,
        rule: str,
        problem: ReadProblem,
        *,
        source: str | None = None,
        fix: str | None = None,
        case: str | None = None,
    ) -> Finding:
        return problem.finding(rule, result=self.rd.path, source=source, fix=fix, case=case)

    # ---- shared artefacts --------------------------------------------------------------------------------
    @property
    def perf_detail_path(self) -> str:
        return f"{self.rd.performance_dir}/mlperf_log_detail.txt"

    def perf_detail(self) -> DetailLog | None:
        return self.files.detail(self.perf_detail_path)[0]

    @property
    def acc_detail_path(self) -> str:
        return f"{self.rd.accuracy_dir}/mlperf_log_detail.txt"

    # ---- endpoints results (v6.1: MLPerf Endpoints instead of LoadGen) --------------------------------------
    @property
    def is_endpoints(self) -> bool:
        """An endpoints result: no LoadGen detail log (performance nor accuracy) but an Endpoints document, as the
        official loader decides (it falls back to the endpoints parser when both detail logs are missing)."""
        got = self._is_endpoints
        if got is None:
            p = self.rd.path
            loadgen = self.exists_file(self.perf_detail_path) or self.exists_file(self.acc_detail_path)
            docs = [f"{p}/{n}" for n in CONFIG_FILES] + [f"{p}/{RESULT_SUMMARY}", f"{p}/{ACCURACY_RESULTS}"]
            got = (
                not loadgen
                and not self.exists_dir(self.rd.performance_dir)
                and any(map(self.exists_file, docs))
            )
            self._is_endpoints = got
        return got

    def endpoints_run(self) -> EndpointsRun:
        """The endpoints documents of this result, read once and parsed."""
        if self._endpoints_run is not None:
            return self._endpoints_run
        p = self.rd.path
        config = None
        for name in CONFIG_FILES:
            if self.exists_file(f"{p}/{name}"):
                tr = self.files.text(f"{p}/{name}")
                config = (name, tr.text, tr.problem.message if tr.problem else None)
                break

        def text(rel: str) -> str | None:
            return self.files.text(f"{p}/{rel}").text if self.exists_file(f"{p}/{rel}") else None

        run = parse_endpoints(config, text(RESULT_SUMMARY), text(ACCURACY_RESULTS))
        self._endpoints_run = run
        return run

    @property
    def has_power(self) -> bool:
        return self.exists_dir(self.rd.power_dir)

    def compliance_dir(self) -> str:
        """Where this result's TESTxx directories live in the round's layout."""
        return self.round.structure.layout.compliance_path(self.rd.location)

    @property
    def measurement_dir(self) -> str:
        """Where user.conf, README.md, mlperf.conf and the implementation JSON live in the round's layout."""
        return self.round.structure.layout.measurements_path(self.rd.location)
