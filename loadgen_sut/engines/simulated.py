"""The built-in SIMULATED engine: no model, configurable TTFT/TPOT distributions and output lengths.

It exists to exercise the harness, LoadGen and the checker end to end without hardware. Every
result it produces is labelled "simulated" (engine info, run record, system description, README).

Output tokens: when a sample has a reference answer, the engine "answers" with the reference's
tokens (truncated to the drawn length), so accuracy scoring has something meaningful to score;
otherwise pseudo-random ids. Its output text (``Finished.text``, what a text response hands LoadGen) is the
answer itself when the whole answer was generated, else the ids decoded. Which text it answers is :func:`simulated_answers` (the generic hook: a
data set whose perfect output differs from the scored reference, e.g. qwen3-vl's JSON object, sets
``Sample.answer``; a data set whose evaluator family defines the answer, e.g. gpt-oss-120b's harmony output, names
the family in ``Dataset.evaluator``); its word tokenizer is built from :func:`simulated_vocabulary`, the same in every process. It sleeps once for TTFT and once for the rest of the tokens (LoadGen
only sees the first token and the completion), so it costs two timer wake-ups per sample.

Distribution specs (milliseconds or tokens): ``50`` (constant), ``uniform:A,B``,
``normal:MEAN,SD``, ``lognormal:MEDIAN,SIGMA``, ``exp:MEAN``; output tokens also ``reference``.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from checker.findings import UnusableInput
from loadgen_sut.engines.base import (
    Engine,
    EngineInfo,
    Finished,
    FirstToken,
    FirstTokenCallback,
    GenerationEvent,
    GenerationRequest,
)
from loadgen_sut.engines.tokenizers import Tokenizer

if TYPE_CHECKING:
    from loadgen_sut.datasets import Dataset

_KINDS = ("const", "uniform", "normal", "lognormal", "exp")


def simulated_answers(dataset: Dataset) -> dict[int, str]:
    """What the simulated engine answers for each sample (by ``Sample.index``): the output a perfect model gives,
    where the data set defines one (its evaluator family's answer, e.g. gpt-oss-120b's harmony output, or the
    sample's ``answer``, e.g. qwen3-vl's JSON object), else its reference output. Samples with neither get
    pseudo-random ids."""
    out: dict[int, str] = {}
    for s, answer in zip(dataset.samples, _answers(dataset), strict=True):
        text = answer if answer is not None else s.reference
        if text:
            out[s.index] = text
    return out


def simulated_vocabulary(dataset: Dataset) -> list[str]:
    """The texts the simulated word tokenizer is built from (prompts, references, answers, in sample order): the
    runner and every test process build the same tokenizer from the same data set, so ids mean the same words."""
    return [t for s, a in zip(dataset.samples, _answers(dataset), strict=True) for t in (s.prompt, s.reference, a) if t]


def _answers(dataset: Dataset) -> list[str | None]:
    """Each sample's perfect answer, where the data set defines one: its evaluator family's, else ``Sample.answer``."""
    family: dict[int, str] = {}
    if dataset.evaluator is not None:
        from loadgen_sut.scoring.evaluators import (
            simulated_answers as family_answers,  # heavy: only for such a set
        )

        family = family_answers(dataset)
    return [family.get(s.index, s.answer) for s in dataset.samples]


@dataclass(frozen=True)
class Distribution:
    kind: str
    a: float
    b: float = 0.0

    @classmethod
    def parse(cls, spec: str, what: str) -> Distribution:
        text = spec.strip().lower()
        try:
            if ":" not in text:
                return cls("const", float(text))
            kind, args = text.split(":", 1)
            nums = [float(x) for x in args.split(",")]
        except ValueError as exc:
            raise UnusableInput(f"{what}: cannot read distribution {spec!r} (e.g. 50, uniform:20,60, lognormal:50,0.3)") from exc
        need = {"uniform": 2, "normal": 2, "lognormal": 2, "exp": 1}
        if kind not in need or len(nums) != need[kind]:
            raise UnusableInput(f"{what}: {spec!r}: use one of 50, uniform:A,B, normal:MEAN,SD, lognormal:MEDIAN,SIGMA, exp:MEAN")
        if any(not math.isfinite(x) or x < 0 for x in nums):
            raise UnusableInput(f"{what}: {spec!r}: values must be finite and >= 0")
        return cls(kind, nums[0], nums[1] if len(nums) > 1 else 0.0)

    def draw(self, rng: np.random.Generator) -> float:
        if self.kind == "const":
            return self.a
        if self.kind == "uniform":
            return float(rng.uniform(min(self.a, self.b), max(self.a, self.b)))
        if self.kind == "normal":
            return max(0.0, float(rng.normal(self.a, self.b)))
        if self.kind == "lognormal":
            return float(self.a * math.exp(rng.normal(0.0, self.b)))
        return float(rng.exponential(self.a))

    def describe(self) -> str:
        if self.kind == "const":
            return f"{self.a:g}"
        if self.kind == "exp":
            return f"exp:{self.a:g}"
        return f"{self.kind}:{self.a:g},{self.b:g}"


@dataclass(frozen=True)
class SimulatedConfig:
    ttft_ms: Distribution
    tpot_ms: Distribution
    output_tokens: Distribution | None  # None = the reference answer's length
    seed: int = 0
    max_concurrency: int | None = None  # emulate a fixed number of slots (queueing shows in TTFT)


class SimulatedEngine(Engine):
    """SIMULATED: sleeps instead of generating. Never use its numbers as a performance result."""

    def __init__(
        self,
        config: SimulatedConfig,
        tokenizer: Tokenizer,
        references: Mapping[int, str] | None = None,
        model: str = "simulated",
    ) -> None:
        self._cfg = config
        self._tok = tokenizer
        self._refs = dict(references or {})
        self._ref_ids: dict[int, tuple[int, ...]] = {}
        self._rng = np.random.default_rng(config.seed)
        self._model = model
        self._slots: asyncio.Semaphore | None = None

    async def start(self) -> None:
        if self._cfg.max_concurrency:
            self._slots = asyncio.Semaphore(self._cfg.max_concurrency)

    async def close(self) -> None:
        return None

    def info(self) -> EngineInfo:
        c = self._cfg
        return EngineInfo(
            kind="simulated",
            name="simulated",
            version=None,
            model=f"{self._model} (simulated)",
            precision="n/a (simulated)",
            tokenizer=self._tok.name,
            simulated=True,
            parameters={
                "ttft_ms": c.ttft_ms.describe(),
                "tpot_ms": c.tpot_ms.describe(),
                "output_tokens": c.output_tokens.describe() if c.output_tokens else "reference",
                "seed": str(c.seed),
                "max_concurrency": str(c.max_concurrency or "unlimited"),
            },
        )

    def detokenize(self, token_ids: tuple[int, ...] | list[int]) -> str:
        return self._tok.decode(token_ids)

    def _output_ids(self, request: GenerationRequest) -> tuple[int, ...]:
        ref = self._ref_ids.get(request.sample_index)
        if ref is None and request.sample_index in self._refs:
            ref = tuple(self._tok.encode(self._refs[request.sample_index]))
            self._ref_ids[request.sample_index] = ref
        if self._cfg.output_tokens is None:
            n = len(ref) + 1 if ref else 16  # the answer plus EOS
        else:
            n = max(1, round(self._cfg.output_tokens.draw(self._rng)))
        n = max(request.min_new_tokens or 1, min(n, request.max_new_tokens))
        if ref:
            ids = list(ref[:n])
            if len(ids) < n:
                ids.append(self._tok.eos_token_id if self._tok.eos_token_id is not None else 0)
            while len(ids) < n and request.ignore_eos:
                ids.extend(ref[: n - len(ids)])
            return tuple(ids[:n])
        return tuple(int(x) for x in self._rng.integers(4, 1000, size=n))

    def _text(self, request: GenerationRequest, ids: tuple[int, ...]) -> str:
        """The output's text: the answer itself when the output is the whole answer (then EOS), else the ids decoded
        (the word tokenizer joins words with one space: a cut answer, or one repeated under ``ignore_eos``)."""
        ref = self._ref_ids.get(request.sample_index)
        eos = self._tok.eos_token_id
        if ref and (ids == ref or (ids[:-1] == ref and ids[-1] == eos)):
            return self._refs[request.sample_index]
        return self._tok.decode(ids)

    async def generate(
        self, request: GenerationRequest, on_first_token: FirstTokenCallback | None = None
    ) -> AsyncIterator[GenerationEvent]:
        if self._slots is not None:
            await self._slots.acquire()
        try:
            ids = self._output_ids(request)
            ttft_s = self._cfg.ttft_ms.draw(self._rng) / 1000.0
            rest_s = sum(self._cfg.tpot_ms.draw(self._rng) for _ in range(len(ids) - 1)) / 1000.0
            await asyncio.sleep(ttft_s)
            yield FirstToken(token_ids=ids[:1])
            if rest_s > 0:
                await asyncio.sleep(rest_s)
            yield Finished(token_ids=ids, n_tokens=len(ids), finish_reason="simulated", text=self._text(request, ids))
        finally:
            if self._slots is not None:
                self._slots.release()
