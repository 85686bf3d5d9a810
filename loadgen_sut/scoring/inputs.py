"""What every evaluator is given: the deduplicated accuracy-log entries, their data-set samples and decoded outputs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from checker.findings import UnusableInput
from checker.parsers.accuracy_log import AccuracyEntry
from loadgen_sut.datasets import Dataset, Sample
from loadgen_sut.scoring.code_exec import CodeExecution
from rules.models import Benchmark


@dataclass(frozen=True, slots=True)
class EvalInput:
    """One accuracy log, ready to score: entry ``i`` is sample ``samples[i]``, output ``texts[i]`` / ``ids[i]``."""

    benchmark: Benchmark
    dataset: Dataset
    entries: Sequence[AccuracyEntry]  # unique by qsl_idx, first entry wins (as the reference scripts)
    samples: Sequence[Sample]
    texts: Sequence[str]  # detokenized outputs (special tokens skipped)
    ids: Sequence[tuple[int, ...]]  # output token ids as logged
    code_execution: CodeExecution | None = None  # the opt-in to run generated programs

    def subsets(self, column: str) -> list[str]:
        """The sub-data set of each sample (deepseek-r1, gpt-oss-120b); a sample without one is refused, naming
        ``column`` (the data set's column that should hold it)."""
        out = []
        for e, sample in zip(self.entries, self.samples, strict=True):
            if sample.subset is None:
                raise UnusableInput(
                    f"sample {e.qsl_idx} of {self.dataset.name} has no sub-data set ({column})", self.dataset.source
                )
            out.append(sample.subset)
        return out

    @property
    def references(self) -> list[str]:
        """The reference output of each sample (the data-set loader refuses a scored sample without one)."""
        return [s.reference or "" for s in self.samples]
