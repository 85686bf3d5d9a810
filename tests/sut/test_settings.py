"""Settings: user.conf parsing as LoadGen does it, override judging, version and LoadGen cross-checks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from sut_helpers import BENCH, ROUND, sim_engine

from checker.findings import Severity, UnusableInput
from loadgen_sut.cli import main
from loadgen_sut.run.plan import RunRequest
from loadgen_sut.runner import run
from loadgen_sut.settings import (
    RunMode,
    TestSettingsModel,
    compare_with_loadgen,
    gates_text,
    loadgen_version_findings,
    official_settings,
    override_findings,
    parse_user_conf_text,
    plan_settings,
)
from loadgen_sut.settings.user_conf import conf_findings
from rules import load_round
from rules.models import Scenario


def _plan(conf: str, scenario: Scenario = Scenario.SERVER, rnd: str = ROUND):
    r = load_round(rnd)
    b = r.benchmark(BENCH)
    assert b is not None
    return plan_settings(r, b, scenario, parse_user_conf_text(conf, "user.conf"))


def test_user_conf_tokenizer_matches_loadgen_rules() -> None:
    uc = parse_user_conf_text(
        "# a comment\n*.Server.target_qps=5\n#nospace comment\nllama3_1-8b.Server.target_qps = 7\n"
        "*.Server.target_qps = 3\n*.server.min_duration = 5\n*.Server.bogus_key = 1\n*.Server.min_duration = abc\n",
        "u.conf",
    )
    msgs = {(f.line, f.rule) for f in conf_findings(uc)}
    assert (2, "RUN-CONF-SYNTAX") in msgs  # k=v without spaces: LoadGen ignores it silently
    assert (3, "RUN-CONF-SYNTAX") in msgs  # '#nospace' is read as a key -> error_invalid_config
    assert (6, "RUN-CONF-SCENARIO") in msgs  # scenario names are case-sensitive
    assert (7, "RUN-CONF-UNKNOWN-KEY") in msgs
    assert (8, "RUN-CONF-SYNTAX") in msgs
    # lookup order: model.Scenario beats *.Scenario
    hit = uc.lookup("llama3_1-8b", "Server", "target_qps")
    assert hit is not None and hit.value == "7" and hit.line == 4
    other = uc.lookup("gptj", "Server", "target_qps")
    assert other is not None and other.value == "3"


def test_official_settings_from_round() -> None:
    r = load_round(ROUND)
    b = r.benchmark(BENCH)
    assert b is not None
    server = official_settings(r, b, Scenario.SERVER)
    inter = official_settings(r, b, Scenario.INTERACTIVE)
    offline = official_settings(r, b, Scenario.OFFLINE)
    assert server.conf_model == "llama3_1-8b" and inter.conf_model == "llama3_1-8b-interactive"
    assert inter.loadgen_scenario is Scenario.SERVER
    assert server.ttft_latency_ns == 2_000_000_000 and server.tpot_latency_ns == 100_000_000
    assert inter.ttft_latency_ns == 500_000_000 and inter.tpot_latency_ns == 30_000_000
    assert offline.ttft_latency_ns is None and offline.min_query_count == 13368
    assert server.min_duration_ms == 600_000 and server.use_token_latencies and server.sample_concatenate_permutation
    assert "p99 TTFT < 500 ms" in gates_text(_plan("", Scenario.INTERACTIVE))
    with pytest.raises(UnusableInput, match="no SingleStream"):
        official_settings(r, b, Scenario.SINGLE_STREAM)


@pytest.mark.parametrize(
    ("line", "compliant"),
    [
        ("*.Server.target_qps = 12.5", True),
        ("*.Server.min_duration = 1000", False),
        ("*.Server.min_duration = 900000", True),
        ("*.Server.max_query_count = 500", False),
        ("llama3_1-8b.Server.ttft_latency = 5000", False),
        ("*.Server.sample_concatenate_permutation = 0", False),
        ("*.Server.use_token_latencies = 0", False),
        ("*.*.qsl_rng_seed = 1", False),
        ("*.Server.performance_sample_count_override = 100", False),
        ("*.Server.coalesce_queries = 1", True),
    ],
)
def test_override_judging(line: str, compliant: bool) -> None:
    planned = _plan(line + "\n")
    assert len(planned.overrides) == 1
    assert planned.overrides[0].compliant is compliant, planned.overrides[0]
    trial = override_findings(planned, RunMode.PERFORMANCE)
    sub = override_findings(planned, RunMode.SUBMISSION)
    if compliant:
        assert not trial and not sub
    else:
        assert trial[0].severity is Severity.WARNING and sub[0].severity is Severity.ERROR
        assert sub[0].line == 1 and sub[0].path == "user.conf"


def test_overrides_for_other_models_do_not_apply() -> None:
    planned = _plan("gptj.Server.min_duration = 1\n*.Offline.min_duration = 1\n")
    assert planned.overrides == ()
    assert planned.effective.min_duration_ms == 600_000


def test_loadgen_version_must_belong_to_round() -> None:
    assert loadgen_version_findings(load_round("v6.1"), "6.0.17") == []
    assert loadgen_version_findings(load_round("v6.0"), "6.0.15") == []
    assert loadgen_version_findings(load_round("v6.0"), "6.0.3")  # 6.0.3 carries the v5.1 seeds
    bad = loadgen_version_findings(load_round("v5.1"), "6.0.17")
    assert bad and bad[0].rule == "RUN-LOADGEN-VERSION" and "5.1" in bad[0].message
    assert "5.1" in (bad[0].fix or "")
    missing = loadgen_version_findings(load_round("v6.1"), None)
    assert missing[0].rule == "RUN-LOADGEN-MISSING"


def test_compare_detects_compiled_conf_of_another_round() -> None:
    expected = _plan("").official
    other = expected.model_copy(update={"ttft_latency_ns": 1, "min_duration_ms": 10})
    msgs = [f.message for f in compare_with_loadgen(expected, other, ROUND)]
    assert any("ttft_latency_ns=1" in m for m in msgs) and any("min_duration_ms=10" in m for m in msgs)
    assert compare_with_loadgen(expected, expected, ROUND) == []


def _probe(tmp_path: Path, rnd: str, conf: str) -> TestSettingsModel:
    planned = _plan(conf, rnd=rnd)
    (tmp_path / "user.conf").write_text(conf, encoding="utf-8")
    (tmp_path / "settings.json").write_text(planned.effective.model_dump_json(), encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "loadgen_sut.probe", str(tmp_path / "settings.json"), str(tmp_path / "user.conf")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return TestSettingsModel.model_validate(json.loads(out.stdout.strip().splitlines()[-1]))


def test_probe_reads_back_what_loadgen_applies(tmp_path: Path) -> None:
    """The installed LoadGen's compiled conf + user.conf, read back from TestSettings."""
    actual = _probe(tmp_path, "v6.1", "*.Server.target_qps = 42\n")
    planned = _plan("*.Server.target_qps = 42\n", rnd="v6.1")
    assert actual.server_target_qps == 42.0
    assert compare_with_loadgen(planned.official, actual, "v6.1") == []
    # v6.0's seeds are not those compiled into the installed 6.0.x wheel: detected before a run
    v60 = _plan("", rnd="v6.0").official
    msgs = [f.message for f in compare_with_loadgen(v60, actual, "v6.0")]
    assert any("seeds" in m for m in msgs)


def test_submission_refuses_noncompliant_conf_before_running(tmp_path: Path) -> None:
    conf = tmp_path / "u.conf"
    conf.write_text("*.Server.min_duration = 1000\n", encoding="utf-8")
    req = RunRequest(
        round_name=ROUND,
        benchmark=BENCH,
        scenario="Server",
        mode=RunMode.SUBMISSION,
        engine=sim_engine(),
        out=tmp_path / "out",
        user_conf=conf,
        progress_interval_s=0,
    )
    lines: list[str] = []
    with pytest.raises(UnusableInput, match="refusing to run"):
        run(req, say=lines.append)
    assert not (tmp_path / "out").exists()  # nothing started, nothing written
    assert any("NOT COMPLIANT" in line for line in lines)
    assert any("p99 TTFT < 2000 ms" in line for line in lines)  # the gates are printed first


def test_submission_refuses_wrong_loadgen_round(tmp_path: Path) -> None:
    req = RunRequest(
        round_name="v5.1",
        benchmark=BENCH,
        scenario="Offline",
        mode=RunMode.SUBMISSION,
        engine=sim_engine(),
        out=tmp_path / "out",
        progress_interval_s=0,
    )
    with pytest.raises(UnusableInput, match="refusing to run"):
        run(req, say=lambda _l: None)


def test_cli_refuses_a_submission_without_system_before_running(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["run", "--engine", "openai", "--endpoint", "http://127.0.0.1:9", "--model", "x", "--benchmark", BENCH]
    args += ["--scenario", "Offline", "--round", ROUND, "--mode", "submission", "--submitter", "Me"]
    args += ["--out", str(tmp_path / "out")]
    assert main(args) == 2
    assert "--system" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("code_args", "message"),
    [
        (["--lcb-problems", "problems.jsonl"], "needs --allow-code-execution"),
        (["--allow-code-execution"], "needs --lcb-problems"),
        (["--allow-code-execution", "--lcb-problems", "missing.jsonl"], "missing.jsonl"),
    ],
)
def test_cli_refuses_half_a_code_execution_opt_in_before_running(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], code_args: list[str], message: str
) -> None:
    args = ["run", "--engine", "simulated", "--benchmark", "deepseek-r1", "--scenario", "Offline"]
    args += ["--round", ROUND, "--mode", "accuracy", "--out", str(tmp_path / "out")]
    args += [a if not a.endswith(".jsonl") else str(tmp_path / a) for a in code_args]
    assert main(args) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("rnd", "bench", "tokens"),
    [("v6.1", "qwen3-vl-235b-a22b", False), ("v6.0", "qwen3-vl-235b-a22b", False), ("v6.1", "llama3.1-8b", True)],
)
def test_token_latencies_follow_the_rounds_mlperf_conf(rnd: str, bench: str, tokens: bool) -> None:
    """qwen3-vl's mlperf.conf sets use_token_latencies = 0 (CONF_HEAD:111): its Server run is judged on the e2e
    target latency, so the plan leaves token latencies off (it turned them on for every LLM, and every qwen3-vl run
    warned RUN-LOADGEN-CONF); the other LLMs set 1."""
    r = load_round(rnd)
    b = r.benchmark(bench)
    assert b is not None and b.is_llm
    for scenario in (Scenario.OFFLINE, Scenario.SERVER):
        planned = official_settings(r, b, scenario)
        assert planned.use_token_latencies is tokens
        if not tokens:
            assert planned.ttft_latency_ns is None and planned.tpot_latency_ns is None


def test_qwen3_vl_interactive_gate_is_its_own_bound() -> None:
    """v6.1 qwen3-vl Interactive: target latency <= 1.5 s (CHK_HEAD:256-259), not Server's 12 s."""
    r = load_round("v6.1")
    b = r.benchmark("qwen3-vl-235b-a22b")
    assert b is not None
    interactive = official_settings(r, b, Scenario.INTERACTIVE)
    assert interactive.server_target_latency_ns == 1_500_000_000
    assert "gate: p99 latency <= 1500 ms" in gates_text(plan_settings(r, b, Scenario.INTERACTIVE, parse_user_conf_text("", "u")))
    assert official_settings(r, b, Scenario.SERVER).server_target_latency_ns == 12_000_000_000


def test_a_loadgen_target_latency_off_the_bound_is_reported_where_it_is_the_gate() -> None:
    """qwen3-vl (no token latencies) is judged by LoadGen against the target_latency it reads: v6.1 Interactive has no
    mlperf.conf key, so LoadGen's default 10 ms would fail a run that meets the 1.5 s bound. Where TTFT/TPOT are the
    gate (llama3.1-8b), target_latency is not compared."""
    r = load_round("v6.1")
    q, llama = r.benchmark("qwen3-vl-235b-a22b"), r.benchmark("llama3.1-8b")
    assert q is not None and llama is not None
    want = official_settings(r, q, Scenario.INTERACTIVE)
    got = want.model_copy(update={"server_target_latency_ns": 10_000_000})
    found = compare_with_loadgen(want, got, "v6.1")
    assert [f.rule for f in found] == ["RUN-LOADGEN-CONF"]
    assert "target_latency 10 ms but round v6.1's bound for Interactive is 1500 ms" in found[0].message
    assert compare_with_loadgen(want, want, "v6.1") == []
    assert compare_with_loadgen(want, got, "v6.1", skip=frozenset({"server_target_latency_ns"})) == []
    tokens = official_settings(r, llama, Scenario.SERVER)
    assert compare_with_loadgen(tokens, tokens.model_copy(update={"server_target_latency_ns": 0}), "v6.1") == []
