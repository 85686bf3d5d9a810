"""Re-derive a table row's result and accuracy from the logs it points to (``--tree``).

The result is computed by :mod:`checker.result_value`, the computation the checker's summary rows use
(catalogue D8): the LoadGen key ``Benchmark.result_field_overrides[effective scenario]`` (tokens/s for LLMs) or
``Round.result_fields[...]``, read from ``performance/run_1/mlperf_log_detail.txt``; SingleStream/MultiStream
latencies divided by 1e6 (ns to ms). Server results are the *completed* rates (``result_completed_samples_per_sec`` /
``result_completed_tokens_per_second``) — that is what the v5.1 checker and the published table use (D-16),
although the Rules FAQ names scheduled samples/s. Results inferred from another scenario's run (edge, catalogue
D17) use the official formulas. Accuracy values are read from ``accuracy/accuracy.txt`` with the round's
``acc_patterns`` (``re.match`` per line, catalogue E3).

Reads go through :class:`checker.safe_io.SafeTree`: nothing outside the tree is followed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from checker.parsers.endpoints import (
    ACCURACY_RESULTS,
    CONFIG_FILES,
    RESULT_SUMMARY,
    EndpointsRun,
    parse_endpoints,
)
from checker.parsers.mllog import DetailLog, parse_detail_text
from checker.result_value import ResultStatus, ResultValue, compute_result
from checker.safe_io import SafeTree
from rules.models import Benchmark, Round, Scenario

PERF_DETAIL = "performance/run_1/mlperf_log_detail.txt"
ACCURACY_TXT = "accuracy/accuracy.txt"


@dataclass(frozen=True)
class Rederived:
    """What the logs of one result directory say."""

    location: str
    value: float | None = None
    key: str | None = None  # LoadGen key (or formula) the value comes from
    line: int | None = None  # line of that key in the detail log
    effective_scenario: str | None = None
    # what the HEAD checker's summary compares the directory's name with (results.py:118): the LoadGen log's
    # effective_scenario, or an endpoints result's config.yaml type ('offline' / 'online', CHK_HEAD:2259)
    logged_scenario: str | None = None
    inferred: bool = False
    not_inferable: str | None = None  # the scenario is one the rules allow no inference of from the log's (why)
    result_validity: str | None = None
    accuracy: dict[str, float] = field(default_factory=dict)
    problems: tuple[str, ...] = ()
    endpoints_qps: float | None = None  # an MLPerf Endpoints result: its queries/s (what the HEAD summary prints)

    @property
    def detail_path(self) -> str:
        return f"{self.location}/{PERF_DETAIL}"


def rederive(
    tree: SafeTree, location: str, rnd: Round, bench: Benchmark, metrics: tuple[str, ...]
) -> Rederived:
    """Re-derive the result (and the accuracy ``metrics``) of ``location`` (relative to the tree root)."""
    problems: list[str] = []
    directory = Scenario.parse(location.rstrip("/").rsplit("/", 1)[-1])
    rv: ResultValue | None = None
    effective_name: str | None = None
    validity: str | None = None
    endpoints = _endpoints_run(tree, location) if not tree.is_file(f"{location}/{PERF_DETAIL}") else None
    log: DetailLog | None = None
    if endpoints is not None:  # an MLPerf Endpoints result: the same keys, from its JSON/YAML documents
        log = endpoints.detail_log(f"{location}/{RESULT_SUMMARY}")
        problems += [p.message for p in endpoints.problems]
    else:
        read = tree.read_text(f"{location}/{PERF_DETAIL}")
        if read.text is None:
            problems.append(read.problem.message if read.problem else f"{location}/{PERF_DETAIL}: not readable")
        else:
            log = parse_detail_text(read.text, f"{location}/{PERF_DETAIL}")
    not_inferable: str | None = None
    if log is not None:
        effective_name = log.effective_scenario
        validity = log.result_validity
        rv = compute_result(log, rnd, bench, directory)
        problem = _problem(rv, rnd, location, directory)
        if rv.status in (ResultStatus.INTERACTIVE_NOT_SERVER, ResultStatus.NOT_INFERABLE):
            not_inferable = problem
        elif problem is not None:
            problems.append(problem)
    if endpoints is not None:
        score = endpoints.accuracy_score
        accuracy = {m: score for m in metrics} if score is not None and len(metrics) == 1 else {}
    else:
        accuracy = _accuracy(tree, location, rnd, metrics, problems)
    return Rederived(
        location=location,
        value=None if rv is None or rv.status is not ResultStatus.OK else rv.value,
        key=None if rv is None else rv.key,
        line=None if rv is None else rv.line,
        effective_scenario=effective_name,
        logged_scenario=endpoints.run_type if endpoints is not None else effective_name,
        inferred=rv is not None and rv.inferred,
        not_inferable=not_inferable,
        result_validity=validity,
        accuracy=accuracy,
        problems=tuple(problems),
        endpoints_qps=endpoints.qps if endpoints is not None else None,
    )


def _endpoints_run(tree: SafeTree, location: str) -> EndpointsRun | None:
    """The endpoints documents of ``location`` when it is an endpoints result (no LoadGen log, a result summary)."""
    if not tree.is_file(f"{location}/{RESULT_SUMMARY}"):
        return None
    config = None
    for name in CONFIG_FILES:
        if tree.is_file(f"{location}/{name}"):
            read = tree.read_text(f"{location}/{name}")
            config = (name, read.text, read.problem.message if read.problem else None)
            break

    def text(rel: str) -> str | None:
        return tree.read_text(f"{location}/{rel}").text if tree.is_file(f"{location}/{rel}") else None

    return parse_endpoints(config, text(RESULT_SUMMARY), text(ACCURACY_RESULTS))


def _problem(rv: ResultValue, rnd: Round, location: str, directory: Scenario | None) -> str | None:
    path = f"{location}/{PERF_DETAIL}"
    eff = rv.effective.value if rv.effective is not None else "?"
    if rv.status is ResultStatus.NO_EFFECTIVE_SCENARIO:
        return f"{path}: no effective_scenario"
    if rv.status is ResultStatus.NO_RESULT_KEY:
        return f"round {rnd.name} has no result key for {eff}"
    if rv.status in (ResultStatus.INTERACTIVE_NOT_SERVER, ResultStatus.NOT_INFERABLE):
        scen = directory.value if directory is not None else "?"
        return f"{path}: no official inference of {scen} from a {eff} run"
    if rv.value is None:
        return f"{path}: no value for {rv.key}"
    return None


def _accuracy(
    tree: SafeTree, location: str, rnd: Round, metrics: tuple[str, ...], problems: list[str]
) -> dict[str, float]:
    wanted = [m for m in metrics if m in rnd.acc_patterns]
    if not wanted:
        return {}
    read = tree.read_text(f"{location}/{ACCURACY_TXT}")
    if read.text is None:
        problems.append(read.problem.message if read.problem else f"{location}/{ACCURACY_TXT}: not readable")
        return {}
    out: dict[str, float] = {}
    lines = read.text.splitlines()
    for metric in wanted:
        pattern = re.compile(rnd.acc_patterns[metric])
        for text in lines:
            m = pattern.match(text)
            if m:
                try:
                    out[metric] = float(m.group(1))
                except (ValueError, IndexError):
                    continue
                break
    return out


def within_rounding(published: float, published_text: str | None, derived: float, rel_tol: float) -> bool:
    """Does ``derived`` round to the published value?

    Accepts when the derived value rounded to the published number of decimals equals it, or when the relative
    difference is at most ``rel_tol`` (published tables round to about six significant digits).
    """
    text = published_text or repr(published)
    if "." in text and "e" not in text.lower():
        decimals = len(text.split(".", 1)[1])
        if abs(round(derived, decimals) - published) <= 0.51 * 10 ** (-decimals):
            return True
    return abs(derived - published) <= rel_tol * max(abs(derived), abs(published))
