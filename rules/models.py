"""Typed models of one MLPerf Inference round's rules.

The data lives in ``rules/data/<round>.yaml`` (one file per round, sources cited beside each
group); :mod:`rules.registry` loads it into these models. Checks read these models only — no
round numbers appear in code.

Units are in the field names: ``_ns``, ``_ms``. A citation is ``SOURCE_ID:line`` (or a range),
where SOURCE_ID is a key of :attr:`Round.sources`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from typing import Literal

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
    server_target_latency_ns: int | None = None  # read it with target_latency_ns_for(scenario)
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
    # --- added by the rules data build (additive) ---
    interactive_target_latency_ns: int | None = None  # a separate Interactive bound (v6.1 qwen3-vl); see target_latency_ns_for
    accuracy_targets_by_scenario: dict[Scenario, tuple[AccuracyTarget, ...]] = Field(
        default_factory=dict
    )  # replaces accuracy_targets for that scenario when present
    accuracy_sample_count: int | None = None  # accuracy run size when it differs from dataset_size
    accuracy_sample_count_by_scenario: dict[Scenario, int] = Field(default_factory=dict)
    compliance_delta_pct_overrides: dict[str, float] = Field(default_factory=dict)  # TEST01 metric -> %
    min_duration_exempt: bool = False  # the checker skips the min-duration check (e2e-rag)
    min_new_tokens: int | None = None
    max_new_tokens_performance: int | None = None  # when the performance run has its own cap
    mlperf_conf_flags: dict[str, int] = Field(default_factory=dict)  # e.g. use_token_latencies: 1
    mlperf_conf_target_latency_ms: dict[Scenario, float] = Field(default_factory=dict)
    # mlperf.conf per-model percentile where it differs from Round.scenario_defaults
    target_latency_percentile_overrides: dict[Scenario, float] = Field(default_factory=dict)
    discrepancies: tuple[str, ...] = ()  # ids of facts-file discrepancies touching this benchmark
    # TEST06 re-verification: the model's end-of-sequence ids and the dtype of the output ids the reference SUT
    # returns to LoadGen. Empty / None: the official run_verification.py defaults (EOS 2, int32).
    test06_eos_token_ids: tuple[int, ...] = ()
    test06_token_dtype: str | None = None  # "int32" / "int64" (numpy dtype name)
    # TEST07 (accuracy in performance mode) and TEST09 (mean output length): the reference audit.config values
    test07_accuracy_threshold: float | None = None
    test07_score_pattern: str | None = None  # regex with one group: the score in verify_accuracy.txt
    test07_sample_count: int | None = None
    test09_min_output_tokens: float | None = None
    test09_max_output_tokens: float | None = None
    test09_sample_count: int | None = None
    # the accuracy evaluator family (loadgen_sut.scoring.evaluators.EVALUATORS); None: not scored by this tool
    evaluator: str | None = None
    # what the reference SUT hands QuerySamplesComplete, so what the accuracy log's "data" holds and the reference
    # evaluator reads: the output token ids (little-endian, int32 for most; the default) or the UTF-8 bytes of the
    # answer's text (qwen3-vl: task.py encodes the chat completion's content, evaluation.py decodes it as UTF-8)
    accuracy_log_format: Literal["token_ids", "utf8_text"] = "token_ids"
    # what the hash= line of the reference evaluator's accuracy.txt is the SHA-256 of: the accuracy log (the default,
    # as truncate_accuracy_log.py computes it) or its results line (qwen3-vl: evaluation.py hashes its {"f1": ...} line)
    accuracy_txt_hash: Literal["accuracy_log", "results_line"] = "accuracy_log"
    cites: dict[str, str] = Field(default_factory=dict)  # field name -> SOURCE_ID:line

    def target_latency_ns_for(self, scenario: Scenario | None) -> int | None:
        """The bound on a scenario's target latency (``effective_target_latency_ns``; the p99 latency of an endpoints
        run): the checker's ``latency-constraint`` of the benchmark. Interactive has its own where the round gives
        one (v6.1 qwen3-vl: 1.5 s against Server's 12 s, CHK_HEAD:256-259); else an Interactive run, which LoadGen
        runs as Server, is held to the Server bound. None: no bound (Offline, SingleStream, or none in the round)."""
        if scenario is Scenario.INTERACTIVE and self.interactive_target_latency_ns is not None:
            return self.interactive_target_latency_ns
        if scenario in (Scenario.SERVER, Scenario.INTERACTIVE):
            return self.server_target_latency_ns
        return None

    def accuracy_targets_for(self, scenario: Scenario | None = None) -> tuple[AccuracyTarget, ...]:
        """Lower bounds that apply to a scenario's accuracy run."""
        if scenario is not None and scenario in self.accuracy_targets_by_scenario:
            return self.accuracy_targets_by_scenario[scenario]
        return self.accuracy_targets

    def scenario_set(self, system_type: str) -> ScenarioSet | None:
        """Scenario rules for a system type; accepts "datacenter,edge" in either order."""
        key = system_type.strip().lower().replace(" ", "")
        if key in ("datacenter,edge", "edge,datacenter"):
            key = "datacenter+edge"
        return self.scenarios.get(key)

    def allowed_scenarios(self, system_type: str) -> tuple[Scenario, ...]:
        """Required and optional scenarios (closed division) for a system type."""
        sset = self.scenario_set(system_type)
        if sset is None:
            return ()
        return tuple(dict.fromkeys(sset.required + sset.optional))


class SystemDescriptionRules(Cited):
    """Required fields of ``systems/<system>.json``."""

    required_fields: tuple[str, ...]
    meaningful_fields: tuple[str, ...]  # must be non-empty
    network_fields: tuple[str, ...]
    power_fields: tuple[str, ...] = ()
    valid_status: tuple[str, ...] = ("available", "preview", "rdi")
    valid_system_types: tuple[str, ...] = ("datacenter", "edge", "datacenter,edge", "edge,datacenter")
    # counts an official checker of the round converts with int() while writing its summary (HEAD results.py:
    # total_accelerators = int(number_of_nodes) * int(accelerators_per_node)); () where none does (v4.1)
    summary_int_fields: tuple[str, ...] = ()
    summary_int_fields_cite: str | None = None


@dataclass(frozen=True, slots=True)
class ResultLocation:
    """Which result a path is for: the five names of ``<division>/<submitter>/results/<system>/<benchmark>/<scenario>``.

    ``benchmark`` and ``scenario`` are the directory names as written in the tree (the packager writes the round's
    benchmark name and the scenario's canonical spelling).
    """

    division: str
    submitter: str
    system: str
    benchmark: str
    scenario: str

    def fields(self) -> dict[str, str]:
        return {
            "division": self.division,
            "submitter": self.submitter,
            "system": self.system,
            "benchmark": self.benchmark,
            "scenario": self.scenario,
        }


class Layout(Cited):
    """Where each part of a submission lives in one round's tree: the single answer for the packager and the checker.

    Every ``*_dir`` / ``*_file`` is a path template relative to the repository root, with the placeholders
    ``{division} {submitter} {system} {benchmark} {scenario}`` (the official checker's ``*_PATH`` constants
    spell them the same way); ``measurements_json`` is a file name inside ``measurements_dir``.
    """

    result_dir: str = "{division}/{submitter}/results/{system}/{benchmark}/{scenario}"
    measurements_dir: str = "{division}/{submitter}/measurements/{system}/{benchmark}/{scenario}"
    measurements_json: str = "{system}_{scenario}.json"
    # v5.1.1 takes any ``{system}*.json`` in the measurement directory when the exact name is missing
    measurements_json_prefix_fallback: bool = True
    measurement_optional_files: tuple[str, ...] = ("mlperf.conf",)
    compliance_dir: str = "{division}/{submitter}/compliance/{system}/{benchmark}/{scenario}"
    system_file: str = "{division}/{submitter}/systems/{system}.json"
    code_dir: str = "{division}/{submitter}/code/{benchmark}"
    calibration_file: str = "{division}/{submitter}/documentation/calibration.md"
    # files of a compliance TESTxx directory the packager writes (relative to it) -> the run file it copies
    compliance_files: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    # what a result directory may hold besides performance/, accuracy/ and TESTxx/ (the measurement files when they
    # live there) and the suffixes of documents the official loader ignores there
    result_dir_document_suffixes: tuple[str, ...] = ()

    def path(self, template: str, loc: ResultLocation) -> str:
        return template.format(**loc.fields())

    def result_path(self, loc: ResultLocation) -> str:
        return self.path(self.result_dir, loc)

    def measurements_path(self, loc: ResultLocation) -> str:
        return self.path(self.measurements_dir, loc)

    def measurements_json_path(self, loc: ResultLocation) -> str:
        return f"{self.measurements_path(loc)}/{self.measurements_json.format(**loc.fields())}"

    def compliance_path(self, loc: ResultLocation) -> str:
        return self.path(self.compliance_dir, loc)

    def system_path(self, loc: ResultLocation) -> str:
        return self.path(self.system_file, loc)

    def code_path(self, loc: ResultLocation) -> str:
        return self.path(self.code_dir, loc)

    def calibration_path(self, loc: ResultLocation) -> str:
        return self.path(self.calibration_file, loc)

    # the paths of a submitter's parts above one result (a system, a benchmark), from the same templates
    def system_file_of(self, division: str, submitter: str, system: str) -> str:
        """``systems/<system>.json`` of a submitter: its system description."""
        return self.system_file.format(division=division, submitter=submitter, system=system)

    def benchmark_path(self, division: str, submitter: str, system: str, benchmark: str) -> str:
        """The directory holding a benchmark's scenario directories: the result directory's parent."""
        parent = self.result_dir.removesuffix("/{scenario}")
        return parent.format(division=division, submitter=submitter, system=system, benchmark=benchmark)

    def results_root(self, division: str, submitter: str) -> str:
        """A submitter's ``results/`` directory (every result directory is below it)."""
        return self._head(self.result_dir, "{system}").format(division=division, submitter=submitter)

    def systems_root(self, division: str, submitter: str) -> str:
        """A submitter's ``systems/`` directory (its system descriptions)."""
        return self._head(self.system_file, "{system}").format(division=division, submitter=submitter)

    def measurements_root(self, division: str, submitter: str) -> str:
        """A submitter's ``measurements/`` tree (v5.x; in v6.x the result directory holds the measurement files)."""
        return self._head(self.measurements_dir, "{system}").format(division=division, submitter=submitter)

    @staticmethod
    def _head(template: str, placeholder: str) -> str:
        """``template`` up to the directory before ``placeholder``."""
        return template[: template.index(placeholder)].rstrip("/")

    def measurements_system_path(self, division: str, submitter: str, system: str) -> str:
        """A system's directory of the submitter-level ``measurements/`` tree (v5.x)."""
        head = self.measurements_dir[: self.measurements_dir.index("{system}") + len("{system}")]
        return head.format(division=division, submitter=submitter, system=system)

    @property
    def measurements_in_result_dir(self) -> bool:
        """v6.x: user.conf, README.md, mlperf.conf and measurements.json sit in the result directory."""
        return self.measurements_dir == self.result_dir

    @property
    def compliance_in_result_dir(self) -> bool:
        """v6.x: TESTxx directories sit in the result directory (v5.x: under ``compliance/``)."""
        return self.compliance_dir == self.result_dir

    @property
    def has_measurements_tree(self) -> bool:
        """v5.x: a submitter-level ``measurements/`` tree."""
        return "/measurements/" in self.measurements_dir

    @property
    def code_root(self) -> str:
        """The submitter-relative code directory name (``code`` in v5.x, ``src`` from v6.x)."""
        rel = self.code_dir.removeprefix("{division}/{submitter}/")
        return rel.split("/", 1)[0]


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
    # --- added by the rules data build (additive) ---
    ignored_top_level: tuple[str, ...] = (".git", ".github", "assets")
    root_allowed_suffixes: tuple[str, ...] = (".md", ".pdf")
    power_run_files: tuple[str, ...] = ()
    power_dir_files: tuple[str, ...] = ()
    power_measure_file_patterns: tuple[str, ...] = ()
    compliance_performance_files: tuple[str, ...] = ()
    test01_accuracy_files: tuple[str, ...] = ()
    test01_fallback_accuracy_files: tuple[str, ...] = ()
    calibration_paths: tuple[str, ...] = ()  # where a closed/network submitter documents calibration; () = not required
    network_sut_name_substring: str | None = None
    layout: Layout = Field(default_factory=Layout)


class LoadgenRuns(Cited):
    """The ``mlcommons-loadgen`` releases a run of this round uses.

    LoadGen compiles mlperf.conf in, so a release belongs to one round: these are the releases whose compiled
    seeds are this round's (measured per release: the ``effective_*_rng_seed`` of a run's detail log) and whose
    ``TestSettings`` the harness drives. ``install`` is the release to install for the round.
    """

    releases: tuple[str, ...]
    install: str
    notes: tuple[str, ...] = ()

    def accepts(self, installed: str) -> bool:
        return installed in self.releases

    @property
    def pip_requirement(self) -> str:
        return f"mlcommons-loadgen=={self.install}"


class Round(_Model):
    """Everything one round demands."""

    name: str  # "v5.1"
    version: str  # "5.1" (as in result IDs and the CSV's version column: "v5.1")
    sources: dict[str, Source]
    loadgen_versions: tuple[str, ...]  # accepted LoadGen version prefixes, e.g. ("5.1",)
    loadgen_versions_cite: str | None = None
    # the releases a run of this round must use (the checker reads logs by loadgen_versions, the series the
    # round's published results were made with)
    loadgen_runs: LoadgenRuns | None = None
    endpoints_allowed_models: tuple[str, ...] = ()  # MLPerf Endpoints results the round accepts (v6.x)
    endpoints_cite: str | None = None
    # the benchmarks whose Endpoints accuracy score the official checker compares with the target (HEAD: one); this
    # tool judges every benchmark's and says where it goes beyond
    endpoints_accuracy_checked_models: tuple[str, ...] = ()
    endpoints_accuracy_cite: str | None = None
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
    # --- added by the rules data build (additive) ---
    checker: str | None = None  # which official checker (and --version) this round's data follows
    rules_source: str | None = None  # SOURCE_ID of the rules text
    mlperf_conf_source: str | None = None  # SOURCE_ID of mlperf.conf
    # official get_mlperf_model substring heuristics, tried in order: (substring, benchmark)
    alias_substrings: tuple[tuple[str, str], ...] = ()
    aliases_cite: str | None = None
    result_fields_cite: str | None = None
    units_cite: str | None = None
    acc_patterns_cite: str | None = None
    compliance_delta_pct_cite: str | None = None
    power_units: dict[Scenario, str] = Field(default_factory=dict)
    test05_seeds: Seeds | None = None

    @property
    def official_checker(self) -> str | None:
        """The official checker this round's data follows, as a finding names it: ``"HEAD"`` (the modular checker of
        mlcommons/inference HEAD) or the tag of ``submission_checker.py`` (``"v5.1.1"``, ``"v4.1"``); None where the
        data names none."""
        if self.checker is None:
            return None
        m = re.search(r"\btag (v[0-9][0-9.]*[0-9])(?![\w.])", self.checker)
        if m:
            return m.group(1)
        return "HEAD" if re.search(r"\(inference HEAD\)", self.checker) else None

    def accepts_loadgen(self, version: str) -> bool:
        """A LoadGen version seen in a log (``5.0.25``; ``5.1`` from a short header) is of a series the round accepts.

        ``loadgen_versions`` entries are series (``"5.0."``) or single releases (``"6.0.15"``); ``"5.0."`` matches
        ``5.0.25`` but not ``5.01``. The releases a *run* must use are :attr:`loadgen_runs`.
        """
        v = version.strip()
        for entry in self.loadgen_versions:
            p = entry.strip().rstrip(".")
            if v == p or v.startswith(p + ".") or (entry.endswith(".") and p.startswith(v + ".")):
                return True
        return False

    def result_key(self, bench: Benchmark | None, scenario: Scenario) -> str | None:
        """LoadGen key of a result run as ``scenario`` (the log's effective scenario).

        The benchmark's ``result_field_overrides`` (RESULT_FIELD_BENCHMARK_OVERWRITE: tokens/s for the LLMs), else
        the round's ``result_fields`` (RESULT_FIELD_NEW). Interactive falls back to the LoadGen Server key.
        """
        for scen in dict.fromkeys((scenario, scenario.loadgen_scenario)):
            if bench is not None and scen in bench.result_field_overrides:
                return bench.result_field_overrides[scen]
            if scen in self.result_fields:
                return self.result_fields[scen]
        return None

    def units_for(self, bench: Benchmark | None, scenario: Scenario) -> str | None:
        """Units the official checker writes for a result of ``scenario`` (the directory's scenario).

        The benchmark's ``units_overrides`` (SPECIAL_UNIT_DICT), else the round's ``units`` (UNIT_DICT);
        a scenario neither names falls back to its LoadGen scenario.
        """
        for scen in dict.fromkeys((scenario, scenario.loadgen_scenario)):
            if bench is not None and scen in bench.units_overrides:
                return bench.units_overrides[scen]
            if scen in self.units:
                return self.units[scen]
        return None

    def benchmark(self, name: str) -> Benchmark | None:
        """Look a benchmark up by name or alias (None when the round has no such benchmark).

        Order as the official checker's ``get_mlperf_model``: exact name, ``aliases``
        (model_mapping), then the substring heuristics (``mobilenet``/``efficientnet``/``resnet50``
        -> resnet, ``bert-99.9``/``bert-99``); finally the same steps case-insensitively.
        """
        found = self._lookup(name)
        if found is None and name != name.lower():
            found = self._lookup(name.lower())
        return found

    def resolve(self, name: str) -> str | None:
        """The benchmark name a directory/model name maps to, or None."""
        bench = self.benchmark(name)
        return bench.name if bench is not None else None

    def _lookup(self, name: str) -> Benchmark | None:
        if name in self.benchmarks:
            return self.benchmarks[name]
        target = self.aliases.get(name)
        if target is not None:
            return self.benchmarks.get(target)
        for needle, bench in self.alias_substrings:
            if needle in name:
                mapped = self.aliases.get(bench, bench)
                return self.benchmarks.get(mapped)
        return None
