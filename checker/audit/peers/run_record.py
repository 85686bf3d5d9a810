"""Read our own ``inference-audit run`` record into :class:`~checker.audit.peers.model.PeerRun`, to compare it with
a peer tool's run.

- ``inference-audit run`` ``run-record.json`` (:class:`loadgen_sut.record.RunRecord`, *captured*):
  ``tool: "inference-audit", tool_version, run_id, command[], scenario, engine: {name, version, model,
  model_revision, precision, tokenizer}, generation: {ignore_eos, max_new_tokens}, dataset: {input_tokens},
  hardware, settings: {server_target_qps, ttft_latency_ns, tpot_latency_ns, target_latency_percentile},
  tests[]: {name, loadgen: {result_validity, perf_constraints_met, result_key, result_value, ttft_p99_ns:
  {value, count}, tpot_p99_ns}, sut: {completed}, output_tokens: {min, max, mean}}``.

*captured*: read from files that release wrote against ``bench/token_server.py`` (``bench/peers/capture_fixtures.py``;
the fixtures under ``tests/audit/fixtures/peers/``, each with its PROVENANCE.txt).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

from checker.audit.peers.layouts import ITL_LOADGEN, LAYOUT_RUN_RECORD, NOT_WRITTEN
from checker.audit.peers.model import ClientArchitecture, LatencyStat, LoadMode, PeerRun, PeerTool
from checker.audit.peers.values import as_bool, as_int, as_list, as_num, as_obj, as_text, dig


def _ns_stat(p: Any) -> LatencyStat | None:
    """A LoadGen p99 ``{"value": ns, "count": n}`` as a LatencyStat in ms."""
    value = as_num(dig(p, "value"))
    if value is None:
        return None
    return LatencyStat(percentiles_ms={"p99": value / 1e6}, count=as_int(dig(p, "count")))


def _load(
    scenario: str, settings: dict[str, Any]
) -> tuple[LoadMode | None, float | None, float | None, str | None]:
    """(load mode, request rate, concurrency, arrival process) LoadGen's scenario sets."""
    if scenario == "Server":
        return LoadMode.RATE, as_num(settings.get("server_target_qps")), None, "poisson"
    if scenario == "Offline":
        return LoadMode.THROUGHPUT, None, None, None
    if scenario == "SingleStream":
        return LoadMode.CONCURRENCY, None, 1.0, None
    return None, None, None, None


def _slo(scenario: str, settings: dict[str, Any]) -> str | None:
    """The Server scenario's latency bounds (token latencies, or the whole query's), at LoadGen's percentile."""
    if scenario != "Server":
        return None
    pct = as_num(settings.get("target_latency_percentile"))
    pname = f"p{pct * 100:g}" if pct else "p99"
    if settings.get("use_token_latencies"):
        bits = [
            f"{label} {pname} <= {ns / 1e6:g} ms"
            for label, ns in (
                ("TTFT", as_num(settings.get("ttft_latency_ns"))),
                ("TPOT", as_num(settings.get("tpot_latency_ns"))),
            )
            if ns
        ]
        return ", ".join(bits) or None
    if (bound := as_num(settings.get("server_target_latency_ns"))) is not None and bound > 0:
        return f"latency {pname} <= {bound / 1e6:g} ms"
    return None


def _engine_text(data: dict[str, Any], engine: dict[str, Any]) -> str | None:
    name, version = engine.get("name"), engine.get("version")
    if name and version:
        return f"{name} {version}"
    if data.get("simulated") or engine.get("simulated"):
        return f"{name or 'simulated'} (simulated engine: no serving engine)"
    return None


def _hardware_text(hw: dict[str, Any]) -> str | None:
    accelerators = [str(a) for a in as_list(hw.get("accelerators")) if a]
    if accelerators:
        return ", ".join(accelerators)
    if hw.get("cpu_model"):
        return (
            f"{hw['cpu_model']}"
            + (f" ({hw['cpu_count']} CPUs)" if hw.get("cpu_count") else "")
            + ", no accelerator"
        )
    return None


def read_run_record(path: Path, data: dict[str, Any]) -> PeerRun:
    """Our own ``inference-audit run``: LoadGen's load, latencies and verdict, the engine's disclosures."""
    settings = as_obj(data.get("settings"))
    tests = [t for t in as_list(data.get("tests")) if isinstance(t, dict)]
    perf = next((t for t in tests if t.get("name") == "performance"), tests[0] if tests else {})
    lg = as_obj(perf.get("loadgen"))
    engine = as_obj(data.get("engine"))
    scenario = str(data.get("scenario") or settings.get("scenario") or "")
    mode, rate, conc, arrival = _load(scenario, settings)
    engine_text = _engine_text(data, engine)
    hardware = _hardware_text(as_obj(data.get("hardware")))
    slo = _slo(scenario, settings)
    out = as_obj(perf.get("output_tokens"))
    inp = as_obj(dig(data, "dataset", "input_tokens"))
    key = str(lg.get("result_key") or "")
    value = as_num(lg.get("result_value"))
    command = data.get("command")
    return PeerRun(
        path=str(path),
        tool=PeerTool.INFERENCE_AUDIT,
        tool_version=as_text(data.get("tool_version")),
        layout=LAYOUT_RUN_RECORD + f" (schema {data.get('schema_version')})",
        not_written=NOT_WRITTEN[LAYOUT_RUN_RECORD],
        command=shlex.join(str(c) for c in command) if isinstance(command, list) else as_text(command),
        client=ClientArchitecture.LOADGEN,
        itl_formula=ITL_LOADGEN,
        engine=engine_text,
        model=as_text(engine.get("model") or data.get("benchmark")),
        model_revision=as_text(engine.get("model_revision")),
        precision=as_text(engine.get("precision")),
        tokenizer=as_text(engine.get("tokenizer")),
        hardware=hardware,
        input_tokens_mean=as_num(inp.get("mean")),
        output_tokens_mean=as_num(out.get("mean")),
        output_tokens_min=as_num(out.get("min")),
        output_tokens_max=as_num(out.get("max")),
        load_mode=mode,
        concurrency=conc,
        request_rate=rate,
        arrival=arrival,
        slo=slo,
        slo_met=as_bool(lg.get("perf_constraints_met")) if scenario == "Server" else None,
        validity=as_text(lg.get("result_validity")),
        # LoadGen issues no warm-up queries: every query of the run is timed (a property of the tool)
        warmup="none (LoadGen times every query)",
        run_id=as_text(data.get("run_id")),
        ignore_eos=as_bool(dig(data, "generation", "ignore_eos")),
        requests_completed=as_int(dig(perf, "sut", "completed")) or as_int(lg.get("query_count")),
        output_throughput_tps=value if "tokens_per_second" in key else None,
        request_throughput_rps=value if re.search(r"samples_per_sec|queries_per_sec|_qps", key) else None,
        goodput=None,
        ttft=_ns_stat(lg.get("ttft_p99_ns")),
        itl=None,
        tpot=_ns_stat(lg.get("tpot_p99_ns")),
        e2e=None,
    )
