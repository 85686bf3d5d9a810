"""Whole published rounds: the official verdict of every result, committed, and ours against it.

``tests/fixtures/rounds/<round>/official-verdicts.csv`` holds the official checker's verdict on every result of
the whole published round (written by ``bench/whole_round.py --write-verdicts`` from the official checker of the
round), ``deliberate.yaml`` the results where this tool differs on purpose, with the rules text that makes it right.
The data is checked for consistency always; our verdicts against it when the whole trees are present
(``INFERENCE_AUDIT_ROUNDS=/work/rounds``, holding ``v5.1/`` and ``v4.1/``).
"""

from __future__ import annotations

import csv
import os
import re
import sys
from pathlib import Path

import pytest

from checker.engine import check_tree
from checker.findings import Severity
from rules import load_round
from rules.registry import UnknownRound

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import whole_round as wr

ROUNDS = ["v5.1", "v4.1"]
# result directories of each published round (the official checkers' Results + NoResults at result level)
RESULTS = {"v5.1": 1449, "v4.1": 937}
OFFICIAL_VALID = {"v5.1": 1395, "v4.1": 867}
MAX_BYTES = 250_000
RESULT_PATH = re.compile(r"^(closed|open|network)/[^/]+/results/[^/]+/[^/]+/[^/]+$")
# a citation: a rules document (or the official tools' README) with a line range or a quoted passage
CITATION = re.compile(r"(\w+\.adoc|README|\.py)\b.*(RULES_HEAD:\d+(-\d+)?|:\d+(-\d+)?\b|'[^']+')")


@pytest.mark.parametrize("round_name", ROUNDS)
def test_verdict_csv_is_well_formed(round_name: str) -> None:
    path = wr.verdicts_path(round_name)
    assert path.stat().st_size < MAX_BYTES
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert tuple(rows[0]) == wr.VERDICTS_COLUMNS
    body = rows[1:]
    assert all(len(r) == len(wr.VERDICTS_COLUMNS) for r in body)
    paths = [r[0] for r in body]
    assert len(paths) == RESULTS[round_name] and paths == sorted(set(paths))
    assert all(RESULT_PATH.match(p) for p in paths), [p for p in paths if not RESULT_PATH.match(p)][:3]
    assert {r[1] for r in body} == {"valid", "invalid"}
    assert sum(1 for r in body if r[1] == "valid") == OFFICIAL_VALID[round_name]
    # every official rejection comes with the lines that say why; each line and their number capped
    assert all(r[2] for r in body if r[1] == "invalid")
    for r in body:
        lines = r[2].split(wr.JOIN) if r[2] else []
        assert len(lines) <= wr.MAX_LINES + 1 and all(len(ln) <= wr.MAX_LINE_CHARS for ln in lines), r[0]


@pytest.mark.parametrize("round_name", ROUNDS)
def test_deliberate_entries_are_official_disagreements_with_a_cited_rule(round_name: str) -> None:
    verdicts = wr.load_verdicts(wr.verdicts_path(round_name))
    deliberate = wr.load_deliberate(wr.deliberate_path(round_name))
    assert wr.deliberate_path(round_name).is_file()
    for path, d in deliberate.items():
        assert path in verdicts, path
        assert verdicts[path][0] == d.official, path
        # ours is the opposite: invalid (with our error rules) where the official checker says valid, and the
        # other way round
        assert d.official in ("valid", "invalid") and bool(d.rules) == (d.official == "valid"), path
        assert d.why.strip(), path
        assert CITATION.search(d.source), (path, d.source)


def test_official_log_parser_on_real_lines() -> None:
    """Lines as the v5.1.1 checker prints them (from its log of the whole v5.1 tree): results, a rejection, the
    power checker's report and traceback (no path of their own), a benchmark-level line."""
    res = "closed/Lenovo/results/SR780a_V3_B200SXMx8_TRT/llama3.1-405b/Offline"
    other = "closed/Dell/results/XE7740_L40S_PCIe_48GBx8_TRT/stable-diffusion-xl/Offline"
    log = "\n".join(
        [
            f"[2026-12-01 20:23:13,800 submission_checker.py:2552 INFO] Detected power logs for {res}",
            f"[2026-12-01 20:23:13,801 submission_checker.py:2686 ERROR] {res}/performance/power has file list "
            "mismatch ({'ptd_logs.txt'})",
            "[2026-12-01 20:23:13,846 power_checker.py:759 ERROR] Unhandled exeception:",
            "Traceback (most recent call last):",
            "FileNotFoundError: [Errno 2] No such file or directory: 'x/ptd_logs.txt'",
            "[2026-12-01 20:23:13,847 power_checker.py:766 ERROR] [ ] Check results checksum",
            f"[2026-12-01 20:23:09,728 submission_checker.py:2846 ERROR] {other} is OK but accuracy has issues",
            "[2026-12-01 20:23:09,729 submission_checker.py:2866 ERROR] closed/Dell/results/XE7740_L40S_PCIe_48GBx8"
            "_TRT/stable-diffusion-xl does not have all required scenarios, missing {'Offline'}",
            f"[2026-12-01 20:23:22,101 submission_checker.py:3399 INFO] Results {res} 9.5",
            f"[2026-12-01 20:23:22,102 submission_checker.py:3405 ERROR] NoResults {other}",
            "[2026-12-01 20:23:22,235 submission_checker.py:3538 ERROR] SUMMARY: submission has errors",
        ]
    )
    parsed = wr.parse_official(log)
    assert parsed.finished and parsed.valid == {res}
    assert wr.official_lines(parsed, res) == [
        f"{res}/performance/power has file list mismatch ({{'ptd_logs.txt'}})",
        "Unhandled exeception: ... FileNotFoundError: [Errno 2] No such file or directory: 'x/ptd_logs.txt'",
        "[ ] Check results checksum",
    ]
    assert wr.official_lines(parsed, other) == [
        f"{other} is OK but accuracy has issues",
        "closed/Dell/results/XE7740_L40S_PCIe_48GBx8_TRT/stable-diffusion-xl does not have all required scenarios, "
        "missing {'Offline'}",
    ]
    assert wr.scopes("closed/X/measurements/s/bm/Offline/s.json and closed/X/systems/s.json") == [
        "closed/X/results/s/bm/Offline",
        "closed/X/results/s",
    ]


def test_verdict_lines_are_cut_to_size() -> None:
    res = "closed/S/results/sys/bm/Offline"
    lines = [f"{res}/accuracy line {i} " + "x" * 300 for i in range(wr.MAX_LINES + 3)]
    parts = wr.cut(res, lines).split(wr.JOIN)
    assert len(parts) == wr.MAX_LINES + 1 and parts[-1] == "(+3 more lines)"
    assert all(p.startswith("<result>/accuracy line ") and len(p) == wr.MAX_LINE_CHARS for p in parts[:-1])
    assert wr.cut(res, [f"{res} is OK"]) == "<result> is OK"


def _whole_tree(round_name: str) -> Path:
    root = os.environ.get("INFERENCE_AUDIT_ROUNDS")
    if not root:
        pytest.skip(
            "INFERENCE_AUDIT_ROUNDS (a folder holding the whole published rounds v5.1/, v4.1/) is not set"
        )
    tree = Path(root) / round_name
    if not (tree / "closed").is_dir():
        pytest.skip(f"{tree}: no whole published round here")
    return tree


@pytest.mark.parametrize("round_name", ROUNDS)
def test_whole_round_verdicts_are_official_or_deliberate(round_name: str) -> None:
    tree = _whole_tree(round_name)
    try:
        rnd = load_round(round_name)
    except UnknownRound as exc:
        pytest.skip(f"rules/ has no round {round_name} yet ({exc})")
    verdicts = wr.load_verdicts(wr.verdicts_path(round_name))
    deliberate = wr.load_deliberate(wr.deliberate_path(round_name))
    report = check_tree(tree, rnd, workers=2)
    assert sorted(e.path for e in report.results) == sorted(verdicts)
    differ = {
        e.path: frozenset(f.rule for f in e.findings if f.severity is Severity.ERROR)
        for e in report.results
        if ("valid" if e.valid else "invalid") != verdicts[e.path][0]
    }
    assert differ == {p: d.rules for p, d in deliberate.items()}
