"""``inference-audit package RUN_DIR...``: lay finished submission runs out as the round's tree, without rerunning.

Each RUN_DIR is a ``runs/<run_id>/`` directory that ``inference-audit run --mode submission`` (or
``submission-trial``) wrote. Every run is planned (names, descriptions, no existing result) before any is packaged;
each package is atomic (see :mod:`loadgen_sut.package`). The tree is then checked with the runs' round.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from pydantic import ValidationError

from checker.engine import check_tree
from checker.findings import EXIT_OK, UnusableInput
from checker.report.outcome import exit_code
from checker.report.terminal import render_terminal
from loadgen_sut.package import (
    PackagePlan,
    PackageRequest,
    package_run,
    plan_package,
    read_implementation_json,
)
from loadgen_sut.record import RECORD_FILE, RunRecord
from rules import load_round
from rules.models import Round

MAX_RECORD_BYTES = 64 * 1024 * 1024


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dirs", nargs="+", type=Path, metavar="RUN_DIR", help="runs/<run_id>/ directories")
    parser.add_argument("--tree", type=Path, required=True, help="the submission tree to add the results to")
    parser.add_argument("--submitter", required=True, help="submitter (organization) directory name")
    parser.add_argument("--division", default="closed", choices=["closed", "open"])
    parser.add_argument("--system", type=Path, default=None, help="your system description JSON (systems/<name>.json)")
    parser.add_argument("--system-name", default=None, help="system directory name (default: the JSON file name)")
    parser.add_argument(
        "--implementation-json", type=Path, default=None, help="the implementation description (measurements JSON)"
    )


def _read_record(run_dir: Path) -> RunRecord:
    path = run_dir / RECORD_FILE
    try:
        if not path.is_file():
            raise UnusableInput(f"no {RECORD_FILE}: not a run directory of inference-audit run", path=str(run_dir))
        if path.stat().st_size > MAX_RECORD_BYTES:
            raise UnusableInput("too large to be a run record", path=str(path))
        return RunRecord.model_validate_json(path.read_bytes())
    except OSError as exc:
        raise UnusableInput(f"cannot read it: {exc.strerror or exc}", path=str(path)) from exc
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
        rnd = load_round(record.round)
        eng = record.engine
        plan = plan_package(
            req,
            rnd,
            record.benchmark,
            record.scenario,
            record.simulated,
            model=eng.model if eng else None,
            precision=eng.precision if eng else None,
        )
        if any(p.location == plan.location for _, _, _, p in planned):
            raise UnusableInput(f"two runs of {plan.location.benchmark} {plan.location.scenario} given", path=str(run_dir))
        planned.append((run_dir, record, rnd, plan))
    rounds = {rnd.name for _, _, rnd, _ in planned}
    if len(rounds) > 1:
        raise UnusableInput(f"the runs belong to different rounds ({', '.join(sorted(rounds))}): one tree is one round")
    for run_dir, record, rnd, plan in planned:
        pkg = package_run(record, run_dir, rnd, req, plan)
        print(f"{run_dir}: {pkg.result_dir} ({len(pkg.written)} files written)")
    rnd = planned[0][2]
    report = check_tree(args.tree, rnd, workers=1)
    print(render_terminal(report, quiet=True), end="")
    code = exit_code(report)
    return code if code != EXIT_OK else EXIT_OK
