"""Re-verify the TEST07 compliance test (accuracy in performance mode) from ``verify_accuracy.txt``.

``compliance/TEST07/run_verification.py`` runs the benchmark's accuracy script on TEST07's accuracy log, writes
its output to ``verify_accuracy.txt``, takes the **first** match of ``--score-pattern`` (default
``'exact_match':\\s*([\\d.]+)``, ``re.search``) in that output as the score, and appends a summary::

    TEST07 Verification Summary
    Accuracy score: <score>
    Accuracy threshold: <threshold>
    Accuracy check pass: <score >= threshold>
    TEST PASS | TEST FAIL

Scoring needs the benchmark's evaluator and data set, so the score itself is not recomputed here; what is
re-verified is everything the file states: the score is the one the script output contains, the threshold is the
round's (rules data, the benchmark's TEST07 ``audit.config``), ``score >= threshold`` holds, and the PASS line agrees.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DEFAULT_SCORE_PATTERN = r"'exact_match':\s*([\d.]+)"  # run_verification.py --score-pattern default
SUMMARY_MARK = "TEST07 Verification Summary"
_SCORE = re.compile(r"^Accuracy score:\s*(\S+)\s*$", re.MULTILINE)
_THRESHOLD = re.compile(r"^Accuracy threshold:\s*(\S+)\s*$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Test07Report:
    """What a ``verify_accuracy.txt`` says."""

    output_score: (
        float | None
    )  # first score-pattern match in the accuracy script's output (before the summary)
    score: float | None  # "Accuracy score:" of the summary
    threshold: float | None  # "Accuracy threshold:"
    says_pass: bool  # a "TEST PASS" line
    has_summary: bool


def _float(m: re.Match[str] | None) -> float | None:
    if m is None:
        return None
    try:
        return float(m.group(1))
    except (ValueError, IndexError):
        return None


def parse_verify_accuracy(text: str, score_pattern: str = DEFAULT_SCORE_PATTERN) -> Test07Report:
    head, mark, tail = text.partition(SUMMARY_MARK)
    summary = tail if mark else ""
    try:
        output_score = _float(re.search(score_pattern, head))
    except re.error:
        output_score = None
    return Test07Report(
        output_score=output_score,
        score=_float(_SCORE.search(summary)),
        threshold=_float(_THRESHOLD.search(summary)),
        says_pass=any(line.strip() == "TEST PASS" for line in text.splitlines()),
        has_summary=bool(mark),
    )


def summary_problems(rep: Test07Report, threshold: float | None, path: str) -> list[tuple[str, str]]:
    """(problem, fix) for each way the summary of ``verify_accuracy.txt`` (at ``path``) is inconsistent with its own
    script output, the round's ``threshold`` (None: not in the rules data; the file's own is used) or its PASS line."""
    if not rep.has_summary or rep.score is None:
        return [(f"{path} has no '{SUMMARY_MARK}' with an 'Accuracy score'", "keep verify_accuracy.txt exactly as run_verification.py wrote it")]
    out: list[tuple[str, str]] = []
    if rep.output_score is not None and rep.output_score != rep.score:
        out.append(
            (
                f"the summary's score {rep.score:g} is not the accuracy script's output score {rep.output_score:g}",
                "keep verify_accuracy.txt exactly as written",
            )
        )
    if threshold is not None and rep.threshold is not None and rep.threshold < threshold:
        out.append(
            (
                f"verified against threshold {rep.threshold:g}, below the round's {threshold:g}",
                "run run_verification.py with the benchmark's audit.config",
            )
        )
    want = threshold if threshold is not None else rep.threshold
    if want is not None and not rep.score >= want:
        out.append(
            (
                f"score {rep.score:g} is below the threshold {want:g}"
                + (" although the file says TEST PASS" if rep.says_pass else ""),
                "fix the SUT's accuracy in performance mode and rerun TEST07",
            )
        )
    elif want is not None and not rep.says_pass:
        out.append((f"score {rep.score:g} >= {want:g} but no TEST PASS line", "rerun run_verification.py"))
    return out
