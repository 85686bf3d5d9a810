"""JSON parsed with bounds, for every file of a checked tree and every input the tools read: nesting deeper than
:data:`MAX_JSON_DEPTH`, a number of more than :data:`MAX_NUMBER_DIGITS` digits, a key given twice in one object and
malformed text are a :class:`JsonProblem` naming the line, never a recursion error or a slow conversion."""

from __future__ import annotations

import json
import math
import re
from typing import Any

# Deepest JSON / YAML nesting accepted. Every document the tools read is shallow (a LoadGen record 2 levels, a
# system description 2, summary_results.json 2, a GuideLLM benchmarks.json about 8); 100 stays far below Python's
# recursion limit (1,000), so no later recursive walk (jsonschema, pydantic, copying) can overflow on parsed data.
MAX_JSON_DEPTH = 100
# Longest number literal accepted (digits). A LoadGen counter is a uint64 (20 digits) and a float prints 17
# significant digits; 100 is far above every real value and far below a float's range (309 digits), so every
# accepted integer converts to a float and no arithmetic on one can be slow.
MAX_NUMBER_DIGITS = 100


class JsonProblem(ValueError):
    """JSON that cannot be used: malformed, nested too deeply, or an integer too long to convert.

    ``msg`` says why, ``lineno`` is the 1-based line where known (as :class:`json.JSONDecodeError`)."""

    def __init__(self, msg: str, lineno: int | None = None) -> None:
        super().__init__(msg if lineno is None else f"{msg} (line {lineno})")
        self.msg = msg
        self.lineno = lineno


_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')
# a number literal too long to accept, where JSON allows a value to start (for the line of the refusal)
_DIGITS = re.compile(r"(?<=[\s:,\[])-?[0-9][-+.eE0-9]{" + str(MAX_NUMBER_DIGITS) + ",}")


def _depth_line(text: str, max_depth: int) -> int | None:
    """The line where nesting first exceeds ``max_depth`` (only called for a document already refused)."""
    depth = 0
    for m in _JSON_TOKEN.finditer(text):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > max_depth:
                return _line_at(text, m.start())
        elif c in "]}":
            depth -= 1
    return None


def _line_at(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def json_depth_exceeds(value: Any, max_depth: int) -> bool:
    """True when ``value`` (parsed JSON) nests containers deeper than ``max_depth`` (iterative: no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict):
            if d > max_depth:
                return True
            stack.extend((c, d + 1) for c in v.values() if isinstance(c, dict | list))
        elif isinstance(v, list):
            if d > max_depth:
                return True
            stack.extend((c, d + 1) for c in v if isinstance(c, dict | list))
    return False


def non_finite_at(value: Any) -> str | None:
    """The JSON path (``tests/0/wall_s``) of the first NaN or infinity in ``value`` (parsed JSON: ``NaN``,
    ``Infinity`` and a literal beyond a float's range such as ``1e999`` all parse to one), None when there is none
    (iterative: no recursion)."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        v, where = stack.pop()
        if isinstance(v, float) and not math.isfinite(v):
            return where or "(top level)"
        if isinstance(v, dict):
            stack.extend((c, f"{where}/{k}" if where else str(k)) for k, c in reversed(v.items()))
        elif isinstance(v, list):
            stack.extend((c, f"{where}/{i}" if where else str(i)) for i, c in reversed(list(enumerate(v))))
    return None


class _Refused(ValueError):
    """Raised by a decoder hook; ``token`` is what to look for in the text to give the line."""

    def __init__(self, msg: str, token: re.Pattern[str]) -> None:
        super().__init__(msg)
        self.msg = msg
        self.token = token


def unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` that refuses an object naming one key twice (``json`` would keep the last value
    silently: a failing score first and a passing one last would read as passing)."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        key = ""
        for key, _ in pairs:
            if key in seen:
                break
            seen.add(key)
        raise _Refused(
            f"key {json.dumps(key[:80])} appears twice in one object (which value counts is undefined)",
            re.compile('"' + re.escape(json.dumps(key)[1:-1]) + r'"\s*:'),
        )
    return obj


def _number(kind: str) -> Any:
    conv = int if kind == "integer" else float

    def hook(s: str) -> Any:
        if len(s) > MAX_NUMBER_DIGITS:
            raise _Refused(
                f"number too long: {kind} of {len(s)} characters (at most {MAX_NUMBER_DIGITS} digits)",
                _DIGITS,
            )
        return conv(s)

    return hook


# json.loads' own settings (strict strings; NaN / Infinity accepted) plus the hooks above; the second keeps the
# last value of a repeated key, as json.loads (and so the official checker) does
_DECODER = json.JSONDecoder(
    object_pairs_hook=unique_object, parse_int=_number("integer"), parse_float=_number("float")
)
_DECODER_LAST = json.JSONDecoder(parse_int=_number("integer"), parse_float=_number("float"))


def _nth_line(text: str, token: re.Pattern[str], nth: int) -> int | None:
    for i, m in enumerate(token.finditer(text), start=1):
        if i >= nth:
            return _line_at(text, m.start())
    return None


def parse_json(text: str, *, max_depth: int = MAX_JSON_DEPTH, repeated_keys: bool = False) -> Any:
    """``json.loads`` with bounds; raises :class:`JsonProblem` (a ValueError) for every unusable document.

    Bounded in time and memory: the C decoder stops at Python's recursion limit (caught), a document with more
    opening brackets than ``max_depth`` is walked once, iteratively, to refuse deeper nesting, a number literal of
    more than :data:`MAX_NUMBER_DIGITS` digits is refused before it is converted (so none overflows a float or
    makes arithmetic slow), and so is an object with a key given twice (``repeated_keys``: keep the last value,
    as ``json.loads``); each with its line. ``NaN`` / ``Infinity`` are accepted as JSON values (LoadGen's writer
    may emit them); checks judge such values."""
    try:
        value = (_DECODER_LAST if repeated_keys else _DECODER).decode(text)
    except json.JSONDecodeError as exc:
        raise JsonProblem(exc.msg, exc.lineno) from None
    except RecursionError:
        raise JsonProblem(
            f"nested deeper than {max_depth} levels (brackets inside brackets)", _depth_line(text, max_depth)
        ) from None
    except _Refused as exc:
        # the line: the second occurrence of a key given twice, the first long digit run of a number
        raise JsonProblem(exc.msg, _nth_line(text, exc.token, 2 if exc.token is not _DIGITS else 1)) from None
    if (text.count("[") + text.count("{")) > max_depth and json_depth_exceeds(value, max_depth):
        raise JsonProblem(
            f"nested deeper than {max_depth} levels (brackets inside brackets)", _depth_line(text, max_depth)
        )
    return value
