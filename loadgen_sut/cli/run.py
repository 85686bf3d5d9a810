"""``inference-audit run``: run an engine under the official LoadGen (and lay out a submission)."""

from __future__ import annotations

import argparse
import stat
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from checker.engine import check_tree
from checker.findings import EXIT_INVALID, EXIT_OK, UnusableInput
from checker.report.outcome import exit_code
from checker.report.output import plan_outputs, write_output
from checker.report.terminal import render_terminal
from checker.safe_io import file_kind
from loadgen_sut.cli.arg_types import (
    NON_NEGATIVE_INT,
    POSITIVE_INT,
    ArgumentAdder,
    add_choice,
    non_negative_seconds,
    positive_number,
    positive_seconds,
)
from loadgen_sut.cli.code_exec_args import add_code_execution_arguments, code_execution_from_args
from loadgen_sut.client_workers import default_client_workers, usable_cpus
from loadgen_sut.datasets import dataset_path
from loadgen_sut.engines.factory import EngineSpec
from loadgen_sut.engines.openai_http import FLAVORS
from loadgen_sut.package import (
    IMPLEMENTATION_FIELDS,
    PackageRequest,
    implementation_base,
    package_run,
    plan_package,
    read_implementation_json,
)
from loadgen_sut.run.plan import TEST_NAMES, RunRequest, canonical_test_name, dataset_specs
from loadgen_sut.runner import run as run_mode
from loadgen_sut.settings import RunMode
from rules import load_round
from rules.registry import UnknownRound, latest_round

ENGINE_KINDS = {"openai": "openai", "transformers": "transformers", "simulated": "simulated"}
SCENARIOS = ("Offline", "Server", "Interactive", "SingleStream")  # the LLM scenarios a run can have


def parse_test_datasets(values: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """``--test-dataset NAME=SPEC`` values as (test name, data set spec); the name in any case, the spec as
    ``--dataset`` takes it (split at the first ``=``). A value without ``=``, a name that is no LoadGen test, a test
    given twice: :class:`UnusableInput` (exit 2). Whether the run has the test and the file is there:
    :func:`loadgen_sut.run.plan.dataset_specs`."""
    out: list[tuple[str, str]] = []
    for value in values:
        name, sep, spec = value.partition("=")
        if not sep or not name.strip() or not spec:
            raise UnusableInput(
                f"--test-dataset {value!r}: write TEST=FILE, e.g. --test-dataset TEST07=acc_eval_compliance_gpqa.parquet"
            )
        canon = canonical_test_name(name)
        if canon is None:
            raise UnusableInput(
                f"--test-dataset {value}: {name.strip()!r} is not a LoadGen test ({', '.join(TEST_NAMES)})"
            )
        if canon in dict(out):
            raise UnusableInput(
                f"--test-dataset {value}: {canon} has its data set already (--test-dataset {canon}={dict(out)[canon]})"
            )
        out.append((canon, spec))
    return tuple(out)


def _refuse_missing_inputs(
    args: argparse.Namespace, mode: RunMode, implementation: dict[str, Any] | None
) -> None:
    """Every input a submission flow lacks, named in one refusal (exit 2): a newcomer fixed them one run at a time
    (--submitter, then --system, then the implementation's weight data types). The descriptions' contents are judged
    after this, by the package plan."""
    simulated = args.engine == "simulated"
    trial = " --trial" if mode is RunMode.SUBMISSION_TRIAL else ""
    lacking: list[str] = []
    if not args.submitter:
        lacking.append("--submitter NAME (your organization, the tree's submitter directory)")
    if args.system is None and not simulated:
        lacking.append(
            f"--system FILE (your system description: `inference-audit init system{trial} --submitter NAME "
            "--system-name NAME --out FILE` writes one)"
        )
    precision = args.dtype if args.engine == "transformers" else None
    base = implementation_base(simulated, args.model, precision, implementation)
    empty = [k for k in IMPLEMENTATION_FIELDS if not str(base.get(k, "")).strip()]
    if empty:
        lacking.append(
            f"--implementation-json FILE with {', '.join(empty)} (`inference-audit init implementation{trial} "
            "--out FILE` writes one)"
        )
    if lacking:
        raise UnusableInput(f"--mode {mode.value} needs, before the first query:\n  " + "\n  ".join(lacking))


def _refuse_unusable_out(out: Path) -> None:
    """--out must be a directory or a new name: a file, FIFO or device there was refused only after the settings and
    the data set had been read and echoed ("cannot create the run directory: Not a directory")."""
    try:
        st = out.stat()
    except FileNotFoundError:
        return  # a new name (a dangling link or a missing parent is judged when the directory is made)
    except OSError as exc:  # ELOOP: a loop of symbolic links, as absolute_paths says it
        raise UnusableInput(f"cannot resolve the path: {exc.strerror or exc}", path=str(out)) from None
    if not stat.S_ISDIR(st.st_mode):
        kind = "a regular file" if stat.S_ISREG(st.st_mode) else file_kind(st.st_mode)
        raise UnusableInput(f"--out must be a directory or a new name; it is {kind}", path=str(out))


def validate_arguments(args: argparse.Namespace) -> None:
    """Checks between arguments, after parsing: ``UnusableInput`` (exit 2) before anything starts."""
    _refuse_unusable_out(args.out)
    max_new = args.max_new_tokens
    where = "--max-new-tokens"
    if max_new is None:
        try:
            rnd = load_round(args.round or latest_round())
        except UnknownRound as exc:
            raise UnusableInput(str(exc)) from exc
        bench = rnd.benchmark(args.benchmark)
        max_new = bench.max_new_tokens if bench is not None else None
        where = f"{args.benchmark}'s max new tokens"
    if max_new is not None and args.min_new_tokens is not None and args.min_new_tokens > max_new:
        raise UnusableInput(f"--min-new-tokens {args.min_new_tokens} is more than {where} ({max_new})")


def add_run_target(
    what: ArgumentAdder,
    *,
    scenario_default: str | None = None,
    scenario_help: str = "the scenario to run (any case: server is Server)",
    scenarios: Sequence[str] = SCENARIOS,
) -> None:
    """The what-to-run flags ``run`` and ``sweep`` share: engine kind, benchmark, scenario (required unless
    ``scenario_default``), round, data set, user.conf, progress and deadline."""
    add_choice(what, "--engine", sorted(ENGINE_KINDS), required=True, help="engine kind (required)")
    what.add_argument("--benchmark", required=True, help="benchmark name, e.g. llama3.1-8b (required)")
    add_choice(
        what,
        "--scenario",
        scenarios,
        required=scenario_default is None,
        default=scenario_default,
        help=scenario_help + ("" if scenario_default else " (required)"),
    )
    what.add_argument("--round", default=None, help="rules round, e.g. v6.1 (default: the latest known)")
    what.add_argument(
        "--dataset",
        default="builtin",
        help="builtin, a .jsonl/.json/.pkl/.parquet file, or kind:PATH (default builtin); in 'run': the data set of "
        "every LoadGen test without a --test-dataset",
    )
    what.add_argument(
        "--dataset-limit",
        type=POSITIVE_INT,
        default=None,
        metavar="N",
        help="use only the first N samples of each data set (default: all)",
    )
    what.add_argument(
        "--user-conf",
        type=Path,
        default=None,
        metavar="FILE",
        help="a LoadGen user.conf (target_qps, trial overrides; default: none, the round's official settings, "
        "which take 10 minutes or more per test)",
    )
    what.add_argument(
        "--progress-interval",
        type=non_negative_seconds,
        default=5.0,
        metavar="S",
        help="seconds between progress lines (0: off)",
    )
    what.add_argument(
        "--deadline-s",
        type=positive_seconds,
        default=None,
        metavar="S",
        help="wall-clock deadline of each LoadGen test (default: derived from the settings; docs/run.md, 'Run deadline')",
    )


def add_engine_options(parser: argparse.ArgumentParser) -> None:
    """The engine and simulated-engine flags ``run`` and ``sweep`` share, each group under its own title."""
    e = parser.add_argument_group("engine")
    e.add_argument(
        "--model",
        default=None,
        help="served model name (openai), model directory (transformers) (default: none; simulated: the benchmark)",
    )
    e.add_argument(
        "--endpoint",
        action="append",
        default=[],
        metavar="URL",
        help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8000; repeat for replicas (default: none; "
        "--engine openai needs one)",
    )
    e.add_argument(
        "--tokenizer",
        type=Path,
        default=None,
        metavar="DIR",
        help="local tokenizer directory of the served model (default: none; the engine's token ids where it gives them)",
    )
    add_choice(
        e,
        "--engine-flavor",
        ["auto", *FLAVORS],
        default="auto",
        help="request extensions to use (auto: from /v1/models)",
    )
    add_choice(
        e,
        "--api",
        ["completions", "chat"],
        default="completions",
        help="the OpenAI API streamed: completions is /v1/completions, chat is /v1/chat/completions (chat messages: "
        "qwen3-vl's images)",
    )
    e.add_argument(
        "--max-concurrency",
        type=POSITIVE_INT,
        default=1024,
        metavar="N",
        help="in-flight requests over all endpoints",
    )
    e.add_argument(
        "--client-workers",
        type=_client_workers,
        default=None,
        metavar="N",
        help="HTTP client worker processes beside LoadGen's (0: the client runs in LoadGen's process); default for "
        "--engine openai: min(usable cores - 1, 8), 0 when that is under 2, else 0 (docs/client-workers.md)",
    )
    e.add_argument(
        "--request-timeout", type=positive_seconds, default=600.0, metavar="S", help="seconds per request"
    )
    e.add_argument(
        "--idle-timeout",
        type=positive_seconds,
        default=60.0,
        metavar="S",
        help="seconds without stream data before a request fails",
    )
    e.add_argument(
        "--api-key-env",
        default=None,
        metavar="VAR",
        help="environment variable holding the API key (default: no key)",
    )
    e.add_argument("--device", default="cpu", help="transformers: cpu, cuda, cuda:0 ...")
    e.add_argument("--dtype", default="auto", help="transformers: auto, bfloat16, float16, float32")
    e.add_argument("--batch-size", type=POSITIVE_INT, default=8, metavar="N", help="transformers: max batch")
    e.add_argument(
        "--max-new-tokens",
        type=POSITIVE_INT,
        default=None,
        metavar="N",
        help="default: the benchmark's (128 for llama3.1-8b)",
    )
    e.add_argument(
        "--min-new-tokens",
        type=NON_NEGATIVE_INT,
        default=2,
        metavar="N",
        help="ask engines for at least N tokens (LoadGen TPOT needs 2)",
    )
    e.add_argument(
        "--ignore-eos",
        action="store_true",
        help="generate max-new-tokens regardless of EOS (default: off, stop at EOS)",
    )
    s = parser.add_argument_group("simulated engine (results are labelled SIMULATED)")
    s.add_argument(
        "--sim-ttft-ms",
        default="50",
        metavar="DIST",
        help="TTFT distribution: 50, uniform:A,B, normal:M,SD, lognormal:MED,SIGMA, exp:M",
    )
    s.add_argument(
        "--sim-tpot-ms", default="10", metavar="DIST", help="time per output token distribution (same forms)"
    )
    s.add_argument(
        "--sim-output-tokens",
        default="reference",
        metavar="DIST",
        help="output length: 'reference' (the reference answer's words) or a distribution",
    )
    s.add_argument(
        "--sim-seed",
        type=int,
        default=0,
        metavar="N",
        help="seed of the simulated draws (TTFT, TPOT, output lengths): the same seed, the same run",
    )
    s.add_argument(
        "--sim-max-concurrency",
        type=POSITIVE_INT,
        default=None,
        metavar="N",
        help="emulate N slots, queueing showing in TTFT (default: no limit)",
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        "examples:\n"
        "  inference-audit run --engine simulated --benchmark llama3.1-8b --scenario Server --round v6.1 \\\n"
        "      --user-conf trial.conf --out out/\n"
        "  inference-audit run --engine openai --endpoint http://127.0.0.1:8000 --model tiny --tokenizer ./tok \\\n"
        "      --benchmark llama3.1-8b --scenario Offline --mode submission --system systems/mybox.json \\\n"
        "      --submitter MyOrg --dataset cnn_eval.json --out out/\n"
        "  # gpt-oss-120b: performance and TEST09 on --dataset, the accuracy run and TEST07 on their own data sets\n"
        "  inference-audit run ... --benchmark gpt-oss-120b --mode submission --dataset perf_eval_ref.parquet \\\n"
        "      --test-dataset accuracy=acc_eval_inputs.parquet --test-dataset TEST07=acc_eval_compliance_gpqa.parquet\n"
    )
    g = parser.add_argument_group("what to run")
    add_run_target(g)
    add_choice(
        g,
        "--mode",
        [m.value for m in RunMode],
        default="performance",
        help="performance / accuracy trial; submission (performance + accuracy + TEST06 + tree + check; "
        "compliant settings only); submission-trial (same flow, trial settings allowed, never submittable); find-peak",
    )
    g.add_argument(
        "--test-dataset",
        action="append",
        default=[],
        metavar="TEST=FILE",
        help="a LoadGen test's own data set (repeat per test; TEST: "
        + ", ".join(TEST_NAMES)
        + "), e.g. gpt-oss-120b: "
        "--test-dataset accuracy=acc_eval_inputs.parquet --test-dataset TEST07=acc_eval_compliance_gpqa.parquet "
        "(default: none, every test on --dataset)",
    )
    g.add_argument(
        "--target-qps",
        type=positive_number,
        default=None,
        metavar="QPS",
        help="shorthand for '*.<Scenario>.target_qps = X' in user.conf (default: the user.conf's, else LoadGen's 1)",
    )
    g.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="DIR",
        help="work directory: runs/<run_id>/ and the submission tree go here (required)",
    )

    add_engine_options(parser)

    add_code_execution_arguments(parser)

    r = parser.add_argument_group("report")
    r.add_argument(
        "--html",
        metavar="FILE",
        default=None,
        help="also write the run's self-contained HTML page (default: none; 'inference-audit report' writes it later)",
    )
    r.add_argument(
        "--force",
        action="store_true",
        help="replace the --html file if it exists (never a directory, FIFO, symlink) (default: off, refuse)",
    )

    p = parser.add_argument_group("submission tree (--mode submission)")
    p.add_argument(
        "--system",
        type=Path,
        default=None,
        metavar="FILE",
        help="your system description JSON, systems/<name>.json (default: none; simulated: one that says SIMULATED)",
    )
    p.add_argument("--system-name", default=None, help="system directory name (default: the JSON file name)")
    p.add_argument(
        "--submitter",
        default=None,
        help="submitter (organization) directory name (default: none; the submission modes need it)",
    )
    add_choice(
        p, "--division", ["closed", "open"], default="closed", help="the division the tree is laid out in"
    )
    p.add_argument(
        "--tree",
        type=Path,
        default=None,
        metavar="DIR",
        help="where to lay out the tree (default: OUT/submission or OUT/trial-submission)",
    )
    p.add_argument(
        "--implementation-json",
        type=Path,
        default=None,
        metavar="FILE",
        help="the implementation description (input_data_types, retraining, starting_weights_filename, "
        "weight_data_types, weight_transformations): the round's measurements JSON; "
        "'inference-audit init implementation' writes a template (default: none; what the engine reports)",
    )


def _client_workers(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = -1
    if n < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: a number of worker processes, 0 or more")
    return n


def engine_spec(args: argparse.Namespace) -> EngineSpec:
    kind = ENGINE_KINDS[args.engine]
    workers = args.client_workers
    if workers is None:
        workers = default_client_workers(usable_cpus()) if kind == "openai" else 0
    model = args.model
    if model is None:
        if kind == "simulated":
            model = args.benchmark
        else:
            raise UnusableInput(f"--engine {args.engine} needs --model")
    return EngineSpec(
        kind=kind,
        model=model,
        endpoints=tuple(args.endpoint),
        tokenizer_dir=str(args.tokenizer) if args.tokenizer else None,
        flavor=args.engine_flavor,
        api=args.api,
        request_timeout_s=args.request_timeout,
        idle_timeout_s=args.idle_timeout,
        max_concurrency=args.max_concurrency,
        client_workers=workers,
        api_key_env=args.api_key_env,
        device=args.device,
        dtype=args.dtype,
        batch_size=args.batch_size,
        sim_ttft_ms=args.sim_ttft_ms,
        sim_tpot_ms=args.sim_tpot_ms,
        sim_output_tokens=args.sim_output_tokens,
        sim_seed=args.sim_seed,
        sim_max_concurrency=args.sim_max_concurrency,
    )


def _command_line() -> tuple[str, ...]:
    """The command as typed (for the run record and the measurements README)."""
    argv = sys.argv[1:]
    if "run" in argv:
        return ("inference-audit", *argv[argv.index("run") :])
    return ()


def run(args: argparse.Namespace) -> int:
    validate_arguments(args)
    mode = RunMode(args.mode)
    round_name = args.round or latest_round()
    extra: list[str] = []
    if args.target_qps is not None:
        lg_scn = "Server" if args.scenario.lower() in ("server", "interactive") else args.scenario
        extra.append(f"*.{lg_scn}.target_qps = {args.target_qps!r}")  # repr: every digit (':g' kept 6)
    implementation = read_implementation_json(args.implementation_json) if args.implementation_json else None
    if mode.is_submission_flow:
        _refuse_missing_inputs(args, mode, implementation)
    request = RunRequest(
        round_name=round_name,
        benchmark=args.benchmark,
        scenario=args.scenario,
        mode=mode,
        engine=engine_spec(args),
        out=args.out,
        dataset=args.dataset,
        test_datasets=parse_test_datasets(getattr(args, "test_dataset", [])),
        dataset_limit=args.dataset_limit,
        user_conf=args.user_conf,
        extra_conf=tuple(extra),
        max_new_tokens=args.max_new_tokens,
        min_new_tokens=args.min_new_tokens,
        ignore_eos=args.ignore_eos,
        progress_interval_s=args.progress_interval,
        deadline_s=args.deadline_s,
        command=_command_line(),
        code_execution=code_execution_from_args(args),
    )
    specs = dataset_specs(request)  # a test the run does not have, a data set file that is not there: refused now
    rnd = load_round(round_name)
    tree = args.tree or (args.out / ("submission" if mode is RunMode.SUBMISSION else "trial-submission"))
    package_request = plan = None
    if mode.is_submission_flow:
        package_request = PackageRequest(
            tree=tree,
            division=args.division,
            submitter=args.submitter,
            system_json=args.system,
            system_name=args.system_name,
            implementation=implementation,
            implementation_source=args.implementation_json,
        )
        # refuse now rather than after a 10-minute run: names, both descriptions, an existing result
        if mode is RunMode.SUBMISSION:  # `init --trial` values are a trial's, never a result's
            from loadgen_sut.describe import refuse_trial_values

            refuse_trial_values(args.system, implementation, args.implementation_json)
        eng = request.engine
        plan = plan_package(
            package_request,
            rnd,
            args.benchmark,
            args.scenario,
            eng.kind == "simulated",
            model=eng.model,
            precision=eng.dtype if eng.kind == "transformers" else None,
        )
    # the --html path is judged before the run (checker.report.output): not inside the tree, not an input
    if getattr(args, "html", None) == "-":
        raise UnusableInput("--html -: the run prints its progress on standard output; give a file name")
    datasets = [dataset_path(spec) for spec in specs.values()]  # the files whatever the spec's prefix (jsonl:PATH)
    problems = getattr(args, "lcb_problems", None)
    html = plan_outputs(
        [("--html", getattr(args, "html", None))],
        force=getattr(args, "force", False),
        trees=[
            *([("the submission tree", tree)] if mode.is_submission_flow else []),
            *(("the data set directory", d) for d in datasets),
            ("the tokenizer directory", args.tokenizer),
            ("the --lcb-problems directory", problems),
            ("the model directory", Path(args.model) if args.engine == "transformers" and args.model else None),
            ("the runs under --out", args.out / "runs"),  # an earlier run's record or logs (report reads them)
        ],
        inputs=[args.user_conf, args.system, args.implementation_json, *datasets, problems],
    )
    outcome = run_mode(request)
    for target in html:  # the run's page, written before packaging (it shows the run, not the tree's check)
        from loadgen_sut.report.run_data import load_run
        from loadgen_sut.report.run_page import run_page

        link_dir = target.link_dir
        write_output(target, run_page(load_run(outcome.run_dir), link_dir=link_dir))
        print(f"HTML report: {target.given}", file=sys.stderr)
    if not mode.is_submission_flow:
        return EXIT_OK if outcome.record.verdict.status in ("VALID", "NOT_SUBMITTABLE") else EXIT_INVALID
    if outcome.record.verdict.status == "INCOMPLETE":
        print("not packaging an incomplete run", file=sys.stderr)
        return EXIT_INVALID
    assert package_request is not None and plan is not None
    pkg = package_run(outcome.record, outcome.run_dir, rnd, package_request, plan)
    print(f"submission tree: {pkg.result_dir} ({len(pkg.written)} files written)")
    report = check_tree(tree, rnd, workers=1)
    print(render_terminal(report, quiet=True), end="")
    if mode is RunMode.SUBMISSION_TRIAL:
        # a rehearsal: the tree's errors (trial durations, a small data set, a simulated system) are expected and
        # printed; the exit code says whether the run itself went through (NOT_SUBMITTABLE, as the README says).
        # The check's own last line says "(exit 1)": a newcomer read that as the run's exit code, so say which it is.
        went_through = outcome.record.verdict.status == "NOT_SUBMITTABLE"
        print(
            f"run: {'went through' if went_through else 'did not go through'} "
            f"(exit {EXIT_OK if went_through else EXIT_INVALID}); the lines above are check-submission's verdict "
            f"on the trial tree (`check-submission {tree}` repeats it)"
        )
        return EXIT_OK if went_through else EXIT_INVALID
    code = exit_code(report)
    return code if code != EXIT_OK or outcome.valid else EXIT_INVALID
