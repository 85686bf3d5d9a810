"""Typed claims (``schemas/claim.json``) and the results they rest on, once resolved.

A claim names the results it rests on (result IDs plus benchmark and scenario, rows of a table, numbers of one's
own, or result files of peer tools), the metric, the comparison and its wording (``text``), and optionally the
footnote it carries and the disclosures it makes. :class:`ResolvedResult` is one of those results after lookup
in the table (or reading of the peer file): everything the rules need, with None for "not stated".
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from checker.audit.peers.model import PeerRun
from checker.audit.table.model import TableRow
from rules.models import Scenario


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ServerMetric(str, Enum):
    COMPLETED = "completed"  # result_completed_samples_per_sec / result_completed_tokens_per_second
    SCHEDULED = "scheduled"  # result_scheduled_samples_per_sec


class ClaimResultSpec(_Model):
    """One entry of ``results:`` as written in the claim file."""

    id: str | None = None  # result ID (looked up in --table unless the entry gives its own result)
    row: int | None = Field(default=None, ge=1)  # a row of --table (1-based)
    file: str | None = None  # a peer-tool result file (GuideLLM, AIPerf, GenAI-Perf, vllm bench serve)
    benchmark: str | None = None
    scenario: str | None = None
    result: float | None = None
    units: str | None = None
    accelerators: int | None = Field(default=None, ge=1)  # total accelerator (chip) count of the system
    division: str | None = None
    availability: str | None = None
    version: str | None = None  # round, e.g. "5.1"
    suite: str | None = None
    submitter: str | None = None
    system: str | None = None
    source: str | None = None  # per-result: "mlcommons" or "own measurement"
    harness: str | None = (
        None  # for own numbers: "mlperf-loadgen" (an unverified MLPerf result) or a tool name
    )
    power_watts: float | None = Field(default=None, gt=0)
    power_basis: str | None = None  # "mlperf-power" (MLPerf Power workflow) or e.g. "tdp", "nvidia-smi"
    server_metric: ServerMetric | None = None
    metadata: dict[str, str | int | float | bool] = Field(default_factory=dict)  # reproducibility metadata

    @field_validator("version", "id", mode="before")
    @classmethod
    def _number_as_text(cls, v: Any) -> Any:
        return str(v) if isinstance(v, int | float) and not isinstance(v, bool) else v


class Claim(_Model):
    """A performance claim (``schemas/claim.json``)."""

    text: str = Field(min_length=1)
    results: tuple[ClaimResultSpec, ...] = ()
    metric: str | None = None  # e.g. "tokens/s per accelerator"; read from the text when absent
    source: str | None = None  # "mlcommons" or "own measurement" (default for entries without their own)
    comparison: str | None = None  # e.g. "1.5x"
    footnote: str | None = None  # the footnote the claim carries, when it has one
    open_deviations: tuple[str, ...] = ()  # how each Open result would not qualify as Closed (CMP-07)
    combination: str | None = None  # how a composite is combined (CMB-01)
    slo: str | None = None  # the SLO a goodput / latency claim is made under
    retrieved: str | None = None  # date the cited results were retrieved (for the citation)
    url: str | None = None  # where they were retrieved from

    @field_validator("comparison", mode="before")
    @classmethod
    def _number_as_text(cls, v: Any) -> Any:
        return str(v) if isinstance(v, int | float) and not isinstance(v, bool) else v


class Derivation(str, Enum):
    NONE = "none"
    PER_ACCELERATOR = "per-accelerator"
    PER_WATT = "per-watt"
    COST = "cost"
    COMPOSITE = "composite"


class Metric(_Model):
    """What the claim measures: a base quantity and how it is derived from the official metric."""

    text: str  # as written (claim's metric field, or the phrase found in the text)
    base: str | None  # tokens/s, samples/s, queries/s, latency, ttft, itl, tpot, goodput, or None
    derivations: tuple[Derivation, ...] = ()
    from_text: bool = False  # read from the text (the claim had no metric field)

    @property
    def derived(self) -> bool:
        return bool(self.derivations)


class Origin(str, Enum):
    TABLE = "table"  # a published row of --table
    GIVEN = "given"  # a number the claim gives itself
    PEER = "peer"  # a peer-tool result file


class ResolvedResult(_Model):
    index: int  # 1-based position in the claim's results
    label: str
    origin: Origin
    verified: bool  # from an MLCommons submission (published row)
    mlperf: bool  # an MLPerf benchmark result at all (verified or not)
    id: str | None = None
    benchmark: str | None = None
    scenario: Scenario | None = None
    version: str | None = None  # "5.1"
    division: str | None = None
    availability: str | None = None
    suite: str | None = None
    submitter: str | None = None
    system: str | None = None
    result: float | None = None
    units: str | None = None
    accelerators: int | None = None
    has_power: bool | None = None
    power_watts: float | None = None
    power_basis: str | None = None
    server_metric: ServerMetric | None = None
    row: TableRow | None = None
    peer: PeerRun | None = None
    metadata: dict[str, str] = Field(default_factory=dict)
