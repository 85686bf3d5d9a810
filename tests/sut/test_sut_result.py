"""``sut_result.json``: the test process writes a typed :class:`SutResult` and the runner reads it back with the same
model; a file that is missing, cut off or of another version is a crashed test with the reason, never a traceback."""

from __future__ import annotations

from pathlib import Path

from loadgen_sut.lgtest import RESULT_FILE
from loadgen_sut.record import LengthStats, Percentile, ProcessDataset, SutCounts, SutResult
from loadgen_sut.run.child import read_test_record


def _write(test_dir: Path, text: str) -> None:
    test_dir.mkdir(parents=True, exist_ok=True)
    (test_dir / RESULT_FILE).write_text(text, encoding="utf-8")


def test_a_finished_test_is_read_typed(tmp_path: Path) -> None:
    result = SutResult(
        test="performance",
        status="finished",
        dataset=ProcessDataset(name="d", samples=8, simulated=True),
        output_tokens=LengthStats(count=8, min=3, max=9, mean=5.5),
        sut=SutCounts(issued=8, completed=8, output_tokens=44),
        first_tokens=8,
        client_ttft_p99_ms=Percentile(value=12.5, count=8),
        client_tpot_p99_ms=Percentile(value=None, count=0),
        wall_s=1.25,
    )
    _write(tmp_path / "performance", result.model_dump_json())
    record, read = read_test_record("performance", tmp_path / "performance", tmp_path, 0, None)
    assert read == result
    assert record.status == "finished" and record.error is None and record.directory == "performance"
    assert record.sut.completed == 8 and record.output_tokens == result.output_tokens
    assert record.client_ttft_p99_ms == Percentile(value=12.5, count=8)
    assert record.client_tpot_p99_ms is not None and record.client_tpot_p99_ms.value is None  # not measured
    # it wrote a result, then died: crashed
    record, _ = read_test_record("performance", tmp_path / "performance", tmp_path, -9, None)
    assert record.status == "crashed"


def test_a_setup_error_keeps_its_reason(tmp_path: Path) -> None:
    _write(tmp_path / "accuracy", SutResult(test="accuracy", status="setup_error", error="no data set").model_dump_json())
    record, _ = read_test_record("accuracy", tmp_path / "accuracy", tmp_path, 4, None)
    assert record.status == "setup_error" and record.error == "no data set" and record.sut == SutCounts()


def test_missing_cut_or_foreign_results_are_a_crash_with_the_reason(tmp_path: Path) -> None:
    record, read = read_test_record("performance", tmp_path / "none", tmp_path, 1, None)
    assert read is None and record.status == "crashed" and record.error == "test process exited with code 1"
    _write(tmp_path / "cut", '{"test": "performance", "status": "fini')
    record, read = read_test_record("performance", tmp_path / "cut", tmp_path, 0, None)
    assert read is None and record.status == "crashed"
    assert record.error is not None and record.error.startswith(f"{RESULT_FILE} unreadable")
    # a field this version does not know (a test process of another version): refused, not half-read
    _write(tmp_path / "foreign", '{"test": "performance", "status": "finished", "sut": {"issued": 1, "new": 2}}')
    record, read = read_test_record("performance", tmp_path / "foreign", tmp_path, 0, None)
    assert read is None and record.status == "crashed" and "unreadable" in (record.error or "")
    _write(tmp_path / "status", '{"test": "performance", "status": "exploded"}')
    assert read_test_record("performance", tmp_path / "status", tmp_path, 0, None)[0].status == "crashed"
