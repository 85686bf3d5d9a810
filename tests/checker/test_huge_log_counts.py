"""Counts a detail log cannot hold (LoadGen writes uint64) are judged, never a crash: ``1e308`` as
result_query_count or generated_samples_per_query once stopped check-submission with exit 3 (math.sqrt of
int(1e308) x the samples per query, in PERF-TOKENS-PER-SAMPLE's tolerance)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from checker.cli.check import main

BASE = Path(__file__).resolve().parents[1] / "fixtures" / "checker" / "base" / "llm"
RESULTS = "closed/RedHat/results/XE8640_4xH100_vLLM/llama3.1-8b"


@pytest.mark.parametrize(
    ("scenario", "key"),
    [("Offline", "result_query_count"), ("Server", "generated_samples_per_query"), ("Server", "result_query_count")],
)
@pytest.mark.parametrize("value", ["1e308", "18446744073709551616", "9" * 400])
def test_a_count_beyond_uint64_is_judged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], scenario: str, key: str, value: str
) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(BASE, tree)
    log = tree / RESULTS / scenario / "performance" / "run_1" / "mlperf_log_detail.txt"
    text, n = re.subn(rf'("key": "{key}", "value": )\d+', rf"\g<1>{value}", log.read_text(encoding="utf-8"))
    assert n == 1
    log.write_text(text, encoding="utf-8")
    code = main([str(tree)])
    out = capsys.readouterr()
    assert code in (0, 1), out.err[-2000:]
    assert "internal error" not in out.out + out.err
