"""``inference-audit report PATH --html FILE``: one self-contained HTML page of a run, a sweep or a check.

``PATH`` is recognised by what it holds:

- a run directory (``OUT/runs/<run_id>``, holding ``run-record.json``) or its ``run-record.json``: the run page
  (:mod:`loadgen_sut.report.run_page`); a run's ``--out`` directory with a single run in ``runs/`` stands for it;
- an ``inference-audit sweep`` results file: the sweep page (:mod:`loadgen_sut.report.sweep_page`);
- a ``check-submission --json`` report: the check page (:mod:`checker.report.html.check_page`).

Table and claim pages come from their own commands (``inference-audit table ... --html FILE``, ``claim ...
--html FILE``). The page is written through :mod:`checker.report.output` (``-`` for standard output; an existing
file only with ``--force``; never a directory, FIFO, device, symlink or one of the files read). Exit codes: 0
written, 2 unusable input (not a run, sweep or check report; a path refused).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from checker.findings import EXIT_OK, UnusableInput
from checker.report.output import FORCE_HELP, OutputTarget, plan_outputs, write_output
from checker.safe_io import display_name
from loadgen_sut.record import RECORD_FILE


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "path",
        type=Path,
        metavar="PATH",
        help="a run directory (or its run-record.json), a sweep results file, or a check-submission --json report",
    )
    parser.add_argument("--html", metavar="FILE", required=True, help="write the HTML page here (- for stdout)")
    parser.add_argument("--force", action="store_true", help=FORCE_HELP)


def _link_dir(target: OutputTarget) -> Path | None:
    return None if target.path is None else target.path.parent.absolute()


def _say(target: OutputTarget, what: str) -> None:
    if not target.to_stdout:
        print(f"HTML report ({what}): {target.given}", file=sys.stderr)


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
    kind = data.get("kind") if isinstance(data, dict) else None
    if kind in ("table-report", "claim-report"):
        command = kind.split("-", 1)[0]
        raise UnusableInput(
            f"a {kind} JSON: its page is written by 'inference-audit {command} ... --html FILE'", display_name(str(path))
        )
    raise UnusableInput(
        "not a run record, a sweep results file or a check-submission --json report", display_name(str(path))
    )


def _run_page(args: argparse.Namespace, run_dir: Path, record: Path | None = None) -> int:
    from loadgen_sut.report.run_data import load_run
    from loadgen_sut.report.run_page import run_page

    record_path = record or run_dir / RECORD_FILE
    inputs = [record_path, *(p for p in run_dir.glob("*/*") if p.is_file())]
    (target,) = plan_outputs([("--html", args.html)], force=args.force, inputs=inputs)
    view = load_run(record or run_dir)
    write_output(target, run_page(view, link_dir=_link_dir(target)))
    _say(target, f"run {view.record.run_id}, {view.record.verdict.status}")
    return EXIT_OK


def _sweep_page(args: argparse.Namespace, path: Path, data: object) -> int:
    from pydantic import ValidationError

    from loadgen_sut.report.sweep_page import sweep_page
    from loadgen_sut.sweep import SweepResult

    (target,) = plan_outputs([("--html", args.html)], force=args.force, inputs=[path])
    try:
        result = SweepResult.model_validate(data)
    except ValidationError as exc:
        detail = "; ".join(str(exc).splitlines()[:3])[:300]
        raise UnusableInput(f"not a sweep results file ({detail})", display_name(str(path))) from None
    write_output(target, sweep_page(result, link_dir=_link_dir(target), source=path))
    _say(target, f"sweep, {len(result.levels)} levels")
    return EXIT_OK


def _check_page(args: argparse.Namespace, path: Path, data: dict[str, object]) -> int:
    from checker.report.html.check_page import check_page, load_check_json

    report, ctx = load_check_json(path, data)
    (target,) = plan_outputs([("--html", args.html)], force=args.force, inputs=[path], trees=[report.root])
    write_output(target, check_page(report, ctx, link_dir=_link_dir(target)))
    _say(target, f"check of {report.root}")
    return EXIT_OK
