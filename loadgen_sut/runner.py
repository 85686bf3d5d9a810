"""Run modes: performance, accuracy, submission (performance + accuracy + the compliance tests), find-peak.

The runner never runs LoadGen itself: it plans the run and judges its settings against the round
(:mod:`loadgen_sut.run.plan`, :mod:`loadgen_sut.run.preflight`), then starts one child process per LoadGen test
(``python -m loadgen_sut.lgtest``, to a wall-clock deadline: :mod:`loadgen_sut.run.child`) in that test's own clean
directory, runs the steps after each test (scoring, the compliance verifications: :mod:`loadgen_sut.run.steps`),
judges the run (:mod:`loadgen_sut.run.verdict`) and writes the run record. Nothing under ``--out`` is ever
overwritten: every run gets a new ``runs/<run_id>/`` directory.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from checker.findings import Finding, Severity, UnusableInput
from checker.version import tool_version
from loadgen_sut.compliance import compliance_audit_config
from loadgen_sut.datasets import Dataset
from loadgen_sut.engines.tokenizers import Tokenizer
from loadgen_sut.generation import GenerationPlan, generation_plan
from loadgen_sut.interrupts import how_stopped
from loadgen_sut.lgtest import AUDIT_CONFIG, EXIT_ENGINE_UNAVAILABLE, TestSpec
from loadgen_sut.mlperf_conf import MLPERF_CONF_FILE, compiled_mlperf_conf
from loadgen_sut.progress import PlannedLoad, about, audit_overrides, format_duration, planned_load
from loadgen_sut.record import RECORD_FILE, RunRecord, Verdict, detect_hardware, write_record
from loadgen_sut.run import child
from loadgen_sut.run.engine_probe import probe_engine
from loadgen_sut.run.plan import (
    RunRequest,
    TestDataset,
    absolute_paths,
    compliance_dataset_findings,
    dataset_records,
    dataset_specs,
    effective_conf_text,
    load_test_datasets,
    new_run_dir,
    planned_tests,
    refuse_chat_samples_without_chat_api,
    refuse_wrong_sized_datasets,
    resolve,
    say_datasets,
)
from loadgen_sut.run.preflight import loadgen_read_back, preflight
from loadgen_sut.run.steps import FinishedTest, Results, after_test
from loadgen_sut.run.verdict import judge_test, run_findings, say_findings
from loadgen_sut.settings import (
    PlannedSettings,
    RunMode,
    TestSettingsModel,
    gates_text,
    installed_loadgen_version,
)
from rules.models import Benchmark, Round, Scenario

Printer = Callable[[str], None]


@dataclass
class RunOutcome:
    record: RunRecord
    run_dir: Path
    dataset: Dataset | None = None  # the data set of the run's first test (with ``tokenizer``, which decodes it)
    tokenizer: Tokenizer | None = None
    findings: list[Finding] = field(default_factory=list)
    datasets: dict[str, Dataset] = field(default_factory=dict)  # test name -> the data set it ran on

    @property
    def valid(self) -> bool:
        return self.record.verdict.status == "VALID"


@dataclass(frozen=True)
class _Run:
    """One run as planned: what every test of it needs."""

    request: RunRequest
    where: tuple[Round, Benchmark, Scenario]
    planned: PlannedSettings
    test_data: dict[str, TestDataset]
    run_dir: Path
    conf_path: Path
    generation: GenerationPlan


def run(request: RunRequest, say: Printer = print) -> RunOutcome:
    """Run one benchmark/scenario in one mode; returns the record (also written to the run dir)."""
    request = absolute_paths(request)
    rnd, bench, scenario = resolve(request)
    specs = dataset_specs(request, bench)  # each test's data set: unknown tests, missing files refused here
    request.engine.validate_spec()
    conf_text = effective_conf_text(request)
    planned, findings = _checked_settings(request, (rnd, bench, scenario), conf_text, say)
    test_data = _checked_datasets(request, bench, scenario, specs, say)
    trial = compliance_dataset_findings(request, bench, test_data)  # submission-trial: warnings
    say_findings(trial, say)
    findings += trial
    # after every check of the input (those come first, engine or not): nothing listening, another model
    probe_engine(request.engine)

    new_dirs = [d for d in (request.out / "runs", request.out) if not d.exists()]
    run_id, run_dir = new_run_dir(request.out)
    results = Results()
    interrupted: KeyboardInterrupt | None = None
    try:
        conf_path = run_dir / "user.conf"
        conf_path.write_text(conf_text, encoding="utf-8")
        compiled_conf = compiled_mlperf_conf()
        if compiled_conf is not None:  # the mlperf.conf LoadGen applies, kept for the submission tree
            (run_dir / MLPERF_CONF_FILE).write_text(compiled_conf, encoding="utf-8")
        generation = generation_plan(  # the round's caps per LoadGen mode and its decoding (loadgen_sut.generation)
            bench,
            max_new_tokens=request.max_new_tokens,
            min_new_tokens=request.min_new_tokens,
            ignore_eos=request.ignore_eos,
        )
        say(f"  generation: {generation.describe()}")
        say(f"  run directory: {run_dir}")
        plan = _Run(request, (rnd, bench, scenario), planned, test_data, run_dir, conf_path, generation)
        try:
            _run_tests(plan, results, findings, say)
        except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM: the child stopped; keep a record of what ran
            if not results.started:
                raise
            interrupted = exc
            say(f"interrupted ({how_stopped(exc)}): writing the run record of what finished")
    except BaseException:
        if not results.started:  # refused or stopped before any LoadGen test: no run to keep
            _discard(run_dir, new_dirs)
            say(f"  no LoadGen test started: {run_dir} removed")
        raise

    stopped_by = how_stopped(interrupted) if interrupted else None
    record = _run_record(plan, run_id, conf_text, findings, results, stopped_by)
    write_record(record, run_dir / RECORD_FILE)
    say(f"verdict: {record.verdict.status}{' [SIMULATED ENGINE]' if record.simulated else ''}")
    say_findings(record.verdict.findings, say)
    say(f"run record: {run_dir / RECORD_FILE}")
    if interrupted:
        raise interrupted
    first = next(iter(test_data.values()))  # the run's first test's: RunRecord.dataset
    return RunOutcome(
        record=record,
        run_dir=run_dir,
        dataset=first.dataset,
        tokenizer=first.tokenizer,
        findings=findings,
        datasets={name: td.dataset for name, td in test_data.items()},
    )


def _discard(run_dir: Path, new_dirs: list[Path]) -> None:
    """Remove a run directory no test ran in, and the folders above it that this run created (when empty)."""
    shutil.rmtree(run_dir, ignore_errors=True)
    for d in new_dirs:  # deepest first; one that holds anything else stays
        with contextlib.suppress(OSError):
            d.rmdir()


def _checked_settings(
    request: RunRequest, where: tuple[Round, Benchmark, Scenario], conf_text: str, say: Printer
) -> tuple[PlannedSettings, list[Finding]]:
    """The settings the run will use and the preflight's findings, printed; refused on an ERROR."""
    rnd, bench, scenario = where
    planned, findings = preflight(request, rnd, bench, scenario, conf_text)
    label = " [SIMULATED ENGINE]" if request.engine.kind == "simulated" else ""
    say(f"inference-audit run{label}: {rnd.name} {gates_text(planned)}")
    for o in planned.overrides:
        flag = "" if o.compliant else "  <- NOT COMPLIANT"
        say(f"  user.conf line {o.entry.line}: {o.entry.text}{flag}")
    say_findings(findings, say)
    errors = [f for f in findings if f.severity is Severity.ERROR]
    if errors:
        raise UnusableInput(
            f"refusing to run: {len(errors)} error(s) above"
            + (" (a submission run must use compliant settings)" if request.mode is RunMode.SUBMISSION else "")
        )
    return planned, findings


def _checked_datasets(
    request: RunRequest, bench: Benchmark, scenario: Scenario, specs: dict[str, str], say: Printer
) -> dict[str, TestDataset]:
    """Each test's data set, loaded (the parent needs it for sizes, accuracy and TEST07 scoring, and its tokenizer for
    detokenizing); ``--mode submission`` refuses a data set of another size than the test's, every mode chats
    without a chat API."""
    test_data = load_test_datasets(request, specs)
    if request.mode is RunMode.SUBMISSION:
        refuse_wrong_sized_datasets(bench, scenario, test_data)
    for td in {td.spec: td for td in test_data.values()}.values():
        refuse_chat_samples_without_chat_api(td.dataset, request, td.spec)
    say_datasets(test_data, say)
    return test_data


def _run_tests(plan: _Run, results: Results, findings: list[Finding], say: Printer) -> None:
    """The run's LoadGen tests in order, each judged and followed by its steps, into ``results``; the first stops
    short of a finish that stops the run (no engine, a setup error, its deadline). Where LoadGen reads back other
    settings than the round's (before the first test), the findings say so (``findings``: the run record's)."""
    request, (rnd, bench, scenario) = plan.request, plan.where
    read_back: TestSettingsModel | None = None  # what LoadGen applies (the probe's answer, before the first test)
    for name, lg_mode, audit in planned_tests(request.mode, bench):
        test_dir = plan.run_dir / name
        test_dir.mkdir()
        td = plan.test_data[name]
        settings = plan.planned.effective.model_copy(update={"mode": lg_mode})
        spec = TestSpec(
            name=name,
            round_name=rnd.name,
            settings=settings,
            user_conf=str(plan.conf_path),
            dataset=td.spec,
            dataset_limit=request.dataset_limit,
            engine=request.engine,
            generation=plan.generation.for_mode(lg_mode),
            audit=audit,
            progress_interval_s=request.progress_interval_s,
        )
        spec_path = plan.run_dir / f"{name}.spec.json"
        spec_path.write_text(spec.model_dump_json(indent=2) + "\n", encoding="utf-8")
        if read_back is None:
            read_back, mismatches = loadgen_read_back(request, rnd, plan.planned, settings, plan.conf_path, say)
            findings += mismatches
            loads = {t.test: t for t in _planned_loads(plan, read_back)}
            _say_run_plan(request, list(loads.values()), say)
            _refuse_endless(list(loads.values()))
        if audit:
            (test_dir / AUDIT_CONFIG).write_text(_audit_config(plan, name, read_back), encoding="utf-8")
        deadline = request.deadline_s or child.loadgen_test_deadline_s(
            read_back.model_copy(update={"mode": lg_mode}), len(td.dataset.samples), request.engine
        )
        spec = spec.model_copy(update={"deadline_s": deadline})
        spec_path.write_text(spec.model_dump_json(indent=2) + "\n", encoding="utf-8")
        say(f"-- {name} ({lg_mode.value}), deadline {deadline:.0f} s --")
        say(f"  plan: {loads[name].describe()}")
        results.started = True  # from here the run directory holds a run, whatever happens
        rc, trec, sut_result = child.run_test(name, spec_path, test_dir, plan.run_dir, deadline, plan.where)
        if sut_result is not None and sut_result.engine is not None and results.engine is None:
            results.engine = sut_result.engine
        results.tests.append(trec)
        child.say_test_summary(trec, say)
        results.verdict += judge_test(trec)
        if rc == EXIT_ENGINE_UNAVAILABLE or trec.status in ("engine_unavailable", "setup_error", "deadline"):
            break
        if trec.status == "finished":
            after_test(FinishedTest(request, name, test_dir, plan.run_dir, td, bench, scenario), results, say)


LONG_RUN_S = 120.0  # a run planned longer than this without a user.conf says how to make a short trial


def _audit_config(plan: _Run, test: str, read_back: TestSettingsModel) -> str:
    """The audit.config of a compliance test of this run (written into its directory; its plan counts it)."""
    rnd, bench, _ = plan.where
    return compliance_audit_config(
        rnd,
        bench,
        test,
        dataset_samples=len(plan.test_data[test].dataset.samples),
        performance_sample_count=read_back.performance_sample_count,
    )


def _planned_loads(plan: _Run, read_back: TestSettingsModel) -> list[PlannedLoad]:
    """Each test's plan from the settings LoadGen read back, its mode, its data set and its audit.config."""
    out = []
    for name, lg_mode, audit in planned_tests(plan.request.mode, plan.where[1]):
        overrides = audit_overrides(_audit_config(plan, name, read_back)) if audit else None
        settings = read_back.model_copy(update={"mode": lg_mode})
        out.append(planned_load(settings, len(plan.test_data[name].dataset.samples), overrides, test=name))
    return out


MAX_PLANNED_S = 7 * 86400.0  # longer than any MLPerf test (the longest official minimums plan hours)


def _refuse_endless(loads: list[PlannedLoad]) -> None:
    """A test planned beyond a week is a setting's mistake (``target_qps = 1e-9``: 27,777,777 hours; 1e-300 crashed
    LoadGen): refused before it starts, with the rate that makes it so, rather than a run that never ends."""
    for t in loads:
        if not t.duration_s <= MAX_PLANNED_S:
            raise UnusableInput(
                f"the {t.test} test is planned to take {format_duration(t.duration_s)} "
                f"({t.describe()}): more than {format_duration(MAX_PLANNED_S)}, longer than any MLPerf test; "
                f"check the rate ({t.rate_source}) and the minimums in the user.conf"
            )


def _say_run_plan(request: RunRequest, loads: list[PlannedLoad], say: Printer) -> None:
    """Before the first test: how long each test and the whole run should take; a long run on the round's own
    settings (no user.conf) says how to make a short trial instead."""
    total_s = sum(t.duration_s for t in loads)
    parts = ", ".join(f"{t.test} {format_duration(t.duration_s)}" for t in loads)
    say(f"  planned: {parts}: {about(total_s)} in all at the planned rates")
    if request.user_conf is None and total_s > LONG_RUN_S:
        scn = loads[0].scenario
        trial = (
            "--user-conf FILE with '*.Offline.min_duration = 0' and '*.Offline.min_query_count = 100'"
            if scn is Scenario.OFFLINE
            else f"--target-qps N and --user-conf FILE with '*.{scn.value}.min_duration = 10000' and "
            f"'*.{scn.value}.min_query_count = 100'"
        )
        say(
            f"  no --user-conf: the round's official minimums, so this run takes about {format_duration(total_s)}. "
            f"For a short trial give {trial} (docs/run.md, 'Planned duration and progress')"
        )


def _run_record(
    plan: _Run, run_id: str, conf_text: str, findings: list[Finding], results: Results, interrupted: str | None
) -> RunRecord:
    """The run record of what ran; preflight errors refused the run before, so the settings' findings
    (``record.findings``) never decide the verdict."""
    request, (rnd, bench, scenario), planned = plan.request, plan.where, plan.planned
    simulated = request.engine.kind == "simulated"
    wanted = [name for name, _, _ in planned_tests(request.mode, bench)]
    verdict = Verdict.of(results.verdict + run_findings(request.mode, simulated, planned, wanted, results.tests, interrupted))
    datasets = dataset_records(plan.test_data)
    return RunRecord(
        tool_version=tool_version(),
        run_id=run_id,
        created_utc=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        simulated=simulated,
        command=request.command,
        round=rnd.name,
        benchmark=bench.name,
        scenario=scenario.value,
        mode=request.mode.value,
        engine=results.engine,
        generation=plan.generation.record(),
        dataset=datasets[0],
        datasets=datasets,
        hardware=detect_hardware(),
        loadgen_version=installed_loadgen_version(),
        settings=planned.effective,
        official_settings=planned.official,
        overrides=planned.overrides,
        user_conf=conf_text,
        tests=tuple(results.tests),
        accuracy=results.accuracy,
        test06=results.test06,
        test07=results.test07,
        test09=results.test09,
        findings=tuple(findings),
        verdict=verdict,
    )
