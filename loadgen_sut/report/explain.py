"""Why a run is not VALID, in words a first-time submitter understands: which constraint failed, by how much, and
what to change.

LoadGen's verdict (``result_validity``) and its reasons are in the detail log (``result_perf_constraints_met``,
``result_min_duration_met``, ``result_min_queries_met``, ``early_stopping_met``, ``result_invalid_reason``, the
early-stopping texts); a run that "finished fine" can still be INVALID (mlcommons/inference#2322). Each
:class:`Explanation` names the constraint, what was measured against what limit, the difference, what to change,
and the log lines it comes from. The run's other verdict findings (failed samples, LoadGen errors, accuracy,
deadlines) get one too, from the finding and a plain-words note per rule.
"""

from __future__ import annotations

from dataclasses import dataclass

from checker.findings import Finding, Severity
from loadgen_sut.record import CLIENT_BOUND_RULE
from loadgen_sut.report import early_stopping
from loadgen_sut.report.run_data import DetailFacts, Limits, RunView, TestView
from loadgen_sut.report.timeline_stats import tpot_ms, ttft_ms, ttft_trend

PERF_TESTS = ("performance", "find-peak")


@dataclass(frozen=True)
class Evidence:
    """Where the explanation comes from: a file (relative to the run directory), a line, the logged text."""

    file: str
    line: int | None
    text: str


@dataclass(frozen=True)
class Explanation:
    test: str  # the LoadGen test it is about ("performance"), or "run"
    constraint: str  # "p99 time to first token (TTFT)"
    measured: str  # what happened, with the numbers
    by_how_much: str | None  # "832 ms (42 %) over the limit"
    change: str  # what to change
    rule: str | None = None  # the verdict finding's rule id (RUN-LOADGEN-INVALID)
    evidence: tuple[Evidence, ...] = ()
    severity: Severity = Severity.ERROR


def _ms(v: float) -> str:
    return f"{v:,.1f} ms" if v < 100 else f"{v:,.0f} ms"


def _over(measured: float, limit: float, unit: str = "ms") -> str:
    diff = measured - limit
    pct = 100.0 * diff / limit if limit else float("inf")
    amount = _ms(diff) if unit == "ms" else f"{diff:,.3g} {unit}"
    return f"{amount} ({pct:.0f} %) over the limit"


def _allowed(which: str, round_ms: float | None, gate_ms: float, bench: str) -> str:
    if round_ms is None or abs(round_ms - gate_ms) < 1e-9:
        return f"the rules allow less than {_ms(gate_ms)} for {bench}."
    return (f"this run's gate was {_ms(gate_ms)} (set in user.conf); the rules allow less than {_ms(round_ms)} "
            f"for {bench}.")


def _rel(view: RunView, t: TestView, name: str) -> str:
    return f"{t.test.directory}/{name}"


def _ev(view: RunView, t: TestView, facts: DetailFacts, key: str, text: str | None = None) -> Evidence:
    return Evidence(_rel(view, t, "mlperf_log_detail.txt"), facts.line(key), text or key)


def _latency(view: RunView, t: TestView, facts: DetailFacts) -> list[Explanation]:
    """The p99 TTFT / TPOT gates (or the e2e latency bound when token latencies are off)."""
    out: list[Explanation] = []
    lim = view.limits
    pct = lim.percentile * 100
    qps = facts.target_qps
    load = f"target_qps (it is {qps:g} now)" if qps else "the offered load (target_qps)"
    bench = f"{view.record.benchmark} {view.record.scenario} in round {view.record.round}"
    completed_note = ""
    if facts.completed_per_s and facts.scheduled_per_s and facts.completed_per_s < 0.95 * facts.scheduled_per_s:
        completed_note = (
            f" The system completed {facts.completed_per_s:,.3g} queries/s while LoadGen scheduled "
            f"{facts.scheduled_per_s:,.3g}/s: it cannot keep up with this rate, so queries wait in a queue and their "
            f"latency grows for as long as the test runs. A target_qps of about {0.9 * facts.completed_per_s:,.3g} "
            "(90 % of what it completed) is a starting point for the next try."
        )
    trend = ttft_trend(t.timeline.samples) if t.timeline is not None else None
    trend_note = ""
    if trend is not None and trend.ratio >= 2:
        trend_note = (
            f" The SUT's timeline shows the queueing: median TTFT grew from {_ms(trend.first_ms)} in the first fifth "
            f"of the test to {_ms(trend.last_ms)} in the last."
        )
    ttft99 = facts.ttft_ns.get(99.0)
    if lim.ttft_ms is not None and ttft99 is not None and ttft99 / 1e6 > lim.ttft_ms:
        v = ttft99 / 1e6
        out.append(
            Explanation(
                test=t.test.name,
                constraint="p99 time to first token (TTFT)",
                measured=f"LoadGen measured a {pct:g}th-percentile time to first token of {_ms(v)}; "
                + _allowed("TTFT", lim.round_ttft_ms, lim.ttft_ms, bench)
                + f" At most {100 - pct:g} % of the queries may take longer.",
                by_how_much=_over(v, lim.ttft_ms),
                change=f"Offer less load: lower {load} in user.conf and run again until p99 TTFT stays under "
                f"{_ms(lim.ttft_ms)}.{completed_note}{trend_note} If TTFT is too high even at a low rate, the "
                "engine's prefill is the bottleneck: add replicas (one --endpoint each), use tensor parallelism, or "
                "enable chunked prefill / prefix caching in the engine."
                + (f" LoadGen's own advice: \u201c{facts.invalid_reason}\u201d" if facts.invalid_reason else ""),
                rule="RUN-LOADGEN-INVALID",
                evidence=(
                    _ev(view, t, facts, "result_first_token_99.00_percentile_latency_ns",
                        f"result_first_token_99.00_percentile_latency_ns = {ttft99:.0f}"),
                    _ev(view, t, facts, "result_perf_constraints_met", "result_perf_constraints_met = false"),
                ),
            )
        )
    tpot99 = facts.tpot_ns.get(99.0)
    if lim.tpot_ms is not None and tpot99 is not None and tpot99 / 1e6 > lim.tpot_ms:
        v = tpot99 / 1e6
        out.append(
            Explanation(
                test=t.test.name,
                constraint="p99 time per output token (TPOT)",
                measured=f"LoadGen measured a {pct:g}th-percentile time per output token (after the first) of "
                f"{_ms(v)}; " + _allowed("TPOT", lim.round_tpot_ms, lim.tpot_ms, bench),
                by_how_much=_over(v, lim.tpot_ms),
                change="Each replica decodes too many sequences at once, so every token waits for the whole batch: "
                f"lower {load}, or cap the engine's concurrent sequences per replica (for example vLLM "
                "--max-num-seqs, SGLang --max-running-requests) and add replicas to keep the throughput."
                + (f" LoadGen's own advice: \u201c{facts.invalid_reason}\u201d" if facts.invalid_reason else ""),
                rule="RUN-LOADGEN-INVALID",
                evidence=(
                    _ev(view, t, facts, "result_time_per_output_token_99.00_percentile_ns",
                        f"result_time_per_output_token_99.00_percentile_ns = {tpot99:.0f}"),
                    _ev(view, t, facts, "result_perf_constraints_met", "result_perf_constraints_met = false"),
                ),
            )
        )
    if not out:
        lat99 = facts.latency_ns.get(99.0)
        bound = facts.target_latency_ns
        measured = "LoadGen reports that the latency constraint was not met"
        by = None
        if lat99 is not None and bound:
            measured = (
                f"The {pct:g}th percentile of the query latency was {_ms(lat99 / 1e6)}; the bound LoadGen applied "
                f"(target_latency) is {_ms(bound / 1e6)}."
            )
            by = _over(lat99 / 1e6, bound / 1e6) if lat99 > bound else None
        out.append(
            Explanation(
                test=t.test.name,
                constraint="latency constraint",
                measured=measured,
                by_how_much=by,
                change=f"Lower {load} so queries do not queue.{completed_note}"
                + (f" LoadGen's own advice: \u201c{facts.invalid_reason}\u201d" if facts.invalid_reason else ""),
                rule="RUN-LOADGEN-INVALID",
                evidence=(_ev(view, t, facts, "result_perf_constraints_met", "result_perf_constraints_met = false"),),
            )
        )
    return out


def _min_duration(view: RunView, t: TestView, facts: DetailFacts) -> Explanation:
    need = facts.min_duration_ms / 1000 if facts.min_duration_ms is not None else None
    ran = facts.duration_s
    measured = "LoadGen reports that the test was shorter than the minimum duration"
    if need is not None:
        measured = (
            f"The test ran {'about ' + format(ran, ',.1f') + ' s' if ran is not None else 'less than that'}; "
            f"the minimum duration is {need:,.0f} s (min_duration)."
        )
    by = f"{need - ran:,.1f} s ({100 * (need - ran) / need:.0f} %) short" if need and ran is not None and ran < need else None
    stops = []
    if facts.max_query_count:
        stops.append(f"max_query_count = {facts.max_query_count}")
    if facts.max_duration_ms:
        stops.append(f"max_duration = {facts.max_duration_ms} ms")
    if stops:
        change = (f"The test was stopped by {' and '.join(stops)} before min_duration: remove "
                  f"{'these overrides' if len(stops) > 1 else 'this override'} from user.conf.")
    elif (facts.scenario or view.record.scenario) == "Offline":
        rate = facts.samples_per_s
        change = (
            "Offline sends one query sized from the expected rate (offline_expected_qps × min_duration, with a "
            "margin); the system finished it sooner, so it is faster than the expected rate says. Raise "
            "*.Offline.target_qps in user.conf"
            + (f" to at least {1.1 * rate:,.4g} (110 % of the {rate:,.4g} samples/s measured)" if rate else "")
            + " and run again."
        )
    else:
        change = ("LoadGen generates queries for min_duration at target_qps; make sure nothing in user.conf "
                  "shortens the run, and keep the round's min_duration (600 s) for a result.")
    return Explanation(
        test=t.test.name,
        constraint="minimum duration",
        measured=measured,
        by_how_much=by,
        change=change,
        rule="RUN-LOADGEN-INVALID",
        evidence=(_ev(view, t, facts, "result_min_duration_met", "result_min_duration_met = false"),),
    )


def _min_queries(view: RunView, t: TestView, facts: DetailFacts) -> Explanation:
    n, need = facts.query_count, facts.min_query_count
    measured = "LoadGen reports that fewer queries ran than the minimum query count"
    by = None
    if n is not None and need is not None:
        measured = f"LoadGen processed {n:,} queries; at least {need:,} are required (min_query_count)."
        by = f"{need - n:,} queries short" if n < need else None
    return Explanation(
        test=t.test.name,
        constraint="minimum query count",
        measured=measured,
        by_how_much=by,
        change="Run longer or at a higher target_qps so that more queries are issued; do not lower "
        "min_query_count below the round's value for a result.",
        rule="RUN-LOADGEN-INVALID",
        evidence=(_ev(view, t, facts, "result_min_queries_met", "result_min_queries_met = false"),),
    )


def _over_counts(t: TestView, lim: Limits) -> dict[str, int]:
    """Queries over each limit, as the SUT's timeline measured them (empty without a timeline)."""
    if t.timeline is None:
        return {}
    out = {}
    if lim.ttft_ms is not None:
        out["TTFT"] = early_stopping.count_over(ttft_ms(t.timeline.samples), lim.ttft_ms)
    if lim.tpot_ms is not None:
        out["TPOT"] = early_stopping.count_over(tpot_ms(t.timeline.samples), lim.tpot_ms)
    return out


def _early_stopping(view: RunView, t: TestView, facts: DetailFacts, latency_failed: bool) -> list[Explanation]:
    out = []
    over = _over_counts(t, view.limits)
    pct = view.limits.percentile
    minimum = early_stopping.min_queries_to_pass(0, pct)
    failed = [es for es in facts.early_stopping if not es.successful]
    if not failed:  # early_stopping_met false without a failing text (TTFT's text is empty when TPOT fails)
        failed = list(facts.early_stopping)
    for es in failed:
        n = es.processed or facts.query_count
        parts = []
        if es.more_needed is not None and n is not None:
            parts.append(
                f"LoadGen processed {n:,} queries; to be 99 % sure that the {pct * 100:g}th percentile of "
                f"{es.which} is under its limit it would need at least {es.more_needed:,} more, all under the limit."
            )
        elif es.total_needed is not None:
            parts.append(f"LoadGen processed {n if n is not None else 'too few'} queries; early stopping needs at "
                         f"least {es.total_needed:,}.")
        else:
            parts.append(f"LoadGen's early-stopping check for {es.which} failed: \u201c{es.text}\u201d")
        if es.which in over and n:
            allowed = early_stopping.max_over_limit(n, pct)
            parts.append(
                f"The SUT's timeline counts {over[es.which]:,} of {n:,} queries over the {es.which} limit; with "
                f"{n:,} queries at most {max(allowed, 0):,} may be."
            )
        by = f"{es.more_needed:,} more queries needed" if es.more_needed is not None else None
        if latency_failed:
            change = (f"This follows from the {es.which} latency failure above: too many queries are over the "
                      "limit. Fix the latency first; early stopping then passes by itself.")
        else:
            change = (
                f"The run was too short to show the p99 with 99 % confidence: even with no query over the limit a "
                f"run needs at least {minimum:,} queries. Run longer (the round's min_duration of 600 s gives "
                "enough queries at any realistic rate) or at a higher target_qps if latency allows."
            )
        out.append(
            Explanation(
                test=t.test.name,
                constraint=f"early stopping ({es.which})",
                measured=" ".join(parts),
                by_how_much=by,
                change=change,
                rule="RUN-LOADGEN-INVALID",
                evidence=(
                    _ev(view, t, facts, "early_stopping_met", "early_stopping_met = false"),
                    Evidence(_rel(view, t, "mlperf_log_detail.txt"), es.line, f"{es.key}: {es.text}"),
                ),
            )
        )
    return out


def loadgen_explanations(view: RunView, t: TestView) -> list[Explanation]:
    """Why LoadGen called one performance test INVALID (empty when it did not)."""
    facts = t.detail
    if facts is None or facts.validity in (None, "VALID"):
        return []
    out: list[Explanation] = []
    latency_failed = facts.perf_constraints_met is False
    if latency_failed:
        out += _latency(view, t, facts)
    if facts.min_duration_met is False:
        out.append(_min_duration(view, t, facts))
    if facts.min_queries_met is False:
        out.append(_min_queries(view, t, facts))
    if facts.early_stopping_met is False:
        out += _early_stopping(view, t, facts, latency_failed)
    if not out:
        out.append(
            Explanation(
                test=t.test.name,
                constraint="LoadGen's verdict",
                measured=f"LoadGen wrote result_validity = {facts.validity}"
                + (f": \u201c{facts.invalid_reason}\u201d" if facts.invalid_reason else ""),
                by_how_much=None,
                change="Read the summary's recommendations (mlperf_log_summary.txt).",
                rule="RUN-LOADGEN-INVALID",
                evidence=(_ev(view, t, facts, "result_validity", f"result_validity = {facts.validity}"),),
            )
        )
    return out


# plain words for the run's other findings: what it means and what to do (the finding's own message and fix
# say the specifics)
HINTS: dict[str, str] = {
    "RUN-SAMPLES-FAILED": "Some requests failed in the engine, so their outputs are empty: a run with failed samples "
    "is not a result. The failure kinds and examples say why (a context-length limit, a request timeout "
    "(--request-timeout), an overloaded or restarting server).",
    "RUN-SINGLE-TOKEN": "Outputs of a single token have no time per output token; LoadGen logs an error for each. "
    "Ask the engine for at least two tokens (--min-new-tokens 2).",
    "RUN-COMPLETIONS": "Not every issued sample was completed exactly once: a crash or a harness bug. Run again; "
    "report it if it repeats.",
    "RUN-LOADGEN-LOG": "LoadGen wrote no detail log: the test did not start or stopped before LoadGen's end.",
    "RUN-LOADGEN-ERRORS": "LoadGen logged errors during the test (the detail log's error entries below). The official "
    "checker rejects a run with LoadGen errors even when LoadGen's result says VALID.",
    "RUN-DEADLINE": "The test ran past its wall-clock deadline: the engine is much slower than the settings assume. "
    "Lower target_qps (or the Offline expected rate) so the test can finish, or give a longer --deadline-s.",
    "RUN-TEST-FAILED": "The test process did not finish; the error says why (the engine was not reachable, a setting "
    "was refused, or the process crashed).",
    "RUN-INTERRUPTED": "The run was stopped (Ctrl-C or SIGTERM) before every test finished.",
    "RUN-TEST-NOT-RUN": "A test this mode needs did not run, because an earlier one failed.",
    "RUN-TEST06-FAILED": "The TEST06 compliance check failed: the outputs in its accuracy log do not pass the "
    "verification (first tokens, EOS, output lengths); see verification/verify_accuracy.txt.",
    "RUN-ACC-TARGET": "The accuracy run scored below the benchmark's target: the model, its precision or the "
    "generation settings differ from the reference.",
    "RUN-CLIENT-BOUND": "The client (this harness on this machine), not the system under test, limited the "
    "measurement: its own delay or CPU was the bottleneck, so what LoadGen measured, its verdict included, is the "
    "client's. Run the client on a machine with free cores. The section Client self-diagnostics charts each delay "
    "and the CPU against its threshold.",
    "RUN-SIMULATED": "The simulated engine measured no system: this run shows the flow, never a result.",
    "RUN-CONF-NONCOMPLIANT": "A user.conf line changes a setting the rules fix (a shorter min_duration, fewer queries, "
    "other gates): fine for a trial, refused for a submission. Remove it for a real run.",
    "RUN-TRIAL": "A submission-trial rehearses the submission flow with trial settings: never a result.",
}
ACCURACY_HINT = (
    "The accuracy run cannot be scored as the benchmark requires (the finding says what is missing: a tokenizer to "
    "decode outputs, the reference data, every sample of the data set)."
)


def finding_explanations(view: RunView, covered: set[str]) -> list[Explanation]:
    """The verdict's other findings (those not explained from the detail log already: ``covered`` rule ids)."""
    out = []
    for f in view.record.verdict.findings:
        if f.rule in covered or f.severity is Severity.INFO:
            continue
        out.append(_from_finding(view, f))
    return out


def _from_finding(view: RunView, f: Finding) -> Explanation:
    hint = HINTS.get(f.rule) or (ACCURACY_HINT if f.rule.startswith("RUN-ACC-") else None)
    change = " ".join(x for x in (hint, f"Fix: {f.fix}." if f.fix else None) if x) or "See the finding."
    test = f.message.split(":", 1)[0] if ":" in f.message else "run"
    evidence = (Evidence(f.path, f.line, f.message),) if f.path else ()
    return Explanation(
        test=test if test in {t.test.name for t in view.tests} else "run",
        constraint=f.rule,
        measured=f.message,
        by_how_much=None,
        change=change,
        rule=f.rule,
        evidence=evidence,
        severity=f.severity,
    )


def loadgen_error_explanations(view: RunView, t: TestView) -> list[Explanation]:
    facts = t.detail
    if facts is None or not facts.errors:
        return []
    lines = tuple(
        Evidence(_rel(view, t, "mlperf_log_detail.txt"), e.line, f"{e.key}: {e.value}") for e in facts.errors[:10]
    )
    return [
        Explanation(
            test=t.test.name,
            constraint="LoadGen errors",
            measured=f"LoadGen logged {len(facts.errors):,} error entr{'y' if len(facts.errors) == 1 else 'ies'} in "
            f"{t.test.name}.",
            by_how_much=None,
            change=HINTS["RUN-LOADGEN-ERRORS"]
            + " The messages say what LoadGen saw: 'Ran out of generated queries' (SingleStream/MultiStream: the "
            "expected latency in user.conf is far above the real one), 'Number of tokens need to be greater than 1' "
            "(--min-new-tokens 2), 'Attempted to record a sample latency before it's first token latency' (the "
            "first token and the completion were reported from different threads).",
            rule="RUN-LOADGEN-ERRORS",
            evidence=lines,
        )
    ]


def explain(view: RunView) -> list[Explanation]:
    """Every reason the run is not VALID: a CLIENT-BOUND test first (what LoadGen measured there is the client's),
    then LoadGen's constraints, then the other findings."""
    out: list[Explanation] = []
    covered: set[str] = set()
    for t in view.tests:
        if t.test.name in PERF_TESTS:
            got = loadgen_explanations(view, t)
            covered.update(e.rule for e in got if e.rule)  # the verdict findings these explain (RUN-LOADGEN-INVALID)
            out += got
        errs = loadgen_error_explanations(view, t)
        covered.update(e.rule for e in errs if e.rule)  # RUN-LOADGEN-ERRORS
        out += errs
    out += finding_explanations(view, covered)
    return [e for e in out if e.rule == CLIENT_BOUND_RULE] + [e for e in out if e.rule != CLIENT_BOUND_RULE]
