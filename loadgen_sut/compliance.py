"""Run-side TEST06: write its ``audit.config``, and verify a TEST06 run into ``verify_accuracy.txt``.

TEST06 (LLM output consistency) is a performance-mode LoadGen run with TEST06's ``audit.config``
in the working directory: LoadGen then logs about 100 sampled responses to
``mlperf_log_accuracy.json``. :func:`verify_test06_run` re-verifies them with
:func:`checker.test06.verify_test06` and writes ``<out_dir>/verify_accuracy.txt`` in the official
format, which the submission checker reads (``First token check pass: True`` etc.), plus a
``verify_accuracy_details.txt`` with the per-sample reasons, and copies the log to
``<out_dir>/accuracy/`` as the official script does.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from checker.findings import UnusableInput
from checker.parsers.accuracy_log import ACCURACY_LOG_NAME, TokenDtype, parse_accuracy_log
from checker.parsers.mllog import parse_detail_file
from checker.test06 import Test06Result, verify_test06
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
