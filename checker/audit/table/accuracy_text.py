"""The accuracy string of a results table: ``"ROUGE1: 44.4542  ROUGE2: 22.0419  TOKENS_PER_SAMPLE: 301.1"``.

The official checker writes ``metric: value`` pairs separated by two spaces (catalogue E13); values keep the
text they had in ``accuracy.txt``. :func:`parse_accuracy_string` returns them in order with the printed text,
so a comparison can honour the published precision.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_PAIR = re.compile(r"([A-Za-z][A-Za-z0-9_.\-]*)\s*[:=]\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)")


@dataclass(frozen=True, slots=True)
class AccuracyValue:
    metric: str
    value: float
    text: str  # as printed

    @property
    def decimals(self) -> int:
        """Digits after the decimal point as printed (0 for integers or exponent notation)."""
        if "e" in self.text.lower() or "." not in self.text:
            return 0
        return len(self.text.split(".", 1)[1])


def parse_accuracy_string(text: str) -> tuple[AccuracyValue, ...]:
    """Every ``metric: value`` pair in order; an unparseable string gives ()."""
    return tuple(AccuracyValue(m.group(1), float(m.group(2)), m.group(2)) for m in _PAIR.finditer(text))


_BARE = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*$")


def bare_accuracy(text: str) -> float | None:
    """The score of an endpoints row, which publishes one number without a metric name (``"0.7845"``)."""
    m = _BARE.match(text)
    return float(m.group(1)) if m else None


def scale_to(value: float, target: float) -> tuple[float, str]:
    """``value`` on the scale of ``target``: endpoints scores are fractions (0-1) where LoadGen's accuracy.txt
    prints percentages (0-100), e.g. wan-2.2's vbench_score 0.7024 vs the target 69.78. Returns the value and
    the text to print."""
    if 0 <= value <= 1 and target > 1:
        return value * 100, f"{value:g} (x100 = {value * 100:.4g})"
    return value, f"{value:g}"


def values_match(printed: AccuracyValue, measured: float) -> bool:
    """True when ``measured`` rounds to the printed value at the printed precision (or within 1e-6 rel.)."""
    if printed.decimals:
        return abs(round(measured, printed.decimals) - printed.value) <= 0.51 * 10.0 ** (-printed.decimals)
    return abs(measured - printed.value) <= max(0.5, 1e-6 * abs(measured))
