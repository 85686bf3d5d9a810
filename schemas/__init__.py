"""JSON Schemas shipped with inference-audit, and a validator that names the file and field."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from itertools import islice
from typing import Any

import jsonschema


@cache
def load_schema(name: str) -> dict[str, Any]:
    """Load ``schemas/<name>.json`` (name without extension)."""
    text = (resources.files("schemas") / f"{name}.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


def schema_errors(instance: Any, name: str, limit: int | None = None) -> list[str]:
    """Every violation of schema ``name`` as ``<json path>: <message>``, sorted by path (``limit``: the first
    ``limit`` the validator finds, sorted: a document with millions of bad items is not listed whole).

    Where the failing (sub)schema carries ``"x-message": {<keyword>: <text>}`` (an annotation validators ignore),
    the message is that text followed by the value found, instead of jsonschema's generic wording
    (``... is not valid under any of the given schemas``).
    """
    validator = jsonschema.Draft202012Validator(load_schema(name))
    errors = []
    for err in islice(validator.iter_errors(instance), limit):
        where = "/".join(str(p) for p in err.absolute_path) or "(top level)"
        errors.append(f"{where}: {_message(err)}")
    return sorted(errors)


MAX_SHOWN_ERRORS = 5  # a refusal names the first few problems: enough to see what is wrong, never a flood
MAX_ERROR_CHARS = 200  # jsonschema's message quotes the value found, which can be a whole document


def schema_refusal(instance: Any, name: str) -> str | None:
    """None when ``instance`` conforms to schema ``name``; else its first :data:`MAX_SHOWN_ERRORS` violations, each
    cut to :data:`MAX_ERROR_CHARS` characters, joined on one line (for an error that names the file)."""
    errors = schema_errors(instance, name, limit=MAX_SHOWN_ERRORS + 1)
    if not errors:
        return None
    shown = "; ".join(e if len(e) <= MAX_ERROR_CHARS else e[: MAX_ERROR_CHARS - 3] + "..."
                      for e in errors[:MAX_SHOWN_ERRORS])
    more = " (and more)" if len(errors) > MAX_SHOWN_ERRORS else ""
    return f"it does not conform to schemas/{name}.json: {shown}{more}"


def _message(err: jsonschema.ValidationError) -> str:
    hints = err.schema.get("x-message") if isinstance(err.schema, dict) else None
    hint = hints.get(str(err.validator)) if isinstance(hints, dict) else None
    if not isinstance(hint, str):
        return str(err.message)
    found = repr(err.instance)
    return f"{hint} (found {found if len(found) <= 80 else found[:77] + '...'})"
