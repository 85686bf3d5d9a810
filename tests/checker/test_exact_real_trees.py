"""Tree-level verdicts follow --select/--ignore, and the TEST06 id width is decided per log from its data."""

from __future__ import annotations

from pathlib import Path

from checker.compliance.test06 import detect_token_dtype
from checker.engine import check_tree
from checker.parsers.accuracy_log import AccuracyEntry, TokenDtype
from checker.report.outcome import filter_report
from rules import load_round
from tests.checker.fixture_cases import load_cases, materialize

ROUND = load_round("v5.1")
IGN = ["PERF-VALIDITY", "PERF-SUMMARY-MISMATCH"]


def test_ignore_applies_to_required_scenarios(tmp_path: Path) -> None:
    spec = dict(load_cases("invalid"))["tree_required_scenarios"]
    root = materialize(spec, tmp_path / "t")
    full = check_tree(root, ROUND, workers=1)
    assert any(f.rule == "TREE-REQUIRED-SCENARIOS" for f in full.findings)
    rep = filter_report(check_tree(root, ROUND, workers=1, ignore=IGN), ignore=IGN)
    assert not any(f.rule == "TREE-REQUIRED-SCENARIOS" for f in rep.findings)
    assert all(e.valid for e in rep.results)


def _entry(data: bytes, count: int) -> AccuracyEntry:
    return AccuracyEntry(index=0, line=1, seq_id=0, qsl_idx=0, data_hex=data.hex().upper(), token_count=count)


def test_dtype_detection() -> None:
    ids = [128000, 791, 4062]
    i32 = b"".join(i.to_bytes(4, "little") for i in ids)
    i64 = b"".join(i.to_bytes(8, "little") for i in ids)
    assert detect_token_dtype([_entry(i32, 3)], TokenDtype.INT32)[0] is TokenDtype.INT32
    dtype, why = detect_token_dtype([_entry(i64, 3)], TokenDtype.INT32)
    assert dtype is TokenDtype.INT64 and "int64" in why
    # 8 bytes per count but non-zero high words: int32 ids with a halved count, not int64
    assert detect_token_dtype([_entry(i32 + i32[:4], 2), _entry(i32, 3)], TokenDtype.INT32)[0] is TokenDtype.INT32
