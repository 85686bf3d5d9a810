"""``inference-audit sweep``: LoadGen Server runs at rising rates, goodput per level, the knee (see loadgen_sut.sweep).

The engine, benchmark and data-set options are ``inference-audit run``'s own (added by the functions ``run`` adds
them with, :func:`loadgen_sut.cli.run.add_run_target` and :func:`~loadgen_sut.cli.run.add_engine_options`, so they
cannot drift apart); the sweep adds the rates, the SLO, the per-level duration, ``--find-peak`` and the results file.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from checker.findings import EXIT_INVALID, EXIT_OK, UnusableInput
from loadgen_sut.cli import arg_types
from loadgen_sut.cli import run as run_cli
from loadgen_sut.run.plan import RunRequest, resolve
from loadgen_sut.settings import RunMode
from loadgen_sut.sweep import (
    SweepPlan,
    level_schedule,
    refuse_swept_keys,
    round_slo,
    run_sweep,
)
from loadgen_sut.sweep_model import SweepSettings
from rules.models import Scenario
from rules.registry import UnknownRound, latest_round

DEFAULT_DURATION_S = 30.0
DEFAULT_MIN_QUERIES = 100


def _rate_list(text: str) -> list[float]:
    out: list[float] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        out.append(arg_types.positive_number(part))
    if not out:
        raise argparse.ArgumentTypeError("no rate given")
    return out


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        "examples:\n"
        "  inference-audit sweep --engine openai --endpoint http://127.0.0.1:8011 --model token-server \\\n"
        "      --benchmark llama3.1-8b --round v6.1 --start 8 --stop 32 --steps 4 \\\n"
        "      --slo-ttft-ms 1000 --slo-tpot-ms 100 --duration-s 10 --out sweep.json\n"
        "  inference-audit sweep --engine simulated --sim-max-concurrency 8 --sim-ttft-ms 100 --sim-tpot-ms 20 \\\n"
        "      --sim-output-tokens 16 --ignore-eos --benchmark llama3.1-8b --rates 10,16,24,32 --out sim-sweep.json\n"
        "\n"
        "Rerun the same command to resume: finished levels are skipped; other settings are refused."
    )
    run_cli.add_run_target(
        parser.add_argument_group("what to run (as 'inference-audit run')"),
        scenario_default="Server",
        scenario_help="Server or Interactive: LoadGen's Server scenario either way",
        scenarios=("Server", "Interactive"),
    )
    run_cli.add_engine_options(parser)
    g = parser.add_argument_group("sweep")
    g.add_argument(
        "--rates",
        type=_rate_list,
        default=None,
        metavar="QPS,QPS,...",
        help="offered rates in req/s, e.g. 5,10,20,40 (default: none; give --rates or --start/--stop/--steps)",
    )
    g.add_argument(
        "--start", type=arg_types.positive_number, default=None, metavar="QPS", help="lowest rate (with --stop, --steps; default: none)"
    )
    g.add_argument("--stop", type=arg_types.positive_number, default=None, metavar="QPS", help="highest rate (default: none)")
    g.add_argument(
        "--steps",
        type=arg_types.int_at_least(1),
        default=None,
        metavar="N",
        help="number of rates from --start to --stop (default: none)",
    )
    arg_types.add_choice(
        g, "--spacing", ("linear", "geometric"), default="linear", help="rates evenly spaced or in a constant ratio"
    )
    g.add_argument("--slo-ttft-ms", type=arg_types.positive_number, default=None, help="TTFT limit, whole ms (default: the round's)")
    g.add_argument("--slo-tpot-ms", type=arg_types.positive_number, default=None, help="TPOT limit, whole ms (default: the round's)")
    g.add_argument(
        "--duration-s",
        type=arg_types.positive_seconds,
        default=DEFAULT_DURATION_S,
        help=f"LoadGen min_duration of each level (default {DEFAULT_DURATION_S:g}; an overloaded level runs longer: it drains)",
    )
    g.add_argument(
        "--min-queries",
        type=arg_types.int_at_least(1),
        default=DEFAULT_MIN_QUERIES,
        help=f"LoadGen min_query_count of each level (default {DEFAULT_MIN_QUERIES})",
    )
    g.add_argument(
        "--find-peak",
        action="store_true",
        help="also run LoadGen's FindPeakPerformance from the knee and compare (default: off)",
    )
    g.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="FILE",
        help="the results file (JSON; also the state a rerun resumes from; required)",
    )
    g.add_argument("--work-dir", type=Path, default=None, help="where the levels' run directories go (default: OUT's name + '-runs')")
    g.add_argument("--verbose", action="store_true", help="show every level's run output (default: only when a level fails)")


def _default_work_dir(out: Path) -> Path:
    name = out.name[: -len(".json")] if out.name.endswith(".json") and out.name != ".json" else out.name
    return out.parent / f"{name}-runs"


def build_plan(args: argparse.Namespace) -> SweepPlan:
    """The sweep's settings and base request from the parsed arguments; UnusableInput before anything runs."""
    run_cli.validate_arguments(args)
    round_name = args.round or latest_round()
    probe = RunRequest(
        round_name=round_name,
        benchmark=args.benchmark,
        scenario=args.scenario,
        mode=RunMode.PERFORMANCE,
        engine=run_cli.engine_spec(args),
        out=Path("."),
    )
    try:
        _rnd, bench, scenario = resolve(probe)
    except UnknownRound as exc:
        raise UnusableInput(str(exc)) from exc
    if scenario.loadgen_scenario is not Scenario.SERVER:
        raise UnusableInput(f"--scenario {args.scenario}: a sweep offers rising Server rates (Server or Interactive)")
    spacing, rates = level_schedule(args.rates, args.start, args.stop, args.steps, args.spacing)
    slo = round_slo(bench, scenario, args.slo_ttft_ms, args.slo_tpot_ms, round_name)
    conf_text: str | None = None
    if args.user_conf is not None:
        try:
            conf_text = args.user_conf.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UnusableInput(f"cannot read user.conf: {exc}", path=str(args.user_conf)) from exc
        refuse_swept_keys(conf_text, str(args.user_conf))
    probe.engine.validate_spec()
    settings = SweepSettings(
        round=round_name,
        benchmark=bench.name,
        scenario=scenario.value,
        spacing=spacing,
        rates_qps=rates,
        slo=slo,
        duration_s=args.duration_s,
        min_queries=args.min_queries,
        engine=probe.engine,
        dataset=args.dataset,
        dataset_limit=args.dataset_limit,
        user_conf_text=conf_text,
        max_new_tokens=args.max_new_tokens,
        min_new_tokens=args.min_new_tokens,
        ignore_eos=args.ignore_eos,
    )
    base = RunRequest(
        round_name=round_name,
        benchmark=args.benchmark,
        scenario=args.scenario,
        mode=RunMode.PERFORMANCE,
        engine=probe.engine,
        out=Path("."),  # each level: the work directory
        dataset=args.dataset,
        dataset_limit=args.dataset_limit,
        user_conf=args.user_conf,
        max_new_tokens=args.max_new_tokens,
        min_new_tokens=args.min_new_tokens,
        ignore_eos=args.ignore_eos,
        progress_interval_s=args.progress_interval,
        deadline_s=args.deadline_s,
        command=_command_line(),
    )
    return SweepPlan(
        settings=settings,
        base=base,
        out=args.out,
        work_dir=args.work_dir or _default_work_dir(args.out),
        find_peak=args.find_peak,
        verbose=args.verbose,
    )


def _command_line() -> tuple[str, ...]:
    argv = sys.argv[1:]
    return ("inference-audit", *argv[argv.index("sweep") :]) if "sweep" in argv else ("inference-audit", "sweep")


def run(args: argparse.Namespace) -> int:
    """0: every level (and find-peak, when asked) finished, whatever the knee; 1: something did not."""
    plan = build_plan(args)
    result = run_sweep(plan)
    return EXIT_OK if result.complete else EXIT_INVALID
