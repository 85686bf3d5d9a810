"""A local Hugging Face model, streaming, in its own process.

The model runs in a ``multiprocessing`` (spawn) worker so its Python work (the generate loop)
never holds the GIL of the process LoadGen runs in. Requests go over a pipe; the worker groups
waiting requests into batches of up to ``batch_size`` (left padding), generates greedily or with the
request's sampling (temperature, top_p, top_k; gpt-oss-120b's and qwen3-vl's rounds sample) with a
streamer that reports each sequence's first token as soon as it exists, and returns every
sequence's ids up to and including the first stop id (the tokenizer's EOS and the model's generation
config's ``eos_token_id`` list) with their true count.

This is an honest reference engine, not a fast one: no continuous batching, no paged KV cache.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.metadata
import multiprocessing as mp
import threading
import traceback
from collections.abc import AsyncIterator
from dataclasses import asdict, dataclass
from multiprocessing.connection import Connection
from typing import Any

from loadgen_sut.engines.base import (
    Engine,
    EngineError,
    EngineInfo,
    EngineUnavailable,
    ErrorKind,
    Failed,
    Finished,
    FirstToken,
    FirstTokenCallback,
    GenerationEvent,
    GenerationRequest,
)
from loadgen_sut.engines.tokenizers import Tokenizer


@dataclass(frozen=True)
class TransformersConfig:
    model_dir: str
    device: str = "cpu"  # "cuda", "cuda:0", ...
    dtype: str = "auto"  # "bfloat16", "float16", "float32", "auto"
    batch_size: int = 8
    start_timeout_s: float = 600.0


# ------------------------------------------------------------------------------ worker process


def _worker_main(cfg: dict[str, Any], conn: Connection) -> None:  # pragma: no cover - runs in the child
    """Child process: load the model, then serve batches until told to stop."""
    try:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
        from transformers.generation.streamers import BaseStreamer

        tok = AutoTokenizer.from_pretrained(cfg["model_dir"], local_files_only=True)
        dtype = "auto" if cfg["dtype"] == "auto" else getattr(torch, cfg["dtype"])
        model = AutoModelForCausalLM.from_pretrained(cfg["model_dir"], dtype=dtype, local_files_only=True)
        model.to(cfg["device"]).eval()
        pad_id = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
        eos_id = tok.eos_token_id
        # every id generate() stops at (gpt-oss: <|return|>, <|call|>, <|endoftext|>): a sequence is cut after the
        # first of them, so the pad ids generate() writes after an early stop are never counted as output
        gen_eos = getattr(model.generation_config, "eos_token_id", None)
        stop_ids = {int(t) for t in (gen_eos if isinstance(gen_eos, list) else [gen_eos]) if t is not None}
        if eos_id is not None:
            stop_ids.add(int(eos_id))
        conn.send(
            (
                "ready",
                {
                    "torch": torch.__version__,
                    "dtype": str(next(model.parameters()).dtype).replace("torch.", ""),
                    "revision": getattr(model.config, "_commit_hash", None),
                    "eos_token_id": eos_id,
                },
            )
        )
    except Exception as exc:
        conn.send(("fatal", f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=3)}"))
        return

    class _FirstTokenStreamer(BaseStreamer):
        def __init__(self, keys: list[int]) -> None:
            self.keys = keys
            self.calls = 0

        def put(self, value: Any) -> None:
            self.calls += 1
            if self.calls == 2:  # the first put() is the prompt; the second the first new tokens
                for key, t in zip(self.keys, value.reshape(-1).tolist(), strict=False):
                    conn.send(("first", key, [int(t)]))

        def end(self) -> None:
            return None

    pending: list[tuple[int, dict[str, Any]]] = []
    while True:
        if not pending or conn.poll(0):
            msg = conn.recv()
            if msg[0] == "stop":
                return
            pending.append((msg[1], msg[2]))
            while conn.poll(0) and len(pending) < cfg["batch_size"]:
                msg = conn.recv()
                if msg[0] == "stop":
                    return
                pending.append((msg[1], msg[2]))
        # one batch: same max_new_tokens / ignore_eos / decoding (group by those), left-padded
        head = pending[0][1]
        group = ("max_new_tokens", "ignore_eos", "greedy", "temperature", "top_p", "top_k")
        batch = [p for p in pending if all(p[1].get(k) == head.get(k) for k in group)][: cfg["batch_size"]]
        pending = [p for p in pending if p not in batch]
        keys = [k for k, _ in batch]
        try:
            seqs = [r["input_ids"] or tok.encode(r["prompt"], add_special_tokens=True) for _, r in batch]
            width = max(len(s) for s in seqs)
            ids = torch.tensor([[pad_id] * (width - len(s)) + list(s) for s in seqs], device=cfg["device"])
            mask = torch.tensor([[0] * (width - len(s)) + [1] * len(s) for s in seqs], device=cfg["device"])
            kwargs: dict[str, Any] = {
                "max_new_tokens": head["max_new_tokens"],
                "do_sample": not head.get("greedy", True),
                "pad_token_id": pad_id,
                "streamer": _FirstTokenStreamer(keys),
            }
            if kwargs["do_sample"]:  # the round's sampling; what is None stays the model's generation config
                if head.get("temperature") is not None:
                    kwargs["temperature"] = head["temperature"]
                if head.get("top_p") is not None:
                    kwargs["top_p"] = head["top_p"]
                if head.get("top_k") is not None:
                    kwargs["top_k"] = head["top_k"]  # 0: disabled (generate()'s own default would be 50)
            if head.get("min_new_tokens"):
                kwargs["min_new_tokens"] = head["min_new_tokens"]
            if head["ignore_eos"]:
                kwargs["eos_token_id"] = None
            with torch.no_grad():
                out = model.generate(input_ids=ids, attention_mask=mask, **kwargs)
            for key, row in zip(keys, out[:, width:].tolist(), strict=False):
                gen: list[int] = []
                for t in row:
                    gen.append(int(t))
                    if not head["ignore_eos"] and int(t) in stop_ids:
                        break
                conn.send(("done", key, gen))
        except Exception as exc:
            for key in keys:
                conn.send(("error", key, f"{type(exc).__name__}: {exc}"))


# ------------------------------------------------------------------------------ engine (SUT side)


class TransformersEngine(Engine):
    def __init__(self, config: TransformersConfig, tokenizer: Tokenizer | None = None) -> None:
        self._cfg = config
        self._tok = tokenizer
        self._proc: Any = None
        self._conn: Connection | None = None
        self._queues: dict[int, asyncio.Queue[tuple[str, Any]]] = {}
        self._on_first: dict[int, FirstTokenCallback] = {}  # reported from _dispatch, before the task wakes
        self._next_key = 0
        self._reader: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._meta: dict[str, Any] = {}
        self._dead: str | None = None

    async def start(self) -> None:
        ctx = mp.get_context("spawn")
        parent, child = ctx.Pipe()
        self._proc = ctx.Process(target=_worker_main, args=(asdict(self._cfg), child), name="transformers-engine", daemon=True)
        self._proc.start()
        child.close()
        self._conn = parent
        loop = asyncio.get_running_loop()
        ready = await loop.run_in_executor(None, self._wait_ready)
        if ready[0] != "ready":
            self._proc.join(5)
            raise EngineUnavailable(f"transformers worker failed to load {self._cfg.model_dir}: {ready[1]}")
        self._meta = ready[1]
        self._loop = loop
        self._reader = threading.Thread(target=self._read_loop, name="transformers-reader", daemon=True)
        self._reader.start()

    def _wait_ready(self) -> tuple[str, Any]:
        assert self._conn is not None
        if not self._conn.poll(self._cfg.start_timeout_s):
            return ("fatal", f"not ready after {self._cfg.start_timeout_s:g} s")
        try:
            msg: tuple[str, Any] = self._conn.recv()
        except EOFError:
            return ("fatal", "worker process exited while loading")
        return msg

    def _read_loop(self) -> None:
        """Reader thread: pipe -> per-request queues on the loop (blocking recv releases the GIL)."""
        assert self._conn is not None and self._loop is not None
        while True:
            try:
                msg = self._conn.recv()
            except (EOFError, OSError):
                self._loop.call_soon_threadsafe(self._worker_died)
                return
            self._loop.call_soon_threadsafe(self._dispatch, msg)

    def _dispatch(self, msg: tuple[Any, ...]) -> None:
        if msg[0] == "first":
            on_first = self._on_first.pop(msg[1], None)
            if on_first is not None:
                on_first(tuple(msg[2]))
        q = self._queues.get(msg[1])
        if q is not None:
            q.put_nowait((msg[0], msg[2]))

    def _worker_died(self) -> None:
        self._dead = "transformers worker process exited"
        for q in self._queues.values():
            q.put_nowait(("error", self._dead))

    async def close(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(OSError, BrokenPipeError):
                self._conn.send(("stop",))
        if self._proc is not None:
            self._proc.join(10)
            if self._proc.is_alive():
                self._proc.terminate()
                self._proc.join(5)

    def info(self) -> EngineInfo:
        try:
            tf_version = importlib.metadata.version("transformers")
        except importlib.metadata.PackageNotFoundError:
            tf_version = None
        return EngineInfo(
            kind="transformers",
            name="transformers",
            version=tf_version,
            model=self._cfg.model_dir,
            model_revision=self._meta.get("revision"),
            precision=self._meta.get("dtype", self._cfg.dtype),
            tokenizer=self._tok.name if self._tok else self._cfg.model_dir,
            parameters={
                "device": self._cfg.device,
                "batch_size": str(self._cfg.batch_size),
                "torch": str(self._meta.get("torch")),
            },
        )

    def detokenize(self, token_ids: tuple[int, ...] | list[int]) -> str:
        if self._tok is None:
            raise NotImplementedError("no tokenizer loaded")
        return self._tok.decode(token_ids)

    async def generate(
        self, request: GenerationRequest, on_first_token: FirstTokenCallback | None = None
    ) -> AsyncIterator[GenerationEvent]:
        if self._dead or self._conn is None:
            yield Failed(error=EngineError(kind=ErrorKind.ENGINE, message=self._dead or "engine not started"))
            return
        key = self._next_key
        self._next_key += 1
        q: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self._queues[key] = q
        if on_first_token is not None:
            self._on_first[key] = on_first_token
        try:
            self._conn.send(
                (
                    "gen",
                    key,
                    {
                        "input_ids": list(request.input_ids) if request.input_ids is not None else None,
                        "prompt": request.prompt,
                        "max_new_tokens": request.max_new_tokens,
                        "min_new_tokens": request.min_new_tokens,
                        "ignore_eos": request.ignore_eos,
                        "greedy": request.greedy,
                        "temperature": request.temperature,
                        "top_p": request.top_p,
                        "top_k": request.top_k,
                    },
                )
            )
            while True:
                kind, payload = await q.get()
                if kind == "first":
                    yield FirstToken(token_ids=tuple(payload))
                elif kind == "done":
                    ids = tuple(payload)
                    if not ids:
                        yield Failed(error=EngineError(kind=ErrorKind.EMPTY, message="no tokens generated"))
                    else:
                        yield Finished(token_ids=ids, n_tokens=len(ids), finish_reason="stop_or_length")
                    return
                else:
                    yield Failed(error=EngineError(kind=ErrorKind.ENGINE, message=str(payload)))
                    return
        except (OSError, BrokenPipeError) as exc:
            yield Failed(error=EngineError(kind=ErrorKind.ENGINE, message=f"pipe to worker broken: {exc}"))
        finally:
            self._queues.pop(key, None)
            self._on_first.pop(key, None)
