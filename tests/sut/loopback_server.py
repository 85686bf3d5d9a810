"""A misbehaving HTTP server on 127.0.0.1 for the engine fault tests: subclasses write the answers."""

from __future__ import annotations

import asyncio

from loadgen_sut.engines.http_client import Endpoint


class LoopbackServer:
    """``async with`` a server on a free loopback port; each connection is handed to :meth:`serve`.

    The handlers are tracked and cancelled on exit, in the loop that runs them (not in a finalizer after the
    loop closed, which CPython 3.11 reports as an 'AST constructor recursion depth mismatch' in pytest's summary).
    """

    def __init__(self) -> None:
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> LoopbackServer:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

    @property
    def endpoint(self) -> Endpoint:
        return Endpoint.parse(self.url)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        await self.serve(reader, writer)

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        raise NotImplementedError
