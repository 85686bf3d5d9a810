"""Free metadata a run may carry (``vllm bench serve --metadata KEY=VALUE``, or the claim's ``metadata:`` block):
the keys each field goes by, and how the claim's block fills what the file does not record."""

from __future__ import annotations

from typing import Any

from checker.audit.peers.model import PeerRun
from checker.audit.peers.values import as_bool

# keys a run may carry as free metadata (vllm --metadata KEY=VALUE, or the claim's metadata: block)
META_KEYS: dict[str, tuple[str, ...]] = {
    "engine": ("engine", "engine_version", "vllm_version", "server_version", "serving_engine"),
    "model_revision": ("model_revision", "revision", "model_version"),
    "precision": ("precision", "dtype", "quantization", "weight_dtype"),
    "tokenizer": ("tokenizer",),
    "hardware": ("hardware", "gpu", "gpus", "accelerator", "accelerators"),
    "slo": ("slo", "goodput_slo"),
    "warmup": ("warmup", "num_warmups", "warmup_requests", "warmup_seconds"),
    "run_id": ("run_id", "run-id"),
    "tool_version": (
        "tool_version",
        "bench_version",
        "guidellm_version",
        "aiperf_version",
        "genai_perf_version",
    ),
    "ignore_eos": ("ignore_eos",),
}


def meta_value(data: dict[str, Any], field: str) -> Any:
    """The first non-empty value under any of the keys ``field`` goes by (None: none of them)."""
    for key in META_KEYS[field]:
        if key in data and data[key] not in (None, ""):
            return data[key]
    return None


def apply_metadata(run: PeerRun, metadata: dict[str, str | int | float | bool]) -> PeerRun:
    """Fill fields the file does not record from the claim's ``metadata:`` block (the file wins otherwise)."""
    updates: dict[str, Any] = {}
    for field in (
        "engine",
        "model_revision",
        "precision",
        "tokenizer",
        "hardware",
        "slo",
        "warmup",
        "run_id",
        "tool_version",
    ):
        value = meta_value({k: v for k, v in metadata.items()}, field)
        if value is not None and getattr(run, field) is None:
            updates[field] = str(value)
    eos = as_bool(metadata.get("ignore_eos"))
    if eos is not None and run.ignore_eos is None:
        updates["ignore_eos"] = eos
    return run.model_copy(update=updates) if updates else run
