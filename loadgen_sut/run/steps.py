"""What runs after each finished LoadGen test, one table of steps per test (:data:`STEPS`): the accuracy run is scored,
each compliance test verified as its official ``run_verification.py`` does (TEST06, TEST07, TEST09). Each step keeps
its result for the run record (``accuracy``, ``test06``, ``test07``, ``test09``) and adds its RUN-* findings to the
verdict.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checker.checks.rule_registry import RuleInfo, register, registered_finding
from checker.compliance.audit_run import makes_it_not_the_test
from checker.findings import Finding, Severity
from loadgen_sut.compliance import (
    TEST06,
    TEST07,
    TEST09,
    verify_test06_run,
    verify_test07_run,
    verify_test09_run,
)
from loadgen_sut.engines.base import EngineInfo
from loadgen_sut.lgtest import AUDIT_CONFIG
from loadgen_sut.record import Test07Record, Test09Record, TestRecord
from loadgen_sut.run.plan import RunRequest, TestDataset
from loadgen_sut.run.verdict import say_findings
from loadgen_sut.scoring.score import score_accuracy, write_accuracy_txt
from loadgen_sut.settings import RunMode
from rules.models import Benchmark, Scenario

RULES = register(
    __name__,
    RuleInfo(
        "RUN-ACC-TOKENIZER",
        "-",
        "no tokenizer to detokenize the accuracy or TEST07 outputs (--tokenizer DIR)",
        fix="--tokenizer DIR",
    ),
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
)
# the failed verification of each audit test that has a threshold
VERIFICATION_RULES = {TEST07: "RUN-TEST07-FAILED", TEST09: "RUN-TEST09-FAILED"}

Printer = Callable[[str], None]


@dataclass(frozen=True)
class FinishedTest:
    """A LoadGen test that finished, as the steps after it see it."""

    request: RunRequest
    name: str
    test_dir: Path
    run_dir: Path
    data: TestDataset  # the data set it ran on, with the tokenizer that decodes its outputs
    bench: Benchmark
    scenario: Scenario


@dataclass
class Results:
    """What the run's tests leave for the run record: each test's record, the engine they reported, the verdict's
    findings (each test's own, then its steps'), and the steps' results."""

    tests: list[TestRecord] = field(default_factory=list)
    engine: EngineInfo | None = None
    verdict: list[Finding] = field(default_factory=list)  # the verdict's reasons (RUN-* rules)
    accuracy: dict[str, Any] | None = None
    test06: dict[str, Any] | None = None
    test07: Test07Record | None = None
    test09: Test09Record | None = None
    started: bool = False  # a LoadGen test's process was started: the run directory holds a run from then on


Step = Callable[[FinishedTest, Results, Printer], None]


def _no_tokenizer(what: str) -> Finding:
    return registered_finding(
        "RUN-ACC-TOKENIZER", f"{what}: no tokenizer to detokenize outputs (give --tokenizer DIR)"
    )


def score(t: FinishedTest, results: Results, say: Printer) -> None:
    """Score the accuracy run on the accuracy test's data set; the simulated engine's score says SIMULATED."""
    log = t.test_dir / "mlperf_log_accuracy.json"
    tokenizer = t.data.tokenizer
    if tokenizer is None and t.bench.accuracy_log_format == "token_ids":  # a text response (qwen3-vl) needs none
        results.verdict.append(_no_tokenizer("accuracy"))
        return
    scored = score_accuracy(
        log,
        t.data.dataset,
        t.bench,
        tokenizer.decode if tokenizer is not None else None,
        simulated=t.request.engine.kind == "simulated",
        code_execution=t.request.code_execution,
    )
    write_accuracy_txt(scored, t.test_dir / "accuracy.txt", log)
    judged = scored.findings(t.bench, scenario=t.scenario)  # the scenario's targets (v6.1 qwen3-vl Interactive has its own)
    results.verdict += [f for f in judged if f.severity is Severity.ERROR]  # RUN-ACC-*: below target, not covered, ...
    scores = ", ".join(f"{k} {v:g}" for k, v in scored.metrics().items())
    say(f"  accuracy: {scores} ({t.test_dir / 'accuracy.txt'})")
    stand_in = stand_in_engine(t.request.engine.kind, results.engine)
    if stand_in is not None:
        say(
            f"    STAND-IN ENGINE ({stand_in}): these scores are meaningless, not a measure of your system; the "
            "accuracy run only rehearses the flow (logging, scoring, accuracy.txt)"
        )
    say_findings(judged, say)
    results.accuracy = scored.model_dump(mode="json")


TOKEN_SERVER = "token-server"  # bench/token_server.py's /version and default /v1/models owned_by


def stand_in_engine(kind: str, engine: EngineInfo | None) -> str | None:
    """What answers instead of a model, when something does: the simulated engine, or the project's local token
    server (it reports itself as ``token-server``); None for a real engine."""
    if kind == "simulated":
        return "the simulated engine copies the words of the reference answers"
    if engine is not None and TOKEN_SERVER in (engine.version, engine.name):
        return "bench/token_server.py answers the same word to every prompt"
    return None


def verify_test06(t: FinishedTest, results: Results, say: Printer) -> None:
    out_dir = t.test_dir / "verification"
    out_dir.mkdir(exist_ok=True)
    eos = t.data.tokenizer.eos_token_id if t.data.tokenizer is not None else None
    result = verify_test06_run(t.test_dir / "mlperf_log_accuracy.json", eos, out_dir, benchmark=t.bench)
    say(f"  TEST06 verification: {'PASS' if result.passed else 'FAIL'} ({out_dir / 'verify_accuracy.txt'})")
    for line in result.verify_accuracy_lines():
        say(f"    {line}")
    if not result.passed:
        results.verdict.append(registered_finding("RUN-TEST06-FAILED", f"TEST06 verification failed (see {out_dir})"))
    results.test06 = result.model_dump(mode="json")


def audit_findings(test: str, problems: Sequence[str], mode: RunMode) -> list[Finding]:
    """What the detail log shows against the test's audit.config: a run without it, or not in performance mode, is
    not the test (ERROR); other shortfalls (sample counts) are ERRORs in --mode submission, WARNINGs in a trial."""
    out = []
    for p in problems:
        fatal = makes_it_not_the_test(p) or mode is RunMode.SUBMISSION
        out.append(
            registered_finding(
                "RUN-AUDIT-CONFIG",
                f"{test}: {p}",
                severity=None if fatal else Severity.WARNING,  # None: the registered ERROR
                source=f"compliance/{test}/<benchmark>/audit.config; checker.compliance.audit_run",
            )
        )
    return out


def verification_failed(test: str, verify_file: Path, mode: RunMode, own_dataset: bool) -> Finding:
    """RUN-TEST07-FAILED / RUN-TEST09-FAILED: an ERROR, except in a trial on another data set than the test's, where
    the round's threshold (bounds) does not apply: a WARNING that says so."""
    rule = VERIFICATION_RULES[test]
    if own_dataset or mode is RunMode.SUBMISSION:
        return registered_finding(rule, f"{test} verification failed (see {verify_file})")
    return registered_finding(
        rule,
        f"{test} verification failed (see {verify_file}) on a data set other than the test's: the round's "
        "threshold is set for that data set, so this trial says nothing about it",
        severity=Severity.WARNING,
    )


def verify_test07(t: FinishedTest, results: Results, say: Printer) -> None:
    tokenizer = t.data.tokenizer
    if tokenizer is None:
        results.verdict.append(_no_tokenizer(TEST07))
        return
    mode = t.request.mode
    rec = verify_test07_run(
        t.test_dir / "mlperf_log_accuracy.json",
        t.data.dataset,
        t.bench,
        tokenizer.decode,
        t.test_dir / "verification",
        audit_config=(t.test_dir / AUDIT_CONFIG).read_text(encoding="utf-8"),
        detail_log=t.test_dir / "mlperf_log_detail.txt",
        simulated=t.request.engine.kind == "simulated",
        code_execution=t.request.code_execution,
        relative_to=t.run_dir,
    )
    shown = "no score" if rec.score is None else f"score {rec.score:g}"
    say(
        f"  TEST07 verification: {'PASS' if rec.passed else 'FAIL'} ({shown}, threshold {rec.threshold:g}, "
        f"{rec.samples_scored} samples scored; {t.run_dir / rec.verify_file})"
    )
    if rec.evaluation_error:
        say(f"    evaluation failed: {rec.evaluation_error}")
    if not rec.passed:
        own = rec.dataset_samples == rec.required_samples
        results.verdict.append(verification_failed(TEST07, t.run_dir / rec.verify_file, mode, own))
    if rec.missing_samples:
        results.verdict.append(
            registered_finding(
                "RUN-TEST07-COVERAGE",
                f"TEST07 logged {rec.samples_scored} of the {rec.dataset_samples} samples of {rec.dataset}: "
                f"{rec.missing_samples} have no output (TEST07 logs every sample)",
            )
        )
    results.verdict += audit_findings(TEST07, rec.audit_problems, mode)
    results.test07 = rec


def verify_test09(t: FinishedTest, results: Results, say: Printer) -> None:
    rec = verify_test09_run(
        t.test_dir / "mlperf_log_accuracy.json",
        t.bench,
        t.test_dir,  # verify_output_len.txt beside LoadGen's logs: the packager copies it from there
        audit_config=(t.test_dir / AUDIT_CONFIG).read_text(encoding="utf-8"),
        detail_log=t.test_dir / "mlperf_log_detail.txt",
        relative_to=t.run_dir,
    )
    mean = "no sample logged" if rec.mean_tokens is None else f"mean {rec.mean_tokens:.2f} tokens"
    say(
        f"  TEST09 verification: {'PASS' if rec.passed else 'FAIL'} ({mean} over {rec.samples} samples, "
        f"bounds [{rec.low:g}, {rec.high:g}]; {t.run_dir / rec.verify_file})"
    )
    if not rec.passed:
        own = rec.samples == rec.required_samples
        results.verdict.append(verification_failed(TEST09, t.run_dir / rec.verify_file, t.request.mode, own))
    results.verdict += audit_findings(TEST09, rec.audit_problems, t.request.mode)
    results.test09 = rec


# what runs after each LoadGen test that finished, by test (a test stopped short has no steps)
STEPS: dict[str, tuple[Step, ...]] = {
    "performance": (),
    "find-peak": (),
    "accuracy": (score,),
    TEST06: (verify_test06,),
    TEST07: (verify_test07,),
    TEST09: (verify_test09,),
}


def after_test(t: FinishedTest, results: Results, say: Printer) -> None:
    """The steps of :data:`STEPS` for the finished test ``t``, in order."""
    for step in STEPS[t.name]:
        step(t, results, say)
