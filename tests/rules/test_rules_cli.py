"""``inference-audit rules list|show``: output and exit codes."""

from __future__ import annotations

import argparse
import json

import pytest

from rules import cli


def run_rules(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="inference-audit rules")
    cli.add_arguments(parser)
    return cli.run(parser.parse_args(argv))


def test_list_shows_every_round_and_benchmark(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_rules(["list"]) == 0
    out = capsys.readouterr().out
    for rnd in ("v5.0", "v5.1", "v6.0", "v6.1"):
        assert f"\n{rnd}  " in f"\n{out}"
    assert "llama2-70b-interactive-99" in out  # v5.0 only
    assert "gpt-oss-120b" in out


def test_list_json_one_round(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_rules(["list", "--round", "5.1", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [r["round"] for r in data] == ["v5.1"]
    names = {b["name"] for b in data[0]["benchmarks"]}
    assert len(names) == 19 and "llama3.1-8b" in names
    llama = next(b for b in data[0]["benchmarks"] if b["name"] == "llama2-70b-99")
    assert llama["scenarios"]["datacenter"] == ["Offline", "Interactive", "Server"]


def test_show_text_prints_every_group_with_sources(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_rules(["show", "llama2-70b-99", "--round", "v5.1"]) == 0
    out = capsys.readouterr().out
    expected = [
        "llama2-70b-99 — round v5.1",
        "at least one of Server | Interactive   [CHK_v5.1.1:361; CHK_v5.1.1:371]",
        "performance_sample_count >= 24576   [CHK_v5.1.1:532]",
        "Offline samples per query >= 24576",
        "min_query_count: SingleStream 1024 (early stopping: not enforced)",
        "minimum duration >= 600000 ms",
        "Server: target latency <= 20000000000 ns",
        "Server: p99 TTFT < 2000 ms and p99 TPOT < 200 ms   [CHK_v5.1.1:826-828]",
        "Interactive: p99 TTFT < 450 ms and p99 TPOT < 40 ms   [CHK_v5.1.1:829-831]",
        "ROUGE1 >= 43.986888  (= 44.4312 x 0.99)",
        "quality variant llama2-70b-99.9:",
        "ROUGE1 >= 44.3867688  (= 44.4312 x 0.999)",
        "TOKENS_PER_SAMPLE <= 323.895",
        "max_new_tokens = 1024",
        "decoding: greedy search",
        "TEST06",
        "seeds: qsl 1780908523862526354",
        "early stopping (min_query_count not enforced): SingleStream, MultiStream, Server, Interactive",
        "Offline: result_tokens_per_second  ->  Tokens/s",
        "Sources cited above",
        "CHK_v5.1.1: mlcommons/inference@v5.1.1/tools/submission/submission_checker.py",
    ]
    for text in expected:
        assert text in out, text


def test_show_resolves_alias_and_prints_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_rules(["show", "llama3_1-8b", "--round", "v5.1", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["benchmark"]["name"] == "llama3.1-8b"
    assert data["benchmark"]["token_latency_limits"]["Interactive"]["ttft_ms"] == 500.0
    assert data["round"]["seeds"]["schedule_rng_seed"] == 18209322760996052031
    assert "CHK_v5.1.1" in data["sources"]
    assert data["quality_variants"] == {}


def test_show_defaults_to_latest_round(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_rules(["show", "gpt-oss-120b"]) == 0
    out = capsys.readouterr().out
    assert "gpt-oss-120b — round v6.1" in out
    assert "Interactive: p99 TTFT < 2000 ms and p99 TPOT < 15 ms" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["show", "nope", "--round", "v5.1"], "round v5.1 has no benchmark 'nope'; known: 3d-unet-99"),
        (["show", "gpt-oss-120b", "--round", "v5.1"], "(it exists in v6.0, v6.1)"),
        (["show", "llama2-70b-99", "--round", "v9.9"], "no rules for round 'v9.9'; known rounds"),
        (["show", "llama2-70b-99", "--round", "next"], "not a round name: 'next'"),
        (["list", "--round", "v4.0"], "no rules for round 'v4.0'"),
    ],
)
def test_unknown_round_or_benchmark_exits_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_rules(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert message in captured.err


def test_through_the_inference_audit_dispatcher(capsys: pytest.CaptureFixture[str]) -> None:
    try:
        from loadgen_sut.cli import main
    except ImportError as exc:  # other subcommands' modules may not be importable yet
        pytest.skip(f"inference-audit dispatcher not importable: {exc}")
    assert main(["rules", "show", "resnet50", "--round", "v5.1"]) == 0
    assert "resnet — round v5.1" in capsys.readouterr().out
    assert main(["rules", "show", "resnet50", "--round", "v0.1"]) == 2
