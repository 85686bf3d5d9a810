"""The page of an ``inference-audit sweep`` results file (:class:`loadgen_sut.sweep_model.SweepResult`): goodput and
p99 TTFT / TPOT against the offered rate, with the SLO lines and the knee."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from checker.report.html.markup import Child, Markup, el, relative_href
from checker.report.html.page import Cell, badge, box, document, fmt_num, kv_table, section, table
from checker.report.html.plots import BOUND_COLOR, LIMIT_COLOR, Plot, RefLine, Series, figure, render_plot
from loadgen_sut.record import Percentile
from loadgen_sut.sweep_model import SweepLevel, SweepResult

KNEE_COLOR = "#000000"


def _v(p: Percentile | None) -> float | None:
    return None if p is None else p.value


def _pct_text(p: Percentile | None) -> str:
    if p is None or p.value is None:
        return "—"
    v = p.value
    return (f"{v:,.1f}" if v < 100 else f"{v:,.0f}") + f" ms (n={p.count:,})"


def _knee_lines(result: SweepResult) -> list[RefLine]:
    k = result.knee
    out: list[RefLine] = []
    if k is not None and k.rate_qps is not None:
        out.append(RefLine(k.rate_qps, f"knee: {k.rate_qps:g} req/s", "x", KNEE_COLOR, "-"))
    if k is not None and k.first_failing_qps is not None:
        out.append(RefLine(k.first_failing_qps, f"first level over the SLO: {k.first_failing_qps:g} req/s", "x",
                           BOUND_COLOR, ":"))
    return out


def _xy(levels: list[SweepLevel], get: Callable[[SweepLevel], float | None]) -> tuple[list[float], list[float]]:
    xs, ys = [], []
    for lv in levels:
        y = get(lv)
        if y is not None:
            xs.append(lv.offered_qps)
            ys.append(float(y))
    return xs, ys


def _goodput_plot(result: SweepResult, levels: list[SweepLevel]) -> Markup | None:
    series = []
    for label, get, color in (
        ("goodput: completed within both SLO limits (SUT timeline)", lambda lv: lv.goodput_qps, "#009E73"),
        ("completed (LoadGen)", lambda lv: lv.achieved_qps, "#0072B2"),
    ):
        xs, ys = _xy(levels, get)
        if xs:
            series.append(Series(label, xs, ys, "line", color))
    if not series:
        return None
    offered = [lv.offered_qps for lv in levels]
    series.append(Series("offered (ideal)", offered, offered, "line", "#8c959f"))
    p = Plot(
        key="sweep-goodput",
        title="Goodput against the offered rate",
        x_label="offered rate (req/s)",
        y_label="req/s",
        series=tuple(series),
        lines=tuple(_knee_lines(result)),
        y_min=0.0,
        x_min=0.0,
    )
    return figure(p.key, render_plot(p), "Requests per second completed within the SLO (goodput) and completed at "
                  "all, at each offered rate. Past the knee the system falls behind: goodput stops following the "
                  "offered rate.")


def _latency_plot(result: SweepResult, levels: list[SweepLevel], which: str) -> Markup | None:
    slo = result.settings.slo
    limit = slo.ttft_ms if which == "TTFT" else slo.tpot_ms
    attr = "ttft_p99_ms" if which == "TTFT" else "tpot_p99_ms"
    series = []
    xs, ys = _xy(levels, lambda lv: _v(getattr(lv.timeline.latency, attr, None)) if lv.timeline else None)
    if xs:
        series.append(Series(f"p99 {which} (SUT timeline)", xs, ys, "line", "#0072B2"))
    xs, ys = _xy(levels, lambda lv: _v(getattr(lv.loadgen_latency, attr, None)) if lv.loadgen_latency else None)
    if xs:  # drawn last: LoadGen's is the one the knee is judged by
        series.append(Series(f"p99 {which} (LoadGen)", xs, ys, "points", "#D55E00"))
    if not series:
        return None
    p = Plot(
        key=f"sweep-{which.lower()}-p99",
        title=f"p99 {which} against the offered rate",
        x_label="offered rate (req/s)",
        y_label=f"p99 {which} (ms)",
        series=tuple(series),
        lines=(RefLine(limit, f"SLO: {which} ≤ {limit:g} ms", "y", LIMIT_COLOR), *_knee_lines(result)),
        y_min=0.0,
        x_min=0.0,
    )
    return figure(p.key, render_plot(p), f"The 99th percentile {which} of each level against the SLO line: the knee "
                  "is the highest rate, from the lowest up, whose LoadGen p99s stay within it.")


def _levels_table(levels: list[SweepLevel], link_dir: Path | None) -> Markup:
    rows = []
    for lv in levels:
        run: Child = el("code", lv.run_id)
        record = Path(lv.run_dir) / "run-record.json"
        if link_dir is not None and record.exists():
            run = el("a", el("code", lv.run_id), href=relative_href(Path(lv.run_dir), link_dir))
        within = "—" if lv.within_slo is None else (badge("within", "ok") if lv.within_slo else badge("over", "bad"))
        lat = lv.loadgen_latency
        rows.append(
            [
                Cell(f"{lv.offered_qps:g}", num=True),
                Cell(fmt_num(lv.scheduled_qps), num=True),
                Cell(fmt_num(lv.achieved_qps), num=True),
                Cell(fmt_num(lv.goodput_qps), num=True),
                Cell(_pct_text(lat.ttft_p99_ms if lat else None), num=True),
                Cell(_pct_text(lat.tpot_p99_ms if lat else None), num=True),
                within,
                lv.loadgen_validity or "—",
                f"{lv.status}" + (f": {lv.error}" if lv.error else ""),
                Cell(f"{lv.failed:,}", num=True),
                run,
            ]
        )
    head = [Cell("offered", num=True), Cell("scheduled", num=True), Cell("completed", num=True),
            Cell("goodput", num=True), Cell("p99 TTFT (LoadGen)", num=True), Cell("p99 TPOT (LoadGen)", num=True),
            "SLO", "LoadGen", "level", Cell("failed", num=True), "run"]
    return section("Levels", table(head, rows, data_table="levels"), id="levels")


def sweep_page(result: SweepResult, *, link_dir: Path | None = None, source: Path | None = None) -> bytes:
    s = result.settings
    levels = sorted(result.levels, key=lambda lv: lv.offered_qps)
    k = result.knee
    knee_text: Child = "not computed"
    if k is not None:
        if k.rate_qps is None:
            knee_text = "none: the lowest level already missed the SLO"
        elif k.bounded and k.first_failing_qps is not None:
            knee_text = f"{k.rate_qps:g} req/s: capacity within the SLO lies between {k.rate_qps:g} and {k.first_failing_qps:g} req/s"
        else:
            knee_text = f"at least {k.rate_qps:g} req/s: every level met the SLO (a lower bound)"
    summary = kv_table(
        [
            ("knee", knee_text),
            ("benchmark", f"{s.benchmark}, scenario {s.scenario}, round {s.round}"),
            ("SLO", f"TTFT ≤ {s.slo.ttft_ms:g} ms, TPOT ≤ {s.slo.tpot_ms:g} ms — {s.slo.source}"),
            ("rates", f"{', '.join(f'{r:g}' for r in s.rates_qps)} req/s ({s.spacing})"),
            ("levels", f"{len(levels)} of {len(s.rates_qps)} run" + ("" if result.complete else " (incomplete)")),
            ("each level", f"{s.duration_s:g} s, at least {s.min_queries:,} queries"),
            ("peak goodput", f"{fmt_num(k.peak_goodput_qps)} req/s at {fmt_num(k.peak_goodput_at_qps)} offered"
             if k is not None and k.peak_goodput_qps is not None else None),
            ("highest completed rate", f"{fmt_num(k.max_achieved_qps)} req/s at {fmt_num(k.max_achieved_at_qps)} offered"
             if k is not None and k.max_achieved_qps is not None else None),
            ("knee basis", k.basis if k is not None else None),
            ("engine", f"{s.engine.kind} — {s.engine.model}"),
            ("updated", result.updated_utc),
            ("results file", el("code", str(source)) if source is not None else None),
        ],
        data_summary="sweep",
    )
    body: list[Child] = []
    if result.simulated:
        body.append(box("warn", el("p", el("strong", "SIMULATED: "), "the levels ran the built-in simulated engine; "
                                   "no system was measured."), data_simulated="true"))
    body.append(summary)
    if k is not None and k.within_above_knee:
        body.append(box("warn", el("p", "Levels above the first one over the SLO met it again (noise near the knee): "
                                   f"{', '.join(f'{r:g}' for r in k.within_above_knee)} req/s. The knee does not move.")))
    body += [box("info", el("p", n)) for n in result.notes]
    for fig in (_goodput_plot(result, levels), _latency_plot(result, levels, "TTFT"), _latency_plot(result, levels, "TPOT")):
        if fig is not None:
            body.append(fig)
    if not levels:
        body.append(box("warn", el("p", "No level has finished yet.")))
    body.append(_levels_table(levels, link_dir))
    fp = result.find_peak
    if fp is not None:
        body.append(section("LoadGen's FindPeakPerformance", kv_table([
            ("status", fp.status + (f": {fp.error}" if fp.error else "")),
            ("started at", f"{fp.start_qps:g} req/s"),
            ("peak", f"{fmt_num(fp.peak_qps)} req/s" if fp.peak_qps is not None else "not found"),
            ("agrees with the knee", None if fp.agrees_with_knee is None else ("yes" if fp.agrees_with_knee else "NO")),
            ("note", fp.note),
        ]), id="find-peak"))
    title = f"Sweep: {s.benchmark} {s.scenario}"
    subtitle = f"inference-audit sweep, round {s.round}; {len(levels)} levels" + (" — SIMULATED engine" if result.simulated else "")
    return document(title, subtitle, body, kind="sweep")
