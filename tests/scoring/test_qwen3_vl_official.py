"""Our qwen3-vl score against the official ``evaluation.py`` on the same accuracy logs (tests/fixtures/official/qwen3-vl).

Each case holds a genuine LoadGen accuracy log and what mlcommons/inference's
``multimodal/qwen3-vl/src/mlperf_inf_mm_q3vl/evaluation.py`` (b66003e1) printed and wrote on it, unedited
(``make_oracle.sh``; the README says how): ``perfect`` and ``cut`` are logs of ``inference-audit run`` with the
simulated engine (its UTF-8 text responses: every answer whole, or answers cut at random lengths), ``handwritten``
a log of hand-written answers written as the reference SUT writes them (``tests/fixtures/qwen3_vl/text_sut.py``). The
official script read them without any conversion; here the same logs are scored by
``loadgen_sut.scoring`` against the same synthetic catalogue, and must give the same F1 (to the last bit: the
same arithmetic), the same number of unparsable responses, the same samples found unparsable, and the same
results line in accuracy.txt.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
from pathlib import Path

import pytest

from checker.parsers.accuracy_log import parse_accuracy_log
from loadgen_sut.datasets import Dataset, load_dataset
from loadgen_sut.scoring.qwen3_vl import predicted_category
from loadgen_sut.scoring.score import accuracy_txt, score_accuracy
from rules.models import Benchmark
from rules.registry import load_round

ROOT = Path(__file__).resolve().parents[1] / "fixtures"
ORACLE = ROOT / "official" / "qwen3-vl"
CASES = ["perfect", "cut", "handwritten"]
# what the official run printed (evaluation.py lines 236-242 and 375-377)
UNPARSABLE_RE = re.compile(r"^.*? - (\d+) responses cannot be parsed against the expected schema\. Results:$", re.M)
ERROR_SAMPLE_RE = re.compile(r"\(for the sample at index (\d+)\)cannot be validated against the expected schema")


@pytest.fixture(scope="module")
def catalogue(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    spec = importlib.util.spec_from_file_location("qwen3_vl_fixture", ROOT / "qwen3_vl" / "make_fixture.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    # the same six products make_oracle.sh gave the official script (written by code: the same bytes every time)
    return load_dataset(f"shopify:{mod.write_hf(tmp_path_factory.mktemp('shopify'))}")


def _bench() -> Benchmark:
    bm = load_round("v6.1").benchmark("qwen3-vl-235b-a22b")
    assert bm is not None
    return bm


def _official_results_line(case: str) -> str:
    (line,) = [x for x in (ORACLE / case / "official_accuracy.txt").read_text(encoding="utf-8").splitlines() if x.startswith("{")]
    return line


@pytest.mark.parametrize("case", CASES)
def test_same_score_as_the_official_script(case: str, catalogue: Dataset) -> None:
    log = ORACLE / case / "mlperf_log_accuracy.json"
    score = score_accuracy(log, catalogue, _bench(), None)  # UTF-8 text: no tokenizer
    assert score.accuracy_log_format == "utf8_text" and score.gen_num == 6 and score.duplicate_entries == 0
    official = _official_results_line(case)
    assert score.f1_hierarchical == json.loads(official)["f1"]  # exact: the same sums and the same formula
    printed = (ORACLE / case / "official.log").read_text(encoding="utf-8")
    (unparsable,) = UNPARSABLE_RE.findall(printed)
    assert score.unparsable_responses == int(unparsable)
    # the samples each side found unparsable
    entries = parse_accuracy_log(log).entries
    by_index = {s.index: s for s in catalogue.samples}
    ours = {e.qsl_idx for e in entries if not predicted_category(e.text(), by_index[e.qsl_idx].reference or "")[1]}
    assert ours == {int(i) for i in ERROR_SAMPLE_RE.findall(printed)}
    # accuracy.txt: the same results line (json.dumps({"f1": ...}, sort_keys=True)), read by the same pattern
    ours_txt = accuracy_txt(score, "0" * 64)
    assert official in ours_txt.splitlines()
    pattern = re.compile(load_round("v6.1").acc_patterns["F1_HIERARCHICAL"])
    found = [m.group(1) for line in ours_txt.splitlines() if (m := pattern.match(line))]
    official_match = pattern.match(official)
    assert official_match is not None and found == [official_match.group(1)]


def test_the_cases_cover_what_they_are_for(catalogue: Dataset) -> None:
    scores = {c: score_accuracy(ORACLE / c / "mlperf_log_accuracy.json", catalogue, _bench(), None) for c in CASES}
    assert scores["perfect"].f1_hierarchical == 1.0 and scores["perfect"].unparsable_responses == 0
    cut = scores["cut"]  # some answers whole, some cut (unparsable: the pad path)
    assert cut.unparsable_responses is not None and 0 < cut.unparsable_responses < 6
    assert cut.f1_hierarchical is not None and 0 < cut.f1_hierarchical < 1
    assert cut.tokens_per_sample is not None  # that run had token latencies on: LoadGen logged the engine's counts
    assert scores["handwritten"].f1_hierarchical == pytest.approx(8 / 21, abs=1e-15)  # test_qwen3_vl_scoring.py


def test_official_hash_is_of_its_results_line() -> None:
    # evaluation.py lines 403-411: hash= is the SHA-256 of the results line, not of the accuracy log (which
    # truncate_accuracy_log.py records when it truncates); ours is the log's (check-submission compares it)
    for case in CASES:
        text = (ORACLE / case / "official_accuracy.txt").read_text(encoding="utf-8")
        (value,) = re.findall(r"^hash=([0-9a-f]{64})$", text, re.M)
        assert value == hashlib.sha256(_official_results_line(case).encode()).hexdigest()
        log_hash = hashlib.sha256((ORACLE / case / "mlperf_log_accuracy.json").read_bytes()).hexdigest()
        assert value != log_hash


def test_score_command_reads_the_text_log(catalogue: Dataset, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # ``inference-audit score`` on the handwritten log, without a tokenizer (the log holds text): the official F1 and
    # results line
    from loadgen_sut.cli import main

    out = tmp_path / "accuracy.txt"
    argv = ["score", "--benchmark", "qwen3-vl-235b-a22b", "--round", "v6.1", "--dataset", f"shopify:{catalogue.source}"]
    argv += ["--accuracy-log", str(ORACLE / "handwritten" / "mlperf_log_accuracy.json")]
    assert main([*argv, "--accuracy-txt", str(out)]) == 0
    official = _official_results_line("handwritten")
    assert f"F1_HIERARCHICAL = {json.loads(official)['f1']:g}" in capsys.readouterr().out
    assert official in out.read_text(encoding="utf-8").splitlines()
    # a benchmark whose log holds token ids still needs --tokenizer (exit 2, one line)
    argv[2] = "llama3.1-8b"
    assert main([*argv[:5], "--dataset", "x.pkl", "--accuracy-log", argv[-1]]) == 2
    assert "--tokenizer DIR is needed" in capsys.readouterr().err
