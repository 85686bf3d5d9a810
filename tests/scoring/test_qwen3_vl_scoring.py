"""qwen3-vl-235b-a22b accuracy: the category hierarchical F1 of evaluation.py, on values known independently.

Expected numbers are either worked out by hand below (the arithmetic is written out) or taken from the
reference implementations' own tests (mlcommons/endpoints ``tests/unit/evaluation/test_scoring.py``:
``TestCalculateHierarchicalF1`` and ``TestParseResponseToCategory``). The end-to-end part scores a genuine
LoadGen accuracy log holding the UTF-8 text of hand-written responses, as the reference SUT logs them
(tests/fixtures/qwen3_vl/text_sut.py), against the synthetic catalogue in the official parquet layout, then reads
accuracy.txt back with the round's own F1_HIERARCHICAL pattern. A log of token ids (this harness's earlier
format) is still read with a tokenizer, and refused without one.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType

import pytest

from checker.findings import Severity, UnusableInput
from loadgen_sut.datasets import Dataset, load_dataset
from loadgen_sut.scoring.qwen3_vl import (
    PRED_CATEGORY_PAD,
    hierarchical_components,
    hierarchical_f1,
    predicted_category,
)
from loadgen_sut.scoring.score import accuracy_txt, score_accuracy, write_accuracy_txt
from rules.models import Benchmark, Scenario
from rules.registry import load_round

RunTinySut = Callable[..., Path]
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "qwen3_vl" / "make_fixture.py"
TEXT_SUT = FIXTURE.with_name("text_sut.py")


def run_text_sut(outdir: Path, texts: Sequence[str], *args: str) -> Path:
    """A genuine LoadGen accuracy log of ``texts`` as UTF-8, as the qwen3-vl reference SUT logs its answers."""
    outdir.mkdir(parents=True, exist_ok=True)
    given = outdir / "texts.jsonl"
    given.write_text("".join(json.dumps({"reference": t}) + "\n" for t in texts), encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, str(TEXT_SUT), str(outdir), "--texts", str(given), *args],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return outdir / "mlperf_log_accuracy.json"


def load_fixture_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("qwen3_vl_fixture", FIXTURE)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def byte_detokenize(ids: Sequence[int]) -> str:
    """The tiny SUT's tokenizer (token-id logs only): UTF-8 bytes + 3; ids 0-2 are special and skipped."""
    return bytes(i - 3 for i in ids if i >= 3).decode("utf-8")


def _answer(category: str, brand: str = "x", secondhand: bool = False) -> str:
    return json.dumps({"category": category, "brand": brand, "is_secondhand": secondhand})


# ---------------------------------------------------------------- the reference's own test values


def test_endpoints_reference_values() -> None:
    # TestCalculateHierarchicalF1 in mlcommons/endpoints: perfect 1.0, zero 0.0, partial 0.6, empty 0.0
    assert hierarchical_f1([("A > B > C", "A > B > C"), ("X > Y", "X > Y")]).f1 == 1.0
    assert hierarchical_f1([("A > B", "X > Y"), ("P > Q", "M > N")]).f1 == 0.0
    assert hierarchical_f1([("A > B > X", "A > B > C"), ("A > X", "A > B")]).f1 == pytest.approx(0.6, abs=1e-12)
    assert hierarchical_f1([]).f1 == 0.0
    # TestMatchHierarchicalPaths
    assert hierarchical_components("Clothing > Shirts > Polo", "Clothing > Shirts > Polo") == (3, 3, 3)
    assert hierarchical_components("Clothing > Shirts", "Clothing > Shirts > Polo") == (2, 2, 3)
    assert hierarchical_components("Electronics > Phones", "Clothing > Shirts > Polo") == (0, 2, 3)


def test_endpoints_reference_parsing() -> None:
    # TestParseResponseToCategory: raw JSON only, whitespace around it and inside the values allowed
    assert predicted_category(_answer("Clothing > Shirts", "Nike"), "Clothing > Shirts") == ("Clothing > Shirts", True)
    spaced = '  { "category" : " A > B ", "brand": "x", "is_secondhand": false }  '
    category, parsed = predicted_category(spaced, "A > B")
    assert parsed and hierarchical_components(category, "A > B") == (2, 2, 2)  # levels are stripped
    pad3 = f"{PRED_CATEGORY_PAD} > {PRED_CATEGORY_PAD} > {PRED_CATEGORY_PAD}"
    assert predicted_category("not json", "A > B > C") == (pad3, False)
    pad2 = f"{PRED_CATEGORY_PAD} > {PRED_CATEGORY_PAD}"
    assert predicted_category('{"brand": "Nike", "is_secondhand": false}', "Electronics > Phones") == (pad2, False)
    assert predicted_category('{"category": "x", "brand": "y"}', "A > B") == (pad2, False)  # no is_secondhand
    fenced = '```json\n{"category": "X > Y", "brand": "x", "is_secondhand": false}\n```'
    assert predicted_category(fenced, "A > B") == (pad2, False)
    assert predicted_category("anything", "Electronics") == (PRED_CATEGORY_PAD, False)


def test_schema_is_strict() -> None:
    # ProductMetadata forbids extra fields (schema.py line 140: extra="forbid") and wants the three types
    extra = '{"category": "A > B", "brand": "x", "is_secondhand": false, "price": 3}'
    assert predicted_category(extra, "A > B")[1] is False
    assert predicted_category('{"category": ["A", "B"], "brand": "x", "is_secondhand": false}', "A > B")[1] is False
    assert predicted_category('[{"category": "A > B", "brand": "x", "is_secondhand": false}]', "A > B")[1] is False
    assert predicted_category('{"category": "A > B", "brand": "x", "is_secondhand": false} trailing', "A > B")[1] is False


# ---------------------------------------------------------------- hand-computed aggregates


def test_micro_average_by_hand() -> None:
    # intersections 3 + 0 + 1 = 4; predicted levels 3 + 1 + 4 = 8; true levels 3 + 2 + 2 = 7
    # hP = 4/8 = 0.5, hR = 4/7; F1 = 2 * 0.5 * (4/7) / (0.5 + 4/7) = (4/7) / (15/14) = 8/15
    pairs = [("A > B > C", "A > B > C"), ("Z", "A > B"), ("A > C > D > E", "A > B")]
    h = hierarchical_f1(pairs)
    assert (h.intersection, h.predicted_levels, h.true_levels) == (4, 8, 7)
    assert h.precision == pytest.approx(0.5) and h.recall == pytest.approx(4 / 7)
    assert h.f1 == pytest.approx(8 / 15, abs=1e-15)
    # not the mean of per-sample F1s: those are 1, 0 and 2*1/(4+2) = 1/3, mean 4/9
    assert h.f1 != pytest.approx(4 / 9)


def test_a_mismatch_ends_the_match() -> None:
    # the second level differs: the equal third level does not count (longest common prefix only)
    assert hierarchical_components("A > X > C", "A > B > C") == (1, 3, 3)
    # the separator is " > " exactly: "A>B" is one level
    assert hierarchical_components("A>B", "A > B") == (0, 1, 2)


# ---------------------------------------------------------------- a genuine LoadGen log, end to end

# Responses for the six fixture samples (ground truths in tests/fixtures/qwen3_vl/make_fixture.py) and what
# each contributes (intersection, predicted levels, true levels):
RESPONSES = [
    # 0: exact: 4, 4, 4
    _answer("Clothing & Accessories > Clothing > Shirts > Polo Shirts", "giorgio armani"),
    # 1: wrong leaf: 2, 3, 3
    _answer("Sporting Goods > Cycling > Bicycle Parts", "Velo", True),
    # 2: stops two levels down, extra spaces around a level: 2, 2, 5
    _answer("Home & Garden >  Kitchen & Dining ", "Tazza"),
    # 3: fenced in a code block: unparsable, the pad path of 3 levels: 0, 3, 3
    "```json\n" + _answer("Office Supplies > Paper Products > Notebooks") + "\n```",
    # 4: first level wrong, one level longer: 0, 4, 3
    _answer("Electronics > Cameras > Film Cameras > 35mm", "Optika", True),
    # 5: no is_secondhand: unparsable, pad path of 4 levels: 0, 4, 4
    json.dumps({"category": "Home & Garden > Lawn & Garden > Watering & Irrigation > Garden Hoses", "brand": "GreenFlow"}),
]
# intersections 4+2+2+0+0+0 = 8; predicted 4+3+2+3+4+4 = 20; true 4+3+5+3+3+4 = 22
# hP = 8/20 = 2/5, hR = 8/22 = 4/11; F1 = 2 (2/5)(4/11) / (2/5 + 4/11) = (16/55) / (42/55) = 8/21
EXPECTED_F1 = 8 / 21
EXPECTED_P, EXPECTED_R = 2 / 5, 4 / 11


@pytest.fixture(scope="module")
def catalogue(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return load_fixture_module().write_hf(tmp_path_factory.mktemp("shopify_hf"))  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def genuine_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return run_text_sut(tmp_path_factory.mktemp("q3vl_log"), RESPONSES, "--scenario", "Offline")


def _bench() -> Benchmark:
    bm = load_round("v6.1").benchmark("qwen3-vl-235b-a22b")
    assert bm is not None
    return bm


def _f1_from_accuracy_txt(text: str) -> float | None:
    pattern = load_round("v6.1").acc_patterns["F1_HIERARCHICAL"]  # the HEAD checker's ACC_PATTERN
    for line in text.splitlines():
        m = re.match(pattern, line)
        if m:
            return float(m.group(1))
    return None


def test_score_genuine_log(catalogue: Path, genuine_log: Path, tmp_path: Path) -> None:
    ds: Dataset = load_dataset(f"shopify:{catalogue}")
    assert len(ds.samples) == len(RESPONSES)
    bench = _bench()
    assert bench.evaluator == "qwen3-vl" and bench.accuracy_log_format == "utf8_text"
    score = score_accuracy(genuine_log, ds, bench, None)  # UTF-8 text: no tokenizer
    assert score.gen_num == 6 and score.missing_samples == 0 and score.accuracy_log_format == "utf8_text"
    assert score.f1_hierarchical == pytest.approx(EXPECTED_F1, abs=1e-15)
    assert score.hierarchical_precision == pytest.approx(EXPECTED_P)
    assert score.hierarchical_recall == pytest.approx(EXPECTED_R)
    assert score.unparsable_responses == 2
    assert score.metrics()["F1_HIERARCHICAL"] == pytest.approx(EXPECTED_F1)
    out = tmp_path / "accuracy.txt"
    write_accuracy_txt(score, out, genuine_log)
    text = out.read_text(encoding="utf-8")
    assert _f1_from_accuracy_txt(text) == pytest.approx(EXPECTED_F1, abs=1e-15)
    # as evaluation.py writes it: json.dumps({"f1": F1}, sort_keys=True) on a line of its own
    (line,) = [x for x in text.splitlines() if x.startswith("{")]
    assert line == json.dumps({"f1": score.f1_hierarchical}) and json.loads(line)["f1"] == pytest.approx(EXPECTED_F1)
    assert re.search(r"^hash=[0-9a-f]{64}$", text, re.M)
    # use_token_latencies off (qwen3-vl's mlperf.conf): LoadGen logged no token counts, so none is claimed
    assert score.gen_tok_len is None and score.tokens_per_sample is None
    assert "tokens_per_sample" not in text and "UTF-8 text responses" in text and "dtype" not in text


def test_judgement_per_scenario(catalogue: Path, genuine_log: Path) -> None:
    ds = load_dataset(f"shopify:{catalogue}")
    score = score_accuracy(genuine_log, ds, _bench(), None)
    # six samples are not the official data set of any scenario: no target applies
    for scenario in (Scenario.OFFLINE, Scenario.INTERACTIVE):
        assert [f.rule for f in score.findings(_bench(), scenario=scenario)] == ["RUN-ACC-SUBSET"]
    # as if they were the Interactive subset (v6.1: 8000 samples, target 0.7878 x 0.99 = 0.779922)
    as_subset = _bench().model_copy(update={"accuracy_sample_count_by_scenario": {Scenario.INTERACTIVE: 6}})
    found = score.findings(as_subset, scenario=Scenario.INTERACTIVE)
    assert [f.rule for f in found] == ["RUN-ACC-TARGET"] and found[0].severity is Severity.ERROR
    assert "F1_HIERARCHICAL = 0.380952" in found[0].message and "0.779922" in found[0].message
    # ... while Offline still wants its 48289 samples
    assert [f.rule for f in score.findings(as_subset, scenario=Scenario.OFFLINE)] == ["RUN-ACC-SUBSET"]


def test_perfect_answers_pass_the_target(catalogue: Path, tmp_path: Path) -> None:
    ds = load_dataset(f"shopify:{catalogue}")
    answers = [s.answer or "" for s in ds.samples]  # every sample's perfect answer (what the simulated engine answers)
    log = run_text_sut(tmp_path / "run", answers, "--scenario", "Server", "--token-latencies")
    score = score_accuracy(log, ds, _bench(), None)
    assert score.f1_hierarchical == 1.0 and score.unparsable_responses == 0
    # with token latencies LoadGen logs each response's n_tokens: the engine's counts (here: words per answer)
    words = [len(a.split()) for a in answers]
    assert score.gen_tok_len == sum(words) and score.tokens_per_sample == pytest.approx(sum(words) / 6)
    as_offline = _bench().model_copy(update={"accuracy_sample_count_by_scenario": {Scenario.OFFLINE: 6}})
    assert score.findings(as_offline, scenario=Scenario.OFFLINE) == []
    assert _f1_from_accuracy_txt(accuracy_txt(score, "0" * 64)) == 1.0


def test_targets_in_rules_data() -> None:
    # HEAD checker constants.py lines 139-143: 0.7903 x 0.99 Offline/Server, 0.7878 x 0.99 Interactive;
    # accuracy-sample-count 48289 / 8000 / 48289 (lines 203-207)
    bm = _bench()
    targets = {s: bm.accuracy_targets_for(s)[0] for s in (Scenario.OFFLINE, Scenario.SERVER, Scenario.INTERACTIVE)}
    assert all(t.metric == "F1_HIERARCHICAL" for t in targets.values())
    assert targets[Scenario.OFFLINE].value == pytest.approx(0.7903 * 0.99)
    assert targets[Scenario.SERVER].value == pytest.approx(0.7903 * 0.99)
    assert targets[Scenario.INTERACTIVE].value == pytest.approx(0.7878 * 0.99)
    assert bm.accuracy_sample_count_by_scenario[Scenario.INTERACTIVE] == 8000
    assert bm.accuracy_sample_count_by_scenario[Scenario.OFFLINE] == 48289
    assert bm.interactive_target_latency_ns == 1_500_000_000 and bm.server_target_latency_ns == 12_000_000_000


# ---------------------------------------------------------------- what the log holds


def test_token_id_log_is_read_with_a_tokenizer(catalogue: Path, tmp_path: Path, tiny_sut: RunTinySut) -> None:
    # this harness's earlier format: int32 ids (here the tiny SUT's byte tokenizer), zero bytes in every entry
    texts = tmp_path / "responses.jsonl"
    texts.write_text("".join(json.dumps({"reference": r}) + "\n" for r in RESPONSES), encoding="utf-8")
    log = tiny_sut(tmp_path / "run", "--scenario", "Offline", "--samples", "6", "--texts", str(texts))
    ds = load_dataset(f"shopify:{catalogue}")
    score = score_accuracy(log, ds, _bench(), byte_detokenize)
    assert score.accuracy_log_format == "token_ids" and score.f1_hierarchical == pytest.approx(EXPECTED_F1, abs=1e-15)
    assert score.gen_tok_len == sum(len(r.encode("utf-8")) + 1 for r in RESPONSES)  # the ids as logged
    assert "the official evaluation.py cannot read it" in accuracy_txt(score, "0" * 64)
    with pytest.raises(UnusableInput, match=r"hold token ids \(zero bytes\), not the UTF-8 text .* evaluation\.py"):
        score_accuracy(log, ds, _bench(), None)


def _hand_log(path: Path, datas: Sequence[bytes]) -> Path:
    """An accuracy log laid out as LoadGen writes it, with the given response bytes (for refusals only)."""
    rows = [f'{{ "seq_id" : {i}, "qsl_idx" : {i}, "data" : "{d.hex().upper()}" }}' for i, d in enumerate(datas)]
    path.write_text("[\n" + ",\n".join(rows) + "\n]\n", encoding="utf-8")
    return path


def test_unreadable_text_logs_are_refused(catalogue: Path, tmp_path: Path) -> None:
    ds = load_dataset(f"shopify:{catalogue}")
    text = _answer("A > B").encode("utf-8")
    ids = b"".join(i.to_bytes(4, "little") for i in (7, 8, 9))
    with pytest.raises(UnusableInput, match=r"entries 1 and 0 disagree") as exc:
        score_accuracy(_hand_log(tmp_path / "mixed.json", [text, ids]), ds, _bench(), byte_detokenize)
    assert exc.value.line == 2
    with pytest.raises(UnusableInput, match=r"entry 1: the response is not UTF-8 text \(unexpected end of data at byte 3\)"):
        score_accuracy(_hand_log(tmp_path / "latin1.json", [text, "café".encode("latin-1")]), ds, _bench(), None)
    # an empty response (a failed request, which the reference completes empty) is an unparsable answer, not an error
    score = score_accuracy(_hand_log(tmp_path / "empty.json", [text, b""]), ds, _bench(), None)
    assert score.accuracy_log_format == "utf8_text" and score.unparsable_responses == 1
