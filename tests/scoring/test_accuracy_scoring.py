"""loadgen_sut.scoring.score: ROUGE against hand-computed values, scoring genuine LoadGen accuracy logs,
accuracy.txt against the round's ACC_PATTERNs, and the judgement."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from checker.findings import Severity, UnusableInput
from checker.parsers.accuracy_log import TokenDtype, recorded_hash
from loadgen_sut.datasets import Dataset, load_dataset
from loadgen_sut.scoring.rouge import SentenceSplitter, postprocess, qa_exact_match, rouge_scores
from loadgen_sut.scoring.score import score_accuracy, write_accuracy_txt
from rules.models import Benchmark
from rules.registry import load_round

RunTinySut = Callable[..., Path]

REFERENCES = ["the cat was under the bed", "Alpha beta. Gamma delta.", "Runners were running home."]
PREDICTIONS = ["the cat was found under the bed", "Gamma delta. Alpha beta.", "Runners were running home."]


def byte_detokenize(ids: Sequence[int]) -> str:
    """The tiny SUT's tokenizer: UTF-8 bytes + 3; ids 0-2 are special and skipped."""
    return bytes(i - 3 for i in ids if i >= 3).decode("utf-8")


def test_rouge_known_values() -> None:
    # Unigrams: 6 of 7 predicted match all 6 reference words: F = 2*(6/7)*1/((6/7)+1) = 12/13.
    # Bigrams: 4 shared of 6 predicted and 5 reference: F = 2*(4/6)*(4/5)/((4/6)+(4/5)) = 8/11.
    s = rouge_scores(["the cat was found under the bed"], ["the cat was under the bed"])
    assert s == {"rouge1": 92.3077, "rouge2": 72.7273, "rougeL": 92.3077, "rougeLsum": 92.3077}
    # Swapped sentences: the LCS over the whole text is 2 of 4 words (rougeL 50), but the
    # summary-level union LCS per sentence finds all 4 (rougeLsum 100) once sentences are on lines.
    split = SentenceSplitter()
    pred, ref = (
        postprocess(["Gamma delta. Alpha beta."], split),
        postprocess(["Alpha beta. Gamma delta."], split),
    )
    assert pred == ["Gamma delta.\nAlpha beta."]
    swapped = rouge_scores(pred, ref)
    assert swapped["rougeL"] == 50.0 and swapped["rougeLsum"] == 100.0
    assert swapped["rouge2"] == pytest.approx(100 * 2 / 3, abs=1e-4)  # bigrams: alpha-beta, gamma-delta of 3
    # Porter stemming: "running"/"runs" -> "run".
    assert rouge_scores(["he runs"], ["he running"])["rouge1"] == 100.0
    with pytest.raises(ValueError, match="nothing to score"):
        rouge_scores([], [])


def test_sentence_splitter_keeps_abbreviations() -> None:
    parts = SentenceSplitter().split("Mr. Smith arrived at 5 p.m. on Monday. U.S. officials agreed.")
    assert parts == ["Mr. Smith arrived at 5 p.m. on Monday.", "U.S. officials agreed."]


def test_exact_match_rule() -> None:
    assert qa_exact_match("Paris", "The answer.\nAnswer: Paris") == 100.0
    assert qa_exact_match("Paris|paris city", "Answer: PARIS CITY") == 100.0
    assert qa_exact_match("Paris", "Answer: Lyon") == 0.0
    assert qa_exact_match("Paris", "Answer: ") == 0.0  # the reference would score an empty answer 100


@pytest.fixture(scope="module")
def scored_run(tmp_path_factory: pytest.TempPathFactory, tiny_sut: RunTinySut) -> tuple[Path, Dataset]:
    root = tmp_path_factory.mktemp("scored")
    dataset_file = root / "refs.jsonl"
    dataset_file.write_text(
        "".join(json.dumps({"prompt": f"p{i}", "reference": r}) + "\n" for i, r in enumerate(REFERENCES))
    )
    outputs = root / "outputs.jsonl"  # what the tiny SUT answers, sample by sample
    outputs.write_text("".join(json.dumps({"reference": p}) + "\n" for p in PREDICTIONS))
    log = tiny_sut(root / "run", "--scenario", "Offline", "--samples", "3", "--texts", str(outputs))
    return log, load_dataset(str(dataset_file))


def _llama31_8b() -> Benchmark:
    bm = load_round("v5.1").benchmark("llama3.1-8b")
    assert bm is not None
    return bm


def test_score_genuine_log(scored_run: tuple[Path, Dataset]) -> None:
    log, dataset = scored_run
    score = score_accuracy(log, dataset, _llama31_8b(), byte_detokenize)
    assert score.gen_num == 3 and score.missing_samples == 0 and score.duplicate_entries == 0
    assert score.rouge1 == pytest.approx((100 * 12 / 13 + 100 + 100) / 3, abs=1e-4)
    assert score.rougeL == pytest.approx((100 * 12 / 13 + 50 + 100) / 3, abs=1e-4)
    assert score.rougeLsum == pytest.approx((100 * 12 / 13 + 100 + 100) / 3, abs=1e-4)
    # Each output is its UTF-8 bytes plus one EOS.
    assert score.gen_tok_len == sum(len(p.encode()) + 1 for p in PREDICTIONS)
    assert score.tokens_per_sample == round(score.gen_tok_len / 3, 1)
    # gen_len counts characters after the sentence split (one sentence per line), as the reference.
    assert score.gen_len == sum(len(p) for p in PREDICTIONS)  # ". " became ".\n": same length
    assert score.exact_match is None  # llama3.1-8b has no exact-match target
    assert score.accuracy_log_sha256 == hashlib.sha256(log.read_bytes()).hexdigest()


def test_accuracy_txt_matches_round_patterns(scored_run: tuple[Path, Dataset], tmp_path: Path) -> None:
    log, dataset = scored_run
    rnd = load_round("v5.1")
    score = score_accuracy(log, dataset, _llama31_8b(), byte_detokenize)
    out = tmp_path / "accuracy.txt"
    write_accuracy_txt(score, out, log)
    lines = out.read_text().splitlines()
    found: dict[str, float] = {}
    for line in lines:
        for metric, pattern in rnd.acc_patterns.items():
            m = re.match(pattern, line)
            if m:
                found[metric] = float(m.group(1))
    expected = score.metrics()
    for bm_name in ("llama3.1-8b", "llama2-70b-99"):
        bm = rnd.benchmark(bm_name)
        assert bm is not None
        for target in (*bm.accuracy_targets, *bm.accuracy_upper_limits):
            assert found[target.metric] == pytest.approx(expected[target.metric]), target.metric
    assert recorded_hash(lines) == hashlib.sha256(log.read_bytes()).hexdigest()
    assert "Results" in lines


def test_judgement(scored_run: tuple[Path, Dataset]) -> None:
    log, dataset = scored_run
    bm = _llama31_8b()
    score = score_accuracy(log, dataset, bm, byte_detokenize)
    # Three samples are not the official 13368: the round's targets do not apply.
    (info,) = score.findings(bm)
    assert info.rule == "RUN-ACC-SUBSET" and info.severity is Severity.INFO
    # Treated as the full official set, ROUGE passes but the summed gen_len is far below the target.
    full = bm.model_copy(update={"dataset_size": 3})
    errors = score.findings(full)
    assert [f.rule for f in errors] == ["RUN-ACC-TARGET"] and "GEN_LEN" in errors[0].message
    # Against a reference run of the same model and data: equal scores pass, a better reference fails us.
    assert score.findings(bm, reference=score) == []
    better = score.model_copy(update={"rouge1": score.rouge1 * 1.05 if score.rouge1 else None})
    (worse,) = score.findings(bm, reference=better)
    assert worse.rule == "RUN-ACC-TARGET" and "ROUGE1" in worse.message and "reference run" in worse.message
    other = score.model_copy(update={"dataset": "other.jsonl"})
    assert [f.rule for f in score.findings(bm, reference=other)] == ["RUN-ACC-REFERENCE"]


def test_partial_log_is_flagged(scored_run: tuple[Path, Dataset]) -> None:
    log, dataset = scored_run
    bigger = dataset.model_copy(
        update={"samples": (*dataset.samples, dataset.samples[0].model_copy(update={"index": 3}))}
    )
    score = score_accuracy(log, bigger, _llama31_8b(), byte_detokenize)
    assert score.missing_samples == 1
    assert "RUN-ACC-COVERAGE" in {f.rule for f in score.findings(_llama31_8b())}


def test_simulated_is_labelled(scored_run: tuple[Path, Dataset], tmp_path: Path) -> None:
    log, dataset = scored_run
    score = score_accuracy(
        log, dataset.model_copy(update={"simulated": True}), _llama31_8b(), byte_detokenize
    )
    out = tmp_path / "accuracy.txt"
    write_accuracy_txt(score, out, log)
    assert "SIMULATED" in out.read_text().splitlines()[0]
    assert all("simulated" in f.message for f in score.findings(_llama31_8b()))


def test_scoring_errors(scored_run: tuple[Path, Dataset], tmp_path: Path) -> None:
    log, dataset = scored_run
    small = dataset.model_copy(update={"samples": dataset.samples[:1]})
    with pytest.raises(UnusableInput, match=r"qsl_idx .* is not in data set"):
        score_accuracy(log, small, _llama31_8b(), byte_detokenize)
    no_ref = dataset.model_copy(
        update={"samples": tuple(s.model_copy(update={"reference": None}) for s in dataset.samples)}
    )
    with pytest.raises(UnusableInput, match="has no reference"):
        score_accuracy(log, no_ref, _llama31_8b(), byte_detokenize)
    with pytest.raises(UnusableInput, match="wrong --dtype"):
        score_accuracy(log, dataset, _llama31_8b(), byte_detokenize, dtype=TokenDtype.INT64)


TOKEN_SERVER_TOKENIZER = Path(__file__).resolve().parents[2] / "examples" / "token-server-tokenizer"


@pytest.mark.parametrize(
    ("data", "dtype", "bad"),
    [
        ("FFFFFFFF", "int32", "-1"),  # int32 -1
        ("0000000000000080", "int64", "-9223372036854775808"),
        ("FFFFFFFFFFFFFF7F", "int64", "9223372036854775807"),
        ("FFFF", "int16", "-1"),
        ("FFFFFF7F", "int32", "2147483647"),  # past the vocabulary: the tokenizer would drop it without a word
        ("01000000" + "94000000", "int32", "148"),  # the first id past this tokenizer's 148
    ],
)
def test_token_ids_the_tokenizer_does_not_have_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], data: str, dtype: str, bad: str
) -> None:
    from loadgen_sut.cli import main

    log = tmp_path / "mlperf_log_accuracy.json"
    log.write_text(f'[\n{{ "seq_id" : 0, "qsl_idx" : 1, "data" : "{data}", "token_count" : 1 }}\n]\n')
    argv = ["score", "--accuracy-log", str(log), "--dataset", "builtin", "--benchmark", "llama3.1-8b"]
    assert main([*argv, "--tokenizer", str(TOKEN_SERVER_TOKENIZER), "--dtype", dtype]) == 2
    err = capsys.readouterr().err
    assert f"{log}:2: entry 0 (qsl_idx 1): token id {bad} is not in the tokenizer's vocabulary (0 to 147)" in err
    assert "internal error" not in err


def test_negative_token_ids_are_refused_whatever_the_decoder(tmp_path: Path) -> None:
    log = tmp_path / "mlperf_log_accuracy.json"
    log.write_text('[\n{ "seq_id" : 0, "qsl_idx" : 0, "data" : "FFFFFFFF", "token_count" : 1 }\n]\n')
    with pytest.raises(UnusableInput, match=r"token id -1 is not in the tokenizer's vocabulary \(none negative\)"):
        score_accuracy(log, load_dataset("builtin"), _llama31_8b(), byte_detokenize)
