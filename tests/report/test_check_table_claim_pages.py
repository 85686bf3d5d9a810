"""The check, table, claim and sweep pages: their numbers, groups, citations and links; hostile text escaped."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from report_helpers import PEER, SUBMISSIONS, html_text, plots, summary_table, write_sweep

from checker.cli.check import main as check_main
from checker.findings import Finding, Severity
from checker.report.html.check_page import check_page
from checker.results import CheckReport, ResultEntry
from loadgen_sut.cli import main


def test_check_submission_html_groups_findings_and_links_files(tmp_path: Path) -> None:
    page, report = tmp_path / "check.html", tmp_path / "check.json"
    assert check_main([str(SUBMISSIONS), "--html", str(page), "--json", str(report)]) == 1
    html = html_text(page)
    data = json.loads(report.read_text())
    assert plots(html) == ["check-findings-per-rule", "check-results-per-submitter"]
    # a verdict per result, with its result value
    table = html[html.index('data-table="results"') :]
    table = table[: table.index("</table>")]
    for r in data["results"]:
        assert r["path"] in table
        assert f"{float(r['summary']['Result']):,.1f} Tokens/s" in table or r["summary"]["Result"] in table
    assert table.count('data-status="INVALID"') == data["counts"]["invalid"]
    # findings by rule (each rule's section, its count) and by submitter
    for rule in {f["rule"] for r in data["results"] for f in r["findings"]}:
        assert f'id="rule-{rule}"' in html
    assert 'id="submitter-closed_InferenceAuditDemo"' in html
    # each finding links to its file and line, relative to where the page is
    f = data["results"][0]["findings"][0]
    href = os.path.relpath(SUBMISSIONS / f["path"], tmp_path)  # wherever the checkout and tmp_path lie
    assert f'href="{href}"' in html and f"{f['path']}:{f['line']}" in html
    assert (tmp_path / href).resolve() == (SUBMISSIONS / f["path"]).resolve()
    # the same page from the --json report, through 'inference-audit report'
    again = tmp_path / "again.html"
    assert main(["report", str(report), "--html", str(again)]) == 0
    assert again.read_bytes() == page.read_bytes()
    # never inside the checked tree
    assert check_main([str(SUBMISSIONS), "--html", str(SUBMISSIONS / "x.html")]) == 2


def test_hostile_messages_and_paths_are_escaped() -> None:
    evil = Finding(rule="PERF-SEEDS", severity=Severity.ERROR, message='<script>alert(1)</script> "q" & <img src=x>',
                   result="closed/Ev&il/results/s/b/Offline", path="closed/Ev&il/results/s/b/Offline/<x>.txt", line=3,
                   fix="<b>fix</b>", source="<i>src</i>")
    entry = ResultEntry(path="closed/Ev&il/results/s/b/Offline", division="closed", submitter="Ev&il", system="s",
                        benchmark="b", mlperf_model=None, scenario="Offline", findings=(evil,))
    report = CheckReport(root="/tmp/t<r>ee", round="v6.1", tool_version="t", results=(entry,))
    html = check_page(report, link_dir=Path("/tmp/out")).decode()
    assert "<script" not in html and "<img" not in html and "<b>fix" not in html and "<i>src" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &quot;q&quot; &amp; &lt;img src=x&gt;" in html
    assert 'href="../t%3Cr%3Eee/closed/Ev%26il/results/s/b/Offline/%3Cx%3E.txt"' in html  # the link percent-encoded
    assert "Ev&amp;il" in html


def test_table_html_shows_the_logs_values_beside_the_tables(tmp_path: Path) -> None:
    table = summary_table(tmp_path, edit_row2="500.0")
    page = tmp_path / "table.html"
    assert main(["table", str(table), "--tree", str(SUBMISSIONS), "--html", str(page)]) == 1
    html = html_text(page)
    assert plots(html) == ["table-rederived-difference"]
    rows = html[html.index('data-table="rows"') :]
    rows = rows[: rows.index("</table>")]
    assert "500.0 Tokens/s" in rows  # the table's value ...
    derived = re.search(r"the logs give ([0-9.]+) \(result_completed_tokens_per_second", html)
    assert derived is not None and f">{float(derived.group(1)):,}<" in rows  # ... beside the logs'
    assert 'data-status="mismatch"' in rows and 'data-status="match"' in rows
    assert "%" in rows and "+18." in rows
    # each rule's outcome with its citation
    rules = html[html.index('data-table="rules"') :]
    rules = rules[: rules.index("</table>")]
    assert "TABLE-REDERIVE" in rules and "official checker D8" in rules
    # links: the table file and the detail log in the tree
    assert 'href="table.csv"' in html
    assert "Server/performance/run_1/mlperf_log_detail.txt:" in rows
    # the --json report is still written beside the page (both options)
    both = tmp_path / "both.html"
    assert main(["table", str(table), "--tree", str(SUBMISSIONS), "--html", str(both), "--json",
                 str(tmp_path / "t.json")]) == 1  # fmt: skip
    assert json.loads((tmp_path / "t.json").read_text())["kind"] == "table-report"
    assert main(["table", str(table), "--html", str(table), "--force"]) == 2  # never the table itself


def test_claim_html_lists_each_rule_with_its_citation(tmp_path: Path) -> None:
    page = tmp_path / "claim.html"
    assert main(["claim", str(PEER), "--html", str(page), "--json", str(tmp_path / "c.json")]) == 1
    html = html_text(page)
    report = json.loads((tmp_path / "c.json").read_text())
    rules = html[html.index('data-table="rules"') :]
    rules = rules[: rules.index("</table>")]
    for r in report["rules"]:
        assert r["rule"] in rules
        assert r["source"].replace("&", "&amp;").replace("'", "&#x27;") in rules
    assert "MISSING" in rules or "NOT COMPARABLE" in rules
    assert report["verdict"] in html
    assert "Citation and footnote the claim must carry" in html


def test_sweep_page_draws_goodput_and_p99_with_the_slo_and_the_knee(tmp_path: Path) -> None:
    path = write_sweep(tmp_path / "sweep.json")
    page = tmp_path / "sweep.html"
    assert main(["report", str(path), "--html", str(page)]) == 0
    html = html_text(page)
    assert plots(html) == ["sweep-goodput", "sweep-ttft-p99", "sweep-tpot-p99"]
    assert "knee: 30 req/s" in html and "first level over the SLO: 40 req/s" in html
    assert "SLO: TTFT ≤ 2000 ms" in html and "SLO: TPOT ≤ 100 ms" in html
    assert "capacity within the SLO lies between 30 and 40 req/s" in html
    assert "5,200 ms (n=600)" in html  # LoadGen's p99 TTFT of the level over the SLO
    assert html.count('data-status="over"') == 1 and html.count('data-status="within"') == 3
