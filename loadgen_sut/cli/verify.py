"""``inference-audit verify TEST06 RUN_DIR --out DIR``: re-verify a finished compliance run.

TEST06 (the LLM output checks: first token reported, EOS at the end, output length, every sample) reads
``RUN_DIR/mlperf_log_accuracy.json`` (and the scenario from ``mlperf_log_detail.txt`` beside it) and writes
``DIR/verify_accuracy.txt`` in the official ``run_verification.py`` format, with the accuracy log copied to
``DIR/accuracy/`` (:func:`loadgen_sut.compliance.verify_test06_run`; the checker verifies submitted TEST06
logs with the same code). ``DIR`` must be a new directory: nothing is overwritten. The EOS token id is
``--eos-token-id``, else the benchmark's from the rules data (``--benchmark``), else the official default 2.

Exit status: 0 passed, 1 failed, 2 unusable input.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from checker.findings import EXIT_INVALID, EXIT_OK, UnusableInput
from checker.parsers.accuracy_log import TokenDtype
from checker.printable import printable
from loadgen_sut.compliance import TEST06, verify_test06_run
from rules.models import Benchmark
from rules.registry import UnknownBenchmark, UnknownRound, find_benchmark, latest_round


def add_arguments(parser: argparse.ArgumentParser) -> None:
    tests = parser.add_subparsers(dest="verify_test", metavar="TEST")
    tests.required = True
    t6 = tests.add_parser(TEST06, help="TEST06 of an LLM: first token, EOS, output length, every sample")
    t6.add_argument(
        "run_dir",
        type=Path,
        metavar="RUN_DIR",
        help="the TEST06 run's own directory, the one holding its mlperf_log_accuracy.json (runs/<id>/TEST06 of an "
        "inference-audit run)",
    )
    t6.add_argument("--out", type=Path, required=True, metavar="DIR", help="a new directory for the verification")
    t6.add_argument("--eos-token-id", type=int, default=None, metavar="N", help="the engine's EOS token id")
    t6.add_argument("--benchmark", default=None, help="take the EOS ids from this benchmark's rules data")
    t6.add_argument("--round", dest="round_name", default=None, help="round of --benchmark (default: latest)")
    t6.add_argument(
        "--dtype", choices=[d.value for d in TokenDtype], default=TokenDtype.INT32.value, help="token id type"
    )


def _benchmark(args: argparse.Namespace) -> Benchmark | None:
    if args.benchmark is None:
        return None
    try:
        return find_benchmark(args.round_name or latest_round(), args.benchmark)[1]
    except (UnknownRound, UnknownBenchmark) as exc:
        raise UnusableInput(str(exc)) from exc


def run(args: argparse.Namespace) -> int:
    log = args.run_dir / "mlperf_log_accuracy.json"
    if not log.is_file():
        raise UnusableInput("no mlperf_log_accuracy.json in it (give the TEST06 run directory)", str(args.run_dir))
    if os.path.lexists(args.out):
        raise UnusableInput("exists: name a new directory (a verification never replaces files)", str(args.out))
    if not args.out.parent.is_dir():
        raise UnusableInput(f"directory {args.out.parent} does not exist", str(args.out))
    benchmark = _benchmark(args)
    result = verify_test06_run(log, args.eos_token_id, args.out, dtype=TokenDtype(args.dtype), benchmark=benchmark)
    for line in result.verify_accuracy_lines():
        print(printable(line))
    print(f"{TEST06}: {'PASSED' if result.passed else 'FAILED'} ({args.out / 'verify_accuracy.txt'})")
    return EXIT_OK if result.passed else EXIT_INVALID
