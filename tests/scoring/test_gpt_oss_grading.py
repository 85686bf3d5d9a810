"""gpt-oss-120b's evaluators one by one, its aggregation with repeats, the simulated engine's answers, and the
generation settings the round fixes (caps per mode, sampling, special tokens) as the engines receive them.

Expected extractions follow the rules of the reference's ``eval_accuracy.py`` as documented in
``loadgen_sut.scoring.gpt_oss``; expected scores are computed by hand from the counts."""

from __future__ import annotations

import pytest

from loadgen_sut.datasets import Sample
from loadgen_sut.engines.base import GenerationRequest
from loadgen_sut.engines.openai_http import OpenAIConfig, OpenAIEngine
from loadgen_sut.generation import Decoding, generation_plan
from loadgen_sut.scoring import deepseek
from loadgen_sut.scoring.gpt_oss import (
    DatasetComponent,
    Family,
    SampleGrade,
    extract_choice,
    extract_code,
    family_of,
    final_section,
    grade_output,
    repeats_of,
    score_gpt_oss,
    simulated_answer,
    summarize,
)
from loadgen_sut.settings import TestMode
from rules.models import Benchmark
from rules.registry import load_round

A = "<|channel|>analysis<|message|>"
F = "<|end|><|start|>assistant<|channel|>final<|message|>"
R = "<|return|>"


@pytest.mark.parametrize(
    ("text", "final"),
    [
        (f"{A}think{F} The answer {R}", "The answer"),
        (f"{A}think<|end|><|start|>assistant<|channel|>final 明<|message|>B{R}", "B"),  # corrupted markers
        (f"{A}think<|end|><|start|>assistant<|channel|>final537<|message|>C{R}", "C"),
        (f"{A}think{F}no return token", "no return token"),  # up to the end
        (f"{A}only analysis", f"{A}only analysis"),  # no final channel: the whole text
        (f"{F}first{R}{F}second{R}", "first"),  # the first final channel
        ("   ", ""),
    ],
)
def test_final_section(text: str, final: str) -> None:
    assert final_section(text) == final


@pytest.mark.parametrize(
    ("text", "last", "letter"),
    [
        (f"{A}Answer: B{F}**C**{R}", "D", "C"),  # the final channel wins over the analysis' draft
        (f"{A}x{F}D) because...{R}", "D", "D"),  # a leading letter
        (f"{A}x{F}Because the field is zero{R}", "D", None),  # 'B' of 'Because' is no answer
        (f"{A}x{F}So, answer. c{R}", "D", "C"),  # "Answer." then the letter, any case
        (f"{A}x{F}['A']{R}", "D", "A"),  # a stringified list
        ("Reasoning...\nFINAL ANSWER: (b)", "D", "B"),  # no harmony: the whole text's last ANSWER
        (f"{A}x{F}I pick E{R}", "D", None),  # E is not an option of GPQA
        (f"{A}x{F}We pick E and then H.{R}", "J", "H"),  # MMLU: the last standalone letter of the final channel
        (f"{A}x{F}I pick E and then H.{R}", "J", "I"),  # ... but a leading letter comes first (I is an option)
        (f"{A}ANSWER: G{F}nothing here{R}", "J", "G"),  # the whole text's ANSWER before the loose letter
        ("", "D", None),
    ],
)
def test_extract_choice(text: str, last: str, letter: str | None) -> None:
    assert extract_choice(text, last) == letter


def test_choice_extraction_differs_from_deepseek_where_the_reference_does() -> None:
    text = f"{A}Answer: B{F}**C**{R}"
    assert extract_choice(text, "D") == "C" and deepseek.extract_choice(text, "D") == "B"


@pytest.mark.parametrize(
    ("text", "code"),
    [
        (f"{A}```python\nx = 1\n```{F}```python\nx = 2\n```\n```python\nx = 3\n```{R}", "x = 3"),  # last of final
        (f"{A}x{F}```py\nprint(1)\n```{R}", "print(1)"),  # a plain block, language tag dropped
        (f"{A}```python\nx = 1\n```{F}no code{R}", "x = 1"),  # none in the final channel: the whole text
        ("```python\na = 1\n```\ntext\n```python\nb = 2\n```", "b = 2"),  # no harmony: the last block
        ("no code at all", None),
        (f"{A}x{F}```python\n```{R}", ""),
    ],
)
def test_extract_code(text: str, code: str | None) -> None:
    assert extract_code(text) == code


def test_code_extraction_differs_from_deepseek_where_the_reference_does() -> None:
    text = "```python\na = 1\n```\n```python\nb = 2\n```"
    assert extract_code(text) == "b = 2" and deepseek.extract_code(text) == "a = 1"


@pytest.mark.parametrize(
    ("name", "family", "repeats"),
    [
        ("aime25", Family.AIME, 8),
        ("GPQA_Diamond", Family.GPQA, 5),  # lower-cased first
        ("livecodebench_v6", Family.LIVECODEBENCH, 3),
        ("mmlu_pro_math", Family.MMLU_PRO, 1),  # mmlu_pro is tried before mmlu
        ("mmlu", Family.MMLU, 1),
        ("math500", Family.MATH500, 1),
        ("aime2024", Family.AIME, 1),  # only the round's three names have repeats
    ],
)
def test_family_and_repeats(name: str, family: Family, repeats: int) -> None:
    assert family_of(name) is family and repeats_of(name) == repeats


def test_unknown_sub_data_set_is_refused() -> None:
    with pytest.raises(ValueError, match="no gpt-oss-120b evaluator"):
        family_of("hellaswag")


def test_aime_and_math_graders() -> None:
    ok = grade_output(0, "aime25", f"{A}Answer: 3{F}\\boxed{{033}}{R}", "33", None)
    assert isinstance(ok, SampleGrade) and ok.correct and ok.extracted == "33"
    off = grade_output(1, "aime25", f"{A}x{F}Answer: 12.{R}", "12", None)  # "12." is not taken
    assert isinstance(off, SampleGrade) and off.correct is False and off.extracted is None
    math = grade_output(2, "math500", f"{A}x{F}$\\boxed{{\\dfrac{{1}}{{2}}}}${R}", "\\frac{1}{2}", None)
    assert isinstance(math, SampleGrade) and math.correct


def test_code_without_execution_is_not_scored() -> None:
    g = grade_output(0, "livecodebench_v6", f"{A}x{F}```python\nprint(1)\n```{R}", "qid", None)
    assert isinstance(g, SampleGrade) and g.correct is None and g.note == "code execution not enabled"
    none = grade_output(1, "livecodebench_v6", f"{A}x{F}no program{R}", "qid", None)
    assert isinstance(none, SampleGrade) and none.correct is False


def _grades(dataset: str, correct: int, total: int) -> list[SampleGrade]:
    return [
        SampleGrade(qsl_idx=i, dataset=dataset, family=family_of(dataset), extracted=None, correct=i < correct)
        for i in range(total)
    ]


def test_summarize_is_the_repeat_weighted_score() -> None:
    # the official data set's sizes: 30 AIME problems x 8, 198 GPQA x 5, 1055 LiveCodeBench x 3 = 4395 samples
    grades = _grades("aime25", 200, 240) + _grades("gpqa_diamond", 800, 990) + _grades("livecodebench_v6", 2500, 3165)
    score = summarize(grades, [1] * len(grades), None)
    # by hand: (200/8 + 800/5 + 2500/3) / (240/8 + 990/5 + 3165/3) = (25 + 160 + 833.333...) / (30 + 198 + 1055)
    assert score.final_score_percentage == pytest.approx(100 * (25 + 160 + 2500 / 3) / 1283)
    assert score.exact_match == 79.371  # 79.3713..., 3 decimals as printed for the checker
    assert [(c.dataset, c.repeats) for c in score.components] == [
        ("aime25", 8),
        ("gpqa_diamond", 5),
        ("livecodebench_v6", 3),
    ]
    comp = score.components[0]
    assert isinstance(comp, DatasetComponent) and (comp.component_score, comp.max_component_score) == (25.0, 30.0)


def test_score_counts_by_lower_cased_name() -> None:
    out = f"{A}x{F}Answer: A{R}"
    score = score_gpt_oss([0, 1], [out, out], [3, 5], ["A", "B"], ["GPQA_diamond", "gpqa_diamond"])
    (comp,) = score.components
    assert (comp.dataset, comp.correct, comp.samples) == ("gpqa_diamond", 1, 2)
    assert score.exact_match == 50.0 and score.tokens_per_sample == 4.0


@pytest.mark.parametrize(
    ("subset", "truth"),
    [("aime25", "70"), ("gpqa_diamond", "C"), ("mmlu_pro", "H"), ("math500", "\\frac{1}{2}")],
)
def test_simulated_answers_grade_as_the_ground_truth(subset: str, truth: str) -> None:
    answer = simulated_answer(Sample(index=0, input_ids=(1,), reference=truth, subset=subset))
    assert answer is not None and "SIMULATED" in answer
    g = grade_output(0, subset, answer, truth, None)
    assert isinstance(g, SampleGrade) and g.correct


def test_simulated_code_answer_is_a_program_that_cannot_pass() -> None:
    answer = simulated_answer(Sample(index=0, input_ids=(1,), reference="abc301_a", subset="livecodebench_v6"))
    assert answer is not None and extract_code(answer) == "pass"
    assert simulated_answer(Sample(index=0, input_ids=(1,), reference=None, subset="aime25")) is None


# ---------------------------------------------------------------------------------------------- generation


def _bench(name: str, round_name: str = "v6.1") -> Benchmark:
    bm = load_round(round_name).benchmark(name)
    assert bm is not None
    return bm


def test_gpt_oss_generation_plan() -> None:
    plan = generation_plan(_bench("gpt-oss-120b"), min_new_tokens=2)
    perf, acc = plan.for_mode(TestMode.PERFORMANCE_ONLY), plan.for_mode(TestMode.ACCURACY_ONLY)
    assert (perf.max_new_tokens, acc.max_new_tokens) == (10000, 32768)  # RULES_HEAD:383-384
    for spec in (perf, acc):
        assert (spec.greedy, spec.temperature, spec.top_p, spec.top_k) == (False, 1.0, 1.0, 0)
        assert spec.skip_special_tokens is False
    assert plan.record()["max_new_tokens"] == 10000 and plan.record()["accuracy"]["max_new_tokens"] == 32768
    assert "10000 (performance) / 32768 (accuracy); sampling, temperature=1, top_p=1, top_k disabled" in plan.describe()
    both = generation_plan(_bench("gpt-oss-120b"), max_new_tokens=64)  # the command line overrides both caps
    assert both.performance.max_new_tokens == both.accuracy.max_new_tokens == 64 and "accuracy" not in both.record()


def test_greedy_benchmarks_are_unchanged() -> None:
    plan = generation_plan(_bench("llama3.1-8b"), min_new_tokens=2)
    assert plan.performance == plan.accuracy
    assert (plan.accuracy.max_new_tokens, plan.accuracy.greedy, plan.accuracy.temperature) == (128, True, None)
    assert plan.accuracy.skip_special_tokens is None and plan.describe() == "max_new_tokens 128; greedy"


def test_every_decoding_rule_of_the_rules_data_is_read() -> None:
    for round_name in ("v5.0", "v5.1", "v6.0", "v6.1"):
        for bm in load_round(round_name).benchmarks.values():
            d = Decoding.parse(bm.decoding)
            if bm.decoding and bm.decoding.startswith("beam"):
                assert d.greedy and d.note and "not supported" in d.note
            elif bm.decoding and bm.decoding.startswith("sampling"):
                assert (d.greedy, d.temperature, d.top_p, d.top_k) == (False, 1.0, 1.0, 0)


def _body(flavor: str, **kw: object) -> dict[str, object]:
    engine = OpenAIEngine(OpenAIConfig(endpoints=("http://127.0.0.1:1",), model="m", flavor=flavor))
    req = GenerationRequest(sample_index=0, input_ids=(1, 2), prompt="q", max_new_tokens=8, **kw)  # type: ignore[arg-type]
    return engine._body(req)[1]


def test_sampling_reaches_the_engines_as_each_accepts_it() -> None:
    sampling = {"greedy": False, "temperature": 1.0, "top_p": 1.0, "top_k": 0, "skip_special_tokens": False}
    for flavor in ("vllm", "sglang"):
        body = _body(flavor, **sampling)
        assert (body["temperature"], body["top_p"], body["top_k"], body["skip_special_tokens"]) == (1.0, 1.0, -1, False)
    generic = _body("generic", **sampling)
    assert (generic["temperature"], generic["top_p"]) == (1.0, 1.0)
    assert "top_k" not in generic and "skip_special_tokens" not in generic  # not an OpenAI parameter
    greedy = _body("vllm")
    assert (greedy["temperature"], greedy["top_p"]) == (0.0, 1.0) and "top_k" not in greedy
    assert "skip_special_tokens" not in greedy
