"""The plan of an ``inference-audit run``: the request, the LoadGen tests a mode runs (performance, accuracy, the
compliance tests the round requires), the data set of each test (``--dataset``, ``--test-dataset TEST=SPEC``: one
mapping, :func:`specs_by_test`), those data sets loaded and sized against the round, and the run's directory.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from checker.checks.rule_registry import WARN, RuleInfo, register, registered_finding
from checker.findings import Finding, UnusableInput
from loadgen_sut.compliance import AUDIT_TESTS, TEST07, TEST09, required_samples
from loadgen_sut.datasets import BUILTIN_SPEC, Dataset, dataset_path, load_dataset
from loadgen_sut.engines.factory import EngineSpec, build_tokenizer
from loadgen_sut.engines.simulated import simulated_vocabulary
from loadgen_sut.engines.tokenizers import Tokenizer
from loadgen_sut.record import DatasetRecord, LengthStats
from loadgen_sut.scoring.code_exec import CodeExecution
from loadgen_sut.settings import RunMode, TestMode
from rules import load_round
from rules.models import Benchmark, Round, Scenario

RULES = register(
    __name__,
    RuleInfo(
        "RUN-COMPLIANCE-DATASET", "-", "submission-trial: a compliance test run on another data set than its own", WARN
    ),
)

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


def effective_conf_text(request: RunRequest) -> str:
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


def planned_tests(mode: RunMode, bench: Benchmark) -> list[tuple[str, TestMode, bool]]:
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


def specs_by_test(request: RunRequest, tests: Sequence[str]) -> dict[str, str]:
    """The data set spec of each of ``tests``: its own (``--test-dataset TEST=SPEC``), else ``--dataset``."""
    own = _own_datasets(request)
    return {test: own.get(test, request.dataset) for test in tests}


def dataset_option(request: RunRequest, test: str) -> str:
    """Where the data set of ``test`` comes from, as an option (``--test-dataset TEST07=FILE`` or ``--dataset FILE``)."""
    own = _own_datasets(request).get(test)
    return f"--test-dataset {test}={own}" if own is not None else f"--dataset {request.dataset}"


def _require_dataset_file(spec: str, option: str) -> None:
    """A data set spec names a file or directory that is there (``builtin``, ``FILE``, ``kind:FILE``)."""
    path = dataset_path(spec) if spec else None
    if spec == BUILTIN_SPEC or (path is not None and str(path) and path.exists()):
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
    tests = [name for name, _, _ in planned_tests(request.mode, bench)]
    given_for: dict[str, str] = {}
    for name, spec in request.test_datasets:
        given = f"--test-dataset {name}={spec}"
        canon = canonical_test_name(name)
        if canon is None:
            raise UnusableInput(f"{given}: no LoadGen test is called {name!r} (the tests: {', '.join(TEST_NAMES)})")
        if canon in given_for:
            raise UnusableInput(f"{given}: {canon} has its data set already (--test-dataset {canon}={given_for[canon]})")
        if canon not in tests:
            raise UnusableInput(
                f"{given}: this run ({bench.name}, --mode {request.mode.value}) has no {canon} test; its tests: "
                + ", ".join(tests)
            )
        given_for[canon] = spec
    specs = specs_by_test(request, tests)
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


def load_test_datasets(request: RunRequest, specs: dict[str, str]) -> dict[str, TestDataset]:
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


# the official data set file of a test, where a benchmark's tests use different ones (gpt-oss-120b in v6.x: accuracy on
# acc_eval_inputs, performance and TEST09 on the performance set, TEST07 on the 990-sample GPQA compliance set)
_OFFICIAL_DATASETS = {
    ("accuracy", "gpt-oss-120b"): "acc/acc_eval_inputs.parquet",  # language/gpt-oss-120b/README.md line 163
    ("performance", "gpt-oss-120b"): "perf/perf_eval_ref.parquet",  # compliance/TEST09/gpt-oss-120b/audit.config
    (TEST07, "gpt-oss-120b"): "acc/acc_eval_compliance_gpqa.parquet",
    (TEST09, "gpt-oss-120b"): "perf/perf_eval_ref.parquet",
}  # language/gpt-oss-120b/README.md "Compliance Testing" (inference HEAD b66003e1), lines 232-235


def _own_data_set(bench: Benchmark, test: str, want: int) -> str:
    """A TEST07/TEST09 covers a data set of its own size (and file, where the round names one)."""
    which = _OFFICIAL_DATASETS.get((test, bench.name))
    return f"{test} of {bench.name} covers its own data set of {want} samples" + (f" ({which})" if which else "")


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
        return f"{_own_data_set(bench, test, want)}; the data set holds {n}"
    which = _OFFICIAL_DATASETS.get(("performance", bench.name))  # performance, TEST06, find-peak
    return (
        f"the data set holds {n} samples, the {bench.name} {test} run covers the {want}-sample performance data set"
        + (f" ({which})" if which else "")
    )


def refuse_wrong_sized_datasets(bench: Benchmark, scenario: Scenario, data: dict[str, TestDataset]) -> None:
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


def refuse_chat_samples_without_chat_api(dataset: Dataset, request: RunRequest, spec: str) -> None:
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


def _resolved(path: Path) -> Path:
    """``path`` made absolute with its links followed; a loop of symbolic links is the input's fault (Python raises
    RuntimeError for it, not OSError: it was exit 3)."""
    try:
        return path.resolve()
    except (RuntimeError, OSError) as exc:
        raise UnusableInput(f"cannot resolve the path: {getattr(exc, 'strerror', None) or exc}", path=str(path)) from None


def _absolute_dataset(spec: str) -> str:
    """Test processes run in their own directories: make a relative data-set path absolute."""
    prefix, sep, rest = spec.partition(":")
    if sep and not Path(spec).exists() and Path(rest).exists():
        return f"{prefix}:{_resolved(Path(rest))}"
    return str(_resolved(Path(spec))) if Path(spec).exists() else spec


def absolute_paths(request: RunRequest) -> RunRequest:
    eng = request.engine
    updates: dict[str, Any] = {}
    if eng.tokenizer_dir:
        updates["tokenizer_dir"] = str(_resolved(Path(eng.tokenizer_dir)))
    if eng.kind == "transformers" and Path(eng.model).exists():
        updates["model"] = str(_resolved(Path(eng.model)))
    return replace(
        request,
        out=_resolved(request.out),
        user_conf=_resolved(request.user_conf) if request.user_conf else None,
        dataset=_absolute_dataset(request.dataset),
        test_datasets=tuple((name, _absolute_dataset(spec)) for name, spec in request.test_datasets),
        engine=eng.model_copy(update=updates) if updates else eng,
    )


def dataset_records(test_data: dict[str, TestDataset]) -> tuple[DatasetRecord, ...]:
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


def say_datasets(test_data: dict[str, TestDataset], say: Printer) -> None:
    """The data set of each test, one line per data set."""
    for rec in dataset_records(test_data):
        say(f"  data set of {', '.join(rec.tests)}: {rec.name} ({rec.samples} samples; {rec.spec})")


def _input_stats(dataset: Dataset) -> LengthStats | None:
    lens = [len(s.input_ids) for s in dataset.samples if s.input_ids is not None]
    if not lens:
        return None
    return LengthStats(count=len(lens), min=min(lens), max=max(lens), mean=sum(lens) / len(lens))


def compliance_dataset_findings(request: RunRequest, bench: Benchmark, data: dict[str, TestDataset]) -> list[Finding]:
    """submission-trial: RUN-COMPLIANCE-DATASET (a WARNING) for each TEST07/TEST09 on a data set of another size than
    its own (rules data: ``test07_sample_count``, ``test09_sample_count``): a rehearsal of the test. ``--mode
    submission`` refuses that run before (:func:`refuse_wrong_sized_datasets`); a compliance test this harness cannot
    produce is refused in both (:func:`planned_tests`).
    """
    if request.mode is not RunMode.SUBMISSION_TRIAL:
        return []
    out: list[Finding] = []
    for name, td in data.items():
        n = len(td.dataset.samples)
        want = required_samples(bench, name)
        if want is None or want == n:
            continue
        which = _OFFICIAL_DATASETS.get((name, bench.name))
        out.append(
            registered_finding(
                "RUN-COMPLIANCE-DATASET",
                f"{_own_data_set(bench, name, want)}; this trial runs it on the {n} samples of {td.dataset.name} "
                f"({td.option}): a rehearsal of the test",
                source=bench.compliance_cite,
                fix=f"--test-dataset {name}={which or 'FILE'} (the test's official data set)",
            )
        )
    return out
