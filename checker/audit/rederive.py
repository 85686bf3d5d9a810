"""Re-derive a table row's result and accuracy from the logs it points to (``--tree``).

The result is computed as the official checker computes it (catalogue D8): the LoadGen key
``Benchmark.result_field_overrides[effective scenario]`` (tokens/s for LLMs) or ``Round.result_fields[...]``,
read from ``performance/run_1/mlperf_log_detail.txt``; SingleStream/MultiStream latencies divided by 1e6 (ns to
ms). Server results are the *completed* rates (``result_completed_samples_per_sec`` /
``result_completed_tokens_per_second``) — that is what the v5.1 checker and the published table use (D-16),
although the Rules FAQ names scheduled samples/s. Results inferred from another scenario's run (edge, catalogue
D17) use the official formulas. Accuracy values are read from ``accuracy/accuracy.txt`` with the round's
``acc_patterns`` (``re.match`` per line, catalogue E3).

Reads go through :class:`checker.safe_io.SafeTree`: nothing outside the tree is followed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from checker.parsers.mllog import DetailLog, parse_detail_text
from checker.safe_io import SafeTree
from rules.models import Benchmark, Round, Scenario

PERF_DETAIL = "performance/run_1/mlperf_log_detail.txt"
ACCURACY_TXT = "accuracy/accuracy.txt"
NS_PER_MS = 1_000_000


@dataclass(frozen=True)
class Rederived:
    """What the logs of one result directory say."""

    location: str
    value: float | None = None
    key: str | None = None  # LoadGen key (or formula) the value comes from
    line: int | None = None  # line of that key in the detail log
    effective_scenario: str | None = None
    inferred: bool = False
    result_validity: str | None = None
    accuracy: dict[str, float] = field(default_factory=dict)
    problems: tuple[str, ...] = ()

    @property
    def detail_path(self) -> str:
        return f"{self.location}/{PERF_DETAIL}"


def result_key(rnd: Round, bench: Benchmark, effective: Scenario) -> str | None:
    return bench.result_field_overrides.get(effective) or rnd.result_fields.get(effective)


def _inferred_value(log: DetailLog, directory: Scenario, effective: Scenario) -> tuple[float | None, str]:
    """Catalogue D17: a result in one scenario computed from a run of another (edge systems)."""
    if directory is Scenario.OFFLINE and effective is Scenario.SINGLE_STREAM:
        key = "result_qps_without_loadgen_overhead"
        return log.float_value(key), key
    if directory is Scenario.OFFLINE and effective is Scenario.MULTI_STREAM:
        spq = log.float_value("effective_samples_per_query")
        mean_ns = log.float_value("result_mean_latency_ns")
        if spq is None or not mean_ns:
            return None, "effective_samples_per_query * 1000 / (result_mean_latency_ns / 1e6)"
        return spq * 1000.0 / (mean_ns / NS_PER_MS), "effective_samples_per_query * 1000 / mean latency (ms)"
    if directory is Scenario.MULTI_STREAM and effective is Scenario.SINGLE_STREAM:
        lat = log.float_value("early_stopping_latency_ss")
        return (None if lat is None else lat * 8 / NS_PER_MS), "8 * early_stopping_latency_ss / 1e6"
    return None, f"no official inference of {directory.value} from a {effective.value} run"


def rederive(
    tree: SafeTree, location: str, rnd: Round, bench: Benchmark, metrics: tuple[str, ...]
) -> Rederived:
    """Re-derive the result (and the accuracy ``metrics``) of ``location`` (relative to the tree root)."""
    problems: list[str] = []
    directory = Scenario.parse(location.rstrip("/").rsplit("/", 1)[-1])
    read = tree.read_text(f"{location}/{PERF_DETAIL}")
    value: float | None = None
    key: str | None = None
    line: int | None = None
    effective_name: str | None = None
    inferred = False
    validity: str | None = None
    if read.text is None:
        problems.append(read.problem.message if read.problem else f"{location}/{PERF_DETAIL}: not readable")
    else:
        log = parse_detail_text(read.text, f"{location}/{PERF_DETAIL}")
        effective_name = log.effective_scenario
        validity = log.result_validity
        effective = Scenario.parse(effective_name) if effective_name else None
        if effective is None:
            problems.append(f"{location}/{PERF_DETAIL}: no effective_scenario")
        elif directory is not None and directory.loadgen_scenario is not effective:
            inferred = True
            value, key = _inferred_value(log, directory, effective)
        else:
            key = result_key(rnd, bench, effective)
            if key is None:
                problems.append(f"round {rnd.name} has no result key for {effective.value}")
            else:
                value = log.float_value(key)
                line = log.line_of(key)
                if value is not None and effective in (Scenario.SINGLE_STREAM, Scenario.MULTI_STREAM):
                    value = value / NS_PER_MS
        if key is not None and value is None:
            problems.append(f"{location}/{PERF_DETAIL}: no value for {key}")
    accuracy = _accuracy(tree, location, rnd, metrics, problems)
    return Rederived(
        location=location,
        value=value,
        key=key,
        line=line,
        effective_scenario=effective_name,
        inferred=inferred,
        result_validity=validity,
        accuracy=accuracy,
        problems=tuple(problems),
    )


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
