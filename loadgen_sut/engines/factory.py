"""Build an engine (and its tokenizer) from a serializable spec — the same in every test process."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from checker.findings import UnusableInput
from loadgen_sut.engines.base import Engine
from loadgen_sut.engines.http_client import Endpoint
from loadgen_sut.engines.openai_http import FLAVORS, OpenAIConfig, OpenAIEngine
from loadgen_sut.engines.simulated import Distribution, SimulatedConfig, SimulatedEngine
from loadgen_sut.engines.tokenizers import HFTokenizer, Tokenizer, WordTokenizer
from loadgen_sut.engines.transformers_local import TransformersConfig, TransformersEngine

EngineKind = Literal["openai", "transformers", "simulated"]


class EngineSpec(BaseModel):
    """Everything needed to rebuild the engine in a fresh process (no secrets: the API key is read
    from the environment variable named here)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: EngineKind
    model: str
    endpoints: tuple[str, ...] = ()
    tokenizer_dir: str | None = None
    # openai
    flavor: str = "auto"
    api: Literal["completions", "chat"] = "completions"
    request_timeout_s: float = 600.0
    idle_timeout_s: float = 60.0
    connect_timeout_s: float = 10.0
    probe_timeout_s: float = 30.0  # GET /v1/models at start, the whole exchange
    max_concurrency: int = 1024
    api_key_env: str | None = None
    client_workers: int = 0  # HTTP client worker processes (0: the client runs in the LoadGen process)
    # transformers
    device: str = "cpu"
    dtype: str = "auto"
    batch_size: int = 8
    # simulated
    sim_ttft_ms: str = "50"
    sim_tpot_ms: str = "10"
    sim_output_tokens: str = "reference"
    sim_seed: int = 0
    sim_max_concurrency: int | None = None

    def validate_spec(self) -> None:
        """Cheap checks the parent can make before starting anything."""
        if self.kind == "openai":
            if not self.endpoints:
                raise UnusableInput("--engine openai needs at least one --endpoint URL")
            for url in self.endpoints:
                try:
                    Endpoint.parse(url)
                except ValueError as exc:
                    raise UnusableInput(f"--endpoint: {exc}") from exc
            if self.flavor != "auto" and self.flavor not in FLAVORS:
                raise UnusableInput(f"unknown --engine-flavor {self.flavor!r} (auto, {', '.join(FLAVORS)})")
        if self.kind == "simulated":
            Distribution.parse(self.sim_ttft_ms, "--sim-ttft-ms")
            Distribution.parse(self.sim_tpot_ms, "--sim-tpot-ms")
            if self.sim_output_tokens != "reference":
                Distribution.parse(self.sim_output_tokens, "--sim-output-tokens")
        if self.client_workers < 0:
            raise UnusableInput(f"--client-workers {self.client_workers}: 0 (in-process client) or more")
        if self.client_workers and self.kind == "transformers":
            raise UnusableInput("--client-workers: the transformers engine runs in the LoadGen process (use 0)")
        if self.tokenizer_dir and not Path(self.tokenizer_dir).is_dir():
            raise UnusableInput("tokenizer directory not found", path=self.tokenizer_dir)
        if self.kind == "transformers" and not Path(self.model).is_dir():
            raise UnusableInput("--engine transformers needs --model to be a local model directory", path=self.model)


def build_tokenizer(spec: EngineSpec, texts: list[str]) -> Tokenizer | None:
    """The served model's tokenizer when given; the simulated engine falls back to a word tokenizer."""
    if spec.tokenizer_dir:
        return HFTokenizer(Path(spec.tokenizer_dir))
    if spec.kind == "transformers":
        return HFTokenizer(Path(spec.model))
    if spec.kind == "simulated":
        return WordTokenizer(texts)
    return None


def build_engine(spec: EngineSpec, tokenizer: Tokenizer | None, references: dict[int, str]) -> Engine:
    if spec.kind == "openai":
        api_key = os.environ.get(spec.api_key_env) if spec.api_key_env else None
        return OpenAIEngine(
            OpenAIConfig(
                endpoints=spec.endpoints,
                model=spec.model,
                flavor=spec.flavor,
                api=spec.api,
                request_timeout_s=spec.request_timeout_s,
                idle_timeout_s=spec.idle_timeout_s,
                connect_timeout_s=spec.connect_timeout_s,
                probe_timeout_s=spec.probe_timeout_s,
                api_key=api_key,
                max_concurrency=spec.max_concurrency,
            ),
            tokenizer,
        )
    if spec.kind == "transformers":
        return TransformersEngine(
            TransformersConfig(model_dir=spec.model, device=spec.device, dtype=spec.dtype, batch_size=spec.batch_size),
            tokenizer,
        )
    assert tokenizer is not None
    out = None if spec.sim_output_tokens == "reference" else Distribution.parse(spec.sim_output_tokens, "--sim-output-tokens")
    return SimulatedEngine(
        SimulatedConfig(
            ttft_ms=Distribution.parse(spec.sim_ttft_ms, "--sim-ttft-ms"),
            tpot_ms=Distribution.parse(spec.sim_tpot_ms, "--sim-tpot-ms"),
            output_tokens=out,
            seed=spec.sim_seed,
            max_concurrency=spec.sim_max_concurrency,
        ),
        tokenizer,
        references,
        model=spec.model,
    )
