"""qwen3-vl requests over real HTTP: the chat content parts (text + the image inline) reach the server as the
references send them, and nothing that would make the engine fetch an image is ever sent."""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path
from types import ModuleType

import pytest
from sse_server import SSEServer

from loadgen_sut.datasets import load_dataset
from loadgen_sut.engines.base import (
    ChatMessage,
    ContentPart,
    Failed,
    Finished,
    GenerationEvent,
    GenerationRequest,
)
from loadgen_sut.engines.openai_http import OpenAIConfig, OpenAIEngine
from loadgen_sut.engines.tokenizers import WordTokenizer

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "qwen3_vl" / "make_fixture.py"


def _fixture() -> ModuleType:
    spec = importlib.util.spec_from_file_location("qwen3_vl_fixture", FIXTURE)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _run(engine: OpenAIEngine, requests: list[GenerationRequest]) -> list[list[GenerationEvent]]:
    async def go() -> list[list[GenerationEvent]]:
        await engine.start()
        engine.prepare({r.sample_index: r for r in requests})
        try:
            out = []
            for r in requests:
                out.append([ev async for ev in engine.generate(r)])
            return out
        finally:
            await engine.close()

    return asyncio.run(go())


def _engine(server: SSEServer, api: str) -> OpenAIEngine:
    tok = WordTokenizer([" ".join(f"w{k}" for k in range(20))])  # the server answers " w0 w1 ..."
    return OpenAIEngine(OpenAIConfig(endpoints=(server.url,), model="tiny", api=api), tok)


def _requests(path: Path) -> list[GenerationRequest]:
    ds = load_dataset(str(path))
    return [GenerationRequest(sample_index=s.index, messages=s.messages, max_new_tokens=5) for s in ds.samples]


def test_content_parts_go_out_inline(sse_server: SSEServer, tmp_path: Path) -> None:
    fx = _fixture()
    path = fx.write_endpoints(tmp_path / "catalogue.parquet")
    requests = _requests(path)[:3]
    results = _run(_engine(sse_server, "chat"), requests)
    assert all(isinstance(evs[-1], Finished) for evs in results)
    bodies = sse_server.stats.bodies
    assert len(bodies) == 3
    for req, body in zip(requests, bodies, strict=True):
        assert req.messages is not None
        system, user = body["messages"]
        assert system == {"role": "system", "content": req.messages[0].content}
        assert user["role"] == "user" and [p["type"] for p in user["content"]] == ["text", "image_url"]
        text_part, image_part = req.messages[1].content  # type: ignore[misc]
        assert user["content"][0]["text"] == text_part.text
        url = user["content"][1]["image_url"]["url"]
        assert url == image_part.image_url and url.startswith("data:image/PNG;base64,")
        assert "prompt" not in body and body["stream"] is True


def test_chat_parts_need_the_chat_api(sse_server: SSEServer, tmp_path: Path) -> None:
    path = _fixture().write_endpoints(tmp_path / "catalogue.parquet")
    (evs,) = _run(_engine(sse_server, "completions"), _requests(path)[:1])
    assert isinstance(evs[-1], Failed) and "run with --api chat" in evs[-1].error.message
    assert sse_server.stats.bodies == []  # nothing was sent


@pytest.mark.parametrize("url", ["https://example.com/a.png", "http://10.0.0.1/a.jpg", "file:///etc/passwd"])
def test_an_image_link_is_never_sent(sse_server: SSEServer, url: str) -> None:
    msg = ChatMessage(role="user", content=(ContentPart(type="text", text="hi"), ContentPart(type="image_url", image_url=url)))
    (evs,) = _run(_engine(sse_server, "chat"), [GenerationRequest(sample_index=0, messages=(msg,), max_new_tokens=5)])
    assert isinstance(evs[-1], Failed) and "is not inline data: never sent" in evs[-1].error.message
    assert sse_server.stats.bodies == []
