"""deepseek-r1 accuracy end to end: a data set pickle laid out like the official one, outputs tokenized
by a real (byte-level BPE, trained offline here) tokenizer, a genuine LoadGen accuracy log, then
scoring, judgement, accuracy.txt and ``inference-audit score``."""

from __future__ import annotations

import json
import re
import sysconfig
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast

from checker.findings import Severity
from loadgen_sut.cli import main as cli_main
from loadgen_sut.datasets import Dataset, load_dataset
from loadgen_sut.engines.tokenizers import HFTokenizer
from loadgen_sut.scoring.code_exec import code_execution
from loadgen_sut.scoring.deepseek import Subset
from loadgen_sut.scoring.score import score_accuracy, write_accuracy_txt
from rules.models import Benchmark
from rules.registry import load_round

RunTinySut = Callable[..., Path]

# (sub-data set, ground truth, model output, correct?) -- None: needs code execution
SAMPLES: list[tuple[str, str | int, str, bool | None]] = [
    ("gpqa", "C", "<think>Option C fits the data.</think>\nThe mass is conserved.\n\nAnswer: C", True),
    ("gpqa", "A", "Answer: B", False),
    ("mmlu_pro", "H", "Working through it...\nanswer: (h)", True),
    ("mmlu_pro", "B", "I think it is D", False),  # no marker: the last standalone letter, D
    ("math500", "\\frac{1}{2}", "Therefore the probability is $\\boxed{\\dfrac{1}{2}}$.", True),
    ("math500", "\\left( 3, \\frac{\\pi}{2} \\right)", "In polar form: \\boxed{(3, \\frac{\\pi}{2})}", True),
    ("aime2024", 33, "So m+n = \\boxed{033}", True),  # an integer ground truth, as AIME rows may hold
    (
        "livecodebench",
        "double",
        "Read n and double it.\n```python\nn = int(input())\nprint(2 * n)\n```",
        None,
    ),
]
LCB_PROBLEM = {
    "question_id": "double",
    "public_test_cases": json.dumps([{"input": "3\n", "output": "6\n", "testtype": "stdin"}]),
    "private_test_cases": json.dumps([{"input": "-21\n", "output": "-42\n", "testtype": "stdin"}]),
    "metadata": "{}",
}
CORRECT_WITHOUT_CODE = 5  # of 7 scored
CORRECT_WITH_CODE = 6  # of 8


@pytest.fixture(scope="module")
def tokenizer_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A byte-level BPE tokenizer trained on some standard-library sources, saved as a HF tokenizer."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in stdlib.glob("*.py") if p.is_file())[:12]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=800, special_tokens=["<eos>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train([str(f) for f in files], trainer)
    out = tmp_path_factory.mktemp("bpe")
    PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<eos>").save_pretrained(str(out))
    return out


@pytest.fixture(scope="module")
def run(
    tmp_path_factory: pytest.TempPathFactory, tiny_sut: RunTinySut, tokenizer_dir: Path
) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("deepseek")
    frame = pd.DataFrame(
        {
            "text_input": [f"Question {i}: solve it." for i in range(len(SAMPLES))],
            "question": [f"Question {i}" for i in range(len(SAMPLES))],
            "ground_truth": pd.Series([truth for _, truth, _, _ in SAMPLES], dtype=object),
            "dataset": [subset for subset, _, _, _ in SAMPLES],
            "tok_input_len": [5] * len(SAMPLES),
        }
    )
    pickle_path = root / "mlperf_deepseek_r1_dataset_8.pkl"
    frame.to_pickle(pickle_path)
    tok = HFTokenizer(tokenizer_dir)
    assert tok.eos_token_id is not None
    ids = root / "ids.jsonl"
    ids.write_text(
        "".join(json.dumps({"ids": [*tok.encode(out), tok.eos_token_id]}) + "\n" for _, _, out, _ in SAMPLES)
    )
    log = tiny_sut(root / "run", "--scenario", "Offline", "--samples", str(len(SAMPLES)), "--ids", str(ids))
    problems = root / "lcb.jsonl"
    problems.write_text(json.dumps(LCB_PROBLEM) + "\n")
    return {"log": log, "dataset": pickle_path, "ids": ids, "problems": problems, "root": root}


def _bench(**update: int) -> Benchmark:
    bm = load_round("v6.1").benchmark("deepseek-r1")
    assert bm is not None
    return bm.model_copy(update=update)


def _tokens_per_sample(ids_file: Path) -> float:
    lens = [len(json.loads(line)["ids"]) for line in ids_file.read_text().splitlines()]
    return sum(lens) / len(lens)


def _patterns(text: str) -> dict[str, float]:
    found: dict[str, float] = {}
    for line in text.splitlines():
        for metric, pattern in load_round("v6.1").acc_patterns.items():
            m = re.match(pattern, line)
            if m:
                found[metric] = float(m.group(1))
    return found


def test_pickle_layout_loads(run: dict[str, Path]) -> None:
    ds: Dataset = load_dataset(str(run["dataset"]))
    assert [s.subset for s in ds.samples] == [subset for subset, _, _, _ in SAMPLES]
    assert ds.samples[6].reference == "33"  # integer ground truth kept as text
    assert ds.samples[0].prompt == "Question 0: solve it." and ds.samples[0].reference == "C"


def test_score_without_code_execution(run: dict[str, Path], tokenizer_dir: Path, tmp_path: Path) -> None:
    ds = load_dataset(str(run["dataset"]))
    score = score_accuracy(run["log"], ds, _bench(), HFTokenizer(tokenizer_dir).decode)
    assert score.gen_num == len(SAMPLES) and score.missing_samples == 0
    assert score.not_scored == 1 and score.exact_match is None and score.rouge1 is None
    assert score.exact_match_scored == pytest.approx(100 * CORRECT_WITHOUT_CODE / 7)
    assert score.tokens_per_sample == pytest.approx(_tokens_per_sample(run["ids"]))
    by = {s.subset: s for s in score.subsets}
    assert (by[Subset.MATH500].correct, by[Subset.AIME].correct, by[Subset.GPQA].correct) == (2, 1, 1)
    assert by[Subset.LIVECODEBENCH].not_scored == 1
    # Incomplete: never judged on exact_match, even as if it were the full official set.
    rules = {f.rule: f for f in score.findings(_bench(dataset_size=len(SAMPLES)))}
    assert rules["RUN-ACC-INCOMPLETE"].severity is Severity.WARNING
    assert not any("exact_match" in f.message for f in rules.values() if f.rule == "RUN-ACC-TARGET")
    assert "TOKENS_PER_SAMPLE" in rules["RUN-ACC-TARGET"].message  # a few tokens, far below 3497.6
    out = tmp_path / "accuracy.txt"
    write_accuracy_txt(score, out, run["log"])
    text = out.read_text()
    assert "exact_match" not in _patterns(text) and "INCOMPLETE" in text
    assert _patterns(text)["TOKENS_PER_SAMPLE"] == pytest.approx(score.tokens_per_sample)


def test_score_with_code_execution(run: dict[str, Path], tokenizer_dir: Path, tmp_path: Path) -> None:
    ds = load_dataset(str(run["dataset"]))
    code = code_execution(run["problems"], test_timeout_s=10)
    score = score_accuracy(run["log"], ds, _bench(), HFTokenizer(tokenizer_dir).decode, code_execution=code)
    assert score.not_scored == 0 and score.exact_match == pytest.approx(
        100 * CORRECT_WITH_CODE / len(SAMPLES)
    )
    # The subset is not the official 4388 samples: no targets; as the full set, both targets fail.
    assert [f.rule for f in score.findings(_bench())] == ["RUN-ACC-SUBSET"]
    errors = score.findings(_bench(dataset_size=len(SAMPLES)))
    assert sorted(m for f in errors for m in ("exact_match", "TOKENS_PER_SAMPLE") if m in f.message) == [
        "TOKENS_PER_SAMPLE",
        "exact_match",
    ]
    assert all(f.rule == "RUN-ACC-TARGET" for f in errors)
    out = tmp_path / "accuracy.txt"
    write_accuracy_txt(score, out, run["log"])
    found = _patterns(out.read_text())
    assert found["exact_match"] == pytest.approx(75.0)
    assert found["TOKENS_PER_SAMPLE"] == pytest.approx(score.tokens_per_sample)


def test_score_command(
    run: dict[str, Path], tokenizer_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["--benchmark", "deepseek-r1", "--round", "v6.1", "--accuracy-log", str(run["log"])]
    base += ["--dataset", str(run["dataset"]), "--tokenizer", str(tokenizer_dir)]
    out = tmp_path / "accuracy.txt"
    assert cli_main(["score", *base, "--accuracy-txt", str(out)]) == 0  # a subset: not judged, no error
    printed = capsys.readouterr().out
    assert "INCOMPLETE: 1 samples not scored" in printed and "RUN-ACC-INCOMPLETE" in printed
    code = ["--allow-code-execution", "--lcb-problems", str(run["problems"]), "--code-timeout-s", "10"]
    assert cli_main(["score", *base, *code, "--accuracy-txt", str(out), "--force"]) == 0
    printed = capsys.readouterr().out
    assert "exact_match = 75" in printed and "livecodebench      1 of     1 correct" in printed
    assert _patterns(out.read_text())["exact_match"] == pytest.approx(75.0)
    assert cli_main(["score", *base, "--lcb-problems", str(run["problems"])]) == 2  # problems without the opt-in
    assert "needs --allow-code-execution" in capsys.readouterr().err
