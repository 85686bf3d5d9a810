"""A system description, ``<division>/<submitter>/systems/<system>.json``, as a typed record.

:func:`parse_system_desc` turns the file's text into a :class:`SystemDesc` (or a :class:`ReadProblem`: invalid
JSON, nesting too deep, an integer too long, not a JSON object); it never raises on bad input. The JSON goes through
:func:`checker.safe_io.json_read` (bounded depth, long integers refused), and the text comes from the safe reader
(size cap, UTF-8 checked), so a hostile file is a problem with a message, never a traceback.

Parse, then judge: the record only says what the file holds. A field the checks read has a typed attribute, ``None``
when the field is absent or its value is not of the type it should have ("not given"); what is wrong with it is
judged by :mod:`checker.checks.system` (SYS-*), which reads the read-only :attr:`SystemDesc.raw` mapping for the
schema (required fields, unknown fields, the exact value a message quotes). The official checkers' readings are kept:
``status`` is compared lower-cased without stripping (:attr:`SystemDesc.availability`), ``system_type`` exactly as
written, ``is_network`` as ``.lower() == "true"``, and a count is a whole number when ``int(value)`` gives its own
value (``8``, ``8.0`` or ``"8"``, as HEAD's summary computes ``int(number_of_nodes) * int(accelerators_per_node)``).
The summary CSV writes a field as ``str()`` of whatever JSON value it holds (:meth:`SystemDesc.shown`), so a
count written ``8.0`` stays ``8.0`` there, as in the official CSV.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from checker.safe_io import ReadProblem, json_read

# system_type as written -> the key of a benchmark's scenario table (Benchmark.scenario_set); the checks compare
# system_type exactly (SYS-TYPE), the key is looked up case-insensitively after stripping spaces at the ends
SYSTEM_TYPE_KEYS = {
    "datacenter": "datacenter",
    "edge": "edge",
    "datacenter,edge": "datacenter+edge",
    "edge,datacenter": "datacenter+edge",
}

NOT_AN_OBJECT = "not-an-object"  # ReadProblem.kind of a document that is valid JSON but not an object

def whole_number(v: Any) -> int | None:
    """``int(v)`` when it gives v's own whole value (an int, an integral float, a string ``int()`` accepts, as
    HEAD's summary converts the counts); None for anything else: a fraction, a bool (a flag is not a count), text."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return int(v) if v.is_integer() else None
    if isinstance(v, str):
        try:
            return int(v)
        except ValueError:
            return None
    return None


def _text(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def _is_network(v: Any) -> bool | None:
    """The official reading, ``value.lower() == "true"`` (no strip); a JSON boolean as it is; None otherwise."""
    if isinstance(v, str):
        return v.lower() == "true"
    if isinstance(v, bool):
        return v
    return None


def _power_only(v: Any) -> bool | None:
    """The official ``get_boolean`` (v5.1.1 submission_checker.py L1323-1335; log_result reads it at L2159-2160): a
    string is true only as ``"true"`` in any case (no strip: ``" true"``, ``"yes"`` and ``"1"`` are false), a JSON bool
    as it is, an int as ``bool(n)``; None when absent or null (the official False), or of another type (on which the
    official checker raises TypeError; SYS-FIELD-TYPE reports it)."""
    if isinstance(v, bool):
        return v
    if isinstance(v, str):
        return v.lower() == "true"
    if isinstance(v, int):
        return v != 0
    return None


@dataclass(frozen=True, slots=True)
class SystemDesc:
    """One parsed system description. Typed attributes: None when the field is absent or of the wrong type."""

    path: str  # the file, relative to the checked root
    raw: Mapping[str, Any]  # the JSON object as parsed (read-only at the top level): the schema, unmodelled fields
    submitter: str | None
    division: str | None
    status: str | None  # as written; availability: lower-cased
    system_type: str | None  # as written (datacenter, edge, "datacenter,edge")
    system_name: str | None
    is_network: bool | None  # the official .lower() == "true" of a string; a JSON boolean as it is
    number_of_nodes: int | None  # whole numbers (see whole_number): 8, 8.0 and "8" are 8
    accelerators_per_node: int | None
    accelerator_model_name: str | None
    host_processors_per_node: int | None
    host_processor_core_count: int | None
    host_processor_model_name: str | None
    framework: str | None
    operating_system: str | None
    hw_notes: str | None
    sw_notes: str | None
    system_power_only: bool | None  # see _power_only
    text: str = field(default="", repr=False, compare=False)  # the file's text, for line_of

    @property
    def availability(self) -> str | None:
        """``status`` lower-cased, not stripped (the official ``system_json.get('status').lower()``)."""
        return None if self.status is None else self.status.lower()

    @property
    def system_type_key(self) -> str | None:
        """The scenario-table key of ``system_type`` (``datacenter``, ``edge``, ``datacenter+edge``), None if none."""
        return None if self.system_type is None else SYSTEM_TYPE_KEYS.get(self.system_type.strip().lower())

    @property
    def power_only(self) -> bool:
        """``system_power_only`` says true: a power result's summary keeps only the power row."""
        return self.system_power_only is True

    def given(self, name: str) -> bool:
        """The field is present (with any value, null included)."""
        return name in self.raw

    def filled(self, name: str) -> bool:
        """The field is present with a value that is not empty: JSON truthiness, as the official checkers test
        ``if not value`` (``""``, ``0``, ``false``, ``null``, ``[]`` and ``{}`` are empty)."""
        return bool(self.raw.get(name))

    def text_of(self, name: str) -> str | None:
        """Any field's value when it is a string (None when absent or not a string)."""
        return _text(self.raw.get(name))

    def shown(self, name: str, absent: str = "None") -> str:
        """The field as the official summary CSV writes it: ``str()`` of its JSON value (``None`` for null), or
        ``absent`` when the field is not there."""
        return str(self.raw[name]) if name in self.raw else absent

    def line_of(self, name: str) -> int | None:
        """1-based line of the first ``"name":`` in the file's text (None when not found)."""
        if not self.text:
            return None
        pos = _key_position(self.text, name)
        return None if pos is None else self.text.count("\n", 0, pos) + 1


def _key_position(text: str, name: str) -> int | None:
    m = re.search(r'"' + re.escape(name) + r'"\s*:', text)
    return None if m is None else m.start()


def system_desc_from(obj: Mapping[str, Any], path: str, text: str = "") -> SystemDesc:
    """The record of an already parsed JSON object (``text``: the file's text, for line numbers)."""
    raw: Mapping[str, Any] = MappingProxyType(dict(obj))
    g = raw.get
    return SystemDesc(
        path=path,
        raw=raw,
        submitter=_text(g("submitter")),
        division=_text(g("division")),
        status=_text(g("status")),
        system_type=_text(g("system_type")),
        system_name=_text(g("system_name")),
        is_network=_is_network(g("is_network")),
        number_of_nodes=whole_number(g("number_of_nodes")),
        accelerators_per_node=whole_number(g("accelerators_per_node")),
        accelerator_model_name=_text(g("accelerator_model_name")),
        host_processors_per_node=whole_number(g("host_processors_per_node")),
        host_processor_core_count=whole_number(g("host_processor_core_count")),
        host_processor_model_name=_text(g("host_processor_model_name")),
        framework=_text(g("framework")),
        operating_system=_text(g("operating_system")),
        hw_notes=_text(g("hw_notes")),
        sw_notes=_text(g("sw_notes")),
        system_power_only=_power_only(g("system_power_only")),
        text=text,
    )


@dataclass(frozen=True, slots=True)
class SystemDescRead:
    """A system description file read and parsed: the record, or why there is none."""

    desc: SystemDesc | None
    problem: ReadProblem | None  # unreadable (safe reader), invalid JSON, or kind NOT_AN_OBJECT


def parse_system_desc(path: str, text: str) -> SystemDescRead:
    """Parse the text of the system description at ``path``; bad input is a problem, never an exception."""
    jr = json_read(path, text)
    if jr.problem is not None:
        return SystemDescRead(None, jr.problem)
    if not isinstance(jr.value, dict):
        return SystemDescRead(None, ReadProblem(path, NOT_AN_OBJECT, "system description is not a JSON object"))
    return SystemDescRead(system_desc_from(jr.value, path, text), None)
