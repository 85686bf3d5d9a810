"""The command-line opt-in to run deepseek-r1's generated programs, shared by ``score`` and ``run``."""

from __future__ import annotations

import argparse
from pathlib import Path

from checker.findings import UnusableInput
from loadgen_sut.scoring.code_exec import REFERENCE_TEST_TIMEOUT_S, CodeExecution, code_execution


def add_code_execution_arguments(parser: argparse.ArgumentParser) -> None:
    code = parser.add_argument_group("deepseek-r1 code samples (LiveCodeBench): RUNS model-generated code")
    code.add_argument(
        "--allow-code-execution", action="store_true", help="execute generated programs against the tests (default: off, code samples are not scored)"
    )
    code.add_argument(
        "--lcb-problems",
        type=Path,
        default=None,
        help="LiveCodeBench code_generation_lite JSONL (file or directory; default: none, --allow-code-execution needs it)",
    )
    code.add_argument(
        "--code-timeout-s",
        type=int,
        default=REFERENCE_TEST_TIMEOUT_S,
        help="seconds per test (reference: 60)",
    )
    code.add_argument("--code-memory-mb", type=int, default=4096, help="address-space limit of a program run")
    code.add_argument("--code-workers", type=int, default=1, help="programs run at the same time")
    code.add_argument(
        "--code-max-processes",
        type=int,
        default=32,
        help="processes + threads one program may have (a pids cgroup where possible, else RLIMIT_NPROC)",
    )
    code.add_argument(
        "--code-user",
        default="nobody",
        help="when run as root, the unprivileged user programs run as (default: nobody)",
    )


def code_execution_from_args(args: argparse.Namespace) -> CodeExecution | None:
    """None without the opt-in; refuses half of it (problems without the opt-in, or the opt-in without problems)."""
    if not args.allow_code_execution:
        if args.lcb_problems is not None:
            raise UnusableInput("--lcb-problems needs --allow-code-execution (it runs model-generated code)")
        return None
    if args.lcb_problems is None:
        raise UnusableInput("--allow-code-execution needs --lcb-problems FILE (LiveCodeBench code_generation_lite)")
    return code_execution(
        args.lcb_problems,
        test_timeout_s=args.code_timeout_s,
        memory_bytes=args.code_memory_mb * 1024**2,
        workers=args.code_workers,
        max_processes=args.code_max_processes,
        user=args.code_user,
    )
