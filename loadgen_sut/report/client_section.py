"""The run page's "Client self-diagnostics" section: per test, the client's delays (dispatch, receive and
event-loop lag: p50 / p99 / max with their counts, and a plot against the CLIENT-BOUND limit), the dispatch lag over
the test where the timeline has it, and the CPU (the event-loop thread against its threshold, the process, the
machine), each marked with what it decided.

The thresholds are :mod:`loadgen_sut.client_diag`'s constants, imported and formatted here, never restated.
"""

from __future__ import annotations

from collections.abc import Sequence

from checker.report.html.markup import Child, Markup, anchor_id, el
from checker.report.html.page import Cell, badge, box, kv_table, section, table
from checker.report.html.plots import (
    BOUND_COLOR,
    LIMIT_COLOR,
    PALETTE,
    Bars,
    Plot,
    RefLine,
    Series,
    figure,
    render_bars,
    render_plot,
)
from loadgen_sut.client_diag import (
    LATENCY_SHARE,
    LOOP_CPU_SATURATED,
    MIN_COUNT,
    MIN_LAG_LIMIT_MS,
    NO_LIMIT_LAG_MS,
    SATURATED_BUSY,
)
from loadgen_sut.report.client_view import LAG_WHAT, ClientView, LagRow, Outcome, client_view
from loadgen_sut.report.explain import PERF_TESTS
from loadgen_sut.report.run_data import RunView, TestView

LOG_FLOOR_MS = 0.001  # a lag under 1 us is drawn at 1 us on the log axis (the numbers beside give the value)
MAX_CPU_LISTED = 32  # usable CPUs listed one by one; beyond, their least / median / most busy
_KIND: dict[Outcome, str] = {"CLIENT-BOUND": "bad", "within": "ok", "not judged": "info", "not measured": "info"}
_P50, _P99, _MAX = PALETTE[0], PALETTE[1], "#5f6368"


def lag_ms(v: float | None) -> str:
    """A delay for people: "not measured" for None; 3 decimals under 1 ms, else 2."""
    if v is None:
        return "not measured"
    return f"{v:.3f} ms" if v < 1 else f"{v:,.2f} ms"


def _share(v: float | None, of: str = "") -> str:
    return "not measured" if v is None else f"{v:.1%}{of}"


def client_anchor(test: str) -> str:
    return anchor_id("client", test)


def outcome_badge(o: Outcome, *, test: bool = False) -> Markup:
    """The outcome as a badge; of a whole test (``test``), "within" reads "kept up"."""
    return badge("kept up" if test and o == "within" else o, _KIND[o])


def client_outcome(cv: ClientView | None) -> Outcome:
    """One word for a test: CLIENT-BOUND, within (kept up), not judged, not measured."""
    if cv is None:
        return "not measured"
    if not cv.judged:
        return "not judged"
    return "CLIENT-BOUND" if cv.client_bound else "within"


def thresholds() -> Markup:
    """The CLIENT-BOUND rules in words, from client_diag's constants."""
    items = [
        f"Delays (dispatch, receive and event-loop lag): CLIENT-BOUND when the p99 is at or over {LATENCY_SHARE:.0%} "
        "of the scenario's latency limit (the TTFT limit with token latencies, else the target latency), and never "
        f"under {MIN_LAG_LIMIT_MS:g} ms; {NO_LIMIT_LAG_MS:g} ms where the scenario has no latency limit (Offline, "
        "SingleStream). Each test's limit is in its table.",
        f"Event-loop thread CPU: CLIENT-BOUND at {LOOP_CPU_SATURATED:.0%} of one core or more (the single-threaded "
        "loop handles every sample).",
        f"Dispatch lags over fewer than {MIN_COUNT} samples are reported, not judged; the probes are judged once the "
        f"test lasted {MIN_COUNT} probe intervals. Offline's dispatch lag is not judged (its samples wait for a "
        "concurrency slot by design).",
        f"A machine is saturated when every usable CPU was at least {SATURATED_BUSY:.0%} busy; that and the loop "
        "thread's wait for a CPU are shown, and never decide on their own.",
        f"Only the {' and '.join(PERF_TESTS)} tests are judged; the others' numbers are shown.",
    ]
    return el("ul", [el("li", x) for x in items], data_thresholds="")


def _lag_table(cv: ClientView) -> Markup:
    rows = []
    for r in cv.lags:
        s = r.stats
        ok = r.measured and s is not None
        rows.append([
            r.name,
            el("span", LAG_WHAT[r.name], class_="src"),
            Cell(lag_ms(s.p50_ms) if ok and s else "not measured", num=True),
            Cell(lag_ms(s.p99_ms) if ok and s else "not measured", num=True),
            Cell(lag_ms(s.max_ms) if ok and s else "not measured", num=True),
            Cell(f"{s.count:,}" if ok and s else "not measured", num=True),
            Cell(f"p99 ≥ {cv.limit_ms:.1f} ms", num=True),
            [outcome_badge(r.outcome), " ", el("span", r.note, class_="src")],
        ])  # fmt: skip
    head = ["delay", "what it is", Cell("p50", num=True), Cell("p99", num=True), Cell("max", num=True),
            Cell("count", num=True), Cell("CLIENT-BOUND at", num=True), "outcome"]
    return table(head, rows, data_table=f"client-lags-{cv.test}")


def _lag_plot(cv: ClientView) -> Markup | None:
    measured = [r for r in cv.lags if r.measured]
    if not measured:
        return None
    rows: list[LagRow] = list(cv.lags)
    floor = False

    def at(v: float | None) -> float:
        nonlocal floor
        assert v is not None
        if v < LOG_FLOOR_MS:
            floor = True
            return LOG_FLOOR_MS
        return v

    series: list[Series] = []
    for label, pick, color, marker in (("p50", "p50_ms", _P50, "o"), ("p99", "p99_ms", _P99, "D"),
                                       ("max", "max_ms", _MAX, "^")):
        xs, ys = [], []
        for i, r in enumerate(rows):
            if r.measured and r.stats is not None and not (label == "p99" and r.outcome == "CLIENT-BOUND"):
                xs.append(at(getattr(r.stats, pick)))
                ys.append(float(i))
        if xs:
            series.append(Series(label, xs, ys, "markers", color, marker))
    bound = [(i, r) for i, r in enumerate(rows) if r.outcome == "CLIENT-BOUND" and r.stats is not None]
    if bound:
        series.append(Series("p99 at or over the limit: CLIENT-BOUND", [at(r.stats.p99_ms) for _, r in bound if r.stats],
                             [float(i) for i, _ in bound], "markers", LIMIT_COLOR, "D"))
    values = [at(getattr(r.stats, k)) for r in measured if r.stats for k in ("p50_ms", "p99_ms", "max_ms")]
    lo, hi = min([*values, cv.limit_ms]), max([*values, cv.limit_ms])
    ticks = tuple(
        (float(i), f"{r.name} (n={r.stats.count:,})" if r.measured and r.stats else f"{r.name}: not measured")
        for i, r in enumerate(rows)
    )
    p = Plot(
        key=f"{cv.test}-client-lags",
        title=f"Client delays against the CLIENT-BOUND limit ({cv.test})",
        x_label="delay (ms, log scale)",
        y_label="",
        series=tuple(series),
        lines=(RefLine(cv.limit_ms, f"CLIENT-BOUND at p99 ≥ {cv.limit_ms:.1f} ms ({cv.limit_why})", "x", LIMIT_COLOR),),
        log_x=True,
        x_min=lo / 2,
        x_max=hi * 2,
        y_ticks=ticks,
        height_in=2.6,
    )
    caption = [
        "The p50, p99 and max of each delay the client added (log scale). A delay whose p99 reaches the red line "
        "limited the measurement: it adds straight to every sample's TTFT as LoadGen times it.",
        f" Values under {LOG_FLOOR_MS:g} ms are drawn at {LOG_FLOOR_MS:g} ms." if floor else "",
    ]
    return figure(p.key, render_plot(p), caption)


def _over_time_plot(cv: ClientView) -> Markup | None:
    ot = cv.over_time
    if ot is None:
        return None
    series = []
    floor = any(v is not None and v < LOG_FLOOR_MS for v in ot.p50_ms)
    for label, vals, color in (("p50", ot.p50_ms, _P50), ("p99", ot.p99_ms, _P99), ("max", ot.max_ms, _MAX)):
        pts = [(c, max(v, LOG_FLOOR_MS)) for c, v in zip(ot.centres_s, vals, strict=True) if v is not None]
        series.append(Series(f"{label} of the samples issued in each {ot.bin_s:g} s", [x for x, _ in pts],
                             [y for _, y in pts], "line", color))
    p = Plot(
        key=f"{cv.test}-dispatch-lag-over-time",
        title=f"Dispatch lag over the test ({cv.test})",
        x_label="time since the first issue (s)",
        y_label="dispatch lag (ms, log scale)",
        series=tuple(series),
        lines=(RefLine(cv.limit_ms, f"CLIENT-BOUND at p99 ≥ {cv.limit_ms:.1f} ms", "y", LIMIT_COLOR),),
        log_y=True,
    )
    rows = [[Cell(f"{c:,.1f}", num=True), Cell(f"{n:,}", num=True), Cell(lag_ms(a) if n else "—", num=True),
             Cell(lag_ms(b) if n else "—", num=True), Cell(lag_ms(m) if n else "—", num=True)]
            for c, n, a, b, m in zip(ot.centres_s, ot.counts, ot.p50_ms, ot.p99_ms, ot.max_ms, strict=True)]
    data = table([Cell("time (s)", num=True), Cell("samples", num=True), Cell("p50", num=True), Cell("p99", num=True),
                  Cell("max", num=True)], rows)
    caption = (f"The dispatch lag of each sample from the SUT timeline ({ot.dispatched:,} of {ot.samples:,} samples "
               f"dispatched), per {ot.bin_s:g} s by the time LoadGen issued it. A lag that grows over the test is a "
               "client falling behind (a queue for the loop or for a --max-concurrency slot); spikes are stalls "
               "(a connect, a GC pause, a CPU taken away)."
               + (f" Values under {LOG_FLOOR_MS:g} ms are drawn at {LOG_FLOOR_MS:g} ms." if floor else ""))
    return figure(p.key, render_plot(p), caption, data)


def _cpu_busy_text(busy: Sequence[float]) -> str:
    if not busy:
        return "not measured"
    if len(busy) <= MAX_CPU_LISTED:
        return ", ".join(f"{b:.0%}" for b in busy)
    s = sorted(busy)
    return f"least {s[0]:.0%}, median {s[len(s) // 2]:.0%}, most {s[-1]:.0%} of {len(s)} CPUs"


def _cpu_table(cv: ClientView) -> Markup:
    d = cv.diag
    sat: Child = "not measured" if d.machine_cpu_saturated is None else (
        badge("saturated", "warn") if d.machine_cpu_saturated else badge("not saturated", "ok"))
    rows = [
        ["event-loop thread: CPU", Cell(_share(d.loop_thread_cpu_fraction, " of one core"), num=True),
         f"≥ {LOOP_CPU_SATURATED:.0%} of one core: CLIENT-BOUND", outcome_badge(cv.loop_cpu)],
        ["event-loop thread: runnable, waiting for a CPU", Cell(_share(d.loop_thread_wait_fraction, " of the time"), num=True),
         "shown, never decides", "—"],
        ["whole process (LoadGen's threads, the loop, the engine client)",
         Cell(f"{d.process_cpu_cores:.3f} cores' worth of {d.usable_cpus} usable ({d.process_cpu_s:,.2f} s CPU over "
              f"{d.wall_s:,.2f} s)", num=True), "shown, never decides", "—"],
        ["involuntary context switches", Cell("not measured" if d.involuntary_context_switches is None
                                              else f"{d.involuntary_context_switches:,}", num=True),
         "shown, never decides", "—"],
        ["usable CPUs busy (any process)", Cell(_cpu_busy_text(d.machine_cpu_busy), num=True),
         f"saturated when every one is ≥ {SATURATED_BUSY:.0%}; shown, never decides", sat],
    ]  # fmt: skip
    return table(["CPU", Cell("measured", num=True), "threshold", "outcome"], rows, data_table=f"client-cpu-{cv.test}")


def _cpu_plot(cv: ClientView) -> Markup | None:
    d = cv.diag
    busy = sorted(d.machine_cpu_busy)
    candidates: list[tuple[str, float | None]] = [
        ("event-loop thread: CPU", d.loop_thread_cpu_fraction),
        ("event-loop thread: waiting for a CPU", d.loop_thread_wait_fraction),
        (f"whole process ({d.usable_cpus} usable CPUs)", d.process_cpu_cores),
        ("least busy usable CPU (any process)", busy[0] if busy else None),
        ("busiest usable CPU (any process)", busy[-1] if busy else None),
    ]
    shown = [(name, v) for name, v in candidates if v is not None]
    missing = [name for name, v in candidates if v is None]
    if not shown:
        return None
    over = [v if i == 0 and cv.loop_cpu == "CLIENT-BOUND" else 0.0 for i, (_, v) in enumerate(shown)]
    under = [0.0 if i == 0 and cv.loop_cpu == "CLIENT-BOUND" else v for i, (_, v) in enumerate(shown)]
    stacks = [("measured", tuple(under), PALETTE[0])]
    if any(over):
        stacks.append(("event-loop thread at or over its threshold: CLIENT-BOUND", tuple(over), LIMIT_COLOR))
    b = Bars(
        key=f"{cv.test}-client-cpu",
        title=f"Client CPU, in shares of one core ({cv.test})",
        x_label="share of one CPU core (1 = a whole core)",
        categories=tuple(name for name, _ in shown),
        stacks=tuple(stacks),
        lines=(RefLine(LOOP_CPU_SATURATED, f"CLIENT-BOUND: event-loop thread ≥ {LOOP_CPU_SATURATED:.0%} of one core",
                       "x", LIMIT_COLOR),
               RefLine(SATURATED_BUSY, f"a CPU ≥ {SATURATED_BUSY:.0%} busy (saturation: shown, never decides)", "x",
                       BOUND_COLOR, ":")),
        integer_x=False,
        x_max=max(1.05, *(v * 1.1 for _, v in shown)),
    )
    caption = ("The event-loop thread's CPU against the CLIENT-BOUND threshold (red), the process's cores' worth and "
               "the least and most busy CPU the process may use (any process's load) against saturation (purple)."
               + (f" Not measured here: {', '.join(missing)}." if missing else ""))
    return figure(b.key, render_bars(b), caption)


def _test_part(view: RunView, t: TestView) -> Markup:
    cv = client_view(view, t)
    name = t.test.name
    head = el("h3", f"{name} ", outcome_badge(client_outcome(cv), test=True))
    if cv is None:
        return el("div", head, el("p", "Not measured: the run record has no client diagnostics for this test (a record "
                                       "older than them, or the test did not run)."),
                  id=client_anchor(name), data_client=name)
    parts: list[Child] = [head]
    if cv.recorded is not None:
        parts.append(box("bad", el("p", el("strong", "The run's verdict: "), cv.recorded.message)))
    elif cv.judged:
        parts.append(el("p", "The run's verdict: the client kept up (no RUN-CLIENT-BOUND finding for this test)."))
    if cv.disagrees:
        today = "; ".join(cv.reasons) if cv.reasons else "no threshold tripped"
        parts.append(box("warn", el("p", "This version's thresholds judge the test otherwise than the run did: ", today,
                                    ". The verdict above is the run's."), data_note="client-disagrees"))
    limit = [f"{cv.limit_ms:.1f} ms ({cv.limit_why})"]
    if cv.settings is None:
        limit.append("; the record has no read-back LoadGen settings for this test, so no latency limit is known")
    parts.append(kv_table([("delay limit of this test", limit),
                           ("probe interval", f"{cv.diag.probe_interval_ms:g} ms over {cv.diag.wall_s:,.2f} s")]))
    parts.append(_lag_table(cv))
    for fig in (_lag_plot(cv), _over_time_plot(cv)):
        if fig is not None:
            parts.append(fig)
    if cv.over_time is None:
        why = ("the test has no SUT timeline" if t.timeline is None
               else "no sample of its timeline has a dispatch time (an in-process engine has no socket)")
        parts.append(el("p", f"No dispatch lag over time: {why}.", class_="src", data_note="no-dispatch-series"))
    parts.append(_cpu_table(cv))
    fig = _cpu_plot(cv)
    if fig is not None:
        parts.append(fig)
    return el("div", parts, id=client_anchor(name), data_client=name)


def client_section(view: RunView, order: Sequence[TestView]) -> Markup | None:
    """The section (None when the run has no tests)."""
    if not order:
        return None
    intro = el("p", "The test process measures the client (the SUT process: LoadGen's threads, its event loop, the "
                    "engine client) in every test. When it cannot keep up, LoadGen measures the client, not the "
                    "system; such a test is CLIENT-BOUND (RUN-CLIENT-BOUND, verdict CLIENT_BOUND). The thresholds:")
    return section("Client self-diagnostics", intro, thresholds(), [_test_part(view, t) for t in order], id="client")
