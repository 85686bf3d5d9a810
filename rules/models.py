"""Typed models of one MLPerf Inference round's rules.

The data lives in ``rules/data/<round>.yaml`` (one file per round, sources cited beside each
group); :mod:`rules.registry` loads it into these models. Checks read these models only — no
round numbers appear in code.

Units are in the field names: ``_ns``, ``_ms``. A citation is ``SOURCE_ID:line`` (or a range),
where SOURCE_ID is a key of :attr:`Round.sources`.
"""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Scenario(str, Enum):
    SINGLE_STREAM = "SingleStream"
    MULTI_STREAM = "MultiStream"
    SERVER = "Server"
    OFFLINE = "Offline"
    INTERACTIVE = "Interactive"

    @classmethod
    def parse(cls, name: str) -> Scenario | None:
        """Case-insensitive, as the official checker's SCENARIO_MAPPING."""
        low = name.strip().lower()
        for s in cls:
            if s.value.lower() == low:
                return s
        return None

    @property
    def loadgen_scenario(self) -> Scenario:
        """The LoadGen scenario that runs it (Interactive is Server traffic with stricter gates)."""
        return Scenario.SERVER if self is Scenario.INTERACTIVE else self


class Source(_Model):
    path: str
    provenance: str


class Cited(_Model):
    """Base for groups that carry their citation."""

    cite: str | None = None


class Seeds(Cited):
    qsl_rng_seed: int
    sample_index_rng_seed: int
    schedule_rng_seed: int


class ScenarioDefaults(Cited):
    """mlperf.conf ``*.<Scenario>.*`` defaults."""

    min_duration_ms: int
    target_latency_percentile: float
    samples_per_query: int | None = None
    min_query_count: int | None = None


class ScenarioSet(Cited):
    """Required and optional scenarios for one system type.

    ``one_of``: at least one of these must be submitted (valid) — the "Server or Interactive"
    rule of v5.1+.
    """

    required: tuple[Scenario, ...] = ()
    optional: tuple[Scenario, ...] = ()
    one_of: tuple[Scenario, ...] = ()


class TokenLatencyLimit(Cited):
    """LLM p99 gates; a run passes only if p99 TTFT < ttft_ms and p99 TPOT < tpot_ms (strict)."""

    ttft_ms: float
    tpot_ms: float


class AccuracyTarget(Cited):
    """``metric >= value`` (lower bound) or ``metric <= value`` (upper limit).

    ``value`` is ``reference * factor`` as the checker computes it.
    """

    metric: str
    value: float
    reference: float | None = None
    factor: float | None = None


class Benchmark(_Model):
    """One benchmark of a round (e.g. ``llama2-70b-99``)."""

    name: str
    categories: tuple[str, ...]  # datacenter / edge
    is_llm: bool = False
    # keyed by system type: "datacenter", "edge", "datacenter+edge"
    scenarios: dict[str, ScenarioSet]
    performance_sample_count: int | None = None
    dataset_size: int | None = None  # accuracy run must cover this many samples
    offline_min_samples_per_query: int | None = None
    min_query_count: dict[Scenario, int] = Field(default_factory=dict)  # enforced for non-ES scenarios
    server_target_latency_ns: int | None = None  # effective_target_latency_ns must be <=
    token_latency_limits: dict[Scenario, TokenLatencyLimit] = Field(default_factory=dict)
    accuracy_targets: tuple[AccuracyTarget, ...] = ()
    accuracy_upper_limits: tuple[AccuracyTarget, ...] = ()
    accuracy_cite: str | None = None
    equal_issue_required: bool = False
    use_token_latencies_required: bool = False
    compliance_tests: tuple[str, ...] = ()
    compliance_cite: str | None = None
    # LoadGen result key per scenario when it differs from Round.result_fields (tokens/s for LLMs)
    result_field_overrides: dict[Scenario, str] = Field(default_factory=dict)
    units_overrides: dict[Scenario, str] = Field(default_factory=dict)
    max_new_tokens: int | None = None
    decoding: str | None = None  # "greedy" or a sampling description
    mlperf_conf_model: str | None = None  # model key in mlperf.conf, e.g. "llama2-70b"
    mlperf_conf_interactive_model: str | None = None  # e.g. "llama2-70b-interactive"
    extra_accuracy_files: dict[str, tuple[str, ...]] = Field(default_factory=dict)  # SDXL images
    rules_text: dict[str, str] = Field(default_factory=dict)  # verbatim rules table cells, for display
    notes: tuple[str, ...] = ()


class SystemDescriptionRules(Cited):
    """Required fields of ``systems/<system>.json``."""

    required_fields: tuple[str, ...]
    meaningful_fields: tuple[str, ...]  # must be non-empty
    network_fields: tuple[str, ...]
    power_fields: tuple[str, ...] = ()
    valid_status: tuple[str, ...] = ("available", "preview", "rdi")
    valid_system_types: tuple[str, ...] = ("datacenter", "edge", "datacenter,edge", "edge,datacenter")


class StructureRules(Cited):
    divisions: tuple[str, ...] = ("closed", "open", "network")
    file_size_limit_mb: int = 50
    max_accuracy_log_bytes: int = 10240
    measurement_required_files: tuple[str, ...] = ("user.conf", "README.md")
    measurement_json_fields: tuple[str, ...] = ()
    performance_run_files: tuple[str, ...] = ("mlperf_log_summary.txt", "mlperf_log_detail.txt")
    performance_optional_files: tuple[str, ...] = ()
    accuracy_files: tuple[str, ...] = ()
    accuracy_optional_files: tuple[str, ...] = ()
    compliance_in_results_dir: bool = False  # v6.x layout: compliance under the results dir
    code_dir: str = "code"  # "src" from v6.x


class Round(_Model):
    """Everything one round demands."""

    name: str  # "v5.1"
    version: str  # "5.1" (as in result IDs and the CSV's version column: "v5.1")
    sources: dict[str, Source]
    loadgen_versions: tuple[str, ...]  # accepted LoadGen version prefixes, e.g. ("5.1",)
    loadgen_versions_cite: str | None = None
    seeds: Seeds
    scenario_defaults: dict[Scenario, ScenarioDefaults]
    min_duration_ms: int
    min_duration_cite: str | None = None
    early_stopping_scenarios: tuple[Scenario, ...]
    early_stopping_cite: str | None = None
    result_fields: dict[Scenario, str]  # default LoadGen result key per scenario
    units: dict[Scenario, str]  # default units per scenario for the summary CSV
    acc_patterns: dict[str, str]  # metric -> regex (re.match per line of accuracy.txt)
    compliance_delta_pct: dict[str, float] = Field(default_factory=dict)  # TEST01: "99" -> 1.0, "99.9" -> 0.1
    system: SystemDescriptionRules
    structure: StructureRules
    benchmarks: dict[str, Benchmark]
    aliases: dict[str, str] = Field(default_factory=dict)  # directory/model name -> benchmark
    notes: tuple[str, ...] = ()

    def benchmark(self, name: str) -> Benchmark | None:
        """Look a benchmark up by name or alias (None when the round has no such benchmark)."""
        if name in self.benchmarks:
            return self.benchmarks[name]
        target = self.aliases.get(name)
        return self.benchmarks.get(target) if target else None
