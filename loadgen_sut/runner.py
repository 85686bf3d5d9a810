"""Run modes: performance, accuracy, submission (performance + accuracy + the compliance tests), find-peak.

The runner never runs LoadGen itself: it plans the settings, judges them against the round,
then starts one child process per LoadGen test (``python -m loadgen_sut.lgtest``) in that test's
own clean directory, reads LoadGen's logs back with the checker's parsers, scores accuracy and
TEST06 with the harness-data functions, and writes the run record. Nothing under ``--out`` is
ever overwritten: every run gets a new ``runs/<run_id>/`` directory.

Each LoadGen test runs in its own process to a wall-clock deadline (:mod:`loadgen_sut.run.child`).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from checker.checks.catalog import WARN, RuleInfo, register, registered_finding
from checker.compliance.audit_run import makes_it_not_the_test
from checker.findings import Finding, Severity, UnusableInput
from checker.version import tool_version
from loadgen_sut.compliance import (
    AUDIT_TESTS,
    TEST07,
    TEST09,
    compliance_audit_config,
    required_samples,
    verify_test06_run,
    verify_test07_run,
    verify_test09_run,
)
from loadgen_sut.datasets import BUILTIN_SPEC, Dataset, load_dataset
from loadgen_sut.engines.base import EngineInfo
from loadgen_sut.engines.factory import EngineSpec, build_tokenizer
from loadgen_sut.engines.simulated import simulated_vocabulary
from loadgen_sut.engines.tokenizers import Tokenizer
from loadgen_sut.generation import generation_plan
from loadgen_sut.lgtest import (
    AUDIT_CONFIG,
    EXIT_ENGINE_UNAVAILABLE,
    TestSpec,
)
from loadgen_sut.mlperf_conf import MLPERF_CONF_FILE, compiled_mlperf_conf
from loadgen_sut.record import (
    RECORD_FILE,
    DatasetRecord,
    LengthStats,
    RunRecord,
    Test07Record,
    Test09Record,
    TestRecord,
    Verdict,
    detect_hardware,
    write_record,
)
from loadgen_sut.run import child
from loadgen_sut.run.verdict import judge_test, run_findings, say_findings, simulated_engine
from loadgen_sut.scoring.code_exec import CodeExecution
from loadgen_sut.scoring.score import score_accuracy, write_accuracy_txt
from loadgen_sut.settings import (
    PlannedSettings,
    RunMode,
    TestMode,
    TestSettingsModel,
    UserConf,
    compare_with_loadgen,
    gates_text,
    installed_loadgen_version,
    loadgen_version_findings,
    override_findings,
    parse_user_conf_text,
    plan_settings,
)
from rules import load_round
from rules.models import Benchmark, Round, Scenario

# The RUN-* rules of the checks before a run and of the steps after each test (the verdict's own: loadgen_sut/run/verdict.py)
RULES = register(
    __name__,
    # before the run (preflight): ERRORs refuse --mode submission
    RuleInfo("RUN-MODE", "-", "find-peak on a scenario other than Server or Interactive"),
    RuleInfo(
        "RUN-CONF-INTERACTIVE", "-", "a user.conf line for the Interactive scenario, which LoadGen ignores (WARNING "
        "outside --mode submission)",
    ),
    RuleInfo(
        "RUN-DATASET", "-", "--mode submission on the built-in sample set or a --dataset-limit: each test needs its "
        "official data set",
    ),
    RuleInfo("RUN-GENERATION", "-", "--mode submission with a --max-new-tokens other than the round's"),
    # accuracy and the compliance tests
    RuleInfo("RUN-ACC-TOKENIZER", "-", "no tokenizer to detokenize the accuracy or TEST07 outputs (--tokenizer DIR)"),
    RuleInfo("RUN-TEST06-FAILED", "-", "the TEST06 verification failed (first tokens, EOS, output lengths)"),
    RuleInfo(
        "RUN-TEST07-FAILED", "-", "the TEST07 verification failed (WARNING in a trial on another data set than the "
        "test's)",
    ),
    RuleInfo("RUN-TEST07-COVERAGE", "-", "TEST07 logged no output for some samples of its data set"),
    RuleInfo(
        "RUN-TEST09-FAILED", "-", "the TEST09 verification failed (WARNING in a trial on another data set than the "
        "test's)",
    ),
    RuleInfo(
        "RUN-AUDIT-CONFIG", "-", "a TEST07/TEST09 detail log against its audit.config: not the test, or (WARNING in a "
        "trial) other sample counts",
    ),
    RuleInfo(
        "RUN-COMPLIANCE-DATASET", "-", "submission-trial: a compliance test run on another data set than its own", WARN
    ),
)
# the failed verification of each audit test that has a threshold
VERIFICATION_RULES = {TEST07: "RUN-TEST07-FAILED", TEST09: "RUN-TEST09-FAILED"}

Printer = Callable[[str], None]


@dataclass(frozen=True)
class RunRequest:
    round_name: str
    benchmark: str
    scenario: str
    mode: RunMode
    engine: EngineSpec
    out: Path
    dataset: str = "builtin"
    dataset_limit: int | None = None
    user_conf: Path | None = None
    extra_conf: tuple[str, ...] = ()  # lines appended to the run's user.conf (e.g. from --target-qps)
    max_new_tokens: int | None = None
    min_new_tokens: int | None = 2
    ignore_eos: bool = False
    progress_interval_s: float = 5.0
    command: tuple[str, ...] = ()
    code_execution: CodeExecution | None = None  # deepseek-r1: the opt-in to run generated programs
    deadline_s: float | None = None  # each LoadGen test's wall-clock deadline; None: loadgen_test_deadline_s()
    # (test name, data set spec): a LoadGen test's own data set instead of ``dataset`` (--test-dataset NAME=SPEC)
    test_datasets: tuple[tuple[str, str], ...] = ()


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


def resolve(request: RunRequest) -> tuple[Round, Benchmark, Scenario]:
    rnd = load_round(request.round_name)
    bench = rnd.benchmark(request.benchmark)
    if bench is None:
        llms = ", ".join(sorted(n for n, b in rnd.benchmarks.items() if b.is_llm))
        raise UnusableInput(f"round {rnd.name} has no benchmark {request.benchmark!r} (LLM benchmarks: {llms})")
    scenario = Scenario.parse(request.scenario)
    if scenario is None:
        raise UnusableInput(f"unknown scenario {request.scenario!r} (Offline, Server, Interactive, SingleStream)")
    return rnd, bench, scenario


def new_run_dir(out: Path) -> tuple[str, Path]:
    """A fresh ``out/runs/<run_id>`` (never reused)."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    for _ in range(10):
        run_id = f"{stamp}-{secrets.token_hex(3)}"
        d = out / "runs" / run_id
        try:
            d.mkdir(parents=True, exist_ok=False)
        except FileExistsError:
            continue
        except OSError as exc:
            raise UnusableInput(f"cannot create the run directory: {exc.strerror or exc}", path=str(d)) from exc
        return run_id, d
    raise UnusableInput("cannot find a fresh run directory name", path=str(out))  # pragma: no cover


def _effective_conf_text(request: RunRequest) -> str:
    text = ""
    if request.user_conf is not None:
        try:
            text = request.user_conf.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UnusableInput(f"cannot read user.conf: {exc}", path=str(request.user_conf)) from exc
    if request.extra_conf:
        if text and not text.endswith("\n"):
            text += "\n"
        text += "# added by inference-audit run (command-line options)\n" + "\n".join(request.extra_conf) + "\n"
    return text


def _tests_for(mode: RunMode, bench: Benchmark) -> list[tuple[str, TestMode, bool]]:
    """(name, LoadGen mode, needs audit.config) per LoadGen test of a run mode.

    The submission flow runs performance, accuracy, then the compliance tests the round requires of the benchmark
    (``Benchmark.compliance_tests``: TEST06 for most LLMs, TEST07 and TEST09 for gpt-oss-120b in v6.x), each a
    performance-mode run with its audit.config. A benchmark that needs another test (TEST01, TEST04, TEST08: not LLM
    audit tests, their verification compares two runs) is refused: this harness cannot produce it.
    """
    if mode is RunMode.PERFORMANCE:
        return [("performance", TestMode.PERFORMANCE_ONLY, False)]
    if mode is RunMode.ACCURACY:
        return [("accuracy", TestMode.ACCURACY_ONLY, False)]
    if mode is RunMode.FIND_PEAK:
        return [("find-peak", TestMode.FIND_PEAK_PERFORMANCE, False)]
    if not mode.is_submission_flow:  # pragma: no cover - every mode is listed
        raise ValueError(mode)
    unsupported = [t for t in bench.compliance_tests if t not in AUDIT_TESTS]
    if unsupported:
        raise UnusableInput(
            f"--mode {mode.value}: {bench.name} needs compliance test(s) {', '.join(unsupported)}, which this harness "
            f"cannot produce (it runs {', '.join(AUDIT_TESTS)}); run them with the official compliance/ scripts",
            bench.compliance_cite,
        )
    return [
        ("performance", TestMode.PERFORMANCE_ONLY, False),
        ("accuracy", TestMode.ACCURACY_ONLY, False),
        *((test, TestMode.PERFORMANCE_ONLY, True) for test in bench.compliance_tests),
    ]


TEST_NAMES = ("performance", "accuracy", "find-peak", *AUDIT_TESTS)  # every LoadGen test a run can have


def canonical_test_name(name: str) -> str | None:
    """The LoadGen test a name means, in any case (``test07`` -> ``TEST07``); None when no test is called so."""
    return {t.lower(): t for t in TEST_NAMES}.get(name.strip().lower())


def _own_datasets(request: RunRequest) -> dict[str, str]:
    """The tests' own data sets (``RunRequest.test_datasets``) by test name (:func:`dataset_specs` refuses a
    name that is no test, or a test given twice; here the first one counts)."""
    own: dict[str, str] = {}
    for name, spec in request.test_datasets:
        canon = canonical_test_name(name)
        if canon is not None:
            own.setdefault(canon, spec)
    return own


def dataset_option(request: RunRequest, test: str) -> str:
    """Where the data set of ``test`` comes from, as an option (``--test-dataset TEST07=FILE`` or ``--dataset FILE``)."""
    own = _own_datasets(request).get(test)
    return f"--test-dataset {test}={own}" if own is not None else f"--dataset {request.dataset}"


def _require_dataset_file(spec: str, option: str) -> None:
    """A data set spec names a file or directory that is there (``builtin``, ``FILE``, ``kind:FILE``)."""
    if spec == BUILTIN_SPEC or (spec and Path(spec).exists()):
        return
    _, sep, rest = spec.partition(":")
    if sep and rest and Path(rest).exists():
        return
    raise UnusableInput(f"{option}: no such data set file or directory" if spec else f"{option}: an empty data set name")


def dataset_specs(request: RunRequest, bench: Benchmark | None = None) -> dict[str, str]:
    """The data set spec of each LoadGen test of the run, in test order: its own (``test_datasets``), else ``dataset``.

    Refused (:class:`UnusableInput`: exit 2, before any work): a name that is no LoadGen test (:data:`TEST_NAMES`), a
    test given twice, a test this run does not have (``--mode accuracy`` has no TEST07; llama3.1-8b has TEST06, not
    TEST07), a data set file that is not there.
    """
    if bench is None:
        bench = resolve(request)[1]
    tests = [name for name, _, _ in _tests_for(request.mode, bench)]
    own: dict[str, str] = {}
    for name, spec in request.test_datasets:
        given = f"--test-dataset {name}={spec}"
        canon = canonical_test_name(name)
        if canon is None:
            raise UnusableInput(f"{given}: no LoadGen test is called {name!r} (the tests: {', '.join(TEST_NAMES)})")
        if canon in own:
            raise UnusableInput(f"{given}: {canon} has its data set already (--test-dataset {canon}={own[canon]})")
        if canon not in tests:
            raise UnusableInput(
                f"{given}: this run ({bench.name}, --mode {request.mode.value}) has no {canon} test; its tests: "
                + ", ".join(tests)
            )
        own[canon] = spec
    specs = {test: own.get(test, request.dataset) for test in tests}
    for test, spec in specs.items():
        _require_dataset_file(spec, dataset_option(request, test))
    return specs


@dataclass(frozen=True)
class TestDataset:
    """The data set one LoadGen test runs on, loaded in the runner (scoring, sizes, the record)."""

    __test__ = False  # not a pytest class

    spec: str  # what the test process loads (TestSpec.dataset)
    option: str  # where it came from: "--dataset FILE" or "--test-dataset TEST07=FILE"
    dataset: Dataset
    tokenizer: Tokenizer | None  # decodes its outputs (the simulated engine's word tokenizer is built per data set)


def _load_test_datasets(request: RunRequest, specs: dict[str, str]) -> dict[str, TestDataset]:
    """Each test's data set, loaded once per spec (``--dataset-limit`` applies to each).

    A test process builds its tokenizer as this does (:mod:`loadgen_sut.lgtest`): the served model's, or for the
    simulated engine a word tokenizer from the data set's own texts, so the ids it logs decode here with the same one.
    """
    base = build_tokenizer(request.engine, [])
    loaded: dict[str, tuple[Dataset, Tokenizer | None]] = {}
    out: dict[str, TestDataset] = {}
    for test, spec in specs.items():
        if spec not in loaded:
            ds = load_dataset(spec, tokenizer=base, limit=request.dataset_limit)
            tok = base
            if request.engine.kind == "simulated" and request.engine.tokenizer_dir is None:
                tok = build_tokenizer(request.engine, simulated_vocabulary(ds))
            loaded[spec] = (ds, tok)
        ds, tok = loaded[spec]
        out[test] = TestDataset(spec=spec, option=dataset_option(request, test), dataset=ds, tokenizer=tok)
    return out


def required_test_samples(bench: Benchmark, scenario: Scenario, test: str) -> int | None:
    """How many samples the official data set of a LoadGen test holds (rules data; None: not known).

    accuracy: ``accuracy_sample_count_by_scenario`` / ``accuracy_sample_count`` / ``dataset_size`` (gpt-oss-120b 4395,
    qwen3-vl Interactive 8000 in v6.1); TEST07 / TEST09: ``test07_sample_count`` / ``test09_sample_count`` (990 and
    6396); the performance-mode tests (performance, TEST06, find-peak): the performance data set,
    ``dataset_size`` / ``performance_sample_count`` (gpt-oss-120b 6396).
    """
    if test == "accuracy":
        return bench.accuracy_sample_count_by_scenario.get(scenario) or bench.accuracy_sample_count or bench.dataset_size
    if test in (TEST07, TEST09):
        return required_samples(bench, test)
    return bench.dataset_size or bench.performance_sample_count


def _size_problem(bench: Benchmark, scenario: Scenario, test: str, n: int) -> str | None:
    """What is wrong with a data set of ``n`` samples for ``test`` (None: its size is the test's, or not known)."""
    want = required_test_samples(bench, scenario, test)
    if want is None or n == want:
        return None
    which = _OFFICIAL_DATASETS.get((test, bench.name))
    if test == "accuracy":
        return f"the data set holds {n} samples, the {bench.name} {scenario.value} accuracy run covers {want}" + (
            f" ({which})" if which else ""
        )
    if test in (TEST07, TEST09):
        return (
            f"{test} of {bench.name} covers its own data set of {want} samples"
            + (f" ({which})" if which else "")
            + f"; the data set holds {n}"
        )
    which = _OFFICIAL_DATASETS.get(("performance", bench.name))  # performance, TEST06, find-peak
    return (
        f"the data set holds {n} samples, the {bench.name} {test} run covers the {want}-sample performance data set"
        + (f" ({which})" if which else "")
    )


def _refuse_wrong_sized_datasets(bench: Benchmark, scenario: Scenario, data: dict[str, TestDataset]) -> None:
    """--mode submission: each test's data set holds the samples of the test's official data set (checked as loaded,
    not by name: a copy of the built-in set under another name is refused too). One error names every test whose
    data set is another size, its file and both sizes."""
    problems = []
    for test, td in data.items():
        problem = _size_problem(bench, scenario, test, len(td.dataset.samples))
        if problem is not None:
            problems.append(f"{test} ({td.option}): {problem}")
    if problems:
        raise UnusableInput(
            "--mode submission: "
            + "; ".join(problems)
            + "; give each test its official data set (--dataset FILE, --test-dataset TEST=FILE), "
            "or use --mode submission-trial"
        )


def preflight(
    request: RunRequest, rnd: Round, bench: Benchmark, scenario: Scenario, conf_text: str
) -> tuple[PlannedSettings, list[Finding]]:
    """Settings the run will use and every finding about them (errors refuse a submission run)."""
    user_conf = parse_user_conf_text(conf_text, str(request.user_conf) if request.user_conf else "user.conf")
    planned = plan_settings(rnd, bench, scenario, user_conf)
    submission = request.mode is RunMode.SUBMISSION
    findings: list[Finding] = []
    for f in loadgen_version_findings(rnd, installed_loadgen_version()):
        findings.append(f if submission or f.rule == "RUN-LOADGEN-MISSING" else f.model_copy(update={"severity": Severity.WARNING}))
    for f in planned.conf_problems:
        findings.append(f if submission else f.model_copy(update={"severity": Severity.WARNING}))
    findings += override_findings(planned, request.mode)
    findings += _interactive_line_findings(user_conf, scenario, submission)
    if submission:
        findings += _submission_input_findings(request, bench)
    if request.mode is RunMode.FIND_PEAK and scenario.loadgen_scenario is not Scenario.SERVER:
        findings.append(_run_finding("RUN-MODE", "find-peak works only for Server/Interactive"))
    if request.engine.kind == "simulated" and request.mode.is_submission_flow:
        findings.append(simulated_engine(before_run=True))
    return planned, findings


def _interactive_line_findings(user_conf: UserConf, scenario: Scenario, submission: bool) -> list[Finding]:
    """LoadGen knows no Interactive scenario: it runs Interactive as Server and reads ``*.Server.*`` keys only."""
    lines = [e for e in user_conf.entries if e.scenario.lower() == "interactive"]
    if not lines:
        return []
    sev = None if submission else Severity.WARNING  # None: the registered ERROR
    return [
        _run_finding(
            rule="RUN-CONF-INTERACTIVE",
            severity=sev,
            message=f"{e.text!r}: LoadGen has no Interactive scenario and ignores this line"
            + (" (this Interactive run reads the <model>-interactive conf model's Server keys)" if scenario is Scenario.INTERACTIVE else ""),
            path=user_conf.path,
            line=e.line,
            fix="write the key for the Server scenario ('<model>.Server.<key> = value'); for an Interactive run "
            "LoadGen reads it under the interactive conf model",
        )
        for e in lines
    ]


def _submission_input_findings(request: RunRequest, bench: Benchmark) -> list[Finding]:
    """What can only fail a submission after a 10-minute run: the data set and the generation settings."""
    out: list[Finding] = []
    own = _own_datasets(request)
    tests = [name for name, _, _ in _tests_for(request.mode, bench)]
    builtin = [t for t in tests if own.get(t, request.dataset) == BUILTIN_SPEC]
    if builtin or request.dataset_limit is not None:
        acc = bench.accuracy_sample_count or bench.dataset_size
        if builtin:
            what = "the built-in sample set" + ("" if builtin == tests else f" for {', '.join(builtin)}")
        else:
            what = f"{request.dataset_limit} samples"
        out.append(
            _run_finding(
                rule="RUN-DATASET",
                message=f"--mode submission with {what}: each test must run on its official {bench.name} data set"
                + (f" (the accuracy run covers {acc} samples)" if acc else ""),
                fix="pass --dataset <the official data set file> (and --test-dataset TEST=FILE for a test with its own) "
                "without --dataset-limit, or use --mode submission-trial",
            )
        )
    if request.max_new_tokens is not None and bench.max_new_tokens is not None and request.max_new_tokens != bench.max_new_tokens:
        out.append(
            _run_finding(
                rule="RUN-GENERATION",
                message=f"--max-new-tokens {request.max_new_tokens}: the round fixes {bench.max_new_tokens} for {bench.name}",
                fix=f"drop --max-new-tokens (the default is {bench.max_new_tokens}), or use --mode submission-trial",
            )
        )
    return out


def _refuse_chat_samples_without_chat_api(dataset: Dataset, request: RunRequest, spec: str) -> None:
    """Samples that are chats with content parts (qwen3-vl: text and an inline image) go to a chat API only:
    refused before any test starts rather than failing every sample."""
    eng = request.engine
    if eng.kind == "simulated" or (eng.kind == "openai" and eng.api == "chat"):
        return
    if any(s.messages is not None for s in dataset.samples):
        how = "--api chat" if eng.kind == "openai" else "--engine openai --api chat (a multimodal server)"
        raise UnusableInput(
            f"the samples of {dataset.name} are chats with content parts (an image): only a chat API takes them; "
            f"use {how}",
            path=spec,
        )


def _run_finding(rule: str, message: str, severity: Severity | None = None, **kw: Any) -> Finding:
    """A verdict finding of a registered RUN-* rule; severity (and "beyond official") default to its registration."""
    return registered_finding(rule, message, severity=severity, **kw)


def _absolute_dataset(spec: str) -> str:
    """Test processes run in their own directories: make a relative data-set path absolute."""
    prefix, sep, rest = spec.partition(":")
    if sep and not Path(spec).exists() and Path(rest).exists():
        return f"{prefix}:{Path(rest).resolve()}"
    return str(Path(spec).resolve()) if Path(spec).exists() else spec


def _absolute_paths(request: RunRequest) -> RunRequest:
    eng = request.engine
    updates: dict[str, Any] = {}
    if eng.tokenizer_dir:
        updates["tokenizer_dir"] = str(Path(eng.tokenizer_dir).resolve())
    if eng.kind == "transformers" and Path(eng.model).exists():
        updates["model"] = str(Path(eng.model).resolve())
    return replace(
        request,
        out=request.out.resolve(),
        user_conf=request.user_conf.resolve() if request.user_conf else None,
        dataset=_absolute_dataset(request.dataset),
        test_datasets=tuple((name, _absolute_dataset(spec)) for name, spec in request.test_datasets),
        engine=eng.model_copy(update=updates) if updates else eng,
    )


def run(request: RunRequest, say: Printer = print) -> RunOutcome:
    """Run one benchmark/scenario in one mode; returns the record (also written to the run dir)."""
    request = _absolute_paths(request)
    rnd, bench, scenario = resolve(request)
    specs = dataset_specs(request, bench)  # each test's data set: unknown tests, missing files refused here
    request.engine.validate_spec()
    conf_text = _effective_conf_text(request)
    planned, findings = preflight(request, rnd, bench, scenario, conf_text)
    simulated = request.engine.kind == "simulated"
    label = " [SIMULATED ENGINE]" if simulated else ""
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

    # the parent needs each test's data set (sizes, accuracy and TEST07 scoring) and its tokenizer (detokenizing)
    test_data = _load_test_datasets(request, specs)
    first = next(iter(test_data.values()))  # the run's first test's: RunRecord.dataset
    if request.mode is RunMode.SUBMISSION:
        _refuse_wrong_sized_datasets(bench, scenario, test_data)
    for td in {td.spec: td for td in test_data.values()}.values():
        _refuse_chat_samples_without_chat_api(td.dataset, request, td.spec)
    _say_datasets(test_data, say)
    per_test = {name: td.dataset for name, td in test_data.items()}
    findings += _compliance_dataset_findings(request, bench, first.dataset, say, per_test)  # trials: warnings

    run_id, run_dir = new_run_dir(request.out)
    conf_path = run_dir / "user.conf"
    conf_path.write_text(conf_text, encoding="utf-8")
    compiled_conf = compiled_mlperf_conf()
    if compiled_conf is not None:  # the mlperf.conf LoadGen applies, kept for the submission tree
        (run_dir / MLPERF_CONF_FILE).write_text(compiled_conf, encoding="utf-8")
    generation = generation_plan(  # the round's caps per LoadGen mode and its decoding (loadgen_sut.generation)
        bench, max_new_tokens=request.max_new_tokens, min_new_tokens=request.min_new_tokens, ignore_eos=request.ignore_eos
    )
    say(f"  generation: {generation.describe()}")
    say(f"  run directory: {run_dir}")


    tests: list[TestRecord] = []
    verdict_findings: list[Finding] = []  # the verdict's reasons (RUN-* rules); the status is derived from them
    accuracy: dict[str, Any] | None = None
    test06: dict[str, Any] | None = None
    test07: Test07Record | None = None
    test09: Test09Record | None = None
    engine_info: EngineInfo | None = None
    probed = False
    interrupted = False
    read_back: TestSettingsModel | None = None  # what LoadGen applies (the probe's answer)
    try:
        for name, lg_mode, audit in _tests_for(request.mode, bench):
            test_dir = run_dir / name
            test_dir.mkdir()
            td = test_data[name]
            settings = planned.effective.model_copy(update={"mode": lg_mode})
            spec = TestSpec(
                name=name,
                round_name=rnd.name,
                settings=settings,
                user_conf=str(conf_path),
                dataset=td.spec,
                dataset_limit=request.dataset_limit,
                engine=request.engine,
                generation=generation.for_mode(lg_mode),
                audit=audit,
                progress_interval_s=request.progress_interval_s,
            )
            spec_path = run_dir / f"{name}.spec.json"
            spec_path.write_text(spec.model_dump_json(indent=2) + "\n", encoding="utf-8")
            if not probed:
                probed = True
                pr = child.probe_settings(settings, conf_path, run_dir)
                if pr.returncode != 0:
                    raise UnusableInput(f"LoadGen could not read the settings: {pr.stderr.strip()[-500:]}", path=str(conf_path))
                actual = TestSettingsModel.model_validate_json(pr.stdout.strip().splitlines()[-1])
                read_back = actual
                overridden = frozenset(o.setting for o in planned.overrides)
                mismatches = compare_with_loadgen(planned.official, actual, rnd.name, skip=overridden)
                if mismatches:
                    sev = Severity.ERROR if request.mode is RunMode.SUBMISSION else Severity.WARNING
                    mismatches = [m.model_copy(update={"severity": sev}) for m in mismatches]
                    say_findings(mismatches, say)
                    findings += mismatches
                    if sev is Severity.ERROR:
                        raise UnusableInput("refusing to run: the installed LoadGen does not apply this round's settings")
            if audit:
                (test_dir / AUDIT_CONFIG).write_text(
                    compliance_audit_config(
                        rnd,
                        bench,
                        name,
                        dataset_samples=len(td.dataset.samples),
                        performance_sample_count=(read_back or settings).performance_sample_count,
                    ),
                    encoding="utf-8",
                )
            deadline = request.deadline_s or child.loadgen_test_deadline_s(
                (read_back or settings).model_copy(update={"mode": lg_mode}), len(td.dataset.samples), request.engine
            )
            spec = spec.model_copy(update={"deadline_s": deadline})
            spec_path.write_text(spec.model_dump_json(indent=2) + "\n", encoding="utf-8")
            say(f"-- {name} ({lg_mode.value}), deadline {deadline:.0f} s --")
            rc, trec, sut_result = child.run_test(name, spec_path, test_dir, run_dir, deadline, (rnd, bench, scenario))
            if sut_result is not None and sut_result.engine is not None and engine_info is None:
                engine_info = sut_result.engine
            tests.append(trec)
            child.say_test_summary(trec, say)
            verdict_findings += judge_test(trec)
            if rc == EXIT_ENGINE_UNAVAILABLE or trec.status in ("engine_unavailable", "setup_error", "deadline"):
                break
            if name == "accuracy" and trec.status == "finished":
                accuracy = _score(request, test_dir, td.dataset, bench, scenario, td.tokenizer, say, verdict_findings)
            if name == "TEST06" and trec.status == "finished":
                test06 = _verify_test06(test_dir, td.tokenizer, bench, say, verdict_findings)
            if name == TEST07 and trec.status == "finished":
                test07 = _verify_test07(request, test_dir, run_dir, td.dataset, td.tokenizer, bench, say, verdict_findings)
            if name == TEST09 and trec.status == "finished":
                test09 = _verify_test09(request, test_dir, run_dir, bench, say, verdict_findings)

    except KeyboardInterrupt:  # Ctrl-C: the child stopped; keep a record of what ran
        interrupted = True
        say("interrupted (Ctrl-C): writing the run record of what finished")

    datasets = _dataset_records(test_data)
    # preflight errors refused the run above: the settings' findings (record.findings) never decide the verdict
    wanted = [name for name, _, _ in _tests_for(request.mode, bench)]
    verdict = Verdict.of(
        verdict_findings + run_findings(request.mode, simulated, planned, wanted, tests, interrupted)
    )
    record = RunRecord(
        tool_version=tool_version(),
        run_id=run_id,
        created_utc=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        simulated=simulated,
        command=request.command,
        round=rnd.name,
        benchmark=bench.name,
        scenario=scenario.value,
        mode=request.mode.value,
        engine=engine_info,
        generation=generation.record(),
        dataset=datasets[0],
        datasets=datasets,
        hardware=detect_hardware(),
        loadgen_version=installed_loadgen_version(),
        settings=planned.effective,
        official_settings=planned.official,
        overrides=planned.overrides,
        user_conf=conf_text,
        tests=tuple(tests),
        accuracy=accuracy,
        test06=test06,
        test07=test07,
        test09=test09,
        findings=tuple(findings),
        verdict=verdict,
    )
    write_record(record, run_dir / RECORD_FILE)
    say(f"verdict: {verdict.status}{label}")
    say_findings(verdict.findings, say)
    say(f"run record: {run_dir / RECORD_FILE}")
    if interrupted:
        raise KeyboardInterrupt
    return RunOutcome(
        record=record,
        run_dir=run_dir,
        dataset=first.dataset,
        tokenizer=first.tokenizer,
        findings=findings,
        datasets=per_test,
    )


def _dataset_records(test_data: dict[str, TestDataset]) -> tuple[DatasetRecord, ...]:
    """One record per data set the run's tests used (per spec, in test order), each with its tests."""
    by_spec: dict[str, list[str]] = {}
    for name, td in test_data.items():
        by_spec.setdefault(td.spec, []).append(name)
    out = []
    for spec, names in by_spec.items():
        ds = test_data[names[0]].dataset
        out.append(
            DatasetRecord(
                spec=spec,
                name=ds.name,
                samples=len(ds.samples),
                simulated=bool(ds.simulated),
                input_tokens=_input_stats(ds),
                tests=tuple(names),
            )
        )
    return tuple(out)


def _say_datasets(test_data: dict[str, TestDataset], say: Printer) -> None:
    """The data set of each test, one line per data set."""
    for rec in _dataset_records(test_data):
        say(f"  data set of {', '.join(rec.tests)}: {rec.name} ({rec.samples} samples; {rec.spec})")


def _input_stats(dataset: Dataset) -> LengthStats | None:
    lens = [len(s.input_ids) for s in dataset.samples if s.input_ids is not None]
    if not lens:
        return None
    return LengthStats(count=len(lens), min=min(lens), max=max(lens), mean=sum(lens) / len(lens))


def _score(
    request: RunRequest,
    test_dir: Path,
    dataset: Dataset,
    bench: Benchmark,
    scenario: Scenario,
    tokenizer: Tokenizer | None,
    say: Printer,
    verdict: list[Finding],
) -> dict[str, Any] | None:
    """Score the accuracy run on the accuracy test's data set; the simulated engine's score says SIMULATED."""
    log = test_dir / "mlperf_log_accuracy.json"
    if tokenizer is None and bench.accuracy_log_format == "token_ids":  # a text response (qwen3-vl) needs none
        verdict.append(
            _run_finding(
                "RUN-ACC-TOKENIZER", "accuracy: no tokenizer to detokenize outputs (give --tokenizer DIR)", fix="--tokenizer DIR"
            )
        )
        return None
    score = score_accuracy(
        log,
        dataset,
        bench,
        tokenizer.decode if tokenizer is not None else None,
        simulated=request.engine.kind == "simulated",
        code_execution=request.code_execution,
    )
    write_accuracy_txt(score, test_dir / "accuracy.txt", log)
    judged = score.findings(bench, scenario=scenario)  # the scenario's targets (v6.1 qwen3-vl Interactive has its own)
    verdict += [f for f in judged if f.severity is Severity.ERROR]  # RUN-ACC-*: below target, not covered, ...
    say(f"  accuracy: {test_dir / 'accuracy.txt'}")
    say_findings(judged, say)
    dumped: dict[str, Any] = score.model_dump(mode="json")
    return dumped


def _verify_test06(
    test_dir: Path, tokenizer: Tokenizer | None, bench: Benchmark, say: Printer, verdict: list[Finding]
) -> dict[str, Any]:
    out_dir = test_dir / "verification"
    out_dir.mkdir(exist_ok=True)
    eos = tokenizer.eos_token_id if tokenizer is not None else None
    result = verify_test06_run(test_dir / "mlperf_log_accuracy.json", eos, out_dir, benchmark=bench)
    say(f"  TEST06 verification: {'PASS' if result.passed else 'FAIL'} ({out_dir / 'verify_accuracy.txt'})")
    for line in result.verify_accuracy_lines():
        say(f"    {line}")
    if not result.passed:
        verdict.append(
            _run_finding(
                "RUN-TEST06-FAILED",
                f"TEST06 verification failed (see {out_dir})",
            )
        )
    dumped: dict[str, Any] = result.model_dump(mode="json")
    return dumped


# the official data set file of a test, where a benchmark's tests use different ones (gpt-oss-120b in v6.x: accuracy on
# acc_eval_inputs, performance and TEST09 on the performance set, TEST07 on the 990-sample GPQA compliance set)
_OFFICIAL_DATASETS = {
    ("accuracy", "gpt-oss-120b"): "acc/acc_eval_inputs.parquet",  # language/gpt-oss-120b/README.md line 163
    ("performance", "gpt-oss-120b"): "perf/perf_eval_ref.parquet",  # compliance/TEST09/gpt-oss-120b/audit.config
    (TEST07, "gpt-oss-120b"): "acc/acc_eval_compliance_gpqa.parquet",
    (TEST09, "gpt-oss-120b"): "perf/perf_eval_ref.parquet",
}  # language/gpt-oss-120b/README.md "Compliance Testing" (inference HEAD b66003e1), lines 232-235


def _compliance_dataset_findings(
    request: RunRequest,
    bench: Benchmark,
    dataset: Dataset,
    say: Printer,
    per_test: dict[str, Dataset] | None = None,
) -> list[Finding]:
    """The submission flow's compliance tests against their data sets: ``per_test[name]``, else ``dataset``.

    TEST07 and TEST09 cover a data set of their own size (rules data: ``test07_sample_count``,
    ``test09_sample_count``). ``--mode submission`` with another size is refused: the test would verify other samples
    than the round's. ``submission-trial`` runs them with a WARNING. A compliance test this harness cannot produce is
    refused in both (:func:`_tests_for`).
    """
    if not request.mode.is_submission_flow:
        return []
    out: list[Finding] = []
    for name, _, audit in _tests_for(request.mode, bench):
        data = (per_test or {}).get(name, dataset)
        n = len(data.samples)
        want = required_samples(bench, name) if audit else None
        if want is None or want == n:
            continue
        which = _OFFICIAL_DATASETS.get((name, bench.name))
        what = f"{name} of {bench.name} covers its own data set of {want} samples" + (f" ({which})" if which else "")
        option = dataset_option(request, name)
        if request.mode is RunMode.SUBMISSION:
            raise UnusableInput(
                f"--mode submission: {what}; its data set ({option}) holds {n}: give {name} its own with "
                f"--test-dataset {name}=FILE, or use --mode submission-trial"
            )
        out.append(
            _run_finding(
                rule="RUN-COMPLIANCE-DATASET",
                message=f"{what}; this trial runs it on the {n} samples of {data.name} ({option}): a rehearsal of the "
                "test",
                source=bench.compliance_cite,
                fix=f"--test-dataset {name}={which or 'FILE'} (the test's official data set)",
            )
        )
    say_findings(out, say)
    return out


def _audit_findings(test: str, problems: Sequence[str], mode: RunMode) -> list[Finding]:
    """What the detail log shows against the test's audit.config: a run without it, or not in performance mode, is
    not the test (ERROR); other shortfalls (sample counts) are ERRORs in --mode submission, WARNINGs in a trial."""
    out = []
    for p in problems:
        fatal = makes_it_not_the_test(p) or mode is RunMode.SUBMISSION
        out.append(
            _run_finding(
                "RUN-AUDIT-CONFIG",
                f"{test}: {p}",
                None if fatal else Severity.WARNING,  # None: the registered ERROR
                source=f"compliance/{test}/<benchmark>/audit.config; checker.compliance.audit_run",
            )
        )
    return out


def _verification_failed(test: str, verify_file: Path, mode: RunMode, own_dataset: bool) -> Finding:
    """RUN-TEST07-FAILED / RUN-TEST09-FAILED: an ERROR, except in a trial on another data set than the test's, where
    the round's threshold (bounds) does not apply: a WARNING that says so."""
    rule = VERIFICATION_RULES[test]
    if own_dataset or mode is RunMode.SUBMISSION:
        return _run_finding(rule, f"{test} verification failed (see {verify_file})")
    return _run_finding(
        rule,
        f"{test} verification failed (see {verify_file}) on a data set other than the test's: the round's "
        "threshold is set for that data set, so this trial says nothing about it",
        Severity.WARNING,
    )


def _verify_test07(
    request: RunRequest,
    test_dir: Path,
    run_dir: Path,
    dataset: Dataset,
    tokenizer: Tokenizer | None,
    bench: Benchmark,
    say: Printer,
    verdict: list[Finding],
) -> Test07Record | None:
    if tokenizer is None:
        verdict.append(
            _run_finding("RUN-ACC-TOKENIZER", "TEST07: no tokenizer to detokenize outputs (give --tokenizer DIR)", fix="--tokenizer DIR")
        )
        return None
    out_dir = test_dir / "verification"
    rec = verify_test07_run(
        test_dir / "mlperf_log_accuracy.json",
        dataset,
        bench,
        tokenizer.decode,
        out_dir,
        audit_config=(test_dir / AUDIT_CONFIG).read_text(encoding="utf-8"),
        detail_log=test_dir / "mlperf_log_detail.txt",
        simulated=request.engine.kind == "simulated",
        code_execution=request.code_execution,
        relative_to=run_dir,
    )
    shown = "no score" if rec.score is None else f"score {rec.score:g}"
    say(
        f"  TEST07 verification: {'PASS' if rec.passed else 'FAIL'} ({shown}, threshold {rec.threshold:g}, "
        f"{rec.samples_scored} samples scored; {run_dir / rec.verify_file})"
    )
    if rec.evaluation_error:
        say(f"    evaluation failed: {rec.evaluation_error}")
    if not rec.passed:
        verdict.append(
            _verification_failed(
                TEST07, run_dir / rec.verify_file, request.mode, rec.dataset_samples == rec.required_samples
            )
        )
    if rec.missing_samples:
        verdict.append(
            _run_finding(
                "RUN-TEST07-COVERAGE",
                f"TEST07 logged {rec.samples_scored} of the {rec.dataset_samples} samples of {rec.dataset}: "
                f"{rec.missing_samples} have no output (TEST07 logs every sample)",
            )
        )
    verdict += _audit_findings(TEST07, rec.audit_problems, request.mode)
    return rec


def _verify_test09(
    request: RunRequest, test_dir: Path, run_dir: Path, bench: Benchmark, say: Printer, verdict: list[Finding]
) -> Test09Record:
    rec = verify_test09_run(
        test_dir / "mlperf_log_accuracy.json",
        bench,
        test_dir,  # verify_output_len.txt beside LoadGen's logs: the packager copies it from there
        audit_config=(test_dir / AUDIT_CONFIG).read_text(encoding="utf-8"),
        detail_log=test_dir / "mlperf_log_detail.txt",
        relative_to=run_dir,
    )
    mean = "no sample logged" if rec.mean_tokens is None else f"mean {rec.mean_tokens:.2f} tokens"
    say(
        f"  TEST09 verification: {'PASS' if rec.passed else 'FAIL'} ({mean} over {rec.samples} samples, "
        f"bounds [{rec.low:g}, {rec.high:g}]; {run_dir / rec.verify_file})"
    )
    if not rec.passed:
        verdict.append(
            _verification_failed(TEST09, run_dir / rec.verify_file, request.mode, rec.samples == rec.required_samples)
        )
    verdict += _audit_findings(TEST09, rec.audit_problems, request.mode)
    return rec
