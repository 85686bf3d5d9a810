"""Fixtures for the harness tests (helpers live in sut_helpers.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sse_server import ServerConfig, SSEServer


@pytest.fixture
def sse_server() -> Iterator[SSEServer]:
    server = SSEServer(ServerConfig()).start()
    yield server
    server.stop()
