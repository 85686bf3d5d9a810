"""Read the result files of peer benchmarking tools into :class:`~checker.audit.peers.model.PeerRun`.

Formats, by tool and version. The layouts marked *captured* were read from files that release wrote against
``bench/token_server.py`` (``bench/peers/capture_fixtures.py``; the files are the fixtures under
``tests/audit/fixtures/peers/<tool>-<version>/``, each with its PROVENANCE.txt); the others were written from
the tools' docs and source, and are kept for files of older releases.

- AIPerf 0.13 ``profile_export_aiperf.json`` (*captured*, ``schema_version`` "1.4"): top level ``aiperf_version``,
  ``benchmark_id``, metric objects ``{"unit", "avg", "p1".."p99", "min", "max", "std", "count"}`` keyed
  ``request_throughput``, ``time_to_first_token``, ``inter_token_latency``, ``request_latency``,
  ``output_sequence_length``, ``input_sequence_length``, ``output_token_throughput``, ``goodput`` (with
  ``--goodput``), ``request_count``; ``input_config: {models: {items: [{name}]}, endpoint: {urls, type,
  streaming, extra: {ignore_eos, ...}}, datasets: [{prompts: {isl: {mean}, osl: {mean}}}], phases: [{kind:
  warmup | profiling, type: poisson | constant | gamma | concurrency, rate?, concurrency?, requests}], slos?:
  {metric_tag: value}, tokenizer: {name, revision?}}``; ``run_info: {benchmark_id, random_seed, cli_command}``.
- AIPerf, older layout (docs: ai-dynamo/aiperf docs/tutorials/working-with-profile-exports.md):
  ``input_config: {endpoint: {model_names}, input: {prompt: {output_tokens: {mean}}}, loadgen: {concurrency,
  request_rate, warmup_request_count}, tokenizer: {name}, cli_command}``.
- GuideLLM 0.8 ``benchmarks.json`` (*captured*, ``metadata.version`` 2): ``metadata: {guidellm_version}``,
  ``config: {spec: {backend: {target, model, extras}, profile, tokenizer: {model}, data: [{kind,
  prompt_tokens, output_tokens}], metrics: {slo}}}``, ``benchmarks[]: {config: {run_id, strategy: {type_,
  rate | streams}, warmup: {percent, value, mode}, slo: {ttft_ms, tpot_ms, e2el_ms}, backend}, metrics:
  {request_totals, time_to_first_token_ms, inter_token_latency_ms, time_per_output_token_ms, request_latency
  [s], output_token_count, prompt_token_count, output_tokens_per_second, requests_per_second,
  request_goodput?, slo_attainment}, requests: {successful: [{request_args: "<JSON with body.ignore_eos>"}]},
  duration}`` where each metric is ``{"successful": {mean, median, count, percentiles: {p50, p90, p95, p99,
  ...}}, ...}``.
- GuideLLM, older layout (docs/source, vllm-project/guidellm before 0.8): top level ``args: {target, model,
  processor, data, profile, rate, warmup, backend_kwargs}``.
- GenAI-Perf ``profile_export_genai_perf.json`` (not captured: it needs the ``perf_analyzer`` binary, which PyPI
  does not ship): the same metric objects; ``input_config`` flat (``model`` list, ``tokenizer``,
  ``concurrency``, ``request_rate``, ``synthetic_input_tokens_mean``, ``output_tokens_mean``, ``extra_inputs``)
  or, from 0.0.14 on (``ConfigCommand.to_json_dict``, genai-perf 0.0.16 ``config/input/``), nested
  (``model_names``, ``perf_analyzer: {stimulus: {concurrency | request_rate}, warmup_request_count}``,
  ``input: {synthetic_tokens: {mean}, output_tokens: {mean}, extra, goodput}``, ``tokenizer: {name, revision}``).
- ``vllm bench serve --save-result`` JSON (*captured*, vLLM 0.32): ``date, endpoint_type, backend, label,
  model_id, tokenizer_id, num_prompts, request_rate ("inf" or a number), burstiness, max_concurrency, duration,
  completed, failed, total_input_tokens, total_output_tokens, request_throughput, request_goodput (null without
  --goodput), output_throughput, latencies, queue_times, mean_/median_/std_/p{N}_{ttft,tpot,itl,e2el}_ms`` and,
  with ``--save-detailed``, ``input_lens, output_lens, ttfts, itls, start_times, generated_texts, errors``;
  ``--metadata KEY=VALUE`` pairs land at the top level. It never writes its own version, the SLO behind
  ``request_goodput``, ``--ignore-eos`` or ``--num-warmups`` (vllm/benchmarks/serve.py ``main_async``).
- ``inference-audit run`` ``run-record.json`` (:class:`loadgen_sut.record.RunRecord`, *captured*):
  ``tool: "inference-audit", tool_version, run_id, command[], scenario, engine: {name, version, model,
  model_revision, precision, tokenizer}, generation: {ignore_eos, max_new_tokens}, dataset: {input_tokens},
  hardware, settings: {server_target_qps, ttft_latency_ns, tpot_latency_ns, target_latency_percentile},
  tests[]: {name, loadgen: {result_validity, perf_constraints_met, result_key, result_value, ttft_p99_ns:
  {value, count}, tpot_p99_ns}, sut: {completed}, output_tokens: {min, max, mean}}``.

A file in none of these shapes raises :class:`~checker.findings.UnusableInput` naming it.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

from checker.audit.peers.model import ClientArchitecture, LatencyStat, LoadMode, PeerRun, PeerTool
from checker.findings import UnusableInput
from checker.safe_io import display_name, read_input_bytes
from checker.safe_json import JsonProblem, parse_json

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
            "not a result file of GuideLLM (benchmarks.json), AIPerf / GenAI-Perf (profile_export_*.json), "
            "vllm bench serve (--save-result JSON) or inference-audit run (run-record.json)",
            str(path),
        )
    assert isinstance(data, dict)
    if tool is PeerTool.GUIDELLM:
        return _guidellm(path, data)
    if tool is PeerTool.VLLM_BENCH:
        return [_vllm(path, data)]
    if tool is PeerTool.INFERENCE_AUDIT:
        return [_run_record(path, data)]
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
    if (
        data.get("tool") == "inference-audit"
        and isinstance(data.get("settings"), dict)
        and isinstance(data.get("tests"), list)
    ):
        return PeerTool.INFERENCE_AUDIT
    benches = data.get("benchmarks")
    if isinstance(benches, list) and benches and isinstance(benches[0], dict) and "metrics" in benches[0]:
        return PeerTool.GUIDELLM
    cfg = data.get("input_config")
    if isinstance(cfg, dict) and isinstance(data.get("request_throughput"), dict):
        if "aiperf_version" in data or any(k in cfg for k in ("loadgen", "phases", "models")):
            return PeerTool.AIPERF
        if isinstance(cfg.get("endpoint"), dict) and "perf_analyzer" not in cfg:
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


def _int(v: Any) -> int | None:
    """A whole number (NaN, an infinity or a fraction: None)."""
    n = _num(v)
    return int(n) if n is not None and n.is_integer() else None


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


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


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


def _pairs(obj: dict[str, Any], sep: str = ":") -> str | None:
    """``{"ttft_ms": 100, "e2el_ms": None}`` -> ``"ttft_ms:100"`` (keys with a value, in file order)."""
    items = [
        f"{k}{sep}{v:g}" if isinstance(v, float) else f"{k}{sep}{v}" for k, v in obj.items() if v is not None
    ]
    return " ".join(items) or None


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


def _guidellm_warmup(warm: Any) -> str | None:
    """GuideLLM 0.8 ``TransientPhaseConfig`` {percent, value, mode}: written on every benchmark, so no warm-up
    is a recorded "none", not a missing field."""
    if not isinstance(warm, dict):
        return _str(warm)
    if warm.get("percent") is None and warm.get("value") is None:
        return "none"
    amount = (
        f"{float(warm['percent']) * 100:g}% of the run"
        if _num(warm.get("percent")) is not None
        else f"{warm.get('value')}"
    )
    return amount + (f" ({warm['mode']})" if warm.get("mode") else "")


def _guidellm_ignore_eos(backend: dict[str, Any], bench: dict[str, Any]) -> bool | None:
    """ignore_eos as sent: the backend's extras, else the body of a recorded request (GuideLLM 0.8 sets
    ``ignore_eos`` itself whenever the data fixes the output length)."""
    extra = _bool(_find_key(backend.get("extras"), "ignore_eos"))
    if extra is not None:
        return extra
    for records in _obj(bench.get("requests")).values():
        for record in _list(records)[:5]:
            args = _dig(record, "request_args")
            if isinstance(args, str):
                try:
                    args = parse_json(args)
                except ValueError:
                    continue
            body = _dig(args, "body")
            if isinstance(body, dict):
                return _bool(body.get("ignore_eos")) if "ignore_eos" in body else False
    return None


def _guidellm(path: Path, data: dict[str, Any]) -> list[PeerRun]:
    args = _obj(data.get("args"))
    meta = _obj(data.get("metadata"))
    spec = _obj(_dig(data, "config", "spec"))
    layout = LAYOUT_GUIDELLM_08 if spec else LAYOUT_GUIDELLM_OLD
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
        backend = _obj(cfg.get("backend")) or _obj(spec.get("backend"))
        data_spec_src = spec.get("data") if spec else args.get("data")
        configured = None
        if isinstance(data_spec_src, list) and any(isinstance(d, dict) for d in data_spec_src):
            configured = next(
                (
                    _num(d.get("output_tokens"))
                    for d in data_spec_src
                    if isinstance(d, dict) and d.get("output_tokens")
                ),
                None,
            )
        else:
            text = (
                " ".join(str(d) for d in data_spec_src if d is not None)
                if isinstance(data_spec_src, list)
                else str(data_spec_src or "")
            )
            found = re.search(r"output_tokens\s*[=:]\s*(\d+)", text)
            configured = float(found.group(1)) if found else None
        if spec:
            ignore_eos = _guidellm_ignore_eos(backend, bench)
            slo = _pairs(_obj(cfg.get("slo")) or _obj(_dig(spec, "metrics", "slo")))
            warmup = _guidellm_warmup(cfg.get("warmup"))
            model = backend.get("model")
            tokenizer = _dig(spec, "tokenizer", "model") or spec.get("processor")
            goodput = _num(_dig(m, "request_goodput", "successful", "mean"))
        else:
            ignore_eos = _bool(_find_key(args.get("backend_kwargs"), "ignore_eos"))
            slo = None
            warmup = _str(args.get("warmup") if args.get("warmup") is not None else cfg.get("warmup"))
            model = args.get("model")
            tokenizer = args.get("processor")
            goodput = None
        merged = {**args, **meta}
        runs.append(
            PeerRun(
                path=str(path),
                index=i,
                tool=PeerTool.GUIDELLM,
                tool_version=_str(meta.get("guidellm_version") or _meta(merged, "tool_version")),
                layout=layout,
                not_written=NOT_WRITTEN.get(layout, ()),
                client=ClientArchitecture.MULTI_PROCESS,
                itl_formula=ITL_GUIDELLM,
                engine=_str(_meta(merged, "engine")),
                model=_str(model),
                model_revision=_str(_meta(merged, "model_revision")),
                precision=_str(_meta(merged, "precision")),
                tokenizer=_str(tokenizer),
                hardware=_str(_meta(merged, "hardware")),
                input_tokens_mean=_num(_dig(in_count, "mean")),
                output_tokens_mean=_num(_dig(out_count, "mean")),
                output_tokens_min=_num(_dig(out_count, "min")),
                output_tokens_max=_num(_dig(out_count, "max")),
                output_tokens_configured=configured,
                load_mode=mode,
                concurrency=conc,
                request_rate=_num(strategy.get("rate")),
                arrival=stype if stype in ("poisson", "constant") else None,
                slo=slo or _str(_meta(merged, "slo")),
                warmup=warmup,
                run_id=_str(cfg.get("run_id")),
                ignore_eos=ignore_eos,
                requests_completed=_dig(m, "request_totals", "successful")
                if isinstance(_dig(m, "request_totals", "successful"), int)
                else None,
                output_throughput_tps=_num(_dig(m, "output_tokens_per_second", "successful", "mean")),
                request_throughput_rps=_num(_dig(m, "requests_per_second", "successful", "mean")),
                goodput=goodput,
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
    return LatencyStat(
        mean_ms=None if avg is None else avg * factor, percentiles_ms=pct, count=_int(metric.get("count"))
    )


def _aiperf_013(cfg: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    """What AIPerf 0.13 writes in ``input_config`` / ``run_info`` (captured layout)."""
    phases = [p for p in _list(cfg.get("phases")) if isinstance(p, dict)]
    profiling = next((p for p in phases if p.get("kind") == "profiling"), phases[-1] if phases else {})
    warm = [p for p in phases if p.get("kind") == "warmup"]
    ptype = str(profiling.get("type") or "").lower()
    rate = _num(profiling.get("rate"))
    conc = _num(profiling.get("concurrency"))
    if rate is not None:
        mode: LoadMode | None = LoadMode.RATE
    elif conc is not None:
        mode = LoadMode.CONCURRENCY
    else:
        mode = None
    warmup = "none"
    if warm:
        bits = []
        for p in warm:
            if p.get("requests") is not None:
                bits.append(f"{p['requests']} requests")
            if p.get("duration") is not None:
                bits.append(f"{p['duration']} s")
        warmup = ", ".join(bits) or "yes"
    dataset = next((d for d in _list(cfg.get("datasets")) if isinstance(d, dict)), {})
    models = [m.get("name") for m in _list(_dig(cfg, "models", "items")) if isinstance(m, dict)]
    tok = _obj(cfg.get("tokenizer"))
    run_info = _obj(data.get("run_info"))
    return {
        "model": models or None,
        "tokenizer": None
        if tok.get("name") is None
        else str(tok["name"]) + (f"@{tok['revision']}" if tok.get("revision") else ""),
        "conc": conc,
        "rate": rate,
        "mode": mode,
        "arrival": ptype if rate is not None and ptype in ("poisson", "constant", "gamma") else None,
        "out_cfg": _num(_dig(dataset, "prompts", "osl", "mean")),
        "in_cfg": _num(_dig(dataset, "prompts", "isl", "mean")),
        "warmup": warmup,
        "slo": _pairs(_obj(cfg.get("slos"))),
        "extra": _dig(cfg, "endpoint", "extra"),
        "run_id": data.get("benchmark_id") or run_info.get("benchmark_id"),
        "command": run_info.get("cli_command"),
    }


def _aiperf_family(path: Path, data: dict[str, Any], tool: PeerTool) -> PeerRun:
    cfg = data["input_config"]
    command = None
    arrival = None
    run_id = None
    if tool is PeerTool.AIPERF and any(k in cfg for k in ("phases", "models", "datasets")):
        layout = LAYOUT_AIPERF_013
        got = _aiperf_013(cfg, data)
        model, tokenizer, conc, rate = got["model"], got["tokenizer"], got["conc"], got["rate"]
        out_cfg, in_cfg, warm, slo, extra = (
            got["out_cfg"],
            got["in_cfg"],
            got["warmup"],
            got["slo"],
            got["extra"],
        )
        mode, arrival, run_id, command = got["mode"], got["arrival"], got["run_id"], got["command"]
        client = ClientArchitecture.MULTI_PROCESS
    elif tool is PeerTool.AIPERF:
        layout = LAYOUT_AIPERF_OLD
        model = _dig(cfg, "endpoint", "model_names")
        tokenizer = _dig(cfg, "tokenizer", "name")
        conc = _num(_dig(cfg, "loadgen", "concurrency"))
        rate = _num(_dig(cfg, "loadgen", "request_rate"))
        out_cfg = _num(_dig(cfg, "input", "prompt", "output_tokens", "mean"))
        in_cfg = _num(_dig(cfg, "input", "prompt", "input_tokens", "mean"))
        warm = _dig(cfg, "loadgen", "warmup_request_count")
        slo = _dig(cfg, "input", "goodput") or _find_key(cfg, "goodput")
        extra = _dig(cfg, "input", "extra") or _find_key(cfg, "extra_inputs")
        command = cfg.get("cli_command")
        client = ClientArchitecture.MULTI_PROCESS
        mode = None
    elif isinstance(cfg.get("perf_analyzer"), dict):
        layout = LAYOUT_GENAI_NESTED
        stimulus = _obj(_dig(cfg, "perf_analyzer", "stimulus"))
        model = cfg.get("model_names")
        tok = _obj(cfg.get("tokenizer"))
        tokenizer = tok.get("name")
        conc = _num(stimulus.get("concurrency"))
        rate = _num(stimulus.get("request_rate"))
        out_cfg = _num(_dig(cfg, "input", "output_tokens", "mean"))
        in_cfg = _num(_dig(cfg, "input", "synthetic_tokens", "mean"))
        warm = _dig(cfg, "perf_analyzer", "warmup_request_count")
        slo = _dig(cfg, "input", "goodput")
        extra = _dig(cfg, "input", "extra")
        client = ClientArchitecture.NATIVE
        mode = None
    else:
        layout = LAYOUT_GENAI_FLAT
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
        mode = None
    if mode is None:
        mode = LoadMode.CONCURRENCY if conc is not None else (LoadMode.RATE if rate is not None else None)
    ignore_eos = _extra_flag(extra, "ignore_eos")
    osl = _obj(data.get("output_sequence_length") or data.get("num_output_token"))
    isl = _obj(data.get("input_sequence_length") or data.get("num_input_token"))
    merged = {**cfg, **data}
    count = _num(_dig(data, "request_count", "avg"))
    goodput = data.get("goodput")
    return PeerRun(
        path=str(path),
        tool=tool,
        tool_version=_str(_meta(merged, "tool_version")),
        layout=layout,
        not_written=NOT_WRITTEN.get(layout, ()),
        command=_str(command),
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
        arrival=arrival,
        slo=_str(slo if not isinstance(slo, dict) else json.dumps(slo, sort_keys=True)),
        warmup=_str(warm),
        run_id=_str(run_id or _meta(merged, "run_id")),
        ignore_eos=ignore_eos,
        requests_completed=_int(count),
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
        if conc is not None and rate_num is None
        else (LoadMode.RATE if rate_num is not None else LoadMode.THROUGHPUT)
    )
    burst = _num(data.get("burstiness"))
    arrival = None
    if rate_num is not None:
        arrival = "poisson" if burst in (None, 1.0) else f"gamma (burstiness {burst:g})"
    total_out = _num(data.get("total_output_tokens"))
    total_in = _num(data.get("total_input_tokens"))
    engine = _meta(data, "engine")
    return PeerRun(
        path=str(path),
        tool=PeerTool.VLLM_BENCH,
        tool_version=_str(_meta(data, "tool_version")),
        layout=LAYOUT_VLLM,
        not_written=NOT_WRITTEN[LAYOUT_VLLM],
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
        arrival=arrival,
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


# ---- inference-audit run record -----------------------------------------------------------------------------
def _ns_stat(p: Any) -> LatencyStat | None:
    """A LoadGen p99 ``{"value": ns, "count": n}`` as a LatencyStat in ms."""
    value = _num(_dig(p, "value"))
    if value is None:
        return None
    return LatencyStat(percentiles_ms={"p99": value / 1e6}, count=_int(_dig(p, "count")))


def _run_record(path: Path, data: dict[str, Any]) -> PeerRun:
    """Our own ``inference-audit run``: LoadGen's load, latencies and verdict, the engine's disclosures."""
    settings = _obj(data.get("settings"))
    tests = [t for t in _list(data.get("tests")) if isinstance(t, dict)]
    perf = next((t for t in tests if t.get("name") == "performance"), tests[0] if tests else {})
    lg = _obj(perf.get("loadgen"))
    engine = _obj(data.get("engine"))
    scenario = str(data.get("scenario") or settings.get("scenario") or "")
    rate = conc = None
    mode = None
    arrival = None
    if scenario == "Server":
        mode, rate, arrival = LoadMode.RATE, _num(settings.get("server_target_qps")), "poisson"
    elif scenario == "Offline":
        mode = LoadMode.THROUGHPUT
    elif scenario == "SingleStream":
        mode, conc = LoadMode.CONCURRENCY, 1.0
    pct = _num(settings.get("target_latency_percentile"))
    pname = f"p{pct * 100:g}" if pct else "p99"
    slo = None
    if scenario == "Server":
        if settings.get("use_token_latencies"):
            bits = [
                f"{label} {pname} <= {ns / 1e6:g} ms"
                for label, ns in (
                    ("TTFT", _num(settings.get("ttft_latency_ns"))),
                    ("TPOT", _num(settings.get("tpot_latency_ns"))),
                )
                if ns
            ]
            slo = ", ".join(bits) or None
        elif (bound := _num(settings.get("server_target_latency_ns"))) is not None and bound > 0:
            slo = f"latency {pname} <= {bound / 1e6:g} ms"
    name, version = engine.get("name"), engine.get("version")
    if name and version:
        engine_text: str | None = f"{name} {version}"
    elif data.get("simulated") or engine.get("simulated"):
        engine_text = f"{name or 'simulated'} (simulated engine: no serving engine)"
    else:
        engine_text = None
    hw = _obj(data.get("hardware"))
    accelerators = [str(a) for a in _list(hw.get("accelerators")) if a]
    if accelerators:
        hardware: str | None = ", ".join(accelerators)
    elif hw.get("cpu_model"):
        hardware = (
            f"{hw['cpu_model']}"
            + (f" ({hw['cpu_count']} CPUs)" if hw.get("cpu_count") else "")
            + ", no accelerator"
        )
    else:
        hardware = None
    out = _obj(perf.get("output_tokens"))
    inp = _obj(_dig(data, "dataset", "input_tokens"))
    key = str(lg.get("result_key") or "")
    value = _num(lg.get("result_value"))
    command = data.get("command")
    return PeerRun(
        path=str(path),
        tool=PeerTool.INFERENCE_AUDIT,
        tool_version=_str(data.get("tool_version")),
        layout=LAYOUT_RUN_RECORD + f" (schema {data.get('schema_version')})",
        not_written=NOT_WRITTEN[LAYOUT_RUN_RECORD],
        command=shlex.join(str(c) for c in command) if isinstance(command, list) else _str(command),
        client=ClientArchitecture.LOADGEN,
        itl_formula=ITL_LOADGEN,
        engine=engine_text,
        model=_str(engine.get("model") or data.get("benchmark")),
        model_revision=_str(engine.get("model_revision")),
        precision=_str(engine.get("precision")),
        tokenizer=_str(engine.get("tokenizer")),
        hardware=hardware,
        input_tokens_mean=_num(inp.get("mean")),
        output_tokens_mean=_num(out.get("mean")),
        output_tokens_min=_num(out.get("min")),
        output_tokens_max=_num(out.get("max")),
        load_mode=mode,
        concurrency=conc,
        request_rate=rate,
        arrival=arrival,
        slo=slo,
        slo_met=_bool(lg.get("perf_constraints_met")) if scenario == "Server" else None,
        validity=_str(lg.get("result_validity")),
        # LoadGen issues no warm-up queries: every query of the run is timed (a property of the tool)
        warmup="none (LoadGen times every query)",
        run_id=_str(data.get("run_id")),
        ignore_eos=_bool(_dig(data, "generation", "ignore_eos")),
        requests_completed=_int(_dig(perf, "sut", "completed")) or _int(lg.get("query_count")),
        output_throughput_tps=value if "tokens_per_second" in key else None,
        request_throughput_rps=value if re.search(r"samples_per_sec|queries_per_sec|_qps", key) else None,
        goodput=None,
        ttft=_ns_stat(lg.get("ttft_p99_ns")),
        itl=None,
        tpot=_ns_stat(lg.get("tpot_p99_ns")),
        e2e=None,
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
