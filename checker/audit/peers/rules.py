"""What keeps peer-tool runs (GuideLLM, AIPerf, GenAI-Perf, vllm bench serve) from being comparable.

Source: the measurement-bias and reproducible-harness articles in ``shared/reference/benchmarking-articles.txt``
(cited as ARTICLES:line) and the tools' own output code (see the readers :mod:`checker.audit.peers.load` calls).
Comparison with MLPerf results is CMP-05 and handled with the MLPerf rules.

Rule ids: PEER-META, PEER-CLIENT, PEER-EOS, PEER-OSL, PEER-PERCENTILES, PEER-GOODPUT, PEER-ITL, PEER-LOAD,
PEER-TOKENIZER, PEER-MODEL.
"""

from __future__ import annotations

from checker.audit.claim.model import Claim, Metric, ResolvedResult
from checker.audit.claim.rules import Issue, IssueKind
from checker.audit.peers.model import REPRODUCIBILITY_FIELDS, ClientArchitecture, LoadMode, PeerRun
from checker.checks.rule_registry import RuleInfo, register

# a blocker or a requirement the claim does not meet is an ERROR, one it meets INFO (as the claim rules)
RULES = register(
    __name__,
    RuleInfo("PEER-META", "-", "peer run: a reproducibility field (engine, model, precision, tokenizer, ...) not recorded"),
    RuleInfo("PEER-CLIENT", "-", "peer run: a single-process client at high load; runs with different client kinds"),
    RuleInfo("PEER-EOS", "-", "peer run: ignore_eos off or not recorded, and the output length not the configured one"),
    RuleInfo("PEER-OSL", "-", "peer run: output length varies with ignore_eos on; runs' mean output lengths differ"),
    RuleInfo("PEER-PERCENTILES", "-", "peer run: a latency mean without tail percentiles"),
    RuleInfo("PEER-GOODPUT", "-", "peer run: throughput without goodput under a declared SLO, or the SLO not met"),
    RuleInfo("PEER-ITL", "-", "peer runs: different inter-token-latency formulas"),
    RuleInfo("PEER-LOAD", "-", "peer runs: different load modes, loads or arrival processes; a rate not achieved"),
    RuleInfo("PEER-TOKENIZER", "-", "peer runs: tokens counted with different tokenizers"),
    RuleInfo("PEER-MODEL", "-", "peer runs: different models"),
)

SOURCES = {
    "PEER-META": "ARTICLES:624-642 (twelve mandatory metadata)",
    "PEER-CLIENT": "ARTICLES:802-815 (single-process client saturation), ARTICLES:915",
    "PEER-EOS": "ARTICLES:830-838 (ignore_eos and inconsistent OSL)",
    "PEER-OSL": "ARTICLES:830-838, ARTICLES:981 (internal comparability)",
    "PEER-PERCENTILES": "ARTICLES:800 (mean instead of percentiles)",
    "PEER-GOODPUT": "ARTICLES:979, ARTICLES:983-987 (goodput under the declared SLO)",
    "PEER-ITL": "ARTICLES:888-908 (how the tools compute ITL)",
    "PEER-LOAD": "ARTICLES:878 (concurrency vs request-rate), ARTICLES:981",
    "PEER-TOKENIZER": "ARTICLES:818-828 (tokenizer bias)",
    "PEER-MODEL": "ARTICLES:981 (internal comparability)",
}
# This tool's reading of "high load" for a single-process Python client (the article's example is 1,000 QPS;
# it names no threshold): concurrency or request rate at or above these.
HIGH_LOAD_CONCURRENCY = 128
HIGH_LOAD_RATE_PER_S = 100.0
OSL_SPREAD = 0.05  # output lengths differing by more than 5 % are not "the configured OSL"
OSL_RUN_DIFF = 0.10  # compared runs whose mean output lengths differ by more than 10 %
# a request-rate run whose achieved rate is off the configured one by more than this factor, either way
ACHIEVED_RATE_TOLERANCE = 1.25


def _issue(
    kind: IssueKind,
    rule: str,
    reason: str,
    results: tuple[int, ...],
    required: str | None = None,
    satisfied: bool = False,
) -> Issue:
    return Issue(kind, rule, reason, SOURCES[rule], satisfied, required, results)


def peer_issues(claim: Claim, metric: Metric, results: list[ResolvedResult]) -> list[Issue]:
    peers = [(r, r.peer) for r in results if r.peer is not None]
    out: list[Issue] = []
    for r, run in peers:
        out += _single_run(claim, metric, r, run)
    for i, (ra, a) in enumerate(peers):
        for rb, b in peers[i + 1 :]:
            out += _pair(metric, ra, a, rb, b)
    return out


def _single_run(claim: Claim, metric: Metric, r: ResolvedResult, run: PeerRun) -> list[Issue]:
    out = []
    who = f"result {r.index} ({run.label})"
    meta = _missing_metadata(who, run)
    if meta:
        out.append(
            _issue(
                IssueKind.REQUIREMENT,
                "PEER-META",
                meta,
                (r.index,),
                "record every reproducibility field (or give them under 'metadata:')",
            )
        )
    out += _achieved_rate(who, r, run)
    high = (
        (run.concurrency is not None and run.concurrency >= HIGH_LOAD_CONCURRENCY)
        or (run.request_rate is not None and run.request_rate >= HIGH_LOAD_RATE_PER_S)
        or (run.load_mode is LoadMode.THROUGHPUT and run.concurrency is None)
    )
    if run.client is ClientArchitecture.SINGLE_PROCESS and high:
        load = (
            f"concurrency {run.concurrency:g}"
            if run.concurrency is not None
            else f"{run.request_rate:g} req/s"
            if run.request_rate is not None
            else "unlimited request rate"
        )
        out.append(
            _issue(
                IssueKind.BLOCKER,
                "PEER-CLIENT",
                f"{who}: a {run.client.value} client at {load}; at high load the client, not the engine, "
                "limits throughput and inflates latency (7.2x fewer tokens at 1,000 QPS)",
                (r.index,),
            )
        )
    out += _eos(who, r, run)
    for name, stat in (
        ("TTFT", run.ttft),
        ("ITL", run.itl),
        ("TPOT", run.tpot),
        ("end-to-end latency", run.e2e),
    ):
        if stat is not None and stat.mean_ms is not None and not stat.has_tail:
            latency_claim = metric.base in ("latency", "ttft", "itl", "tpot")
            out.append(
                _issue(
                    IssueKind.BLOCKER if latency_claim else IssueKind.REQUIREMENT,
                    "PEER-PERCENTILES",
                    f"{who}: {name} has a mean but no tail percentile (p90/p95/p99)",
                    (r.index,),
                    "report percentiles (p50/p90/p99 with their count), not means",
                )
            )
    slo = claim.slo or run.slo
    throughput_claim = metric.base in ("tokens/s", "queries/s", "samples/s", "goodput", None)
    if run.slo_met is False and throughput_claim:
        out.append(
            _issue(
                IssueKind.BLOCKER,
                "PEER-GOODPUT",
                f"{who}: the run's own latency bounds ({run.slo}) were not met; its throughput is not a "
                "throughput under that SLO",
                (r.index,),
            )
        )
    elif run.slo_met is True and run.goodput is None and throughput_claim and claim.slo in (None, run.slo):
        pass  # LoadGen counts the throughput only while the percentile bounds hold: the SLO is part of it
    elif slo and run.goodput is None and throughput_claim:
        out.append(
            _issue(
                IssueKind.BLOCKER,
                "PEER-GOODPUT",
                f"{who}: throughput without goodput although an SLO is declared ({slo})",
                (r.index,),
            )
        )
    elif metric.base == "goodput" and run.goodput is None:
        out.append(
            _issue(
                IssueKind.BLOCKER,
                "PEER-GOODPUT",
                f"{who}: the claim is about goodput, the run reports none",
                (r.index,),
            )
        )
    return out


def _missing_metadata(who: str, run: PeerRun) -> str | None:
    """ "does not record: ..." naming each missing field as exactly as the file allows: a model without its
    revision is "model revision (model X recorded)", and fields the tool's layout never writes are told apart
    from fields this run did not set."""
    never: list[str] = []
    unset: list[str] = []
    for key, value in run.reproducibility().items():
        if value is not None:
            continue
        label = REPRODUCIBILITY_FIELDS[key]
        if key == "model" and run.model is not None:
            label = f"model revision (model '{run.model}' recorded)"
        elif key == "tool_version":
            label = f"{run.tool.value} version"
        (never if key in run.not_written else unset).append(label)
    if not never and not unset:
        return None
    parts = []
    if unset:
        parts.append(", ".join(unset))
    if never:
        writer = run.tool.value + (f" {run.tool_version}" if run.tool_version else "")
        parts.append(f"{', '.join(never)} ({writer} never writes {'it' if len(never) == 1 else 'these'})")
    return f"{who} does not record: {'; '.join(parts)}"


def _achieved_rate(who: str, r: ResolvedResult, run: PeerRun) -> list[Issue]:
    """A request-rate run whose own achieved rate is far from the configured one did not offer that load."""
    if run.load_mode is not LoadMode.RATE or not run.request_rate or not run.request_throughput_rps:
        return []
    ratio = run.request_throughput_rps / run.request_rate
    if 1 / ACHIEVED_RATE_TOLERANCE <= ratio <= ACHIEVED_RATE_TOLERANCE:
        return []
    return [
        _issue(
            IssueKind.REQUIREMENT,
            "PEER-LOAD",
            f"{who}: configured {run.request_rate:g} req/s, but the tool reports {run.request_throughput_rps:.4g} "
            f"req/s achieved ({ratio:.2f}x); the offered load is not the configured one",
            (r.index,),
            "report the achieved request rate next to the configured one, or rerun until they agree",
        )
    ]


def _eos(who: str, r: ResolvedResult, run: PeerRun) -> list[Issue]:
    spread = None
    if run.output_tokens_min is not None and run.output_tokens_max is not None and run.output_tokens_max > 0:
        spread = (run.output_tokens_max - run.output_tokens_min) / run.output_tokens_max
    short = None
    if run.output_tokens_configured and run.output_tokens_mean is not None:
        short = 1 - run.output_tokens_mean / run.output_tokens_configured
    inconsistent = (spread is not None and spread > OSL_SPREAD) or (short is not None and short > OSL_SPREAD)
    detail = []
    if spread is not None:
        detail.append(f"output lengths {run.output_tokens_min:g}..{run.output_tokens_max:g}")
    if short is not None:
        detail.append(f"mean {run.output_tokens_mean:g} of {run.output_tokens_configured:g} configured")
    if run.ignore_eos is False or (run.ignore_eos is None and inconsistent):
        why = "ignore_eos is off" if run.ignore_eos is False else "ignore_eos is not recorded"
        return [
            _issue(
                IssueKind.BLOCKER,
                "PEER-EOS",
                f"{who}: {why} and the output length is not the configured one"
                + (f" ({'; '.join(detail)})" if detail else ""),
                (r.index,),
            )
        ]
    if run.ignore_eos is None:
        return [
            _issue(
                IssueKind.REQUIREMENT,
                "PEER-EOS",
                f"{who}: ignore_eos is not recorded"
                + (f" ({'; '.join(detail)})" if detail else " and no output-length distribution is reported"),
                (r.index,),
                "record ignore_eos (and the output-length distribution)",
            )
        ]
    if inconsistent:
        return [
            _issue(
                IssueKind.BLOCKER,
                "PEER-OSL",
                f"{who}: ignore_eos is on but the output length varies ({'; '.join(detail)})",
                (r.index,),
            )
        ]
    return []


def _pair(metric: Metric, ra: ResolvedResult, a: PeerRun, rb: ResolvedResult, b: PeerRun) -> list[Issue]:
    out = []
    ids = (ra.index, rb.index)
    pair = f"result {ra.index} ({a.label}) vs result {rb.index} ({b.label})"
    if metric.base in ("itl", "tpot") and a.itl_formula != b.itl_formula:
        out.append(
            _issue(
                IssueKind.BLOCKER,
                "PEER-ITL",
                f"{pair}: different ITL formulas — {a.tool.value}: "
                f"{a.itl_formula}; {b.tool.value}: {b.itl_formula}",
                ids,
            )
        )
    if a.load_mode and b.load_mode and a.load_mode is not b.load_mode:
        out.append(
            _issue(
                IssueKind.BLOCKER,
                "PEER-LOAD",
                f"{pair}: {a.load_mode.value} vs {b.load_mode.value} load; "
                "the same number is not the same load",
                ids,
            )
        )
    elif a.concurrency != b.concurrency or a.request_rate != b.request_rate:
        out.append(
            _issue(
                IssueKind.BLOCKER,
                "PEER-LOAD",
                f"{pair}: different load ({a.load_text()} vs {b.load_text()})",
                ids,
            )
        )
    elif a.arrival and b.arrival and a.arrival != b.arrival:
        out.append(
            _issue(
                IssueKind.BLOCKER,
                "PEER-LOAD",
                f"{pair}: the same rate with different arrival processes ({a.arrival} vs {b.arrival}); "
                "bursts queue differently",
                ids,
            )
        )
    if a.client is not b.client:
        out.append(
            _issue(
                IssueKind.REQUIREMENT,
                "PEER-CLIENT",
                f"{pair}: {a.client.value} vs {b.client.value} client",
                ids,
                "disclose the client architectures; rerun both with one tool for a like-for-like number",
            )
        )
    if (
        a.tokenizer
        and b.tokenizer
        and a.tokenizer != b.tokenizer
        and metric.base in ("tokens/s", "goodput", None)
    ):
        out.append(
            _issue(
                IssueKind.BLOCKER,
                "PEER-TOKENIZER",
                f"{pair}: tokens counted with different tokenizers ({a.tokenizer} vs {b.tokenizer})",
                ids,
            )
        )
    if a.model and b.model and a.model != b.model:
        out.append(
            _issue(IssueKind.BLOCKER, "PEER-MODEL", f"{pair}: different models ({a.model} vs {b.model})", ids)
        )
    if a.output_tokens_mean and b.output_tokens_mean:
        diff = abs(a.output_tokens_mean - b.output_tokens_mean) / max(
            a.output_tokens_mean, b.output_tokens_mean
        )
        if diff > OSL_RUN_DIFF:
            out.append(
                _issue(
                    IssueKind.BLOCKER,
                    "PEER-OSL",
                    f"{pair}: mean output lengths {a.output_tokens_mean:g} vs "
                    f"{b.output_tokens_mean:g} tokens",
                    ids,
                )
            )
    return out
