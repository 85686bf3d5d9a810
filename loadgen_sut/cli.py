"""``inference-audit``: one entry point, one subcommand per job.

Each subcommand module exposes ``add_arguments(parser)`` and ``run(args) -> int``; this module
only wires them together and maps errors to exit codes (0 ok, 1 invalid / not comparable,
2 unusable input). It lives in ``loadgen_sut`` because that package sits at the top of the
dependency graph (loadgen_sut -> checker -> rules).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from types import ModuleType

from checker import cli as check_cli
from checker.audit import claim_cli, table_cli
from checker.findings import EXIT_UNUSABLE, UnusableInput
from loadgen_sut import run_cli
from rules import cli as rules_cli

_SUBCOMMANDS: list[tuple[str, str, ModuleType]] = [
    ("check", "check a submission tree (same as check-submission)", check_cli),
    ("run", "run an engine under the official LoadGen and lay out a submission", run_cli),
    ("rules", "show a round's rules", rules_cli),
    ("table", "validate a published result table against the rules and the logs", table_cli),
    ("claim", "audit a performance claim for comparability", claim_cli),
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="inference-audit",
        description="MLPerf Inference compliance and audit toolkit for LLM inference.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, help_text, module in _SUBCOMMANDS:
        p = sub.add_parser(name, help=help_text, description=help_text)
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    runner: Callable[[argparse.Namespace], int] = args._run
    try:
        return runner(args)
    except UnusableInput as exc:
        print(f"inference-audit: error: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    except KeyboardInterrupt:
        print("inference-audit: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
