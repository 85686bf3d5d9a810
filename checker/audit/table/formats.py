"""Published table formats, as data: how each names its columns and how it is recognised.

A format is recognised by the columns every row has (``detect``); ``columns`` maps its column names to the
canonical fields of :mod:`checker.audit.table.model`; ``informational`` names columns kept in ``extra`` without
being judged. A later round's table that renames columns is read by adding an entry here (or, for a one-off
table, with ``--map FIELD=COLUMN``); no code changes.

``benchmark`` / ``used_model``: the HEAD checker writes ``Model`` = the benchmark directory and ``MlperfModel`` =
``get_mlperf_model(Model)``, which in the v6.1 publication is sometimes a display name (``VLM``, ``text_to_video``,
``agentic edge``). The benchmark is taken from ``MlperfModel`` when it names a benchmark of the round, else from
``Model`` (:func:`checker.audit.table.checks.row_benchmark`) — for the CSV and the JSON alike.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TableFormatSpec:
    name: str  # TableFormat value
    detect: tuple[str, ...]  # columns that identify the format
    columns: dict[str, str]  # source column -> canonical field
    informational: tuple[str, ...] = ()
    description: str = ""


# HEAD checker summary (tools/submission/submission_checker/results.py, head list): the columns of its --csv
# summary; the v6.1 summary.json is the same, exported as a JSON object keyed "0", "1", ... (one object per row;
# no result-ID column).
CHECKER_HEAD_COLUMNS: dict[str, str] = {
    "Organization": "submitter",
    "Availability": "availability",
    "Division": "division",
    "SystemType": "suite",
    "SystemName": "system",
    "Platform": "platform",
    "Model": "used_model",
    "MlperfModel": "benchmark",
    "Scenario": "scenario",
    "Result": "result",
    "Accuracy": "accuracy",
    "number_of_nodes": "nodes",
    "accelerator_model_name": "accelerator",
    "accelerators_per_node": "accelerators_per_node",
    "Location": "location",
    "framework": "software",
    "notes": "notes",
    "version": "version",
    "inferred": "inferred",
    "has_power": "has_power",
    "Units": "units",
    "weight_data_types": "weight_data_types",
}
CHECKER_HEAD_INFORMATIONAL = (
    "host_processor_model_name",
    "host_processors_per_node",
    "host_processor_core_count",
    "total_accelerators",
    "operating_system",
    "compliance",
    "errors",
    "design_power_watts",
    "PrivateID",
)

FORMATS: tuple[TableFormatSpec, ...] = (
    TableFormatSpec(
        name="checker-json",
        detect=("Organization", "SystemName", "MlperfModel", "Scenario", "Result", "Units"),
        columns=CHECKER_HEAD_COLUMNS,
        informational=CHECKER_HEAD_INFORMATIONAL,
        description="HEAD checker summary exported as JSON (v6.1 summary.json: object keyed '0', '1', ...)",
    ),
)


def detect_format(keys: list[str] | set[str]) -> TableFormatSpec | None:
    present = set(keys)
    return next((f for f in FORMATS if set(f.detect) <= present), None)
