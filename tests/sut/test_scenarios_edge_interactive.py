"""Real LoadGen runs (tiny trial settings, simulated engine) of SingleStream (edge LLM) and Interactive.

SingleStream: LoadGen's SingleStream with one query in flight, the round's result key for the
edge benchmark, token latencies logged. Interactive: Server traffic under the
``<model>-interactive`` mlperf.conf keys with the round's stricter TTFT/TPOT gates; latencies
between the Interactive and the Server gates fail Interactive and pass Server.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sut_helpers import sim_engine

from checker.parsers.mllog import parse_detail_file
from loadgen_sut.run.plan import RunRequest
from loadgen_sut.runner import RunOutcome, run
from loadgen_sut.settings import RunMode
from rules import load_round
from rules.models import Scenario

EDGE = "llama3.1-8b-edge"
DATACENTER = "llama3.1-8b"
SINGLE_STREAM_TRIAL = "*.SingleStream.min_duration = 1000\n*.SingleStream.min_query_count = 64\n*.SingleStream.target_latency = 10\n"
SERVER_TRIAL = "*.Server.target_qps = 200\n*.Server.min_duration = 2500\n"
# TTFT 600 ms, TPOT 40 ms: above llama3.1-8b's Interactive gates, below its Server gates (checked below)
SIM_TTFT_MS = 600.0
SIM_TPOT_MS = 40.0


def _run(
    tmp_path: Path, round_name: str, benchmark: str, scenario: str, conf: str, **engine: object
) -> tuple[RunOutcome, list[str]]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    conf_path = tmp_path / f"{scenario}.conf"
    conf_path.write_text(conf, encoding="utf-8")
    lines: list[str] = []
    request = RunRequest(
        round_name=round_name,
        benchmark=benchmark,
        scenario=scenario,
        mode=RunMode.PERFORMANCE,
        engine=sim_engine(model=benchmark, **engine),
        out=tmp_path / "out",
        user_conf=conf_path,
        progress_interval_s=0,
    )
    return run(request, say=lines.append), lines


@pytest.mark.parametrize("round_name", ["v5.1", "v6.1"])
def test_edge_single_stream_one_query_at_a_time(tmp_path: Path, round_name: str) -> None:
    rnd = load_round(round_name)
    bench = rnd.benchmark(EDGE)
    assert bench is not None
    expected_key = (
        bench.result_field_overrides.get(Scenario.SINGLE_STREAM) or rnd.result_fields[Scenario.SINGLE_STREAM]
    )

    out, lines = _run(
        tmp_path,
        round_name,
        EDGE,
        "SingleStream",
        SINGLE_STREAM_TRIAL,
        sim_ttft_ms="3",
        sim_tpot_ms="1",
        sim_output_tokens="5",
    )
    rec = out.record
    assert rec.scenario == "SingleStream" and rec.benchmark == EDGE
    perf = rec.tests[0]
    assert perf.status == "finished"
    lgr = perf.loadgen
    assert lgr is not None and lgr.result_validity == "VALID" and lgr.num_errors == 0
    assert perf.sut.issued == perf.sut.completed == lgr.query_count and lgr.query_count >= 64
    assert perf.sut.failed == 0 and perf.sut.duplicate_completions == 0

    detail = parse_detail_file(out.run_dir / "performance" / "mlperf_log_detail.txt")
    assert detail.str_value("effective_scenario") == "SingleStream"
    assert detail.bool_value("requested_use_token_latencies") is True
    # one query in flight: queries/s over the whole run never beat one query per (shortest) latency
    qps = detail.float_value("result_qps_with_loadgen_overhead")
    min_latency_ns = detail.float_value("result_min_latency_ns")
    assert qps is not None and min_latency_ns is not None and min_latency_ns > 0
    assert qps * min_latency_ns / 1e9 <= 1.0

    # the round's SingleStream result key for this benchmark, read from LoadGen's log
    assert lgr.result_key == expected_key
    assert (
        lgr.result_value is not None
        and lgr.result_value == detail.float_value(expected_key)
        and lgr.result_value > 0
    )
    # token latencies logged (TTFT >= the simulated 3 ms; every query counted)
    assert lgr.ttft_p99_ns is not None and lgr.ttft_p99_ns.value is not None and lgr.ttft_p99_ns.value >= 3e6
    assert lgr.ttft_p99_ns.count == lgr.query_count
    assert (
        lgr.tpot_p99_ns is not None
        and lgr.tpot_p99_ns.value is not None
        and lgr.tpot_p99_ns.count == lgr.query_count
    )
    assert perf.output_tokens is not None and perf.output_tokens.min == perf.output_tokens.max == 5

    # the settings LoadGen applied: the edge conf model, SingleStream, token latencies on
    lg_settings = perf.loadgen_settings
    assert lg_settings is not None and lg_settings.conf_model == bench.mlperf_conf_model
    assert lg_settings.scenario is Scenario.SINGLE_STREAM and lg_settings.use_token_latencies
    assert lg_settings.single_stream_expected_latency_ns == 10_000_000
    assert lg_settings.ttft_latency_ns is None  # no token-latency gate: latency is the result
    assert any("SingleStream" in line and "latency is the result" in line for line in lines)

    assert (
        rec.simulated and rec.engine is not None and rec.engine.simulated and "simulated" in rec.engine.model
    )
    assert rec.verdict.status == "NOT_SUBMITTABLE"
    assert any("SIMULATED" in r for r in rec.verdict.reasons)


def test_interactive_gates_are_stricter_and_fail_where_server_passes(tmp_path: Path) -> None:
    rnd = load_round("v6.1")
    bench = rnd.benchmark(DATACENTER)
    assert bench is not None
    inter = bench.token_latency_limits[Scenario.INTERACTIVE]
    server = bench.token_latency_limits[Scenario.SERVER]
    # the simulated latencies sit between the two sets of gates
    assert inter.ttft_ms < SIM_TTFT_MS < server.ttft_ms and inter.tpot_ms < SIM_TPOT_MS < server.tpot_ms
    engine: dict[str, object] = {
        "sim_ttft_ms": f"{SIM_TTFT_MS:g}",
        "sim_tpot_ms": f"{SIM_TPOT_MS:g}",
        "sim_output_tokens": "4",
    }

    out_i, lines_i = _run(tmp_path / "interactive", "v6.1", DATACENTER, "Interactive", SERVER_TRIAL, **engine)
    out_s, lines_s = _run(tmp_path / "server", "v6.1", DATACENTER, "Server", SERVER_TRIAL, **engine)

    # printed and recorded gates: the round's Interactive ones, under the -interactive conf model
    assert any(
        f"p99 TTFT < {inter.ttft_ms:g} ms, p99 TPOT < {inter.tpot_ms:g} ms" in line for line in lines_i
    )
    assert any(
        f"p99 TTFT < {server.ttft_ms:g} ms, p99 TPOT < {server.tpot_ms:g} ms" in line for line in lines_s
    )
    rec_i, rec_s = out_i.record, out_s.record
    assert rec_i.scenario == "Interactive" and rec_s.scenario == "Server"
    for rec, lim in ((rec_i, inter), (rec_s, server)):
        for settings in (rec.settings, rec.official_settings, rec.tests[0].loadgen_settings):
            assert settings is not None
            assert settings.ttft_latency_ns == round(lim.ttft_ms * 1e6)
            assert settings.tpot_latency_ns == round(lim.tpot_ms * 1e6)
    read_back = rec_i.tests[0].loadgen_settings
    assert read_back is not None and read_back.conf_model.endswith("-interactive")
    assert read_back.scenario is Scenario.INTERACTIVE and read_back.loadgen_scenario is Scenario.SERVER

    # LoadGen itself ran Server traffic with the interactive gates
    detail_i = parse_detail_file(out_i.run_dir / "performance" / "mlperf_log_detail.txt")
    assert detail_i.str_value("effective_scenario") == "Server"
    assert detail_i.int_value("requested_server_ttft_latency") == round(inter.ttft_ms * 1e6)
    assert detail_i.int_value("requested_server_tpot_latency") == round(inter.tpot_ms * 1e6)

    # the same engine: measured p99s between the gates; Interactive INVALID on them, Server passes
    perf_i, perf_s = rec_i.tests[0], rec_s.tests[0]
    for perf in (perf_i, perf_s):
        assert perf.status == "finished" and perf.sut.failed == 0 and perf.sut.issued == perf.sut.completed
        lgr = perf.loadgen
        assert lgr is not None and lgr.ttft_p99_ns is not None and lgr.tpot_p99_ns is not None
        assert lgr.ttft_p99_ns.value is not None and lgr.tpot_p99_ns.value is not None
        assert inter.ttft_ms * 1e6 < lgr.ttft_p99_ns.value < server.ttft_ms * 1e6
        assert inter.tpot_ms * 1e6 < lgr.tpot_p99_ns.value < server.tpot_ms * 1e6
    lgr_i, lgr_s = perf_i.loadgen, perf_s.loadgen
    assert lgr_i is not None and lgr_s is not None
    assert lgr_i.result_validity == "INVALID" and lgr_i.perf_constraints_met is False
    assert (
        lgr_i.invalid_reason is not None and "TTFT" in lgr_i.invalid_reason and "TPOT" in lgr_i.invalid_reason
    )
    assert rec_i.verdict.status == "INVALID"
    assert any("latency constraints not met" in r for r in rec_i.verdict.reasons)
    assert lgr_s.result_validity == "VALID" and lgr_s.perf_constraints_met is True
    # trial settings + simulated engine: the run passes but is never "VALID"
    assert rec_s.verdict.status == "NOT_SUBMITTABLE"
    assert not any("LoadGen result INVALID" in r for r in rec_s.verdict.reasons)
    for rec in (rec_i, rec_s):
        assert rec.simulated and rec.engine is not None and rec.engine.simulated
