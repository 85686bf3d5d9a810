"""Typed record of one run of a peer benchmarking tool (GuideLLM, AIPerf, GenAI-Perf, ``vllm bench serve``).

Only what the comparability rules need is kept; anything the file does not record is None ("not recorded", never
0). Latencies are in milliseconds (``_ms``), every percentile set carries its count when the tool writes one.
"""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class PeerTool(str, Enum):
    GUIDELLM = "guidellm"
    AIPERF = "aiperf"
    GENAI_PERF = "genai-perf"
    VLLM_BENCH = "vllm-bench-serve"
    INFERENCE_AUDIT = "inference-audit"  # the run record of our own ``inference-audit run`` (run-record.json)


class ClientArchitecture(str, Enum):
    SINGLE_PROCESS = "single-process asyncio"  # vllm bench serve (benchmarking-articles.txt:204)
    MULTI_PROCESS = "multi-process"  # GuideLLM, AIPerf
    NATIVE = "native multi-threaded (perf_analyzer)"  # GenAI-Perf drives perf_analyzer (C++)
    LOADGEN = "MLPerf LoadGen (C++ issue thread) + asyncio SUT"  # inference-audit run


class LoadMode(str, Enum):
    CONCURRENCY = "concurrency"
    RATE = "request-rate"
    THROUGHPUT = "max-throughput"  # all requests at once / unlimited rate
    SWEEP = "sweep"


class LatencyStat(_Model):
    """One latency metric of a run: mean and percentiles in ms (None where the tool wrote none)."""

    mean_ms: float | None = None
    percentiles_ms: dict[str, float] = Field(default_factory=dict)  # "p50", "p90", "p99", ...
    count: int | None = None

    @property
    def has_tail(self) -> bool:
        return any(k in self.percentiles_ms for k in ("p90", "p95", "p99", "p99.9", "p999"))


# The twelve reproducibility fields (benchmarking-articles.txt:624-641) as PeerRun attributes.
REPRODUCIBILITY_FIELDS: dict[str, str] = {
    "engine": "serving engine and version",
    "model": "model and revision",
    "precision": "precision",
    "tokenizer": "tokenizer",
    "input_tokens": "input sequence length",
    "output_tokens": "output sequence length",
    "hardware": "hardware (model and count)",
    "load": "concurrency or request rate",
    "tool_version": "benchmark tool and version",
    "slo": "declared SLO",
    "warmup": "warm-up",
    "run_id": "run id",
}


class PeerRun(_Model):
    path: str
    index: int = 0  # benchmark index inside the file (GuideLLM sweeps hold several)
    tool: PeerTool
    tool_version: str | None = None
    layout: str | None = None  # which file layout was read, e.g. "aiperf 0.13 (input_config.phases)"
    # reproducibility fields (REPRODUCIBILITY_FIELDS keys) this layout never writes: their absence is the
    # tool's, not the run's ("model" here means the model revision)
    not_written: tuple[str, ...] = ()
    command: str | None = None  # the exact command line, where the file keeps it
    client: ClientArchitecture
    itl_formula: str  # how the tool computes its ITL figure
    engine: str | None = None  # engine and version, e.g. "vllm 0.9.1"
    model: str | None = None
    model_revision: str | None = None
    precision: str | None = None
    tokenizer: str | None = None
    hardware: str | None = None
    input_tokens_mean: float | None = None
    output_tokens_mean: float | None = None
    output_tokens_min: float | None = None
    output_tokens_max: float | None = None
    output_tokens_configured: float | None = None
    load_mode: LoadMode | None = None
    concurrency: float | None = None  # with a request rate: the cap on requests in flight
    request_rate: float | None = None
    arrival: str | None = (
        None  # arrival process of a request-rate load: poisson, constant, gamma (burstiness b)
    )
    slo: str | None = None
    slo_met: bool | None = None  # a run that checks its SLO as percentile bounds (LoadGen): were they met
    validity: str | None = None  # the run's own verdict on itself, where it has one (LoadGen VALID / INVALID)
    warmup: str | None = None
    run_id: str | None = None
    ignore_eos: bool | None = None
    requests_completed: int | None = None
    output_throughput_tps: float | None = None  # output tokens per second
    request_throughput_rps: float | None = None
    goodput: float | None = None  # as the tool reports it (None when no SLO was configured)
    ttft: LatencyStat | None = None
    itl: LatencyStat | None = None
    tpot: LatencyStat | None = None
    e2e: LatencyStat | None = None

    @property
    def label(self) -> str:
        return f"{self.path}" + (f"#{self.index}" if self.index else "") + f" ({self.tool.value})"

    def load_text(self) -> str | None:
        """The offered load in words: "request rate 50/s (poisson)", "concurrency 8", "max-throughput"."""
        if self.request_rate is not None:
            text = f"request rate {self.request_rate:g}/s" + (f" ({self.arrival})" if self.arrival else "")
            if self.concurrency is not None:
                text += f", at most {self.concurrency:g} in flight"
            return text
        if self.concurrency is not None:
            return f"concurrency {self.concurrency:g}"
        return None if self.load_mode is None else self.load_mode.value

    def reproducibility(self) -> dict[str, str | None]:
        """The twelve fields, each as recorded (None when the file does not record it)."""
        load = self.load_text()
        model = (
            None
            if self.model is None
            else self.model + (f"@{self.model_revision}" if self.model_revision else "")
        )
        return {
            "engine": self.engine,
            "model": model if self.model_revision else None,
            "precision": self.precision,
            "tokenizer": self.tokenizer,
            "input_tokens": None if self.input_tokens_mean is None else f"{self.input_tokens_mean:g}",
            "output_tokens": None if self.output_tokens_mean is None else f"{self.output_tokens_mean:g}",
            "hardware": self.hardware,
            "load": load,
            "tool_version": None if self.tool_version is None else f"{self.tool.value} {self.tool_version}",
            "slo": self.slo,
            "warmup": self.warmup,
            "run_id": self.run_id,
        }
