"""Token counts are checked against what the engine streamed, per sample (loadgen_sut.engines.sse_protocol).

- engine token ids: ``usage`` must equal their number;
- a tokenizer, text only: ``usage`` within ``max(3, 10 %)`` of the tokenizer's count of the text
  (plus one per text-less event above it);
- neither: ``usage`` at most ``bytes(text) + events + 2`` (a token is at least one byte of text, or an
  event of its own), else ``implausible_token_count``;
- ``usage.completion_tokens`` that is not a non-negative integer is ``bad_usage``, never an exception.

The issue's case: a text-only stream whose usage claims 5,000 tokens for two characters ran VALID.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from loopback_server import LoopbackServer
from sut_helpers import http_engine, start_server, trial

from loadgen_sut.engines.base import ErrorKind, Failed, Finished, GenerationEvent
from loadgen_sut.engines.sse_protocol import SSEStreamClient, retokenize_tolerance
from loadgen_sut.engines.tokenizers import Tokenizer, WordTokenizer
from loadgen_sut.settings import RunMode

HEAD_CHUNKED = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"

Step = bytes | float | None  # bytes to send, seconds to wait, None: close the connection


def event(obj: Any) -> bytes:
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


def chunk(payload: bytes) -> bytes:
    return f"{len(payload):x}\r\n".encode() + payload + b"\r\n"


def chunked(events: Sequence[bytes]) -> bytes:
    return HEAD_CHUNKED + b"".join(chunk(e) for e in events) + b"0\r\n\r\n"


def text_event(text: str, final: bool = False, ids: list[Any] | None = None) -> bytes:
    choice: dict[str, Any] = {"index": 0, "text": text, "finish_reason": "length" if final else None}
    if ids is not None:
        choice["token_ids"] = ids
    return event({"choices": [choice]})


def usage_event(n: Any) -> bytes:
    return event({"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": n}})


class Scripted(LoopbackServer):
    """A loopback server answering every request with the same bytes (steps)."""

    def __init__(self, steps: Sequence[Step]) -> None:
        super().__init__()
        self.steps = steps

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(h.split(b":", 1)[1]) for h in head.split(b"\r\n") if h.lower().startswith(b"content-length:")
                )
                await reader.readexactly(length)
                for step in self.steps:
                    if step is None:
                        writer.transport.abort()
                        return
                    if isinstance(step, float):
                        await asyncio.sleep(step)
                    else:
                        writer.write(step)
                        await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.transport.abort()


async def collect(
    steps: Sequence[Step],
    *,
    engine_ids: bool = False,
    chat: bool = False,
    tokenizer: Tokenizer | None = None,
    client: SSEStreamClient | None = None,
) -> list[GenerationEvent]:
    async with Scripted(steps) as server:
        c = client or SSEStreamClient(idle_timeout_s=5.0)
        path = "/v1/chat/completions" if chat else "/v1/completions"
        events = [
            ev
            async for ev in c.stream(
                server.endpoint, path, {"model": "m", "prompt": "hi"}, chat=chat, engine_ids=engine_ids, tokenizer=tokenizer
            )
        ]
        if client is None:
            c.close()
        return events


def run(fn: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(fn(), 30))


def last(events: list[GenerationEvent]) -> Finished | Failed:
    ev = events[-1]
    assert isinstance(ev, Finished | Failed), events
    return ev


def failed(events: list[GenerationEvent], kind: ErrorKind, fragment: str = "") -> Failed:
    ev = last(events)
    assert isinstance(ev, Failed), events
    assert ev.error.kind is kind, ev.error
    assert fragment in ev.error.message, ev.error.message
    return ev


def text_stream(texts: Sequence[str], usage: Any) -> list[Step]:
    evs = [text_event(t, final=i == len(texts) - 1) for i, t in enumerate(texts)]
    return [chunked([*evs, usage_event(usage), b"data: [DONE]\n\n"])]


# ------------------------------------------------------------------ no ids, no tokenizer: plausibility bound


def test_issue_case_5000_tokens_for_two_characters_is_implausible() -> None:
    async def main() -> None:
        events = await collect(text_stream(["h", "i"], 5000))
        ev = failed(events, ErrorKind.IMPLAUSIBLE_COUNT, "usage says 5000 completion tokens for 2 bytes of text in 2 events")
        assert "at most 6" in ev.error.message and "--tokenizer" in ev.error.message
        assert ev.error.kind.value == "implausible_token_count"

    run(main)


def test_plausibility_bound_is_bytes_plus_events_plus_two() -> None:
    texts = [" w0", " w1", " ü"]  # 3 + 3 + 3 UTF-8 bytes ("ü" is two), 3 events
    bound = 9 + 3 + 2

    async def main() -> None:
        ok = last(await collect(text_stream(texts, bound)))
        assert isinstance(ok, Finished) and ok.n_tokens == bound and ok.count_check == "plausibility"
        assert ok.ids_from_engine is False and ok.token_ids == ()
        failed(await collect(text_stream(texts, bound + 1)), ErrorKind.IMPLAUSIBLE_COUNT, f"at most {bound}")

    run(main)


def test_honest_text_only_counts_pass_the_bound() -> None:
    async def main() -> None:
        texts = [f" word{k}" for k in range(50)]  # 50 tokens, 6-7 bytes each
        ev = last(await collect(text_stream(texts, 50)))
        assert isinstance(ev, Finished) and ev.n_tokens == 50 and ev.count_check == "plausibility"

    run(main)


def test_special_tokens_in_events_without_text_stay_plausible() -> None:
    """Tokens that leave no text (special tokens) arrive in events of their own: each event may be a token."""

    async def main() -> None:
        evs = [text_event("ok")] + [text_event("") for _ in range(20)] + [text_event("", final=True)]
        ev = last(await collect([chunked([*evs, usage_event(23), b"data: [DONE]\n\n"])]))
        assert isinstance(ev, Finished) and ev.n_tokens == 23 and ev.count_check == "plausibility"  # 2 + 22 + 2 > 23

    run(main)


def test_chat_reasoning_text_counts_as_generated_text() -> None:
    """Reasoning parsers stream thinking as ``reasoning_content``: those tokens are in usage, and count."""

    def delta(d: dict[str, Any], final: bool = False) -> bytes:
        return event({"choices": [{"index": 0, "delta": d, "finish_reason": "stop" if final else None}]})

    thinking = [delta({"reasoning_content": " thinking hard about it"}) for _ in range(5)]  # 5 x 23 bytes
    steps = [chunked([*thinking, delta({"content": "42"}, final=True), usage_event(60), b"data: [DONE]\n\n"])]

    async def main() -> None:
        ev = last(await collect(steps, chat=True))
        assert isinstance(ev, Finished) and ev.n_tokens == 60 and ev.count_check == "plausibility"

    run(main)


# ------------------------------------------------------------------ a tokenizer, text only


def _word_tok() -> WordTokenizer:
    return WordTokenizer([" ".join(f"w{k}" for k in range(200))])


@pytest.mark.parametrize(
    ("n_words", "usage", "ok"),
    [
        pytest.param(12, 12, True, id="exact"),
        pytest.param(12, 12 + 3 + 1, True, id="plus-tolerance-plus-one-blank-event"),
        pytest.param(12, 12 + 3 + 2, False, id="above-tolerance"),
        pytest.param(12, 12 - 3, True, id="minus-tolerance"),
        pytest.param(12, 12 - 4, False, id="below-tolerance"),
        pytest.param(100, 110 + 1, True, id="ten-percent-of-100"),
        pytest.param(100, 112, False, id="over-ten-percent-of-100"),
        pytest.param(1, 5000, False, id="issue-case-with-tokenizer"),
    ],
)
def test_tokenizer_count_tolerance(n_words: int, usage: int, ok: bool) -> None:
    # n_words text events plus the final event without text (one blank event)
    evs = [text_event(f" w{k}") for k in range(n_words)] + [text_event("", final=True)]
    steps: list[Step] = [chunked([*evs, usage_event(usage), b"data: [DONE]\n\n"])]

    async def main() -> None:
        events = await collect(steps, tokenizer=_word_tok())
        if ok:
            ev = last(events)
            assert isinstance(ev, Finished), events
            assert ev.count_check == "tokenizer" and ev.n_tokens == usage
            assert ev.token_ids == tuple(range(4, 4 + n_words))  # the word tokenizer's ids
        else:
            ev = failed(events, ErrorKind.TOKEN_MISMATCH, f"but the tokenizer counts {n_words} in the streamed text")
            tol = retokenize_tolerance(n_words)
            assert f"allowed: {n_words} ± {tol} + 1 text-less events" in ev.error.message
            assert len(ev.partial_token_ids) == n_words  # what the tokenizer made of the text

    run(main)


def test_tokenizer_tolerance_rule() -> None:
    assert [retokenize_tolerance(n) for n in (0, 1, 29, 30, 31, 100, 1000)] == [3, 3, 3, 3, 4, 10, 100]


def test_a_tokenizer_that_cannot_encode_the_text_fails_the_sample() -> None:
    class Broken:
        name = "broken"
        eos_token_id = None

        def encode(self, text: str) -> list[int]:
            raise TypeError("TextEncodeInput must be Union[...]")

        def decode(self, token_ids: Sequence[int]) -> str:
            return ""

    async def main() -> None:
        failed(await collect(text_stream(["a"], 1), tokenizer=Broken()), ErrorKind.MALFORMED, "cannot encode")

    run(main)


# ------------------------------------------------------------------ engine ids


def test_engine_ids_are_the_check_when_present() -> None:
    evs = [text_event(" a", ids=[7]), text_event(" b", final=True, ids=[8])]

    async def main() -> None:
        ev = last(await collect([chunked([*evs, usage_event(2), b"data: [DONE]\n\n"])], engine_ids=True))
        assert isinstance(ev, Finished) and ev.count_check == "engine_ids" and ev.token_ids == (7, 8)
        bad = await collect([chunked([*evs, usage_event(5000), b"data: [DONE]\n\n"])], engine_ids=True)
        failed(bad, ErrorKind.TOKEN_MISMATCH, "engine returned 2 token ids but usage says 5000")

    run(main)


@pytest.mark.parametrize("bad_id", [-1, 1 << 31, True, "5", 1.5, None, [1]])
def test_token_ids_outside_int32_or_not_integers_are_malformed(bad_id: Any) -> None:
    evs = [text_event(" a", final=True, ids=[7, bad_id])]

    async def main() -> None:
        events = await collect([chunked([*evs, usage_event(2), b"data: [DONE]\n\n"])], engine_ids=True)
        failed(events, ErrorKind.MALFORMED, "token_ids are not integers in [0, 2^31)")

    run(main)


# ------------------------------------------------------------------ usage values


@pytest.mark.parametrize(
    "value",
    [True, False, 3.0, 2.5, "3", -1, 1 << 63, 10**30, [3], {"n": 3}],
    ids=lambda v: f"{type(v).__name__}-{str(v)[:12]}",
)
@pytest.mark.parametrize("engine_ids", [False, True], ids=["text-only", "engine-ids"])
def test_usage_that_is_not_a_non_negative_integer_is_bad_usage(value: Any, engine_ids: bool) -> None:
    evs = [text_event(" a", ids=[7]), text_event(" b", final=True, ids=[8])]

    async def main() -> None:
        events = await collect([chunked([*evs, usage_event(value), b"data: [DONE]\n\n"])], engine_ids=engine_ids)
        ev = failed(events, ErrorKind.BAD_USAGE, "usage.completion_tokens is not a non-negative integer")
        assert ev.error.kind.value == "bad_usage"

    run(main)


def test_usage_that_is_not_an_object_is_bad_usage_and_null_usage_is_skipped() -> None:
    async def main() -> None:
        bad = [chunked([text_event("a", final=True), event({"choices": [], "usage": "lots"}), b"data: [DONE]\n\n"])]
        failed(await collect(bad), ErrorKind.BAD_USAGE, "usage is not a JSON object")
        # usage: null on every event and a usage without completion_tokens are "not yet": the last real one counts
        nulls = [
            event({"choices": [{"index": 0, "text": "ab", "finish_reason": None}], "usage": None}),
            event({"choices": [{"index": 0, "text": "", "finish_reason": "stop"}], "usage": {"prompt_tokens": 1}}),
            usage_event(2),
            b"data: [DONE]\n\n",
        ]
        ev = last(await collect([chunked(nulls)]))
        assert isinstance(ev, Finished) and ev.n_tokens == 2

    run(main)


def test_zero_usage_is_still_empty() -> None:
    async def main() -> None:
        failed(await collect(text_stream([""], 0)), ErrorKind.EMPTY, "no tokens")

    run(main)


# ------------------------------------------------------------------ real LoadGen runs


def test_run_with_inflated_usage_is_invalid_and_says_why(tmp_path: Path) -> None:
    """The issue's run: text-only engine, usage 5,000 for a 3-byte answer; it was VALID with 99,500 tokens/s."""
    server = start_server(output_tokens=1, usage_claim=5000)
    try:
        out = trial(tmp_path, http_engine(server.url, flavor="generic"), scenario="Offline")
    finally:
        server.stop()
    perf = out.record.tests[0]
    assert perf.status == "finished" and perf.sut.issued == perf.sut.completed > 0
    assert perf.sut.failures_by_kind == {"implausible_token_count": perf.sut.completed}
    assert perf.sut.output_tokens == 0  # no inflated count reached the totals
    assert "usage says 5000 completion tokens for 3 bytes" in perf.sut.failure_examples[0]["message"]
    assert out.record.verdict.status == "INVALID"
    assert out.record.engine is not None
    params = out.record.engine.parameters
    assert params["token_counts"].startswith("usage.completion_tokens, unverified: only a plausibility bound")
    assert params["token_count_checks"] == "none"


def test_honest_text_only_run_says_its_counts_are_only_bounded(tmp_path: Path) -> None:
    server = start_server(output_tokens=12, tokens_per_event=3)
    try:
        out = trial(tmp_path, http_engine(server.url, flavor="generic"), scenario="Offline")
    finally:
        server.stop()
    perf = out.record.tests[0]
    assert perf.sut.failed == 0 and perf.loadgen is not None and perf.loadgen.result_validity == "VALID"
    assert out.record.engine is not None
    assert out.record.engine.parameters["token_count_checks"] == f"plausibility={perf.sut.completed}"


def test_engine_ids_run_records_its_count_check(tmp_path: Path) -> None:
    server = start_server(output_tokens=12, tokens_per_event=5)
    try:
        out = trial(tmp_path, http_engine(server.url), scenario="Offline")
    finally:
        server.stop()
    perf = out.record.tests[0]
    assert perf.sut.failed == 0
    assert out.record.engine is not None
    params = out.record.engine.parameters
    assert params["token_counts"] == "usage.completion_tokens, equal to the number of token ids the engine returned"
    assert params["token_count_checks"] == f"engine_ids={perf.sut.completed}"


def _hf_word_tokenizer(directory: Path) -> Path:
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


@pytest.mark.parametrize(
    ("claim", "kind"),
    [(5000, "token_mismatch"), (13, None), (True, "bad_usage"), (12.0, "bad_usage")],
    ids=["inflated", "within-tolerance", "bool", "float"],
)
def test_run_with_a_tokenizer_checks_usage_against_the_text(tmp_path: Path, claim: Any, kind: str | None) -> None:
    tok = _hf_word_tokenizer(tmp_path / "tok")
    server = start_server(output_tokens=12, tokens_per_event=3, usage_claim=claim)
    try:
        engine = http_engine(server.url, flavor="generic", tokenizer_dir=str(tok))
        out = trial(tmp_path / "run", engine, scenario="Server", mode=RunMode.ACCURACY)
    finally:
        server.stop()
    t = out.record.tests[0]
    assert t.status == "finished" and t.sut.issued == t.sut.completed > 0
    assert out.record.engine is not None
    params = out.record.engine.parameters
    assert params["token_counts"].startswith("usage.completion_tokens, within max(3, 10%) of the tokenizer's count")
    if kind is None:
        assert t.sut.failed == 0 and params["token_count_checks"] == f"tokenizer={t.sut.completed}"
    else:
        assert t.sut.failures_by_kind == {kind: t.sut.completed}
        assert out.record.verdict.status == "INVALID"
