"""The one YAML reader for untrusted files (a claim, an Endpoints ``config.yaml``): bounded in time and memory.

:func:`load_yaml` parses with :class:`BoundedYamlLoader`, a ``yaml.SafeLoader`` that

- refuses anchors and aliases (neither a recursive document nor a "billion laughs" expansion can be built);
- refuses nesting deeper than :data:`checker.safe_json.MAX_JSON_DEPTH` levels;
- refuses a mapping that names one key twice (PyYAML keeps the last value silently);
- resolves plain scalars as YAML 1.2's core schema does, not as YAML 1.1: ``true`` / ``false`` (``yes``, ``no``,
  ``on``, ``off`` stay text), ``null`` / ``~``, decimal integers, decimal floats and ``.inf`` / ``.nan``; a
  base-60 number (``59:59``, whose conversion is quadratic in its length), ``0x`` / ``0o`` / ``0b`` / ``0755``
  integers, ``1_000`` and timestamps stay text, so none is converted at all;
- refuses a number of more than :data:`checker.safe_json.MAX_NUMBER_DIGITS` characters (as :func:`parse_json`).

Every refusal is a :class:`YamlRefused` (a ``yaml.YAMLError``) with the 1-based line.
"""

from __future__ import annotations

import re
from collections.abc import Hashable
from typing import Any, cast

import yaml
from yaml.events import AliasEvent, CollectionStartEvent
from yaml.nodes import MappingNode, ScalarNode

from checker.safe_json import MAX_JSON_DEPTH, MAX_NUMBER_DIGITS


class YamlRefused(yaml.YAMLError):
    """A document the bounded loader refuses (alias, anchor, nesting, repeated key, long number); ``line``
    1-based (None where unknown)."""

    def __init__(self, problem: str, line: int | None) -> None:
        super().__init__(problem if line is None else f"{problem} (line {line})")
        self.problem = problem
        self.line = line


def _line(node_or_event: Any) -> int | None:
    mark = getattr(node_or_event, "start_mark", None)
    return mark.line + 1 if mark is not None else None


class BoundedYamlLoader(yaml.SafeLoader):
    """See the module docstring."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = cast(Any, self).peek_event()  # PyYAML's stubs leave it untyped
        if isinstance(event, AliasEvent):
            raise YamlRefused(
                f"YAML alias *{event.anchor} is not accepted (anchors and aliases can expand without bound); "
                "write the value out",
                _line(event),
            )
        anchor = getattr(event, "anchor", None)
        if anchor is not None:
            raise YamlRefused(f"YAML anchor &{anchor} is not accepted; write the value out", _line(event))
        nested = isinstance(event, CollectionStartEvent)
        if nested:
            self._depth += 1
            if self._depth > MAX_JSON_DEPTH:
                raise YamlRefused(f"nested deeper than {MAX_JSON_DEPTH} levels", _line(event))
        try:
            return super().compose_node(parent, index)
        finally:
            if nested:
                self._depth -= 1

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = key_node.value if isinstance(key_node, ScalarNode) else id(key_node)
            if key in seen:
                raise YamlRefused(
                    f"key {str(key)[:80]!r} appears twice in one mapping (which value counts is undefined)",
                    _line(key_node),
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _number(conv: type[int] | type[float]) -> Any:
    def construct(loader: BoundedYamlLoader, node: ScalarNode) -> int | float:
        text = str(node.value)
        if len(text) > MAX_NUMBER_DIGITS:
            raise YamlRefused(
                f"number too long: {len(text)} characters (at most {MAX_NUMBER_DIGITS} digits)", _line(node)
            )
        if conv is float:
            low = text.lower().lstrip("+-")
            if low in (".inf", ".nan"):
                value = float(low[1:])
                return -value if text.startswith("-") else value
        return conv(text)

    return construct


# YAML 1.2 core schema (https://yaml.org/spec/1.2.2/#1032-tag-resolution), decimal integers only
BoundedYamlLoader.yaml_implicit_resolvers = {}
for _tag, _pattern, _first in (
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    ("tag:yaml.org,2002:int", r"^[-+]?[0-9]+$", "-+0123456789"),
    (
        "tag:yaml.org,2002:float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        "-+0123456789.",
    ),
):
    BoundedYamlLoader.add_implicit_resolver(_tag, re.compile(_pattern), list(_first))
BoundedYamlLoader.add_constructor("tag:yaml.org,2002:int", _number(int))
BoundedYamlLoader.add_constructor("tag:yaml.org,2002:float", _number(float))


def load_yaml(text: str) -> Any:
    """Parse one YAML (or JSON) document with :class:`BoundedYamlLoader`; raises :class:`yaml.YAMLError`
    (:class:`YamlRefused` for what the bounds refuse)."""
    loader = BoundedYamlLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def yaml_error(exc: yaml.YAMLError) -> tuple[str, int | None]:
    """(what is wrong, its 1-based line) of an error :func:`load_yaml` raised."""
    if isinstance(exc, YamlRefused):
        return exc.problem, exc.line
    mark = getattr(exc, "problem_mark", None)
    return str(getattr(exc, "problem", None) or exc), (mark.line + 1 if mark is not None else None)
