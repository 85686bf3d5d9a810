"""``inference-audit run --benchmark gpt-oss-120b --mode submission-trial`` with the simulated engine on a small
synthetic parquet data set: the round's generation settings per test, the simulated engine's harmony answers
scored by the gpt-oss evaluator (LiveCodeBench with the code-execution opt-in), and the packaged tree."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from gpt_oss_fixture import frame, write_problems

from loadgen_sut.cli import main

ROWS: list[tuple[str, str | int]] = [
    ("aime25", "70"),
    ("aime25", "588"),
    ("gpqa_diamond", "C"),
    ("gpqa_diamond", "A"),
    ("livecodebench_v6", "lcb_double"),
]
# The simulated engine answers AIME and GPQA right by construction and writes `pass` for the program, which fails
# the problem's tests. By hand: 100 * (2/8 + 2/5 + 0/3) / (2/8 + 2/5 + 1/3) = 100 * (39/60) / (59/60) = 100 * 39/59
EXPECTED = 66.102  # 66.1016..., 3 decimals


def test_submission_trial_with_the_simulated_engine(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "acc_eval_inputs.parquet"
    frame(ROWS, "input_tokens", text_truth=True).to_parquet(data)
    conf = tmp_path / "trial.conf"
    conf.write_text("*.Offline.min_duration = 0\n*.Offline.min_query_count = 5\n", encoding="utf-8")
    argv = ["run", "--engine", "simulated", "--benchmark", "gpt-oss-120b", "--scenario", "Offline", "--round", "v6.1"]
    argv += ["--mode", "submission-trial", "--submitter", "Demo", "--dataset", str(data), "--user-conf", str(conf)]
    argv += ["--out", str(tmp_path / "out"), "--sim-ttft-ms", "2", "--sim-tpot-ms", "0.2", "--progress-interval", "0"]
    argv += ["--allow-code-execution", "--lcb-problems", str(write_problems(tmp_path / "lcb.jsonl"))]
    argv += ["--code-timeout-s", "10"]
    assert main(argv) == 0  # a trial that ran: NOT_SUBMITTABLE, exit 0
    printed = capsys.readouterr().out
    assert "max_new_tokens 10000 (performance) / 32768 (accuracy); sampling, temperature=1, top_p=1" in printed
    (run_dir,) = (tmp_path / "out" / "runs").iterdir()
    record = json.loads((run_dir / "run-record.json").read_text(encoding="utf-8"))
    assert record["verdict"]["status"] == "NOT_SUBMITTABLE" and record["simulated"]
    # each LoadGen test got its mode's settings
    perf = json.loads((run_dir / "performance.spec.json").read_text(encoding="utf-8"))["generation"]
    acc = json.loads((run_dir / "accuracy.spec.json").read_text(encoding="utf-8"))["generation"]
    assert (perf["max_new_tokens"], acc["max_new_tokens"]) == (10000, 32768)
    assert (acc["greedy"], acc["temperature"], acc["top_p"], acc["top_k"], acc["skip_special_tokens"]) == (
        False, 1.0, 1.0, 0, False,
    )
    # the accuracy run is scored by the gpt-oss evaluator, repeats and all
    score = record["accuracy"]
    assert score["exact_match"] == pytest.approx(EXPECTED, abs=1e-9) and score["not_scored"] == 0
    assert {c["dataset"]: (c["correct"], c["samples"]) for c in score["components"]} == {
        "aime25": (2, 2),
        "gpqa_diamond": (2, 2),
        "livecodebench_v6": (0, 1),
    }
    text = (run_dir / "accuracy" / "accuracy.txt").read_text(encoding="utf-8")
    m = re.search(r"'exact_match':\s([\d.]+)", text)
    assert m is not None and float(m.group(1)) == pytest.approx(EXPECTED, abs=1e-9)
    # the packaged tree holds the scored accuracy run
    (res,) = (tmp_path / "out").glob("trial-submission/closed/Demo/results/*/gpt-oss-120b/Offline")
    assert (res / "accuracy" / "accuracy.txt").read_text(encoding="utf-8") == text
    assert (res / "accuracy" / "mlperf_log_accuracy.json").is_file()
