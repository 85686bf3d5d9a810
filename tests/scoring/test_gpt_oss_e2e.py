"""gpt-oss-120b accuracy end to end: data sets laid out like the official parquet and the older pickle, harmony
outputs tokenized by a BPE tokenizer with the harmony special tokens, a genuine LoadGen accuracy log, then scoring
(repeats per sub-data set), judgement, accuracy.txt as the checker reads it, and ``inference-audit score``.

The expected numbers come from the by-hand counts in ``gpt_oss_fixture`` (which outputs are right by construction)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from gpt_oss_fixture import (
    EXPECTED_SCORED_WITHOUT_CODE,
    EXPECTED_WITH_CODE,
    SAMPLES,
    frame,
    make_tokenizer,
    prompt_text,
    write_problems,
)

from checker.findings import Severity, UnusableInput
from loadgen_sut.cli import main as cli_main
from loadgen_sut.datasets import load_dataset
from loadgen_sut.engines.simulated import simulated_answers, simulated_vocabulary
from loadgen_sut.engines.tokenizers import HFTokenizer
from loadgen_sut.scoring.code_exec import code_execution
from loadgen_sut.scoring.gpt_oss import simulated_answer
from loadgen_sut.scoring.score import score_accuracy, write_accuracy_txt
from rules.models import Benchmark
from rules.registry import load_round

RunTinySut = Callable[..., Path]


@pytest.fixture(scope="module")
def tokenizer_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tokenizer(tmp_path_factory.mktemp("harmony-bpe"))


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory, tiny_sut: RunTinySut, tokenizer_dir: Path) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("gpt-oss")
    tok = HFTokenizer(tokenizer_dir)
    rows = [(d, truth) for d, truth, _, _ in SAMPLES]
    parquet = root / "acc_eval_inputs.parquet"
    frame(rows, "input_tokens", tok.encode, text_truth=True).to_parquet(parquet)
    pickle_path = root / "acc_eval_inputs.pkl"
    frame(rows, "tok_input", tok.encode).to_pickle(pickle_path)  # the older layout: tok_input, integer AIME answers
    ids = root / "ids.jsonl"  # each output as the model's ids: the harmony markers are single special tokens
    ids.write_text("".join(json.dumps({"ids": tok.encode(out)}) + "\n" for _, _, out, _ in SAMPLES))
    log = tiny_sut(root / "run", "--scenario", "Offline", "--samples", str(len(SAMPLES)), "--ids", str(ids))
    return {"log": log, "parquet": parquet, "pickle": pickle_path, "ids": ids, "problems": write_problems(root / "lcb.jsonl")}


def _bench(**update: int) -> Benchmark:
    bm = load_round("v6.1").benchmark("gpt-oss-120b")
    assert bm is not None and bm.evaluator == "gpt-oss"
    return bm.model_copy(update=update)


def _tokens_per_sample(ids_file: Path) -> float:
    lens = [len(json.loads(line)["ids"]) for line in ids_file.read_text().splitlines()]
    return sum(lens) / len(lens)


def _patterns(text: str) -> dict[str, float]:
    """What the checker reads from accuracy.txt (the round's ACC_PATTERN regexes, first match per metric)."""
    found: dict[str, float] = {}
    for line in text.splitlines():
        for metric, pattern in load_round("v6.1").acc_patterns.items():
            m = re.match(pattern, line)
            if m and metric not in found:
                found[metric] = float(m.group(1))
    return found


def test_harmony_markers_are_special_tokens(run: dict[str, Path], tokenizer_dir: Path) -> None:
    tok = HFTokenizer(tokenizer_dir)
    ids = json.loads(run["ids"].read_text().splitlines()[0])["ids"]
    assert "<|channel|>" not in tok.decode(ids) and tok.decode_special(ids) == SAMPLES[0][2]


def test_parquet_and_pickle_layouts_load_alike(run: dict[str, Path], tokenizer_dir: Path) -> None:
    tok = HFTokenizer(tokenizer_dir)
    pq, pk = load_dataset(str(run["parquet"])), load_dataset(str(run["pickle"]))
    assert [s.subset for s in pq.samples] == [d for d, _, _, _ in SAMPLES]
    for a, b in zip(pq.samples, pk.samples, strict=True):
        assert (a.input_ids, a.prompt, a.reference, a.subset) == (b.input_ids, b.prompt, b.reference, b.subset)
    first = pq.samples[0]
    assert first.prompt == prompt_text(0) and first.input_ids == tuple(tok.encode(prompt_text(0)))  # not 'prompt'
    assert first.reference == "70" and pk.samples[2].reference == "33"  # integer ground truth as text
    assert load_dataset(f"gpt-oss:{run['pickle']}").samples == pk.samples
    assert len(load_dataset(str(run["parquet"]), limit=3).samples) == 3


def test_simulated_answers_come_from_the_gpt_oss_evaluator(run: dict[str, Path]) -> None:
    """The loader fills in no answer (it imports no scoring); the data set names its evaluator family, whose object
    gives the simulated engine's harmony answers, in both layouts, and the simulated tokenizer's words hold them."""
    for ds in (load_dataset(str(run["parquet"])), load_dataset(str(run["pickle"]))):
        assert ds.evaluator == "gpt-oss" and all(s.answer is None for s in ds.samples)
        want = {s.index: simulated_answer(s) for s in ds.samples}
        assert all(want.values()) and simulated_answers(ds) == want
        assert set(want.values()) <= set(simulated_vocabulary(ds))
    assert load_dataset("builtin").evaluator is None


def test_score_with_code_execution(run: dict[str, Path], tokenizer_dir: Path, tmp_path: Path) -> None:
    ds = load_dataset(str(run["parquet"]))
    code = code_execution(run["problems"], test_timeout_s=10)
    score = score_accuracy(run["log"], ds, _bench(), HFTokenizer(tokenizer_dir).decode, code_execution=code)
    assert score.not_scored == 0 and score.missing_samples == 0
    assert score.exact_match == pytest.approx(EXPECTED_WITH_CODE, abs=1e-9)
    assert score.tokens_per_sample == pytest.approx(_tokens_per_sample(run["ids"]))
    by = {c.dataset: (c.correct, c.samples, c.repeats) for c in score.components}
    assert by == {"aime25": (3, 4, 8), "gpqa_diamond": (4, 5, 5), "livecodebench_v6": (2, 3, 3)}
    # a subset of the official 4395 samples: no targets; as the full set, 73.667 < 82.2987 fails
    assert [f.rule for f in score.findings(_bench())] == ["RUN-ACC-SUBSET"]
    judged = score.findings(_bench(accuracy_sample_count=len(SAMPLES)))
    assert [(f.rule, f.severity) for f in judged] == [("RUN-ACC-TARGET", Severity.ERROR)]
    assert "exact_match = 73.667" in judged[0].message
    out = tmp_path / "accuracy.txt"
    write_accuracy_txt(score, out, run["log"])
    text = out.read_text()
    found = _patterns(text)
    assert found["exact_match"] == pytest.approx(EXPECTED_WITH_CODE, abs=1e-9)
    assert found["TOKENS_PER_SAMPLE"] == pytest.approx(_tokens_per_sample(run["ids"]))
    assert sum(1 for line in text.splitlines() if "exact_match" in line) == 1  # one value for the checker
    assert "aime25/8 + gpqa_diamond/5 + livecodebench_v6/3 = 3/8 + 4/5 + 2/3" in text
    assert re.search(r"^hash=[0-9a-f]{64}$", text, re.MULTILINE)


def test_score_without_code_execution_is_incomplete(run: dict[str, Path], tokenizer_dir: Path, tmp_path: Path) -> None:
    ds = load_dataset(str(run["pickle"]))
    score = score_accuracy(run["log"], ds, _bench(), HFTokenizer(tokenizer_dir).decode)
    assert score.not_scored == 3 and score.exact_match is None
    assert score.exact_match_scored == pytest.approx(EXPECTED_SCORED_WITHOUT_CODE)
    rules = {f.rule: f for f in score.findings(_bench(accuracy_sample_count=len(SAMPLES)))}
    assert rules["RUN-ACC-INCOMPLETE"].severity is Severity.WARNING
    assert "RUN-ACC-TARGET" not in rules  # never judged on an incomplete score (tokens per sample are far below)
    out = tmp_path / "accuracy.txt"
    write_accuracy_txt(score, out, run["log"])
    assert "exact_match" not in _patterns(out.read_text()) and "INCOMPLETE" in out.read_text()


def test_decoder_without_special_tokens_is_refused(run: dict[str, Path], tokenizer_dir: Path) -> None:
    tok = HFTokenizer(tokenizer_dir)
    ds = load_dataset(str(run["parquet"]))
    with pytest.raises(UnusableInput, match="special tokens"):
        score_accuracy(run["log"], ds, _bench(), lambda ids: tok.decode(ids))
    # the same with an explicit decoder keeping them
    score = score_accuracy(run["log"], ds, _bench(), lambda ids: tok.decode(ids), detokenize_special=tok.decode_special)
    assert score.exact_match is None and score.exact_match_scored == pytest.approx(EXPECTED_SCORED_WITHOUT_CODE)


def test_score_command(run: dict[str, Path], tokenizer_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["--benchmark", "gpt-oss-120b", "--round", "v6.1", "--accuracy-log", str(run["log"])]
    base += ["--dataset", str(run["parquet"]), "--tokenizer", str(tokenizer_dir)]
    out = tmp_path / "accuracy.txt"
    code = ["--allow-code-execution", "--lcb-problems", str(run["problems"]), "--code-timeout-s", "10"]
    assert cli_main(["score", *base, *code, "--accuracy-txt", str(out)]) == 0  # a subset: not judged, no error
    printed = capsys.readouterr().out
    assert "exact_match = 73.667" in printed
    assert _patterns(out.read_text())["exact_match"] == pytest.approx(EXPECTED_WITH_CODE, abs=1e-9)


def test_performance_layout_and_bad_rows(tmp_path: Path) -> None:
    perf = tmp_path / "perf_eval_ref.parquet"
    pd.DataFrame({"input_tokens": [[1, 2, 3], [4, 5]]}).to_parquet(perf)  # ids only: a performance set
    ds = load_dataset(str(perf))
    assert [(s.input_ids, s.reference, s.subset, s.answer) for s in ds.samples] == [
        ((1, 2, 3), None, None, None),
        ((4, 5), None, None, None),
    ]
    old = tmp_path / "old.pkl"  # an AIME answer column with a gap is stored as floats
    pd.DataFrame({"tok_input": [[1], [2]], "dataset": ["aime25", "aime25"], "ground_truth": [70.0, None]}).to_pickle(old)
    assert [s.reference for s in load_dataset(str(old)).samples] == ["70", None]
    bad = tmp_path / "bad.pkl"
    pd.DataFrame({"tok_input": [[1], None], "dataset": ["aime25", "aime25"], "ground_truth": ["1", "2"]}).to_pickle(bad)
    with pytest.raises(UnusableInput, match="row 1: no token ids"):
        load_dataset(str(bad))
    half = tmp_path / "half.pkl"
    pd.DataFrame({"tok_input": [[1]], "dataset": ["aime25"], "ground_truth": [70.5]}).to_pickle(half)
    with pytest.raises(UnusableInput, match=r"row 0: ground_truth 70\.5"):
        load_dataset(str(half))
