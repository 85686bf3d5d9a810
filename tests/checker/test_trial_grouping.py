"""Trial settings are told apart from real problems (issue 23): a tree made with trial settings (short runs, few
queries, a partial data set) ends in errors a full-length run with the official settings would not have; the reports
mark those (``Finding.trial``), count them, and say so in the last line, and the verdicts stay what they are."""

from __future__ import annotations

import json
from pathlib import Path

from checker.engine import check_tree
from checker.findings import Finding, Severity
from checker.report.json_report import report_dict
from checker.report.outcome import counts, exit_code
from checker.report.terminal import render_terminal
from checker.results import CheckReport
from rules import load_round
from tests.checker.fixture_cases import materialize

REPO = Path(__file__).resolve().parents[2]
TRIAL_TREE = REPO / "tests" / "fixtures" / "official" / "v6.1" / "tree"  # inference-audit run --mode submission-trial
SIM = "closed/InferenceAuditSim/results/simulated_system"


def _errors(report: CheckReport) -> list[Finding]:
    return [f for r in report.results for f in r.findings if f.severity is Severity.ERROR] + [
        f for f in report.findings if f.severity is Severity.ERROR
    ]


def test_a_trial_tree_marks_what_trial_settings_produce_and_keeps_the_verdicts() -> None:
    report = check_tree(TRIAL_TREE, load_round("v6.1"), workers=1)
    errors = _errors(report)
    trial = {f.rule for f in errors if f.trial}
    real = {f.rule for f in errors if not f.trial}
    # the short runs, the Offline samples per query and the partial data sets (and what follows from them)
    assert {"PERF-MIN-DURATION", "PERF-OFFLINE-SPQ", "ACC-DATASET", "COMPL-AUDIT-RUN"} <= trial
    # the simulated engine's scores are real problems: a full-length run does not mend them
    assert "ACC-METRIC" in real and "PERF-MIN-DURATION" not in real and "ACC-DATASET" not in real
    # a total over the data set (GEN_LEN) on part of it is a trial's; a mean (exact_match) is not
    metric = {f.message.split(" ", 1)[0]: f.trial for f in errors if f.rule == "ACC-METRIC"}
    assert metric["GEN_LEN"] is True and metric["exact_match"] is False
    assert exit_code(report) == 1 and not any(r.valid for r in report.results)
    c = counts(report)
    assert 0 < c.trial_errors < c.errors == len(errors)
    text = render_terminal(report)
    last = text.rstrip().splitlines()[-1]
    assert f"{c.errors} error(s) ({c.trial_errors} from trial settings)" in last and last.endswith("(exit 1)")
    assert "a full-length run with the round's official settings and data set does not have them" in text
    assert "[PERF-MIN-DURATION] error (trial setting):" in text
    data = report_dict(report)
    assert data["counts"]["trial_errors"] == c.trial_errors
    assert json.dumps(data)  # serialisable; the schema test validates every report shape


def test_a_benchmark_short_of_scenarios_only_through_trial_settings_is_a_trial_finding() -> None:
    report = check_tree(TRIAL_TREE, load_round("v6.1"), workers=1)
    tree = {(f.scope, f.rule): f for f in report.findings if f.severity is Severity.ERROR}
    # llama3.1-8b: Offline, Server and Interactive exist, invalid through trial settings and the data set's GEN_LEN
    llama = tree[(f"{SIM}/llama3.1-8b", "TREE-REQUIRED-SCENARIOS")]
    assert llama.trial and "['Offline'] present but invalid" in llama.message
    assert tree[(f"{SIM}/llama3.1-8b", "TREE-SERVER-OR-INTERACTIVE")].trial
    # deepseek-r1 has no Server or Interactive directory: no full-length Offline run mends that
    missing = tree[(f"{SIM}/deepseek-r1", "TREE-SERVER-OR-INTERACTIVE")]
    assert not missing.trial and "['Server', 'Interactive'] missing" in missing.message


def test_a_published_result_has_no_trial_error(tmp_path: Path) -> None:
    root = materialize({"base": "llama2", "mutations": []}, tmp_path / "tree")
    report = check_tree(root, load_round("v5.1"), workers=1)
    assert counts(report).trial_errors == 0
    assert "trial" not in render_terminal(report)


def test_descriptions_left_as_init_trial_wrote_them_are_trial_errors(tmp_path: Path) -> None:
    """`init system|implementation --trial` writes 'TRIAL: not described' for what a trial leaves: the official
    checkers accept any non-empty text, so the check names each such field (SYS-/MEAS-TRIAL-VALUE), an error a real
    description mends, grouped with the trial settings' errors."""
    import shutil

    from checker.checks.system import TRIAL_PREFIX
    from loadgen_sut.describe import TRIAL_VALUE

    assert TRIAL_VALUE.startswith(TRIAL_PREFIX)  # one prefix: what init writes is what the check finds
    tree = tmp_path / "tree"
    shutil.copytree(TRIAL_TREE, tree)
    system = tree / "closed/InferenceAuditSim/systems/simulated_system.json"
    desc = json.loads(system.read_text())
    desc["host_processor_model_name"] = desc["host_memory_capacity"] = TRIAL_VALUE
    system.write_text(json.dumps(desc, indent=2))
    result = f"{SIM}/llama3.1-8b/Server"
    impl = tree / result / "measurements.json"
    fields = json.loads(impl.read_text())
    fields["weight_data_types"] = TRIAL_VALUE
    impl.write_text(json.dumps(fields, indent=2))

    report = check_tree(tree, load_round("v6.1"), workers=1)
    sys_f = [f for f in report.findings if f.rule == "SYS-TRIAL-VALUE"]
    assert len(sys_f) == 1 and sys_f[0].severity is Severity.ERROR and sys_f[0].trial
    assert "host_processor_model_name" in sys_f[0].message and "host_memory_capacity" in sys_f[0].message
    assert sys_f[0].path == "closed/InferenceAuditSim/systems/simulated_system.json" and sys_f[0].line
    meas = [f for r in report.results for f in r.findings if f.rule == "MEAS-TRIAL-VALUE"]
    assert [(f.result, f.trial) for f in meas] == [(result, True)] and "weight_data_types" in meas[0].message
    # the untouched tree has neither
    clean = check_tree(TRIAL_TREE, load_round("v6.1"), workers=1)
    assert not [f for f in clean.findings if f.rule.endswith("TRIAL-VALUE")]
