"""deepseek-r1 answer extraction and grading, case by case (loadgen_sut.scoring.deepseek, math_answer).

Each case states what the reference evaluator (language/deepseek-r1/eval_accuracy.py with the
PRM800K grader) decides for it; quirks of the reference are kept and marked as such.
"""

from __future__ import annotations

import pytest

from loadgen_sut.scoring.deepseek import (
    Subset,
    extract_aime,
    extract_boxed,
    extract_choice,
    extract_code,
    grade_aime,
    grade_choice,
    grade_sample,
    score_deepseek,
    subset_of,
)
from loadgen_sut.scoring.math_answer import grade_math_answer, mathd_normalize, prm_normalize, split_elements

# (model output, last option letter, extracted letter)
CHOICE_CASES = [
    ("Let me think...\nAnswer: C", "D", "C"),
    ("ANSWER: (b)", "D", "B"),
    ("Final Answer: D.", "D", "D"),
    ("final answer = a", "D", "A"),
    ("FINAL   ANSWER:(c) because", "D", "C"),
    ("Answer: A\nwait, no.\nAnswer: C", "D", "C"),  # the last one counts
    ("The answer is B", "D", None),  # no "Answer:"-like marker: no answer for GPQA
    ("Answer: E", "D", None),  # out of range for GPQA
    ("Answer: Bob", "D", None),  # a letter must not run into a word
    ("['Answer: B']", "D", "B"),  # stringified list artefact
    ("Answer:\\nB", "D", "B"),  # a literal backslash-n is a newline
    ("", "D", None),
    ("Answer: J", "J", "J"),
    ("answer: (h)", "J", "H"),
    ("I would pick option G here", "J", "G"),  # MMLU-Pro fallback: the last standalone letter
    ("it is a guess", "J", "A"),  # reference quirk: the article "a" is a standalone letter
    ("nothing matches", "J", None),
]


@pytest.mark.parametrize(("text", "last", "expected"), CHOICE_CASES)
def test_extract_choice(text: str, last: str, expected: str | None) -> None:
    assert extract_choice(text, last) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("so the result is \\boxed{\\frac{1}{2}}.", "\\frac{1}{2}"),
        ("\\boxed{\\left( 3, \\frac{\\pi}{2} \\right)} done", "\\left( 3, \\frac{\\pi}{2} \\right)"),
        ("first \\boxed{1}, finally \\boxed{2}", "2"),
        ("\\boxed{ 5 } and trailing text", "5"),
        ("\\boxed{\\text{(C)}}", "\\text{(C)}"),
        ("unbalanced \\boxed{3", None),
        ("no box, Answer: 7", None),
    ],
)
def test_extract_boxed(text: str, expected: str | None) -> None:
    assert extract_boxed(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("\\boxed{033}", 33),
        ("Reasoning.\nAnswer: 204", 204),
        ("\\boxed{12} and later Answer: 13", 12),  # a boxed integer wins over "Answer:"
        ("\\boxed{1000}", None),  # AIME answers are 0-999
        ("Answer: 12.5", None),
        ("\\boxed{x+1}", None),
        ("", None),
    ],
)
def test_extract_aime(text: str, expected: int | None) -> None:
    assert extract_aime(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Here:\n```python\nprint(1)\n```\n", "print(1)"),
        ("```python\na = 1\n```\nand\n```python\nb = 2\n```", "a = 1"),  # the first block
        ("```py\nprint(1)\n```", None),
        ("no code", None),
    ],
)
def test_extract_code(text: str, expected: str | None) -> None:
    assert extract_code(text) == expected


# (ground truth, given answer, correct?)
MATH_CASES = [
    ("\\frac{1}{2}", "0.5", True),
    ("\\frac{3}{4}", "\\dfrac{3}{4}", True),
    ("\\frac{3}{4}", "\\frac34", True),
    ("\\frac{1}{2}", "2/4", False),  # an unreduced fraction gets no credit
    ("\\left( 3, \\frac{\\pi}{2} \\right)", "(3,\\frac{\\pi}{2})", True),
    ("[1,2)", "(1,2)", False),  # interval brackets must agree
    ("2\\sqrt{2}", "\\sqrt{8}", True),  # sympy
    ("\\frac{\\sqrt{3}}{3}", "\\frac{1}{\\sqrt{3}}", True),
    ("x^2+1", "1+x^2", True),
    ("10", "10\\%", True),
    ("5", "x=5", True),
    ("1000", "1,000", True),
    ("3", "3.0", True),
    ("\\text{(C)}", "C", True),
    ("4", "4\\text{ cm}", True),
    ("90", "90^\\circ", True),
    ("2", "\\frac{4}{2}", False),  # an integer answer must be written as an integer
    ("5", "6", False),
    ("\\frac{1}{2}", "", False),
]


@pytest.mark.parametrize(("truth", "given", "expected"), MATH_CASES)
def test_grade_math(truth: str, given: str, expected: bool) -> None:
    assert grade_math_answer(given, truth) is expected


def test_math_normalisations() -> None:
    assert mathd_normalize(" \\dfrac12 ") == "\\frac{1}{2}"
    assert mathd_normalize("\\text{Monday}") == "Monday"
    assert mathd_normalize("\\frac") == "\\frac"  # malformed: left as stripped text
    assert prm_normalize("5 \\text{ degrees}") == "5"
    assert prm_normalize("7 3/4") == "7+3/4"  # mixed number
    assert prm_normalize("1,234,567") == "1234567"
    assert split_elements("(1,2)") == ["1", "2"]
    assert split_elements("(1,(2))") == ["(1,(2))"]


def test_grade_choice_and_aime() -> None:
    assert grade_choice("b", "B", "ABCD")
    assert not grade_choice("E", "E", "ABCD")
    assert not grade_choice("A", "", "ABCD")
    assert grade_aime(33, "033")
    assert not grade_aime(33, "34")
    assert not grade_aime(5, "five")


@pytest.mark.parametrize(
    ("name", "subset"),
    [
        ("gpqa", Subset.GPQA),
        ("GPQA_diamond", Subset.GPQA),
        ("mmlu_pro", Subset.MMLU_PRO),
        ("math500", Subset.MATH500),
        ("aime1983", Subset.AIME),
        ("livecodebench", Subset.LIVECODEBENCH),
    ],
)
def test_subset_of(name: str, subset: Subset) -> None:
    assert subset_of(name) is subset


def test_unknown_subset() -> None:
    with pytest.raises(ValueError, match="no deepseek-r1 evaluator"):
        subset_of("mmlu")  # "mmlu" alone is not "mmlu_pro"


def test_code_is_not_scored_without_the_opt_in() -> None:
    g = grade_sample(0, Subset.LIVECODEBENCH, "```python\nprint(input())\n```", "abc123", None)
    assert g.correct is None and g.points is None and g.note == "code execution not enabled"
    # No code block at all is simply wrong, as in the reference.
    assert grade_sample(1, Subset.LIVECODEBENCH, "I cannot solve it", "abc123", None).correct is False


def test_aggregation() -> None:
    score = score_deepseek(
        qsl_idx=[0, 1, 2, 3, 4],
        outputs=[
            "Answer: A",
            "Answer: B",
            "\\boxed{\\dfrac{1}{2}}",
            "\\boxed{7}",
            "```python\nprint(1)\n```",
        ],
        token_counts=[10, 20, 30, 40, 50],
        truths=["A", "C", "\\frac{1}{2}", "7", "q1"],
        subset_names=["gpqa", "gpqa", "math500", "aime2024", "livecodebench"],
    )
    assert [g.correct for g in score.grades] == [True, False, True, True, None]
    assert score.exact_match is None  # one sample not scored: no exact_match
    assert score.exact_match_scored == 75.0
    assert score.not_scored == 1 and not score.complete
    assert score.tokens_per_sample == 30.0
    by = {s.subset: s for s in score.subsets}
    assert (by[Subset.GPQA].correct, by[Subset.GPQA].exact_match) == (1, 50.0)
    assert by[Subset.LIVECODEBENCH].exact_match is None and by[Subset.LIVECODEBENCH].not_scored == 1
    full = score_deepseek([0, 1], ["Answer: A", "x"], [3, 4], ["A", "B"], ["gpqa", "mmlu_pro"])
    assert full.exact_match == 50.0 and full.complete
    assert full.tokens_per_sample == 3.5  # unrounded, as the reference
