"""The layouts of peer result files this package reads (:attr:`PeerRun.layout`), the reproducibility fields each
never writes (:attr:`PeerRun.not_written`), and how each tool computes inter-token latency."""

from __future__ import annotations

# benchmarking-articles.txt:196-207 (how each tool computes ITL)
ITL_AIPERF = "(e2e latency - TTFT) / (output tokens - 1), per request"
ITL_GUIDELLM = ITL_AIPERF  # same formula (GuideLLM weights each request's ITL by output tokens - 1)
ITL_VLLM = (
    "mean of the gaps between consecutive streamed chunks (itls), TPOT = (e2e - TTFT) / (output tokens - 1)"
)
# LoadGen's TPOT (use_token_latencies): (latency - first-token latency) / (tokens - 1), per query -- the same formula
ITL_LOADGEN = ITL_AIPERF

# Layouts (PeerRun.layout) and the reproducibility fields each never writes (PeerRun.not_written; "model" is
# the model revision). Only layouts read from real files say what they never write.
LAYOUT_AIPERF_013 = "aiperf 0.13 (input_config.phases, run_info)"
LAYOUT_AIPERF_OLD = "aiperf, older layout (input_config.loadgen; from the docs)"
LAYOUT_GUIDELLM_08 = "guidellm 0.8 (config.spec, benchmarks[].config)"
LAYOUT_GUIDELLM_OLD = "guidellm, older layout (args; from the source)"
LAYOUT_GENAI_FLAT = "genai-perf, flat input_config (from the exporter test)"
LAYOUT_GENAI_NESTED = "genai-perf 0.0.14+ nested input_config (from the source)"
LAYOUT_VLLM = "vllm bench serve --save-result"
LAYOUT_RUN_RECORD = "inference-audit run-record.json"
NOT_WRITTEN: dict[str, tuple[str, ...]] = {
    LAYOUT_AIPERF_013: ("engine", "model", "precision", "hardware"),
    LAYOUT_GUIDELLM_08: ("engine", "model", "precision", "hardware"),
    LAYOUT_VLLM: ("engine", "model", "precision", "hardware", "tool_version", "slo", "warmup"),
    LAYOUT_RUN_RECORD: (),
}
