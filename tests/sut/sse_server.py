"""The SUT tests' local OpenAI-compatible streaming engine: ``bench/token_server.py`` in a thread, answering with
countable tokens and controllable faults.

The serving side (HTTP/1.1 with keep-alive, chunked SSE, ``/v1/models``, ``/version``, timing, threads) is
the token server's; this module only says what a streamed answer writes (:meth:`SSEServer.stream_plan`),
like vLLM (``stream_options.include_usage`` and vLLM's ``return_token_ids``). Output: word ``w<k>`` as token
id ``100 + k``; ``tokens_per_event`` > 1 merges tokens into one event as vLLM does under load.

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

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from token_server import (  # bench/ is not a package: on sys.path above
    ABORT,
    FINISH,
    HOLD,
    SHUTDOWN,
    STREAM_HEAD,
    ServerThread,
    StreamPlan,
    Timing,
    TokenServer,
    chunk,
    response,
    sse_event,
)

MALFORMED_EVENT = chunk(b"data: {this is not json\n\n")
DONE_AND_END = chunk(b"data: [DONE]\n\n") + chunk(b"")


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


class SSEServer(TokenServer):
    """``start()`` it, use ``url`` (or ``port``), read ``stats``, ``stop()`` it."""

    def __init__(self, config: ServerConfig) -> None:
        timing = Timing(ttft_ms=config.ttft_s * 1000.0, tpot_ms=config.tpot_s * 1000.0, tokens=config.output_tokens)
        super().__init__(timing, config.model, config.owned_by, max_records=10_000, version="test-sse-server-1")
        self.cfg = config
        self.gap_s = config.tpot_s * config.tokens_per_event  # one event of tokens_per_event tokens, then the next
        self.stats = ServerStats()
        self._thread = ServerThread(self)

    # -------------------------------------------------------------- lifecycle

    def start(self) -> SSEServer:
        self._thread.start()
        return self

    @property
    def port(self) -> int:
        return self._thread.port

    @property
    def url(self) -> str:
        return self._thread.url

    def stop(self) -> None:
        self._thread.stop()

    # -------------------------------------------------------------- answers

    def count(self, request: dict[str, Any]) -> None:
        """Every completion request is counted and its body kept (on the server's loop thread)."""
        self.stats.completions += 1
        self.stats.bodies.append(request)

    def stream_plan(self, request: dict[str, Any], chat: bool, seq: int, prompt_tokens: int) -> StreamPlan:
        self.count(request)
        cfg = self.cfg
        fault = cfg.fault if cfg.fault_every and seq % cfg.fault_every == 0 else None
        if fault:
            self.stats.faults += 1
        if fault == "http500":
            body = json.dumps({"error": {"message": "injected failure"}}).encode()
            return StreamPlan(response("500 Internal Server Error", body), [], 0)
        n = 1 if fault == "single_token" else min(cfg.output_tokens, int(request.get("max_tokens", cfg.output_tokens)))
        ids = [100 + k for k in range(n)]
        want_ids = bool(request.get("return_token_ids")) and not chat
        writes: list[bytes] = []
        pending = b""  # goes out with the first token
        if chat:  # like vLLM: a role-only first delta with empty content
            role = {"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}
            pending = sse_event({"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [role]})
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
            out = pending + sse_event({"id": "cmpl-1", "object": "text_completion", "model": cfg.model, "choices": [choice]})
            pending = b""
            sent += len(step)
            if fault == "reset" and sent >= min(3, n):
                return StreamPlan(STREAM_HEAD, [*writes, out], n, ABORT)
            if fault == "stall" and sent >= min(2, n):
                return StreamPlan(STREAM_HEAD, [*writes, out], n, HOLD, hold_s=cfg.stall_s)
            if fault == "malformed" and sent >= min(2, n):
                out += MALFORMED_EVENT
            if fault == "engine_error" and sent >= min(2, n):
                error = sse_event({"error": {"message": "injected engine error", "code": 500}})
                return StreamPlan(STREAM_HEAD, [*writes, out + error + DONE_AND_END], n)
            writes.append(out)
        # right after the last token: the final event, then usage, [DONE] and the end of the body
        final: dict[str, Any] = {"index": 0, "finish_reason": "length" if n == cfg.output_tokens else "stop"}
        if chat:
            final["delta"] = {}
        else:
            final["text"] = ""
        if want_ids:
            final["token_ids"] = []
        tail = pending + sse_event({"id": "cmpl-1", "object": "text_completion", "model": cfg.model, "choices": [final]})
        if fault == "truncate":
            tail += chunk(b"")  # a clean end of body, but no usage and no [DONE]
        else:
            if (request.get("stream_options") or {}).get("include_usage") and fault != "no_usage":
                claimed: Any = n + 1 if fault == "usage_mismatch" else n
                if cfg.usage_claim is not None:
                    claimed = cfg.usage_claim
                total = 5 + claimed if type(claimed) is int else claimed
                usage = {"prompt_tokens": 5, "completion_tokens": claimed, "total_tokens": total}
                tail += sse_event(
                    {"id": "cmpl-1", "object": "text_completion", "model": cfg.model, "choices": [], "usage": usage}
                )
            tail += DONE_AND_END
        if writes:
            writes[-1] += tail
        else:
            writes.append(tail)
        return StreamPlan(STREAM_HEAD, writes, n, SHUTDOWN if fault == "shutdown" else FINISH)

