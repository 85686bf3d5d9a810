"""The evaluator of each benchmark family, chosen by the benchmark's rules data (``Benchmark.evaluator``).

One module per family, one :class:`Evaluator` object per family here: its ``evaluate(EvalInput) -> dict`` (its fields
of ``AccuracyScore``), whether it reads special tokens, and the simulated engine's answer where the family defines it:

=============  ====================================  ===========================================
evaluator      module                                reference script it follows
=============  ====================================  ===========================================
rouge          :mod:`loadgen_sut.scoring.rouge`      llama2-70b ``evaluate-accuracy.py``, llama3.1-8b
                                                     ``evaluation.py`` (+ llama3.1-405b ``qa_em``)
deepseek-r1    :mod:`loadgen_sut.scoring.deepseek`   deepseek-r1 ``eval_accuracy.py``
gpt-oss        :mod:`loadgen_sut.scoring.gpt_oss`    gpt-oss-120b ``eval_mlperf_accuracy.py`` (+ its
                                                     ``eval_accuracy.py`` evaluators)
qwen3-vl       :mod:`loadgen_sut.scoring.qwen3_vl`   qwen3-vl ``evaluation.py`` (category hierarchical F1)
=============  ====================================  ===========================================
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from checker.findings import UnusableInput
from loadgen_sut.datasets import Dataset, Sample
from loadgen_sut.scoring import deepseek, gpt_oss, qwen3_vl, rouge
from loadgen_sut.scoring.inputs import EvalInput
from rules.models import Benchmark


@dataclass(frozen=True)
class Evaluator:
    """One evaluator family: how it scores a log, and what else about the outputs is the family's."""

    name: str  # Benchmark.evaluator in the rules data
    evaluate: Callable[[EvalInput], dict[str, Any]]  # its fields of AccuracyScore
    # it reads the outputs with their special tokens (the reference detokenizes with skip_special_tokens=False)
    keeps_special_tokens: bool = False
    # the output the simulated engine gives a sample of the family's data set format (None: its reference, or
    # the loader's Sample.answer)
    simulated_answer: Callable[[Sample], str | None] | None = None


EVALUATORS: dict[str, Evaluator] = {
    e.name: e
    for e in (
        Evaluator("rouge", rouge.evaluate),
        Evaluator("deepseek-r1", deepseek.evaluate),
        # gpt-oss-120b's harmony channel markers are scored: eval_mlperf_accuracy.py:104 skip_special_tokens=False
        Evaluator("gpt-oss", gpt_oss.evaluate, keeps_special_tokens=True, simulated_answer=gpt_oss.simulated_answer),
        Evaluator("qwen3-vl", qwen3_vl.evaluate),
    )
}


def evaluator_for(benchmark: Benchmark) -> Evaluator:
    """The evaluator the benchmark's rules data names; a benchmark without one cannot be scored here."""
    name = benchmark.evaluator
    if name is None:
        raise UnusableInput(
            f"{benchmark.name}: no accuracy evaluator in this tool (the rules data names none); "
            f"evaluators: {', '.join(sorted(EVALUATORS))}"
        )
    try:
        return EVALUATORS[name]
    except KeyError:
        raise UnusableInput(f"{benchmark.name}: the rules data names evaluator {name!r}, which this tool lacks") from None


def keeps_special_tokens(benchmark: Benchmark) -> bool:
    """Whether the benchmark's evaluator scores the output text with special tokens kept."""
    found = EVALUATORS.get(benchmark.evaluator or "")
    return found is not None and found.keeps_special_tokens


def simulated_answers(dataset: Dataset) -> dict[int, str]:
    """The answer the data set's evaluator family gives each sample it has one for, by ``Sample.index`` (empty: the
    data set names no family, or its family defines none)."""
    found = EVALUATORS.get(dataset.evaluator or "")
    answer = None if found is None else found.simulated_answer
    if answer is None:
        return {}
    return {s.index: text for s in dataset.samples if (text := answer(s)) is not None}
