"""Read GuideLLM ``benchmarks.json`` (one :class:`~checker.audit.peers.model.PeerRun` per benchmark of a sweep).

The layouts marked *captured* were read from files that release wrote against ``bench/token_server.py``
(``bench/peers/capture_fixtures.py``; the files are the fixtures under ``tests/audit/fixtures/peers/<tool>-<version>/``,
each with its PROVENANCE.txt); the others were written from the tools' docs and source, and are kept for files of
older releases.

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
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, NamedTuple

from checker.audit.peers.layouts import ITL_GUIDELLM, LAYOUT_GUIDELLM_08, LAYOUT_GUIDELLM_OLD, NOT_WRITTEN
from checker.audit.peers.metadata import meta_value
from checker.audit.peers.model import ClientArchitecture, LatencyStat, LoadMode, PeerRun, PeerTool
from checker.audit.peers.values import as_bool, as_list, as_num, as_obj, as_text, dig, find_key, pairs_text
from checker.findings import UnusableInput
from checker.safe_json import parse_json


def _guidellm_stat(metric: Any) -> LatencyStat | None:
    s = dig(metric, "successful")
    if not isinstance(s, dict):
        return None
    pct = as_obj(s.get("percentiles"))
    out = {}
    for k, v in pct.items():
        n = as_num(v)
        if n is not None:
            name = {"p001": "p0.1", "p01": "p1", "p05": "p5", "p999": "p99.9"}.get(k, k)
            out[name] = n
    count = s.get("count")
    return LatencyStat(
        mean_ms=as_num(s.get("mean")), percentiles_ms=out, count=count if isinstance(count, int) else None
    )


def _guidellm_warmup(warm: Any) -> str | None:
    """GuideLLM 0.8 ``TransientPhaseConfig`` {percent, value, mode}: written on every benchmark, so no warm-up
    is a recorded "none", not a missing field."""
    if not isinstance(warm, dict):
        return as_text(warm)
    if warm.get("percent") is None and warm.get("value") is None:
        return "none"
    amount = (
        f"{float(warm['percent']) * 100:g}% of the run"
        if as_num(warm.get("percent")) is not None
        else f"{warm.get('value')}"
    )
    return amount + (f" ({warm['mode']})" if warm.get("mode") else "")


def _guidellm_ignore_eos(backend: dict[str, Any], bench: dict[str, Any]) -> bool | None:
    """ignore_eos as sent: the backend's extras, else the body of a recorded request (GuideLLM 0.8 sets
    ``ignore_eos`` itself whenever the data fixes the output length)."""
    extra = as_bool(find_key(backend.get("extras"), "ignore_eos"))
    if extra is not None:
        return extra
    for records in as_obj(bench.get("requests")).values():
        for record in as_list(records)[:5]:
            args = dig(record, "request_args")
            if isinstance(args, str):
                try:
                    args = parse_json(args)
                except ValueError:
                    continue
            body = dig(args, "body")
            if isinstance(body, dict):
                return as_bool(body.get("ignore_eos")) if "ignore_eos" in body else False
    return None


# GuideLLM's strategy.type_ -> how the load is set
_MODES = {
    "concurrent": LoadMode.CONCURRENCY,
    "synchronous": LoadMode.CONCURRENCY,
    "constant": LoadMode.RATE,
    "poisson": LoadMode.RATE,
    "throughput": LoadMode.THROUGHPUT,
}


class _Settings(NamedTuple):
    """What one benchmark's configuration says, in the layout of its release."""

    ignore_eos: bool | None
    slo: str | None
    warmup: str | None
    model: Any
    tokenizer: Any
    goodput: float | None


def _configured_output_tokens(data_spec: Any) -> float | None:
    """The output length the data spec fixes: 0.8's ``[{output_tokens}]``, or ``output_tokens=N`` in older text."""
    if isinstance(data_spec, list) and any(isinstance(d, dict) for d in data_spec):
        return next(
            (
                as_num(d.get("output_tokens"))
                for d in data_spec
                if isinstance(d, dict) and d.get("output_tokens")
            ),
            None,
        )
    text = (
        " ".join(str(d) for d in data_spec if d is not None)
        if isinstance(data_spec, list)
        else str(data_spec or "")
    )
    found = re.search(r"output_tokens\s*[=:]\s*(\d+)", text)
    return float(found.group(1)) if found else None


def _settings(spec: dict[str, Any], args: dict[str, Any], bench: dict[str, Any]) -> _Settings:
    cfg = as_obj(bench.get("config"))
    if spec:
        backend = as_obj(cfg.get("backend")) or as_obj(spec.get("backend"))
        return _Settings(
            ignore_eos=_guidellm_ignore_eos(backend, bench),
            slo=pairs_text(as_obj(cfg.get("slo")) or as_obj(dig(spec, "metrics", "slo"))),
            warmup=_guidellm_warmup(cfg.get("warmup")),
            model=backend.get("model"),
            tokenizer=dig(spec, "tokenizer", "model") or spec.get("processor"),
            goodput=as_num(dig(bench["metrics"], "request_goodput", "successful", "mean")),
        )
    return _Settings(
        ignore_eos=as_bool(find_key(args.get("backend_kwargs"), "ignore_eos")),
        slo=None,
        warmup=as_text(args.get("warmup") if args.get("warmup") is not None else cfg.get("warmup")),
        model=args.get("model"),
        tokenizer=args.get("processor"),
        goodput=None,
    )


def read_guidellm(path: Path, data: dict[str, Any]) -> list[PeerRun]:
    args = as_obj(data.get("args"))
    meta = as_obj(data.get("metadata"))
    spec = as_obj(dig(data, "config", "spec"))
    layout = LAYOUT_GUIDELLM_08 if spec else LAYOUT_GUIDELLM_OLD
    configured = _configured_output_tokens(spec.get("data") if spec else args.get("data"))
    merged = {**args, **meta}
    runs = []
    for i, bench in enumerate(data["benchmarks"]):
        if not isinstance(bench, dict) or not isinstance(bench.get("metrics"), dict):
            raise UnusableInput(f"benchmarks[{i}] has no metrics object", str(path))
        m = bench["metrics"]
        cfg = as_obj(bench.get("config"))
        strategy = as_obj(cfg.get("strategy"))
        stype = str(strategy.get("type_", "")).lower()
        out_count = dig(m, "output_token_count", "successful")
        got = _settings(spec, args, bench)
        completed = dig(m, "request_totals", "successful")
        runs.append(
            PeerRun(
                path=str(path),
                index=i,
                tool=PeerTool.GUIDELLM,
                tool_version=as_text(meta.get("guidellm_version") or meta_value(merged, "tool_version")),
                layout=layout,
                not_written=NOT_WRITTEN.get(layout, ()),
                client=ClientArchitecture.MULTI_PROCESS,
                itl_formula=ITL_GUIDELLM,
                engine=as_text(meta_value(merged, "engine")),
                model=as_text(got.model),
                model_revision=as_text(meta_value(merged, "model_revision")),
                precision=as_text(meta_value(merged, "precision")),
                tokenizer=as_text(got.tokenizer),
                hardware=as_text(meta_value(merged, "hardware")),
                input_tokens_mean=as_num(dig(m, "prompt_token_count", "successful", "mean")),
                output_tokens_mean=as_num(dig(out_count, "mean")),
                output_tokens_min=as_num(dig(out_count, "min")),
                output_tokens_max=as_num(dig(out_count, "max")),
                output_tokens_configured=configured,
                load_mode=_MODES.get(stype),
                concurrency=1.0 if stype == "synchronous" else as_num(strategy.get("streams")),
                request_rate=as_num(strategy.get("rate")),
                arrival=stype if stype in ("poisson", "constant") else None,
                slo=got.slo or as_text(meta_value(merged, "slo")),
                warmup=got.warmup,
                run_id=as_text(cfg.get("run_id")),
                ignore_eos=got.ignore_eos,
                requests_completed=completed if isinstance(completed, int) else None,
                output_throughput_tps=as_num(dig(m, "output_tokens_per_second", "successful", "mean")),
                request_throughput_rps=as_num(dig(m, "requests_per_second", "successful", "mean")),
                goodput=got.goodput,
                ttft=_guidellm_stat(m.get("time_to_first_token_ms")),
                itl=_guidellm_stat(m.get("inter_token_latency_ms")),
                tpot=_guidellm_stat(m.get("time_per_output_token_ms")),
                # GuideLLM's request_latency is in seconds
                e2e=_scaled(_guidellm_stat(m.get("request_latency")), 1000.0),
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
