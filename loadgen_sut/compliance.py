"""Run-side compliance tests: write each test's ``audit.config`` and verify its run in the official format.

The harness produces the LLM audit tests: TEST06 (output consistency), TEST07 (accuracy in performance mode) and
TEST09 (mean output length in performance mode) - each a performance-mode LoadGen run with the test's
``audit.config`` in LoadGen's working directory, written by :func:`compliance_audit_config` from the rules data.

TEST06 (LLM output consistency) is a performance-mode LoadGen run with TEST06's ``audit.config``
in the working directory: LoadGen then logs about 100 sampled responses to
``mlperf_log_accuracy.json``. :func:`verify_test06_run` re-verifies them with
:func:`checker.compliance.test06.verify_test06` and writes ``<out_dir>/verify_accuracy.txt`` in the official
format, which the submission checker reads (``First token check pass: True`` etc.), plus a
``verify_accuracy_details.txt`` with the per-sample reasons, and copies the log to
``<out_dir>/accuracy/`` as the official script does.

TEST07 (:func:`verify_test07_run`): ``compliance/TEST07/run_verification.py`` runs the benchmark's accuracy script
on TEST07's accuracy log, keeps its output in ``verify_accuracy.txt``, takes the first ``--score-pattern`` match as
the score and appends the summary (``TEST07 Verification Summary``, ``Accuracy score``, ``Accuracy threshold``,
``Accuracy check pass``, ``TEST PASS``/``TEST FAIL``). Here the accuracy script is this tool's evaluator of the
benchmark (:func:`loadgen_sut.scoring.score.score_accuracy`, its ``accuracy.txt`` text as the output): the score is
over the logged samples, as the official script's is, with the threshold of the rules data.

TEST09 (:func:`verify_test09_run`): ``compliance/TEST09/run_verification.py`` counts each logged sample's 4-byte
token ids, and passes when the mean lies within the audit.config bounds; it writes ``verify_output_len.txt``
(statistics, then the verification results). The same text is written from :func:`checker.compliance.test09.verify_test09`.

The TEST07/TEST09 logs are not copied (they hold every sample: tens of MB); the packager copies them into the tree.
"""

from __future__ import annotations

import contextlib
import math
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from checker.compliance.audit_run import audit_run_report
from checker.compliance.test06 import Test06Result, verify_test06
from checker.compliance.test07 import DEFAULT_SCORE_PATTERN, SUMMARY_MARK
from checker.compliance.test09 import Test09Result, token_length, verify_test09
from checker.findings import UnusableInput
from checker.parsers.accuracy_log import ACCURACY_LOG_NAME, TokenDtype, parse_accuracy_log
from checker.parsers.mllog import parse_detail_file
from loadgen_sut.datasets import Dataset
from loadgen_sut.record import Test07Record, Test09Record
from loadgen_sut.scoring.code_exec import CodeExecution
from loadgen_sut.scoring.score import Detokenize, accuracy_txt, score_accuracy
from rules.models import Benchmark, Round, Scenario

TEST06 = "TEST06"
AUDIT_CONFIG_NAME = "audit.config"
DETAIL_LOG_NAME = "mlperf_log_detail.txt"
VERIFY_FILE = "verify_accuracy.txt"
DETAILS_FILE = "verify_accuracy_details.txt"

# mlcommons/inference compliance/TEST06/audit.config (unchanged from v5.0 to v6.1): LoadGen keys
# applied to every model and scenario ("*.*.<key>").
# mode 2 = performance; about 100 responses are logged; min_duration in ms; equal issue off.
TEST06_AUDIT_SETTINGS: tuple[tuple[str, str], ...] = (
    ("mode", "2"),
    ("accuracy_log_rng_seed", "720381539243781796"),
    ("accuracy_log_sampling_target", "100"),
    ("min_query_count", "100"),
    ("min_duration", "0"),
    ("sample_concatenate_permutation", "0"),
)
TEST06_SOURCE = "mlcommons/inference compliance/TEST06/audit.config"


def test06_audit_config(round_: Round, benchmark: Benchmark) -> str:
    """The ``audit.config`` text for a TEST06 run of ``benchmark`` in ``round_``.

    Raises :class:`UnusableInput` when the round does not require TEST06 for the benchmark.
    """
    if TEST06 not in benchmark.compliance_tests:
        required = ", ".join(benchmark.compliance_tests) or "none"
        raise UnusableInput(
            f"{round_.name} does not require TEST06 for {benchmark.name} (its compliance tests: {required})",
            benchmark.compliance_cite,
        )
    lines = [
        f"# TEST06 (LLM output consistency) for {benchmark.name}, round {round_.name}",
        f"# Values of {TEST06_SOURCE}; written by inference-audit.",
        "# Put this file in the working directory of the run; remove it afterwards.",
    ]
    lines += [f"*.*.{key} = {value}" for key, value in TEST06_AUDIT_SETTINGS]
    return "\n".join(lines) + "\n"


def _scenario_from_detail(run_dir: Path) -> Scenario:
    detail = run_dir / DETAIL_LOG_NAME
    if not detail.is_file():
        raise UnusableInput(
            f"no {DETAIL_LOG_NAME} beside the accuracy log to read the scenario from; pass it", str(run_dir)
        )
    name = parse_detail_file(detail).effective_scenario
    scenario = Scenario.parse(name) if name else None
    if scenario is None:
        raise UnusableInput(
            f"no effective_scenario in the log (got {name!r}); pass the scenario", str(detail)
        )
    return scenario


def _details(result: Test06Result) -> list[str]:
    lines = [
        f"scenario: {result.scenario.value}; dtype: {result.dtype.value}; "
        f"EOS id: {'/'.join(str(i) for i in result.eos_token_ids or (result.eos_token_id,))}"
        + ("" if result.eos_token_id_given else " (the official default; pass the model's EOS id)"),
        f"samples logged: {result.sample_count}",
    ]
    for outcome in result.outcomes:
        verdict = "skipped" if outcome.passed is None else ("pass" if outcome.passed else "FAIL")
        official = "" if outcome.official_pass is None else f" (official script: {outcome.official_pass})"
        lines.append(
            f"{outcome.check.value}: {verdict}{official}" + (f" - {outcome.note}" if outcome.note else "")
        )
        for p in outcome.problems[:20]:
            where = f"line {p.line}, " if p.line is not None else ""
            lines.append(f"  {where}entry {p.entry_index} (qsl_idx {p.qsl_idx}): {p.reason}")
        if len(outcome.problems) > 20:
            lines.append(f"  ... and {len(outcome.problems) - 20} more")
    return lines


def verify_test06_run(
    accuracy_log: Path,
    eos_token_id: int | None,
    out_dir: Path,
    *,
    scenario: Scenario | None = None,
    dtype: TokenDtype = TokenDtype.INT32,
    benchmark: Benchmark | None = None,
) -> Test06Result:
    """Verify a TEST06 run and write ``out_dir/verify_accuracy.txt`` in the official format.

    ``eos_token_id`` is the engine's (tokenizer's) EOS id; when it is None the benchmark's
    ``test06_eos_token_ids`` from the rules data are used, then the official default (2).

    ``scenario`` None reads ``effective_scenario`` from ``mlperf_log_detail.txt`` beside the log.
    The accuracy log is copied to ``out_dir/accuracy/`` (never modified). ``out_dir`` must not be
    the directory holding the log (the copy would overwrite the input).
    """
    log = parse_accuracy_log(accuracy_log)
    if log.truncated:
        raise UnusableInput("the accuracy log is truncated; TEST06 needs the full log", str(accuracy_log))
    if scenario is None:
        scenario = _scenario_from_detail(accuracy_log.parent)
    eos_ids = () if eos_token_id is not None or benchmark is None else benchmark.test06_eos_token_ids
    result = verify_test06(log.entries, scenario, eos_token_id=eos_token_id, eos_token_ids=eos_ids, dtype=dtype)
    copy_dir = out_dir / "accuracy"
    if copy_dir.resolve() == accuracy_log.parent.resolve():
        raise UnusableInput("output directory would overwrite the input accuracy log", str(out_dir))
    copy_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / VERIFY_FILE).write_text("\n".join(result.verify_accuracy_lines()) + "\n", encoding="utf-8")
    (out_dir / DETAILS_FILE).write_text("\n".join(_details(result)) + "\n", encoding="utf-8")
    shutil.copy2(accuracy_log, copy_dir / ACCURACY_LOG_NAME)
    return result


# --------------------------------------------------------------------------------------------------------------------
# TEST07 / TEST09

TEST07 = "TEST07"
TEST09 = "TEST09"
AUDIT_TESTS = (TEST06, TEST07, TEST09)  # the compliance tests this harness runs
VERIFY_OUTPUT_LEN_FILE = "verify_output_len.txt"
_RULE = "=" * 80
# accuracy_log_rng_seed of every TEST06/TEST07/TEST09 audit.config (TEST07/TEST09 files line 13)
AUDIT_RNG_SEED = "720381539243781796"
AUDIT_SOURCE_COMMIT = "mlcommons/inference b66003e1"


@dataclass(frozen=True, slots=True)
class _AuditFile:
    """What a benchmark's TEST07/TEST09 audit.config sets beyond the rules data's sample count and thresholds."""

    path: str
    lines: str  # the lines of its settings, for the cite
    issue_unique: bool  # performance_issue_unique = 1 (each loaded sample issued exactly once)
    sampling_target: int | None  # accuracy_log_sampling_target; None: the test's sample count


# The reference files at inference HEAD b66003e1 (keys "*.*.<key>"): mode 2, accuracy_log_rng_seed, sampling target,
# min_query_count = the sample count (Benchmark.test07_sample_count / test09_sample_count), min_duration 0,
# performance_issue_unique where listed, sample_concatenate_permutation 0, then the thresholds (rules data).
_AUDIT_FILES: dict[tuple[str, str], _AuditFile] = {
    (TEST07, "gpt-oss-120b"): _AuditFile("compliance/TEST07/gpt-oss-120b/audit.config", "10-37", True, None),
    (TEST09, "gpt-oss-120b"): _AuditFile("compliance/TEST09/gpt-oss-120b/audit.config", "10-42", True, 10000),
    (TEST09, "e2e-rag-qna"): _AuditFile("compliance/TEST09/e2e-rag-qna/audit.config", "10-40", False, 10000),
}


def _require(round_: Round, benchmark: Benchmark, test: str) -> None:
    if test not in benchmark.compliance_tests:
        required = ", ".join(benchmark.compliance_tests) or "none"
        raise UnusableInput(
            f"{round_.name} does not require {test} for {benchmark.name} (its compliance tests: {required})",
            benchmark.compliance_cite,
        )


def required_samples(benchmark: Benchmark, test: str) -> int | None:
    """The size of the data set a TEST07/TEST09 run covers (rules data; None: not known / another test)."""
    if test == TEST07:
        return benchmark.test07_sample_count
    if test == TEST09:
        return benchmark.test09_sample_count
    return None


def audit_settings(round_: Round, benchmark: Benchmark, test: str) -> tuple[tuple[str, str], ...]:
    """The ``audit.config`` lines of ``test`` for ``benchmark`` as (key, value), keys without the ``*.*.`` prefix.

    Raises :class:`UnusableInput` when the round does not require the test, or when this tool lacks the benchmark's
    audit.config values (a benchmark added to the round after this tool).
    """
    _require(round_, benchmark, test)
    if test == TEST06:
        return TEST06_AUDIT_SETTINGS
    src = _AUDIT_FILES.get((test, benchmark.name))
    count = required_samples(benchmark, test)
    if test == TEST07:
        limits: tuple[tuple[str, float | None], ...] = (
            ("test07_accuracy_threshold", benchmark.test07_accuracy_threshold),
        )
    elif test == TEST09:
        limits = (
            ("test09_min_output_tokens", benchmark.test09_min_output_tokens),
            ("test09_max_output_tokens", benchmark.test09_max_output_tokens),
        )
    else:
        raise UnusableInput(f"{test} of {benchmark.name}: this harness produces only {', '.join(AUDIT_TESTS)}")
    if src is None or count is None or any(v is None for _, v in limits):
        raise UnusableInput(
            f"this tool has no {test} audit.config values for {benchmark.name} (compliance/{test}/{benchmark.name}/"
            "audit.config): add them to the rules data (Benchmark.test07_*/test09_*) and loadgen_sut/compliance.py",
            benchmark.compliance_cite,
        )
    out = [
        ("mode", "2"),
        ("accuracy_log_rng_seed", AUDIT_RNG_SEED),
        ("accuracy_log_sampling_target", str(src.sampling_target or count)),
        ("min_query_count", str(count)),
        ("min_duration", "0"),
    ]
    if src.issue_unique:
        out.append(("performance_issue_unique", "1"))
    out.append(("sample_concatenate_permutation", "0"))
    out += [(key, repr(float(value))) for key, value in limits if value is not None]
    return tuple(out)


def compliance_audit_config(
    round_: Round,
    benchmark: Benchmark,
    test: str,
    *,
    dataset_samples: int | None = None,
    performance_sample_count: int | None = None,
) -> str:
    """The ``audit.config`` text of a compliance test (TEST06, TEST07, TEST09) of ``benchmark`` in ``round_``.

    TEST07/TEST09 issue each loaded sample once (``performance_issue_unique = 1``). With a QSL of fewer samples than
    LoadGen's ``performance_sample_count`` (mlperf.conf's override: 6396 for gpt-oss-120b; TEST07's data set holds
    990), an Offline run then crashes in ``StartTest`` (SIGSEGV; measured with LoadGen 5.1.2, 6.0.15 and 6.0.17: a
    16-sample QSL and a count of 200, a 32-sample QSL and 13368; Server runs), while with the count equal to the QSL it
    issues and logs every sample once. When ``dataset_samples`` is below ``performance_sample_count`` a
    ``performance_sample_count_override`` of the data set's size is therefore added, with a comment saying why: it
    makes LoadGen do what the file asks ("all samples covered").
    """
    if test == TEST06:
        return test06_audit_config(round_, benchmark)
    settings = audit_settings(round_, benchmark, test)
    src = _AUDIT_FILES[(test, benchmark.name)]
    lines = [
        f"# {test} for {benchmark.name}, round {round_.name}",
        f"# Values of {src.path} ({AUDIT_SOURCE_COMMIT}, lines {src.lines}; the sample count and thresholds from the "
        "rules data); written by inference-audit.",
        "# Put this file in the working directory of the run; remove it afterwards.",
    ]
    lines += [f"*.*.{key} = {value}" for key, value in settings]
    unique = dict(settings).get("performance_issue_unique") == "1"
    if unique and dataset_samples and performance_sample_count and dataset_samples < performance_sample_count:
        lines += [
            f"# inference-audit: the data set holds {dataset_samples} samples, LoadGen's performance_sample_count "
            f"is {performance_sample_count}: with performance_issue_unique an Offline run crashes (SIGSEGV, LoadGen",
            "# 5.1.2-6.0.17) unless the count is the data set's; this line makes it issue and log each sample once.",
            f"*.*.performance_sample_count_override = {dataset_samples}",
        ]
    return "\n".join(lines) + "\n"


def _audit_problems(detail_log: Path | None, sample_count: int | None) -> tuple[str, ...]:
    if detail_log is None:
        return ()
    if not detail_log.is_file():
        return (f"no {DETAIL_LOG_NAME}: nothing shows the audit.config was applied",)
    return tuple(audit_run_report(parse_detail_file(detail_log)).problems(sample_count))


def _relative(path: Path, base: Path | None) -> str:
    if base is None:
        return str(path)
    try:
        return str(path.relative_to(base))
    except ValueError:
        return str(path)


def verification_text_test07(output: str, threshold: float, score_pattern: str) -> tuple[str, float | None]:
    """``verify_accuracy.txt`` as ``compliance/TEST07/run_verification.py`` writes it: the accuracy evaluation's
    ``output``, then the summary; the score is the first ``score_pattern`` match in ``output`` (None: no match)."""
    try:
        match = re.search(score_pattern, output)
    except re.error as exc:
        raise UnusableInput(f"TEST07 score pattern {score_pattern!r} is not a regular expression: {exc}") from exc
    score: float | None = None
    if match is not None:
        try:
            score = float(match.group(1))
        except (ValueError, IndexError):
            score = None
    if output and not output.endswith("\n"):
        output += "\n"
    summary = ["", _RULE, SUMMARY_MARK, _RULE]
    if score is not None:
        passed = score >= threshold
        summary += [
            f"Accuracy score: {score}",
            f"Accuracy threshold: {threshold}",
            f"Accuracy check pass: {passed}",
            "TEST PASS" if passed else "TEST FAIL",
        ]
    else:
        summary += ["Error: Could not parse accuracy score", "TEST FAIL"]
    return output + "\n".join(summary) + "\n", score


def verify_test07_run(
    accuracy_log: Path,
    dataset: Dataset,
    benchmark: Benchmark,
    detokenize: Detokenize,
    out_dir: Path,
    *,
    audit_config: str,
    detail_log: Path | None = None,
    simulated: bool = False,
    code_execution: CodeExecution | None = None,
    relative_to: Path | None = None,
    detokenize_special: Detokenize | None = None,
) -> Test07Record:
    """Verify a TEST07 run: score its accuracy log with the benchmark's evaluator, write ``out_dir/verify_accuracy.txt``.

    The score is over the logged samples (what the official script's accuracy command computes on the same log);
    the threshold and score pattern are the rules data's (``Benchmark.test07_accuracy_threshold`` /
    ``test07_score_pattern``). An evaluation that cannot run (no evaluator, a log that does not parse, an output for a
    sample the data set lacks) gives no score and ``TEST FAIL``, with the reason in the file and the record.
    ``detail_log``: the run's ``mlperf_log_detail.txt``, judged against the audit.config (:mod:`checker.compliance.audit_run`).
    ``detokenize`` / ``detokenize_special``: as :func:`~loadgen_sut.scoring.score.score_accuracy` takes them.
    """
    threshold = benchmark.test07_accuracy_threshold
    if threshold is None:
        raise UnusableInput(f"no TEST07 accuracy threshold for {benchmark.name} in the rules data", benchmark.compliance_cite)
    pattern = benchmark.test07_score_pattern or DEFAULT_SCORE_PATTERN
    error: str | None = None
    logged = 0
    score = None
    try:
        score = score_accuracy(
            accuracy_log,
            dataset,
            benchmark,
            detokenize,
            simulated=simulated,
            code_execution=code_execution,
            detokenize_special=detokenize_special,
        )
        output = accuracy_txt(score, score.accuracy_log_sha256)  # the hash of the bytes scored (read once)
        logged = score.gen_num + score.duplicate_entries
    except UnusableInput as exc:
        error = str(exc)
        output = f"inference-audit: the {benchmark.name} accuracy evaluation of {accuracy_log.name} failed: {exc}\n"
        with contextlib.suppress(UnusableInput):  # the entries, when the log itself parses
            logged = len(parse_accuracy_log(accuracy_log).entries)
    text, parsed = verification_text_test07(output, threshold, pattern)
    out_dir.mkdir(parents=True, exist_ok=True)
    verify = out_dir / VERIFY_FILE
    verify.write_text(text, encoding="utf-8")
    return Test07Record(
        passed=parsed is not None and parsed >= threshold,
        score=parsed,
        threshold=threshold,
        score_pattern=pattern,
        samples_logged=logged,
        samples_scored=score.gen_num if score is not None else 0,
        dataset=dataset.name,
        dataset_samples=len(dataset.samples),
        missing_samples=score.missing_samples if score is not None else None,
        required_samples=benchmark.test07_sample_count,
        simulated=simulated or bool(dataset.simulated),
        evaluation_error=error,
        audit_config=audit_config,
        audit_problems=_audit_problems(detail_log, benchmark.test07_sample_count),
        verify_file=_relative(verify, relative_to),
    )


def verification_text_test09(result: Test09Result, std_tokens: float | None) -> str:
    """``verify_output_len.txt`` as ``compliance/TEST09/run_verification.py`` writes it (no sample: an error line and
    TEST FAIL; the official script then writes nothing and exits 1)."""
    head = [_RULE, "TEST09: Verify Output Token Length in Performance Mode", _RULE, ""]
    if result.samples == 0:
        return "\n".join([*head, "Error: No entries found in MLPerf log", "", "TEST FAIL"]) + "\n"
    min_ok = result.mean >= result.low
    max_ok = result.mean <= result.high
    lines = [
        *head,
        "Output Token Length Statistics",
        "-" * 40,
        f"Total samples: {result.samples}",
        f"Mean output tokens: {result.mean:.2f}",
        f"Min output tokens: {result.min_tokens}",
        f"Max output tokens: {result.max_tokens}",
    ]
    if std_tokens is not None:
        lines.append(f"Std deviation: {std_tokens:.2f}")
    lines += [
        "",
        _RULE,
        "Verification Results",
        _RULE,
        f"Mean output tokens: {result.mean:.2f}",
        f"Min threshold: {float(result.low)}",
        f"Max threshold: {float(result.high)}",
        f"Min check pass: {min_ok}",
        f"Max check pass: {max_ok}",
        "",
        "TEST PASS" if min_ok and max_ok else "TEST FAIL",
    ]
    return "\n".join(lines) + "\n"


def verify_test09_run(
    accuracy_log: Path,
    benchmark: Benchmark,
    out_dir: Path,
    *,
    audit_config: str,
    detail_log: Path | None = None,
    relative_to: Path | None = None,
) -> Test09Record:
    """Verify a TEST09 run: the mean output length over its logged samples, written to ``out_dir/verify_output_len.txt``
    (bounds: ``Benchmark.test09_min_output_tokens`` / ``test09_max_output_tokens``)."""
    low, high = benchmark.test09_min_output_tokens, benchmark.test09_max_output_tokens
    if low is None or high is None:
        raise UnusableInput(f"no TEST09 output length bounds for {benchmark.name} in the rules data", benchmark.compliance_cite)
    log = parse_accuracy_log(accuracy_log)
    if log.truncated:
        raise UnusableInput("the accuracy log is truncated; TEST09 needs the full log", str(accuracy_log))
    result = verify_test09(log.entries, low, high)
    lengths = [token_length(e) for e in log.entries]
    std = math.sqrt(sum((x - result.mean) ** 2 for x in lengths) / len(lengths)) if lengths else None
    out_dir.mkdir(parents=True, exist_ok=True)
    verify = out_dir / VERIFY_OUTPUT_LEN_FILE
    verify.write_text(verification_text_test09(result, std), encoding="utf-8")
    return Test09Record(
        passed=result.passed,
        samples=result.samples,
        mean_tokens=result.mean if result.samples else None,
        min_tokens=result.min_tokens if result.samples else None,
        max_tokens=result.max_tokens if result.samples else None,
        std_tokens=std,
        low=low,
        high=high,
        required_samples=benchmark.test09_sample_count,
        audit_config=audit_config,
        audit_problems=_audit_problems(detail_log, benchmark.test09_sample_count),
        verify_file=_relative(verify, relative_to),
    )
