"""``inference-audit rules``: the rounds, one benchmark's rules with their sources, and the rule ids the tools emit.

    inference-audit rules list [--round v5.1] [--json]
    inference-audit rules show llama2-70b-99 --round v5.1 [--json]
    inference-audit rules layout --round v6.1 [--json]
    inference-audit rules ids [RULE ...] [--family check|audit|run] [--markdown]

The command drives the rules data (:mod:`rules.registry`; the text and JSON of ``show`` and ``list`` are
:mod:`rules.render`). ``ids`` lists the rules the other packages register: each family (``check``, ``audit``, ``run``)
is an entry point of :data:`FAMILY_GROUP` that its package declares in pyproject.toml, so this package imports neither
the checker nor the harness (loadgen_sut -> checker -> rules).

Exit codes: 0 shown, 2 unknown round, benchmark or rule id (message on stderr).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping
from functools import cache
from importlib.metadata import entry_points
from typing import Protocol, TextIO

# ``rules --help`` builds the parser only: the rules data (pydantic models) and the rule families (the checker and the
# harness, loaded by their entry points) are imported by the action that needs them

EXIT_OK = 0
EXIT_UNKNOWN = 2

# the entry-point group that names each family of rule ids (pyproject.toml): the packages that emit rules declare their
# families there, so this module lists them without importing the checker or the harness by name
FAMILY_GROUP = "inference_audit.rule_families"


class _Severity(Protocol):
    @property
    def value(self) -> str: ...


class RuleEntry(Protocol):
    """What ``rules ids`` prints of a registered rule (the checker's ``RuleInfo``)."""

    @property
    def rule(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def severity(self) -> _Severity: ...
    @property
    def source_file(self) -> str: ...


class RuleFamily(Protocol):
    """One family of rule ids (the checker's ``RuleFamily``): its place in the listing, its rules, a rule id resolved
    in it, its docs table."""

    @property
    def position(self) -> int: ...
    def rules(self) -> Mapping[str, RuleEntry]: ...
    def resolve(self, rule: str) -> RuleEntry | None: ...
    def markdown(self) -> str: ...


@cache
def rule_families() -> dict[str, RuleFamily]:
    """Every family of rule ids, by name, in the order of their ``position`` (check, audit, run)."""
    loaded: list[tuple[str, RuleFamily]] = [(ep.name, ep.load()) for ep in entry_points(group=FAMILY_GROUP)]
    return dict(sorted(loaded, key=lambda item: item[1].position))


def family_names() -> list[str]:
    """The families' names as pyproject.toml declares them, without loading them (``--family``'s choices)."""
    return [ep.name for ep in entry_points(group=FAMILY_GROUP)]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="rules_command", metavar="ACTION")
    sub.required = True
    p_list = sub.add_parser("list", help="rounds and their benchmarks")
    p_list.add_argument("--round", dest="round_name", help="only this round (e.g. v5.1)")
    p_list.add_argument("--json", action="store_true", help="machine-readable output")
    p_list.set_defaults(_rules_action=_run_list)
    p_show = sub.add_parser("show", help="every rule of one benchmark, with its source")
    p_show.add_argument("benchmark", help="benchmark name or alias, e.g. llama2-70b-99, llama3_1-8b")
    p_show.add_argument("--round", dest="round_name", help="round (default: the latest round with data)")
    p_show.add_argument("--json", action="store_true", help="machine-readable output")
    p_show.set_defaults(_rules_action=_run_show)
    p_layout = sub.add_parser("layout", help="where each file of a submission goes in one round's tree")
    p_layout.add_argument("--round", dest="round_name", help="round (default: the latest round with data)")
    p_layout.add_argument("--json", action="store_true", help="machine-readable output")
    p_layout.set_defaults(_rules_action=_run_layout)
    p_ids = sub.add_parser(
        "ids", help="the rule ids the tools emit: severity, title and the module that emits each (one hop to its code)"
    )
    p_ids.add_argument("rules", nargs="*", metavar="RULE", help="only these ids, of any family (COMPL-PERF-* is PERF-*)")
    p_ids.add_argument(
        "--family",
        choices=family_names(),
        help="check: check-submission's; audit: the table and claim auditors'; run: the verdict of a run (default: all)",
    )
    p_ids.add_argument("--markdown", action="store_true", help="the generated table of --family (default check) that docs/reference/ holds")
    p_ids.set_defaults(_rules_action=_run_ids)


def run(args: argparse.Namespace) -> int:
    from rules.registry import UnknownBenchmark, UnknownRound

    action = args._rules_action
    try:
        code: int = action(args, sys.stdout)
        sys.stdout.flush()
    except (UnknownRound, UnknownBenchmark) as exc:
        print(f"inference-audit rules: error: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        return EXIT_UNKNOWN
    except BrokenPipeError:  # output piped into head & co.: stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    return code


# ------------------------------------------------------------------------------------------- ids


def _run_ids(args: argparse.Namespace, out: TextIO) -> int:
    families = rule_families()
    if args.markdown:
        if args.rules:
            print("inference-audit rules ids: error: --markdown prints a whole family, not RULE ids", file=sys.stderr)
            return EXIT_UNKNOWN
        out.write(families[args.family or next(iter(families))].markdown())
        return EXIT_OK
    chosen = [families[args.family]] if args.family else list(families.values())
    infos: list[RuleEntry] = []
    if args.rules:
        found = {r: next((i for i in (f.resolve(r) for f in chosen) if i is not None), None) for r in args.rules}
        unknown = [r for r, i in found.items() if i is None]
        if unknown:
            print(f"inference-audit rules ids: error: unknown rule id(s): {', '.join(unknown)}", file=sys.stderr)
            return EXIT_UNKNOWN
        infos = [i for i in found.values() if i is not None]
    else:
        infos = [i for f in chosen for i in f.rules().values()]
    for info in infos:
        out.write(f"{info.rule}\t{info.severity.value}\t{info.source_file}\t{info.title}\n")
    return EXIT_OK


# ------------------------------------------------------------------------------------------- list


def _run_list(args: argparse.Namespace, out: TextIO) -> int:
    from rules.registry import list_rounds, load_round
    from rules.render import scenario_summary

    names = [load_round(args.round_name).name] if args.round_name else list_rounds()
    rounds = [load_round(n) for n in names]
    if args.json:
        payload = [
            {
                "round": r.name,
                "checker": r.checker,
                "benchmarks": [
                    {
                        "name": b.name,
                        "categories": list(b.categories),
                        "is_llm": b.is_llm,
                        "scenarios": {st: [s.value for s in b.allowed_scenarios(st)] for st in b.scenarios},
                    }
                    for b in r.benchmarks.values()
                ],
            }
            for r in rounds
        ]
        json.dump(payload, out, indent=2)
        out.write("\n")
        return EXIT_OK
    for r in rounds:
        out.write(f"{r.name}  {len(r.benchmarks)} benchmarks  ({r.checker})\n")
        width = max(len(b) for b in r.benchmarks)
        for b in r.benchmarks.values():
            cats = ",".join(b.categories) or "datacenter+edge only"
            scen = scenario_summary(b)
            llm = "LLM " if b.is_llm else "    "
            out.write(f"  {b.name:<{width}}  {llm} {cats:<16} {scen}\n")
        out.write("\n")
    return EXIT_OK


# ------------------------------------------------------------------------------------------- layout


def _run_layout(args: argparse.Namespace, out: TextIO) -> int:
    from rules.registry import latest_round, load_round

    rnd = load_round(args.round_name or latest_round())
    st = rnd.structure
    lay = st.layout
    if args.json:
        payload = {
            "round": rnd.name,
            "layout": lay.model_dump(mode="json"),
            "measurement_required_files": list(st.measurement_required_files),
            "performance_run_files": list(st.performance_run_files),
            "accuracy_files": list(st.accuracy_files),
        }
        json.dump(payload, out, indent=2)
        out.write("\n")
        return EXIT_OK
    rows = [
        ("result", lay.result_dir),
        (
            "performance run",
            lay.result_dir + "/performance/run_1/{" + ", ".join(st.performance_run_files) + "}",
        ),
        ("accuracy run", lay.result_dir + "/accuracy/{" + ", ".join(st.accuracy_files) + "}"),
        (
            "measurement files",
            lay.measurements_dir
            + "/{"
            + ", ".join((*st.measurement_required_files, *lay.measurement_optional_files))
            + "}",
        ),
        ("implementation JSON", lay.measurements_dir + "/" + lay.measurements_json),
        ("compliance tests", lay.compliance_dir + "/TESTxx/"),
        ("system description", lay.system_file),
        ("code", lay.code_dir),
        ("calibration", lay.calibration_file),
    ]
    out.write(f"{rnd.name} tree layout ({rnd.checker})\n")
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        out.write(f"  {k:<{width}}  {v}\n")
    out.write(f"  source: {lay.cite}\n")
    return EXIT_OK


# ------------------------------------------------------------------------------------------- show


def _run_show(args: argparse.Namespace, out: TextIO) -> int:
    from rules.registry import find_benchmark, latest_round
    from rules.render import ShowText, show_payload

    round_name = args.round_name or latest_round()
    rnd, bench = find_benchmark(round_name, args.benchmark)
    if args.json:
        json.dump(show_payload(rnd, bench), out, indent=2)
        out.write("\n")
    else:
        ShowText(rnd, bench, out).write()
    return EXIT_OK


