"""``inference-audit init system|implementation``: write a submission's description templates.

The templates and the host probe are :mod:`loadgen_sut.describe`. The output is a new file, or an existing
regular file with ``--force``; ``-`` writes to stdout (the one output policy of every command:
:mod:`checker.report.output`). Exit status: 0 written, 2 unusable input (bad option, existing file, directory,
FIFO, device, symbolic link, ...).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from checker.findings import EXIT_OK, UnusableInput
from checker.printable import printable
from checker.report.output import OutputTarget, plan_outputs, write_output
from loadgen_sut.describe import (
    IMPLEMENTATION_HINTS,
    IMPLEMENTATION_SCHEMA,
    SYSTEM_SCHEMA,
    Template,
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
        'Fields that cannot be read are written as "<FILL IN: ...>", which the schema refuses: fill them in.'
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
        "--status", choices=["available", "preview", "rdi"], default=None, help="availability (default: a field to fill in)"
    )
    p.add_argument(
        "--system-type",
        choices=["datacenter", "edge", "datacenter,edge", "edge,datacenter"],
        default=None,
        help="the system type (default: a field to fill in)",
    )
    p.add_argument(
        "--from-sysinfo",
        type=Path,
        default=None,
        metavar="FILE",
        help="take the values of a system_desc.json written by `mlperf-sysinfo capture` (PyPI mlperf-sysinfo)",
    )
    p.add_argument("--no-gpu-probe", action="store_true", help="do not run nvidia-smi")
    p.set_defaults(_init=_run_system)
    q = kinds.add_parser("implementation", help="the implementation description (measurements JSON)")
    q.add_argument("--out", default="implementation.json", help="file to write (a new file; - for stdout)")
    q.add_argument("--force", action="store_true", help="overwrite an existing regular file")
    for f, hint in IMPLEMENTATION_HINTS.items():
        q.add_argument("--" + f.replace("_", "-"), dest=f, default=None, help=hint)
    q.set_defaults(_init=_run_implementation)


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
    for note in tpl.notes:
        print(printable(f"note: {note}"), file=err)
    left = len(schema_errors(tpl.doc, schema))
    print(
        f"schemas/{schema}.json: {left} problem(s) left" if left else f"schemas/{schema}.json: valid",
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
    )
    where = _write(target, tpl.doc)
    _report(tpl, where, SYSTEM_SCHEMA)
    return EXIT_OK


def _run_implementation(args: argparse.Namespace) -> int:
    target = _target(args)
    given = {f: getattr(args, f) for f in IMPLEMENTATION_HINTS}
    tpl = implementation_template(given)
    bad = {f: m for f, m in field_errors(tpl.doc, IMPLEMENTATION_SCHEMA).items() if given.get(f) is not None}
    if bad:
        f, msgs = next(iter(bad.items()))
        raise UnusableInput(f"--{f.replace('_', '-')} {given[f]!r}: {msgs[0]}")
    where = _write(target, tpl.doc)
    _report(tpl, where, IMPLEMENTATION_SCHEMA)
    return EXIT_OK


def run(args: argparse.Namespace) -> int:
    runner = args._init
    result: int = runner(args)
    return result
