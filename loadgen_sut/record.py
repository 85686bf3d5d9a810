"""The run record: one JSON file per run with everything needed to reproduce and judge it.

``RunRecord`` is the model; ``schemas/run-record.json`` is generated from it
(``python -m loadgen_sut.record --schema > schemas/run-record.json``) and a test keeps the two equal.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from checker.findings import Finding, Severity
from checker.report.atomic import write_atomic
from loadgen_sut.engines.base import EngineInfo
from loadgen_sut.settings import Override, TestSettingsModel

RECORD_SCHEMA_VERSION = 1
RECORD_FILE = "run-record.json"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Hardware(_Frozen):
    hostname: str
    os: str
    python: str
    cpu_model: str | None = None
    cpu_count: int | None = None
    memory_gib: float | None = None
    accelerators: tuple[str, ...] = ()


class LengthStats(_Frozen):
    count: int
    min: float | None = None
    max: float | None = None
    mean: float | None = None


class Percentile(_Frozen):
    """A percentile with the number of samples it is taken over (None = not measured)."""

    value: float | None
    count: int


class LoadGenResult(_Frozen):
    """What LoadGen's detail log says (None = not logged)."""

    result_validity: str | None = None
    early_stopping_met: bool | None = None
    min_duration_met: bool | None = None
    perf_constraints_met: bool | None = None
    invalid_reason: str | None = None
    num_errors: int = 0
    error_keys: tuple[str, ...] = ()
    result_key: str | None = None
    result_value: float | None = None
    ttft_p99_ns: Percentile | None = None
    tpot_p99_ns: Percentile | None = None
    query_count: int | None = None
    loadgen_version: str | None = None
    peak_target_qps: float | None = None  # find-peak mode: the highest VALID target QPS LoadGen found


class SutCounts(_Frozen):
    issued: int = 0
    completed: int = 0
    failed: int = 0
    failures_by_kind: dict[str, int] = Field(default_factory=dict)
    failure_examples: tuple[dict[str, Any], ...] = ()
    single_token_outputs: int = 0
    retokenized_outputs: int = 0
    output_tokens: int = 0
    duplicate_completions: int = 0


class LagStats(_Frozen):
    """A delay distribution in milliseconds: p50, p99 and max, all over ``count`` values (none: ``count`` 0)."""

    p50_ms: float | None = None
    p99_ms: float | None = None
    max_ms: float | None = None
    count: int = 0


class WorkerDiagnostics(_Frozen):
    """One HTTP client worker process of a test (``--client-workers``, ``loadgen_sut/client_workers.py``). None where
    not measured (a worker that died sent no report)."""

    worker: int
    pid: int | None = None
    samples: int  # handed to it by the LoadGen process
    died: str | None = None  # why it ended before the test did (None: it did not)
    dispatch_lag: LagStats  # of its samples: LoadGen's issue -> the request on the worker's socket (the hop included)
    receive_lag: LagStats | None = None
    loop_lag: LagStats | None = None
    process_cpu_s: float | None = None
    process_cpu_cores: float | None = None
    loop_thread_cpu_fraction: float | None = None
    loop_thread_wait_fraction: float | None = None
    involuntary_context_switches: int | None = None


class ClientDiagnostics(_Frozen):
    """How the client (the SUT process: LoadGen's threads, its event loop, the engine client) kept up during one
    LoadGen test, measured by the test process (``loadgen_sut/client_diag.py`` says how; docs/run.md "Client
    self-diagnostics"). None where not measured."""

    dispatch_lag: LagStats  # per sample: LoadGen's issue -> the request handed to the socket (count 0: no socket)
    receive_lag: LagStats | None = None  # probe: a fd readable -> the loop's callback for it ran
    loop_lag: LagStats | None = None  # probe: lateness of a periodic timer on the loop
    probe_interval_ms: float
    wall_s: float
    process_cpu_s: float  # user + system CPU of the whole process over the test (LoadGen's threads included)
    process_cpu_cores: float  # process_cpu_s / wall_s: cores' worth used on average
    usable_cpus: int  # CPUs the process may run on (its affinity mask)
    loop_thread_cpu_fraction: float | None = None  # the loop thread's CPU time / wall: share of one core
    loop_thread_wait_fraction: float | None = None  # the loop thread runnable but waiting for a CPU, / wall
    involuntary_context_switches: int | None = None  # of the process over the test (getrusage)
    machine_cpu_busy: tuple[float, ...] = ()  # per usable CPU: busy share over the test (/proc/stat), any process
    machine_cpu_saturated: bool | None = None  # every usable CPU at least 95 % busy
    # --client-workers N: the lags above over every worker, the CPU of the LoadGen process and its workers together,
    # the loop thread's share that of the busiest worker; each worker's own below
    client_workers: int = 0  # HTTP client worker processes (0: the client ran in the LoadGen process)
    workers: tuple[WorkerDiagnostics, ...] = ()
    loadgen_process_cpu_s: float | None = None  # the LoadGen process alone (with workers)
    reporter_thread_cpu_fraction: float | None = None  # its one thread that reports to LoadGen, share of one core


class TestRecord(_Frozen):
    __test__ = False  # not a pytest class

    name: str  # performance / accuracy / TEST06 / find-peak
    directory: str  # relative to the run directory
    status: str  # finished / engine_unavailable / setup_error / loadgen_error / crashed
    error: str | None = None
    loadgen: LoadGenResult | None = None
    sut: SutCounts = Field(default_factory=SutCounts)
    client_ttft_p99_ms: Percentile | None = None
    client_tpot_p99_ms: Percentile | None = None
    output_tokens: LengthStats | None = None
    wall_s: float | None = None
    process_cpu_s: float | None = None
    cpu_us_per_query: float | None = None
    event_loop: str | None = None  # the SUT's event loop, e.g. "uvloop 0.22.1" or "asyncio"
    issue_timer_slack_ns: int | None = None  # Linux timer slack of LoadGen's issue thread (None: not known)
    gc_frozen_objects: int | None = None  # objects moved out of the cyclic GC's reach before LoadGen started
    loadgen_settings: TestSettingsModel | None = None
    client: ClientDiagnostics | None = None  # None: not measured (an older record, or the test did not run)


TestStatus = Literal[
    "setup", "setup_error", "engine_unavailable", "finished", "loadgen_error", "deadline", "client_worker_died", "crashed"
]


class ProcessDataset(_Frozen):
    """The data set one test process loaded."""

    name: str
    samples: int
    simulated: bool


class SutResult(_Frozen):
    """``sut_result.json``: what a LoadGen test process (``loadgen_sut.lgtest``) reports to the runner, written by it
    with this model and read back with it (a file that does not validate is a crashed test, never an untyped dict).
    Only ``test`` and ``status`` are always there: a test that stopped in its setup has only ``error`` besides."""

    __test__ = False  # not a pytest class

    test: str
    status: TestStatus
    error: str | None = None
    engine: EngineInfo | None = None
    event_loop: str | None = None
    issue_timer_slack_ns: int | None = None
    gc_frozen_objects: int | None = None
    dataset: ProcessDataset | None = None
    input_tokens: LengthStats | None = None
    output_tokens: LengthStats | None = None
    loadgen_settings: TestSettingsModel | None = None
    settings_mismatches: tuple[Finding, ...] = ()
    loadgen_unavailable_settings: tuple[str, ...] = ()
    sut: SutCounts | None = None
    first_tokens: int | None = None  # first tokens the SUT reported to LoadGen (None: the test did not run)
    client_ttft_p99_ms: Percentile | None = None
    client_tpot_p99_ms: Percentile | None = None
    wall_s: float | None = None
    process_cpu_s: float | None = None
    cpu_us_per_query: float | None = None
    timeline: str | None = None  # the per-sample timeline's file name (None: not written)
    client_diagnostics: ClientDiagnostics | None = None


class DatasetRecord(_Frozen):
    """A data set as the run loaded it (``--dataset-limit`` applied) and the LoadGen tests that ran on it."""

    spec: str  # what the test processes loaded (an absolute path, ``kind:PATH`` or ``builtin``)
    name: str
    samples: int
    simulated: bool
    input_tokens: LengthStats | None = None
    tests: tuple[str, ...] = ()  # the run's tests on this data set, e.g. ("performance", "TEST09"); () in older records


VerdictStatus = Literal["VALID", "INVALID", "CLIENT_BOUND", "NOT_SUBMITTABLE", "INCOMPLETE"]

# ERROR findings with these rules mean the run did not finish (INCOMPLETE); any other ERROR makes it INVALID. Each RUN-*
# rule is registered by the module that emits it (inference-audit rules ids RULE names it).
INCOMPLETE_RULES = frozenset({"RUN-TEST-FAILED", "RUN-DEADLINE", "RUN-INTERRUPTED", "RUN-TEST-NOT-RUN"})
# an ERROR with this rule: the client, not the system, limited the measurement (CLIENT_BOUND, before INVALID)
CLIENT_BOUND_RULE = "RUN-CLIENT-BOUND"


def verdict_status(findings: Sequence[Finding]) -> VerdictStatus:
    """The run's status from its verdict findings (the one place it is derived).

    An ERROR finding with a rule of :data:`INCOMPLETE_RULES`: INCOMPLETE; else a :data:`CLIENT_BOUND_RULE` ERROR:
    CLIENT_BOUND (the client limited the measurement: what LoadGen measured, its validity included, is the
    client's; never VALID); else any other ERROR: INVALID; else a WARNING: NOT_SUBMITTABLE (a trial, a simulated
    engine, a non-compliant setting); else (INFO or none): VALID.
    """
    errors = [f for f in findings if f.severity is Severity.ERROR]
    if any(f.rule in INCOMPLETE_RULES for f in errors):
        return "INCOMPLETE"
    if any(f.rule == CLIENT_BOUND_RULE for f in errors):
        return "CLIENT_BOUND"
    if errors:
        return "INVALID"
    if any(f.severity is Severity.WARNING for f in findings):
        return "NOT_SUBMITTABLE"
    return "VALID"


class Verdict(_Frozen):
    """The run's judgement: ``findings`` (RUN-* rules) say why; ``status`` is :func:`verdict_status` of them.

    ``reasons`` are the findings' messages, kept for readers of older records (which have no ``findings``).
    """

    status: VerdictStatus
    reasons: tuple[str, ...] = ()
    findings: tuple[Finding, ...] = ()

    @classmethod
    def of(cls, findings: Sequence[Finding]) -> Verdict:
        return cls(status=verdict_status(findings), reasons=tuple(f.message for f in findings), findings=tuple(findings))


class Test07Record(_Frozen):
    """TEST07 (accuracy in performance mode) as verified after its run (``loadgen_sut.compliance.verify_test07_run``)."""

    __test__ = False  # not a pytest class

    passed: bool  # what verify_accuracy.txt says: the parsed score >= the threshold
    score: float | None  # the first score-pattern match in the accuracy evaluation's output (None: none)
    threshold: float
    score_pattern: str
    samples_logged: int  # entries of TEST07's accuracy log
    samples_scored: int  # distinct qsl_idx scored (0 when the evaluation failed)
    dataset: str
    dataset_samples: int
    missing_samples: int | None  # data-set samples with no logged output (None: not scored)
    required_samples: int | None  # the test's data set size in the rules data (Benchmark.test07_sample_count)
    simulated: bool
    evaluation_error: str | None = None  # why the accuracy evaluation produced no score
    audit_config: str  # the audit.config text LoadGen read
    audit_problems: tuple[str, ...] = ()  # what the detail log shows against the audit.config (checker.compliance.audit_run)
    verify_file: str  # verify_accuracy.txt, relative to the run directory


class Test09Record(_Frozen):
    """TEST09 (mean output length in performance mode) as verified after its run (``verify_test09_run``)."""

    __test__ = False  # not a pytest class

    passed: bool  # low <= mean <= high over the logged samples (what verify_output_len.txt says)
    samples: int  # logged samples (each counted, as run_verification.py counts them)
    mean_tokens: float | None  # None: no sample logged
    min_tokens: int | None
    max_tokens: int | None
    std_tokens: float | None  # population standard deviation, as run_verification.py prints it
    low: float
    high: float
    required_samples: int | None  # Benchmark.test09_sample_count
    audit_config: str
    audit_problems: tuple[str, ...] = ()
    verify_file: str  # verify_output_len.txt, relative to the run directory


class RunRecord(_Frozen):
    """One ``inference-audit run``."""

    schema_version: int = RECORD_SCHEMA_VERSION
    tool: str = "inference-audit"
    tool_version: str
    run_id: str
    created_utc: str
    simulated: bool
    command: tuple[str, ...]
    round: str
    benchmark: str
    scenario: str
    mode: str
    engine: EngineInfo | None = None
    generation: dict[str, Any] = Field(default_factory=dict)
    dataset: DatasetRecord | None = None  # the data set of the run's first test (every test's, without --test-dataset)
    # every data set the run's tests used, one per spec in test order, each with its tests (() in older records)
    datasets: tuple[DatasetRecord, ...] = ()
    hardware: Hardware
    loadgen_version: str | None = None
    settings: TestSettingsModel
    official_settings: TestSettingsModel
    overrides: tuple[Override, ...] = ()
    user_conf: str | None = None
    tests: tuple[TestRecord, ...] = ()
    accuracy: dict[str, Any] | None = None
    test06: dict[str, Any] | None = None
    test07: Test07Record | None = None
    test09: Test09Record | None = None
    submission_tree: str | None = None
    findings: tuple[Finding, ...] = ()  # preflight: what was found about the settings before the run
    verdict: Verdict  # what the run's tests showed (verdict.findings)

    def dataset_of(self, test: str) -> DatasetRecord | None:
        """The data set a test of the run ran on (an older record without ``datasets``: ``dataset``)."""
        for rec in self.datasets:
            if test in rec.tests:
                return rec
        return self.dataset if not self.datasets else None


def _cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def _memory_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / (1024 * 1024), 1)
    except (OSError, ValueError, IndexError):
        pass
    return None


def _accelerators() -> tuple[str, ...]:
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return ()
    try:
        out = subprocess.run(
            [exe, "--query-gpu=name,memory.total,driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ()
    return tuple(line.strip() for line in out.stdout.splitlines() if line.strip())


def detect_hardware() -> Hardware:
    return Hardware(
        hostname=platform.node(),
        os=f"{platform.system()} {platform.release()}",
        python=sys.version.split()[0],
        cpu_model=_cpu_model(),
        cpu_count=os.cpu_count(),
        memory_gib=_memory_gib(),
        accelerators=_accelerators(),
    )


def write_record(record: RunRecord, path: Path) -> None:
    """Write the run record through a random temporary beside it (:mod:`checker.report.atomic`: never a fixed
    ``.tmp`` name, so a planted file or symlink is neither written through nor removed)."""
    write_atomic(path, (record.model_dump_json(indent=2) + "\n").encode("utf-8"))


def record_json_schema() -> dict[str, Any]:
    schema = RunRecord.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://inference-audit/schemas/run-record.json"
    return schema


if __name__ == "__main__":
    if sys.argv[1:] == ["--schema"]:
        print(json.dumps(record_json_schema(), indent=2, sort_keys=True))
    else:
        print("usage: python -m loadgen_sut.record --schema", file=sys.stderr)
        sys.exit(2)
