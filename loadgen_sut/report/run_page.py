"""The page of one ``inference-audit run``: verdict and why, LoadGen's numbers against the round's limits, and
the plots (TTFT / TPOT distributions with the p99 limits, latency and rates over time, tokens/s, the
early-stopping bound), and the client's self-diagnostics of each test against the CLIENT-BOUND thresholds
(:mod:`loadgen_sut.report.client_section`).

Without a SUT timeline (``sut_timeline.jsonl``) in a test directory the page still shows LoadGen's logged
percentiles against the limits and says which plots need the timeline.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from checker.findings import Severity
from checker.report.html.markup import Child, Markup, el, relative_href
from checker.report.html.page import (
    Cell,
    badge,
    box,
    document,
    finding_item,
    fmt_num,
    kv_table,
    section,
    table,
)
from checker.report.html.plots import (
    BOUND_COLOR,
    LIMIT_COLOR,
    Mark,
    Plot,
    RefLine,
    Series,
    cdf_points,
    downsample,
    figure,
    render_plot,
)
from loadgen_sut.client_diag import summary_line as client_summary_line
from loadgen_sut.report import early_stopping
from loadgen_sut.report.client_section import client_anchor, client_outcome, client_section, outcome_badge
from loadgen_sut.report.client_view import client_view
from loadgen_sut.report.explain import PERF_TESTS, Explanation, explain
from loadgen_sut.report.run_data import (
    DETAIL_FILE,
    PERCENTILES,
    SUMMARY_FILE,
    DetailFacts,
    Limits,
    RunView,
    TestView,
)
from loadgen_sut.report.timeline_stats import latency_ms, over_time, percentile, tpot_ms, ttft_ms
from loadgen_sut.timeline import TIMELINE_FILE, SampleTiming

MAX_POINTS = 4000  # scatter points per plot (evenly thinned beyond; the caption says so)
GATE_COLOR = "#E69F00"
PCT_COLOR = "#5f6368"


def _ms(v: float | None) -> str:
    if v is None:
        return "not measured"
    return f"{v:,.1f} ms" if v < 100 else f"{v:,.0f} ms"


def _yes(v: bool | None) -> Markup:
    if v is None:
        return el("span", "not logged")
    return badge("Yes", "ok") if v else badge("NO", "bad")


class _Links:
    def __init__(self, link_dir: Path | None) -> None:
        self.link_dir = link_dir

    def file(self, path: Path, text: str | None = None) -> Markup:
        label = el("code", text or path.name)
        if self.link_dir is None or not path.exists():
            return label
        return el("a", label, href=relative_href(path, self.link_dir))


# ---- plots ---------------------------------------------------------------------------------------------------
def _limit_lines(which: str, view: RunView, axis: Literal["x", "y"] = "x") -> list[RefLine]:
    lim = view.limits
    round_ms = lim.round_ttft_ms if which == "TTFT" else lim.round_tpot_ms
    gate_ms = lim.gate_ttft_ms if which == "TTFT" else lim.gate_tpot_ms
    pct = f"p{lim.percentile * 100:g}"
    out: list[RefLine] = []
    if round_ms is not None:
        out.append(RefLine(round_ms, f"{view.record.round} limit: {pct} {which} < {_ms(round_ms)}", axis, LIMIT_COLOR))
    if gate_ms is not None and (round_ms is None or abs(gate_ms - round_ms) > 1e-9):
        out.append(RefLine(gate_ms, f"gate applied in this run: {_ms(gate_ms)}", axis, GATE_COLOR, ":"))
    return out


def _cdf_figure(view: RunView, t: TestView, which: str, values: list[float] | None, logged_ns: dict[float, float]) -> Markup | None:
    lim = view.limits
    series: list[Series] = []
    if values:
        xs, ys = cdf_points(values)
        series.append(Series(f"SUT timeline ({len(values):,} samples)", xs, ys, "step"))
    if logged_ns:
        ps = sorted(logged_ns)
        series.append(Series("LoadGen's logged percentiles", [logged_ns[p] / 1e6 for p in ps], [p / 100 for p in ps],
                             "points", "#D55E00"))
    if not series:
        return None
    lines = _limit_lines(which, view)
    pct = lim.percentile
    lines.append(RefLine(pct, f"p{pct * 100:g}", "y", PCT_COLOR, ":"))
    limit_ms = lim.ttft_ms if which == "TTFT" else lim.tpot_ms
    es_note = ""
    if values and limit_ms is not None and view.scenario is not None and view.scenario.loadgen_scenario.value == "Server":
        n = len(values)
        allowed = early_stopping.max_over_limit(n, pct)
        if allowed >= 0:
            frac = (n - allowed) / n
            lines.append(RefLine(frac, f"early-stopping bound: {n - allowed:,} of {n:,} under the limit", "y",
                                 BOUND_COLOR, "-."))
            es_note = (f" Early stopping: with {n:,} samples at most {allowed:,} may be over the limit, so the curve "
                       f"must reach the purple line ({frac:.4f}) before the red limit.")
    top = max([*(values or []), *(v / 1e6 for v in logged_ns.values()), *(ln.value for ln in lines if ln.axis == "x")])
    p = Plot(
        key=f"{t.test.name}-{which.lower()}-cdf",
        title=f"{which} distribution ({t.test.name})",
        x_label=f"{which} (ms)",
        y_label="fraction of samples ≤ x",
        series=tuple(series),
        lines=tuple(lines),
        y_min=0.0,
        y_max=1.005,
        x_min=0.0,
        x_max=top * 1.08 if top > 0 else None,
        zoom_y=(0.9, 1.0015),
        zoom_title="the tail (fraction 0.90 to 1)",
    )
    gate = (
        f"The run passes the {which} gate when the {pct * 100:g}th percentile (where the curve crosses the grey "
        "line) is left of the red limit."
        if limit_ms is not None
        else f"No {which} limit applies to {view.record.scenario} in the round's rules."
    )
    caption = f"Cumulative distribution of {which}: for each latency, the fraction of samples at or below it. {gate}{es_note}"
    rows = []
    for q in PERCENTILES:
        own = percentile(values, q) if values else None
        lg = logged_ns.get(q)
        rows.append([f"p{q:g}", Cell(_ms(lg / 1e6) if lg is not None else "not logged", num=True),
                     Cell(_ms(own) if own is not None else "—", num=True)])
    data = table(["percentile", Cell("LoadGen (detail log)", num=True), Cell("SUT timeline", num=True)], rows)
    return figure(p.key, render_plot(p), caption, data)


def _thin(samples: Sequence[SampleTiming]) -> tuple[list[SampleTiming], str]:
    idx = downsample(len(samples), MAX_POINTS)
    note = "" if len(idx) == len(samples) else f" (every {len(samples) / len(idx):.3g}th of {len(samples):,} samples shown)"
    ordered = sorted(samples, key=lambda s: s.issued_ns)
    return [ordered[i] for i in idx], note


def _over_time_figures(view: RunView, t: TestView) -> list[Markup]:
    assert t.timeline is not None
    samples = t.timeline.samples
    ot = over_time(samples)
    if ot is None:
        return []
    start = min(s.issued_ns for s in samples)
    thin, thin_note = _thin(samples)
    out: list[Markup] = []
    name = t.test.name
    for which in ("TTFT", "TPOT"):
        pts = [((s.issued_ns - start) / 1e9, v / 1e6) for s in thin
               if (v := (s.ttft_ns if which == "TTFT" else s.tpot_ns)) is not None]
        if not pts:
            continue
        series = [Series(f"{which} of each sample{thin_note}", [x for x, _ in pts], [y for _, y in pts], "scatter")]
        if which == "TTFT":
            p99 = [(c, v) for c, v in zip(ot.centres_s, ot.ttft_p99_ms, strict=True) if v is not None]
            series.append(Series(f"p99 of the samples issued in each {ot.bin_s:g} s", [c for c, _ in p99],
                                 [v for _, v in p99], "line", "#000000"))
        p = Plot(
            key=f"{name}-{which.lower()}-over-time",
            title=f"{which} over the test ({name})",
            x_label="time since the first issue (s)",
            y_label=f"{which} (ms)",
            series=tuple(series),
            lines=tuple(_limit_lines(which, view, "y")),
            y_min=0.0,
        )
        out.append(figure(p.key, render_plot(p), f"{which} of each sample against the time LoadGen issued it: a rising "
                          "band means queries are queueing (the offered rate is above what the system completes)."))
    facts = t.detail
    lines = []
    if facts is not None and facts.target_qps and view.record.scenario != "Offline":
        lines.append(RefLine(facts.target_qps, f"target_qps {facts.target_qps:g}", "y", LIMIT_COLOR))
    p = Plot(
        key=f"{name}-rate-over-time",
        title=f"Issued and completed queries per second ({name})",
        x_label="time since the first issue (s)",
        y_label="queries per second",
        series=(
            Series("issued", ot.centres_s, ot.issued_per_s, "line", "#0072B2"),
            Series("completed", ot.centres_s, ot.completed_per_s, "line", "#009E73"),
        ),
        lines=tuple(lines),
        y_min=0.0,
    )
    rows = [[Cell(f"{c:,.1f}", num=True), Cell(f"{i:,.1f}", num=True), Cell(f"{d:,.1f}", num=True),
             Cell(f"{k:,.0f}", num=True)]
            for c, i, d, k in zip(ot.centres_s, ot.issued_per_s, ot.completed_per_s, ot.tokens_per_s, strict=True)]
    data = table([Cell("time (s)", num=True), Cell("issued/s", num=True), Cell("completed/s", num=True),
                  Cell("tokens/s", num=True)], rows)
    out.append(figure(p.key, render_plot(p), f"Queries LoadGen issued and the SUT completed, per {ot.bin_s:g} s. "
                      "Completions falling behind issues is a system that cannot keep up with the offered rate.", data))
    lines = []
    if facts is not None and facts.tokens_per_s:
        lines.append(RefLine(facts.tokens_per_s, f"LoadGen: {facts.tokens_per_s:,.1f} tokens/s", "y", LIMIT_COLOR))
    p = Plot(
        key=f"{name}-tokens-over-time",
        title=f"Output tokens per second ({name})",
        x_label="time since the first issue (s)",
        y_label="tokens per second",
        series=(Series("output tokens/s (SUT timeline)", ot.centres_s, ot.tokens_per_s, "line", "#CC79A7"),),
        lines=tuple(lines),
        y_min=0.0,
    )
    out.append(figure(p.key, render_plot(p), "Output tokens streamed per second: each sample's first token at its "
                      "first-token time, the rest spread evenly until it completed. LoadGen's result is the red line."))
    return out


def _es_figure(view: RunView, t: TestView, facts: DetailFacts | None) -> Markup | None:
    lim = view.limits
    if view.scenario is None or view.scenario.loadgen_scenario.value != "Server":
        return None
    n = facts.query_count if facts is not None and facts.query_count else None
    if n is None and t.timeline is not None:
        n = len(t.timeline.samples)
    if not n:
        return None
    pct = lim.percentile
    first = early_stopping.min_queries_to_pass(0, pct)
    over: dict[str, tuple[int, int]] = {}  # limit -> (samples over it, samples timed), from the SUT's timeline
    if t.timeline is not None:
        for which, limit, values in (("TTFT", lim.ttft_ms, ttft_ms(t.timeline.samples)),
                                     ("TPOT", lim.tpot_ms, tpot_ms(t.timeline.samples))):
            if limit is not None and values:
                over[which] = (early_stopping.count_over(values, limit), len(values))
    need = [early_stopping.min_queries_to_pass(k, pct) for k, _ in over.values()]
    x_max = int(max(2 * n, 1.3 * first, *(1.15 * x for x in need), *(1.1 * m for _, m in over.values())))
    log_x = x_max > 20 * first
    if log_x:
        xs = sorted({int(first * (x_max / first) ** (i / 199)) for i in range(200)})
    else:
        xs = sorted({int(first + i * (x_max - first) / 199) for i in range(200)})
    ys = [float(v) for v in early_stopping.bound_curve(xs, pct)]
    marks = [Mark(float(m), float(k), f"this run, {which}: {k:,} of {m:,} over (SUT timeline)", c)
             for (which, (k, m)), c in zip(over.items(), ("#0072B2", "#009E73"), strict=False)]
    p = Plot(
        key=f"{t.test.name}-early-stopping",
        title=f"Early-stopping bound (p{pct * 100:g}, 99 % confidence)",
        x_label="queries processed",
        y_label="queries allowed over the limit",
        series=(Series("most queries that may be over the limit", xs, ys, "step", BOUND_COLOR),),
        lines=(RefLine(float(first), f"fewest queries that can pass: {first:,}", "x", PCT_COLOR, ":"),
               RefLine(float(n), f"this run: {n:,} queries", "x", LIMIT_COLOR, "--")),
        marks=tuple(marks),
        y_min=-0.5,
        x_min=first * 0.8 if log_x else 0.0,
        log_x=log_x,
        integer_y=True,
    )
    caption = (
        "LoadGen passes a run only if, with the queries it processed, it is 99 % sure that fewer than "
        f"{(1 - pct) * 100:g} % are over each limit: a run whose point lies on or under the line passes. "
        f"Even with none over the limit a run needs {first:,} queries."
        + ("" if over else " (Without a timeline the queries over each limit are not counted.)")
    )
    rows = [[which, Cell(f"{k:,} of {m:,}", num=True), Cell(f"{max(early_stopping.max_over_limit(m, pct), 0):,}", num=True),
             Cell(f"{early_stopping.min_queries_to_pass(k, pct):,}", num=True)] for which, (k, m) in over.items()]
    data = table(["limit", Cell("over the limit (timeline)", num=True), Cell("allowed with that many", num=True),
                  Cell("queries needed to pass", num=True)], rows) if rows else None
    return figure(p.key, render_plot(p), caption, data)


# ---- sections ------------------------------------------------------------------------------------------------
def _limit_cell(value_ms: float | None, limit_ms: float | None) -> Child:
    if value_ms is None:
        return "not logged"
    if limit_ms is None:
        return _ms(value_ms)
    ok = value_ms <= limit_ms
    return [_ms(value_ms), " — limit < ", _ms(limit_ms), " ", badge("PASS", "ok") if ok else badge("FAIL", "bad")]


def _numbers(view: RunView, t: TestView, facts: DetailFacts) -> Markup:
    lim = view.limits
    lg = t.test.loadgen
    result = None
    if lg is not None and lg.result_key and lg.result_value is not None:
        result = [el("code", lg.result_key), f" = {fmt_num(lg.result_value, 6)}"]
    ttft99 = facts.ttft_ns.get(99.0)
    tpot99 = facts.tpot_ns.get(99.0)
    dur_need = facts.min_duration_ms / 1000 if facts.min_duration_ms is not None else None
    rows: list[tuple[str, Child]] = [
        ("LoadGen result", badge(facts.validity or "not logged", "ok" if facts.validity == "VALID" else "bad")),
        ("result", result),
        (f"p{lim.percentile * 100:g} TTFT", _limit_cell(ttft99 / 1e6 if ttft99 is not None else None, lim.ttft_ms)
         if ttft99 is not None or lim.ttft_ms is not None else None),
        (f"p{lim.percentile * 100:g} TPOT", _limit_cell(tpot99 / 1e6 if tpot99 is not None else None, lim.tpot_ms)
         if tpot99 is not None or lim.tpot_ms is not None else None),
        ("queries", f"{fmt_num(facts.query_count)} (min_query_count {fmt_num(facts.min_query_count)})"
         if facts.query_count is not None else None),
        ("duration", f"{facts.duration_s:,.1f} s (min_duration {fmt_num(dur_need)} s)" if facts.duration_s is not None else None),
        ("target_qps", fmt_num(facts.target_qps) if facts.target_qps else None),
        ("scheduled samples/s", fmt_num(facts.scheduled_per_s) if facts.scheduled_per_s is not None else None),
        ("completed samples/s", fmt_num(facts.completed_per_s) if facts.completed_per_s is not None else None),
        ("samples/s", fmt_num(facts.samples_per_s) if facts.samples_per_s is not None else None),
        ("tokens/s", fmt_num(facts.tokens_per_s, 6) if facts.tokens_per_s is not None else None),
        ("latency constraints met", _yes(facts.perf_constraints_met) if facts.perf_constraints_met is not None else None),
        ("min duration met", _yes(facts.min_duration_met)),
        ("min queries met", _yes(facts.min_queries_met)),
        ("early stopping met", _yes(facts.early_stopping_met) if facts.early_stopping_met is not None else None),
        ("LoadGen's reason", facts.invalid_reason),
    ]
    for es in facts.early_stopping:
        rows.append((f"early stopping ({es.which})", el("span", es.text, class_="mono")))
    if lim.cite:
        rows.append(("limits from", el("span", f"rules data {view.record.round}: ", lim.cite, class_="src")))
    return kv_table(rows, data_numbers=t.test.name)


def _sut_rows(view: RunView, t: TestView) -> list[tuple[str, Child]]:
    s = t.test.sut
    rows: list[tuple[str, Child]] = [
        ("status", t.test.status + (f" — {t.test.error}" if t.test.error else "")),
        ("SUT samples", f"issued {s.issued:,}, completed {s.completed:,}, failed {s.failed:,}"),
    ]
    if s.failures_by_kind:
        rows.append(("failures", ", ".join(f"{k}: {v:,}" for k, v in sorted(s.failures_by_kind.items()))))
    if t.test.client_ttft_p99_ms is not None and t.test.client_ttft_p99_ms.value is not None:
        rows.append(("client-side p99 TTFT", f"{_ms(t.test.client_ttft_p99_ms.value)} (n={t.test.client_ttft_p99_ms.count:,})"))
    if t.test.client_tpot_p99_ms is not None and t.test.client_tpot_p99_ms.value is not None:
        rows.append(("client-side p99 TPOT", f"{_ms(t.test.client_tpot_p99_ms.value)} (n={t.test.client_tpot_p99_ms.count:,})"))
    if t.test.wall_s is not None:
        rows.append(("wall time", f"{t.test.wall_s:,.1f} s"))
    client = t.test.client  # the client's self-diagnostics (None: not measured); the section "Client self-diagnostics"
    outcome = client_outcome(client_view(view, t))
    rows.append(("client", [el("a", outcome_badge(outcome, test=True), href="#" + client_anchor(t.test.name)), " ",
                            client_summary_line(client) if client is not None else "not measured"]))
    return rows


def _test_section(view: RunView, t: TestView, links: _Links) -> Markup:
    facts = t.detail
    parts: list[Child] = [kv_table(_sut_rows(view, t))]
    files = [links.file(t.directory / name, f"{t.test.directory}/{name}") for name in (DETAIL_FILE, SUMMARY_FILE, TIMELINE_FILE)
             if (t.directory / name).exists()]
    if files:
        parts.append(el("p", "Files: ", [[f, " "] for f in files]))
    if t.detail_note:
        parts.append(box("warn", el("p", t.detail_note)))
    perf_like = t.test.name in PERF_TESTS or t.test.name.startswith("TEST")
    if facts is not None and (facts.validity is not None or perf_like):
        parts.append(el("h3", "LoadGen's numbers"))
        parts.append(_numbers(view, t, facts))
    if perf_like and (facts is not None or t.timeline is not None):
        if t.timeline_note:
            parts.append(box("info", el("p", t.timeline_note), data_note="no-timeline"))
        samples = t.timeline.samples if t.timeline is not None else ()
        for which, values, logged in (
            ("TTFT", ttft_ms(samples) if samples else None, facts.ttft_ns if facts else {}),
            ("TPOT", tpot_ms(samples) if samples else None, facts.tpot_ns if facts else {}),
        ):
            fig = _cdf_figure(view, t, which, values, logged)
            if fig is not None:
                parts.append(fig)
        if view.scenario is not None and view.scenario.value in ("SingleStream", "MultiStream") and samples:
            lat = latency_ms(samples)
            xs, ys = cdf_points(lat)
            p = Plot(key=f"{t.test.name}-latency-cdf", title=f"Query latency ({t.test.name})", x_label="latency (ms)",
                     y_label="fraction of samples ≤ x", series=(Series("SUT timeline", xs, ys, "step"),), y_min=0.0,
                     y_max=1.005)
            parts.append(figure(p.key, render_plot(p), "Issue-to-completion latency of each sample (SUT timeline)."))
        es = _es_figure(view, t, facts)
        if es is not None:
            parts.append(es)
        if t.timeline is not None:
            parts += _over_time_figures(view, t)
    return section(f"Test: {t.test.name}", *parts, id=f"test-{t.test.name}")


def _explanation(e: Explanation, view: RunView, links: _Links) -> Markup:
    ev = []
    for x in e.evidence:
        path = view.run_dir / x.file
        where = f"{x.file}:{x.line}" if x.line else x.file
        ev.append(el("li", links.file(path, where), " ", el("span", x.text, class_="mono")))
    return el(
        "div",
        el("h3", e.constraint, el("span", f" — {e.test}", class_="src") if e.test != "run" else None),
        el("p", el("strong", "What happened: "), e.measured),
        el("p", el("strong", "By how much: "), e.by_how_much, data_amount="") if e.by_how_much else None,
        el("p", el("strong", "What to change: "), el("span", e.change, class_="change")),
        el("ul", ev, class_="evidence") if ev else None,
        class_="explain-item",
        data_constraint=e.constraint,
        data_rule=e.rule,
    )


def _why(view: RunView, links: _Links) -> Markup | None:
    status = view.record.verdict.status
    if status == "VALID":
        return box("ok", el("p", "LoadGen's result and every check of the run are fine: the run is VALID."))
    items = explain(view)
    errors = [e for e in items if e.severity is Severity.ERROR]
    warnings = [e for e in items if e.severity is not Severity.ERROR]
    out: list[Child] = []
    if status == "CLIENT_BOUND":
        intro = el("p", "The client limited the measurement: what LoadGen measured, its verdict included, is the "
                        "client's, not the system's (", el("a", "Client self-diagnostics", href="#client"),
                   " charts it). In plain words:")
    else:
        intro = el("p", "A run that finished can still be INVALID: LoadGen judges it against the round's "
                        "constraints when it ends, and writes why in its detail log. In plain words:")
    if errors:
        out.append(box("bad explain", el("h2", f"Why this run is {status}"), intro,
                       [_explanation(e, view, links) for e in errors], data_explain="errors"))
    if warnings:
        title = "Why this run is not submittable" if not errors else "Also keeping it from being a result"
        out.append(box("warn explain", el("h2", title), [_explanation(e, view, links) for e in warnings],
                       data_explain="warnings"))
    return el("div", out, id="why")


def _settings_section(view: RunView) -> Markup:
    r = view.record
    eff, off = r.settings.model_dump(mode="json"), r.official_settings.model_dump(mode="json")
    rows = []
    for key in eff:
        if key == "seeds":
            continue
        a, b = eff.get(key), off.get(key)
        if a != b:
            rows.append([el("code", key), Cell(str(a), num=True), Cell(str(b), num=True)])
    parts: list[Child] = []
    if rows:
        parts.append(el("p", "Settings of this run that differ from the round's:"))
        parts.append(table(["setting", Cell("this run", num=True), Cell("round", num=True)], rows))
    else:
        parts.append(el("p", "Every LoadGen setting is the round's (target rates aside)."))
    if r.overrides:
        parts.append(table(["user.conf line", "override", "compliant"],
                           [[str(o.entry.line), el("code", o.entry.text), badge("yes", "ok") if o.compliant else badge("NO", "bad")]
                            for o in r.overrides]))
    if r.findings:
        parts.append(el("h3", "Before the run (preflight)"))
        parts.append(el("ul", [finding_item(f) for f in r.findings], class_="findings"))
    return section("Settings", *parts, id="settings")


def run_page(view: RunView, *, link_dir: Path | None = None) -> bytes:
    """The page of one run; ``link_dir``: the directory the page is written to (file links relative to it)."""
    r = view.record
    links = _Links(link_dir)
    eng = r.engine
    summary = kv_table(
        [
            ("verdict", badge(r.verdict.status)),
            ("run", el("code", r.run_id)),
            ("benchmark", f"{r.benchmark}, scenario {r.scenario}, round {r.round}"),
            ("mode", r.mode),
            ("engine", None if eng is None else " ".join(x for x in (eng.name, eng.version, "—", eng.model) if x)),
            ("LoadGen", r.loadgen_version),
            ("data set", None if r.dataset is None else f"{r.dataset.name} ({r.dataset.samples:,} samples)"),
            ("p99 limits", _limits_text(view.limits)),
            ("created", r.created_utc),
            ("hardware", f"{r.hardware.cpu_model or '?'} × {r.hardware.cpu_count or '?'}"
             + (f"; {', '.join(r.hardware.accelerators)}" if r.hardware.accelerators else "")),
            ("command", el("code", " ".join(r.command)) if r.command else None),
            ("run record", links.file(view.record_path, view.record_path.name)),
        ],
        data_summary="run",
    )
    body: list[Child] = []
    if r.simulated:
        body.append(box("warn", el("p", el("strong", "SIMULATED: "),
                                   "this run used the built-in simulated engine. No system was measured; the numbers "
                                   "show the flow and the report, never a result."), data_simulated="true"))
    body.append(summary)
    body += [box("warn", el("p", n)) for n in view.notes]
    body.append(_why(view, links))
    if r.verdict.findings:
        body.append(section("Verdict findings", el("ul", [finding_item(f) for f in r.verdict.findings], class_="findings"),
                            id="verdict-findings"))
    order = sorted(view.tests, key=lambda t: (t.test.name not in PERF_TESTS, t.test.name != "accuracy"))
    for t in order:
        body.append(_test_section(view, t, links))
    body.append(client_section(view, order))
    extra = [("accuracy", r.accuracy), ("TEST06", r.test06)]
    for name, data in extra:
        if data:
            body.append(section(f"{name} result", _scalars(data), id=f"result-{name}"))
    body.append(_settings_section(view))
    title = f"Run {r.run_id}: {r.benchmark} {r.scenario}"
    subtitle = [badge(r.verdict.status), f"  inference-audit run, round {r.round}, mode {r.mode}"
                + (" — SIMULATED engine" if r.simulated else "")]
    return document(title, subtitle, body, kind="run")


def _limits_text(lim: Limits) -> str | None:
    parts = []
    if lim.round_ttft_ms is not None:
        parts.append(f"TTFT < {_ms(lim.round_ttft_ms)}")
    if lim.round_tpot_ms is not None:
        parts.append(f"TPOT < {_ms(lim.round_tpot_ms)}")
    if not parts:
        return None
    text = ", ".join(parts) + " (the round's)"
    gates = [f"{w} {_ms(g)}" for w, g, rv in (("TTFT", lim.gate_ttft_ms, lim.round_ttft_ms), ("TPOT", lim.gate_tpot_ms, lim.round_tpot_ms))
             if g is not None and rv is not None and abs(g - rv) > 1e-9]
    if gates:
        text += "; gates applied in this run: " + ", ".join(gates)
    return text


def _scalars(data: dict[str, object]) -> Markup:
    rows: list[tuple[str, Child]] = []
    for k, v in data.items():
        if isinstance(v, str | int | float | bool) or v is None:
            rows.append((k, "None" if v is None else str(v)))
        elif isinstance(v, dict) and all(isinstance(x, str | int | float | bool) for x in v.values()) and len(v) <= 12:
            rows.append((k, ", ".join(f"{a}: {b}" for a, b in v.items())))
    return kv_table(rows)
