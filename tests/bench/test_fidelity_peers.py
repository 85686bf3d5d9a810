"""The fidelity benches find a peer in any venv (``--peers-venv`` / ``$PEERS_VENV``), with a tokenizer made when the
venv has none; the 2-core ladder's medians are taken per rate and client over its rounds."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from fidelity_peers import available_peers, make_run
from sut_workers import ladder_medians


def _venv(root: Path, with_aiperf: bool) -> Path:
    """A venv as far as the bench looks at one: bin/python (this interpreter: it has ``tokenizers``) and the CLI."""
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "python").symlink_to(sys.executable)
    if with_aiperf:
        cli = root / "bin" / "aiperf"
        cli.write_text("#!/bin/sh\n", encoding="utf-8")
        cli.chmod(0o755)
    return root


def test_a_venv_without_a_tokenizer_gets_one_in_the_output_directory(tmp_path: Path) -> None:
    venv = _venv(tmp_path / "venv", with_aiperf=True)
    found, missing, tokenizer = available_peers(venv, ["aiperf", "guidellm"], tmp_path / "out")
    assert found == ["aiperf"]
    assert len(missing) == 1 and missing[0].startswith("guidellm: not in ")
    assert tokenizer == tmp_path / "out" / "word-tokenizer"
    assert (tokenizer / "tokenizer.json").is_file()
    run = make_run("aiperf", venv, tokenizer, "http://127.0.0.1:1", "m", 50.0, 10, 64, 128, tmp_path / "out" / "a")
    assert run.argv[0] == str(venv / "bin" / "aiperf")
    assert run.argv[run.argv.index("--tokenizer") + 1] == str(tokenizer)


def test_the_venvs_own_tokenizer_is_used_when_it_has_one(tmp_path: Path) -> None:
    venv = _venv(tmp_path / "venv", with_aiperf=True)
    (venv / "word-tokenizer").mkdir()
    (venv / "word-tokenizer" / "tokenizer.json").write_text("{}", encoding="utf-8")
    found, missing, tokenizer = available_peers(venv, ["aiperf"], tmp_path / "out")
    assert (found, missing, tokenizer) == (["aiperf"], [], venv / "word-tokenizer")
    assert not (tmp_path / "out").exists()


def test_a_tokenizer_that_cannot_be_made_skips_the_peer_with_the_reason(tmp_path: Path) -> None:
    venv = _venv(tmp_path / "venv", with_aiperf=True)
    (venv / "bin" / "python").unlink()
    (venv / "bin" / "python").write_text("#!/bin/sh\necho 'no tokenizers here' >&2\nexit 1\n", encoding="utf-8")
    os.chmod(venv / "bin" / "python", 0o755)
    found, missing, _ = available_peers(venv, ["aiperf"], tmp_path / "out")
    assert found == []
    assert missing == [f"aiperf: no word tokenizer in {venv} and none could be made (no tokenizers here)"]


def _client(ttft_err: float, cpu_ms: float) -> dict[str, Any]:
    pct = {"p50_ms": 200.0, "p99_ms": 201.0, "count": 600}
    return {
        "run": {
            "cpu_per_query_ms": cpu_ms,
            "returncode": 0,
            "server": {"ttft": pct, "tpot": {**pct, "p99_ms": 20.0}, "rate_per_s": 50.0},
        },
        "reported": {
            "ttft": {**pct, "p99_ms": 201.0 + ttft_err},
            "tpot": {**pct, "p99_ms": 20.5},
            "validity": "VALID",
            "problem": None,
        },
    }


def _level(workers: int, round_no: int, ttft_err: float, cpu_ms: float, peer: bool) -> dict[str, Any]:
    return {
        "target_qps": 50.0,
        "round": round_no,
        "client_workers": workers,
        "loadavg_1min_start": 1.0 + round_no,
        "sut": _client(ttft_err, cpu_ms),
        "peers": {"aiperf": _client(9.0, 12.0)} if peer else {},
    }


def test_ladder_medians_are_per_client_over_the_rounds_in_process_first() -> None:
    levels = [
        _level(0, 1, 2.0, 3.0, False), _level(1, 1, 4.0, 3.5, True),
        _level(1, 2, 6.0, 3.3, False), _level(0, 2, 3.0, 2.0, True),
        _level(0, 3, 10.0, 2.5, False),
    ]  # fmt: skip
    rows = ladder_medians(levels)
    assert [r["client"] for r in rows] == ["w0", "w1", "aiperf"]
    w0, w1, peer = rows
    assert (w0["ttft_p99_error_ms"], w0["cpu_per_request_ms"]) == (3.0, 2.5)  # medians of 3 rounds
    assert w1["ttft_p99_error_ms"] == 5.0 and w1["cpu_per_request_ms"] == pytest.approx(3.4)  # of 2
    assert w0["tpot_p99_error_ms"] == 0.5
    assert w0["verdicts"] == ["VALID"] * 3 and w0["loadavg_1min"] == [2.0, 3.0, 4.0]
    assert peer["verdicts"] == ["held", "held"] and peer["ttft_p99_error_ms"] == 9.0
