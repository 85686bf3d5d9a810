"""One result listed twice is found however the second copy is written, and a result ID is ASCII digits only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from checker.audit.table.duplicates import same_path, same_text


def _write(tmp_path: Path, rows: list[dict[str, Any]]) -> Path:
    path = tmp_path / "table.json"
    path.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("field", "disguise"),
    [
        ("Location", lambda v: v.replace("/results/", "/./results/", 1)),
        ("Location", lambda v: v.replace("/", "//", 1) + "/"),
        ("Location", lambda v: v.replace("/results/", "/results/x/../", 1)),
        ("Location", lambda v: v.upper()),
        ("Platform", lambda v: v[:2] + "\u200b" + v[2:]),  # a zero-width space
        ("Platform", lambda v: v[:2] + "\u2060" + v[2:] + "\u00ad"),  # word joiner, soft hyphen
        ("Platform", lambda v: "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in v)),  # full width
    ],
)
def test_a_disguised_second_copy_is_a_duplicate(
    audit: Any, rows_table: Path, tmp_path: Path, field: str, disguise: Any
) -> None:
    rows = json.loads(rows_table.read_text(encoding="utf-8"))
    copy = dict(rows[1])
    copy[field] = disguise(copy[field])
    if field == "Platform":  # the location no longer says it: the system, model and scenario do
        copy["Location"] = copy["Location"] + "-other"
    rows.append(copy)
    run = audit("table", str(_write(tmp_path, rows)))
    dup = run.findings("TABLE-DUPLICATE", "error")
    assert [d["scope"] for d in dup] == [f"row {len(rows)}"], run.out
    assert "as row 2" in dup[0]["message"]


def test_full_width_digits_are_not_a_result_id(audit: Any, rows_table: Path, tmp_path: Path) -> None:
    rows = json.loads(rows_table.read_text(encoding="utf-8"))
    rows[1]["ID"] = "".join(chr(ord(c) + 0xFEE0) if c.isdigit() else c for c in rows[1]["ID"])  # "５.１-０００１"
    run = audit("table", str(_write(tmp_path, rows)))
    ids = run.findings("TABLE-ID", "error")
    assert [f["scope"] for f in ids] == ["row 2"] and "not an official result ID" in ids[0]["message"]


def test_normal_forms() -> None:
    assert same_text("  H100\u200b  SXM ") == "h100 sxm"
    assert same_text("ＸＥ８６４０") == "xe8640"
    assert same_path("closed/A/./results//s/b/../b/") == "closed/a/results/s/b"
