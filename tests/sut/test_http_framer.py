"""One HTTP/1.1 framer for every request of the OpenAI engine (loadgen_sut.engines.http_connection.Connection):
the JSON answers of ``/v1/models`` and ``/version`` are read by the same parser, with the same bounds, on the
same kept-alive connection pool as the streamed completions."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable

import pytest
from loopback_server import LoopbackServer
from sse_server import ServerConfig, SSEServer

from loadgen_sut.engines.base import ErrorKind, Failed, Finished
from loadgen_sut.engines.http_client import Endpoint, HttpClient
from loadgen_sut.engines.http_connection import MAX_HEADERS, HttpError
from loadgen_sut.engines.sse_protocol import SSEStreamClient


def _run(fn: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(fn(), 30))


def _json(obj: object, status: int = 200) -> bytes:
    body = json.dumps(obj).encode()
    return b"HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % (status, len(body)) + body


Steps = list[bytes | None]  # bytes to send, None: close the connection


class Answers(LoopbackServer):
    """Answers the n-th request of the m-th connection with the steps ``answer(m, n)``."""

    def __init__(self, answer: Callable[[int, int], Steps]) -> None:
        super().__init__()
        self.answer = answer
        self.connections = 0

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn_no = self.connections
        self.connections += 1
        try:
            for req_no in range(1000):
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    (int(h.split(b":", 1)[1]) for h in head.split(b"\r\n") if h.lower().startswith(b"content-length:")),
                    0,
                )
                await reader.readexactly(length)
                for step in self.answer(conn_no, req_no):
                    if step is None:
                        return
                    writer.write(step)
                    await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.transport.abort()


def test_json_answers_and_streams_share_one_kept_alive_connection() -> None:
    server = SSEServer(ServerConfig(output_tokens=4)).start()
    try:

        async def main() -> None:
            client = SSEStreamClient(idle_timeout_s=5.0)
            ep = Endpoint.parse(server.url)
            status, models = await client.get_json(ep, "/v1/models")
            assert status == 200 and models["data"][0]["id"] == "tiny"
            assert client.idle_connections(ep) == 1
            body = {"model": "tiny", "prompt": "x", "max_tokens": 4, "stream": True, "return_token_ids": True}
            body["stream_options"] = {"include_usage": True}
            events = [ev async for ev in client.stream(ep, "/v1/completions", body, chat=False, engine_ids=True, tokenizer=None)]
            assert events[-1] == Finished(
                token_ids=(100, 101, 102, 103), n_tokens=4, finish_reason="length", text=" w0 w1 w2 w3"
            )
            _, version = await client.get_json(ep, "/version")
            assert version == {"version": "test-sse-server-1"}
            assert client.idle_connections(ep) == 1  # all three went over the one connection
            client.close()

        _run(main)
    finally:
        server.stop()
    assert len(server.recorder.records) == 1 and server.recorder.records[0].complete


def test_a_stale_kept_alive_connection_is_retried_once_for_json() -> None:
    def answer(conn_no: int, req_no: int) -> Steps:
        return [None] if (conn_no, req_no) == (0, 1) else [_json({"n": conn_no})]  # the first closes on its 2nd

    async def main() -> None:
        async with Answers(answer) as server:
            client = HttpClient()
            assert await client.get_json(server.endpoint, "/v1/models") == (200, {"n": 0})
            assert await client.get_json(server.endpoint, "/v1/models") == (200, {"n": 1})
            assert server.connections == 2
            client.close()

    _run(main)


async def _hang_after(prefix: bytes, writer: asyncio.StreamWriter) -> None:
    writer.write(prefix)
    await writer.drain()
    await asyncio.sleep(3600)


class Hangs(LoopbackServer):
    """Sends ``prefix`` to every request, then nothing (the connection stays open)."""

    def __init__(self, prefix: bytes) -> None:
        super().__init__()
        self.prefix = prefix

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.readuntil(b"\r\n\r\n")
            await _hang_after(self.prefix, writer)
        finally:
            writer.transport.abort()


@pytest.mark.parametrize(
    ("prefix", "fragment"),
    [
        (b"SSH-2.0-OpenSSH_9.6\r\n", "not an HTTP/1.x status line"),
        (b"HTTP/1.1 200 OK\r\nno colon here\r\n", "bad header line"),
        (b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-H%d: v\r\n" % k for k in range(MAX_HEADERS + 1)), "over 100 header lines"),
    ],
    ids=["status-line", "header-line", "too-many-headers"],
)
def test_a_bad_head_fails_when_its_line_arrives_not_at_the_timeout(prefix: bytes, fragment: str) -> None:
    """For the JSON answers and the streams alike: the head is judged line by line."""

    async def main() -> None:
        async with Hangs(prefix) as server:
            t0 = time.perf_counter()
            with pytest.raises(HttpError) as info:
                await HttpClient().get_json(server.endpoint, "/v1/models", timeout_s=10.0)
            assert info.value.kind == "malformed" and fragment in str(info.value)
            client = SSEStreamClient(idle_timeout_s=10.0)
            (ev,) = [ev async for ev in client.stream(server.endpoint, "/v1/completions", {}, chat=False, engine_ids=True, tokenizer=None)]
            assert isinstance(ev, Failed) and ev.error.kind is ErrorKind.MALFORMED and fragment in ev.error.message
            assert time.perf_counter() - t0 < 5.0

    _run(main)


def test_an_error_answer_is_quoted_from_its_start_and_a_cut_answer_is_a_reset() -> None:
    def answer(conn_no: int, req_no: int) -> Steps:
        if conn_no == 0:  # a 503 with a 1 MB body: only its start is read
            body = b"overloaded, retry later " + b"." * 1_000_000
            return [b"HTTP/1.1 503 Busy\r\nContent-Length: %d\r\n\r\n" % len(body) + body]
        return [b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"data\": ", None]  # cut short

    async def main() -> None:
        async with Answers(answer) as server:
            client = HttpClient()
            with pytest.raises(HttpError) as info:
                await client.get_json(server.endpoint, "/v1/models")
            assert info.value.kind == "http_status" and str(info.value).startswith("HTTP 503: overloaded, retry later")
            assert len(str(info.value)) < 250
            with pytest.raises(HttpError) as info:
                await client.get_json(server.endpoint, "/v1/models")
            assert info.value.kind == "reset" and "middle of the response body" in str(info.value)

    _run(main)
