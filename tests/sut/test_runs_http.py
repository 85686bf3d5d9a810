"""Real LoadGen runs against a real local OpenAI-compatible SSE server, with injected faults.

Every fault must leave the run finished (no hang), every issued sample completed exactly once,
the failures counted by kind, and the run never reported valid.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from sse_server import SSEServer
from sut_helpers import http_engine, start_server, trial

from checker.findings import UnusableInput
from checker.parsers.accuracy_log import parse_accuracy_log
from loadgen_sut.settings import RunMode


def test_healthy_server_token_counts_from_usage_not_events(tmp_path: Path) -> None:
    # 12 tokens merged 5 per SSE event (3 events): counts must come from usage/ids, not events
    server = start_server(output_tokens=12, tokens_per_event=5)
    try:
        out = trial(tmp_path, http_engine(server.url), scenario="Server", mode=RunMode.ACCURACY)
    finally:
        server.stop()
    acc = out.record.tests[0]
    assert acc.status == "finished" and acc.sut.failed == 0
    assert acc.sut.output_tokens == 12 * acc.sut.completed
    log = parse_accuracy_log(out.run_dir / "accuracy" / "mlperf_log_accuracy.json")
    for e in log.entries:
        assert e.token_count == 12
        assert e.token_ids() == tuple(range(100, 112))
        assert e.first_token_ids() == (100, 101, 102, 103, 104)  # the whole first (merged) event
    body = server.stats.bodies[0]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["temperature"] == 0.0 and body["return_token_ids"] is True and body["max_tokens"] == 128
    assert out.record.engine is not None and out.record.engine.version == "test-sse-server-1"
    assert out.record.engine.name == "vllm"


def test_load_is_spread_over_replicas(tmp_path: Path) -> None:
    a, b = start_server(), start_server()
    try:
        out = trial(tmp_path, http_engine([a.url, b.url]), scenario="Server")
    finally:
        a.stop()
        b.stop()
    perf = out.record.tests[0]
    assert perf.sut.failed == 0 and perf.loadgen is not None and perf.loadgen.result_validity == "VALID"
    assert a.stats.completions + b.stats.completions == perf.sut.issued
    assert min(a.stats.completions, b.stats.completions) > perf.sut.issued // 4
    # how the measuring process was set up is on record
    assert perf.event_loop is not None and perf.event_loop.split()[0] in ("uvloop", "asyncio")
    assert perf.gc_frozen_objects is not None and perf.gc_frozen_objects > 0
    if sys.platform.startswith("linux"):
        assert perf.issue_timer_slack_ns == 1


@pytest.mark.parametrize(
    ("fault", "kind", "engine_kw"),
    [
        ("reset", "reset", {}),
        ("http500", "http_status", {}),
        ("truncate", "truncated", {}),
        ("malformed", "malformed", {}),
        ("stall", "timeout", {"idle_timeout_s": 0.3}),
        ("usage_mismatch", "token_mismatch", {}),
        ("engine_error", "engine", {}),
        ("no_usage", "missing_usage", {"flavor": "generic"}),
    ],
)
def test_faults_are_counted_and_invalidate(tmp_path: Path, fault: str, kind: str, engine_kw: dict[str, object]) -> None:
    server = start_server(fault=fault, fault_every=4, stall_s=5.0)
    try:
        out = trial(tmp_path, http_engine(server.url, **engine_kw), scenario="Offline")
    finally:
        server.stop()
    perf = out.record.tests[0]
    assert perf.status == "finished"
    assert perf.sut.issued == perf.sut.completed > 0  # every sample completed exactly once
    assert perf.sut.duplicate_completions == 0
    expected = server.stats.faults
    assert perf.sut.failed == expected > 0
    assert perf.sut.failures_by_kind == {kind: expected}
    assert out.record.verdict.status == "INVALID"
    assert any("FAILED in the engine" in r for r in out.record.verdict.reasons)


def test_server_dies_mid_run(tmp_path: Path) -> None:
    server = start_server(fault="shutdown", fault_every=10)
    try:
        out = trial(tmp_path, http_engine(server.url, max_concurrency=1), scenario="Offline")
    finally:
        server.stop()
    perf = out.record.tests[0]
    assert perf.status == "finished" and perf.sut.issued == perf.sut.completed
    assert perf.sut.failed == perf.sut.completed - 10
    assert set(perf.sut.failures_by_kind) <= {"connect", "reset"}
    assert out.record.verdict.status == "INVALID"


def test_engine_down_at_start_is_refused_before_the_run(tmp_path: Path) -> None:
    """The engine probe (loadgen_sut/run/engine_probe.py): unusable input, no run directory, no LoadGen process."""
    server = start_server()
    url = server.url
    server.stop()  # nothing listens there any more
    with pytest.raises(UnusableInput) as exc:
        trial(tmp_path, http_engine(url), scenario="Server")
    assert "cannot reach the engine" in str(exc.value) and url in str(exc.value)
    assert not (tmp_path / "out").exists()


def test_wrong_model_name_is_a_clear_error(tmp_path: Path, sse_server: SSEServer) -> None:
    with pytest.raises(UnusableInput) as exc:
        trial(tmp_path, http_engine(sse_server.url, model="other"), scenario="Server")
    assert "does not serve model 'other'" in str(exc.value) and "tiny" in str(exc.value)


def test_accuracy_without_token_ids_or_tokenizer_is_refused(tmp_path: Path, sse_server: SSEServer) -> None:
    out = trial(tmp_path, http_engine(sse_server.url, flavor="generic"), scenario="Server", mode=RunMode.ACCURACY)
    t = out.record.tests[0]
    assert t.status == "setup_error" and t.error is not None and "--tokenizer" in t.error
    assert not (out.run_dir / "accuracy" / "mlperf_log_accuracy.json").exists()


def _word_tokenizer(directory: Path) -> Path:
    """An HF tokenizer directory (word level) for the test server's words w0 .. w199."""
    tokenizers = pytest.importorskip("tokenizers")
    transformers = pytest.importorskip("transformers")
    vocab = {"<unk>": 0, "</s>": 1, **{f"w{k}": 100 + k for k in range(200)}}
    tok = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.WhitespaceSplit()
    transformers.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", eos_token="</s>").save_pretrained(
        directory
    )
    return directory


@pytest.mark.parametrize("api", ["completions", "chat"])
def test_text_only_engine_uses_the_tokenizer_for_ids(tmp_path: Path, api: str) -> None:
    """No engine token ids (generic flavor, or chat): ids from --tokenizer, counts from usage."""
    server = start_server(output_tokens=12, tokens_per_event=3)
    tok = _word_tokenizer(tmp_path / "tok")
    try:
        engine = http_engine(server.url, flavor="generic", api=api, tokenizer_dir=str(tok))
        out = trial(tmp_path / "run", engine, scenario="Server", mode=RunMode.ACCURACY)
    finally:
        server.stop()
    t = out.record.tests[0]
    assert t.status == "finished" and t.sut.failed == 0
    assert t.sut.retokenized_outputs == t.sut.completed == 32
    log = parse_accuracy_log(out.run_dir / "accuracy" / "mlperf_log_accuracy.json")
    for e in log.entries:
        assert e.token_count == 12 and e.token_ids() == tuple(range(100, 112))
        assert e.first_token_ids() == (100,)  # the role-only chat delta is not a token
    assert "return_token_ids" not in server.stats.bodies[0]
    assert ("messages" in server.stats.bodies[0]) is (api == "chat")
