"""``inference-audit run`` refuses values that would hang or crash a run, with exit 2, before anything starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from loadgen_sut.cli import main
from loadgen_sut.engines.factory import EngineSpec
from loadgen_sut.generation import GenerationSpec
from loadgen_sut.lgtest import TestSpec
from loadgen_sut.settings import TestSettingsModel
from rules.models import Scenario

BASE = ["run", "--engine", "simulated", "--benchmark", "llama3.1-8b", "--scenario", "Offline", "--round", "v6.1"]


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (["--max-concurrency", "0"], "--max-concurrency"),
        (["--max-concurrency", "-3"], "--max-concurrency"),
        (["--max-new-tokens", "-5"], "--max-new-tokens"),
        (["--max-new-tokens", "0"], "--max-new-tokens"),
        (["--min-new-tokens", "-1"], "--min-new-tokens"),
        (["--request-timeout", "0"], "--request-timeout"),
        (["--request-timeout", "nan"], "--request-timeout"),
        (["--idle-timeout", "-1"], "--idle-timeout"),
        (["--idle-timeout", "inf"], "--idle-timeout"),
        (["--batch-size", "0"], "--batch-size"),
        (["--dataset-limit", "0"], "--dataset-limit"),
        (["--target-qps", "0"], "--target-qps"),
        (["--target-qps", "-5"], "--target-qps"),
        (["--target-qps", "nan"], "--target-qps"),
        (["--target-qps", "inf"], "--target-qps"),
        (["--max-concurrency", "1e3"], "--max-concurrency"),  # not an integer: no silent reading
        (["--sim-max-concurrency", "0"], "--sim-max-concurrency"),
        (["--progress-interval", "-1"], "--progress-interval"),
    ],
)
def test_bad_values_exit_2_before_anything_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], fragment: str
) -> None:
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as exc:
        main([*BASE, "--out", str(out), *extra])
    assert exc.value.code == 2
    assert fragment in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize(
    "extra",
    [["--min-new-tokens", "10", "--max-new-tokens", "5"], ["--min-new-tokens", "129"]],  # llama3.1-8b: 128
)
def test_min_new_tokens_above_max_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str]) -> None:
    out = tmp_path / "out"
    assert main([*BASE, "--out", str(out), *extra]) == 2
    assert "--min-new-tokens" in capsys.readouterr().err
    assert not out.exists()


def test_a_test_spec_that_would_hang_is_refused() -> None:
    """Programmatic runs (no CLI) are refused too: the spec of a LoadGen child is validated when it is built."""
    eng = EngineSpec(kind="openai", model="m", endpoints=("http://127.0.0.1:1",), max_concurrency=0)
    common = {"name": "performance", "round_name": "v6.1", "user_conf": "u.conf", "dataset": "builtin"}
    settings = TestSettingsModel(scenario=Scenario.OFFLINE, conf_model="m", min_duration_ms=0, min_query_count=1)
    with pytest.raises(ValueError, match="max_concurrency"):
        TestSpec(**common, settings=settings, engine=eng, generation=GenerationSpec(max_new_tokens=8))
    ok = eng.model_copy(update={"max_concurrency": 4})
    with pytest.raises(ValueError, match="min_new_tokens"):
        TestSpec(**common, settings=settings, engine=ok, generation=GenerationSpec(max_new_tokens=8, min_new_tokens=9))
    with pytest.raises(ValueError):
        GenerationSpec(max_new_tokens=-5)
    with pytest.raises(ValueError):
        TestSpec(**common, settings=settings, engine=ok, generation=GenerationSpec(max_new_tokens=8), deadline_s=0)
