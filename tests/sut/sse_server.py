"""A real OpenAI-compatible streaming server on 127.0.0.1 with controllable faults, for SUT tests.

It speaks HTTP/1.1 with keep-alive and chunked SSE like vLLM (``/v1/models``, ``/v1/completions``
with ``stream_options.include_usage`` and vLLM's ``return_token_ids``). Output: word ``w<k>`` as
token id ``100 + k``; ``tokens_per_event`` > 1 merges tokens into one event as vLLM does under load.

Faults (``fault``) hit every ``fault_every``-th completion request (1-based counter):
``reset`` (close mid-stream), ``http500``, ``truncate`` (end the body without ``[DONE]``),
``malformed`` (non-JSON data), ``stall`` (stop sending, keep the connection open),
``usage_mismatch`` (usage claims one token more than the ids sent), ``no_usage``,
``engine_error`` (an in-band ``{"error": ...}`` event), ``single_token`` (one-token answer),
``shutdown`` (stop listening and drop connections after that request: connection refused after).

``usage_claim`` (not a fault: every request) makes ``usage.completion_tokens`` that value, any JSON
value, instead of the true count (an engine that lies about, or garbles, its token counts).
"""

from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ServerConfig:
    model: str = "tiny"
    owned_by: str = "vllm"
    output_tokens: int = 12
    ttft_s: float = 0.005
    tpot_s: float = 0.001
    tokens_per_event: int = 1
    fault: str | None = None
    fault_every: int = 0
    stall_s: float = 30.0
    usage_claim: Any = None


@dataclass
class ServerStats:
    completions: int = 0
    faults: int = 0
    bodies: list[dict[str, Any]] = field(default_factory=list)


class SSEServer:
    def __init__(self, config: ServerConfig) -> None:
        self.cfg = config
        self.stats = ServerStats()
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._server: asyncio.base_events.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._lock = threading.Lock()

    # -------------------------------------------------------------- lifecycle

    def start(self) -> SSEServer:
        self._thread.start()
        fut = asyncio.run_coroutine_threadsafe(self._start(), self._loop)
        fut.result(10)
        return self

    async def _start(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self._loop.is_closed():
            return
        asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    async def _shutdown(self) -> None:
        if self._server is not None:
            self._server.close()
        for w in list(self._writers):
            w.transport.abort()

    # -------------------------------------------------------------- HTTP

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            while True:
                line = await reader.readline()
                if not line:
                    return
                method, path, _ = line.decode().split(" ", 2)
                headers: dict[str, str] = {}
                while True:
                    h = await reader.readline()
                    if h in (b"\r\n", b"\n", b""):
                        break
                    k, _, v = h.decode().partition(":")
                    headers[k.strip().lower()] = v.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                if method == "GET" and path == "/v1/models":
                    await self._json(writer, 200, {"object": "list", "data": [{"id": self.cfg.model, "owned_by": self.cfg.owned_by}]})
                elif method == "GET" and path == "/version":
                    await self._json(writer, 200, {"version": "test-sse-server-1"})
                elif method == "POST" and path in ("/v1/completions", "/v1/chat/completions"):
                    keep = await self._completion(writer, json.loads(body), chat=path.endswith("chat/completions"))
                    if not keep:
                        return
                else:
                    await self._json(writer, 404, {"error": {"message": f"no route {path}"}})
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            self._writers.discard(writer)
            if not writer.transport.is_closing():
                writer.transport.abort()

    async def _json(self, writer: asyncio.StreamWriter, status: int, obj: Any) -> None:
        data = json.dumps(obj).encode()
        writer.write(
            f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n".encode() + data
        )
        await writer.drain()

    @staticmethod
    def _chunk(writer: asyncio.StreamWriter, payload: bytes) -> None:
        writer.write(f"{len(payload):x}\r\n".encode() + payload + b"\r\n")

    def _event(self, writer: asyncio.StreamWriter, obj: Any) -> None:
        self._chunk(writer, b"data: " + json.dumps(obj).encode() + b"\n\n")

    async def _completion(self, writer: asyncio.StreamWriter, req: dict[str, Any], chat: bool = False) -> bool:
        """Stream one completion; returns False when the connection must close."""
        with self._lock:
            self.stats.completions += 1
            n_req = self.stats.completions
            self.stats.bodies.append(req)
        cfg = self.cfg
        fault = cfg.fault if cfg.fault_every and n_req % cfg.fault_every == 0 else None
        if fault:
            self.stats.faults += 1
        if fault == "http500":
            await self._json(writer, 500, {"error": {"message": "injected failure"}})
            return True
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
        n = 1 if fault == "single_token" else min(cfg.output_tokens, int(req.get("max_tokens", cfg.output_tokens)))
        ids = [100 + k for k in range(n)]
        want_ids = bool(req.get("return_token_ids")) and not chat
        await asyncio.sleep(cfg.ttft_s)
        if chat:  # like vLLM: a role-only first delta with empty content
            role = {"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}
            self._event(writer, {"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [role]})
        sent = 0
        while sent < n:
            step = ids[sent : sent + cfg.tokens_per_event]
            text = "".join(f" w{t - 100}" for t in step)
            choice: dict[str, Any] = {"index": 0, "finish_reason": None}
            if chat:
                choice["delta"] = {"content": text}
            else:
                choice["text"] = text
            if want_ids:
                choice["token_ids"] = step
            self._event(writer, {"id": "cmpl-1", "object": "text_completion", "model": cfg.model, "choices": [choice]})
            await writer.drain()
            sent += len(step)
            if fault == "reset" and sent >= min(3, n):
                writer.transport.abort()
                return False
            if fault == "stall" and sent >= min(2, n):
                await asyncio.sleep(cfg.stall_s)
                return False
            if fault == "malformed" and sent >= min(2, n):
                self._chunk(writer, b"data: {this is not json\n\n")
            if fault == "engine_error" and sent >= min(2, n):
                self._event(writer, {"error": {"message": "injected engine error", "code": 500}})
                self._chunk(writer, b"data: [DONE]\n\n")
                self._chunk(writer, b"")
                return True
            if sent < n:
                await asyncio.sleep(cfg.tpot_s * len(step))
        final: dict[str, Any] = {"index": 0, "finish_reason": "length" if n == cfg.output_tokens else "stop"}
        if chat:
            final["delta"] = {}
        else:
            final["text"] = ""
        if want_ids:
            final["token_ids"] = []
        self._event(writer, {"id": "cmpl-1", "object": "text_completion", "model": cfg.model, "choices": [final]})
        if fault == "truncate":
            self._chunk(writer, b"")  # a clean end of body, but no usage and no [DONE]
            await writer.drain()
            return True
        if (req.get("stream_options") or {}).get("include_usage") and fault != "no_usage":
            claimed: Any = n + 1 if fault == "usage_mismatch" else n
            if cfg.usage_claim is not None:
                claimed = cfg.usage_claim
            total = 5 + claimed if type(claimed) is int else claimed
            usage = {"prompt_tokens": 5, "completion_tokens": claimed, "total_tokens": total}
            self._event(writer, {"id": "cmpl-1", "object": "text_completion", "model": cfg.model, "choices": [], "usage": usage})
        self._chunk(writer, b"data: [DONE]\n\n")
        self._chunk(writer, b"")
        await writer.drain()
        if fault == "shutdown":
            await self._shutdown()
            return False
        return True
