"""The memory-lean table reader (checker/audit/table/parse.py) reads exactly what the validated one did.

A CSV is streamed in two passes (UTF-8 check, then rows) and its rows are built with ``model_construct``,
sharing repeated cells and ``extra`` mappings; these tests hold the results, the error messages (byte offsets
included, across chunk boundaries) and the fields set equal to a row-by-row validated build, and bound the
bytes a row costs (tracemalloc; ``bench/table_memory.py`` measures the process peak on 10^5 / 10^6 rows).
"""

from __future__ import annotations

import csv
import io
import random
import tracemalloc
from pathlib import Path

import pytest

from checker.audit.table import parse as table_parse
from checker.audit.table.model import ResultTable, TableFormat, TableRow
from checker.findings import UnusableInput
from checker.results import SUMMARY_CSV_COLUMNS

ROWS_JSON = Path(__file__).resolve().parents[1] / "fixtures" / "v51-rows.json"


def _validated(path: Path) -> ResultTable:
    """The table read whole and every row validated by pydantic (what ``load_table`` did before)."""
    text = path.read_bytes().decode("utf-8-sig")
    reader = csv.reader(io.StringIO(text), delimiter=",")
    header = [h.strip() for h in next(reader)]
    columns = {v: k for k, v in table_parse.CHECKER_CSV_COLUMNS.items() if k in header}
    rows: list[TableRow] = []
    for cells in reader:
        if any(c.strip() for c in cells):
            rows.append(
                table_parse._build_row(len(rows) + 1, reader.line_num, dict(zip(header, cells, strict=True)), columns)
            )
    return ResultTable(path=str(path), format=TableFormat.CHECKER_CSV, columns=columns, rows=tuple(rows))


def _checker_csv(path: Path, rows: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(SUMMARY_CSV_COLUMNS)
        for i in range(rows):
            values = {c: "" for c in SUMMARY_CSV_COLUMNS}
            values.update(
                Organization=rng.choice(["AMD", "NVIDIA", "Krai", "Ünïcødé GmbH"]),
                Availability="available",
                Division=rng.choice(["closed", "open"]),
                SystemType="datacenter",
                SystemName=f"System {i} (8x GPU, vLLM)",
                Platform=f"plat_{i}",
                Model="llama2-70b-99",
                MlperfModel="llama2-70b-99",
                Scenario=rng.choice(["Offline", "Server"]),
                Result=f"{rng.uniform(100, 90000):.2f}",
                Accuracy="ROUGE1: 44.4373  ROUGE2: 22.0867  ROUGEL: 28.657  TOKENS_PER_SAMPLE: 294.4",
                number_of_nodes="1",
                accelerators_per_node=rng.choice(["8", "x"]),
                Location=f"closed/X/results/plat_{i}/llama2-70b-99/Offline",
                operating_system=rng.choice(["Ubuntu 22.04", "RHEL 9"]),
                version="v5.1",
                inferred="0",
                has_power=rng.choice(["False", "maybe"]),
                Units="Tokens/s",
            )
            w.writerow([values[c] for c in SUMMARY_CSV_COLUMNS])


def test_streamed_csv_equals_the_validated_read(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    _checker_csv(path, 500)
    ours, reference = table_parse.load_table(path), _validated(path)
    assert ours == reference
    assert ours.model_dump() == reference.model_dump()
    assert [r.model_fields_set for r in ours.rows] == [r.model_fields_set for r in reference.rows]
    assert any(r.problems for r in ours.rows)  # 'x' accelerators, 'maybe' has_power: typed as problems
    # rows share repeated cells and extras, and are still independent copies under model_copy
    copied = ours.rows[0].model_copy(update={"notes": "changed"})
    assert "notes" in copied.model_fields_set and "notes" not in ours.rows[1].model_fields_set


def test_json_rows_equal_the_validated_build() -> None:
    table = table_parse.load_table(ROWS_JSON)
    for row in table.rows:
        record = {k: v for k, v in row.model_dump().items()}
        assert row == type(row)(**record)


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 4096])
def test_chunk_boundaries_change_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    monkeypatch.setattr(table_parse, "_CHUNK", chunk)
    rng = random.Random(chunk)
    for i in range(60):
        body = "Result,Model,Scenario,Notes\n" + "".join(
            f"{rng.randint(1, 99)},llama2-70b-99,Offline,é€😀{'x' * rng.randint(0, 4)}\n" for _ in range(rng.randint(1, 5))
        )
        data = bytearray(body.encode())
        if i % 2:
            data[rng.randrange(len(data))] = rng.choice([0xFF, 0xC3, 0x80, 0xE2])
        if i % 3 == 0:
            data = bytearray(b"\xef\xbb\xbf") + data
        path = tmp_path / f"t{i}.csv"
        path.write_bytes(bytes(data))
        try:
            expected: object = ("ok", _whole_read(path))
        except UnusableInput as exc:
            expected = ("error", str(exc))
        try:
            got: object = ("ok", table_parse.load_table(path).model_dump())
        except UnusableInput as exc:
            got = ("error", str(exc))
        assert got == expected, bytes(data)


def _whole_read(path: Path) -> object:
    """The reference: decode whole (its error offsets), then parse the text."""
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UnusableInput(f"not UTF-8 text (byte {exc.start})", str(path)) from exc
    return table_parse._load_csv(path, io.StringIO(text), text[:4096], {}).model_dump()


def test_blank_and_undecodable_tables_are_refused_as_before(tmp_path: Path) -> None:
    blank = tmp_path / "blank.csv"
    blank.write_bytes(b" \n\t\n")
    with pytest.raises(UnusableInput, match="the table is empty"):
        table_parse.load_table(blank)
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"\xef\xbb\xbfa,b\n1,2\n\xff")
    with pytest.raises(UnusableInput, match=r"not UTF-8 text \(byte 8\)"):
        table_parse.load_table(bad)


def test_a_row_costs_a_bounded_number_of_bytes(tmp_path: Path) -> None:
    """About 1.2 KB of Python objects per row (it was 5 KB validated, with the file held whole)."""
    path = tmp_path / "t.csv"
    rows = 20_000
    _checker_csv(path, rows)
    tracemalloc.start()
    try:
        table = table_parse.load_table(path)
        current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(table.rows) == rows
    assert current / rows < 2_000, current / rows
    assert peak / rows < 2_500, peak / rows
