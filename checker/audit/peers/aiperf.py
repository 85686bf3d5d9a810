"""Read AIPerf and GenAI-Perf ``profile_export_*.json`` into :class:`~checker.audit.peers.model.PeerRun`.

The layouts marked *captured* were read from files that release wrote against ``bench/token_server.py``
(``bench/peers/capture_fixtures.py``; the files are the fixtures under ``tests/audit/fixtures/peers/<tool>-<version>/``,
each with its PROVENANCE.txt); the others were written from the tools' docs and source, and are kept for files of
older releases.

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
- GenAI-Perf ``profile_export_genai_perf.json`` (not captured: it needs the ``perf_analyzer`` binary, which PyPI
  does not ship): the same metric objects; ``input_config`` flat (``model`` list, ``tokenizer``,
  ``concurrency``, ``request_rate``, ``synthetic_input_tokens_mean``, ``output_tokens_mean``, ``extra_inputs``)
  or, from 0.0.14 on (``ConfigCommand.to_json_dict``, genai-perf 0.0.16 ``config/input/``), nested
  (``model_names``, ``perf_analyzer: {stimulus: {concurrency | request_rate}, warmup_request_count}``,
  ``input: {synthetic_tokens: {mean}, output_tokens: {mean}, extra, goodput}``, ``tokenizer: {name, revision}``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from checker.audit.peers.layouts import (
    ITL_AIPERF,
    LAYOUT_AIPERF_013,
    LAYOUT_AIPERF_OLD,
    LAYOUT_GENAI_FLAT,
    LAYOUT_GENAI_NESTED,
    NOT_WRITTEN,
)
from checker.audit.peers.metadata import meta_value
from checker.audit.peers.model import ClientArchitecture, LatencyStat, LoadMode, PeerRun, PeerTool
from checker.audit.peers.values import (
    as_bool,
    as_int,
    as_list,
    as_num,
    as_obj,
    as_text,
    dig,
    find_key,
    pairs_text,
)


def _aiperf_stat(metric: Any) -> LatencyStat | None:
    if not isinstance(metric, dict):
        return None
    unit = str(metric.get("unit", "ms")).lower()
    factor = {"ms": 1.0, "s": 1000.0, "sec": 1000.0, "us": 0.001, "ns": 1e-6}.get(unit, 1.0)
    pct = {}
    for k, v in metric.items():
        n = as_num(v)
        if re.fullmatch(r"p\d+(\.\d+)?", k) and n is not None:
            pct[k] = n * factor
    avg = as_num(metric.get("avg"))
    return LatencyStat(
        mean_ms=None if avg is None else avg * factor, percentiles_ms=pct, count=as_int(metric.get("count"))
    )


@dataclass(frozen=True)
class _Config:
    """What one layout's ``input_config`` (and AIPerf 0.13's ``run_info``) says about the run, as written."""

    layout: str
    client: ClientArchitecture
    model: Any
    tokenizer: Any
    conc: float | None
    rate: float | None
    out_cfg: float | None
    in_cfg: float | None
    warmup: Any
    slo: Any
    extra: Any
    mode: LoadMode | None = None
    arrival: str | None = None
    run_id: Any = None
    command: Any = None


def _aiperf_013_warmup(phases: list[dict[str, Any]]) -> str:
    """AIPerf 0.13's warm-up phases (requests, seconds); no warm-up phase is a recorded "none"."""
    warm = [p for p in phases if p.get("kind") == "warmup"]
    if not warm:
        return "none"
    bits = []
    for p in warm:
        if p.get("requests") is not None:
            bits.append(f"{p['requests']} requests")
        if p.get("duration") is not None:
            bits.append(f"{p['duration']} s")
    return ", ".join(bits) or "yes"


def _aiperf_013(cfg: dict[str, Any], data: dict[str, Any]) -> _Config:
    """What AIPerf 0.13 writes in ``input_config`` / ``run_info`` (captured layout)."""
    phases = [p for p in as_list(cfg.get("phases")) if isinstance(p, dict)]
    profiling = next((p for p in phases if p.get("kind") == "profiling"), phases[-1] if phases else {})
    ptype = str(profiling.get("type") or "").lower()
    rate = as_num(profiling.get("rate"))
    conc = as_num(profiling.get("concurrency"))
    if rate is not None:
        mode: LoadMode | None = LoadMode.RATE
    elif conc is not None:
        mode = LoadMode.CONCURRENCY
    else:
        mode = None
    dataset = next((d for d in as_list(cfg.get("datasets")) if isinstance(d, dict)), {})
    models = [m.get("name") for m in as_list(dig(cfg, "models", "items")) if isinstance(m, dict)]
    tok = as_obj(cfg.get("tokenizer"))
    run_info = as_obj(data.get("run_info"))
    return _Config(
        layout=LAYOUT_AIPERF_013,
        client=ClientArchitecture.MULTI_PROCESS,
        model=models or None,
        tokenizer=None
        if tok.get("name") is None
        else str(tok["name"]) + (f"@{tok['revision']}" if tok.get("revision") else ""),
        conc=conc,
        rate=rate,
        mode=mode,
        arrival=ptype if rate is not None and ptype in ("poisson", "constant", "gamma") else None,
        out_cfg=as_num(dig(dataset, "prompts", "osl", "mean")),
        in_cfg=as_num(dig(dataset, "prompts", "isl", "mean")),
        warmup=_aiperf_013_warmup(phases),
        slo=pairs_text(as_obj(cfg.get("slos"))),
        extra=dig(cfg, "endpoint", "extra"),
        run_id=data.get("benchmark_id") or run_info.get("benchmark_id"),
        command=run_info.get("cli_command"),
    )


def _aiperf_old(cfg: dict[str, Any]) -> _Config:
    """AIPerf's older ``input_config`` (``loadgen``; from the docs)."""
    return _Config(
        layout=LAYOUT_AIPERF_OLD,
        client=ClientArchitecture.MULTI_PROCESS,
        model=dig(cfg, "endpoint", "model_names"),
        tokenizer=dig(cfg, "tokenizer", "name"),
        conc=as_num(dig(cfg, "loadgen", "concurrency")),
        rate=as_num(dig(cfg, "loadgen", "request_rate")),
        out_cfg=as_num(dig(cfg, "input", "prompt", "output_tokens", "mean")),
        in_cfg=as_num(dig(cfg, "input", "prompt", "input_tokens", "mean")),
        warmup=dig(cfg, "loadgen", "warmup_request_count"),
        slo=dig(cfg, "input", "goodput") or find_key(cfg, "goodput"),
        extra=dig(cfg, "input", "extra") or find_key(cfg, "extra_inputs"),
        command=cfg.get("cli_command"),
    )


def _genai_nested(cfg: dict[str, Any]) -> _Config:
    """GenAI-Perf 0.0.14+'s nested ``input_config`` (``perf_analyzer.stimulus``)."""
    stimulus = as_obj(dig(cfg, "perf_analyzer", "stimulus"))
    return _Config(
        layout=LAYOUT_GENAI_NESTED,
        client=ClientArchitecture.NATIVE,
        model=cfg.get("model_names"),
        tokenizer=as_obj(cfg.get("tokenizer")).get("name"),
        conc=as_num(stimulus.get("concurrency")),
        rate=as_num(stimulus.get("request_rate")),
        out_cfg=as_num(dig(cfg, "input", "output_tokens", "mean")),
        in_cfg=as_num(dig(cfg, "input", "synthetic_tokens", "mean")),
        warmup=dig(cfg, "perf_analyzer", "warmup_request_count"),
        slo=dig(cfg, "input", "goodput"),
        extra=dig(cfg, "input", "extra"),
    )


def _genai_flat(cfg: dict[str, Any]) -> _Config:
    """GenAI-Perf's flat ``input_config`` (before 0.0.14)."""
    return _Config(
        layout=LAYOUT_GENAI_FLAT,
        client=ClientArchitecture.NATIVE,
        model=cfg.get("model"),
        tokenizer=cfg.get("tokenizer"),
        conc=as_num(cfg.get("concurrency")),
        rate=as_num(cfg.get("request_rate")),
        out_cfg=as_num(cfg.get("output_tokens_mean")),
        in_cfg=as_num(cfg.get("synthetic_input_tokens_mean")),
        warmup=cfg.get("warmup_request_count"),
        slo=cfg.get("goodput"),
        extra=cfg.get("extra_inputs"),
    )


def _config(cfg: dict[str, Any], data: dict[str, Any], tool: PeerTool) -> _Config:
    if tool is PeerTool.AIPERF and any(k in cfg for k in ("phases", "models", "datasets")):
        return _aiperf_013(cfg, data)
    if tool is PeerTool.AIPERF:
        return _aiperf_old(cfg)
    if isinstance(cfg.get("perf_analyzer"), dict):
        return _genai_nested(cfg)
    return _genai_flat(cfg)


def read_aiperf_family(path: Path, data: dict[str, Any], tool: PeerTool) -> PeerRun:
    cfg = data["input_config"]
    got = _config(cfg, data, tool)
    mode = got.mode
    if mode is None:
        mode = (
            LoadMode.CONCURRENCY
            if got.conc is not None
            else (LoadMode.RATE if got.rate is not None else None)
        )
    osl = as_obj(data.get("output_sequence_length") or data.get("num_output_token"))
    isl = as_obj(data.get("input_sequence_length") or data.get("num_input_token"))
    merged = {**cfg, **data}
    count = as_num(dig(data, "request_count", "avg"))
    goodput = data.get("goodput")
    slo = got.slo
    return PeerRun(
        path=str(path),
        tool=tool,
        tool_version=as_text(meta_value(merged, "tool_version")),
        layout=got.layout,
        not_written=NOT_WRITTEN.get(got.layout, ()),
        command=as_text(got.command),
        client=got.client,
        itl_formula=ITL_AIPERF,
        engine=as_text(meta_value(merged, "engine")),
        model=as_text(got.model),
        model_revision=as_text(meta_value(merged, "model_revision")),
        precision=as_text(meta_value(merged, "precision")),
        tokenizer=as_text(got.tokenizer),
        hardware=as_text(meta_value(merged, "hardware")),
        input_tokens_mean=as_num(isl.get("avg")) if isl else got.in_cfg,
        output_tokens_mean=as_num(osl.get("avg")) if osl else None,
        output_tokens_min=as_num(osl.get("min")),
        output_tokens_max=as_num(osl.get("max")),
        output_tokens_configured=got.out_cfg if got.out_cfg and got.out_cfg > 0 else None,
        load_mode=mode,
        concurrency=got.conc,
        request_rate=got.rate,
        arrival=got.arrival,
        slo=as_text(slo if not isinstance(slo, dict) else json.dumps(slo, sort_keys=True)),
        warmup=as_text(got.warmup),
        run_id=as_text(got.run_id or meta_value(merged, "run_id")),
        ignore_eos=_extra_flag(got.extra, "ignore_eos"),
        requests_completed=as_int(count),
        output_throughput_tps=as_num(dig(data, "output_token_throughput", "avg")),
        request_throughput_rps=as_num(dig(data, "request_throughput", "avg")),
        goodput=as_num(dig(goodput, "avg")) if isinstance(goodput, dict) else as_num(goodput),
        ttft=_aiperf_stat(data.get("time_to_first_token")),
        itl=_aiperf_stat(data.get("inter_token_latency")),
        tpot=None,
        e2e=_aiperf_stat(data.get("request_latency")),
    )


def _extra_flag(extra: Any, key: str) -> bool | None:
    """A flag among extra request inputs: {"ignore_eos": true}, ["ignore_eos:true"] or [["ignore_eos", true]]."""
    if isinstance(extra, dict):
        return as_bool(find_key(extra, key))
    if isinstance(extra, list):
        for item in extra:
            if isinstance(item, str) and item.split(":", 1)[0].strip() == key and ":" in item:
                return as_bool(item.split(":", 1)[1])
            if isinstance(item, list | tuple) and len(item) == 2 and item[0] == key:
                return as_bool(item[1])
    return None
