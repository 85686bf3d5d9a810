"""``inference-audit report REPORT.json --html PAGE``: table and claim pages from their ``--json`` reports, byte for
byte the page the command's own ``--html`` writes from the same input; a report of an earlier version (without
what the page needs) gives a page that says what it lacks."""

from __future__ import annotations

import copy
import csv
import json
from pathlib import Path
from typing import Any

import pytest
from report_helpers import PEER, SUBMISSIONS, html_text, summary_table

from checker.audit.report_common import WARN_EXAMPLES
from loadgen_sut.cli import main
from schemas import schema_errors

ROWS = Path(__file__).resolve().parents[1] / "audit" / "fixtures" / "v51-rows.json"  # 20 rows of the v5.1 table
CLAIMS = Path(__file__).resolve().parents[1] / "audit" / "fixtures" / "claims"


def _both(tmp_path: Path, name: str, command: list[str], *extra: str) -> tuple[bytes, bytes, dict[str, object]]:
    """The command's own page and the one 'report' writes from its --json report."""
    own, report, again = tmp_path / f"{name}.html", tmp_path / f"{name}.json", tmp_path / f"{name}-again.html"
    assert main([*command, "--html", str(own), "--json", str(report)]) in (0, 1)
    assert main(["report", str(report), "--html", str(again), *extra]) == 0
    return own.read_bytes(), again.read_bytes(), json.loads(report.read_text(encoding="utf-8"))


def test_the_table_page_from_its_report_is_the_same_page(tmp_path: Path) -> None:
    table = summary_table(tmp_path, edit_row2="500.0")
    own, again, report = _both(tmp_path, "tree", ["table", str(table), "--tree", str(SUBMISSIONS)])
    assert own == again and b'data-report="table"' in own
    assert schema_errors(report, "table-report") == []
    rows = report["rows"]
    assert isinstance(rows, list) and all("label" in r and "result_text" in r for r in rows)
    derived = [r["derived"] for r in rows if r["derived"]]
    assert derived and all(d["file"].endswith("performance/run_1/mlperf_log_detail.txt") and d["line"] for d in derived)
    # -v lists every finding: the same with the report's -v
    own_v, again_v, _ = _both(tmp_path, "verbose", ["table", str(table), "--tree", str(SUBMISSIONS), "-v"], "-v")
    assert own_v == again_v
    # the official rows: no tree, a table of another format
    own, again, report = _both(tmp_path, "rows", ["table", str(ROWS)])
    assert own == again and schema_errors(report, "table-report") == []


def _many_findings(tmp_path: Path) -> Path:
    """40 rows of the sample tree's two results: per-row warnings (TABLE-LOCATION: more than a rule's examples),
    errors and warnings of one rule (TABLE-ACCURACY), a derived column, and every 7th row's result changed."""
    rows = list(csv.DictReader(summary_table(tmp_path, edit_row2=None).open(encoding="utf-8")))
    path = tmp_path / "many.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=[*rows[0], "Tokens per GPU"])
        w.writeheader()
        for i in range(40):
            r = dict(rows[i % 2], SystemName=f"sys{i}", Platform=f"plat{i}", **{"Tokens per GPU": str(100 + i)})
            r["Division"] = "open" if i % 2 else r["Division"]
            r["Result"] = str(float(r["Result"]) * 1.5) if i % 7 == 3 else r["Result"]
            w.writerow(r)
    return path


def test_bounded_findings_and_rows_are_bounded_the_same_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the command's page holds of a large table (the first findings of each rule, every mismatched row and
    the first MAX_ROWS others) is what the page from the report holds: the same FindingLog, the same PageRows."""
    from checker.report.html import table_page

    monkeypatch.setattr(table_page, "MAX_ROWS", 5)
    table = _many_findings(tmp_path)
    own, again, report = _both(tmp_path, "many", ["table", str(table), "--tree", str(SUBMISSIONS)])
    assert own == again
    findings = report["findings"]
    assert isinstance(findings, list)
    warnings = [f for f in findings if f["severity"] == "warning" and f["rule"] == "TABLE-LOCATION"]
    assert len(warnings) > WARN_EXAMPLES and b"and %d more" % (len(warnings) - WARN_EXAMPLES) in own
    mismatched = sum(1 for r in report["rows"] if r["tree_status"] == "mismatch")
    assert mismatched and f"{mismatched + 5:,} of 40 rows listed".encode() in own
    own_v, again_v, _ = _both(tmp_path, "many-v", ["table", str(table), "--tree", str(SUBMISSIONS), "-v"], "-v")
    assert own_v == again_v and b"more (-v lists them" not in own_v


@pytest.mark.parametrize("case", ["CMP-02/break.yaml", "VER-05/break.yaml", "quoted"])
def test_the_claim_page_from_its_report_is_the_same_page(tmp_path: Path, case: str) -> None:
    if case == "quoted":  # the claim quotes a number for a published result, not the table's
        claim = tmp_path / "claim.yaml"
        claim.write_text("text: 'AMD reached 27,000 tokens/s on llama2-70b-99 Offline in MLPerf Inference v5.1.'\n"
                         "results:\n- id: 5.1-0001\n  benchmark: llama2-70b-99\n  scenario: Offline\n"
                         "  result: 27000\n", encoding="utf-8")  # fmt: skip
    else:
        claim = CLAIMS / case
    own, again, report = _both(tmp_path, "claim", ["claim", str(claim), "--table", str(ROWS)])
    assert own == again and b'data-report="claim"' in own
    assert schema_errors(report, "claim-report") == []
    results = report["results"]
    assert isinstance(results, list) and all("quoted" in r for r in results)
    if case == "quoted":
        assert results[0]["quoted"] == 27000 and results[0]["table_row"] is not None
        assert results[0]["result"] != 27000  # the published number differs: both are on the page
        assert b">27,000<" in own


def test_a_peer_claim_page_from_its_report(tmp_path: Path) -> None:
    own, again, report = _both(tmp_path, "peer", ["claim", str(PEER)])
    assert own == again and schema_errors(report, "claim-report") == []


def test_a_report_of_an_earlier_version_gives_a_page_that_says_what_it_lacks(tmp_path: Path) -> None:
    table = summary_table(tmp_path, edit_row2="500.0")
    report = tmp_path / "t.json"
    assert main(["table", str(table), "--tree", str(SUBMISSIONS), "--json", str(report)]) == 1
    data = json.loads(report.read_text(encoding="utf-8"))
    for r in data["rows"]:  # as a report written before these fields were
        del r["label"], r["result_text"]
        if r["derived"]:
            del r["derived"]["file"], r["derived"]["line"]
    assert schema_errors(data, "table-report") == []  # still a valid report
    old = tmp_path / "old.json"
    old.write_text(json.dumps(data), encoding="utf-8")
    assert main(["report", str(old), "--html", str(tmp_path / "old.html")]) == 0
    html = html_text(tmp_path / "old.html")
    lacks = html[html.index('data-note="report-lacks"') :]
    lacks = lacks[: lacks.index("</div>")]
    for what in ("row&#x27;s label", "result as written", "the detail log and line"):
        assert what in lacks
    assert "500 Tokens/s" in html  # the parsed number stands for the text the table had ("500.0")

    claim = tmp_path / "c.json"
    assert main(["claim", str(CLAIMS / "CMP-02" / "break.yaml"), "--table", str(ROWS), "--json", str(claim)]) == 1
    data = json.loads(claim.read_text(encoding="utf-8"))
    for r in data["results"]:
        del r["quoted"]
    assert schema_errors(data, "claim-report") == []
    claim.write_text(json.dumps(data), encoding="utf-8")
    assert main(["report", str(claim), "--html", str(tmp_path / "c.html")]) == 0
    html = html_text(tmp_path / "c.html")
    assert 'data-note="report-lacks"' in html and "the number the claim quotes" in html
    assert html.count(">not in the report<") == len(data["results"])


@pytest.mark.parametrize("kind", ["table-report", "claim-report"])
def test_a_report_that_is_not_whole_or_was_edited_is_refused(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"kind": kind, "tool": "inference-audit"}))
    assert main(["report", str(path), "--html", str(tmp_path / "x.html")]) == 2
    if kind == "table-report":
        assert main(["table", str(ROWS), "--json", str(path), "--force"]) in (0, 1)
    else:
        assert main(["claim", str(PEER), "--json", str(path), "--force"]) == 1
    data = json.loads(path.read_text(encoding="utf-8"))
    data["exit_code"] = 1 - data["exit_code"]  # the verdict no longer what its findings give
    path.write_text(json.dumps(data), encoding="utf-8")
    assert main(["report", str(path), "--html", str(tmp_path / "x.html")]) == 2
    assert not (tmp_path / "x.html").exists()


@pytest.fixture(scope="module")
def own_reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """A report of each kind as our commands write it: check, table (with --tree: rows with derived values) and
    claim (two results, rules naming them)."""
    from checker.cli.check import main as check_main

    work = tmp_path_factory.mktemp("own-reports")
    assert check_main([str(SUBMISSIONS), "-q", "--json", str(work / "check.json")]) == 1
    table = summary_table(work, edit_row2=None)
    assert main(["table", str(table), "--tree", str(SUBMISSIONS), "--json", str(work / "table.json")]) in (0, 1)
    claim = CLAIMS / "CMP-02" / "break.yaml"
    assert main(["claim", str(claim), "--table", str(ROWS), "--json", str(work / "claim.json")]) == 1
    reports = {k: json.loads((work / f"{k}.json").read_text(encoding="utf-8")) for k in ("check", "table", "claim")}
    assert all(r["derived"] for r in reports["table"]["rows"][:2]) and len(reports["claim"]["results"]) == 2
    return reports


def _set(doc: dict[str, Any], where: str, value: object) -> dict[str, Any]:
    """A copy of ``doc`` with the value at ``where`` (``rows/0/row``) replaced."""
    doc = copy.deepcopy(doc)
    *parents, last = [int(p) if p.isdigit() else p for p in where.split("/")]
    at: Any = doc
    for p in parents:
        at = at[p]
    at[last] = value
    return doc


@pytest.mark.parametrize(
    ("kind", "where", "value", "said"),
    [
        ("check", "ignore", [None], "ignore/0: None is not of type 'string'"),
        ("check", "results/1/summary", "x", "results/1/summary: "),
        ("table", "rows/0/row", float("inf"), "rows/0/row: inf is not of type 'integer'"),
        ("table", "rows/0/derived/value", "x", "rows/0/derived/value: 'x' is not of type 'number'"),
        ("table", "tree_counts/match", None, "tree_counts/match: None is not of type 'integer'"),
        ("table", "rows/1/derived/file", -1, "rows/1/derived/file: -1 is not of type 'string'"),
        ("claim", "results", "x", "results: 'x' is not of type 'array'"),
        ("claim", "results", [None], "results/0: None is not of type 'object'"),
        ("claim", "claim/path", 0, "claim/path: 0 is not of type 'string', 'null'"),
        ("claim", "claim/path", 10**99, "claim/path: 1000"),  # os.stat took it for a file descriptor
        # an index that is not its result's position: the page made room for that many results (300,000,000 of
        # them: 3.7 GB, minutes)
        ("claim", "results/1/index", 3, "results[1].index is 3, not 2"),
        ("claim", "results/1/index", 1, "results[1].index is 1, not 2"),
        ("claim", "rules/0/results", [1, 3], "rules[0].results names result 3, and the report has 2"),
    ],
)
def test_an_edited_report_that_the_page_cannot_draw_is_refused_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], own_reports: dict[str, dict[str, Any]], kind: str,
    where: str, value: object, said: str,
) -> None:
    """Parse, then render: each report is checked against its schema (and a claim report's result numbers against
    its results) when it is read, so what the page cannot draw is exit 2 naming the file and the problem, never
    an exception while drawing it (these were exit 3: ValueError, TypeError, OverflowError, AttributeError)."""
    path = tmp_path / f"{kind}.json"
    path.write_text(json.dumps(_set(own_reports[kind], where, value)), encoding="utf-8")
    assert main(["report", str(path), "--html", str(tmp_path / "page.html")]) == 2
    err = capsys.readouterr().err
    assert f"{path}: not a " in err and said in err, err
    assert not (tmp_path / "page.html").exists()


def test_what_the_schema_allows_the_page_draws(
    tmp_path: Path, own_reports: dict[str, dict[str, Any]]
) -> None:
    """A summary's Result is any string (schemas/check-report.json), a table's number may be Infinity (json.dumps
    writes a float as it is): the page shows them as they are."""
    check = _set(own_reports["check"], "results/1/summary/Result", "n/a")
    table = _set(_set(own_reports["table"], "rows/0/result", float("inf")), "rows/0/result_text", None)
    for kind, doc, shown in (("check", check, ">n/a"), ("table", table, ">inf ")):
        path = tmp_path / f"{kind}.json"
        path.write_text(json.dumps(doc), encoding="utf-8")
        assert main(["report", str(path), "--html", str(tmp_path / f"{kind}.html")]) == 0
        assert shown in html_text(tmp_path / f"{kind}.html")


def test_a_refusal_names_the_first_few_problems_bounded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], own_reports: dict[str, dict[str, Any]]
) -> None:
    doc = _set(own_reports["claim"], "footnote", list(range(100_000)))  # 100,000 problems
    doc["claim"]["text"] = ["x" * 1_000_000]  # a problem whose value is a megabyte
    path = tmp_path / "claim.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert main(["report", str(path), "--html", str(tmp_path / "page.html")]) == 2
    err = capsys.readouterr().err
    assert len(err) < 2_000 and "claim/text: ['xxxx" in err and err.count("footnote/") == 4, err
    assert err.rstrip().endswith("(and more)")
