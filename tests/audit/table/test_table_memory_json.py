"""``table --json`` streams its report (checker/cli/table.py): each row's record and every finding are
written, rendered as the report lists them, to temporary files as the rows are checked (``RowSpool``,
``FindingLog.spool``), and the document is assembled from them into the output by ``write_output_stream``
(the same temporary file, fsync and rename / hard link as ``write_output``).

These tests hold the streamed report to the one built whole (``json_document(report_dict(audit))`` of an audit
that held every row and finding), byte for byte, and bound what a row costs with ``--json``
(``bench/table_memory.py --table-arg=--json=OUT`` measures the process peak on 10^5 / 10^6 rows).
"""

from __future__ import annotations

import argparse
import json
import os
import tracemalloc
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from checker.audit.report_common import FindingLog, JsonSpool
from checker.audit.table.checks import TableChecks
from checker.audit.table.parse import open_table
from checker.audit.table.report import RowRecord, TableAudit, report_chunks, report_dict, row_record
from checker.cli import table as table_cli
from checker.findings import Finding, Severity, UnusableInput
from checker.report.output import json_document, plan_outputs, write_output_stream
from rules import load_round
from tests.audit.table.test_table_memory_stream import _table_csv


def _held_document(path: Path, select: list[str], ignore: list[str]) -> bytes:
    """The reference: every row record and finding held, the report built as one dict and dumped at once."""
    source = open_table(path)
    rnd = load_round("v5.1")
    log = FindingLog(keep_all=True, select=select, ignore=ignore)
    checks = TableChecks(source.header, rnd, new_log=log.new)
    records: list[RowRecord] = []
    for row in source.rows():
        log.extend(checks.add(row))
        records.append(row_record(row, None))
    checks.finish(source.rows, log)
    audit = TableAudit(source.header, rnd.name, "--round", log, None, 0.0, len(records), tuple(records))
    held = json_document(report_dict(audit))
    assert b"".join(report_chunks(audit)) == held  # the chunks of a held audit are the held document too
    return held


@pytest.mark.parametrize(
    "argv", [(), ("-v",), ("--select", "TABLE-ACCURACY"), ("--ignore", "TABLE-DERIVED"), ("--select", "TABLE-POWER")]
)
def test_streamed_json_report_is_byte_identical(tmp_path: Path, audit: Any, argv: tuple[str, ...]) -> None:
    path = tmp_path / "t.csv"
    _table_csv(path, 700, seed=4)
    select = [argv[1]] if argv[:1] == ("--select",) else []
    ignore = [argv[1]] if argv[:1] == ("--ignore",) else []
    run = audit("table", str(path), "--round", "v5.1", "--rel-tol", "0", *argv)
    assert run.report is not None
    written = (tmp_path / "report-table.json").read_bytes()
    assert written == _held_document(path, select, ignore)
    text = audit("table", str(path), "--round", "v5.1", "--rel-tol", "0", *argv, json_report=False)
    assert text.out == run.out  # the terminal report does not depend on --json


def test_spooled_logs_extend_in_order() -> None:
    findings = [
        Finding(rule=r, severity=s, message=str(i), scope=f"row {i}")
        for i, (r, s) in enumerate((r, s) for r in ("A", "B") for s in Severity for _ in range(4))
    ]
    held = FindingLog(keep_all=True, ignore=["B"])
    spooled = FindingLog(keep_all=False, ignore=["B"], spool=True, warn_examples=1, info_examples=1)
    parts = [spooled.new() for _ in range(3)]
    assert all(p.spool is not None for p in parts)
    for i, f in enumerate(findings):
        held.add(f)
        (parts[i % 3] if i % 2 else spooled).add(f)
    for p in parts:
        spooled.extend(p)
    held_order = [f for i, f in enumerate(findings) if f.rule != "B" and not i % 2]
    held_order += [
        f for p in range(3) for i, f in enumerate(findings) if f.rule != "B" and i % 2 and i % 3 == p
    ]
    assert spooled.spool is not None
    items = json.loads(b"".join(spooled.spool.chunks()))
    assert items == [f.model_dump(mode="json") for f in held_order]
    assert len(spooled) == len(held) and spooled.counts() == held.counts()
    assert [f for f in spooled if f.severity is Severity.ERROR] == [
        f for f in held_order if f.severity is Severity.ERROR
    ]
    assert Counter(f.rule for f in spooled if f.severity is not Severity.ERROR) == {"A": 2}
    assert b"".join(JsonSpool().chunks()) == b"[]"


def test_stream_error_leaves_no_file(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    (target,) = plan_outputs([("--json", str(out))])

    def chunks() -> Iterator[bytes]:
        yield b"{\n"
        raise RuntimeError("a row could not be read")

    with pytest.raises(RuntimeError):
        write_output_stream(target, chunks())
    assert os.listdir(tmp_path) == []
    write_output_stream(target, iter([b"{", b"}\n"]))
    assert out.read_bytes() == b"{}\n"
    out.chmod(0o640)
    (again,) = plan_outputs([("--json", str(out))], force=True)
    write_output_stream(again, [b"[]\n"])
    assert out.read_bytes() == b"[]\n" and out.stat().st_mode & 0o777 == 0o640
    assert sorted(os.listdir(tmp_path)) == ["r.json"]
    with pytest.raises(UnusableInput, match="exists"):
        plan_outputs([("--json", str(out))])


def test_json_holds_no_more_than_the_text_report(tmp_path: Path) -> None:
    """With ``--json`` the rows' records and findings go to temporary files: the traced peak exceeds the one
    without ``--json`` by the read-back buffers (~2 MiB at most, whatever the rows), where building the report as
    one dict held ~3 KB a row more (24 MB on these 8,000 rows)."""
    rows = 8_000
    path = tmp_path / "t.csv"
    out = tmp_path / "r.json"
    _table_csv(path, rows, seed=2, clean=True)
    peaks = []
    for extra in ([], ["--json", str(out)]):
        parser = argparse.ArgumentParser()
        table_cli.add_arguments(parser)
        args = parser.parse_args([str(path), "--round", "v5.1", *extra])
        tracemalloc.start()
        try:
            code = table_cli.run(args)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert code == 0
        peaks.append(peak)
    report = json.loads(out.read_bytes())
    assert len(report["rows"]) == rows and len(report["findings"]) >= rows
    assert peaks[1] - peaks[0] < 3 * 2**20, peaks
