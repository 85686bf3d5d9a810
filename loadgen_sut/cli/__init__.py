"""``inference-audit``: one entry point; each subcommand is one module, in the package it drives.

A command lives with what it drives: the checker's and the auditors' in ``checker/cli/`` (``check``, ``table``,
``claim``), the rules data's in ``rules/cli.py`` (``rules``), the harness's in this package (``run``, ``sweep``,
``package``, ``score``, ``init``, ``verify``, ``dataset``, and ``report``, which renders run records and sweeps
besides the checker's reports). Each module defines the flags of
``inference-audit <command>`` (``add_arguments(parser)``) and handles them (``run(args) -> int``), so a flag leads to
its handler in one hop (:data:`SUBCOMMANDS` names the module); the work itself is done by the library modules, which
hold no argument parsing. ``check-submission`` is :func:`checker.cli.check.main`. This module only wires the
subcommands together and maps errors to exit codes (0 ok, 1 invalid / not comparable, 2 unusable input, 3 an internal
error: one line, the traceback with ``--debug``, in every command). The
dispatcher is in ``loadgen_sut`` because that package sits at the top of the dependency graph (loadgen_sut ->
checker -> rules): it may import every command, and the checker and the rules never import it.

Only the chosen subcommand's module is imported: the harness pulls in LoadGen, nltk and
rouge-score (seconds of start-up) that ``table``, ``claim``, ``rules`` and ``check`` never need, and
``inference-audit --help`` (or ``inference-audit`` alone, which prints the same list of commands) imports none
(``bench/cli_startup.py`` times it against ``python -c pass``). Every parser shows each option's default in its
``--help`` (:class:`checker.cli.parser.HelpFormatter`). ``python -m loadgen_sut.cli`` is the same command without
the console script.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import sys
from collections.abc import Callable, Sequence

from checker.cli.parser import Parser  # argparse only: --help stays quick

# name -> (help, module implementing add_arguments/run): each command's module is in the package it drives
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "check": ("check a submission tree (same as check-submission)", "checker.cli.check"),
    "run": ("run an engine under the official LoadGen and lay out a submission", "loadgen_sut.cli.run"),
    "package": ("lay finished submission runs out as the round's tree, without rerunning", "loadgen_sut.cli.package"),
    "score": ("score an accuracy log against a data set as the reference scripts do", "loadgen_sut.cli.score"),
    "sweep": ("LoadGen Server runs at rising rates: goodput per level and the SLO knee", "loadgen_sut.cli.sweep"),
    "rules": ("show a round's rules, and the rule ids the tools emit with their code", "rules.cli"),
    "table": ("validate a published result table against the rules and the logs", "checker.cli.table"),
    "claim": ("audit a performance claim for comparability", "checker.cli.claim"),
    "init": ("write a system or implementation description template", "loadgen_sut.cli.init"),
    "verify": ("re-verify a finished compliance run (TEST06) as run_verification.py does", "loadgen_sut.cli.verify"),
    "dataset": ("prepare a data set once (qwen3-vl: the catalogue in the endpoints layout)", "loadgen_sut.cli.dataset"),
    "report": ("write a self-contained HTML page of a run, a sweep, or a check, table or claim report", "loadgen_sut.cli.report"),
}


EXIT_CODES = """exit codes: 0 all valid / comparable (a run: VALID, or a trial that went through)
            1 something invalid or not comparable
            2 unusable input (refused before any work)
            3 an internal error of this tool
            130 interrupted (Ctrl-C), 143 stopped by SIGTERM (a run still writes its run record)"""


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser. Only the subcommand ``only`` gets its arguments (its module is imported, nothing else):
    without it the parser knows the commands' names and one-line help, which is all ``--help`` prints."""
    parser = Parser(
        prog="inference-audit",
        description="MLPerf Inference compliance and audit toolkit for LLM inference.",
        epilog=f"'inference-audit COMMAND --help' gives a command's options; README.md and docs/ document them.\n\n"
        f"{EXIT_CODES}",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    sub.required = True
    for name, (help_text, module_name) in SUBCOMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text, epilog=EXIT_CODES)
        if name == only:
            module = importlib.import_module(module_name)
            module.add_arguments(p)
            with contextlib.suppress(argparse.ArgumentError):  # every command takes --debug (check has its own)
                p.add_argument(
                    "--debug", action="store_true", help="print the traceback of an internal error (default: off)"
                )
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
    if _chosen_command(args_list) is None:  # --help, no command or an unknown one: no subcommand module is imported
        parser = build_parser()
        if not args_list:  # the list of commands, as --help gives it
            parser.print_help(sys.stderr)
        else:
            parser.parse_args(args_list)  # the help (exit 0), or a usage error (exit 2)
        return 2  # argparse's status for a usage error (checker.findings.EXIT_UNUSABLE)
    from checker.findings import EXIT_INTERNAL, EXIT_UNUSABLE, UnusableInput  # pydantic: not for --help
    from loadgen_sut.interrupts import exit_status, how_stopped, sigterm_as_interrupt

    try:
        parser = build_parser(only=_chosen_command(args_list))  # imports the subcommand: seconds for run
        args = parser.parse_args(args_list)
        runner: Callable[[argparse.Namespace], int] = args._run
        with sigterm_as_interrupt():  # a scheduler's stop unwinds as Ctrl-C: the run record, no orphaned test
            return runner(args)
    except UnusableInput as exc:
        print(f"inference-audit: error: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    except KeyboardInterrupt as exc:
        print(f"inference-audit: interrupted ({how_stopped(exc)})", file=sys.stderr)
        return exit_status(exc)
    except Exception as exc:  # a bug of this tool, never the input's fault: exit 3, not the code of a verdict (1)
        import traceback

        from checker.printable import printable

        print(
            printable(
                f"inference-audit: internal error ({type(exc).__name__}: {exc}); please report it"
                + ("" if "--debug" in args_list else " (rerun with --debug for the traceback)"),
                500,
            ),
            file=sys.stderr,
        )
        if "--debug" in args_list:  # the traceback may quote an input: through the sanitiser too
            print(printable(traceback.format_exc(), None, lines=True), file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
