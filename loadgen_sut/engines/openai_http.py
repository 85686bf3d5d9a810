"""OpenAI-compatible streaming engine: vLLM, SGLang, TensorRT-LLM, TGI, llama.cpp ``llama-server``.

One request per sample to ``/v1/completions`` (or ``/v1/chat/completions``) with ``stream: true``
and ``stream_options.include_usage``; several endpoints (replicas) share the load (least
outstanding requests). Token accounting:

- ids: from the engine where it offers them (``return_token_ids``: vLLM; SGLang on ``/v1/completions`` in the
  releases that have it, a tokenizer still required for the older ones), else the served model's
  tokenizer re-tokenizes the text (flagged ``ids_from_engine=False``);
- count: ``usage.completion_tokens`` — never the number of SSE events (engines merge tokens into
  one event under load), checked per sample against what came: it must equal the number of the
  engine's ids; else be near the tokenizer's count of the text (``max(3, 10 %)``); else, with neither,
  stay under a plausibility bound (one token per UTF-8 byte of text, plus one per event, plus 2).
  A count that fails its check fails the sample (``token_mismatch``, ``implausible_token_count``, or
  ``bad_usage`` for a value that is not a non-negative integer); :meth:`OpenAIEngine.info` says which
  check the counts got (``token_counts``) and how many samples passed each (``token_count_checks``).

Start-up probes ``/v1/models`` (and ``/version``) within ``probe_timeout_s`` and 1 MiB per answer;
anything else than an OpenAI model list — no answer, not JSON, nested too deeply, wrong types — is an
:class:`EngineUnavailable` naming the endpoint, never a traceback.

Every failure (refused/reset connection, HTTP status, malformed or truncated stream, timeout,
missing usage) is a :class:`Failed` value; the SUT completes the sample and counts the failure.

The issue path does no encoding: :meth:`OpenAIEngine.prepare` turns every request of the test into
its JSON payload before LoadGen starts, and :meth:`OpenAIEngine.generate` writes the request before
it returns when a concurrency slot and a kept-alive connection are free.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter, deque
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from loadgen_sut.engines.base import (
    ChatMessage,
    DispatchCallback,
    Engine,
    EngineError,
    EngineInfo,
    EngineUnavailable,
    ErrorKind,
    Failed,
    Finished,
    FirstTokenCallback,
    GenerationEvent,
    GenerationRequest,
    single_event,
)
from loadgen_sut.engines.http_client import Endpoint, HttpClient
from loadgen_sut.engines.http_connection import HttpError
from loadgen_sut.engines.sse_protocol import PendingRequest, SSEStreamClient
from loadgen_sut.engines.tokenizers import Tokenizer


@dataclass(frozen=True)
class Flavor:
    """Request extensions an engine accepts beyond the OpenAI API."""

    name: str
    token_prompt: bool = False  # accepts "prompt": [ids]
    return_token_ids: bool = False  # "return_token_ids": true -> choices[].token_ids (vLLM; SGLang's recent releases)
    chat_token_ids: bool = True  # ... also on streamed chat completions (SGLang refuses it there)
    ids_certain: bool = True  # every release returns them (False: a tokenizer is still needed, older ones ignore it)
    ignore_eos: bool = False
    min_tokens: bool = False
    no_prompt_cache: bool = False  # llama-server: "cache_prompt": false for honest TTFT
    top_k_all: int | None = None  # the "top_k" value meaning disabled; None: top_k is not sent
    skip_special_tokens: bool = False  # accepts "skip_special_tokens": false (text keeps special tokens)


FLAVORS: dict[str, Flavor] = {
    "vllm": Flavor(
        "vllm", token_prompt=True, return_token_ids=True, ignore_eos=True, min_tokens=True, top_k_all=-1,
        skip_special_tokens=True,
    ),
    "sglang": Flavor(  # return_token_ids on /v1/completions since sgl-project/sglang#30917 (2026-07)
        "sglang", token_prompt=True, return_token_ids=True, chat_token_ids=False, ids_certain=False,
        ignore_eos=True, min_tokens=True, top_k_all=-1, skip_special_tokens=True,
    ),
    "trtllm": Flavor("trtllm", token_prompt=True, ignore_eos=True, min_tokens=True),
    "tgi": Flavor("tgi"),
    "llama-server": Flavor("llama-server", token_prompt=True, ignore_eos=True, no_prompt_cache=True),
    "generic": Flavor("generic"),
}
# /v1/models "owned_by" -> flavor, for --engine-flavor auto
_OWNED_BY = {"vllm": "vllm", "llamacpp": "llama-server", "sglang": "sglang", "tensorrt_llm": "trtllm", "tgi": "tgi"}


@dataclass(frozen=True)
class OpenAIConfig:
    endpoints: tuple[str, ...]
    model: str
    flavor: str = "auto"
    api: str = "completions"  # or "chat"
    request_timeout_s: float = 600.0
    idle_timeout_s: float = 60.0
    connect_timeout_s: float = 10.0
    api_key: str | None = None
    max_concurrency: int = 1024  # in-flight requests over all endpoints
    probe_timeout_s: float = 30.0  # each start-up probe (GET /v1/models) as a whole


class Slots:
    """A counting semaphore whose acquire can be tried synchronously (asyncio's cannot, without a task hop)."""

    def __init__(self, n: int) -> None:
        self.free = n
        self._waiters: deque[asyncio.Future[None]] = deque()

    def try_acquire(self) -> bool:
        if self.free > 0 and not self._waiters:
            self.free -= 1
            return True
        return False

    async def acquire(self) -> None:
        if self.try_acquire():
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():  # the slot was handed over: pass it on
                self.release()
            raise

    def release(self) -> None:
        while self._waiters:
            fut = self._waiters.popleft()
            if not fut.done():
                fut.set_result(None)  # the slot goes to this waiter
                return
        self.free += 1


class OpenAIEngine(Engine):
    def __init__(self, config: OpenAIConfig, tokenizer: Tokenizer | None = None) -> None:
        if not config.endpoints:
            raise ValueError("at least one --endpoint is needed")
        self._cfg = config
        self._tok = tokenizer
        self._eps = [Endpoint.parse(u) for u in config.endpoints]
        self._client = HttpClient(config.connect_timeout_s, config.api_key)  # /v1/models, /version
        self._sse = SSEStreamClient(
            config.connect_timeout_s, config.api_key, config.request_timeout_s, config.idle_timeout_s
        )  # completions
        self._flavor = FLAVORS.get(config.flavor, FLAVORS["generic"])
        self._rr = 0
        self._slots: Slots | None = None
        self._payloads: dict[int, tuple[GenerationRequest, str, bytes]] = {}  # sample index -> encoded request
        self._version: str | None = None
        self._owned_by: str | None = None
        self._count_checks: Counter[str] = Counter()  # Finished.count_check of this engine's samples

    # ---------------------------------------------------------------- lifecycle

    async def start(self) -> None:
        """Every endpoint must answer ``/v1/models`` and serve the model, before LoadGen starts."""
        self._slots = Slots(self._cfg.max_concurrency)
        for ep in self._eps:
            owned = await self._probe_models(ep)
            self._owned_by = self._owned_by or owned
            if self._version is None:
                try:  # optional: servers without /version are fine
                    _, vbody = await self._client.get_json(ep, "/version", timeout_s=min(5.0, self._cfg.probe_timeout_s))
                except HttpError:
                    vbody = None
                if isinstance(vbody, dict) and isinstance(vbody.get("version"), (str, int, float)):
                    self._version = str(vbody["version"])[:100] or None
        if self._cfg.flavor == "auto":
            self._flavor = FLAVORS[_OWNED_BY.get(self._owned_by or "", "generic")]
        elif self._cfg.flavor not in FLAVORS:
            raise EngineUnavailable(f"unknown engine flavor {self._cfg.flavor!r} (known: auto, {', '.join(FLAVORS)})")

    async def _probe_models(self, ep: Endpoint) -> str | None:
        """GET /v1/models: the model must be listed; returns its ``owned_by``. Raises EngineUnavailable."""
        where = f"{ep.url}/v1/models"
        try:
            _, body = await self._client.get_json(ep, "/v1/models", timeout_s=self._cfg.probe_timeout_s)
        except HttpError as exc:
            if exc.kind == "connect":
                raise EngineUnavailable(f"{ep.url}: cannot reach the engine ({exc}); is it running?") from exc
            hint = "; is this an OpenAI-compatible server?" if exc.kind in ("http_status", "not_json", "malformed") else ""
            raise EngineUnavailable(f"GET {where}: {exc}{hint}") from exc
        data = body.get("data") if isinstance(body, dict) else None
        if not isinstance(data, list):
            raise EngineUnavailable(
                f"GET {where}: not an OpenAI model list (expected {{\"data\": [{{\"id\": ...}}]}}, "
                f"got {_describe(body)}); is this an OpenAI-compatible server?"
            )
        entries = [m for m in data if isinstance(m, dict) and isinstance(m.get("id"), str)]
        model = next((m for m in entries if m["id"] == self._cfg.model), None)
        if model is None:
            served = [m["id"][:80] for m in entries[:10]]
            more = f" and {len(entries) - 10} more" if len(entries) > 10 else ""
            raise EngineUnavailable(
                f"{ep.url} does not serve model {self._cfg.model!r} (it serves: {', '.join(served) or 'nothing'}{more})"
            )
        owned = model.get("owned_by")
        return owned[:80] if isinstance(owned, str) and owned else None

    async def close(self) -> None:
        self._sse.close()
        self._client.close()

    def info(self) -> EngineInfo:
        return EngineInfo(
            kind="openai",
            name=self._flavor.name if self._flavor.name != "generic" else (self._owned_by or "openai-compatible"),
            version=self._version,
            model=self._cfg.model,
            tokenizer=self._tok.name if self._tok else None,
            endpoints=tuple(ep.url for ep in self._eps),
            parameters={
                "api": self._cfg.api,
                "flavor": self._flavor.name,
                "token_ids": self._ids_source(),
                "token_counts": self._count_rule(),
                "token_count_checks": ", ".join(f"{k}={v}" for k, v in sorted(self._count_checks.items())) or "none",
                "request_timeout_s": f"{self._cfg.request_timeout_s:g}",
                "idle_timeout_s": f"{self._cfg.idle_timeout_s:g}",
                "max_concurrency": str(self._cfg.max_concurrency),
            },
        )

    def _count_rule(self) -> str:
        """Where the token counts come from and what they are checked against (for the run record)."""
        if self._engine_ids():
            return "usage.completion_tokens, equal to the number of token ids the engine returned" + (
                "" if self._flavor.ids_certain else "; where it returns none, as for a tokenizer's count (below)"
            )
        if self._tok is not None:
            return (
                "usage.completion_tokens, within max(3, 10%) of the tokenizer's count of the streamed text "
                "(the engine returns no token ids)"
            )
        return (
            "usage.completion_tokens, unverified: only a plausibility bound (at most one token per UTF-8 byte "
            "of text, plus one per event, plus 2); pass --tokenizer to check counts"
        )

    def _engine_ids(self) -> bool:
        """Whether the requests ask for the engine's token ids (``return_token_ids``)."""
        return self._flavor.return_token_ids and (self._cfg.api != "chat" or self._flavor.chat_token_ids)

    def _ids_source(self) -> str:
        fallback = "tokenizer" if self._tok else "none"
        if not self._engine_ids():
            return fallback
        return "engine" if self._flavor.ids_certain else f"engine where the release returns them, else {fallback}"

    @property
    def ids_available(self) -> bool:
        return (self._engine_ids() and self._flavor.ids_certain) or self._tok is not None

    def detokenize(self, token_ids: tuple[int, ...] | list[int]) -> str:
        if self._tok is None:
            raise NotImplementedError("--tokenizer DIR is needed to detokenize outputs for accuracy")
        return self._tok.decode(token_ids)

    # ---------------------------------------------------------------- requests

    def _pick(self) -> Endpoint:
        best = min(ep.outstanding for ep in self._eps)
        n = len(self._eps)
        for i in range(n):
            ep = self._eps[(self._rr + i) % n]
            if ep.outstanding == best:
                self._rr = (self._rr + i + 1) % n
                return ep
        return self._eps[0]  # pragma: no cover

    def _body(self, req: GenerationRequest) -> tuple[str, dict[str, Any]]:
        f = self._flavor
        body: dict[str, Any] = {
            "model": self._cfg.model,
            "max_tokens": req.max_new_tokens,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if req.greedy:
            body["temperature"] = 0.0
            body["top_p"] = 1.0
        else:  # the round's sampling (loadgen_sut.generation); what is None stays the engine's default
            if req.temperature is not None:
                body["temperature"] = req.temperature
            if req.top_p is not None:
                body["top_p"] = req.top_p
            if req.top_k is not None and f.top_k_all is not None:
                body["top_k"] = f.top_k_all if req.top_k == 0 else req.top_k
        if req.skip_special_tokens is False and f.skip_special_tokens:
            body["skip_special_tokens"] = False
        if req.ignore_eos and f.ignore_eos:
            body["ignore_eos"] = True
        if req.min_new_tokens and f.min_tokens:
            body["min_tokens"] = req.min_new_tokens
        if self._engine_ids():
            body["return_token_ids"] = True
        if f.no_prompt_cache:
            body["cache_prompt"] = False
        if req.messages is not None:  # a chat with content parts (qwen3-vl: text and an inline image)
            if self._cfg.api != "chat":
                raise ValueError(
                    f"sample {req.sample_index} is a chat with content parts (e.g. an image): only the chat API "
                    "takes it; run with --api chat"
                )
            body["messages"] = [_inline_only(m, req.sample_index) for m in req.messages]
            return "/v1/chat/completions", body
        if self._cfg.api == "chat":
            text = self._prompt_text(req)
            body["messages"] = [{"role": "user", "content": text}]
            return "/v1/chat/completions", body
        if req.input_ids is not None and f.token_prompt:
            body["prompt"] = list(req.input_ids)
        else:
            body["prompt"] = self._prompt_text(req)
        return "/v1/completions", body

    def _prompt_text(self, req: GenerationRequest) -> str:
        if req.prompt is not None:
            return req.prompt
        if req.input_ids is not None and self._tok is not None:
            return self._tok.decode(req.input_ids)
        raise ValueError(f"sample {req.sample_index}: no prompt text, and no tokenizer to decode its input ids")

    def prepare(self, requests: Mapping[int, GenerationRequest]) -> None:
        """Encode every request's payload now (after ``start``: the flavor decides the body)."""
        for req in requests.values():
            try:
                path, body = self._body(req)
            except ValueError:
                continue  # generate reports it for that sample
            self._payloads[req.sample_index] = (req, path, SSEStreamClient.encode_body(body))

    def _encoded(self, req: GenerationRequest) -> tuple[str, bytes]:
        hit = self._payloads.get(req.sample_index)
        if hit is not None and hit[0] is req:
            return hit[1], hit[2]
        path, body = self._body(req)
        return path, SSEStreamClient.encode_body(body)

    def generate(
        self, request: GenerationRequest, on_first_token: FirstTokenCallback | None = None
    ) -> AsyncIterator[GenerationEvent]:
        """Sends the request before returning when a slot and a kept-alive connection are free."""
        return self.generate_timed(request, on_first_token)

    def generate_timed(
        self,
        request: GenerationRequest,
        on_first_token: FirstTokenCallback | None = None,
        on_dispatch: DispatchCallback | None = None,
    ) -> AsyncIterator[GenerationEvent]:
        """:meth:`generate`; ``on_dispatch()`` right after the request is written to its connection."""
        assert self._slots is not None, "start() first"
        try:
            path, payload = self._encoded(request)
        except ValueError as exc:
            return single_event(Failed(error=EngineError(kind=ErrorKind.ENGINE, message=str(exc))))
        if self._slots.try_acquire():
            return self._follow(self._begin(path, payload, on_first_token, on_dispatch))
        return self._queued(path, payload, on_first_token, on_dispatch)

    def _begin(
        self,
        path: str,
        payload: bytes,
        on_first_token: FirstTokenCallback | None,
        on_dispatch: DispatchCallback | None = None,
    ) -> PendingRequest:
        ep = self._pick()
        ep.outstanding += 1
        return self._sse.begin(
            ep,
            path,
            payload,
            chat=self._cfg.api == "chat",
            engine_ids=self._engine_ids(),
            tokenizer=self._tok,
            on_first=on_first_token,
            on_sent=on_dispatch,
        )

    async def _queued(
        self,
        path: str,
        payload: bytes,
        on_first_token: FirstTokenCallback | None,
        on_dispatch: DispatchCallback | None = None,
    ) -> AsyncIterator[GenerationEvent]:
        assert self._slots is not None
        await self._slots.acquire()
        async for ev in self._follow(self._begin(path, payload, on_first_token, on_dispatch)):
            yield ev

    async def _follow(self, pending: PendingRequest) -> AsyncIterator[GenerationEvent]:
        assert self._slots is not None
        try:
            async for ev in self._sse.follow(pending):
                if isinstance(ev, Finished):
                    self._count_checks[ev.count_check] += 1
                yield ev
        finally:
            pending.ep.outstanding -= 1
            self._slots.release()


def _inline_only(message: ChatMessage, sample_index: int) -> dict[str, Any]:
    """The message as the chat API takes it; an image that is not inline (a ``data:`` URL) is refused: the
    engine would fetch it (a network request of its own, outside the measured data set)."""
    if not isinstance(message.content, str):
        for part in message.content:
            if part.type == "image_url" and not (part.image_url or "").startswith("data:"):
                raise ValueError(
                    f"sample {sample_index}: image {(part.image_url or '')[:80]!r} is not inline data: never sent "
                    "for the engine to fetch"
                )
    return message.as_openai()


def _describe(body: Any) -> str:
    """A short description of an unexpected JSON value, for a message."""
    if isinstance(body, dict):
        if "data" in body:
            return f"an object whose 'data' is a JSON {_json_type(body['data'])}"
        keys = ", ".join(repr(str(k)[:40]) for k in list(body)[:8])
        return f"an object with keys {keys}" if keys else "an empty object"
    return f"a JSON {_json_type(body)}"


def _json_type(v: Any) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", int: "number", float: "number"}
    return "null" if v is None else names.get(type(v), type(v).__name__)


def wait_for_endpoints(urls: Sequence[str], timeout_s: float) -> None:
    """Block until every URL answers ``/v1/models`` (for scripts that start engines)."""

    async def probe() -> bool:
        client = HttpClient(connect_timeout_s=2.0)
        try:
            for u in urls:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                try:  # each answer bounded in time: a server that accepts and hangs cannot hold this past the deadline
                    _, body = await client.get_json(Endpoint.parse(u), "/v1/models", timeout_s=min(5.0, left))
                except HttpError:
                    return False
                if not isinstance(body, dict):
                    return False
            return True
        finally:
            client.close()

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if asyncio.run(probe()):
            return
        time.sleep(min(0.5, max(0.0, deadline - time.monotonic())))
    raise EngineUnavailable(f"engines not ready after {timeout_s:g} s: {', '.join(urls)}")
