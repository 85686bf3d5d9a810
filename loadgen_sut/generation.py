"""The generation settings of a run: what the round fixes for the benchmark, per LoadGen mode.

From the rules data (:class:`rules.models.Benchmark`):

- ``max_new_tokens``: the output cap; ``max_new_tokens_performance`` when the performance runs have their own
  (gpt-oss-120b: 32768 for accuracy, 10000 for performance, RULES_HEAD:383-384). Every test in LoadGen's
  performance mode (performance, TEST06/07/09, find-peak) gets the performance cap; the accuracy test the other.
- ``decoding``: ``greedy search`` -> greedy (temperature 0, top_p 1); ``sampling, temperature=T, top_p=P, top_k
  disabled`` (gpt-oss-120b, qwen3-vl) -> those values sent to the engine; anything else this harness cannot do
  (gpt-j's beam search) -> greedy, said in :attr:`GenerationPlan.notes`.
- gpt-oss-120b reads its harmony output with special tokens (``skip_special_tokens=False``, the reference's
  ``eval_mlperf_accuracy.py:104`` and README's generation table): asked of the engine for the streamed text
  (benchmarks whose evaluator keeps special tokens: :func:`loadgen_sut.scoring.evaluators.keeps_special_tokens`).

What the SUT hands LoadGen as a response is the benchmark's ``accuracy_log_format`` (the reference SUT's: the
output ids, or the text's UTF-8 bytes for qwen3-vl), so the accuracy log holds what the reference evaluator reads.

The reference's reasoning effort (gpt-oss-120b: high for accuracy, low for performance) is not a request
parameter here: it is part of the pre-tokenized prompts of the official data sets (``acc_eval_inputs`` vs
``perf_eval_ref``).

``--max-new-tokens`` overrides both caps (a trial; a submission refuses a value other than the round's).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from checker.findings import UnusableInput
from loadgen_sut.settings import TestMode
from rules.models import Benchmark

DEFAULT_MAX_NEW_TOKENS = 1024  # a benchmark whose rules data names no cap


class GenerationSpec(BaseModel):
    """What one LoadGen test asks of the engine for every sample (a test process's ``TestSpec.generation``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_new_tokens: int = Field(ge=1)
    min_new_tokens: int | None = Field(default=None, ge=0)
    ignore_eos: bool = False
    greedy: bool = True
    # sampling when greedy is False (loadgen_sut.generation: the round's decoding); None: not sent
    temperature: float | None = Field(default=None, ge=0)
    top_p: float | None = Field(default=None, gt=0, le=1)
    top_k: int | None = Field(default=None, ge=0)  # 0: disabled
    skip_special_tokens: bool | None = (
        None  # False: output text with special tokens (gpt-oss harmony markers)
    )
    # what the SUT hands LoadGen as a response (Benchmark.accuracy_log_format): the output ids, or the text's UTF-8
    response_format: Literal["token_ids", "utf8_text"] = "token_ids"


@dataclass(frozen=True)
class Decoding:
    """The round's decoding rule, parsed from ``Benchmark.decoding``."""

    greedy: bool
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None  # 0: disabled
    note: str | None = None  # what the harness does instead, when it cannot do the rule

    @classmethod
    def parse(cls, text: str | None) -> Decoding:
        if text is None or text.strip().lower().startswith("greedy"):
            return cls(greedy=True)
        low = text.strip().lower()
        if not low.startswith("sampling"):
            return cls(
                greedy=True, note=f"decoding {text!r} is not supported by this harness: greedy instead"
            )
        values: dict[str, str] = {}
        for part in low.split(",")[1:]:
            part = part.strip()
            m = re.fullmatch(r"(temperature|top_p|top_k)\s*=\s*([0-9.]+)", part)
            if m:
                values[m.group(1)] = m.group(2)
            elif part == "top_k disabled":
                values["top_k"] = "0"
            else:
                raise UnusableInput(f"rules data: cannot read the decoding rule {text!r} (at {part!r})")
        try:
            return cls(
                greedy=False,
                temperature=float(values["temperature"]) if "temperature" in values else None,
                top_p=float(values["top_p"]) if "top_p" in values else None,
                top_k=int(values["top_k"]) if "top_k" in values else None,
            )
        except ValueError as exc:
            raise UnusableInput(f"rules data: cannot read the decoding rule {text!r}: {exc}") from exc


@dataclass(frozen=True)
class GenerationPlan:
    """The generation settings of each LoadGen mode of a run."""

    performance: GenerationSpec
    accuracy: GenerationSpec
    notes: tuple[str, ...] = ()

    def for_mode(self, mode: TestMode) -> GenerationSpec:
        """The accuracy test's settings in LoadGen's accuracy mode; the performance settings otherwise."""
        return self.accuracy if mode is TestMode.ACCURACY_ONLY else self.performance

    def describe(self) -> str:
        """One line for the run's output: caps per mode, decoding, special tokens."""
        p, a = self.performance, self.accuracy
        caps = (
            f"max_new_tokens {p.max_new_tokens}"
            if p.max_new_tokens == a.max_new_tokens
            else f"max_new_tokens {p.max_new_tokens} (performance) / {a.max_new_tokens} (accuracy)"
        )
        if p.greedy:
            how = "greedy"
        else:
            parts = [f"temperature={p.temperature:g}" if p.temperature is not None else None]
            parts.append(f"top_p={p.top_p:g}" if p.top_p is not None else None)
            parts.append(
                None if p.top_k is None else ("top_k disabled" if p.top_k == 0 else f"top_k={p.top_k}")
            )
            how = "sampling" + "".join(f", {x}" for x in parts if x)
        special = "; output text with special tokens" if p.skip_special_tokens is False else ""
        text = "; responses are the output text (UTF-8)" if p.response_format == "utf8_text" else ""
        notes = "".join(f"; {n}" for n in self.notes)
        return f"{caps}; {how}{special}{text}{notes}"

    def record(self) -> dict[str, Any]:
        """For the run record: the performance settings at the top level (as before), the accuracy test's under
        ``accuracy`` when they differ."""
        out: dict[str, Any] = self.performance.model_dump()
        if self.accuracy != self.performance:
            out["accuracy"] = self.accuracy.model_dump()
        if self.notes:
            out["notes"] = list(self.notes)
        return out


def generation_plan(
    bench: Benchmark,
    *,
    max_new_tokens: int | None = None,
    min_new_tokens: int | None = None,
    ignore_eos: bool = False,
) -> GenerationPlan:
    """The round's generation settings for ``bench``; ``max_new_tokens`` (the command line) overrides both caps."""
    from loadgen_sut.scoring.evaluators import keeps_special_tokens  # the scoring package is heavy to import

    decoding = Decoding.parse(bench.decoding)
    accuracy_cap = max_new_tokens or bench.max_new_tokens or DEFAULT_MAX_NEW_TOKENS
    performance_cap = max_new_tokens or bench.max_new_tokens_performance or accuracy_cap
    common: dict[str, Any] = {
        "min_new_tokens": min_new_tokens,
        "ignore_eos": ignore_eos,
        "greedy": decoding.greedy,
        "temperature": decoding.temperature,
        "top_p": decoding.top_p,
        "top_k": decoding.top_k,
        "skip_special_tokens": False if keeps_special_tokens(bench) else None,
        "response_format": bench.accuracy_log_format,
    }
    return GenerationPlan(
        performance=GenerationSpec(max_new_tokens=performance_cap, **common),
        accuracy=GenerationSpec(max_new_tokens=accuracy_cap, **common),
        notes=(decoding.note,) if decoding.note else (),
    )
