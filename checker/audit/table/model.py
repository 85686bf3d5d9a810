"""Typed rows of a results table (the canonical row of ``schemas/table-row.json``).

A table is read from one of three shapes (see :mod:`checker.audit.table.parse`): the official
``summary_results.json``, the summary CSV the checker writes, or any CSV / JSON with a user column mapping.
Every shape becomes the same :class:`TableRow`; :attr:`ResultTable.columns` remembers which source column
each canonical field came from, so a finding can name the column as the user sees it.
"""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, ConfigDict, Field

# the units of a power row: the official summary writes a result with MLPerf power twice, its performance and then
# its power metric in these units (v5.1.1 checker L2195-2226, HEAD results.py:133-137)
POWER_UNITS = ("Watts", "millijoules")


class TableFormat(str, Enum):
    OFFICIAL_JSON = "official-json"  # mlcommons/inference_results_vX.Y/summary_results.json
    CHECKER_CSV = "checker-csv"  # the official submission checker's --csv summary
    CHECKER_JSON = (
        "checker-json"  # the HEAD checker's summary as JSON (v6.1 summary.json, keyed "0", "1", ...)
    )
    MAPPED = "mapped"  # any CSV / JSON, columns found by name or --map


# Canonical field -> (type, description). Order is the order of schemas/table-row.json.
CANONICAL_FIELDS: dict[str, str] = {
    "id": "result ID, e.g. 5.1-0001 (one per system; benchmark and scenario are separate columns)",
    "submitter": "submitting organization",
    "availability": "available / preview / rdi",
    "division": "closed / open / network",
    "suite": "datacenter / edge (the system type)",
    "system": "system name",
    "platform": "system description file name (directory under results/)",
    "benchmark": "the round's benchmark id (e.g. llama2-70b-99)",
    "used_model": "the model actually run (differs in Open)",
    "scenario": "Offline / Server / Interactive / SingleStream / MultiStream",
    "result": "the performance result",
    "units": "units of the result",
    "accuracy": "accuracy string, e.g. 'ROUGE1: 44.45  ROUGE2: 22.04 ...'",
    "nodes": "number of nodes",
    "accelerator": "accelerator model name",
    "accelerators_per_node": "accelerators per node",
    "location": "<division>/<submitter>/results/<platform>/<benchmark>/<scenario>",
    "software": "framework / software stack",
    "notes": "notes",
    "version": "round, e.g. v5.1",
    "inferred": "1 when the result was inferred from another scenario's run",
    "has_power": "true when MLPerf Power measured the system",
    "power_result": "measured system power result",
    "power_units": "Watts / millijoules",
    "weight_data_types": "weight data types",
}


class TableRow(BaseModel):
    """One row; every value as typed from the source, None where the column is absent or empty."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    row: int  # 1-based position among the table's rows
    line: int | None = None  # 1-based line in the source file where the row starts, when known
    id: str | None = None
    submitter: str | None = None
    availability: str | None = None
    division: str | None = None
    suite: str | None = None
    system: str | None = None
    platform: str | None = None
    benchmark: str | None = None
    used_model: str | None = None
    scenario: str | None = None
    result: float | None = None
    result_text: str | None = None  # the result as written (precision of the published value)
    units: str | None = None
    accuracy: str | None = None
    nodes: int | None = None
    accelerator: str | None = None
    accelerators_per_node: int | None = None
    location: str | None = None  # <division>/<submitter>/results/<system>/<benchmark>/<scenario>
    location_text: str | None = (
        None  # as published when it differs (``./closed/.../Offline/performance/run_1``)
    )
    software: str | None = None
    notes: str | None = None
    version: str | None = None
    inferred: bool | None = None
    has_power: bool | None = None
    power_result: float | None = None
    power_units: str | None = None
    weight_data_types: str | None = None
    extra: dict[str, str] = Field(default_factory=dict)  # non-canonical columns, by source name
    problems: tuple[str, ...] = ()  # values that could not be typed ("column 'a#': 'x' is not an integer")

    def label(self) -> str:
        """``row 12 (5.1-0001 llama2-70b-99 Offline)``; without an ID, ``row 12 (AMD 8xMI355X llama2-70b-99 Offline)``."""
        who = (self.id,) if self.id else (self.submitter, self.platform or self.system)
        parts = [p for p in (*who, self.benchmark, self.scenario) if p]
        return f"row {self.row}" + (f" ({' '.join(parts)})" if parts else "")

    def identity(self) -> str:
        """How a claim cites the row: its result ID, else organisation / system / model / scenario."""
        if self.id:
            return self.id
        return " / ".join(
            p or "?" for p in (self.submitter, self.system or self.platform, self.benchmark, self.scenario)
        )


class ResultTable(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str
    format: TableFormat
    columns: dict[str, str]  # canonical field -> source column name
    rows: tuple[TableRow, ...]

    def column(self, field: str) -> str:
        """The source column name of a canonical field (the field name itself when unmapped)."""
        return self.columns.get(field, field)
