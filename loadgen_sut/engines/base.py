"""The one small interface every engine implements.

An engine turns one :class:`GenerationRequest` into an async stream of events:

- at most one :class:`FirstToken` (the moment the first output token is known, with its ids);
- then exactly one terminal event: :class:`Finished` (all output token ids and the engine's own
  token count) or :class:`Failed` (an :class:`EngineError` value — never an empty "answer").

The SUT (``loadgen_sut.sut``) turns these into LoadGen's FirstTokenComplete/QuerySamplesComplete.
Timing is measured by LoadGen, not by engines. An engine may also call ``on_first_token`` the moment
it knows the first token (from inside its I/O callback), so that LoadGen's clock stops without
waiting for the sample's task to be scheduled; the SUT reports whichever comes first, once.
"""

from __future__ import annotations

import abc
from collections.abc import AsyncIterator, Callable, Mapping
from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ContentPart(_Frozen):
    """One part of a chat message's content, as the OpenAI chat API takes it: text, or an image given inline
    as a ``data:`` URL (never a link to fetch: the data-set loaders refuse those)."""

    type: Literal["text", "image_url"]
    text: str | None = None
    image_url: str | None = None  # "data:image/<format>;base64,..."

    def as_openai(self) -> dict[str, Any]:
        if self.type == "text":
            return {"type": "text", "text": self.text or ""}
        return {"type": "image_url", "image_url": {"url": self.image_url or ""}}


class ChatMessage(_Frozen):
    """One chat message: plain text content, or content parts (text and inline images)."""

    role: Literal["system", "user", "assistant"]
    content: str | tuple[ContentPart, ...]

    def as_openai(self) -> dict[str, Any]:
        if isinstance(self.content, str):
            return {"role": self.role, "content": self.content}
        return {"role": self.role, "content": [p.as_openai() for p in self.content]}


class GenerationRequest(_Frozen):
    """One sample to generate for. Either ``input_ids``, ``prompt`` or ``messages`` is set (ids preferred;
    ``messages``, a chat with content parts such as inline images, go to a chat API only)."""

    sample_index: int
    input_ids: tuple[int, ...] | None = None
    prompt: str | None = None
    messages: tuple[ChatMessage, ...] | None = None
    max_new_tokens: int
    min_new_tokens: int | None = None
    greedy: bool = True
    ignore_eos: bool = False
    # sampling (greedy=False), as the round fixes it (loadgen_sut.generation); None: not sent (the engine's default)
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None  # 0: disabled (every token considered)
    skip_special_tokens: bool | None = None  # False: the output text keeps special tokens (gpt-oss harmony markers)


class FirstToken(_Frozen):
    """The first output token(s) are known. ``token_ids`` may hold several when an engine merges."""

    token_ids: tuple[int, ...]
    ids_from_engine: bool = True


CountCheck = Literal["engine_ids", "tokenizer", "plausibility"]
"""How a sample's ``n_tokens`` was checked: it equals the number of token ids the engine returned
(``engine_ids``); it agrees with the served tokenizer's count of the streamed text within a tolerance
(``tokenizer``); or, with neither, it passed only a plausibility bound against the text's size
(``plausibility``: at most about one token per UTF-8 byte)."""


class Finished(_Frozen):
    """Generation ended. ``n_tokens`` is the engine's own count (``usage``), ids the full output;
    ``count_check`` says what ``n_tokens`` was checked against. ``text``: the output text as the engine gave it
    (a chat API's ``content``, what a text response hands LoadGen, see ``Benchmark.accuracy_log_format``); None
    where the engine has none of its own (the SUT then decodes the ids with the engine's tokenizer)."""

    token_ids: tuple[int, ...]
    n_tokens: int
    ids_from_engine: bool = True
    finish_reason: str | None = None
    count_check: CountCheck = "engine_ids"
    text: str | None = None


class ErrorKind(str, Enum):
    CONNECT = "connect"  # refused / unreachable
    RESET = "reset"  # connection dropped mid-response
    HTTP_STATUS = "http_status"  # 4xx / 5xx
    TRUNCATED = "truncated"  # stream ended without a terminal event
    MALFORMED = "malformed"  # unparseable SSE / JSON / HTTP
    TIMEOUT = "timeout"
    TOKEN_MISMATCH = "token_mismatch"  # usage count != ids returned, or far from the tokenizer's count of the text
    MISSING_USAGE = "missing_usage"  # no token count from the engine
    BAD_USAGE = "bad_usage"  # usage.completion_tokens is not a non-negative integer
    IMPLAUSIBLE_COUNT = "implausible_token_count"  # usage claims more tokens than the text can hold
    TOO_LARGE = "stream_too_large"  # one SSE event or the whole response over the client's size cap
    EMPTY = "empty"  # zero output tokens
    ENGINE = "engine"  # the engine reported an error in-band / crashed


class EngineError(_Frozen):
    kind: ErrorKind
    message: str
    endpoint: str | None = None


class Failed(_Frozen):
    error: EngineError
    partial_token_ids: tuple[int, ...] = ()


GenerationEvent = FirstToken | Finished | Failed

FirstTokenCallback = Callable[[tuple[int, ...]], None]
"""Called at most once, on the SUT's loop thread, with the first output token id(s)."""

DispatchCallback = Callable[[], None]
"""Called on the SUT's loop thread right after the request's bytes were handed to the socket (again, should the
engine re-send it on a fresh connection: the last call is the dispatch that was answered)."""


async def single_event(event: GenerationEvent) -> AsyncIterator[GenerationEvent]:
    """An event stream of one event (a request that failed before it started)."""
    yield event


class EngineInfo(_Frozen):
    """What a run record says about the engine."""

    kind: str  # "openai", "transformers", "simulated"
    name: str  # e.g. "vllm", "llama-server", "transformers", "simulated"
    version: str | None = None
    model: str
    model_revision: str | None = None
    precision: str | None = None
    tokenizer: str | None = None
    endpoints: tuple[str, ...] = ()
    simulated: bool = False
    parameters: dict[str, str] = Field(default_factory=dict)


class EngineUnavailable(Exception):
    """The engine cannot serve (raised by ``start`` before LoadGen starts)."""


class Engine(abc.ABC):
    """Lifecycle: ``await start()`` (raises EngineUnavailable), ``generate`` many times, ``await close()``.

    ``generate`` is called on the SUT's event-loop thread; it must not block that loop. It may do
    its first, non-blocking step (send the request) when it is called, before the returned iterator
    is first awaited.
    """

    @abc.abstractmethod
    async def start(self) -> None: ...

    @abc.abstractmethod
    def generate(
        self, request: GenerationRequest, on_first_token: FirstTokenCallback | None = None
    ) -> AsyncIterator[GenerationEvent]: ...

    def generate_timed(
        self,
        request: GenerationRequest,
        on_first_token: FirstTokenCallback | None = None,
        on_dispatch: DispatchCallback | None = None,
    ) -> AsyncIterator[GenerationEvent]:
        """:meth:`generate`, calling ``on_dispatch()`` when the request is handed to the socket (what the SUT's
        timeline calls ``dispatched_ns``). In-process engines have no socket: this default never calls it."""
        return self.generate(request, on_first_token)

    def prepare(self, requests: Mapping[int, GenerationRequest]) -> None:
        """Called once before LoadGen starts with every request of the test (keyed by sample position):
        an engine can encode them now instead of on the issue path. The default does nothing."""
        return None

    @abc.abstractmethod
    async def close(self) -> None: ...

    @abc.abstractmethod
    def info(self) -> EngineInfo: ...

    @property
    def ids_available(self) -> bool:
        """Whether outputs come with token ids (needed by accuracy and TEST06 runs)."""
        return True

    def detokenize(self, token_ids: tuple[int, ...] | list[int]) -> str:
        """Text of output ids, for accuracy scoring; engines without a tokenizer raise."""
        raise NotImplementedError(f"{type(self).__name__} has no tokenizer to detokenize with")
