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
    """Every violation of schema ``name`` as ``<json path>: <message>``, sorted by path."""
    validator = jsonschema.Draft202012Validator(load_schema(name))
    errors = []
    for err in validator.iter_errors(instance):
        where = "/".join(str(p) for p in err.absolute_path) or "(top level)"
        errors.append(f"{where}: {err.message}")
    return sorted(errors)
