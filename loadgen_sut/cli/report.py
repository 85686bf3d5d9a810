"""``inference-audit report PATH --html FILE``: one self-contained HTML page of a run, a sweep, a check, a table
audit or a claim audit.

``PATH`` is recognised by what it holds:

- a run directory (``OUT/runs/<run_id>``, holding ``run-record.json``) or its ``run-record.json``: the run page
  (:mod:`loadgen_sut.report.run_page`); a run's ``--out`` directory with a single run in ``runs/`` stands for it;
- an ``inference-audit sweep`` results file: the sweep page (:mod:`loadgen_sut.report.sweep_page`);
- a ``check-submission --json`` report: the check page (:mod:`checker.report.html.check_page`);
- an ``inference-audit table --json`` report (``"kind": "table-report"``): the table page
  (:mod:`checker.report.html.table_page`), the page ``table ... --html`` writes from the same input (``-v``: as
  ``table -v --html``, every finding listed);
- an ``inference-audit claim --json`` report (``"kind": "claim-report"``): the claim page
  (:mod:`checker.report.html.claim_page`), the page ``claim ... --html`` writes from the same input.

A table or claim report of an earlier version lacks a few things the page shows; the page says which. Links to
the files a table or claim report names (the table, the logs in ``--tree``, the claim file) are made as the
command made them, from the paths as given: run ``report`` from the same directory for the same links. The page is
written through :mod:`checker.report.output` (``-`` for standard output; an existing file only with ``--force``;
never a directory, FIFO, device, symlink, one of the files read, or inside the table report's ``--tree``). Exit
codes: 0 written, 2 unusable input (not one of these; one that does not conform to its schema, checked before
anything is drawn; a path refused).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from checker.cli.options import FORCE_HELP
from checker.findings import EXIT_OK, UnusableInput
from checker.printable import printable
from checker.report.output import OutputTarget, plan_outputs, write_output
from checker.safe_io import display_name
from loadgen_sut.record import RECORD_FILE


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "path",
        type=Path,
        metavar="PATH",
        help="a run directory (or its run-record.json), a sweep results file, or a check-submission, table or "
        "claim --json report",
    )
    parser.add_argument("--html", metavar="FILE", required=True, help="write the HTML page here (- for stdout)")
    parser.add_argument("--force", action="store_true", help=FORCE_HELP)
    parser.add_argument(
        "-v", "--verbose", action="store_true",
        help="table report: list every finding on the page (as 'table -v --html'), not the first of each rule",
    )


def _say(target: OutputTarget, what: str) -> None:
    if not target.to_stdout:
        print(printable(f"HTML report ({what}): {target.given}"), file=sys.stderr)  # what: the record's run id


def run(args: argparse.Namespace) -> int:
    path: Path = args.path
    if not path.exists():
        raise UnusableInput("no such file or directory", display_name(str(path)))
    if path.is_dir():
        record = path / RECORD_FILE
        runs = sorted(p.parent for p in (path / "runs").glob(f"*/{RECORD_FILE}")) if (path / "runs").is_dir() else []
        if not record.is_file() and len(runs) == 1:  # a run's --out with a single run in it
            return _run_page(args, runs[0])
        if not record.is_file():
            hint = f" (its runs/ holds {len(runs)} run directories: give one of them)" if runs else ""
            raise UnusableInput(
                f"a directory without {RECORD_FILE}: give a run directory (OUT/runs/<run_id>), a sweep results file "
                f"or a check-submission --json report{hint}",
                display_name(str(path)),
            )
        return _run_page(args, path)
    if path.name == RECORD_FILE:
        return _run_page(args, path.parent)
    from checker.report.html.check_page import is_check_json, read_json_file

    data = read_json_file(path, "report")
    if isinstance(data, dict) and data.get("tool") == "inference-audit sweep":
        return _sweep_page(args, path, data)
    if is_check_json(data):
        return _check_page(args, path, data)
    if isinstance(data, dict) and isinstance(data.get("run_id"), str) and isinstance(data.get("tests"), list):
        return _run_page(args, path.parent, record=path)
    kind = data.get("kind") if isinstance(data, dict) and data.get("tool") == "inference-audit" else None
    if kind == "table-report":
        return _table_page(args, path, data)
    if kind == "claim-report":
        return _claim_page(args, path, data)
    raise UnusableInput(
        "not a run record, a sweep results file, or a check-submission, table or claim --json report",
        display_name(str(path)),
    )


def _run_page(args: argparse.Namespace, run_dir: Path, record: Path | None = None) -> int:
    from loadgen_sut.report.run_data import load_run
    from loadgen_sut.report.run_page import run_page

    record_path = record or run_dir / RECORD_FILE
    inputs = [record_path, *_run_files(run_dir)]
    (target,) = plan_outputs([("--html", args.html)], force=args.force, inputs=inputs)
    view = load_run(record or run_dir)
    write_output(target, run_page(view, link_dir=target.link_dir))
    _say(target, f"run {view.record.run_id}, {view.record.verdict.status}")
    return EXIT_OK


_MAX_RUN_FILES = 100_000  # a run directory holds a few dozen files


def _run_files(run_dir: Path) -> list[Path]:
    """Every file below the run directory, at any depth (a page may read any of them, so none may be replaced by
    it); symlinked directories are not entered."""
    files: list[Path] = []
    for root, _, names in os.walk(run_dir):
        files += (Path(root) / n for n in names)
        if len(files) > _MAX_RUN_FILES:
            raise UnusableInput(f"more than {_MAX_RUN_FILES} files: not a run directory", display_name(str(run_dir)))
    return files


def _sweep_page(args: argparse.Namespace, path: Path, data: object) -> int:
    from pydantic import ValidationError

    from loadgen_sut.report.sweep_page import sweep_page
    from loadgen_sut.sweep_model import SweepResult

    (target,) = plan_outputs([("--html", args.html)], force=args.force, inputs=[path])
    try:
        result = SweepResult.model_validate(data)
    except ValidationError as exc:
        detail = "; ".join(str(exc).splitlines()[:3])[:300]
        raise UnusableInput(f"not a sweep results file ({detail})", display_name(str(path))) from None
    write_output(target, sweep_page(result, link_dir=target.link_dir, source=path))
    _say(target, f"sweep, {len(result.levels)} levels")
    return EXIT_OK


def _check_page(args: argparse.Namespace, path: Path, data: dict[str, object]) -> int:
    from checker.report.html.check_page import check_page, load_check_json

    report, ctx = load_check_json(path, data)
    (target,) = plan_outputs([("--html", args.html)], force=args.force, inputs=[path], trees=[report.root])
    write_output(target, check_page(report, ctx, link_dir=target.link_dir))
    _say(target, f"check of {report.root}")
    return EXIT_OK


def _table_page(args: argparse.Namespace, path: Path, data: dict[str, Any]) -> int:
    from checker.report.html.table_page import load_table_json, table_page

    audit, rows, tree_dir, lacks = load_table_json(path, data, verbose=args.verbose)
    (target,) = plan_outputs([("--html", args.html)], force=args.force, inputs=[path, audit.table.path],
                             trees=[tree_dir])  # fmt: skip
    write_output(target, table_page(audit, rows, link_dir=target.link_dir, tree_dir=tree_dir, lacks=lacks))
    _say(target, f"table {audit.table.path}, {audit.row_count:,} rows")
    return EXIT_OK


def _claim_page(args: argparse.Namespace, path: Path, data: dict[str, Any]) -> int:
    from checker.report.html.claim_page import claim_page, load_claim_json

    audit, lacks = load_claim_json(path, data)
    (target,) = plan_outputs([("--html", args.html)], force=args.force, inputs=[path, audit.claim_path])
    write_output(target, claim_page(audit, link_dir=target.link_dir, lacks=lacks))
    _say(target, f"claim, {audit.verdict.value}")
    return EXIT_OK
