"""Read the JSON of ``vllm bench serve --save-result`` into :class:`~checker.audit.peers.model.PeerRun`.

- ``vllm bench serve --save-result`` JSON (*captured*, vLLM 0.32): ``date, endpoint_type, backend, label,
  model_id, tokenizer_id, num_prompts, request_rate ("inf" or a number), burstiness, max_concurrency, duration,
  completed, failed, total_input_tokens, total_output_tokens, request_throughput, request_goodput (null without
  --goodput), output_throughput, latencies, queue_times, mean_/median_/std_/p{N}_{ttft,tpot,itl,e2el}_ms`` and,
  with ``--save-detailed``, ``input_lens, output_lens, ttfts, itls, start_times, generated_texts, errors``;
  ``--metadata KEY=VALUE`` pairs land at the top level. It never writes its own version, the SLO behind
  ``request_goodput``, ``--ignore-eos`` or ``--num-warmups`` (vllm/benchmarks/serve.py ``main_async``).

*captured*: read from files that release wrote against ``bench/token_server.py`` (``bench/peers/capture_fixtures.py``;
the fixtures under ``tests/audit/fixtures/peers/``, each with its PROVENANCE.txt).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from checker.audit.peers.layouts import ITL_VLLM, LAYOUT_VLLM, NOT_WRITTEN
from checker.audit.peers.metadata import meta_value
from checker.audit.peers.model import ClientArchitecture, LatencyStat, LoadMode, PeerRun, PeerTool
from checker.audit.peers.values import as_bool, as_num, as_text


def _vllm_stat(data: dict[str, Any], name: str, count: int | None) -> LatencyStat | None:
    mean = as_num(data.get(f"mean_{name}_ms"))
    pct = {}
    for k, v in data.items():
        m = re.fullmatch(rf"p(\d+(?:\.\d+)?)_{name}_ms", k)
        n = as_num(v)
        if m and n is not None:
            pct[f"p{m.group(1)}"] = n
    median = as_num(data.get(f"median_{name}_ms"))
    if median is not None:
        pct.setdefault("p50", median)
    if mean is None and not pct:
        return None
    return LatencyStat(mean_ms=mean, percentiles_ms=pct, count=count)


def read_vllm_bench(path: Path, data: dict[str, Any]) -> PeerRun:
    completed = data.get("completed") if isinstance(data.get("completed"), int) else None
    out_lens = (
        [x for x in data.get("output_lens", []) if isinstance(x, int | float)]
        if isinstance(data.get("output_lens"), list)
        else []
    )
    rate = data.get("request_rate")
    rate_num = None if rate in (None, "inf") else as_num(rate)
    conc = as_num(data.get("max_concurrency"))
    mode = (
        LoadMode.CONCURRENCY
        if conc is not None and rate_num is None
        else (LoadMode.RATE if rate_num is not None else LoadMode.THROUGHPUT)
    )
    burst = as_num(data.get("burstiness"))
    arrival = None
    if rate_num is not None:
        arrival = "poisson" if burst in (None, 1.0) else f"gamma (burstiness {burst:g})"
    total_out = as_num(data.get("total_output_tokens"))
    total_in = as_num(data.get("total_input_tokens"))
    engine = meta_value(data, "engine")
    return PeerRun(
        path=str(path),
        tool=PeerTool.VLLM_BENCH,
        tool_version=as_text(meta_value(data, "tool_version")),
        layout=LAYOUT_VLLM,
        not_written=NOT_WRITTEN[LAYOUT_VLLM],
        client=ClientArchitecture.SINGLE_PROCESS,
        itl_formula=ITL_VLLM,
        engine=as_text(engine),
        model=as_text(data.get("model_id")),
        model_revision=as_text(meta_value(data, "model_revision")),
        precision=as_text(meta_value(data, "precision")),
        tokenizer=as_text(data.get("tokenizer_id")),
        hardware=as_text(meta_value(data, "hardware")),
        input_tokens_mean=None if total_in is None or not completed else total_in / completed,
        output_tokens_mean=None if total_out is None or not completed else total_out / completed,
        output_tokens_min=float(min(out_lens)) if out_lens else None,
        output_tokens_max=float(max(out_lens)) if out_lens else None,
        output_tokens_configured=as_num(data.get("output_len") or data.get("random_output_len")),
        load_mode=mode,
        concurrency=conc,
        request_rate=rate_num,
        arrival=arrival,
        slo=as_text(meta_value(data, "slo")),
        warmup=as_text(meta_value(data, "warmup")),
        run_id=as_text(meta_value(data, "run_id") or data.get("date")),
        ignore_eos=as_bool(meta_value(data, "ignore_eos")),
        requests_completed=completed,
        output_throughput_tps=as_num(data.get("output_throughput")),
        request_throughput_rps=as_num(data.get("request_throughput")),
        goodput=as_num(data.get("request_goodput")),
        ttft=_vllm_stat(data, "ttft", completed),
        itl=_vllm_stat(data, "itl", None),
        tpot=_vllm_stat(data, "tpot", completed),
        e2e=_vllm_stat(data, "e2el", completed),
    )
