"""Fixtures of the HTML report tests: one real INVALID run (simulated engine under the real LoadGen), shared."""

from __future__ import annotations

import pytest
from report_helpers import SERVER_TRIAL, RealRun

from loadgen_sut.cli import main


@pytest.fixture(scope="session")
def invalid_run(tmp_path_factory: pytest.TempPathFactory) -> RealRun:
    """``inference-audit run --html`` of a Server trial whose TTFT (median 1.5 s, lognormal) puts p99 over the
    2,000 ms limit: LoadGen says INVALID (latency and, because of it, early stopping)."""
    work = tmp_path_factory.mktemp("invalid-run")
    conf = work / "trial.conf"
    conf.write_text(SERVER_TRIAL, encoding="utf-8")
    html = work / "run.html"
    code = main([
        "run", "--engine", "simulated", "--benchmark", "llama3.1-8b", "--scenario", "Server", "--round", "v6.1",
        "--user-conf", str(conf), "--sim-ttft-ms", "lognormal:1500,0.3", "--sim-tpot-ms", "25",
        "--progress-interval", "0", "--out", str(work / "out"), "--html", str(html),
    ])  # fmt: skip
    runs = sorted((work / "out" / "runs").iterdir())
    assert len(runs) == 1
    return RealRun(runs[0], html, code)
