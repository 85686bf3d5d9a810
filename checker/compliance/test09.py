"""Re-verify the TEST09 compliance test (mean output length in performance mode) from its accuracy log.

``compliance/TEST09/run_verification.py`` decodes each logged sample's ``data`` as 4-byte little-endian token ids
(a trailing partial id is dropped; an entry without data counts 0 tokens), takes the mean over all logged entries
and passes when ``min_output_tokens <= mean <= max_output_tokens`` (both inclusive). :func:`verify_test09` repeats
that on the parsed entries; the bounds come from the rules data (the benchmark's TEST09 ``audit.config``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from checker.parsers.accuracy_log import AccuracyEntry

TOKEN_BYTES = 4  # run_verification.py decode_hex_to_tokens: int.from_bytes(4 bytes, little, signed)
MEAN_LINE = re.compile(r"^Mean output tokens:\s*([-+0-9.eE]+)\s*$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Test09Result:
    samples: int
    mean: float
    min_tokens: int
    max_tokens: int
    low: float
    high: float

    @property
    def passed(self) -> bool:
        return self.samples > 0 and self.low <= self.mean <= self.high


def token_length(entry: AccuracyEntry) -> int:
    return entry.data_nbytes // TOKEN_BYTES


def verify_test09(entries: Sequence[AccuracyEntry], low: float, high: float) -> Test09Result:
    lengths = [token_length(e) for e in entries]
    if not lengths:
        return Test09Result(0, 0.0, 0, 0, low, high)
    return Test09Result(len(lengths), sum(lengths) / len(lengths), min(lengths), max(lengths), low, high)


def reported_mean(verify_text: str) -> float | None:
    """The last ``Mean output tokens: X`` of ``verify_output_len.txt`` (printed with 2 decimals)."""
    found = MEAN_LINE.findall(verify_text)
    try:
        return float(found[-1]) if found else None
    except ValueError:
        return None
