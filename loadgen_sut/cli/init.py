"""``inference-audit init system|implementation|check``: write a submission's description templates, or judge one.

The templates, the host probe and the check are :mod:`loadgen_sut.describe`. The output is a new file, or an existing
regular file with ``--force``; ``-`` writes to stdout (the one output policy of every command:
:mod:`checker.report.output`). Exit status: 0 written, 2 unusable input (bad option, existing file, directory,
FIFO, device, symbolic link, ...). ``init check FILE``: 0 when a run would accept the file, 1 when it would refuse it,
2 when it cannot be read.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from checker.findings import EXIT_INVALID, EXIT_OK, UnusableInput
from checker.printable import printable
from checker.report.output import OutputTarget, plan_outputs, write_output
from loadgen_sut.describe import (
    IMPLEMENTATION_HINTS,
    IMPLEMENTATION_SCHEMA,
    SYSTEM_SCHEMA,
    TRIAL_DEFAULTS,
    TRIAL_VALUE,
    Template,
    check_description,
    field_errors,
    implementation_template,
    is_placeholder,
    probe_host,
    read_sysinfo,
    system_template,
)
from schemas import schema_errors


def _target(args: argparse.Namespace, inputs: tuple[Path | None, ...] = ()) -> OutputTarget:
    """``--out``, judged before any work (:func:`checker.report.output.plan_outputs`: the one output policy)."""
    (target,) = plan_outputs([("--out", args.out)], force=args.force, inputs=inputs)
    return target


def _write(target: OutputTarget, doc: dict[str, Any]) -> str:
    """Write the template; where it went."""
    write_output(target, (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    return "stdout" if target.to_stdout else target.given


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        "examples:\n"
        "  inference-audit init system --submitter ACME --system-name 'ACME X1 (8x H200, vLLM)' \\\n"
        "      --out closed/ACME/systems/x1_vllm.json\n"
        "  inference-audit init implementation --weight-data-types fp8 --out implementation.json\n"
        "  inference-audit init system --trial --submitter MyOrg --system-name 'My box' --out mybox.json\n"
        "  inference-audit init check mybox.json\n"
        'Fields that cannot be read are written as "<FILL IN: ...>", which the schema refuses: fill them in. '
        f"With --trial they are {TRIAL_VALUE!r} instead: --mode submission-trial accepts it, --mode submission "
        "refuses it."
    )
    kinds = parser.add_subparsers(dest="kind", metavar="KIND")
    kinds.required = True
    p = kinds.add_parser("system", help="systems/<system>.json, with this host's facts filled in")
    p.add_argument(
        "--out", default="system.json", help="file to write (a new file; - for stdout; default system.json)"
    )
    p.add_argument("--force", action="store_true", help="overwrite an existing regular file")
    p.add_argument(
        "--division",
        choices=["closed", "open", "network"],
        default="closed",
        help="the division (network adds the network-mode fields)",
    )
    p.add_argument("--submitter", default=None, help="your organisation (the submitter directory's name)")
    p.add_argument("--system-name", default=None, help="the system's published name")
    p.add_argument(
        "--status",
        choices=["available", "preview", "rdi"],
        default=None,
        help="availability (default: a field to fill in)",
    )
    p.add_argument(
        "--system-type",
        choices=["datacenter", "edge", "datacenter,edge", "edge,datacenter"],
        default=None,
        metavar="TYPE",
        help="the system type: datacenter, edge, datacenter,edge or edge,datacenter (default: a field to fill in)",
    )
    p.add_argument(
        "--from-sysinfo",
        type=Path,
        default=None,
        metavar="FILE",
        help="take the values of a system_desc.json written by `mlperf-sysinfo capture` (PyPI mlperf-sysinfo)",
    )
    p.add_argument("--no-gpu-probe", action="store_true", help="do not run nvidia-smi")
    p.add_argument(
        "--trial",
        action="store_true",
        help=f"a trial's description: what is not given or probed is {TRIAL_VALUE!r} (the counts and listed values "
        "get a stated default), which --mode submission-trial accepts and --mode submission refuses",
    )
    p.set_defaults(_init=_run_system)
    q = kinds.add_parser("implementation", help="the implementation description (measurements JSON)")
    q.add_argument("--out", default="implementation.json", help="file to write (a new file; - for stdout)")
    q.add_argument("--force", action="store_true", help="overwrite an existing regular file")
    for f, hint in IMPLEMENTATION_HINTS.items():
        q.add_argument("--" + f.replace("_", "-"), dest=f, default=None, help=hint)
    q.add_argument(
        "--trial",
        action="store_true",
        help=f"a trial's description: what is not given is {TRIAL_VALUE!r}, which --mode submission-trial accepts "
        "and --mode submission refuses",
    )
    q.set_defaults(_init=_run_implementation)
    c = kinds.add_parser(
        "check",
        help="judge a system or implementation description as a run would, before running",
        description="Judge a system or implementation description file as `run --mode submission-trial` (or, with "
        "--submission, `--mode submission`) would before its first query. Exit 0: accepted; 1: refused (each "
        "problem named); 2: the file cannot be read.",
    )
    c.add_argument("file", type=Path, metavar="FILE", help="the description JSON")
    c.add_argument(
        "--kind",
        choices=["system", "implementation"],
        default=None,
        help="what the file describes (default: a system when it names a system_name, division or submitter)",
    )
    c.add_argument(
        "--submission", action="store_true", help="judge for --mode submission: trial values refused"
    )
    c.set_defaults(_init=_run_check)


def _report(tpl: Template, where: str, schema: str) -> None:
    err = sys.stderr
    print(f"inference-audit init: wrote {where}", file=err)
    if tpl.to_fill:
        print(
            f'fill in {len(tpl.to_fill)} field(s) ("<FILL IN: ...>"; the schema refuses them until then):',
            file=err,
        )
        for f in tpl.to_fill:
            print(f"  {f}", file=err)
    if tpl.to_review:
        print("review these values read from this host:", file=err)
        for f, src in tpl.to_review.items():
            print(printable(f"  {f} = {json.dumps(tpl.doc[f], ensure_ascii=False)}  ({src})"), file=err)
    if tpl.trial:
        defaults = [f for f in tpl.trial if f in TRIAL_DEFAULTS]
        n_text = len(tpl.trial) - len(defaults)
        set_for = ", ".join(f"{f}={TRIAL_DEFAULTS[f]}" for f in defaults)
        print(
            f"trial: {len(tpl.trial)} field(s) left for a trial: {n_text} written as {TRIAL_VALUE!r}"
            + (f", set for the trial: {set_for}" if defaults else "")
            + "; --mode submission-trial accepts them, --mode submission refuses the file until they are described",
            file=err,
        )
    for note in tpl.notes:
        print(printable(f"note: {note}"), file=err)
    problems = schema_errors(tpl.doc, schema)
    fields = {p.split(": ", 1)[0] for p in problems}  # a field can break more than one rule (status: its set too)
    where = "the fields above" if fields <= set(tpl.to_fill) else f"{len(fields)} field(s)"
    print(
        f"schemas/{schema}.json: {len(problems)} problem(s) left, in {where}" if problems else f"schemas/{schema}.json: valid",
        file=err,
    )


def _run_system(args: argparse.Namespace) -> int:
    for name, value in (("--submitter", args.submitter), ("--system-name", args.system_name)):
        if value is not None and (not value.strip() or '"' in value or is_placeholder(value)):
            raise UnusableInput(f"{name} {value!r}: give a non-empty name without double quotes")
    target = _target(args, inputs=(args.from_sysinfo,))
    sysinfo = read_sysinfo(args.from_sysinfo) if args.from_sysinfo is not None else None
    facts = probe_host(gpus=not args.no_gpu_probe)
    tpl = system_template(
        division=args.division,
        submitter=args.submitter,
        system_name=args.system_name,
        status=args.status,
        system_type=args.system_type,
        facts=facts,
        sysinfo=sysinfo,
        trial=args.trial,
    )
    where = _write(target, tpl.doc)
    _report(tpl, where, SYSTEM_SCHEMA)
    return EXIT_OK


def _run_implementation(args: argparse.Namespace) -> int:
    target = _target(args)
    given = {f: getattr(args, f) for f in IMPLEMENTATION_HINTS}
    tpl = implementation_template(given, trial=args.trial)
    bad = {f: m for f, m in field_errors(tpl.doc, IMPLEMENTATION_SCHEMA).items() if given.get(f) is not None}
    if bad:
        f, msgs = next(iter(bad.items()))
        raise UnusableInput(f"--{f.replace('_', '-')} {given[f]!r}: {msgs[0]}")
    where = _write(target, tpl.doc)
    _report(tpl, where, IMPLEMENTATION_SCHEMA)
    return EXIT_OK


# what `run` writes for an implementation field the file leaves out (loadgen_sut.package.implementation_description)
RUN_FILLS = {
    "input_data_types": "int32 (token ids)",
    "retraining": "no",
    "starting_weights_filename": "--model",
    "weight_data_types": "the transformers engine's --dtype; an OpenAI-compatible server does not say it, so the run "
    "refuses to start without it",
    "weight_transformations": "none",
}


def _run_check(args: argparse.Namespace) -> int:
    result = check_description(args.file, args.kind, args.submission)
    name = printable(str(args.file))
    mode = "--mode submission" if args.submission else "--mode submission-trial"
    for e in result.errors:
        print(printable(f"{name}: {e}"))
    if result.filled_by_run:
        fills = "; ".join(f"{f}: {RUN_FILLS[f]}" for f in result.filled_by_run)
        print(printable(f"{name}: not in the file, filled by the run where it knows them: {fills}"))
    if result.errors:
        print(
            f"{name}: {result.kind} description: {len(result.errors)} problem(s): {mode} refuses it (exit 1)"
        )
        return EXIT_INVALID
    trial = (
        f"; {len(result.trial)} trial value(s), which --mode submission refuses"
        if result.trial and not args.submission
        else ""
    )
    print(f"{name}: {result.kind} description: accepted by {mode}{trial} (exit 0)")
    return EXIT_OK


def run(args: argparse.Namespace) -> int:
    runner = args._init
    result: int = runner(args)
    return result
