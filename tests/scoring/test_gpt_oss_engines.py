"""gpt-oss-120b through an OpenAI-compatible engine: what the requests carry (the round's sampling, the performance
and accuracy caps, special tokens kept, the engine's token ids where its flavor has them), with the streaming test
server of ``tests/sut`` answering as SGLang and as vLLM."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from gpt_oss_fixture import frame

from loadgen_sut.engines.base import GenerationRequest
from loadgen_sut.engines.factory import EngineSpec
from loadgen_sut.engines.openai_http import OpenAIConfig, OpenAIEngine
from loadgen_sut.run.plan import RunRequest
from loadgen_sut.runner import RunOutcome, run
from loadgen_sut.settings import RunMode

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sut"))  # the harness tests' streaming server
from sse_server import ServerConfig, SSEServer

ROWS: list[tuple[str, str | int]] = [("aime25", "70"), ("gpqa_diamond", "C"), ("gpqa_diamond", "A")]


@pytest.fixture(params=["sglang", "vllm"])
def server(request: pytest.FixtureRequest) -> Iterator[SSEServer]:
    srv = SSEServer(ServerConfig(model="gpt-oss-120b", owned_by=request.param)).start()
    yield srv
    srv.stop()


def _run(tmp_path: Path, server: SSEServer, mode: RunMode) -> RunOutcome:
    data = tmp_path / "acc.parquet"
    frame(ROWS, "input_tokens", text_truth=True).to_parquet(data)
    conf = tmp_path / "trial.conf"
    conf.write_text("*.Offline.min_duration = 0\n*.Offline.min_query_count = 3\n", encoding="utf-8")
    engine = EngineSpec(kind="openai", model="gpt-oss-120b", endpoints=(f"http://127.0.0.1:{server.port}",))
    req = RunRequest(
        round_name="v6.1",
        benchmark="gpt-oss-120b",
        scenario="Offline",
        mode=mode,
        engine=engine,
        out=tmp_path / "out",
        dataset=str(data),
        user_conf=conf,
        progress_interval_s=0,
    )
    return run(req, say=lambda _line: None)


def test_requests_carry_the_rounds_generation_settings(tmp_path: Path, server: SSEServer) -> None:
    record = _run(tmp_path, server, RunMode.PERFORMANCE).record
    assert [t.status for t in record.tests] == ["finished"]
    bodies = server.stats.bodies
    assert len(bodies) == len(ROWS)
    for body in bodies:
        assert (body["temperature"], body["top_p"], body["top_k"]) == (1.0, 1.0, -1)  # sampling, top_k disabled
        assert body["skip_special_tokens"] is False and body["max_tokens"] == 10000  # the performance cap
        assert body["return_token_ids"] is True and isinstance(body["prompt"], list)  # ids in, ids out
    assert record.engine is not None and record.engine.parameters["flavor"] == server.cfg.owned_by
    assert record.tests[0].sut.output_tokens == 12 * len(ROWS)  # the server's 12 ids per answer, from the engine
    sources = {"vllm": "engine", "sglang": "engine where the release returns them, else none"}
    assert record.engine.parameters["token_ids"] == sources[server.cfg.owned_by]


def test_sglang_accuracy_needs_a_tokenizer_for_releases_without_ids(tmp_path: Path, server: SSEServer) -> None:
    (test,) = _run(tmp_path, server, RunMode.ACCURACY).record.tests
    if server.cfg.owned_by == "sglang":  # older SGLang releases ignore return_token_ids: ids cannot be promised
        assert test.status == "setup_error" and "--tokenizer" in (test.error or "")
    else:
        assert test.status == "finished" and {b["max_tokens"] for b in server.stats.bodies} == {32768}


def test_sglang_chat_streams_get_no_token_id_request() -> None:
    req = GenerationRequest(sample_index=0, prompt="q", max_new_tokens=8)
    chat = OpenAIEngine(OpenAIConfig(endpoints=("http://127.0.0.1:1",), model="m", flavor="sglang", api="chat"))
    assert "return_token_ids" not in chat._body(req)[1]  # SGLang refuses it on streamed chat completions
    done = OpenAIEngine(OpenAIConfig(endpoints=("http://127.0.0.1:1",), model="m", flavor="vllm", api="chat"))
    assert done._body(req)[1]["return_token_ids"] is True
