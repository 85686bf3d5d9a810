"""What one checker run produces: per-result entries and tree-level findings.

This is the boundary between the checks (which fill it) and the reports (terminal, JSON,
summary CSV, JUnit), which only read it.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from checker.findings import Finding, Severity

# The official v5.1 checker's summary CSV header (28 columns, in order).
SUMMARY_CSV_COLUMNS: tuple[str, ...] = (
    "Organization",
    "Availability",
    "Division",
    "SystemType",
    "SystemName",
    "Platform",
    "Model",
    "MlperfModel",
    "Scenario",
    "Result",
    "Accuracy",
    "number_of_nodes",
    "host_processor_model_name",
    "host_processors_per_node",
    "host_processor_core_count",
    "accelerator_model_name",
    "accelerators_per_node",
    "Location",
    "framework",
    "operating_system",
    "notes",
    "compliance",
    "errors",
    "version",
    "inferred",
    "has_power",
    "Units",
    "weight_data_types",
)


class SummaryRow(BaseModel):
    """One row of the official-compatible summary CSV, values as the official checker writes them.

    ``values`` maps every column of :data:`SUMMARY_CSV_COLUMNS` to its string value.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    values: dict[str, str]


class ResultEntry(BaseModel):
    """One ``<division>/<submitter>/results/<system>/<benchmark>/<scenario>`` directory."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str  # as on disk, relative to the checked root
    division: str
    submitter: str
    system: str
    benchmark: str  # directory name
    mlperf_model: str | None  # resolved benchmark of the round, None when unknown
    scenario: str  # directory name
    findings: tuple[Finding, ...] = ()
    summary: SummaryRow | None = None  # filled when the result's metric could be computed
    power_summary: SummaryRow | None = None  # the extra power row, for power results

    @property
    def valid(self) -> bool:
        return not any(f.severity is Severity.ERROR for f in self.findings)


class CheckReport(BaseModel):
    """A whole checker run."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    root: str
    round: str
    tool_version: str
    results: tuple[ResultEntry, ...] = ()
    # findings not tied to one result (tree, submitter, system level). A submitter- or
    # system-level ERROR that invalidates results is ALSO copied into each affected
    # ResultEntry.findings, so ResultEntry.valid alone decides a result's verdict.
    findings: tuple[Finding, ...] = Field(default_factory=tuple)
    unusable: bool = False  # the input could not be checked at all (exit 2)
