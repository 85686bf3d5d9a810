"""The evaluator of each benchmark family, chosen by the benchmark's rules data (``Benchmark.evaluator``).

One module per family; each exposes ``evaluate(EvalInput) -> dict`` (its fields of ``AccuracyScore``):

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
from typing import Any

from checker.findings import UnusableInput
from loadgen_sut.scoring import deepseek, gpt_oss, qwen3_vl, rouge
from loadgen_sut.scoring.inputs import EvalInput
from rules.models import Benchmark

Evaluator = Callable[[EvalInput], dict[str, Any]]

EVALUATORS: dict[str, Evaluator] = {
    "rouge": rouge.evaluate,
    "deepseek-r1": deepseek.evaluate,
    "gpt-oss": gpt_oss.evaluate,
    "qwen3-vl": qwen3_vl.evaluate,
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


# evaluators that read the outputs with their special tokens (the reference detokenizes with
# skip_special_tokens=False: gpt-oss-120b's harmony channel markers, eval_mlperf_accuracy.py:104)
KEEP_SPECIAL_TOKENS = frozenset({"gpt-oss"})


def keeps_special_tokens(benchmark: Benchmark) -> bool:
    """Whether the benchmark's evaluator scores the output text with special tokens kept."""
    return benchmark.evaluator in KEEP_SPECIAL_TOKENS
