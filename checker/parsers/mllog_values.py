"""How a value logged by LoadGen reads as a bool, an int or a float (a detail log's values are JSON, but a key may
be logged as a string, as a float with an integral value, or as a boolean)."""

from __future__ import annotations

import math
from typing import Any


def as_bool(v: Any) -> bool | None:
    if isinstance(v, bool):
        return v
    if isinstance(v, str):
        low = v.strip().lower()
        if low in ("true", "1", "yes"):
            return True
        if low in ("false", "0", "no"):
            return False
    if isinstance(v, int | float):
        return bool(v)
    return None


def as_int(v: Any) -> int | None:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return int(v) if v.is_integer() else None
    if isinstance(v, str):
        try:
            return int(v.strip())
        except ValueError:
            try:
                f = float(v.strip())
            except ValueError:
                return None
            return int(f) if f.is_integer() else None
    return None


def as_float(v: Any) -> float | None:
    """A logged value as a float: numbers, numeric strings ("NaN" too), booleans as 0/1; None otherwise."""
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, int):
        try:
            return float(v)
        except OverflowError:  # an integer beyond the float range: infinite for every check
            return math.inf if v > 0 else -math.inf
    if isinstance(v, float):
        return v
    if isinstance(v, str):
        try:
            return float(v.strip())
        except ValueError:
            return None
    return None
