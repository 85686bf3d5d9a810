"""Read the result files of peer benchmarking tools into :class:`~checker.audit.peer_model.PeerRun`.

Formats (field names as the tools write them):

- GuideLLM ``benchmarks.json``: ``{"metadata"?: {guidellm_version, ...}, "args": {target, model, processor, data,
  profile, rate, warmup, cooldown, backend_kwargs, ...}, "benchmarks": [{"type_": "generative_benchmark",
  "config": {"run_id", "strategy": {"type_", "streams" | "rate"}, ...}, "metrics": {"request_totals",
  "time_to_first_token_ms", "inter_token_latency_ms", "time_per_output_token_ms", "request_latency",
  "output_token_count", "prompt_token_count", "output_tokens_per_second", "requests_per_second"}, ...}]}`` where
  each metric is ``{"successful": {mean, median, count, percentiles: {p50, p90, p95, p99, ...}}, ...}``
  (vllm-project/guidellm src/guidellm/benchmark/schemas/generative/{report,metrics}.py, schemas/statistics).
- AIPerf ``profile_export_aiperf.json``: metric objects ``{"unit", "avg", "p50", ..., "p99", "min", "max", "std"}``
  keyed ``request_throughput``, ``time_to_first_token``, ``inter_token_latency``, ``request_latency``,
  ``output_sequence_length``, ``input_sequence_length``, ``output_token_throughput``, plus ``goodput``,
  ``input_config: {endpoint: {model_names}, input: {prompt: {output_tokens: {mean}}}, loadgen: {concurrency,
  request_rate}, tokenizer: {name}, cli_command}`` (ai-dynamo/aiperf docs/tutorials/working-with-profile-exports.md).
- GenAI-Perf ``profile_export_genai_perf.json``: the same metric objects, ``input_config`` flat: ``model`` (list),
  ``tokenizer``, ``concurrency``, ``request_rate``, ``synthetic_input_tokens_mean``, ``output_tokens_mean``,
  ``extra_inputs`` (triton-inference-server/perf_analyzer genai-perf).
- ``vllm bench serve`` ``--save-result`` JSON: ``date, backend, label, model_id, tokenizer_id, num_prompts,
  request_rate, burstiness, max_concurrency, duration, completed, total_input_tokens, total_output_tokens,
  request_throughput, request_goodput, output_throughput, mean_/median_/std_/p{N}_{ttft,tpot,itl,e2el}_ms`` and,
  with ``--save-detailed``, ``output_lens``; ``--metadata KEY=VALUE`` pairs land at the top level
  (vllm-project/vllm vllm/benchmarks/serve.py).

A file in none of these shapes raises :class:`~checker.findings.UnusableInput` naming it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from checker.audit.peer_model import ClientArchitecture, LatencyStat, LoadMode, PeerRun, PeerTool
from checker.findings import UnusableInput
from checker.safe_io import JsonProblem, display_name, parse_json, read_input_bytes

# benchmarking-articles.txt:196-207 (how each tool computes ITL)
ITL_AIPERF = "(e2e latency - TTFT) / (output tokens - 1), per request"
ITL_GUIDELLM = ITL_AIPERF  # same formula (GuideLLM weights each request's ITL by output tokens - 1)
ITL_VLLM = (
    "mean of the gaps between consecutive streamed chunks (itls), TPOT = (e2e - TTFT) / (output tokens - 1)"
)

# keys a run may carry as free metadata (vllm --metadata KEY=VALUE, or the claim's metadata: block)
_META_KEYS: dict[str, tuple[str, ...]] = {
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


def load_peer_runs(path: Path) -> list[PeerRun]:
    """Every run in ``path`` (a GuideLLM file may hold a sweep of several)."""
    data = load_peer_json(path)
    tool = detect_tool(data)
    if tool is None:
        raise UnusableInput(
            "not a result file of GuideLLM (benchmarks.json), AIPerf / GenAI-Perf (profile_export_*.json) or "
            "vllm bench serve (--save-result JSON)",
            str(path),
        )
    assert isinstance(data, dict)
    if tool is PeerTool.GUIDELLM:
        return _guidellm(path, data)
    if tool is PeerTool.VLLM_BENCH:
        return [_vllm(path, data)]
    return [_aiperf_family(path, data, tool)]


def load_peer_json(path: Path) -> Any:
    """The JSON document of a peer result file: a regular file (a FIFO or device is refused without blocking),
    capped in size, parsed with bounded depth and integer length; raises :class:`UnusableInput` naming it."""
    raw = read_input_bytes(path, what="result file")
    where = display_name(str(path))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnusableInput(f"cannot read the result file: not UTF-8 text (byte {exc.start})", where) from exc
    try:
        return parse_json(text)
    except JsonProblem as exc:
        raise UnusableInput(f"invalid JSON: {exc.msg}", where, exc.lineno) from exc


def detect_tool(data: Any) -> PeerTool | None:
    if not isinstance(data, dict):
        return None
    benches = data.get("benchmarks")
    if isinstance(benches, list) and benches and isinstance(benches[0], dict) and "metrics" in benches[0]:
        return PeerTool.GUIDELLM
    cfg = data.get("input_config")
    if isinstance(cfg, dict) and isinstance(data.get("request_throughput"), dict):
        if isinstance(cfg.get("endpoint"), dict) or isinstance(cfg.get("loadgen"), dict):
            return PeerTool.AIPERF
        return PeerTool.GENAI_PERF
    if "request_throughput" in data and any(
        k in data for k in ("mean_ttft_ms", "output_throughput", "mean_e2el_ms")
    ):
        return PeerTool.VLLM_BENCH
    return None


# ---- helpers ------------------------------------------------------------------------------------------------
def _num(v: Any) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int | float):
        return float(v)
    try:
        return float(str(v))
    except ValueError:
        return None


def _str(v: Any) -> str | None:
    if v is None:
        return None
    if isinstance(v, list):
        v = ", ".join(str(x) for x in v if x is not None)
    s = str(v).strip()
    return s or None


def _bool(v: Any) -> bool | None:
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v.strip().lower() in ("true", "1", "yes", "false", "0", "no"):
        return v.strip().lower() in ("true", "1", "yes")
    return None


def _obj(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _dig(obj: Any, *keys: str) -> Any:
    for k in keys:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(k)
    return obj


def _meta(data: dict[str, Any], field: str) -> Any:
    for key in _META_KEYS[field]:
        if key in data and data[key] not in (None, ""):
            return data[key]
    return None


def _find_key(obj: Any, key: str, depth: int = 0) -> Any:
    """First value of ``key`` anywhere in nested dicts (bounded depth)."""
    if depth > 6 or not isinstance(obj, dict):
        return None
    if key in obj:
        return obj[key]
    for v in obj.values():
        found = _find_key(v, key, depth + 1)
        if found is not None:
            return found
    return None


# ---- GuideLLM -----------------------------------------------------------------------------------------------
def _guidellm_stat(metric: Any) -> LatencyStat | None:
    s = _dig(metric, "successful")
    if not isinstance(s, dict):
        return None
    pct = _obj(s.get("percentiles"))
    out = {}
    for k, v in pct.items():
        n = _num(v)
        if n is not None:
            name = {"p001": "p0.1", "p01": "p1", "p05": "p5", "p999": "p99.9"}.get(k, k)
            out[name] = n
    count = s.get("count")
    return LatencyStat(
        mean_ms=_num(s.get("mean")), percentiles_ms=out, count=count if isinstance(count, int) else None
    )


def _guidellm(path: Path, data: dict[str, Any]) -> list[PeerRun]:
    args = _obj(data.get("args"))
    meta = _obj(data.get("metadata"))
    runs = []
    for i, bench in enumerate(data["benchmarks"]):
        if not isinstance(bench, dict) or not isinstance(bench.get("metrics"), dict):
            raise UnusableInput(f"benchmarks[{i}] has no metrics object", str(path))
        m = bench["metrics"]
        cfg = _obj(bench.get("config"))
        strategy = _obj(cfg.get("strategy"))
        stype = str(strategy.get("type_", "")).lower()
        mode = {
            "concurrent": LoadMode.CONCURRENCY,
            "synchronous": LoadMode.CONCURRENCY,
            "constant": LoadMode.RATE,
            "poisson": LoadMode.RATE,
            "throughput": LoadMode.THROUGHPUT,
        }.get(stype)
        conc = 1.0 if stype == "synchronous" else _num(strategy.get("streams"))
        out_count = _dig(m, "output_token_count", "successful")
        in_count = _dig(m, "prompt_token_count", "successful")
        data_spec = (
            " ".join(str(d) for d in args.get("data", []) if d is not None)
            if isinstance(args.get("data"), list)
            else str(args.get("data") or "")
        )
        configured = re.search(r"output_tokens\s*[=:]\s*(\d+)", data_spec)
        ignore_eos = _bool(_find_key(args.get("backend_kwargs"), "ignore_eos"))
        merged = {**args, **meta}
        runs.append(
            PeerRun(
                path=str(path),
                index=i,
                tool=PeerTool.GUIDELLM,
                tool_version=_str(meta.get("guidellm_version") or _meta(merged, "tool_version")),
                client=ClientArchitecture.MULTI_PROCESS,
                itl_formula=ITL_GUIDELLM,
                engine=_str(_meta(merged, "engine")),
                model=_str(args.get("model")),
                model_revision=_str(_meta(merged, "model_revision")),
                precision=_str(_meta(merged, "precision")),
                tokenizer=_str(args.get("processor")),
                hardware=_str(_meta(merged, "hardware")),
                input_tokens_mean=_num(_dig(in_count, "mean")),
                output_tokens_mean=_num(_dig(out_count, "mean")),
                output_tokens_min=_num(_dig(out_count, "min")),
                output_tokens_max=_num(_dig(out_count, "max")),
                output_tokens_configured=float(configured.group(1)) if configured else None,
                load_mode=mode,
                concurrency=conc,
                request_rate=_num(strategy.get("rate")),
                slo=_str(_meta(merged, "slo")),
                warmup=_str(args.get("warmup") if args.get("warmup") is not None else cfg.get("warmup")),
                run_id=_str(cfg.get("run_id")),
                ignore_eos=ignore_eos,
                requests_completed=_dig(m, "request_totals", "successful")
                if isinstance(_dig(m, "request_totals", "successful"), int)
                else None,
                output_throughput_tps=_num(_dig(m, "output_tokens_per_second", "successful", "mean")),
                request_throughput_rps=_num(_dig(m, "requests_per_second", "successful", "mean")),
                goodput=None,
                ttft=_guidellm_stat(m.get("time_to_first_token_ms")),
                itl=_guidellm_stat(m.get("inter_token_latency_ms")),
                tpot=_guidellm_stat(m.get("time_per_output_token_ms")),
                e2e=_scaled(
                    _guidellm_stat(m.get("request_latency")), 1000.0
                ),  # GuideLLM request_latency is in s
            )
        )
    return runs


def _scaled(stat: LatencyStat | None, factor: float) -> LatencyStat | None:
    if stat is None:
        return None
    return LatencyStat(
        mean_ms=None if stat.mean_ms is None else stat.mean_ms * factor,
        percentiles_ms={k: v * factor for k, v in stat.percentiles_ms.items()},
        count=stat.count,
    )


# ---- AIPerf / GenAI-Perf ------------------------------------------------------------------------------------
def _aiperf_stat(metric: Any) -> LatencyStat | None:
    if not isinstance(metric, dict):
        return None
    unit = str(metric.get("unit", "ms")).lower()
    factor = {"ms": 1.0, "s": 1000.0, "sec": 1000.0, "us": 0.001, "ns": 1e-6}.get(unit, 1.0)
    pct = {}
    for k, v in metric.items():
        n = _num(v)
        if re.fullmatch(r"p\d+(\.\d+)?", k) and n is not None:
            pct[k] = n * factor
    avg = _num(metric.get("avg"))
    return LatencyStat(mean_ms=None if avg is None else avg * factor, percentiles_ms=pct)


def _aiperf_family(path: Path, data: dict[str, Any], tool: PeerTool) -> PeerRun:
    cfg = data["input_config"]
    if tool is PeerTool.AIPERF:
        model = _dig(cfg, "endpoint", "model_names")
        tokenizer = _dig(cfg, "tokenizer", "name")
        conc = _num(_dig(cfg, "loadgen", "concurrency"))
        rate = _num(_dig(cfg, "loadgen", "request_rate"))
        out_cfg = _num(_dig(cfg, "input", "prompt", "output_tokens", "mean"))
        in_cfg = _num(_dig(cfg, "input", "prompt", "input_tokens", "mean"))
        warm = _dig(cfg, "loadgen", "warmup_request_count")
        slo = _dig(cfg, "input", "goodput") or _find_key(cfg, "goodput")
        extra = _dig(cfg, "input", "extra") or _find_key(cfg, "extra_inputs")
        client = ClientArchitecture.MULTI_PROCESS
    else:
        model = cfg.get("model")
        tokenizer = cfg.get("tokenizer")
        conc = _num(cfg.get("concurrency"))
        rate = _num(cfg.get("request_rate"))
        out_cfg = _num(cfg.get("output_tokens_mean"))
        in_cfg = _num(cfg.get("synthetic_input_tokens_mean"))
        warm = cfg.get("warmup_request_count")
        slo = cfg.get("goodput")
        extra = cfg.get("extra_inputs")
        client = ClientArchitecture.NATIVE
    ignore_eos = _extra_flag(extra, "ignore_eos")
    osl = _obj(data.get("output_sequence_length") or data.get("num_output_token"))
    isl = _obj(data.get("input_sequence_length") or data.get("num_input_token"))
    merged = {**cfg, **data}
    count = _num(_dig(data, "request_count", "avg"))
    mode = LoadMode.CONCURRENCY if conc is not None else (LoadMode.RATE if rate is not None else None)
    goodput = data.get("goodput")
    return PeerRun(
        path=str(path),
        tool=tool,
        tool_version=_str(_meta(merged, "tool_version")),
        client=client,
        itl_formula=ITL_AIPERF,
        engine=_str(_meta(merged, "engine")),
        model=_str(model),
        model_revision=_str(_meta(merged, "model_revision")),
        precision=_str(_meta(merged, "precision")),
        tokenizer=_str(tokenizer),
        hardware=_str(_meta(merged, "hardware")),
        input_tokens_mean=_num(isl.get("avg")) if isl else in_cfg,
        output_tokens_mean=_num(osl.get("avg")) if osl else None,
        output_tokens_min=_num(osl.get("min")),
        output_tokens_max=_num(osl.get("max")),
        output_tokens_configured=out_cfg if out_cfg and out_cfg > 0 else None,
        load_mode=mode,
        concurrency=conc,
        request_rate=rate,
        slo=_str(slo if not isinstance(slo, dict) else json.dumps(slo, sort_keys=True)),
        warmup=_str(warm),
        run_id=_str(_meta(merged, "run_id")),
        ignore_eos=ignore_eos,
        requests_completed=int(count) if count is not None else None,
        output_throughput_tps=_num(_dig(data, "output_token_throughput", "avg")),
        request_throughput_rps=_num(_dig(data, "request_throughput", "avg")),
        goodput=_num(_dig(goodput, "avg")) if isinstance(goodput, dict) else _num(goodput),
        ttft=_aiperf_stat(data.get("time_to_first_token")),
        itl=_aiperf_stat(data.get("inter_token_latency")),
        tpot=None,
        e2e=_aiperf_stat(data.get("request_latency")),
    )


def _extra_flag(extra: Any, key: str) -> bool | None:
    """A flag among extra request inputs: {"ignore_eos": true}, ["ignore_eos:true"] or [["ignore_eos", true]]."""
    if isinstance(extra, dict):
        return _bool(_find_key(extra, key))
    if isinstance(extra, list):
        for item in extra:
            if isinstance(item, str) and item.split(":", 1)[0].strip() == key and ":" in item:
                return _bool(item.split(":", 1)[1])
            if isinstance(item, list | tuple) and len(item) == 2 and item[0] == key:
                return _bool(item[1])
    return None


# ---- vllm bench serve ---------------------------------------------------------------------------------------
def _vllm_stat(data: dict[str, Any], name: str, count: int | None) -> LatencyStat | None:
    mean = _num(data.get(f"mean_{name}_ms"))
    pct = {}
    for k, v in data.items():
        m = re.fullmatch(rf"p(\d+(?:\.\d+)?)_{name}_ms", k)
        n = _num(v)
        if m and n is not None:
            pct[f"p{m.group(1)}"] = n
    median = _num(data.get(f"median_{name}_ms"))
    if median is not None:
        pct.setdefault("p50", median)
    if mean is None and not pct:
        return None
    return LatencyStat(mean_ms=mean, percentiles_ms=pct, count=count)


def _vllm(path: Path, data: dict[str, Any]) -> PeerRun:
    completed = data.get("completed") if isinstance(data.get("completed"), int) else None
    out_lens = (
        [x for x in data.get("output_lens", []) if isinstance(x, int | float)]
        if isinstance(data.get("output_lens"), list)
        else []
    )
    rate = data.get("request_rate")
    rate_num = None if rate in (None, "inf") else _num(rate)
    conc = _num(data.get("max_concurrency"))
    mode = (
        LoadMode.CONCURRENCY
        if conc is not None
        else (LoadMode.RATE if rate_num is not None else LoadMode.THROUGHPUT)
    )
    total_out = _num(data.get("total_output_tokens"))
    total_in = _num(data.get("total_input_tokens"))
    engine = _meta(data, "engine")
    return PeerRun(
        path=str(path),
        tool=PeerTool.VLLM_BENCH,
        tool_version=_str(_meta(data, "tool_version")),
        client=ClientArchitecture.SINGLE_PROCESS,
        itl_formula=ITL_VLLM,
        engine=_str(engine),
        model=_str(data.get("model_id")),
        model_revision=_str(_meta(data, "model_revision")),
        precision=_str(_meta(data, "precision")),
        tokenizer=_str(data.get("tokenizer_id")),
        hardware=_str(_meta(data, "hardware")),
        input_tokens_mean=None if total_in is None or not completed else total_in / completed,
        output_tokens_mean=None if total_out is None or not completed else total_out / completed,
        output_tokens_min=float(min(out_lens)) if out_lens else None,
        output_tokens_max=float(max(out_lens)) if out_lens else None,
        output_tokens_configured=_num(data.get("output_len") or data.get("random_output_len")),
        load_mode=mode,
        concurrency=conc,
        request_rate=rate_num,
        slo=_str(_meta(data, "slo")),
        warmup=_str(_meta(data, "warmup")),
        run_id=_str(_meta(data, "run_id") or data.get("date")),
        ignore_eos=_bool(_meta(data, "ignore_eos")),
        requests_completed=completed,
        output_throughput_tps=_num(data.get("output_throughput")),
        request_throughput_rps=_num(data.get("request_throughput")),
        goodput=_num(data.get("request_goodput")),
        ttft=_vllm_stat(data, "ttft", completed),
        itl=_vllm_stat(data, "itl", None),
        tpot=_vllm_stat(data, "tpot", completed),
        e2e=_vllm_stat(data, "e2el", completed),
    )


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
        value = _meta({k: v for k, v in metadata.items()}, field)
        if value is not None and getattr(run, field) is None:
            updates[field] = str(value)
    eos = _bool(metadata.get("ignore_eos"))
    if eos is not None and run.ignore_eos is None:
        updates["ignore_eos"] = eos
    return run.model_copy(update=updates) if updates else run
