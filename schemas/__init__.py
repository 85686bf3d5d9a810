"""JSON Schemas shipped with inference-audit, and a validator that names the file and field."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

import jsonschema


@cache
def load_schema(name: str) -> dict[str, Any]:
    """Load ``schemas/<name>.json`` (name without extension)."""
    text = (resources.files("schemas") / f"{name}.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


def schema_errors(instance: Any, name: str) -> list[str]:
    """Every violation of schema ``name`` as ``<json path>: <message>``, sorted by path.

    Where the failing (sub)schema carries ``"x-message": {<keyword>: <text>}`` (an annotation validators ignore),
    the message is that text followed by the value found, instead of jsonschema's generic wording
    (``... is not valid under any of the given schemas``).
    """
    validator = jsonschema.Draft202012Validator(load_schema(name))
    errors = []
    for err in validator.iter_errors(instance):
        where = "/".join(str(p) for p in err.absolute_path) or "(top level)"
        errors.append(f"{where}: {_message(err)}")
    return sorted(errors)


def _message(err: jsonschema.ValidationError) -> str:
    hints = err.schema.get("x-message") if isinstance(err.schema, dict) else None
    hint = hints.get(str(err.validator)) if isinstance(hints, dict) else None
    if not isinstance(hint, str):
        return str(err.message)
    found = repr(err.instance)
    return f"{hint} (found {found if len(found) <= 80 else found[:77] + '...'})"
