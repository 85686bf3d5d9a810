"""A submission flow on an OpenAI-compatible server needs the served model's tokenizer, and is refused before its
first query without one (RUN-TOKENIZER), not after its performance test."""

from __future__ import annotations

from pathlib import Path

import pytest

from checker.findings import Severity, UnusableInput
from loadgen_sut.cli import main
from loadgen_sut.engines.factory import EngineSpec
from loadgen_sut.run.plan import RunRequest, resolve
from loadgen_sut.run.preflight import preflight
from loadgen_sut.runner import run
from loadgen_sut.settings import RunMode

REPO = Path(__file__).resolve().parents[2]
TOKENIZER = REPO / "examples" / "token-server-tokenizer"


def _request(tmp_path: Path, mode: RunMode, benchmark: str = "llama3.1-8b", **engine: object) -> RunRequest:
    spec = EngineSpec.model_validate(
        {"kind": "openai", "model": "m", "endpoints": ("http://127.0.0.1:9",), **engine}
    )
    return RunRequest(
        round_name="v6.1",
        benchmark=benchmark,
        scenario="Offline",
        mode=mode,
        engine=spec,
        out=tmp_path / "out",
        progress_interval_s=0,
    )


def _tokenizer_findings(req: RunRequest) -> list[str]:
    rnd, bench, scenario = resolve(req)
    _, findings = preflight(req, rnd, bench, scenario, "")
    return [f.message for f in findings if f.rule == "RUN-TOKENIZER" and f.severity is Severity.ERROR]


@pytest.mark.parametrize("mode", [RunMode.SUBMISSION, RunMode.SUBMISSION_TRIAL])
def test_a_submission_flow_without_tokenizer_is_refused_naming_the_fix(tmp_path: Path, mode: RunMode) -> None:
    (msg,) = _tokenizer_findings(_request(tmp_path, mode))
    assert "the accuracy outputs of llama3.1-8b are token ids" in msg
    assert "pass --tokenizer DIR" in msg and "examples/token-server-tokenizer" in msg
    # engine token ids (vLLM's return_token_ids) are still ids: the score is computed on the decoded text
    assert _tokenizer_findings(_request(tmp_path, mode, flavor="vllm"))
    assert _tokenizer_findings(_request(tmp_path, mode, tokenizer_dir=str(TOKENIZER))) == []


def test_what_needs_no_tokenizer_is_not_refused(tmp_path: Path) -> None:
    assert _tokenizer_findings(_request(tmp_path, RunMode.PERFORMANCE)) == []
    # an accuracy trial only logs (its test process refuses it when the engine returns no ids: test_runs_http.py)
    assert _tokenizer_findings(_request(tmp_path, RunMode.ACCURACY)) == []
    # qwen3-vl's accuracy log is the output text
    assert (
        _tokenizer_findings(_request(tmp_path, RunMode.SUBMISSION_TRIAL, benchmark="qwen3-vl-235b-a22b"))
        == []
    )


def test_gpt_oss_names_test07_too(tmp_path: Path) -> None:
    (msg,) = _tokenizer_findings(_request(tmp_path, RunMode.SUBMISSION_TRIAL, benchmark="gpt-oss-120b"))
    assert "the accuracy and TEST07 outputs of gpt-oss-120b" in msg


def test_the_run_stops_before_anything_starts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines: list[str] = []
    with pytest.raises(UnusableInput, match="refusing to run"):
        run(_request(tmp_path, RunMode.SUBMISSION_TRIAL), say=lines.append)
    assert any("ERROR   RUN-TOKENIZER" in line for line in lines)
    assert not (tmp_path / "out").exists()  # no run directory, no query
    # the command line: exit 2, the fix in the message
    args = ["run", "--engine", "openai", "--endpoint", "http://127.0.0.1:9", "--model", "m", "--benchmark"]
    args += ["llama3.1-8b", "--scenario", "Offline", "--mode", "submission-trial", "--submitter", "Me"]
    system = tmp_path / "box.json"
    assert (
        main(["init", "system", "--trial", "--submitter", "Me", "--no-gpu-probe", "--out", str(system)]) == 0
    )
    args += ["--system", str(system)]
    args += ["--implementation-json", str(tmp_path / "impl.json"), "--out", str(tmp_path / "out")]
    (tmp_path / "impl.json").write_text('{"weight_data_types": "bf16"}')
    capsys.readouterr()
    assert main(args) == 2
    captured = capsys.readouterr()
    assert "RUN-TOKENIZER" in captured.out + captured.err and "--tokenizer DIR" in captured.out + captured.err
    assert not (tmp_path / "out").exists()
