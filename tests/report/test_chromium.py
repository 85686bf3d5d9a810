"""The pages render in headless Chromium (Debian's ``chromium``) with the network off: a screenshot that is not
blank, and a DOM that holds the SVG plots and the expected numbers.

``.ci/run`` installs ``chromium`` when ``/usr/bin/chromium`` is missing; without it these tests are skipped with
that reason. The network is kept away by a network namespace of its own (``unshare -n``, where it works) and by
flags (host resolver mapped to nowhere, a proxy on a closed port); the pages also carry a
Content-Security-Policy of ``default-src 'none'``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from report_helpers import (
    CHROMIUM,
    PEER,
    SUBMISSIONS,
    RealRun,
    chromium,
    copy_run,
    make_client_bound,
    plots,
    png_is_not_blank,
    summary_table,
    write_sweep,
)

from checker.cli.check import main as check_main
from checker.parsers.mllog import parse_detail_file
from loadgen_sut.cli import main
from loadgen_sut.client_diag import LOOP_CPU_SATURATED
from loadgen_sut.report.client_section import lag_ms

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="/usr/bin/chromium is not installed (.ci/run installs Debian's chromium package)"
)


def _dom_plots(dom: str) -> list[str]:
    return re.findall(r'<figure class="plot[^"]*" data-plot="([^"]+)"', dom)


def test_run_page_in_chromium(invalid_run: RealRun, tmp_path: Path) -> None:
    html = invalid_run.html.read_text(encoding="utf-8")
    out = chromium(invalid_run.html, tmp_path, height=3600)
    width, height, colours = png_is_not_blank(out.png)
    assert (width, height) == (1280, 3600) and colours > 50, out.network
    assert _dom_plots(out.dom) == plots(html) and len(plots(html)) == 9
    assert out.dom.count("<svg") == 9
    log = parse_detail_file(invalid_run.run_dir / "performance" / "mlperf_log_detail.txt")
    p99 = log.percentile_ns("first_token", 99.0)
    assert p99 is not None
    assert f"{p99 / 1e6:,.0f} ms" in out.dom  # LoadGen's p99 TTFT ...
    assert "v6.1 limit: p99 TTFT &lt; 2,000 ms" in out.dom  # ... the limit drawn in the plot ...
    assert "Why this run is INVALID" in out.dom and "over the limit" in out.dom  # ... and why
    assert 'id="client"' in out.dom and f"{LOOP_CPU_SATURATED:.0%} of one core" in out.dom  # the client's section


def test_a_client_bound_run_page_in_chromium(invalid_run: RealRun, tmp_path: Path) -> None:
    run_dir = copy_run(invalid_run.run_dir, tmp_path / "run")
    diag, _ = make_client_bound(run_dir)
    page = tmp_path / "bound.html"
    assert main(["report", str(run_dir), "--html", str(page)]) == 0
    out = chromium(page, tmp_path, height=2400)
    assert png_is_not_blank(out.png)[2] > 50
    assert _dom_plots(out.dom)[-3:] == ["performance-client-lags", "performance-dispatch-lag-over-time",
                                        "performance-client-cpu"]
    assert "Why this run is CLIENT_BOUND" in out.dom
    assert f">{lag_ms(diag.dispatch_lag.p99_ms)}<" in out.dom and 'data-status="CLIENT-BOUND"' in out.dom


def test_check_and_sweep_pages_in_chromium(tmp_path: Path) -> None:
    check = tmp_path / "check.html"
    check_main([str(SUBMISSIONS), "--html", str(check), "--json", str(tmp_path / "check.json")])
    out = chromium(check, tmp_path, height=1800)
    assert png_is_not_blank(out.png)[2] > 20
    assert _dom_plots(out.dom) == ["check-findings-per-rule", "check-results-per-submitter"]
    data = json.loads((tmp_path / "check.json").read_text())
    assert f"{data['counts']['results']}: {data['counts']['valid']} valid, {data['counts']['invalid']} invalid" in out.dom
    assert "ACC-METRIC" in out.dom

    main(["report", str(write_sweep(tmp_path / "sweep.json")), "--html", str(tmp_path / "sweep.html")])
    out = chromium(tmp_path / "sweep.html", tmp_path, height=1600)
    assert png_is_not_blank(out.png)[2] > 20
    assert _dom_plots(out.dom) == ["sweep-goodput", "sweep-ttft-p99", "sweep-tpot-p99"]
    assert "knee: 30 req/s" in out.dom


def test_table_and_claim_pages_in_chromium(tmp_path: Path) -> None:
    """The pages 'inference-audit report' writes from the --json reports (the same bytes as --html's)."""
    table = summary_table(tmp_path, edit_row2="500.0")
    main(["table", str(table), "--tree", str(SUBMISSIONS), "--html", str(tmp_path / "own.html"), "--json",
          str(tmp_path / "table.json")])  # fmt: skip
    assert main(["report", str(tmp_path / "table.json"), "--html", str(tmp_path / "table.html")]) == 0
    assert (tmp_path / "table.html").read_bytes() == (tmp_path / "own.html").read_bytes()
    out = chromium(tmp_path / "table.html", tmp_path, height=1600)
    assert png_is_not_blank(out.png)[2] > 20
    assert _dom_plots(out.dom) == ["table-rederived-difference"] and "500.0 Tokens/s" in out.dom
    main(["claim", str(PEER), "--json", str(tmp_path / "claim.json")])
    assert main(["report", str(tmp_path / "claim.json"), "--html", str(tmp_path / "claim.html")]) == 0
    out = chromium(tmp_path / "claim.html", tmp_path, height=1400)
    assert png_is_not_blank(out.png)[2] > 20
    assert "Rules: outcome and citation" in out.dom
