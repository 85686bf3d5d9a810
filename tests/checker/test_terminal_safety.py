"""Nothing from an input reaches the terminal raw, and HTML shows bidirectional controls instead of obeying them.

Escape sequences (a title change, a screen clear, a fake green "ALL VALID", an OSC 8 link), C1 controls, bidi
overrides and megabytes of text in a claim, a table cell, an error message or a finding: what is printed is one
printable, bounded line (:func:`checker.printable.printable`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from checker.findings import Finding, Severity, UnusableInput
from checker.printable import MAX_SHOWN_CHARS, printable
from checker.report.html.markup import esc
from loadgen_sut.cli import main

ROWS = Path(__file__).resolve().parents[1] / "audit" / "fixtures" / "v51-rows.json"
HOSTILE = (
    "\x1b]0;owned\x07"  # set the window title
    "\x1b[2J\x1b[H"  # clear the screen
    "\x1b[32mALL VALID\x1b[0m"  # a fake green verdict
    "\x1b]8;;https://evil.example/\x1b\\link\x1b]8;;\x1b\\"  # an OSC 8 hyperlink
    "\x9b31m"  # CSI as one C1 character
    "\u202egnp.exe\u202c"  # a right-to-left override
    "\u200b\nfake line\r"
)
RAW = ("\x1b", "\x07", "\x9b", "\u202e", "\u200b", "\r")


def _clean(text: str) -> None:
    for ch in RAW:
        assert ch not in text, (ch, text[:300])


@given(st.text(max_size=300))
def test_printable_is_one_printable_line(text: str) -> None:
    shown = printable(text)
    assert shown.isprintable() and "\n" not in shown
    assert len(shown) <= MAX_SHOWN_CHARS + 40


def test_printable_cuts_long_text_and_says_so() -> None:
    assert printable("x" * 15_000_000).endswith("… (14,996,000 more characters)")
    assert printable("plain text") == "plain text"
    assert printable("a\nb", lines=True) == "a\nb" and printable("a\nb") == "a b"


def test_errors_and_findings_are_bounded_and_printable() -> None:
    exc = UnusableInput("bad value " + HOSTILE + "y" * 100_000, "dir/" + HOSTILE + ".json", 3)
    _clean(str(exc))
    assert len(str(exc)) < MAX_SHOWN_CHARS + 100
    f = Finding(rule="X-1", severity=Severity.ERROR, message="v=" + "z" * 15_000_000)
    assert len(f.message) < MAX_SHOWN_CHARS + 100 and "more characters" in f.message


def test_html_shows_bidi_and_control_characters() -> None:
    shown = str(esc("file\u202etxt.exe <b>&\x1b\x85\u2066\u200f"))
    for ch in ("\u202e", "\x1b", "\x85", "\u2066", "\u200f", "<b>"):
        assert ch not in shown
    assert "\\u202e" in shown and "\\x1b" in shown and "&lt;b&gt;" in shown


def test_claim_text_and_file_reach_the_terminal_clean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    claim = tmp_path / "claim.yaml"
    claim.write_text(
        json.dumps({"text": "We reached 27,000 tokens/s " + HOSTILE, "metric": "tokens/s " + HOSTILE}),
        encoding="utf-8",
    )
    code = main(["claim", str(claim), "--table", str(ROWS)])
    out = capsys.readouterr()
    assert code in (0, 1, 2)
    _clean(out.out + out.err)
    bad = tmp_path / ("bad" + "\x1b[2J" + ".yaml")
    bad.write_text("text: &a [*a]\n", encoding="utf-8")
    assert main(["claim", str(bad)]) == 2
    out = capsys.readouterr()
    _clean(out.out + out.err)
    assert "anchor" in out.err


def test_table_cells_reach_the_terminal_clean(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = json.loads(ROWS.read_text(encoding="utf-8"))
    rows[0]["Platform"] = HOSTILE
    rows[0]["Submitter"] = HOSTILE
    rows[1]["Scenario"] = HOSTILE
    table = tmp_path / "table.json"
    table.write_text(json.dumps(rows), encoding="utf-8")
    code = main(["table", str(table), "-v"])
    out = capsys.readouterr()
    assert code in (0, 1), out.err
    _clean(out.out + out.err)
