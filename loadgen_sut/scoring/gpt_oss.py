"""gpt-oss-120b accuracy as the MLPerf reference scores it (``language/gpt-oss-120b/eval_mlperf_accuracy.py``
with the evaluators of its ``eval_accuracy.py``).

The accuracy data set (``acc_eval_inputs.parquet``, or the older pickle) holds 4395 rows: the problems of
AIME25, GPQA Diamond and LiveCodeBench v6, each repeated (8, 5 and 3 times). Its ``dataset`` column names a
row's sub-data set, ``ground_truth`` its answer (LiveCodeBench: the ``question_id``). The model answers in
OpenAI's *harmony* format, ``<|channel|>analysis<|message|>...<|end|><|start|>assistant<|channel|>final<|message|>
...<|return|>``, so the outputs are read with their special tokens (the reference detokenizes with
``skip_special_tokens=False``, ``eval_mlperf_accuracy.py:104``).

The evaluator is the first of ``gpqa``, ``mmlu_pro``, ``math500``, ``aime``, ``livecodebench``, ``mmlu`` contained in
the lower-cased ``dataset`` value (``eval_accuracy.py:589-626``):

==============  ==============================================================  ===================================
evaluator       answer taken from the output                                    correct when
==============  ==============================================================  ===================================
gpqa            in the *final* channel (markdown bold removed): a letter A-D    the letter equals the ground truth
                at its start; else ``Answer: X`` in it; else the last
                ``ANSWER: X`` / ``FINAL ANSWER: (X)`` of the whole output
mmlu_pro, mmlu  same with A-J, then the last standalone letter of the final     same, A-J
                channel
math500         the last ``\\boxed{...}`` of the whole output                    PRM800K grader (as deepseek-r1)
aime            last ``\\boxed{N}``, else last ``Answer: N`` of the whole        integer 0-999 equal to the
                output (as deepseek-r1)                                         ground truth
livecodebench   the last ```` ```python ```` block of the final channel, else   all LiveCodeBench tests of the
                its last plain ```` ``` ```` block; without a final channel      problem pass (ground truth =
                the same over the whole output                                  question_id), code execution only
==============  ==============================================================  ===================================

The final channel is the text after the first ``<|channel|>final...<|message|>`` up to ``<|return|>`` (or the end);
an output without one is read whole (``eval_accuracy.py:117-151``).

Score (``eval_mlperf_accuracy.py:568-648``): per lower-cased ``dataset`` value, ``correct`` and ``total``;
``final_score = sum(correct / repeats)``, ``max_score = sum(total / repeats)`` with repeats 8 (``aime25``),
5 (``gpqa_diamond``), 3 (``livecodebench_v6``), 1 for any other name (``eval_mlperf_accuracy.py:48-52``);
``exact_match = 100 * final_score / max_score`` printed with 3 decimals for the submission checker
(``eval_mlperf_accuracy.py:648``). ``exact_match`` here is that printed value.

Reused from :mod:`loadgen_sut.scoring.deepseek`, where the reference's functions are the same as deepseek-r1's:
AIME (``parse_aime_answer``, ``evaluate_aime``), MATH-500 (``parse_boxed_math``, ``evaluate_math500``) and the
letter comparison (``evaluate_multiple_choice``). Different from deepseek-r1, and written here: the multiple-choice
and code extraction (harmony final channel), the per-data-set repeats, and the special tokens kept.

LiveCodeBench samples are run only with an explicit :class:`loadgen_sut.scoring.code_exec.CodeExecution` (the
problems of LiveCodeBench ``release_v6``, which the reference loads); without it they are "not scored",
``exact_match`` is None and the score is incomplete (never judged against the round's target).

Differences from the reference, on purpose:

- the accuracy log is deduplicated by ``qsl_idx`` before scoring (first entry wins, as for every benchmark
  here); the reference counts every entry. An accuracy-mode log has one entry per sample, so the score is
  the same; a duplicate is counted in ``AccuracyScore.duplicate_entries``;
- a ``qsl_idx`` outside the data set, or a sample without a ground truth, refuses the log
  (:class:`checker.findings.UnusableInput`); the reference skips the first and scores the second 0;
- the reference decodes with the Hugging Face tokenizer it downloads (``openai/gpt-oss-120b``); this harness with
  the tokenizer directory the user gives;
- ``tokens_per_sample`` (mean output ids per sample) is printed in accuracy.txt as for deepseek-r1; the reference's
  ``eval_mlperf_accuracy.py`` does not print it, and the HEAD checker's upper limit (1.1 x 9999) applies only when
  it is printed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict

from checker.findings import UnusableInput
from loadgen_sut.datasets import Sample
from loadgen_sut.scoring.code_exec import CodeExecution, run_code_jobs, run_program
from loadgen_sut.scoring.code_problems import CodeProblem
from loadgen_sut.scoring.deepseek import extract_aime, extract_boxed, grade_aime, grade_choice, grade_math
from loadgen_sut.scoring.inputs import EvalInput

# eval_mlperf_accuracy.py:48-52 -- any other sub-data set counts once
DATASET_REPEATS: dict[str, int] = {"aime25": 8, "gpqa_diamond": 5, "livecodebench_v6": 3}


class Family(str, Enum):
    """The reference's evaluators, in the order it tries them on a ``dataset`` name (eval_accuracy.py:589-615)."""

    GPQA = "gpqa"
    MMLU_PRO = "mmlu_pro"
    MATH500 = "math500"
    AIME = "aime"
    LIVECODEBENCH = "livecodebench"
    MMLU = "mmlu"


def family_of(name: str) -> Family:
    """The evaluator of a ``dataset`` value: the first key contained in the lower-cased name."""
    lowered = name.lower()
    for family in Family:
        if family.value in lowered:
            return family
    raise ValueError(
        f"no gpt-oss-120b evaluator for data set {name!r} (known: {', '.join(f.value for f in Family)})"
    )


def repeats_of(name: str) -> int:
    return DATASET_REPEATS.get(name.lower(), 1)


# ----------------------------------------------------------------------------------------------
# Harmony output: the final channel

FINAL_MARKER = "<|channel|>final<|message|>"
_FINAL = re.compile(r"<\|channel\|>final[^<]*<\|message\|>(.*?)(?:<\|return\|>|$)", re.DOTALL)
_BOLD = re.compile(r"\*\*([^*]+)\*\*")


def final_section(text: str) -> str:
    """The content of the first final channel, stripped; the whole (stripped) text when there is none.

    Tolerates stray characters between ``final`` and ``<|message|>`` (corrupted markers), as the reference.
    """
    text = text.strip()
    if not text:
        return ""
    m = _FINAL.search(text)
    return m.group(1).strip() if m else text


def strip_bold(text: str) -> str:
    """``**X**`` -> ``X``."""
    return _BOLD.sub(r"\1", text)


# ----------------------------------------------------------------------------------------------
# Extractors


def _unescape(text: str) -> str:
    """Literal backslash-n and backslash-quote as the reference turns them back."""
    return text.replace("\\n", "\n").replace("\\'", "'")


def extract_choice(text: str, last: str) -> str | None:
    """The multiple-choice letter A..``last`` (D for GPQA, J for MMLU(-Pro)), upper-cased."""
    text = text.strip()
    if not text:
        return None
    section = strip_bold(final_section(text))
    if section.startswith(("['", '["')) and section.endswith(("']", '"]')):
        section = section[2:-2].strip()  # a stringified one-element list
    section = _unescape(section)
    leading = re.match(rf"^[^a-zA-Z]*([A-{last}])(?:[^a-zA-Z]|$)", section.strip(), re.IGNORECASE)
    if leading:
        return leading.group(1).upper()
    labelled = re.search(rf"\b(?:Answer|ANSWER)\s*[:.]?\s*([A-{last}])\b", section, re.IGNORECASE)
    if labelled:
        return labelled.group(1).upper()
    whole = [
        m.group(1)
        for m in re.finditer(
            rf"\b(?:ANSWER|FINAL\s*ANSWER)\b\s*[:=]?\s*(?:\(?\s*([A-{last}])\s*\)?)(?:\s*$|[^A-Za-z])",
            _unescape(text),
            re.IGNORECASE,
        )
    ]
    if whole:
        return whole[-1].upper()
    if last == "J":  # MMLU(-Pro) only: the last standalone letter of the final channel
        loose = [m.group(1) for m in re.finditer(rf"\b([A-{last}])\b", section, re.IGNORECASE)]
        if loose:
            return loose[-1].upper()
    return None


_PYTHON_BLOCK = re.compile(r"```python(.*?)```", re.DOTALL)
_ANY_BLOCK = re.compile(r"```(.*?)```", re.DOTALL)
_LANGUAGE_TAG = re.compile(r"^(?:python|py)\s*\n", re.IGNORECASE)


def _last_block(text: str) -> str | None:
    python = [m.group(1) for m in _PYTHON_BLOCK.finditer(text)]
    if python:
        return python[-1].strip()
    plain = [m.group(1) for m in _ANY_BLOCK.finditer(text)]
    if plain:
        return _LANGUAGE_TAG.sub("", plain[-1].strip())
    return None


def extract_code(text: str) -> str | None:
    """The program: the last python (else plain) code block of the final channel, else of the whole output."""
    text = text.strip()
    if not text:
        return None
    section = final_section(text)
    if section != text:  # a final channel was found
        code = _last_block(section)
        if code is not None:
            return code
    return _last_block(text)


# ----------------------------------------------------------------------------------------------
# Grades


class SampleGrade(BaseModel):
    """One sample: what was extracted and whether it is correct (None: not scored)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    qsl_idx: int
    dataset: str  # the lower-cased ``dataset`` value: the reference's key for its counts
    family: Family
    extracted: str | None
    correct: bool | None
    note: str | None = None  # why it is not scored, or what the code run said


class DatasetComponent(BaseModel):
    """One sub-data set's part of the final score: ``correct / repeats`` of ``samples / repeats``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    dataset: str
    family: Family
    samples: int
    scored: int
    correct: int
    repeats: int

    @property
    def not_scored(self) -> int:
        return self.samples - self.scored

    @property
    def component_score(self) -> float:
        return self.correct / self.repeats

    @property
    def max_component_score(self) -> float:
        return self.samples / self.repeats

    @property
    def accuracy(self) -> float | None:
        """Percent correct of the scored samples (the reference's per-data-set "Accuracy")."""
        return 100.0 * self.correct / self.scored if self.scored else None


class GptOssScore(BaseModel):
    """The scores of a gpt-oss-120b accuracy run."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    grades: tuple[SampleGrade, ...]
    components: tuple[DatasetComponent, ...]
    final_score_percentage: float | None  # unrounded; None when a sample is not scored
    exact_match: float | None  # as printed for the submission checker: 3 decimals
    exact_match_scored: float | None  # the same formula over the scored samples only (informative)
    tokens_per_sample: float
    code_execution: str

    @property
    def not_scored(self) -> int:
        return sum(1 for g in self.grades if g.correct is None)


class CodeJob(BaseModel):
    """A LiveCodeBench sample whose program is to be run against its problem's tests."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    qsl_idx: int
    dataset: str
    program: str
    problem: CodeProblem


def grade_output(
    qsl_idx: int, dataset: str, output: str, truth: str, code: CodeExecution | None
) -> SampleGrade | CodeJob:
    """Extract the answer of one output and grade it; a LiveCodeBench program to run comes back as a CodeJob."""
    name = dataset.lower()
    family = family_of(name)

    def grade(extracted: str | None, correct: bool | None, note: str | None = None) -> SampleGrade:
        return SampleGrade(qsl_idx=qsl_idx, dataset=name, family=family, extracted=extracted, correct=correct, note=note)

    if family in (Family.GPQA, Family.MMLU_PRO, Family.MMLU):
        last, options = ("D", "ABCD") if family is Family.GPQA else ("J", "ABCDEFGHIJ")
        choice = extract_choice(output, last)
        return grade(choice, choice is not None and grade_choice(choice, truth, options))
    if family is Family.MATH500:
        boxed = extract_boxed(output)
        return grade(boxed, boxed is not None and grade_math(boxed, truth))
    if family is Family.AIME:
        number = extract_aime(output)
        return grade(None if number is None else str(number), number is not None and grade_aime(number, truth))
    program = extract_code(output)
    if not program:
        return grade(program, False, "no code block" if program is None else "empty code block")
    if code is None:
        return grade(program, None, "code execution not enabled")
    problem = code.problems.get(truth.strip())
    if problem is None:
        return grade(program, None, f"question_id {truth!r} is not in {code.source}")
    return CodeJob(qsl_idx=qsl_idx, dataset=name, program=program, problem=problem)


def _run_job(job: CodeJob, code: CodeExecution) -> SampleGrade:
    run = run_program(job.program, job.problem, code)
    return SampleGrade(
        qsl_idx=job.qsl_idx,
        dataset=job.dataset,
        family=Family.LIVECODEBENCH,
        extracted=job.program,
        correct=run.passed,
        note=run.reason,
    )


def _percentage(parts: Sequence[tuple[int, int, int]]) -> float | None:
    """100 x sum(correct / repeats) / sum(total / repeats) over (correct, total, repeats); None without samples."""
    final = sum(c / r for c, _, r in parts)
    best = sum(t / r for _, t, r in parts)
    return 100.0 * final / best if best > 0 else None


def summarize(
    grades: Sequence[SampleGrade], token_counts: Sequence[int], code: CodeExecution | None
) -> GptOssScore:
    """The reference's aggregation: counts per sub-data set, repeats, the final score as a percentage."""
    if not grades or len(grades) != len(token_counts):
        raise ValueError("need one token count per graded sample, and at least one sample")
    components = []
    for name in sorted({g.dataset for g in grades}):  # the reference prints them sorted by name
        mine = [g for g in grades if g.dataset == name]
        scored = [g for g in mine if g.correct is not None]
        components.append(
            DatasetComponent(
                dataset=name,
                family=mine[0].family,
                samples=len(mine),
                scored=len(scored),
                correct=sum(1 for g in scored if g.correct),
                repeats=repeats_of(name),
            )
        )
    complete = all(g.correct is not None for g in grades)
    pct = _percentage([(c.correct, c.samples, c.repeats) for c in components])
    scored_pct = _percentage([(c.correct, c.scored, c.repeats) for c in components])
    return GptOssScore(
        grades=tuple(grades),
        components=tuple(components),
        final_score_percentage=pct if complete else None,
        exact_match=float(f"{pct:.3f}") if complete and pct is not None else None,
        exact_match_scored=scored_pct,
        tokens_per_sample=sum(token_counts) / len(token_counts),
        code_execution=f"enabled (problems from {code.source})" if code is not None else "not enabled",
    )


def score_gpt_oss(
    qsl_idx: Sequence[int],
    outputs: Sequence[str],
    token_counts: Sequence[int],
    truths: Sequence[str],
    datasets: Sequence[str],
    code: CodeExecution | None = None,
) -> GptOssScore:
    """Grade detokenized outputs (special tokens kept; one per unique ``qsl_idx``) against the ground truths.

    ``datasets`` are the data set's ``dataset`` values; one without an evaluator raises ValueError.
    """
    if not (len(qsl_idx) == len(outputs) == len(token_counts) == len(truths) == len(datasets)):
        raise ValueError("qsl_idx, outputs, token counts, ground truths and sub-data sets differ in length")
    graded = [
        grade_output(i, name, out, truth, code)
        for i, out, truth, name in zip(qsl_idx, outputs, truths, datasets, strict=True)
    ]
    grades = run_code_jobs(graded, CodeJob, _run_job, code)  # no code: no jobs (grade_output grades "not scored")
    return summarize(grades, token_counts, code)


def component_lines(components: Sequence[DatasetComponent]) -> list[str]:
    """accuracy.txt lines of the per-data-set breakdown and the final-score formula (as the reference prints it,
    ``eval_mlperf_accuracy.py:611-644``), each prefixed ``inference-audit:`` (no checker pattern reads them)."""
    if not components:
        return []
    out = [
        f"inference-audit: {c.dataset} ({c.family.value}, repeats {c.repeats}): {c.correct} of {c.samples} correct"
        + (f", {c.not_scored} not scored" if c.not_scored else "")
        + f"; component {c.component_score:.2f} of {c.max_component_score:.2f}"
        for c in components
    ]
    final = sum(c.component_score for c in components)
    best = sum(c.max_component_score for c in components)
    out.append(
        "inference-audit: final score = "
        + " + ".join(f"{c.dataset}/{c.repeats}" for c in components)
        + " = "
        + " + ".join(f"{c.correct}/{c.repeats}" for c in components)
        + f" = {final:.2f} of {best:.2f}"
        + (
            f"; INCOMPLETE: {sum(c.not_scored for c in components)} samples not scored, no final score"
            if any(c.not_scored for c in components)
            else (f" = {100.0 * final / best:.2f}%" if best > 0 else "")
        )
    )
    return out


SPLITTER_NOT_USED = "not used (gpt-oss-120b evaluators)"


def evaluate(data: EvalInput) -> dict[str, Any]:
    """gpt-oss-120b's part of a score (``data.texts`` decoded with special tokens kept)."""
    names = data.subsets("the gpt-oss-120b data set's 'dataset' column")
    try:
        go = score_gpt_oss(
            [e.qsl_idx for e in data.entries],
            data.texts,
            [len(x) for x in data.ids],
            data.references,
            names,
            data.code_execution,
        )
    except ValueError as err:
        raise UnusableInput(str(err), data.dataset.source) from err
    return {
        "sentence_splitter": SPLITTER_NOT_USED,
        "exact_match": go.exact_match,
        "gen_len": sum(len(t.strip()) for t in data.texts),
        "tokens_per_sample": go.tokens_per_sample,
        "not_scored": go.not_scored,
        "exact_match_scored": go.exact_match_scored,
        "components": go.components,
        "code_execution": go.code_execution,
    }


# ----------------------------------------------------------------------------------------------
# The simulated engine's answers

SIMULATED_ANALYSIS = "SIMULATED engine output: no model ran."


def simulated_answer(sample: Sample) -> str | None:
    """A harmony-formatted output the evaluator grades as the ground truth's answer (the SIMULATED engine's).

    Multiple choice and AIME/MATH-500 answers are right by construction. A LiveCodeBench answer cannot be: the
    engine has no program for the problem, so it writes ``pass`` (it fails the problem's tests when code is
    executed). None for a sample without a sub-data set or ground truth, or of an unknown sub-data set.
    """
    if sample.subset is None or sample.reference is None:
        return None
    try:
        family = family_of(sample.subset)
    except ValueError:
        return None
    truth = sample.reference.strip()
    if family in (Family.GPQA, Family.MMLU_PRO, Family.MMLU):
        final = f"Answer: {truth}"
    elif family in (Family.AIME, Family.MATH500):
        final = f"The answer is \\boxed{{{truth}}}"
    else:
        final = "```python\npass\n```"
    return f"<|channel|>analysis<|message|>{SIMULATED_ANALYSIS}<|end|><|start|>assistant{FINAL_MARKER}{final}<|return|>"
