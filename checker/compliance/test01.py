"""The TEST01 compliance test (accuracy of the sampled performance-mode log): its fallback comparison.

TEST01 passes on ``verify_accuracy.txt``'s ``TEST PASS``; where it does not (a non-deterministic SUT), the official
checker compares the accuracy script's output on the baseline (accuracy run) and on the compliance log
(``TEST01/accuracy/baseline_accuracy.txt``, ``compliance_accuracy.txt``): each metric within the round's delta
(``Config.get_delta_perc``: a percentage per accuracy class, 99 or 99.9).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

ACCURACY_FILES = ("baseline_accuracy.txt", "compliance_accuracy.txt")


def delta_pct(deltas: Mapping[str, float], model: str | None) -> float:
    """The allowed difference in percent for ``model`` (its 99.9 class where the round has one, else 99's)."""
    if (model or "").endswith("99.9") and "99.9" in deltas:
        return deltas["99.9"]
    return deltas.get("99", 1.0)


def first_value(pattern: str, text: str) -> float | None:
    """The metric of the first line ``pattern`` matches (group 1), None when none does or it is no number."""
    rx = re.compile(pattern)
    for line in text.splitlines():
        m = rx.match(line)
        if m:
            try:
                return float(m.group(1))
            except ValueError:
                return None
    return None


def difference_pct(baseline: float, compliance: float) -> float:
    """How far the baseline is from the compliance accuracy, in percent of the compliance one."""
    return abs(1 - baseline / compliance) * 100
