"""bench/token_server.py started as a child process on a free port, for tests that need it out of process."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

SERVER = Path(__file__).resolve().parents[2] / "bench" / "token_server.py"
START_TIMEOUT_S = 20.0


def start_token_server(work_dir: Path, *args: str) -> tuple[subprocess.Popen[bytes], int]:
    """Start the server with ``args`` (its options after ``--port``) on a port it chooses and writes to a port file
    in ``work_dir``; returns the process and the port once it listens (AssertionError if it does not in 20 s)."""
    port_file = work_dir / "token_server.port"
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), "--port", "0", "--port-file", str(port_file), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if port_file.exists() and port_file.read_text().strip():
            return proc, int(port_file.read_text())
        if proc.poll() is not None:
            raise AssertionError(f"token server exited: {proc.stdout.read() if proc.stdout else ''!r}")
        time.sleep(0.05)
    proc.kill()
    raise AssertionError(f"token server did not start within {START_TIMEOUT_S:.0f} s")
