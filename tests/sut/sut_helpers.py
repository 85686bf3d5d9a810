"""Helpers for the harness tests: trial runs through the real runner (one LoadGen process per test)."""

from __future__ import annotations

from pathlib import Path

from sse_server import ServerConfig, SSEServer

from loadgen_sut.engines.factory import EngineSpec
from loadgen_sut.run.plan import RunRequest
from loadgen_sut.runner import RunOutcome, run
from loadgen_sut.settings import RunMode

ROUND = "v6.1"  # the installed LoadGen (6.0.x) carries this round's compiled mlperf.conf
BENCH = "llama3.1-8b"

# Trial settings: short runs (non-compliant on purpose; fine outside --mode submission).
OFFLINE_TRIAL = "*.Offline.min_duration = 0\n*.Offline.min_query_count = 32\n"
SERVER_TRIAL = "*.Server.target_qps = 200\n*.Server.min_duration = 2500\n"


def sim_engine(**kw: object) -> EngineSpec:
    base: dict[str, object] = {"kind": "simulated", "model": BENCH, "sim_ttft_ms": "uniform:2,6", "sim_tpot_ms": "0.5"}
    base.update(kw)
    return EngineSpec.model_validate(base)


def http_engine(url: str | list[str], **kw: object) -> EngineSpec:
    urls = [url] if isinstance(url, str) else url
    base: dict[str, object] = {
        "kind": "openai",
        "model": "tiny",
        "endpoints": tuple(urls),
        "idle_timeout_s": 2.0,
        "request_timeout_s": 20.0,
    }
    base.update(kw)
    return EngineSpec.model_validate(base)


def trial(
    tmp_path: Path,
    engine: EngineSpec,
    *,
    scenario: str = "Offline",
    mode: RunMode = RunMode.PERFORMANCE,
    conf: str | None = None,
    **kw: object,
) -> RunOutcome:
    if conf is None:
        conf = OFFLINE_TRIAL if scenario == "Offline" else SERVER_TRIAL
    tmp_path.mkdir(parents=True, exist_ok=True)
    conf_path = tmp_path / f"{scenario}-{mode.value}.conf"
    conf_path.write_text(conf, encoding="utf-8")
    request = RunRequest(
        round_name=str(kw.pop("round_name", ROUND)),
        benchmark=BENCH,
        scenario=scenario,
        mode=mode,
        engine=engine,
        out=tmp_path / "out",
        user_conf=conf_path,
        progress_interval_s=0,
        **kw,  # type: ignore[arg-type]
    )
    return run(request, say=lambda _line: None)


def start_server(**kw: object) -> SSEServer:
    return SSEServer(ServerConfig(**kw)).start()  # type: ignore[arg-type]
