"""Typed values read out of a peer tool's JSON: each reader asks for a number, a whole number, text or a flag, and
gets ``None`` where the file has nothing of that type (so "not recorded" is never a made-up value)."""

from __future__ import annotations

from typing import Any


def as_num(v: Any) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int | float):
        return float(v)
    try:
        return float(str(v))
    except ValueError:
        return None


def as_int(v: Any) -> int | None:
    """A whole number (NaN, an infinity or a fraction: None)."""
    n = as_num(v)
    return int(n) if n is not None and n.is_integer() else None


def as_text(v: Any) -> str | None:
    if v is None:
        return None
    if isinstance(v, list):
        v = ", ".join(str(x) for x in v if x is not None)
    s = str(v).strip()
    return s or None


def as_bool(v: Any) -> bool | None:
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v.strip().lower() in ("true", "1", "yes", "false", "0", "no"):
        return v.strip().lower() in ("true", "1", "yes")
    return None


def as_obj(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def as_list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def dig(obj: Any, *keys: str) -> Any:
    for k in keys:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(k)
    return obj


def find_key(obj: Any, key: str, depth: int = 0) -> Any:
    """First value of ``key`` anywhere in nested dicts (bounded depth)."""
    if depth > 6 or not isinstance(obj, dict):
        return None
    if key in obj:
        return obj[key]
    for v in obj.values():
        found = find_key(v, key, depth + 1)
        if found is not None:
            return found
    return None


def pairs_text(obj: dict[str, Any], sep: str = ":") -> str | None:
    """``{"ttft_ms": 100, "e2el_ms": None}`` -> ``"ttft_ms:100"`` (keys with a value, in file order)."""
    items = [
        f"{k}{sep}{v:g}" if isinstance(v, float) else f"{k}{sep}{v}" for k, v in obj.items() if v is not None
    ]
    return " ".join(items) or None
