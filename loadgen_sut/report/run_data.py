"""A run directory read for its report: the run record, each test's LoadGen detail log and SUT timeline.

Parse, then judge: :func:`load_run` makes typed records (:class:`RunView`, :class:`TestView`,
:class:`DetailFacts`); :mod:`loadgen_sut.report.explain` and :mod:`loadgen_sut.report.run_page` only read them.
A missing or malformed run record is an :class:`~checker.findings.UnusableInput` naming it; a test's missing or
malformed detail log or timeline is a note on the page (the rest of the run still has its report).
"""

from __future__ import annotations

import errno
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from pydantic import ValidationError

from checker.findings import UnusableInput
from checker.parsers.mllog import DetailLog, parse_detail_text
from checker.safe_io import DEFAULT_MAX_TEXT_BYTES, read_input_bytes, read_input_json
from checker.safe_json import non_finite_at
from loadgen_sut.record import RECORD_FILE, RunRecord, TestRecord
from loadgen_sut.timeline import TIMELINE_FILE, Timeline, parse_timeline
from rules.models import Benchmark, Round, Scenario, TokenLatencyLimit
from rules.registry import UnknownRound, load_round
from schemas import schema_refusal

DETAIL_FILE = "mlperf_log_detail.txt"
SUMMARY_FILE = "mlperf_log_summary.txt"
PERCENTILES = (50.0, 90.0, 95.0, 97.0, 99.0, 99.9)
_POWER_TIME = "%m-%d-%Y %H:%M:%S.%f"
_NEED_MORE = re.compile(r"Would need to run at least (\d+) more queries")
_PROCESSED = re.compile(r"Processed (\d+) queries")
_NEED_TOTAL = re.compile(r"Need to process at least (\d+) queries")
MAX_TIMELINE_BYTES = 512 * 1024 * 1024


@dataclass(frozen=True)
class Logged:
    """One value of the detail log and the line it is on (None: not logged)."""

    key: str
    value: object
    line: int | None


@dataclass(frozen=True)
class EarlyStoppingText:
    """LoadGen's early-stopping verdict for one latency (TTFT, TPOT, or the e2e latency), as it wrote it."""

    which: str  # "TTFT", "TPOT", "latency"
    key: str
    text: str
    line: int | None
    successful: bool
    processed: int | None = None  # "Processed N queries"
    more_needed: int | None = None  # "Would need to run at least N more queries"
    total_needed: int | None = None  # "Need to process at least N queries" (SingleStream / MultiStream)


@dataclass(frozen=True)
class DetailFacts:
    """What the report needs from one ``mlperf_log_detail.txt`` (None: not logged). Times in ns, rates per s."""

    path: Path
    validity: str | None
    perf_constraints_met: bool | None
    min_duration_met: bool | None
    min_queries_met: bool | None
    early_stopping_met: bool | None
    invalid_reason: str | None
    scenario: str | None
    query_count: int | None
    min_query_count: int | None
    min_duration_ms: int | None
    max_duration_ms: int | None
    max_query_count: int | None
    target_qps: float | None
    target_latency_ns: int | None
    target_percentile: float | None  # fraction (0.99)
    ttft_gate_ns: int | None  # requested_server_ttft_latency: the TTFT gate LoadGen applied
    tpot_gate_ns: int | None
    scheduled_per_s: float | None
    completed_per_s: float | None
    samples_per_s: float | None  # Offline
    tokens_per_s: float | None  # completed tokens/s (Server) or tokens/s (Offline)
    duration_s: float | None  # power_end - power_begin: LoadGen's performance window
    ttft_ns: dict[float, float]  # percentile -> ns
    tpot_ns: dict[float, float]
    latency_ns: dict[float, float]
    early_stopping: tuple[EarlyStoppingText, ...]
    errors: tuple[Logged, ...]
    lines: dict[str, int]  # key -> line, for the keys above

    def line(self, key: str) -> int | None:
        return self.lines.get(key)


@dataclass(frozen=True)
class Limits:
    """The p99 gates that apply: the round's (``round_*``, from the rules data with its citation) and the ones
    LoadGen applied in this run (``gate_*``: differ in a trial that overrides them). Milliseconds."""

    round_ttft_ms: float | None
    round_tpot_ms: float | None
    cite: str | None  # "mlcommons/inference/.../constants.py:1778-1780"
    gate_ttft_ms: float | None
    gate_tpot_ms: float | None
    percentile: float  # fraction, 0.99

    @property
    def ttft_ms(self) -> float | None:
        return self.gate_ttft_ms if self.gate_ttft_ms is not None else self.round_ttft_ms

    @property
    def tpot_ms(self) -> float | None:
        return self.gate_tpot_ms if self.gate_tpot_ms is not None else self.round_tpot_ms


@dataclass(frozen=True)
class TestView:
    __test__ = False  # not a pytest class

    test: TestRecord
    directory: Path
    detail: DetailFacts | None
    detail_note: str | None  # why there is no detail log (None: there is one)
    timeline: Timeline | None
    timeline_note: str | None  # why there is no timeline (None: there is one)


@dataclass(frozen=True)
class RunView:
    record: RunRecord
    run_dir: Path
    record_path: Path
    round: Round | None
    benchmark: Benchmark | None
    scenario: Scenario | None
    limits: Limits
    tests: tuple[TestView, ...]
    notes: tuple[str, ...] = field(default_factory=tuple)

    def test(self, name: str) -> TestView | None:
        return next((t for t in self.tests if t.test.name == name), None)


def _as_bool(v: object) -> bool | None:
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v.strip().lower() in ("true", "false"):
        return v.strip().lower() == "true"
    return None


def _duration_s(log: DetailLog) -> float | None:
    begin, end = log.str_value("power_begin"), log.str_value("power_end")
    if not begin or not end:
        return None
    try:
        return (datetime.strptime(end, _POWER_TIME) - datetime.strptime(begin, _POWER_TIME)).total_seconds()
    except ValueError:
        return None


def _early_stopping(log: DetailLog) -> tuple[EarlyStoppingText, ...]:
    out = []
    for which, key in (("TTFT", "early_stopping_ttft_result"), ("TPOT", "early_stopping_tpot_result"),
                       ("latency", "early_stopping_result")):
        text = log.str_value(key)
        if text is None:
            continue
        text = text.strip()
        more, processed, total = _NEED_MORE.search(text), _PROCESSED.search(text), _NEED_TOTAL.search(text)
        out.append(
            EarlyStoppingText(
                which=which,
                key=key,
                text=text,
                line=log.line_of(key),
                successful="unsuccessful" not in text.lower() and total is None and more is None,
                processed=int(processed.group(1)) if processed else None,
                more_needed=int(more.group(1)) if more else None,
                total_needed=int(total.group(1)) if total else None,
            )
        )
    return tuple(out)


def detail_facts(log: DetailLog, path: Path) -> DetailFacts:
    keys = (
        "result_validity", "result_perf_constraints_met", "result_min_duration_met", "result_min_queries_met",
        "early_stopping_met", "result_invalid_reason", "result_query_count", "effective_min_query_count",
        "effective_min_duration_ms", "effective_target_qps", "requested_server_ttft_latency",
        "requested_server_tpot_latency", "result_completed_tokens_per_second", "result_tokens_per_second",
        "result_first_token_99.00_percentile_latency_ns", "result_time_per_output_token_99.00_percentile_ns",
        "result_99.00_percentile_latency_ns", "effective_max_duration_ms", "effective_max_query_count",
        "result_completed_samples_per_sec", "result_scheduled_samples_per_sec", "result_samples_per_second",
        "power_begin", "power_end", "effective_target_latency_ns", "early_stopping_latency_ss",
    )
    lines = {k: line for k in keys if (line := log.line_of(k)) is not None}

    def pct(kind: str) -> dict[float, float]:
        got = {p: log.percentile_ns(kind, p) for p in PERCENTILES}
        return {p: v for p, v in got.items() if v is not None}

    perc = log.float_value("effective_target_latency_percentile")
    tokens = log.float_value("result_completed_tokens_per_second")
    if tokens is None:
        tokens = log.float_value("result_tokens_per_second")
    errors = tuple(Logged(r.key, r.value, r.line) for r in log.errors)
    return DetailFacts(
        path=path,
        validity=log.result_validity,
        perf_constraints_met=_as_bool(log.value("result_perf_constraints_met")),
        min_duration_met=_as_bool(log.value("result_min_duration_met")),
        min_queries_met=_as_bool(log.value("result_min_queries_met")),
        early_stopping_met=_as_bool(log.value("early_stopping_met")),
        invalid_reason=(log.str_value("result_invalid_reason") or "").strip() or None,
        scenario=log.effective_scenario,
        query_count=log.int_value("result_query_count"),
        min_query_count=log.int_value("effective_min_query_count"),
        min_duration_ms=log.int_value("effective_min_duration_ms"),
        max_duration_ms=log.int_value("effective_max_duration_ms"),
        max_query_count=log.int_value("effective_max_query_count"),
        target_qps=log.float_value("effective_target_qps"),
        target_latency_ns=log.int_value("effective_target_latency_ns"),
        target_percentile=perc if perc is None or perc <= 1 else perc / 100.0,
        ttft_gate_ns=log.int_value("requested_server_ttft_latency"),
        tpot_gate_ns=log.int_value("requested_server_tpot_latency"),
        scheduled_per_s=log.float_value("result_scheduled_samples_per_sec"),
        completed_per_s=log.float_value("result_completed_samples_per_sec"),
        samples_per_s=log.float_value("result_samples_per_second"),
        tokens_per_s=tokens,
        duration_s=_duration_s(log),
        ttft_ns=pct("first_token"),
        tpot_ns=pct("time_per_output_token"),
        latency_ns=pct("latency"),
        early_stopping=_early_stopping(log),
        errors=errors,
        lines=lines,
    )


def _read_detail(path: Path) -> tuple[DetailFacts | None, str | None]:
    if not path.exists():
        return None, f"no {DETAIL_FILE} in {path.parent.name}/ (the test did not reach LoadGen's end)"
    try:
        raw = read_input_bytes(path, what="LoadGen detail log")
        text = raw.decode("utf-8")
    except UnusableInput as exc:
        return None, str(exc)
    except UnicodeDecodeError as exc:
        return None, f"{path}: not UTF-8 text (byte {exc.start})"
    return detail_facts(parse_detail_text(text, str(path)), path), None


def _read_timeline(path: Path) -> tuple[Timeline | None, str | None]:
    if not path.exists():
        return None, (
            f"no per-sample timeline ({TIMELINE_FILE}) in {path.parent.name}/: the plots over time, the "
            "per-sample distributions and the count of queries over each limit need it (a run made before the SUT "
            "wrote timelines, or a test that did not finish). The distributions shown are LoadGen's logged "
            "percentiles."
        )
    try:
        raw = read_input_bytes(path, what="SUT timeline", max_bytes=MAX_TIMELINE_BYTES)
        return parse_timeline(raw.splitlines(), str(path)), None
    except UnusableInput as exc:
        return None, f"the timeline could not be used: {exc}"


def _limits(record: RunRecord, bench: Benchmark | None, scenario: Scenario | None, rnd: Round | None,
            facts: DetailFacts | None, test: TestRecord | None) -> Limits:
    lim: TokenLatencyLimit | None = bench.token_latency_limits.get(scenario) if bench and scenario else None
    cite = None
    if lim is not None and lim.cite and rnd is not None:
        source_id, _, lines = lim.cite.partition(":")
        src = rnd.sources.get(source_id)
        cite = f"{src.path}:{lines} ({src.provenance})" if src else lim.cite
    settings = (test.loadgen_settings if test is not None else None) or record.settings
    gate_ttft = facts.ttft_gate_ns if facts and facts.ttft_gate_ns else settings.ttft_latency_ns
    gate_tpot = facts.tpot_gate_ns if facts and facts.tpot_gate_ns else settings.tpot_latency_ns
    use_tokens = settings.use_token_latencies
    percentile = (facts.target_percentile if facts and facts.target_percentile else None) or (
        settings.target_latency_percentile or 0.99
    )
    return Limits(
        round_ttft_ms=lim.ttft_ms if lim else None,
        round_tpot_ms=lim.tpot_ms if lim else None,
        cite=cite,
        gate_ttft_ms=gate_ttft / 1e6 if gate_ttft and use_tokens else None,
        gate_tpot_ms=gate_tpot / 1e6 if gate_tpot and use_tokens else None,
        percentile=percentile,
    )


def find_record(path: Path) -> Path:
    """The run record of ``path``: the file itself, or ``PATH/run-record.json``."""
    if path.is_dir():
        return path / RECORD_FILE
    return path


def read_record(record_path: Path) -> RunRecord:
    """The run record at ``record_path``, parsed as every JSON input is (:func:`checker.safe_io.read_input_json`:
    bounded size and depth, a key given twice refused), then checked against ``schemas/run-record.json`` and the
    model; UnusableInput naming the file when it is not one. Its writer writes a non-finite number as null
    (pydantic's JSON), so a record holding NaN or Infinity is an edited one, refused as well."""
    where = str(record_path)
    data = read_input_json(record_path, "run record", max_bytes=DEFAULT_MAX_TEXT_BYTES)
    at = non_finite_at(data)
    if at is not None:
        raise UnusableInput(f"not a run record: {at} is not a finite number (a run record writes null there)", where)
    problems = schema_refusal(data, "run-record")
    if problems is not None:
        raise UnusableInput(f"not a run record: {problems}", where)
    try:
        return RunRecord.model_validate(data)
    except ValidationError as exc:
        detail = str(exc).splitlines()
        raise UnusableInput(f"not a run record ({'; '.join(detail[:3])[:300]})", where) from None


def load_run(path: Path) -> RunView:
    """Read a run directory (or its ``run-record.json``); UnusableInput naming the record when it is not one."""
    record_path = find_record(path)
    record = read_record(record_path)
    run_dir = record_path.parent
    notes: list[str] = []
    rnd: Round | None = None
    try:
        rnd = load_round(record.round)
    except UnknownRound as exc:
        notes.append(f"round {record.round}: {exc}; the round's latency limits are not drawn")
    bench = rnd.benchmark(record.benchmark) if rnd else None
    scenario = Scenario.parse(record.scenario)
    tests = []
    for t in record.tests:
        directory = run_dir / t.directory
        try:
            inside = directory.resolve().is_relative_to(run_dir.resolve())
        except (RuntimeError, OSError) as exc:  # a symlink loop: RuntimeError before Python 3.13, OSError since
            why = exc.strerror if isinstance(exc, OSError) and exc.errno != errno.ELOOP else "a loop of symbolic links"
            raise UnusableInput(f"the directory of test {t.name} cannot be resolved ({why})", str(directory)) from None
        if not inside:
            tests.append(TestView(t, directory, None, f"{t.directory} is outside the run directory; not read", None,
                                  "not read"))
            continue
        facts, detail_note = _read_detail(directory / DETAIL_FILE)
        timeline, timeline_note = _read_timeline(directory / TIMELINE_FILE)
        tests.append(TestView(t, directory, facts, detail_note, timeline, timeline_note))
    perf = next((v for v in tests if v.test.name in ("performance", "find-peak")), None)
    limits = _limits(record, bench, scenario, rnd, perf.detail if perf else None, perf.test if perf else None)
    return RunView(record, run_dir, record_path, rnd, bench, scenario, limits, tuple(tests), tuple(notes))
