"""Accuracy scoring as the MLPerf reference scripts do it: one module per evaluator family.

- :mod:`loadgen_sut.scoring.score`: ``score_accuracy`` (reads the accuracy log, picks the evaluator), the
  judgement against the round's targets and ``accuracy.txt``;
- :mod:`loadgen_sut.scoring.evaluators`: the registry, evaluator name (``Benchmark.evaluator`` in the
  rules data) -> module;
- the families: :mod:`~loadgen_sut.scoring.rouge`, :mod:`~loadgen_sut.scoring.deepseek` (with
  :mod:`~loadgen_sut.scoring.math_answer` and the LiveCodeBench sandbox :mod:`~loadgen_sut.scoring.code_exec`,
  :mod:`~loadgen_sut.scoring.lcb_harness`).
"""
