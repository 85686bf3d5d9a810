"""The run page's "Client self-diagnostics" section: the lags (p50 / p99 / max with their counts), the dispatch lag
over time, the CPU against its threshold, marked with what tripped: the same judgement as the run's verdict
(loadgen_sut/client_diag.py, whose thresholds the page imports)."""

from __future__ import annotations

import dataclasses
import html as html_lib
import itertools
import json
import re
from pathlib import Path

import numpy as np
from report_helpers import RealRun, copy_run, html_text, make_client_bound, plots, read_record, write_record

from loadgen_sut.client_diag import (
    LATENCY_SHARE,
    LOOP_CPU_SATURATED,
    MIN_COUNT,
    MIN_LAG_LIMIT_MS,
    NO_LIMIT_LAG_MS,
    SATURATED_BUSY,
    client_bound_finding,
    client_bound_reasons,
    lag_limit_ms,
)
from loadgen_sut.record import RECORD_FILE, LagStats, Verdict
from loadgen_sut.report.client_section import lag_ms
from loadgen_sut.report.client_view import client_view
from loadgen_sut.report.run_data import load_run
from loadgen_sut.report.run_page import run_page
from rules.models import Scenario


def _part(html: str, test: str) -> str:
    """The section's part of one test."""
    start = html.index(f'data-client="{test}"')
    end = html.find("data-client=", start + 20)
    return html[start : end if end > 0 else html.index('id="settings"')]


def _row(part: str, table: str, name: str) -> str:
    t = part[part.index(f'data-table="{table}"') :]
    t = t[: t.index("</table>")]
    row = t[t.index(f"<td>{name}") :]
    return row[: row.index("</tr>")]


def test_the_real_runs_diagnostics_against_the_thresholds(invalid_run: RealRun) -> None:
    html = html_text(invalid_run.html)
    record = read_record(invalid_run.run_dir)
    perf = next(t for t in record.tests if t.name == "performance")
    diag = perf.client
    assert diag is not None and diag.loop_lag is not None and diag.receive_lag is not None
    assert plots(html)[-2:] == ["performance-client-lags", "performance-client-cpu"]
    part = _part(html, "performance")
    # the thresholds, from client_diag's constants and lag_limit_ms (never restated)
    limit, why = lag_limit_ms(perf.loadgen_settings)
    rules = html[html.index("data-thresholds") : html.index("</ul>", html.index("data-thresholds"))]
    for text in (f"{LATENCY_SHARE:.0%}", f"never under {MIN_LAG_LIMIT_MS:g} ms", f"{NO_LIMIT_LAG_MS:g} ms where",
                 f"{LOOP_CPU_SATURATED:.0%} of one core", f"fewer than {MIN_COUNT} samples", f"{SATURATED_BUSY:.0%} busy"):
        assert text in rules, text
    assert html_lib.escape(f"{limit:.1f} ms ({why})") in part
    # the simulated engine has no socket: its dispatch lag is not measured, never 0
    dispatch = _row(part, "client-lags-performance", "dispatch lag")
    assert diag.dispatch_lag.count == 0
    assert dispatch.count('<td class="num">not measured</td>') == 4 and "0.000 ms" not in dispatch and ">0<" not in dispatch
    assert 'data-note="no-dispatch-series"' in part
    # the probes: p50 / p99 / max and their counts, as the record has them
    for name, s in (("receive lag", diag.receive_lag), ("event-loop lag", diag.loop_lag)):
        row = _row(part, "client-lags-performance", name)
        for v in (s.p50_ms, s.p99_ms, s.max_ms):
            assert f">{lag_ms(v)}<" in row
        assert f">{s.count:,}<" in row and 'data-status="within"' in row
    # the CPU, against the 90 %-of-a-core threshold
    cpu = _row(part, "client-cpu-performance", "event-loop thread: CPU")
    assert diag.loop_thread_cpu_fraction is not None and f"{diag.loop_thread_cpu_fraction:.1%} of one core" in cpu
    assert f"≥ {LOOP_CPU_SATURATED:.0%} of one core: CLIENT-BOUND" in cpu and 'data-status="within"' in cpu
    assert 'data-status="kept up"' in part  # the test's outcome, and the run's verdict said the same
    assert "The run&#x27;s verdict: the client kept up" in part
    assert "client-disagrees" not in part
    assert 'href="#client-performance"' in html  # the test's summary links to its diagnostics


def test_a_client_bound_run_marks_what_tripped(invalid_run: RealRun, tmp_path: Path) -> None:
    run_dir = copy_run(invalid_run.run_dir, tmp_path / "run")
    diag, samples = make_client_bound(run_dir)
    view = load_run(run_dir)
    assert view.record.verdict.status == "CLIENT_BOUND"
    page = run_page(view)
    assert page == run_page(load_run(run_dir))  # the same input, the same bytes
    html = page.decode("utf-8")
    assert plots(html)[-3:] == ["performance-client-lags", "performance-dispatch-lag-over-time", "performance-client-cpu"]
    part = _part(html, "performance")
    assert part.index('data-status="CLIENT-BOUND"') < part.index("</h3>")  # the test's outcome
    assert "The run&#x27;s verdict: </strong>performance: CLIENT-BOUND: dispatch lag p99" in part
    limit, _ = lag_limit_ms(view.tests[0].test.loadgen_settings)
    dispatch = _row(part, "client-lags-performance", "dispatch lag")
    assert 'data-status="CLIENT-BOUND"' in dispatch and f">{lag_ms(diag.dispatch_lag.p99_ms)}<" in dispatch
    assert f">{diag.dispatch_lag.count:,}<" in dispatch and f"p99 ≥ {limit:.1f} ms" in dispatch
    receive = _row(part, "client-lags-performance", "receive lag")
    assert 'data-status="not measured"' in receive and "no timerfd" in receive
    assert receive.count('<td class="num">not measured</td>') == 4  # p50, p99, max, count
    assert 'data-status="within"' in _row(part, "client-lags-performance", "event-loop lag")
    assert 'data-status="CLIENT-BOUND"' in _row(part, "client-cpu-performance", "event-loop thread: CPU")
    # the plots mark it: the p99 at or over the limit in red, the loop thread's bar over its threshold
    lags_fig = part[part.index('data-plot="performance-client-lags"') :]
    assert "p99 at or over the limit: CLIENT-BOUND" in lags_fig[: lags_fig.index("</figure>")]
    assert "event-loop thread at or over its threshold: CLIENT-BOUND" in part
    # the dispatch lag over time: per bin, numpy's percentiles of the samples issued in it (as LagStats takes them)
    over = part[part.index('data-plot="performance-dispatch-lag-over-time"') :]
    over = over[: over.index("</figure>")]
    cells = re.findall(r"<tr><td class=\"num\">([0-9.,]+)</td><td class=\"num\">([0-9,]+)</td>"
                       r"<td class=\"num\">[^<]+</td><td class=\"num\">([^<]+)</td>", over)
    assert cells and sum(int(n.replace(",", "")) for _, n, _ in cells) == len(samples)
    by_issue = sorted(samples, key=lambda s: s.issued_ns)
    lags_ms = [s.dispatch_lag_ns / 1e6 for s in by_issue if s.dispatch_lag_ns is not None]
    _, n, p99 = cells[0]  # the first bin: the first n samples issued
    assert p99 == lag_ms(float(np.percentile(lags_ms[: int(n)], 99)))
    filled = [(int(k.replace(",", "")), v) for _, k, v in cells if k != "0"]
    _, p99_last = filled[-1]  # the last bin with samples: the last ones issued
    assert p99_last == lag_ms(float(np.percentile(lags_ms[-filled[-1][0] :], 99)))
    assert float(p99.split()[0]) < limit <= float(p99_last.split()[0].replace(",", ""))  # it grew past the limit
    # the why-box explains the CLIENT_BOUND verdict
    why = html[html.index('id="why"') :]
    assert "Why this run is CLIENT_BOUND" in why and 'href="#client"' in why
    assert why.index('data-rule="RUN-CLIENT-BOUND"') < why.index('data-rule="RUN-LOADGEN-INVALID"')  # the client first


def test_the_marks_are_the_verdicts_own_judgement(invalid_run: RealRun) -> None:
    """For every mix of lags, counts, loop CPU and scenario: the rows marked CLIENT-BOUND are exactly the signals
    client_bound_reasons names."""
    view = load_run(invalid_run.run_dir)
    t = view.tests[0]
    base = t.test.client
    server = t.test.loadgen_settings
    assert base is not None and server is not None
    names = ("dispatch lag", "receive lag", "event-loop lag")
    offline = server.model_copy(update={"scenario": Scenario.OFFLINE})
    checked = 0
    for settings, (d99, dn), r99, l99, cpu, wall in itertools.product(
        (server, offline, None), ((0.5, 400), (150.0, 400), (150.0, MIN_COUNT - 1), (None, 0)), (0.3, 200.0, None),
        (1.0, 120.0), (0.2, LOOP_CPU_SATURATED, None), (5.0, 0.2),
    ):
        assert lag_limit_ms(settings)[0] > 1.0  # 0.5 ms is under every limit, 150 ms over both here
        diag = base.model_copy(update={
            "dispatch_lag": LagStats() if d99 is None else LagStats(p50_ms=d99 / 3, p99_ms=d99, max_ms=d99 * 2, count=dn),
            "receive_lag": None if r99 is None else LagStats(p50_ms=r99 / 3, p99_ms=r99, max_ms=r99, count=50),
            "loop_lag": LagStats(p50_ms=l99 / 3, p99_ms=l99, max_ms=l99, count=50),
            "loop_thread_cpu_fraction": cpu, "wall_s": wall,
        })  # fmt: skip
        test = t.test.model_copy(update={"client": diag, "loadgen_settings": settings})
        cv = client_view(view, dataclasses.replace(t, test=test))
        assert cv is not None
        marked = {r.name for r in cv.lags if r.outcome == "CLIENT-BOUND"}
        if cv.loop_cpu == "CLIENT-BOUND":
            marked.add("loop thread")
        reasons = client_bound_reasons(diag, settings)
        said = {n for n in names if any(x.startswith(f"{n} p99") for x in reasons)}
        if any(x.startswith("the event-loop thread was busy") for x in reasons):
            said.add("loop thread")
        assert marked == said, (settings, d99, dn, r99, l99, cpu, wall)
        assert cv.client_bound == bool(reasons)
        for r in cv.lags:  # not measured stays not measured, whatever else holds
            assert (r.outcome == "not measured") == (not r.measured)
        checked += 1
    assert checked == 3 * 4 * 3 * 2 * 3 * 2
    # a test the run does not judge (accuracy, TEST06, ...): its numbers shown, nothing marked, even over a limit
    over = base.model_copy(update={"loop_thread_cpu_fraction": 0.99,
                                   "dispatch_lag": LagStats(p50_ms=200, p99_ms=300, max_ms=400, count=400)})
    test = t.test.model_copy(update={"name": "accuracy", "client": over})
    cv = client_view(view, dataclasses.replace(t, test=test))
    assert cv is not None and not cv.judged and not cv.client_bound and client_bound_reasons(over, server)
    assert [r.outcome for r in cv.lags] == ["not judged"] * 3 and cv.loop_cpu == "not judged"
    assert "at or over the" in cv.lags[0].note


def test_a_verdict_other_than_todays_is_said_and_not_measured_is_never_zero(invalid_run: RealRun, tmp_path: Path) -> None:
    run_dir = copy_run(invalid_run.run_dir, tmp_path / "run")
    record = read_record(run_dir)
    perf = next(t for t in record.tests if t.name == "performance")
    assert perf.client is not None
    # the run said CLIENT-BOUND (say, with other thresholds); today's find the client kept up
    starved = perf.client.model_copy(update={"loop_thread_cpu_fraction": 0.99})
    bound = client_bound_finding("performance", starved, perf.loadgen_settings)
    assert bound is not None
    write_record(run_dir, record.model_copy(update={"verdict": Verdict.of([*record.verdict.findings, bound])}))
    part = _part(run_page(load_run(run_dir)).decode("utf-8"), "performance")
    assert 'data-note="client-disagrees"' in part and "no threshold tripped" in part
    # a record without diagnostics (older, or the test did not run): "not measured", no plot, no number
    data = json.loads((run_dir / RECORD_FILE).read_text(encoding="utf-8"))
    for t in data["tests"]:
        t["client"] = None
    (run_dir / RECORD_FILE).write_text(json.dumps(data), encoding="utf-8")
    html = run_page(load_run(run_dir)).decode("utf-8")
    part = _part(html, "performance")
    assert 'data-status="not measured"' in part and "Not measured: the run record has no client diagnostics" in part
    assert "client-lags" not in html and "client-cpu" not in html and " ms" not in part
