"""``inference-audit``: one entry point, one module of this package per subcommand.

Every command-line interface of the project is here: ``loadgen_sut/cli/<command>.py`` defines the flags of
``inference-audit <command>`` (``add_arguments(parser)``) and handles them (``run(args) -> int``), so a flag
leads to its handler in one hop; the work itself is done by the library packages (``checker``, ``rules``,
``loadgen_sut``), which hold no argument parsing. ``check-submission`` is :func:`loadgen_sut.cli.check.main`.
This module only wires the subcommands together and maps errors to exit codes (0 ok, 1 invalid / not
comparable, 2 unusable input). The package lives in ``loadgen_sut`` because that package sits at the top of
the dependency graph (loadgen_sut -> checker -> rules): the checker and the rules never import it.

Only the chosen subcommand's module is imported: the harness pulls in LoadGen, nltk and
rouge-score (seconds of start-up) that ``table``, ``claim``, ``rules`` and ``check`` never need.
``python -m loadgen_sut.cli`` is the same command without the console script.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence

from checker.findings import EXIT_UNUSABLE, UnusableInput

# name -> (help, module implementing add_arguments/run)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "check": ("check a submission tree (same as check-submission)", "loadgen_sut.cli.check"),
    "run": ("run an engine under the official LoadGen and lay out a submission", "loadgen_sut.cli.run"),
    "package": ("lay finished submission runs out as the round's tree, without rerunning", "loadgen_sut.cli.package"),
    "score": ("score an accuracy log against a data set as the reference scripts do", "loadgen_sut.cli.score"),
    "sweep": ("LoadGen Server runs at rising rates: goodput per level and the SLO knee", "loadgen_sut.cli.sweep"),
    "rules": ("show a round's rules, and the rule ids the tools emit with their code", "loadgen_sut.cli.rules"),
    "table": ("validate a published result table against the rules and the logs", "loadgen_sut.cli.table"),
    "claim": ("audit a performance claim for comparability", "loadgen_sut.cli.claim"),
    "init": ("write a system or implementation description template", "loadgen_sut.cli.init"),
    "verify": ("re-verify a finished compliance run (TEST06) as run_verification.py does", "loadgen_sut.cli.verify"),
    "dataset": ("prepare a data set once (qwen3-vl: the catalogue in the endpoints layout)", "loadgen_sut.cli.dataset"),
    "report": ("write a self-contained HTML page of a run, a sweep, or a check, table or claim report", "loadgen_sut.cli.report"),
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; with ``only``, just that subcommand's module is imported."""
    parser = argparse.ArgumentParser(
        prog="inference-audit",
        description="MLPerf Inference compliance and audit toolkit for LLM inference.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, (help_text, module_name) in SUBCOMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        if only is None or name == only:
            module = importlib.import_module(module_name)
            module.add_arguments(p)
            p.set_defaults(_run=module.run)
    return parser


def _chosen_command(argv: Sequence[str]) -> str | None:
    """The subcommand named in argv (first non-option word), when it is a known one."""
    for word in argv:
        if not word.startswith("-"):
            return word if word in SUBCOMMANDS else None
    return None


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    try:
        parser = build_parser(only=_chosen_command(args_list))  # imports the subcommand: seconds for run
        args = parser.parse_args(args_list)
        runner: Callable[[argparse.Namespace], int] = args._run
        return runner(args)
    except UnusableInput as exc:
        print(f"inference-audit: error: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    except KeyboardInterrupt:
        print("inference-audit: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
