"""Is the engine usable? Asked once, before a run creates its directory or starts a LoadGen process.

An OpenAI-compatible engine must answer ``GET /v1/models`` at every ``--endpoint`` and list ``--model`` (the same
start-up probe each test process makes, :meth:`~loadgen_sut.engines.openai_http.OpenAIEngine.start`); the
in-process transformers engine needs PyTorch. Otherwise the run is refused as unusable input (exit 2, README's
exit-code table) naming the endpoint and the fix, and nothing is left under ``--out``: without this a stopped server
was found by the first test's process, the run exited 1 and left a run directory with no result in it.
"""

from __future__ import annotations

import asyncio
import importlib.util

from checker.findings import UnusableInput
from loadgen_sut.engines.base import EngineUnavailable
from loadgen_sut.engines.factory import EngineSpec, build_engine


def _fix(spec: EngineSpec) -> str:
    urls = " ".join(f"--endpoint {u}" for u in spec.endpoints)
    return (
        f"start the engine first, or give the URL it listens on and a model it serves ({urls} --model {spec.model}; "
        "GET <endpoint>/v1/models must list the model). Nothing was run or written"
    )


def probe_openai(spec: EngineSpec) -> None:
    """Every endpoint answers ``/v1/models`` and serves ``spec.model``, within ``spec.probe_timeout_s`` each."""
    engine = build_engine(spec, None, {})  # as a test process builds it: the API key, the timeouts

    async def start_and_close() -> None:
        try:
            await engine.start()
        finally:
            await engine.close()

    try:
        asyncio.run(start_and_close())
    except EngineUnavailable as exc:
        raise UnusableInput(f"the engine is not usable: {exc} — fix: {_fix(spec)}") from exc


def probe_engine(spec: EngineSpec) -> None:
    """Refuse (:class:`UnusableInput`) an engine the run could not use; the simulated engine is always there."""
    if spec.kind == "openai":
        probe_openai(spec)
    elif spec.kind == "transformers" and importlib.util.find_spec("torch") is None:
        raise UnusableInput(
            "--engine transformers generates with PyTorch, which is not installed: pip install torch "
            "(or serve the model and use --engine openai --endpoint URL). Nothing was run or written"
        )
