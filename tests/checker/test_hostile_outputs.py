"""Files written or read where they must not be: every writer goes through the one atomic writer
(:mod:`checker.report.atomic`), so a planted ``OUT.tmp`` (a symlink to a user's file, or the user's own file) is
never written through nor deleted, and a decompression bomb in a data set is refused before it is decoded."""

from __future__ import annotations

import io
import os
import time
from pathlib import Path
from typing import Any

import pytest

from checker.findings import UnusableInput
from checker.report.atomic import atomic_file, write_atomic

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
Image = pytest.importorskip("PIL.Image")

from loadgen_sut import datasets_vl  # noqa: E402  (after the skips: it needs pyarrow and Pillow)


def _png(width: int, height: int) -> bytes:
    buf = io.BytesIO()
    Image.new("1", (width, height)).save(buf, format="PNG", optimize=True)
    return buf.getvalue()


def _catalogue(path: Path, image: bytes, rows: int = 3) -> Path:
    rec: dict[str, Any] = {
        "product_title": "t",
        "product_description": "d",
        "product_image": {"bytes": image, "path": None},
        "potential_product_categories": ["a > b", "c"],
        "ground_truth_category": "a > b",
        "ground_truth_brand": "x",
        "ground_truth_is_secondhand": False,
    }
    pq.write_table(pa.Table.from_pylist([rec] * rows), path)
    return path


def test_atomic_file_never_follows_or_removes_a_planted_tmp(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's file")
    out = tmp_path / "out.bin"
    for planted in (out.with_name("out.bin.tmp"), out.with_name(".out.bin.tmp")):
        planted.symlink_to(victim)
    write_atomic(out, b"new", replace=False)
    assert out.read_bytes() == b"new" and not out.is_symlink()
    assert victim.read_text() == "the user's file"
    assert out.with_name("out.bin.tmp").is_symlink()  # left alone
    with pytest.raises(FileExistsError):
        write_atomic(out, b"again", replace=False)
    assert out.read_bytes() == b"new"
    with pytest.raises(RuntimeError), atomic_file(out) as fh:
        fh.write(b"half")
        raise RuntimeError("interrupted")
    assert out.read_bytes() == b"new"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".out.bin.tmp", "out.bin", "out.bin.tmp", "victim.txt"]


def test_dataset_never_writes_through_nor_removes_out_tmp(tmp_path: Path) -> None:
    src = _catalogue(tmp_path / "src.parquet", _png(8, 8))
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's file")
    out = tmp_path / "out.parquet"
    (tmp_path / "out.parquet.tmp").symlink_to(victim)
    assert datasets_vl.write_endpoints_layout(src, out) == 3
    assert victim.read_text() == "the user's file" and not out.is_symlink()
    assert pq.read_table(out).num_rows == 3
    # a failing run (a bad row) leaves a user's own OUT.tmp as it was, and no OUT
    out2 = tmp_path / "out2.parquet"
    mine = tmp_path / "out2.parquet.tmp"
    mine.write_text("my notes")
    bad = _catalogue(tmp_path / "bad.parquet", b"not an image")
    with pytest.raises(UnusableInput, match="cannot read product_image"):
        datasets_vl.write_endpoints_layout(bad, out2)
    assert mine.read_text() == "my notes" and not out2.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out2.parquet.")]


def test_dataset_refuses_a_decompression_bomb_before_decoding(tmp_path: Path) -> None:
    bomb = _png(13000, 13000)  # a few tens of KB; 169 megapixels once decoded
    assert len(bomb) < 100_000
    src = _catalogue(tmp_path / "bomb.parquet", bomb, rows=1)
    t0 = time.perf_counter()
    with pytest.raises(UnusableInput, match=r"13000x13000 pixels, more than 40,000,000") as info:
        datasets_vl.write_endpoints_layout(src, tmp_path / "out.parquet")
    assert time.perf_counter() - t0 < 5.0
    assert "row 0" in str(info.value) and str(src) in str(info.value)
    assert not (tmp_path / "out.parquet").exists()


def test_timeline_and_accuracy_txt_writers_use_random_temporaries(tmp_path: Path) -> None:
    from loadgen_sut.timeline import TimelineHeader, write_timeline

    victim = tmp_path / "victim.txt"
    victim.write_text("the user's file")
    path = tmp_path / "sut_timeline.jsonl"
    (tmp_path / "sut_timeline.jsonl.tmp").symlink_to(victim)
    write_timeline(path, TimelineHeader(t0_ns=0), [])
    assert victim.read_text() == "the user's file" and path.read_text().startswith("{")
    assert os.path.islink(tmp_path / "sut_timeline.jsonl.tmp")


def test_run_record_writer_uses_a_random_temporary(tmp_path: Path) -> None:
    from loadgen_sut.record import RECORD_FILE, RunRecord, write_record

    fixture = Path(__file__).parents[1] / "audit/fixtures/peers/inference-audit-0.1.0/server-50qps" / RECORD_FILE
    record = RunRecord.model_validate_json(fixture.read_bytes())
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's file")
    (tmp_path / "run-record.tmp").symlink_to(victim)  # the fixed name the writer used to write through
    path = tmp_path / RECORD_FILE
    write_record(record, path)
    assert RunRecord.model_validate_json(path.read_bytes()) == record
    assert victim.read_text() == "the user's file" and path.is_file() and not path.is_symlink()
