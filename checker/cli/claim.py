"""``inference-audit claim [CLAIM.yaml] [RESULT.json ...] [--text "..."] [--table FILE] [--json OUT]``.

Audits a performance claim for comparability under the MLPerf results-messaging rules (ids of
``rules/data/messaging.yaml``) and, for GuideLLM / AIPerf / GenAI-Perf / vllm bench serve result files, the
comparability of peer-tool runs. Exit code: 0 comparable (or comparable with every disclosure made), 1 not
comparable or comparable only with disclosures the claim lacks, 2 unusable input.
"""

from __future__ import annotations

import argparse
import sys
from datetime import date
from pathlib import Path

from checker.audit.claim.citation import footnote
from checker.audit.claim.model import Claim, ClaimResultSpec
from checker.audit.claim.parse import claim_from_text, load_claim_file, read_metric
from checker.audit.claim.report import ClaimAudit, issue_finding, render_text, report_dict
from checker.audit.claim.resolve import resolve, specs_from_text
from checker.audit.claim.rules import ClaimRules
from checker.audit.peers.load import detect_tool, load_peer_json
from checker.audit.peers.rules import peer_issues
from checker.audit.table.parse import load_table
from checker.audit.table.round import detect_round
from checker.checks.rule_registry import audit_rules
from checker.cli.options import add_report_options, add_rule_filters, parse_filters
from checker.findings import Finding, UnusableInput, filter_findings, rule_matches
from checker.printable import printable
from checker.report.output import check_not_inputs, json_document, plan_outputs, write_output
from rules import UnknownRound, latest_round, load_round
from rules.messaging import load_messaging


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "files",
        nargs="*",
        type=Path,
        metavar="FILE",
        help="a claim (YAML/JSON, schemas/claim.json) and/or result files of GuideLLM, AIPerf, "
        "GenAI-Perf or vllm bench serve (path#N picks run N of a GuideLLM sweep)",
    )
    parser.add_argument("--text", metavar="TEXT", help="the claim's wording, instead of a claim file")
    parser.add_argument(
        "--retrieved",
        type=_retrieval_date,
        metavar="YYYY-MM-DD",
        help="the date the cited results were retrieved, for the footnote (default: a claim file's "
        "'retrieved:', else today, UTC)",
    )
    parser.add_argument(
        "--table", type=Path, metavar="FILE", help="results table the claim's result IDs are looked up in"
    )
    parser.add_argument(
        "--round", metavar="ROUND", help="round of own results (default: the table's, else the newest)"
    )
    add_report_options(parser, {"json": "the schema-versioned JSON report", "html": "a self-contained HTML page (results, each rule's outcome, citations)"})
    add_rule_filters(parser)
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="also list the requirements the claim meets"
    )


def _retrieval_date(text: str) -> str:
    """``2025-09-10`` -> ``10 September 2025``, as the footnote writes it (a date the citation can carry)."""
    try:
        day = date.fromisoformat(text) if len(text) == 10 else None
    except ValueError:
        day = None
    if day is None:
        raise argparse.ArgumentTypeError(f"not a date as YYYY-MM-DD: {text[:40]!r}")
    return f"{day.day} {day:%B %Y}"


def _is_peer_file(path: Path) -> bool:
    if path.suffix.lower() not in (".json", "") and "#" not in path.name:
        return False
    real = Path(str(path).split("#", 1)[0])
    try:
        data = load_peer_json(real)  # a regular file, capped, bounded depth: a FIFO or /dev/zero is never read
    except UnusableInput:
        return False
    return detect_tool(data) is not None


def _file_part(path: Path | str) -> Path:
    """``run.json#2`` -> ``run.json`` (a GuideLLM sweep's run N)."""
    return Path(str(path).split("#", 1)[0])


def run(args: argparse.Namespace) -> int:
    # the report path is judged before any work: never one of the files read (checker.report.output)
    outputs = plan_outputs(
        [("--json", args.json), ("--html", getattr(args, "html", None))],
        force=getattr(args, "force", False),
        inputs=[*(_file_part(p) for p in args.files), args.table],
    )
    args.select, args.ignore = parse_filters(args.select, args.ignore, audit_rules())  # a typo would pass everything
    claim_files = [p for p in args.files if not _is_peer_file(p)]
    peer_files = [p for p in args.files if p not in claim_files]
    if len(claim_files) > 1:
        raise UnusableInput(
            f"one claim at a time (got {', '.join(map(str, claim_files))}); result files must be "
            "GuideLLM / AIPerf / GenAI-Perf / vllm bench serve JSON"
        )
    if claim_files and args.text:
        raise UnusableInput("give a claim file or --text, not both")
    if not claim_files and not args.text and not peer_files:
        raise UnusableInput('nothing to audit: give CLAIM.yaml, --text "...", or peer-tool result files')
    table = load_table(args.table) if args.table is not None else None
    if args.round:
        round_name = args.round
    elif table is not None:
        round_name = detect_round(table)[0]
    else:
        round_name = latest_round()
    try:
        rnd = load_round(round_name)
    except UnknownRound as exc:
        raise UnusableInput(str(exc)) from exc
    md = load_messaging()

    claim_path: Path | None = claim_files[0] if claim_files else None
    notes: list[Finding] = []
    if claim_path is not None:
        claim = load_claim_file(claim_path)
    elif args.text:
        specs, notes = specs_from_text(args.text, table, rnd)
        claim = claim_from_text(args.text, tuple(specs))
    else:
        names = ", ".join(p.name for p in peer_files)
        claim = Claim(text=f"Comparison of benchmark runs: {names}")
    if args.retrieved is not None:
        if claim.retrieved is not None and claim.retrieved != args.retrieved:
            raise UnusableInput(
                f"--retrieved {args.retrieved} and the claim file's retrieved: {claim.retrieved!r} differ: give one",
                path=str(claim_path),
            )
        claim = claim.model_copy(update={"retrieved": args.retrieved})
    if peer_files:
        extra = tuple(
            ClaimResultSpec(file=str(p.resolve()) if "#" not in str(p) else str(p)) for p in peer_files
        )
        claim = claim.model_copy(update={"results": claim.results + extra})
    if claim_path is not None:  # the result files the claim names are inputs too
        base = claim_path.parent
        check_not_inputs(
            outputs, [base / _file_part(spec.file) for spec in claim.results if spec.file is not None]
        )
    metric = read_metric(claim.text, claim.metric)
    resolution = resolve(claim, claim_path, table, rnd)
    issues = ClaimRules(claim, metric, resolution.results, md, rnd).run()
    issues += peer_issues(claim, metric, resolution.results)
    where = str(claim_path) if claim_path is not None else None
    findings = list(notes) + resolution.findings + [issue_finding(i, where) for i in issues]
    findings = filter_findings(findings, args.select, args.ignore)
    issues = [
        i
        for i in issues
        if (not args.select or rule_matches(i.rule, args.select))
        and not (args.ignore and rule_matches(i.rule, args.ignore))
    ]
    audit = ClaimAudit(
        claim=claim,
        claim_path=where,
        claim_source="--text" if args.text else f"result files {', '.join(p.name for p in peer_files)}",
        round=rnd.name,
        metric=metric,
        results=tuple(resolution.results),
        issues=tuple(issues),
        findings=tuple(findings),
        footnote=tuple(footnote(claim, metric, resolution.results, md)),
    )
    text_out = sys.stderr if any(t.to_stdout for t in outputs) else sys.stdout  # stdout holds the JSON
    for line in render_text(audit, verbose=args.verbose):
        print(printable(line, None), file=text_out)  # the claim's text, labels and paths come from inputs
    for target in outputs:
        if target.option == "--html":
            from checker.report.html.claim_page import claim_page  # matplotlib: only when a page is asked for

            link_dir = target.link_dir
            write_output(target, claim_page(audit, link_dir=link_dir))
        else:
            write_output(target, json_document(report_dict(audit)))
        if not target.to_stdout:
            print(f"{'HTML' if target.option == '--html' else 'JSON'} report: {target.given}", file=sys.stderr)
    return audit.exit_code
