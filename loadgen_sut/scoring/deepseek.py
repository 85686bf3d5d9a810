"""deepseek-r1 accuracy as the MLPerf reference scores it (``language/deepseek-r1/eval_accuracy.py``).

The data set (``mlperf_deepseek_r1_dataset_4388_fp8_eval.pkl``) mixes five sub-data sets; the
pickle's ``dataset`` column names each row's, ``ground_truth`` (or ``gt_output``) holds its answer,
``text_input`` its prompt. The evaluator is chosen by the first of ``gpqa``, ``mmlu_pro``,
``math500``, ``livecodebench``, ``aime`` contained in the lower-cased name. Each output is the
detokenized text (special tokens skipped), stripped; then:

==============  ===========================================  ==========================================
sub-data set    answer taken from the output                 correct when
==============  ===========================================  ==========================================
gpqa            last ``Answer: X`` / ``Final Answer: (X)``   letter A-D equals the ground truth
                (any case, ``:``/``=`` optional), X in A-D
mmlu_pro        same with A-J; else the last standalone      letter A-J equals the ground truth
                letter A-J anywhere in the text
math500         the last ``\\boxed{...}`` (nested braces)     PRM800K grader (:mod:`math_answer`)
aime            last ``\\boxed{N}`` of digits, else last      integer 0-999 equal to int(ground truth)
                ``Answer: N``
livecodebench   the first ```` ```python ... ``` ```` block   all LiveCodeBench tests of the problem
                                                             (ground truth = question_id) pass
==============  ===========================================  ==========================================

No answer found, or an answer that does not grade, scores 0. ``exact_match`` is the mean over all
samples of 100/0, unrounded; ``TOKENS_PER_SAMPLE`` the mean number of output ids per sample
(every id in the log, EOS included), unrounded.

LiveCodeBench samples need their generated code executed. That happens only with an explicit
:class:`loadgen_sut.scoring.code_exec.CodeExecution`; without it (or when a question_id is not among the
supplied problems) those samples are "not scored" (``correct is None``), ``exact_match`` is None,
and the score is incomplete: it is never judged against the round's target.

Differences from the reference, on purpose: a sample with no ground truth is refused by the data
set loader rather than scored 0; the reference decodes with the slow (``use_fast=False``) tokenizer,
this harness with the tokenizer the user gives.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict

from checker.findings import UnusableInput
from loadgen_sut.scoring.code_exec import CodeExecution, run_code_jobs, run_program
from loadgen_sut.scoring.code_problems import CodeProblem
from loadgen_sut.scoring.inputs import EvalInput
from loadgen_sut.scoring.math_answer import grade_math_answer


class Subset(str, Enum):
    """The sub-data sets, in the order the reference tries them on a ``dataset`` name."""

    GPQA = "gpqa"
    MMLU_PRO = "mmlu_pro"
    MATH500 = "math500"
    LIVECODEBENCH = "livecodebench"
    AIME = "aime"


def subset_of(name: str) -> Subset:
    """The evaluator for a ``dataset`` value: the first key contained in the lower-cased name."""
    lowered = name.strip().lower()
    for subset in Subset:
        if subset.value in lowered:
            return subset
    raise ValueError(
        f"no deepseek-r1 evaluator for data set {name!r} (known: {', '.join(s.value for s in Subset)})"
    )


# ----------------------------------------------------------------------------------------------
# Extractors: model output text -> answer (None when there is none)


def _choice_pattern(last: str) -> re.Pattern[str]:
    return re.compile(
        rf"\b(?:ANSWER|FINAL\s*ANSWER)\b\s*[:=]?\s*\(?\s*([A-{last}])\s*\)?(?:\s*$|[^A-Za-z])",
        re.IGNORECASE,
    )


_CHOICE_ABCD = _choice_pattern("D")
_CHOICE_ATOJ = _choice_pattern("J")
_STANDALONE_ATOJ = re.compile(r"\b([A-J])\b", re.IGNORECASE)


def extract_choice(text: str, last: str) -> str | None:
    """The multiple-choice letter (A..``last``, ``last`` is D or J), upper-cased."""
    text = text.strip()
    if not text:
        return None
    if text.startswith(("['", '["')) and text.endswith(("']", '"]')):
        text = text[2:-2].strip()  # a stringified one-element list
    text = text.replace("\\n", "\n").replace("\\'", "'")
    pattern = {"D": _CHOICE_ABCD, "J": _CHOICE_ATOJ}.get(last) or _choice_pattern(last)
    found = [m.group(1) for m in pattern.finditer(text)]
    if found:
        return found[-1].upper()
    if last == "J":  # MMLU-Pro only: the last standalone letter anywhere
        loose = [m.group(1) for m in _STANDALONE_ATOJ.finditer(text)]
        if loose:
            return loose[-1].upper()
    return None


_BOXED = "\\boxed{"


def extract_boxed(text: str) -> str | None:
    """The content of the last ``\\boxed{...}`` (braces balanced), stripped."""
    text = text.strip()
    start = text.rfind(_BOXED)
    if start < 0:
        return None
    depth = 0
    begin = start + len(_BOXED)
    for i in range(begin, len(text)):
        ch = text[i]
        if ch == "{":
            depth += 1
        elif ch == "}":
            if depth == 0:
                return text[begin:i].strip()
            depth -= 1
    return None  # unbalanced


_BOXED_INT = re.compile(r"\\boxed{\s*(\d+)\s*}")
_ANSWER_INT = re.compile(r"Answer:\s*(\d+)(?!\.)\b", re.IGNORECASE | re.MULTILINE)


def extract_aime(text: str) -> int | None:
    """The AIME integer: last ``\\boxed{N}``, else last ``Answer: N``; only 0-999."""
    text = text.strip()
    if not text:
        return None
    found = [m.group(1) for m in _BOXED_INT.finditer(text)] or [
        m.group(1) for m in _ANSWER_INT.finditer(text)
    ]
    if not found:
        return None
    value = int(found[-1])
    return value if 0 <= value <= 999 else None


_PYTHON_BLOCK = re.compile(r"```python(.*?)```", re.DOTALL)


def extract_code(text: str) -> str | None:
    """The first ```` ```python ```` block, stripped."""
    m = _PYTHON_BLOCK.search(text.strip())
    return m.group(1).strip() if m else None


# ----------------------------------------------------------------------------------------------
# Graders


def grade_choice(answer: str, truth: str, options: str) -> bool:
    if not answer or not truth:
        return False
    return answer.upper() in options and answer.upper() == truth.upper()


def grade_aime(answer: int, truth: str) -> bool:
    try:
        return answer == int(truth)
    except ValueError:
        return False


def grade_math(answer: str, truth: str) -> bool:
    if not answer.strip() or not truth:
        return False
    return grade_math_answer(answer.strip(), truth)


# ----------------------------------------------------------------------------------------------
# Scoring


class SampleGrade(BaseModel):
    """One sample: what was extracted and whether it is correct (None: not scored)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    qsl_idx: int
    subset: Subset
    extracted: str | None
    correct: bool | None
    note: str | None = None  # why it is not scored, or what the code run said

    @property
    def points(self) -> float | None:
        return None if self.correct is None else (100.0 if self.correct else 0.0)


class SubsetScore(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    subset: Subset
    samples: int
    scored: int
    correct: int
    exact_match: float | None  # over the scored samples; None when none was scored

    @property
    def not_scored(self) -> int:
        return self.samples - self.scored


class DeepseekScore(BaseModel):
    """The scores of a deepseek-r1 accuracy run."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    grades: tuple[SampleGrade, ...]
    subsets: tuple[SubsetScore, ...]
    exact_match: float | None  # mean over ALL samples x100; None when any sample is not scored
    exact_match_scored: float | None  # mean over the scored samples only (informative)
    tokens_per_sample: float
    code_execution: str  # "enabled (problems from ...)" or "not enabled"

    @property
    def not_scored(self) -> int:
        return sum(1 for g in self.grades if g.correct is None)

    @property
    def complete(self) -> bool:
        return self.not_scored == 0


def grade_sample(
    qsl_idx: int, subset: Subset, output: str, truth: str, code: CodeExecution | None
) -> SampleGrade:
    """Extract the answer of one output and grade it against the ground truth."""
    text = output.strip()
    if subset in (Subset.GPQA, Subset.MMLU_PRO):
        last, options = ("D", "ABCD") if subset is Subset.GPQA else ("J", "ABCDEFGHIJ")
        choice = extract_choice(text, last)
        ok = choice is not None and grade_choice(choice, truth, options)
        return SampleGrade(qsl_idx=qsl_idx, subset=subset, extracted=choice, correct=ok)
    if subset is Subset.MATH500:
        boxed = extract_boxed(text)
        ok = boxed is not None and grade_math(boxed, truth)
        return SampleGrade(qsl_idx=qsl_idx, subset=subset, extracted=boxed, correct=ok)
    if subset is Subset.AIME:
        number = extract_aime(text)
        ok = number is not None and grade_aime(number, truth)
        return SampleGrade(
            qsl_idx=qsl_idx, subset=subset, extracted=None if number is None else str(number), correct=ok
        )
    job = code_job(qsl_idx, text, truth, code)
    if isinstance(job, SampleGrade):
        return job
    assert code is not None  # a CodeJob is made only with code execution
    return run_code_job(job, code)


class CodeJob(BaseModel):
    """A LiveCodeBench sample whose program is to be run against its problem's tests."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    qsl_idx: int
    program: str
    problem: CodeProblem


def code_job(qsl_idx: int, output: str, truth: str, code: CodeExecution | None) -> SampleGrade | CodeJob:
    """The grade of a LiveCodeBench sample when it needs no run, else the run to make."""
    subset = Subset.LIVECODEBENCH
    program = extract_code(output)
    if not program:
        return SampleGrade(
            qsl_idx=qsl_idx, subset=subset, extracted=None, correct=False, note="no ```python block"
        )
    if code is None:
        return SampleGrade(
            qsl_idx=qsl_idx, subset=subset, extracted=program, correct=None, note="code execution not enabled"
        )
    problem = code.problems.get(truth.strip())
    if problem is None:
        note = f"question_id {truth!r} is not in {code.source}"
        return SampleGrade(qsl_idx=qsl_idx, subset=subset, extracted=program, correct=None, note=note)
    return CodeJob(qsl_idx=qsl_idx, program=program, problem=problem)


def run_code_job(job: CodeJob, code: CodeExecution) -> SampleGrade:
    run = run_program(job.program, job.problem, code)
    return SampleGrade(
        qsl_idx=job.qsl_idx,
        subset=Subset.LIVECODEBENCH,
        extracted=job.program,
        correct=run.passed,
        note=run.reason,
    )


def _mean_points(grades: Sequence[SampleGrade]) -> float | None:
    points = [p for p in (g.points for g in grades) if p is not None]
    return sum(points) / len(points) if points else None


def summarize(
    grades: Sequence[SampleGrade], token_counts: Sequence[int], code: CodeExecution | None
) -> DeepseekScore:
    """Aggregate per-sample grades as the reference does (means over all samples, x100)."""
    if not grades or len(grades) != len(token_counts):
        raise ValueError("need one token count per graded sample, and at least one sample")
    subsets = []
    for subset in Subset:
        mine = [g for g in grades if g.subset is subset]
        if not mine:
            continue
        scored = [g for g in mine if g.correct is not None]
        subsets.append(
            SubsetScore(
                subset=subset,
                samples=len(mine),
                scored=len(scored),
                correct=sum(1 for g in scored if g.correct),
                exact_match=_mean_points(scored),
            )
        )
    complete = all(g.correct is not None for g in grades)
    scored_mean = _mean_points(grades)
    return DeepseekScore(
        grades=tuple(grades),
        subsets=tuple(subsets),
        exact_match=scored_mean if complete else None,
        exact_match_scored=scored_mean,
        tokens_per_sample=sum(token_counts) / len(token_counts),
        code_execution=f"enabled (problems from {code.source})" if code is not None else "not enabled",
    )


def score_deepseek(
    qsl_idx: Sequence[int],
    outputs: Sequence[str],
    token_counts: Sequence[int],
    truths: Sequence[str],
    subset_names: Sequence[str],
    code: CodeExecution | None = None,
) -> DeepseekScore:
    """Grade detokenized outputs (one per unique ``qsl_idx``) against the ground truths.

    ``subset_names`` are the data set's ``dataset`` values; an unknown one raises ValueError.
    """
    if not (len(qsl_idx) == len(outputs) == len(token_counts) == len(truths) == len(subset_names)):
        raise ValueError("qsl_idx, outputs, token counts, ground truths and sub-data sets differ in length")
    graded: list[SampleGrade | CodeJob] = []
    for i, out, truth, name in zip(qsl_idx, outputs, truths, subset_names, strict=True):
        subset = subset_of(name)
        if subset is Subset.LIVECODEBENCH:
            graded.append(code_job(i, out.strip(), truth, code))
        else:
            graded.append(grade_sample(i, subset, out, truth, code))
    grades = run_code_jobs(graded, CodeJob, run_code_job, code)  # no code: no jobs (code_job grades "not scored")
    return summarize(grades, token_counts, code)


SPLITTER_NOT_USED = "not used (deepseek-r1 evaluators)"


def evaluate(data: EvalInput) -> dict[str, Any]:
    """deepseek-r1's part of a score: its evaluators per sub-data set (no ROUGE, no sentence split)."""
    subsets = data.subsets("the deepseek-r1 pickle's 'dataset' column")
    try:
        ds = score_deepseek(
            [e.qsl_idx for e in data.entries],
            data.texts,
            [len(x) for x in data.ids],
            data.references,
            subsets,
            data.code_execution,
        )
    except ValueError as err:
        raise UnusableInput(str(err), data.dataset.source) from err
    return {
        "sentence_splitter": SPLITTER_NOT_USED,
        "exact_match": ds.exact_match,
        "gen_len": sum(len(t.strip()) for t in data.texts),
        "tokens_per_sample": ds.tokens_per_sample,
        "not_scored": ds.not_scored,
        "exact_match_scored": ds.exact_match_scored,
        "subsets": ds.subsets,
        "code_execution": ds.code_execution,
    }
