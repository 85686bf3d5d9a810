"""The argparse value types and option helpers ``run`` and ``sweep`` share: a bad value exits 2 before anything
starts, an enumerated option takes any case and comes out as ``--help`` spells it."""

from __future__ import annotations

import argparse
import functools
import math
from collections.abc import Callable, Sequence
from typing import Any, Protocol


class ArgumentAdder(Protocol):
    """A parser or one of its argument groups."""

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action: ...



@functools.cache  # one function per set of choices: run's and sweep's shared options stay equal, type included
def any_case(choices: tuple[str, ...]) -> Callable[[str], str]:
    """argparse type for an option with ``choices``: a value in any case becomes its spelling in ``choices``
    (``server`` -> ``Server``), so every later step, the run record and the tree's paths see one spelling; any
    other value is left as typed for argparse's ``choices`` check to refuse, naming the valid ones."""
    by_lower = {c.lower(): c for c in choices}

    def parse(text: str) -> str:
        return by_lower.get(text.strip().lower(), text)

    parse.__name__ = "choice"  # argparse names the type in an error ("invalid choice: ...")
    return parse


def add_choice(what: ArgumentAdder, flag: str, choices: Sequence[str], **kwargs: Any) -> argparse.Action:
    """An enumerated option, case-insensitive, its valid spellings in ``--help`` and in the refusal."""
    return what.add_argument(flag, type=any_case(tuple(choices)), choices=list(choices), **kwargs)


def int_at_least(low: int) -> Callable[[str], int]:
    """argparse type: a decimal integer >= low (a bad value exits 2 before anything starts)."""

    def parse(text: str) -> int:
        try:
            value = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{value} is less than {low}")
        return value

    parse.__name__ = f"integer >= {low}"
    return parse


MAX_SECONDS = 30 * 86400.0  # a deadline or duration beyond this is a typo (1e300 overflowed a timer: a traceback)


def positive_seconds(text: str) -> float:
    """argparse type: a finite number of seconds > 0, at most 30 days."""
    value = _positive_float(text)
    if value > MAX_SECONDS:
        raise argparse.ArgumentTypeError(f"{text} s is more than 30 days")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text} is not a positive finite number")
    return value


def positive_number(text: str) -> float:
    """argparse type: a finite number > 0."""
    return _positive_float(text)


POSITIVE_INT = int_at_least(1)
NON_NEGATIVE_INT = int_at_least(0)


def non_negative_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text} is not a finite number >= 0")
    return value
