"""``inference-audit package RUN_DIR...``: lay finished submission runs out as the round's tree, without rerunning.

Each RUN_DIR is a ``runs/<run_id>/`` directory that ``inference-audit run --mode submission`` (or
``submission-trial``) wrote. Every run is planned (names, descriptions, no existing result) before any is packaged;
they are packaged together, all or nothing (see :mod:`loadgen_sut.package`). The tree is then checked with the runs' round.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from pydantic import ValidationError

from checker.engine import check_tree
from checker.findings import UnusableInput
from checker.report.outcome import exit_code
from checker.report.terminal import render_terminal
from checker.safe_io import read_input_bytes
from loadgen_sut.package import (
    PackagePlan,
    PackageRequest,
    package_runs,
    plan_for_record,
    read_implementation_json,
)
from loadgen_sut.record import RECORD_FILE, RunRecord
from rules import load_round
from rules.models import Round
from rules.registry import UnknownRound

MAX_RECORD_BYTES = 64 * 1024 * 1024


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dirs", nargs="+", type=Path, metavar="RUN_DIR", help="runs/<run_id>/ directories")
    parser.add_argument("--tree", type=Path, required=True, help="the submission tree to add the results to")
    parser.add_argument("--submitter", required=True, help="submitter (organization) directory name")
    parser.add_argument("--division", default="closed", choices=["closed", "open"], help="the division the tree is laid out in")
    parser.add_argument("--system", type=Path, default=None, help="your system description JSON (systems/<name>.json)")
    parser.add_argument("--system-name", default=None, help="system directory name (default: the JSON file name)")
    parser.add_argument(
        "--implementation-json", type=Path, default=None, help="the implementation description (measurements JSON)"
    )


def _read_record(run_dir: Path) -> RunRecord:
    path = run_dir / RECORD_FILE
    if not os.path.lexists(path):
        raise UnusableInput(f"no {RECORD_FILE}: not a run directory of inference-audit run", path=str(run_dir))
    data = read_input_bytes(path, what="run record", max_bytes=MAX_RECORD_BYTES)  # a regular file, bounded
    try:
        return RunRecord.model_validate_json(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "(top level)"
        raise UnusableInput(f"not a run record: {where}: {first.get('msg')}", path=str(path)) from exc


def run(args: argparse.Namespace) -> int:
    implementation = read_implementation_json(args.implementation_json) if args.implementation_json else None
    req = PackageRequest(
        tree=args.tree,
        division=args.division,
        submitter=args.submitter,
        system_json=args.system,
        system_name=args.system_name,
        implementation=implementation,
        implementation_source=args.implementation_json,
    )
    planned: list[tuple[Path, RunRecord, Round, PackagePlan]] = []
    for run_dir in args.run_dirs:
        record = _read_record(run_dir)
        if record.verdict.status == "INCOMPLETE":
            raise UnusableInput("the run is INCOMPLETE: not packaging it", path=str(run_dir))
        try:
            rnd = load_round(record.round)
        except UnknownRound as exc:
            raise UnusableInput(f"the run record names an unknown round: {exc}", path=str(run_dir / RECORD_FILE)) from exc
        plan = plan_for_record(req, rnd, record)
        if any(p.location == plan.location for _, _, _, p in planned):
            raise UnusableInput(f"two runs of {plan.location.benchmark} {plan.location.scenario} given", path=str(run_dir))
        planned.append((run_dir, record, rnd, plan))
    rounds = {rnd.name for _, _, rnd, _ in planned}
    if len(rounds) > 1:
        raise UnusableInput(f"the runs belong to different rounds ({', '.join(sorted(rounds))}): one tree is one round")
    rnd = planned[0][2]
    results = package_runs([(record, run_dir, plan) for run_dir, record, _, plan in planned], rnd, req)
    for (run_dir, *_), pkg in zip(planned, results, strict=True):
        print(f"{run_dir}: {pkg.result_dir}")
    print(f"{len(results)} result(s) packaged, {sum(len(p.written) for p in results)} files written")
    report = check_tree(args.tree, rnd, workers=1)
    print(render_terminal(report, quiet=True), end="")
    checked = {Path(r.path) for r in report.results}
    for pkg in results:
        rel = Path(pkg.result_dir).relative_to(Path(pkg.tree))
        if rel not in checked:  # pragma: no cover - the layout and the checker share one home; a guard all the same
            raise UnusableInput("the packaged result is not where the checker looks for it", path=str(pkg.result_dir))
    return exit_code(report)
