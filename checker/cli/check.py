"""``check-submission PATH`` (also ``inference-audit check``): check a submission tree.

Exit codes: 0 every result valid, 1 some result (or the tree) invalid, 2 unusable input
(no such path, not a results tree, unknown round, a report path refused by
:mod:`checker.report.output` — inside the checked tree, an existing file without ``--force``, a
directory, device, FIFO or symlink — or a report that cannot be written), 3 an internal error of
this tool (a bug: the traceback is printed with ``--debug``).

``--json/--csv/--junit/--html -`` writes that report to stdout (the terminal report then goes to stderr).
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from checker.cli.options import add_report_options, add_rule_filters, parse_filters
from checker.cli.parser import Parser

if TYPE_CHECKING:
    from checker.report.output import OutputTarget
    from checker.results import CheckReport
    from rules.models import Round

# ``check-submission --help`` builds the parser only: the checker, its findings model, the rules and the reports are
# imported when a check runs (they cost ~0.4 s of start-up)

PROG = "check-submission"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", metavar="PATH", help="the submission tree (holding closed/, open/, network/)")
    parser.add_argument(
        "--round",
        metavar="ROUND",
        help="the round whose rules apply (e.g. v5.1); default: detected from the LoadGen versions in the logs",
    )
    parser.add_argument("--submitter", metavar="NAME", help="check only this submitter")
    add_report_options(
        parser,
        {
            "json": "the JSON report (schemas/check-report.json)",
            "csv": "the official-compatible summary CSV (valid results)",
            "junit": "a JUnit XML report (one testcase per result)",
            "html": "a self-contained HTML page (verdicts, findings by rule and submitter)",
        },
    )
    add_rule_filters(parser)
    parser.add_argument(
        "--workers", metavar="N", type=int, help="parallel worker processes (default: automatic)"
    )
    parser.add_argument(
        "--quiet", "-q", action="store_true", help="print only invalid results, errors and the final line"
    )
    parser.add_argument(
        "--verbose", "-v", action="store_true",
        help="print each finding's citation (the rule text or LoadGen key behind it; the reports always hold it)",
    )
    parser.add_argument(
        "--progress", action="store_true", help="show progress on stderr even when it is not a terminal"
    )
    parser.add_argument("--debug", action="store_true", help="print the traceback of an internal error")


def _known_rule_ids() -> list[str]:
    """Every rule id the checker can emit (compliance runs repeat PERF-/LAT- rules as COMPL-PERF-/COMPL-LAT-)."""
    from checker.checks.rule_registry import all_rules

    rules = all_rules()
    ids = list(rules)
    ids += [f"COMPL-{r}" for r in rules if r.startswith(("PERF-", "LAT-"))]
    return ids


def _fail(message: str) -> int:
    from checker.findings import EXIT_UNUSABLE

    print(f"{PROG}: error: {message}", file=sys.stderr)
    return EXIT_UNUSABLE


def _choose_round(args: argparse.Namespace, root: Path) -> tuple[Round, str | None] | str:
    from checker.round_detection import detect_round
    from rules.registry import UnknownRound, list_rounds, load_round

    if args.round:
        try:
            return load_round(args.round), None
        except UnknownRound as exc:
            return f"--round {args.round}: {exc}"
    if not list_rounds():
        return "no round rules are installed"
    detection = detect_round(root)
    return detection.round, detection.note


def run(args: argparse.Namespace) -> int:
    from checker.findings import EXIT_INTERNAL, UnusableInput

    try:
        return _run(args)
    except UnusableInput as exc:
        return _fail(str(exc))
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug in this tool, never the input's fault
        print(
            f"{PROG}: internal error ({type(exc).__name__}: {exc}); please report it"
            + ("" if args.debug else " (rerun with --debug for the traceback)"),
            file=sys.stderr,
        )
        if args.debug:
            traceback.print_exc()
        return EXIT_INTERNAL


def _run(args: argparse.Namespace) -> int:
    from checker.engine import check_tree
    from checker.report.outcome import exit_code, filter_report
    from checker.report.output import any_to_stdout, plan_outputs
    from checker.report.terminal import Progress, render_terminal

    root = Path(args.path)
    if not root.exists():
        return _fail(f"{root}: no such file or directory")
    if not root.is_dir():
        return _fail(f"{root}: not a directory (expected a submission tree)")
    if args.workers is not None and args.workers < 1:
        return _fail(f"--workers {args.workers}: must be at least 1")
    # every report path is judged before any work (exit 2): see checker.report.output
    outputs = plan_outputs(
        [(f"--{option}", getattr(args, option, None)) for option in ("json", "csv", "junit", "html")],
        force=args.force,
        trees=[root],
    )
    chosen = _choose_round(args, root)
    if isinstance(chosen, str):
        return _fail(chosen)
    rnd, round_note = chosen
    select, ignore = parse_filters(args.select, args.ignore, _known_rule_ids())  # a typo would pass everything

    show_progress = not args.quiet and (args.progress or sys.stderr.isatty())
    progress = Progress() if show_progress else None
    try:
        full = check_tree(
            root, rnd, submitter=args.submitter, progress=progress, workers=args.workers, select=select, ignore=ignore
        )
    finally:
        if progress is not None:
            progress.finish()
    report = filter_report(full, select, ignore)
    code = exit_code(report)

    failed = _write_outputs(report, outputs, round_note, args.submitter, select, ignore)
    # a report written to stdout (``--json -``) keeps stdout to itself: the terminal report goes to stderr
    terminal = sys.stderr if any_to_stdout(outputs) else sys.stdout
    try:
        terminal.write(render_terminal(report, quiet=args.quiet, round_detection=round_note, verbose=args.verbose))
        terminal.flush()
    except BrokenPipeError:  # the reader went away (``| head``): the verdict still stands
        if terminal is sys.stdout:
            _silence_stdout()
    if failed:
        return _fail(failed)
    return code


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush does not fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _write_outputs(
    report: CheckReport,
    outputs: list[OutputTarget],
    round_note: str | None,
    submitter: str | None,
    select: list[str],
    ignore: list[str],
) -> str | None:
    """Write each report; the first one that cannot be written stops the rest (its message is returned)."""
    from checker.findings import UnusableInput
    from checker.report.json_report import render_json, report_dict
    from checker.report.junit import render_junit
    from checker.report.output import write_output
    from checker.report.summary_csv import render_summary_csv

    for target in outputs:
        if target.option == "--json":
            data = render_json(
                report_dict(
                    report, round_detection=round_note, submitter=submitter, select=select, ignore=ignore
                )
            )
        elif target.option == "--csv":
            data = render_summary_csv(report)
        elif target.option == "--html":
            from checker.report.html.check_page import CheckContext, check_page  # matplotlib: only when asked

            link_dir = target.link_dir
            ctx = CheckContext(round_detection=round_note, select=tuple(select), ignore=tuple(ignore))
            data = check_page(report, ctx, link_dir=link_dir)
        else:
            data = render_junit(report)
        try:
            write_output(target, data)
        except UnusableInput as exc:
            return str(exc)
    return None


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog=PROG,
        description="Check an MLPerf Inference submission tree against a round's rules.",
        epilog="exit codes: 0 all results valid, 1 some result invalid, 2 unusable input, 3 internal error",
    )
    add_arguments(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
