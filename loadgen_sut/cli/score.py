"""``inference-audit score``: score an existing ``mlperf_log_accuracy.json`` against a data set.

As the reference evaluation scripts do for the benchmark (ROUGE / qa exact match, or deepseek-r1's
evaluators, gpt-oss-120b's with its repeats per sub-data set), judged against the round's accuracy targets; writes
``accuracy.txt`` on request.

deepseek-r1's and gpt-oss-120b's LiveCodeBench samples are scored only with ``--allow-code-execution`` and
``--lcb-problems FILE`` (a local copy of LiveCodeBench ``code_generation_lite``): that RUNS the
model-generated programs on this machine (a child process with CPU, memory and file-size limits in
a temporary directory; not a sandbox). Without it they are not scored and the score is incomplete.

Exit status: 0 when no accuracy finding is an error, 1 otherwise, 2 on unusable input.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from checker.cli.options import FORCE_HELP
from checker.findings import EXIT_INVALID, EXIT_OK, Severity, UnusableInput
from checker.parsers.accuracy_log import TokenDtype, accuracy_log_hash
from checker.printable import printable
from checker.report.output import plan_outputs, write_output
from loadgen_sut.cli.code_exec_args import add_code_execution_arguments, code_execution_from_args
from loadgen_sut.datasets import dataset_path, load_dataset
from loadgen_sut.engines.tokenizers import HFTokenizer
from loadgen_sut.scoring.gpt_oss import component_lines
from loadgen_sut.scoring.score import AccuracyScore, accuracy_txt, score_accuracy
from rules.models import Scenario
from rules.registry import UnknownBenchmark, UnknownRound, find_benchmark, latest_round


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        "example:\n"
        "  inference-audit score --benchmark deepseek-r1 --round v6.1 --accuracy-log run/mlperf_log_accuracy.json \\\n"
        "      --dataset mlperf_deepseek_r1_dataset_4388_fp8_eval.pkl --tokenizer ./DeepSeek-R1 --accuracy-txt accuracy.txt"
    )
    parser.add_argument(
        "--accuracy-log", type=Path, required=True, help="mlperf_log_accuracy.json of an accuracy run"
    )
    parser.add_argument(
        "--dataset", required=True, help="the data set the run used (.pkl, .json, .jsonl, builtin)"
    )
    parser.add_argument("--benchmark", required=True, help="benchmark name, e.g. deepseek-r1, llama3.1-8b")
    parser.add_argument("--round", default=None, help="rules round, e.g. v6.1 (default: the latest known)")
    parser.add_argument(
        "--scenario", default=None, help="the result's scenario: its accuracy targets apply (default: the benchmark's)"
    )
    parser.add_argument(
        "--tokenizer",
        type=Path,
        default=None,
        help="local tokenizer directory of the model (not needed where the log holds text: qwen3-vl)",
    )
    parser.add_argument(
        "--dtype", default="int32", choices=[d.value for d in TokenDtype], help="token id type in the log"
    )
    parser.add_argument(
        "--accuracy-txt", default=None, metavar="FILE", help="write accuracy.txt here (- for stdout)"
    )
    parser.add_argument("--force", action="store_true", help=FORCE_HELP)
    add_code_execution_arguments(parser)


def _summary(score: AccuracyScore) -> list[str]:
    lines = [
        f"{score.benchmark}: {score.gen_num} samples of {score.dataset} ({score.dataset_samples} in the data set)"
    ]
    lines += [
        f"  {s.subset.value:14} {s.correct:5} of {s.scored:5} correct"
        + (f" ({s.exact_match:.2f})" if s.exact_match is not None else "")
        + (f", {s.not_scored} not scored" if s.not_scored else "")
        for s in score.subsets
    ]
    lines += ["  " + line.removeprefix("inference-audit: ") for line in component_lines(score.components)]  # gpt-oss
    for name, value in score.metrics().items():
        lines.append(f"  {name} = {value:g}")
    if score.not_scored:
        lines.append(
            f"  INCOMPLETE: {score.not_scored} samples not scored (code execution {score.code_execution}); "
            f"exact_match over the scored samples = {score.exact_match_scored}"
        )
    return lines


def run(args: argparse.Namespace) -> int:
    # judged before any work: never an input (the accuracy log, the data set file whatever its spec's prefix, the
    # problems), never inside a directory it reads (the tokenizer's, a data set's or the problems' directory)
    problems = getattr(args, "lcb_problems", None)
    dataset = dataset_path(args.dataset)
    outputs = plan_outputs(
        [("--accuracy-txt", args.accuracy_txt)],
        force=getattr(args, "force", False),
        trees=[
            ("the tokenizer directory", args.tokenizer),
            ("the data set directory", dataset),
            ("the --lcb-problems directory", problems),
        ],
        inputs=[args.accuracy_log, dataset, problems],
    )
    out = sys.stderr if any(t.to_stdout for t in outputs) else sys.stdout  # stdout holds accuracy.txt
    try:
        _, bench = find_benchmark(args.round or latest_round(), args.benchmark)
    except (UnknownRound, UnknownBenchmark) as exc:
        raise UnusableInput(str(exc)) from exc
    scenario = Scenario.parse(args.scenario) if args.scenario else None
    if args.scenario and scenario is None:
        raise UnusableInput(f"unknown scenario {args.scenario!r} (Offline, Server, Interactive, SingleStream)")
    code = code_execution_from_args(args)
    if args.tokenizer is None and bench.accuracy_log_format != "utf8_text":
        raise UnusableInput(f"--tokenizer DIR is needed: {bench.name}'s accuracy log holds token ids")
    detokenize = HFTokenizer(args.tokenizer).decode if args.tokenizer is not None else None
    score = score_accuracy(
        args.accuracy_log,
        load_dataset(args.dataset),
        bench,
        detokenize,
        dtype=TokenDtype(args.dtype),
        code_execution=code,
    )
    for line in _summary(score):
        print(printable(line), file=out)
    findings = score.findings(bench, scenario=scenario)
    for f in findings:
        print(printable(f"  {f.severity.value.upper():7} {f.rule}: {f.message}"), file=out)
    for target in outputs:
        text = accuracy_txt(score, accuracy_log_hash(args.accuracy_log))
        write_output(target, text.encode("utf-8"))
        if not target.to_stdout:
            print(f"accuracy.txt: {target.given}")
    return EXIT_INVALID if any(f.severity is Severity.ERROR for f in findings) else EXIT_OK
