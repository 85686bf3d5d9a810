"""The checks before a run's first LoadGen test: the settings it will use against the round (``--mode submission``
refuses on an ERROR, the other modes run with them as WARNINGs), what can only fail a submission after the run (its
data sets, its generation settings), and the settings the installed LoadGen reads back.

The rules of the settings themselves are registered in loadgen_sut/settings/ (user.conf, the LoadGen release, the
overrides), RUN-SIMULATED with the verdict (loadgen_sut/run/verdict.py).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from checker.checks.rule_registry import RuleInfo, register, registered_finding
from checker.findings import Finding, Severity, UnusableInput
from loadgen_sut.compliance import TEST07
from loadgen_sut.datasets import BUILTIN_SPEC
from loadgen_sut.run import child
from loadgen_sut.run.plan import RunRequest, planned_tests, specs_by_test
from loadgen_sut.run.verdict import say_findings, simulated_engine
from loadgen_sut.settings import (
    PlannedSettings,
    RunMode,
    TestSettingsModel,
    UserConf,
    compare_with_loadgen,
    installed_loadgen_version,
    loadgen_version_findings,
    override_findings,
    parse_user_conf_text,
    plan_settings,
)
from rules.models import Benchmark, Round, Scenario

# ERRORs refuse --mode submission
RULES = register(
    __name__,
    RuleInfo("RUN-MODE", "-", "find-peak on a scenario other than Server or Interactive"),
    RuleInfo(
        "RUN-CONF-INTERACTIVE",
        "-",
        "a user.conf line for the Interactive scenario, which LoadGen ignores (WARNING "
        "outside --mode submission)",
        fix="write the key for the Server scenario ('<model>.Server.<key> = value'); for an Interactive run "
        "LoadGen reads it under the interactive conf model",
    ),
    RuleInfo(
        "RUN-DATASET",
        "-",
        "--mode submission on the built-in sample set or a --dataset-limit: each test needs its "
        "official data set",
        fix="pass --dataset <the official data set file> (and --test-dataset TEST=FILE for a test with its own) "
        "without --dataset-limit, or use --mode submission-trial",
    ),
    RuleInfo("RUN-GENERATION", "-", "--mode submission with a --max-new-tokens other than the round's"),
    RuleInfo(
        "RUN-TOKENIZER",
        "-",
        "a submission flow on an OpenAI-compatible server without --tokenizer: its accuracy (or "
        "TEST07) outputs are token ids that only the served model's tokenizer turns into the text they are scored on",
    ),
)

Printer = Callable[[str], None]


def preflight(
    request: RunRequest, rnd: Round, bench: Benchmark, scenario: Scenario, conf_text: str
) -> tuple[PlannedSettings, list[Finding]]:
    """Settings the run will use and every finding about them (errors refuse a submission run)."""
    user_conf = parse_user_conf_text(conf_text, str(request.user_conf) if request.user_conf else "user.conf")
    planned = plan_settings(rnd, bench, scenario, user_conf)
    submission = request.mode is RunMode.SUBMISSION
    findings: list[Finding] = []
    for f in loadgen_version_findings(rnd, installed_loadgen_version()):
        findings.append(
            f
            if submission or f.rule == "RUN-LOADGEN-MISSING"
            else f.model_copy(update={"severity": Severity.WARNING})
        )
    for f in planned.conf_problems:
        findings.append(f if submission else f.model_copy(update={"severity": Severity.WARNING}))
    findings += override_findings(planned, request.mode)
    findings += _interactive_line_findings(user_conf, scenario, submission)
    if submission:
        findings += _submission_input_findings(request, bench)
    if request.mode.is_submission_flow:
        findings += _tokenizer_findings(request, bench)
    if request.mode is RunMode.FIND_PEAK and scenario.loadgen_scenario is not Scenario.SERVER:
        findings.append(registered_finding("RUN-MODE", "find-peak works only for Server/Interactive"))
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
        registered_finding(
            rule="RUN-CONF-INTERACTIVE",
            severity=sev,
            message=f"{e.text!r}: LoadGen has no Interactive scenario and ignores this line"
            + (
                " (this Interactive run reads the <model>-interactive conf model's Server keys)"
                if scenario is Scenario.INTERACTIVE
                else ""
            ),
            path=user_conf.path,
            line=e.line,
        )
        for e in lines
    ]


def _submission_input_findings(request: RunRequest, bench: Benchmark) -> list[Finding]:
    """What can only fail a submission after a 10-minute run: the data set and the generation settings."""
    out: list[Finding] = []
    tests = [name for name, _, _ in planned_tests(request.mode, bench)]
    builtin = [t for t, spec in specs_by_test(request, tests).items() if spec == BUILTIN_SPEC]
    if builtin or request.dataset_limit is not None:
        acc = bench.accuracy_sample_count or bench.dataset_size
        if builtin:
            what = "the built-in sample set" + ("" if builtin == tests else f" for {', '.join(builtin)}")
        else:
            what = f"{request.dataset_limit} samples"
        out.append(
            registered_finding(
                rule="RUN-DATASET",
                message=f"--mode submission with {what}: each test must run on its official {bench.name} data set"
                + (f" (the accuracy run covers {acc} samples)" if acc else ""),
            )
        )
    if (
        request.max_new_tokens is not None
        and bench.max_new_tokens is not None
        and request.max_new_tokens != bench.max_new_tokens
    ):
        out.append(
            registered_finding(
                rule="RUN-GENERATION",
                message=f"--max-new-tokens {request.max_new_tokens}: the round fixes {bench.max_new_tokens} for {bench.name}",
                fix=f"drop --max-new-tokens (the default is {bench.max_new_tokens}), or use --mode submission-trial",
            )
        )
    return out


def _tokenizer_findings(request: RunRequest, bench: Benchmark) -> list[Finding]:
    """A submission flow needs the accuracy score, which is computed on text: an OpenAI-compatible server's outputs
    are decoded with ``--tokenizer`` (token ids from the engine, as vLLM's, still need it to become text). Without it
    the accuracy test would run after the performance test and end without ``accuracy.txt`` (no tree), so the run is
    refused before its first query. The other engines bring their tokenizer (the model directory, the simulated
    engine's words); a benchmark whose accuracy log is text (qwen3-vl) needs none unless it runs TEST07."""
    if request.engine.kind != "openai" or request.engine.tokenizer_dir is not None:
        return []
    tests = [name for name, _, _ in planned_tests(request.mode, bench)]
    decoded = [
        t for t in tests if (t == "accuracy" and bench.accuracy_log_format == "token_ids") or t == TEST07
    ]
    if not decoded:
        return []
    fix = (
        "pass --tokenizer DIR, the served model's tokenizer directory (tokenizer.json, tokenizer_config.json; for "
        "bench/token_server.py: examples/token-server-tokenizer)"
    )
    return [
        registered_finding(
            rule="RUN-TOKENIZER",
            message=f"--mode {request.mode.value} without --tokenizer: the {' and '.join(decoded)} outputs of "
            f"{bench.name} are token ids, scored on the text the served model's tokenizer decodes them to (engine "
            f"token ids too): {fix}",
            fix=fix,
        )
    ]


def loadgen_read_back(
    request: RunRequest,
    rnd: Round,
    planned: PlannedSettings,
    settings: TestSettingsModel,
    conf_path: Path,
    say: Printer,
) -> tuple[TestSettingsModel, list[Finding]]:
    """What the installed LoadGen applies of ``settings`` and ``conf_path`` (its FromConfig in a fresh process), and
    where it differs from the round's settings (``--mode submission``: refused; other modes: WARNINGs)."""
    pr = child.probe_settings(settings, conf_path, conf_path.parent)
    if pr.returncode != 0:
        said = pr.stderr.strip()[-500:].removeprefix("inference-audit: error: ")  # the probe's own message
        raise UnusableInput(f"LoadGen could not read the settings: {said}", path=str(conf_path))
    actual = TestSettingsModel.model_validate_json(pr.stdout.strip().splitlines()[-1])
    overridden = frozenset(o.setting for o in planned.overrides)
    mismatches = compare_with_loadgen(planned.official, actual, rnd.name, skip=overridden)
    if not mismatches:
        return actual, []
    sev = Severity.ERROR if request.mode is RunMode.SUBMISSION else Severity.WARNING
    mismatches = [m.model_copy(update={"severity": sev}) for m in mismatches]
    say_findings(mismatches, say)
    if sev is Severity.ERROR:
        raise UnusableInput("refusing to run: the installed LoadGen does not apply this round's settings")
    return actual, mismatches
