"""``inference-audit table FILE [--tree PATH] [--round v5.1] [--json OUT] [--map FIELD=COLUMN,...]``.

Validates a published results table row by row against a round's rules and, with ``--tree``, against the
logs each row points to. Exit code: 0 no errors, 1 errors, 2 unusable input.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from checker.audit.report_common import FindingLog
from checker.audit.table.checks import TableChecks
from checker.audit.table.parse import open_table, parse_column_map
from checker.audit.table.report import (
    RowSpool,
    TableAudit,
    TreeSummary,
    render_text,
    report_chunks,
    row_record,
)
from checker.audit.table.round import detect_round
from checker.audit.table.tree import DEFAULT_REL_TOL, TreeCheck
from checker.checks.rule_registry import audit_rules
from checker.cli.options import add_report_options, add_rule_filters, parse_filters
from checker.findings import UnusableInput
from checker.printable import printable
from checker.report.output import plan_outputs, write_output, write_output_stream
from rules import UnknownRound, load_round


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "file",
        type=Path,
        metavar="FILE",
        help="summary_results.json, the checker's summary CSV, or any CSV/JSON of results (see --map)",
    )
    parser.add_argument(
        "--tree",
        type=Path,
        metavar="PATH",
        help="results tree the rows' Location column points into; re-derive each row from its logs",
    )
    parser.add_argument(
        "--round",
        metavar="ROUND",
        help="round rules to apply (default: from the table's version column / result IDs)",
    )
    add_report_options(parser, {"json": "the schema-versioned JSON report", "html": "a self-contained HTML page (rows beside their logs, rules)"})
    parser.add_argument(
        "--map",
        metavar="FIELD=COLUMN,...",
        help="name the columns of a non-official table, e.g. result=Throughput,benchmark=Model",
    )
    parser.add_argument(
        "--rel-tol",
        type=float,
        default=DEFAULT_REL_TOL,
        help=f"relative tolerance when comparing with the logs beyond printed rounding (default {DEFAULT_REL_TOL:g})",
    )
    add_rule_filters(parser)
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="list every note, not a summary per rule"
    )


def run(args: argparse.Namespace) -> int:
    """Streams the table (:func:`~checker.audit.table.parse.open_table`): each row is checked, compared with
    ``--tree`` and let go; without ``--verbose`` only the findings the summary prints are held. ``--json``
    writes each row's record and every finding, as the report lists them, to temporary files as the rows are
    checked (:class:`RowSpool`, :attr:`FindingLog.spool`) and streams the report from them at the end."""
    # the report path is judged before any work: not the table, not inside --tree (checker.report.output)
    outputs = plan_outputs(
        [("--json", args.json), ("--html", getattr(args, "html", None))],
        force=getattr(args, "force", False),
        trees=[args.tree],
        inputs=[args.file],
    )
    args.select, args.ignore = parse_filters(args.select, args.ignore, audit_rules())  # a typo would pass everything
    html = [t for t in outputs if t.option == "--html"]
    outputs = [t for t in outputs if t.option == "--json"]
    page_rows = None
    if html:  # matplotlib is imported only when a page is asked for
        from checker.report.html.table_page import PageRows

        page_rows = PageRows()
    source = open_table(args.file, parse_column_map(args.map))
    header = source.header
    if args.round:
        round_name, how = args.round, "--round"
    else:
        round_name, how = detect_round(header, source.rows())  # a pass of its own over the rows
    try:
        rnd = load_round(round_name)
    except UnknownRound as exc:
        raise UnusableInput(str(exc)) from exc
    if args.rel_tol < 0:
        raise UnusableInput("--rel-tol must be >= 0")
    findings = FindingLog(keep_all=args.verbose, select=args.select, ignore=args.ignore, spool=bool(outputs))
    checks = TableChecks(header, rnd, new_log=findings.new)
    tree = TreeCheck(header, args.tree, rnd, args.rel_tol) if args.tree is not None else None
    tree_findings = findings.new()
    statuses: Counter[str] = Counter()
    records = RowSpool() if outputs else None
    count = 0
    for row in source.rows():
        count += 1
        findings.extend(checks.add(row))
        comparison = None
        if tree is not None:
            comparison = tree.add(row)
            statuses[comparison.status.value] += 1
            tree_findings.extend(tree.findings)
            tree.findings.clear()
        if records is not None:
            records.add(row_record(row, comparison))
        if page_rows is not None:
            page_rows.add(row, comparison)
    checks.finish(source.rows, findings)  # duplicates (a second pass reads the first rows' labels), derived columns
    summary = None
    if tree is not None:
        missing, missing_findings = tree.finish()
        tree_findings.extend(missing_findings)
        findings.extend(tree_findings)
        summary = TreeSummary(str(args.tree), dict(statuses), missing)
    audit = TableAudit(header, rnd.name, how, findings, summary, args.rel_tol, count, row_spool=records)
    text_out = sys.stderr if any(t.to_stdout for t in outputs + html) else sys.stdout  # stdout holds the report
    for line in render_text(audit, verbose=args.verbose):
        print(printable(line, None), file=text_out)  # cells and paths come from the table
    for target in outputs:
        write_output_stream(target, report_chunks(audit))
        if not target.to_stdout:
            print(f"JSON report: {target.given}", file=sys.stderr)
    for target in html:
        from checker.report.html.table_page import table_page

        link_dir = target.link_dir
        tree_dir = tree.tree.layout.checked if tree is not None else None
        assert page_rows is not None
        write_output(target, table_page(audit, page_rows, link_dir=link_dir, tree_dir=tree_dir))
        if not target.to_stdout:
            print(f"HTML report: {target.given}", file=sys.stderr)
    if records is not None:
        records.close()
    if findings.spool is not None:
        findings.spool.close()
    return audit.exit_code
