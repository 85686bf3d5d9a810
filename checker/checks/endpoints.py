"""Endpoints results (v6.1, MLPerf Endpoints instead of LoadGen): the performance, latency, result, accuracy and
compliance rules on ``config.yaml`` / ``result_summary.json`` / ``accuracy_results.json`` / ``audit/``.

The documents are parsed by :mod:`checker.parsers.endpoints` into an :class:`EndpointsRun` and presented as LoadGen
keys (an :class:`EndpointsDetailLog`), so the LoadGen rules judge them with the same ids (PERF-SEEDS,
PERF-MIN-DURATION, PERF-RESULT, PERF-VALUE, LAT-TTFT/TPOT, ACC-METRIC, ACC-DATASET). The HEAD official checker's
endpoints exemptions are applied as it applies them and named in each finding; where it is blind this tool goes
further and says so (``beyond_official``):

- official: no early stopping, no performance-sample-count or min-query check, no qsl seed (none exists), accuracy
  targets for qwen3-vl only, TTFT/TPOT judged with the Server limits for Interactive, the result in queries/s for
  every benchmark; TEST06/TEST07 audits required only where the audit file exists (TEST04 for wan: always);
- here: the directory scenario's limits (Interactive's for Interactive), every benchmark's accuracy targets, the
  run's real duration and sample counts, the config against the round (run type, load pattern, max tokens), the
  result in the round's units (tokens/s for the LLMs that report tokens/s).
"""

from __future__ import annotations

import math

from checker.checks.accuracy import target_findings
from checker.checks.accuracy_run import dataset_findings
from checker.checks.compliance_logs import test09_bounds, test09_mean_findings
from checker.checks.context import ResultContext
from checker.checks.inferred import result_checks
from checker.checks.latency import token_latency_findings
from checker.checks.performance_log import (
    loadgen_errors,
    min_duration_findings,
    seed_findings,
    value_findings,
)
from checker.checks.rule_registry import INFO, WARN, Case, RuleInfo, register
from checker.findings import Finding, Severity
from checker.parsers.endpoints import (
    ACCURACY_RESULTS,
    AUDIT_DIR,
    CONFIG_FILES,
    RESULT_SUMMARY,
    EndpointsDetailLog,
    EndpointsRun,
    parse_audit,
)
from checker.parsers.mllog import DetailLog
from rules.models import Scenario

HEAD = "HEAD official checker (endpoints)"
DOCS_SOURCE = f"tools/submission/submission_structure.md (endpoints submission structure); {HEAD}: parsers/endpoints_parser.py"
AS_THE_HARNESS_WROTE_IT = "submit the document as the Endpoints harness wrote it"
AUDIT_SOURCE = f"{HEAD}: compliance_endpoints_check (audit/audit_<name>.json, ENDPOINTS_COMPLIANCE_MAPPING)"

# the rules this module emits (the registry: checker/checks/rule_registry.py)
RULES = register(
    __name__,
    RuleInfo(
        "PERF-ENDPOINTS-FILES",
        "D20",
        "endpoints result without config.yaml or performance/result_summary.json",
        source=DOCS_SOURCE,
    ),
    RuleInfo(
        "PERF-ENDPOINTS-LOG",
        "D20",
        "endpoints config.yaml / result_summary.json unreadable or malformed",
        source=DOCS_SOURCE,
        fix=AS_THE_HARNESS_WROTE_IT,
        cases={"unreadable": Case(source=DOCS_SOURCE)},  # the read problem says why
    ),
    RuleInfo(
        "PERF-ENDPOINTS-MODEL",
        "D21",
        "benchmark not allowed as an endpoints result",
        source=f"{HEAD}: endpoints_model_check (ENDPOINTS_ALLOWED_MODELS)",
        fix="submit this benchmark with LoadGen logs",
    ),
    RuleInfo(
        "PERF-ENDPOINTS-RULES-DATA",
        "-",
        "endpoints rule data missing from the round's rules data; not checked",
        WARN,
        beyond=True,
        source="rules/data: the round's data must carry it (HEAD checker constants.py)",
    ),
    RuleInfo(
        "PERF-ENDPOINTS-INCOMPLETE",
        "-",
        "endpoints performance run not complete",
        beyond=True,
        source="MLPerf Endpoints result_summary.json (complete, state, n_samples_*)",
        fix="rerun until the harness reports a complete run",
    ),
    RuleInfo(
        "PERF-ENDPOINTS-DURATION",
        "-",
        "endpoints performance run shorter than the round's minimum",
        beyond=True,
        trial=True,
        fix="run at least the minimum duration",
    ),
    RuleInfo(
        "PERF-ENDPOINTS-SAMPLES",
        "-",
        "endpoints Offline run issued fewer samples than the minimum",
        beyond=True,
        trial=True,
        source="rules: Offline query of at least 24,576 samples or the data set size (OFFLINE_MIN_SPQ_SINCE_V4)",
        fix="issue at least the minimum number of samples (settings.runtime.n_samples_to_issue)",
    ),
    RuleInfo(
        "PERF-ENDPOINTS-CONFIG",
        "-",
        "endpoints config.yaml disagrees with the scenario or the round",
        beyond=True,
        source="MLPerf Endpoints: type offline (Offline) / online (Server, Interactive)",
        cases={
            "load-pattern": Case(
                source="rules: Offline issues all queries at once, Server queries arrive as a Poisson process"
            )
        },
    ),
    RuleInfo(
        "PERF-ENDPOINTS-UNITS",
        "-",
        "endpoints result reported in the round's unit, not queries/s",
        INFO,
        beyond=True,
        source=f"{HEAD}: get_performance_metric_check uses RESULT_FIELD_ENDPOINTS (queries/s) before the "
        "RESULT_FIELD_BENCHMARK_OVERWRITE lookup, whose tokens/s keys endpoints results do not carry",
    ),
    RuleInfo(
        "LAT-E2E",
        "D10",
        "endpoints p99 end-to-end latency above the scenario's bound",
        official="compares Interactive with the Server bound",
        fix="lower the load (target_qps) until the p99 latency is within the bound",
    ),
    RuleInfo(
        "ACC-ENDPOINTS-RESULTS",
        "E12",
        "endpoints accuracy_results.json missing, unreadable, without a score or incomplete",
        source=DOCS_SOURCE,
        fix=AS_THE_HARNESS_WROTE_IT,
        cases={
            "unreadable": Case(source=DOCS_SOURCE),  # the read problem says why
            "no-score": Case(
                source=f"{HEAD}: accuracy_result_check ('accuracy score not found')",
                fix="submit the harness's accuracy_results.json",
            ),
            "incomplete": Case(
                source="MLPerf Endpoints accuracy_results.json", fix="rerun the accuracy run to the end"
            ),
        },
    ),
    RuleInfo(
        "COMPL-ENDPOINTS-AUDIT",
        "F11",
        "endpoints audit/audit_<test>.json missing (TEST04), unreadable, wrong test or not passed",
        source=AUDIT_SOURCE,
    ),
    RuleInfo(
        "COMPL-ENDPOINTS-AUDIT-MISSING",
        "-",
        "endpoints result without the audit of a required test",
        WARN,
        official="skips a missing endpoints audit except TEST04",
        beyond=True,
        source=AUDIT_SOURCE,
    ),
)

NS_PER_MS = 1_000_000
# official ENDPOINTS_COMPLIANCE_MAPPING: compliance test -> the audit name the Endpoints harness writes
AUDIT_NAMES = {
    "TEST01": "accuracy_in_performance_test",
    "TEST04": "output_caching_test",
    "TEST06": "consistency_output_test",
    "TEST07": "accuracy_in_performance_full_test",
    "TEST08": "accuracy_in_performance_dlrmv3_test",
}
# run type and load pattern the Endpoints harness uses for each LoadGen scenario
RUN_TYPES = {Scenario.OFFLINE: ("offline", "max_throughput"), Scenario.SERVER: ("online", "poisson")}


def check_endpoints(ctx: ResultContext) -> list[Finding]:
    """All result-level rules for an endpoints result (replaces the LoadGen performance/accuracy/compliance families)."""
    if not ctx.is_endpoints or ctx.scenario is None:
        return []
    run = ctx.endpoints_run()
    out = _documents(ctx, run)
    out += _model_allowed(ctx)
    perf_rel = f"{ctx.rd.path}/{RESULT_SUMMARY}"
    if run.summary is not None and run.config is not None:
        log = run.detail_log(perf_rel, f"{ctx.rd.path}/{run.config_name or CONFIG_FILES[0]}")
        out += value_findings(ctx, log, perf_rel)
        out += loadgen_errors(ctx, log, perf_rel)
        out += _performance(ctx, run, perf_rel)
        out += seed_findings(ctx, log, perf_rel)
        out += min_duration_findings(ctx, log, perf_rel)
        out += _latency(ctx, run, log, perf_rel)
        out += result_checks(ctx, log, perf_rel)
        out += _units_note(ctx, run, perf_rel)
    out += _accuracy(ctx, run)
    out += _compliance(ctx, run, perf_rel)
    return out


def _documents(ctx: ResultContext, run: EndpointsRun) -> list[Finding]:
    out: list[Finding] = []
    p = ctx.rd.path
    wanted = (
        ("PERF-ENDPOINTS-FILES", CONFIG_FILES, "the run configuration the Endpoints harness used"),
        ("PERF-ENDPOINTS-FILES", (RESULT_SUMMARY,), "the performance run's summary"),
        ("ACC-ENDPOINTS-RESULTS", (ACCURACY_RESULTS,), "the accuracy run's scores"),
    )
    for rule, names, what in wanted:
        present = [n for n in names if ctx.exists_file(f"{p}/{n}")]
        if not present:
            out.append(
                ctx.finding(
                    rule,
                    f"endpoints result without {names[0]} ({what})",
                    path=f"{p}/{names[0]}",
                    fix=f"copy the Endpoints harness's {names[0]} into the result directory",
                )
            )
            continue
        tr = ctx.files.text(f"{p}/{present[0]}")
        if tr.text is None and tr.problem is not None:
            out.append(ctx.problem(rule.replace("-FILES", "-LOG"), tr.problem, case="unreadable"))
    for prob in run.problems:
        rule = "ACC-ENDPOINTS-RESULTS" if prob.path == ACCURACY_RESULTS else "PERF-ENDPOINTS-LOG"
        if prob.message.endswith("is missing"):
            continue  # reported above
        out.append(ctx.finding(rule, prob.message, path=f"{p}/{prob.path}"))
    return out


def _model_allowed(ctx: ResultContext) -> list[Finding]:
    allowed = getattr(ctx.round, "endpoints_allowed_models", None)
    if allowed is None:
        field = "Round.endpoints_allowed_models"
        msg = (
            f"the list of benchmarks an endpoints result may be is not in the rules data of round {ctx.round.name} "
            f"({field}); not checked"
        )
        return [ctx.finding("PERF-ENDPOINTS-RULES-DATA", msg, fix=f"add {field} to the round's rules data")]
    if ctx.mlperf_model in allowed:
        return []
    return [
        ctx.finding(
            "PERF-ENDPOINTS-MODEL",
            f"{ctx.mlperf_model} may not be submitted as an endpoints result in round {ctx.round.name} "
            f"(allowed: {', '.join(allowed)})",
            path=ctx.rd.path,
        )
    ]


def _performance(ctx: ResultContext, run: EndpointsRun, rel: str) -> list[Finding]:
    out: list[Finding] = []
    r, bm, scen = ctx.round, ctx.benchmark, ctx.scenario
    assert scen is not None
    cfg = f"{ctx.rd.path}/{run.config_name or CONFIG_FILES[0]}"

    issued, completed = run.count("n_samples_issued"), run.count("n_samples_completed")
    if (
        run.complete is not True
        or (run.state not in (None, "complete"))
        or (issued is not None and completed is not None and completed != issued)
    ):
        msg = (
            f"the performance run is not complete: complete={run.complete!r}, state={run.state!r}, "
            f"{completed} of {issued} samples completed. The official checker does not look"
        )
        out.append(ctx.finding("PERF-ENDPOINTS-INCOMPLETE", msg, path=rel))
    real = run.duration_ns
    need_ms = r.min_duration_ms
    if bm is not None and not bm.min_duration_exempt and (real is None or real < need_ms * NS_PER_MS):
        msg = (
            f"the performance run lasted {real / 1e9 if real is not None else None} s (duration_ns), less than the "
            f"round's {need_ms / 1000:g} s minimum. The official checker reads only the configured min_duration_ms"
        )
        source = r.min_duration_cite or "rules: 600 s minimum run"
        out.append(ctx.finding("PERF-ENDPOINTS-DURATION", msg, path=rel, source=source))
    spq = bm.offline_min_samples_per_query if bm is not None else None
    if scen.loadgen_scenario is Scenario.OFFLINE and spq and (issued is None or issued < spq):
        msg = (
            f"the Offline run issued {issued} samples, fewer than the {spq} an "
            f"Offline run of {ctx.mlperf_model} must issue. The official checker skips the sample-count checks "
            "for endpoints results"
        )
        out.append(ctx.finding("PERF-ENDPOINTS-SAMPLES", msg, path=rel))
    # the configuration against the round
    want_type, want_pattern = RUN_TYPES.get(scen.loadgen_scenario, (None, None))
    if want_type is not None and run.run_type != want_type:
        msg = (
            f"config type is {run.run_type!r} but a {scen.value} result is an "
            f"{want_type!r} run. The official checker maps the type without comparing it"
        )
        fix = f"put the {run.run_type} run in its scenario's directory"
        out.append(ctx.finding("PERF-ENDPOINTS-CONFIG", msg, path=cfg, fix=fix))
    if want_pattern is not None and run.load_pattern not in (None, want_pattern):
        msg = f"settings.load_pattern.type is {run.load_pattern!r}; a {scen.value} run uses {want_pattern!r}"
        fix = f"run {scen.value} with load_pattern {want_pattern}"
        out.append(ctx.finding("PERF-ENDPOINTS-CONFIG", msg, path=cfg, fix=fix, case="load-pattern"))
    cap = (bm.max_new_tokens_performance or bm.max_new_tokens) if bm is not None else None
    mnt = run.model_param("max_new_tokens")
    if cap and isinstance(mnt, int) and not isinstance(mnt, bool) and mnt > cap:
        out.append(
            ctx.finding(
                "PERF-ENDPOINTS-CONFIG",
                f"model_params.max_new_tokens {mnt} is above the {ctx.mlperf_model} limit {cap}",
                path=cfg,
                source=f"rules: {ctx.mlperf_model} max output tokens",
                fix=f"set max_new_tokens to at most {cap}",
            )
        )
    return out


def _latency(ctx: ResultContext, run: EndpointsRun, log: DetailLog, rel: str) -> list[Finding]:
    """p99 latencies (the early-stopping estimates, as the official mapping reads) against the directory scenario's
    bounds; the official checker judges an Interactive endpoints result against the Server limits."""
    out: list[Finding] = []
    bm, scen = ctx.benchmark, ctx.scenario
    if bm is None or scen not in (Scenario.SERVER, Scenario.INTERACTIVE):
        return out
    lenient = scen is Scenario.INTERACTIVE
    official = (
        " The official checker compares Interactive endpoints results with the Server limits"
        if lenient
        else ""
    )
    if bm.use_token_latencies_required:
        return token_latency_findings(ctx, log, rel, official_server_limits=True)
    bound = bm.target_latency_ns_for(scen)
    if bound is None:
        return out
    v = run.percentile("latency", "99.0")
    if v is None or not math.isfinite(v) or v < 0 or not v <= bound:
        shown = "missing" if v is None else f"{v / 1e9:.3f} s"
        out.append(
            ctx.finding(
                "LAT-E2E",
                f"p99 end-to-end latency (latency.early_stopping_percentiles.99.0) {shown} is above the {ctx.mlperf_model} "
                f"{scen.value} bound {bound / 1e9:g} s.{official}",
                path=rel,
                source=f"latency-constraint[{ctx.mlperf_model}][{scen.value}]; {HEAD}: latency_check",
                beyond_official=lenient,
            )
        )
    return out


def _units_note(ctx: ResultContext, run: EndpointsRun, rel: str) -> list[Finding]:
    """The official checker reports every endpoints result as queries/s (RESULT_FIELD_ENDPOINTS), also under a
    'Tokens/s' unit; this tool reports the round's metric (tokens/s where the round says so)."""
    scen, bm = ctx.scenario, ctx.benchmark
    if scen is None or bm is None:
        return []
    if scen not in bm.result_field_overrides and scen.loadgen_scenario not in bm.result_field_overrides:
        return []
    if ctx.computed.result is None or run.qps is None:
        return []
    return [
        ctx.finding(
            "PERF-ENDPOINTS-UNITS",
            f"result reported in the round's unit ({ctx.round.units_for(bm, scen)}): {ctx.computed.result:g}; the official "
            f"checker reports qps {run.qps:g} for endpoints results under the same unit",
            path=rel,
        )
    ]


def _accuracy(ctx: ResultContext, run: EndpointsRun) -> list[Finding]:
    out: list[Finding] = []
    bm, scen = ctx.benchmark, ctx.scenario
    rel = f"{ctx.rd.path}/{ACCURACY_RESULTS}"
    if run.accuracy is None:
        return out
    score = run.accuracy_score
    if score is None:
        out.append(
            ctx.finding(
                "ACC-ENDPOINTS-RESULTS",
                "accuracy_results.json holds no accuracy score",
                path=rel,
                case="no-score",
            )
        )
        return out
    if run.accuracy_complete() is False:
        out.append(
            ctx.finding(
                "ACC-ENDPOINTS-RESULTS",
                "the accuracy run is not complete (accuracy_scores[].complete "
                "is false). The official checker does not look",
                path=rel,
                beyond_official=True,  # the official checker does not look
                case="incomplete",
            )
        )
    if bm is None or scen is None:
        return out
    # the targets and upper limits, by the rule functions the LoadGen accuracy check uses: the score is every
    # metric's value but TOKENS_PER_SAMPLE, which is the accuracy run's mean output length
    checked = ctx.mlperf_model in ctx.round.endpoints_accuracy_checked_models
    gap = (
        None
        if checked
        else (
            "The official checker enforces endpoints accuracy targets for "
            f"{', '.join(ctx.round.endpoints_accuracy_checked_models) or 'no benchmark'} only"
        )
    )
    values: dict[str, str] = {}
    below, missing, above = [], [], []
    cites = {t.metric: t.cite for t in (*bm.accuracy_targets_for(scen), *bm.accuracy_upper_limits) if t.cite}
    for t in bm.accuracy_targets_for(scen):
        v = run.accuracy_mean_output_tokens if t.metric == "TOKENS_PER_SAMPLE" else score
        if t.metric != "TOKENS_PER_SAMPLE":
            values[t.metric] = str(score)
        if v is None:
            missing.append((t.metric, "accuracy_results.json"))
        elif v < t.value:
            below.append((t.metric, f"{v:g}", t.value, None))
    for t in bm.accuracy_upper_limits:
        v = run.accuracy_mean_output_tokens if t.metric == "TOKENS_PER_SAMPLE" else score
        if v is not None and v > t.value:
            above.append((t.metric, f"{v:g}", t.value, None))
    out += target_findings(
        ctx,
        below=below,
        missing=missing,
        above=above,
        path=rel,
        soft=not ctx.closed_or_network,
        official_gap=gap,
        cite=cites.get,
    )
    ctx.computed.accuracy = "  ".join(f"{k}: {v}" for k, v in values.items()) or f"score: {score}"
    out += dataset_findings(ctx, run.accuracy_detail_log(rel), rel)
    return out


def _compliance(ctx: ResultContext, run: EndpointsRun, perf_rel: str) -> list[Finding]:
    out: list[Finding] = []
    bm = ctx.benchmark
    ctx.computed.compliance = 1
    if not ctx.closed_or_network or bm is None:
        return out
    adir = f"{ctx.compliance_dir()}/{AUDIT_DIR}"
    for test in bm.compliance_tests:
        name = AUDIT_NAMES.get(test)
        if name is not None:
            rel = f"{adir}/audit_{name}.json"
            if not ctx.exists_file(rel):
                if test == "TEST04":
                    out.append(
                        ctx.finding(
                            "COMPL-ENDPOINTS-AUDIT",
                            f"{test} is required for {ctx.mlperf_model}: {rel} is missing",
                            path=rel,
                            fix=f"run the Endpoints {name} audit and copy its output",
                        )
                    )
                else:
                    out.append(
                        ctx.finding(
                            "COMPL-ENDPOINTS-AUDIT-MISSING",
                            f"{test} is required for {ctx.mlperf_model} but the endpoints result has no {rel}; the "
                            f"official checker skips a missing endpoints audit except TEST04, so {test} is not evidenced",
                            path=rel,
                            fix=f"run the Endpoints {name} audit and copy audit_{name}.json",
                        )
                    )
            else:
                tr = ctx.files.text(rel)
                audit = parse_audit(tr.text) if tr.text is not None else None
                why = None
                if audit is None:
                    why = tr.problem.message if tr.problem else "cannot be read"
                elif audit.problem:
                    why = audit.problem
                elif audit.test != name:
                    why = f"reports test {audit.test!r}, expected {name!r}"
                elif audit.passed is not True:
                    why = f"passed is {audit.passed!r}"
                if why:
                    out.append(
                        ctx.finding(
                            "COMPL-ENDPOINTS-AUDIT",
                            f"{test}: {rel} {why}",
                            path=rel,
                            fix=f"rerun the {name} audit until it passes",
                        )
                    )
        if test == "TEST09":
            out += _test09_endpoints(ctx, run, perf_rel)
    if any(f.severity is Severity.ERROR for f in out):
        ctx.computed.compliance = 0
    return out


def _test09_endpoints(ctx: ResultContext, run: EndpointsRun, rel: str) -> list[Finding]:
    """TEST09 on an Endpoints result: the performance run's mean output length within the bounds, by the rule the
    LoadGen TEST09 uses (HEAD checks the same, so nothing beyond it)."""
    bounds = test09_bounds(ctx)
    if isinstance(bounds, Finding):
        return [bounds]
    return test09_mean_findings(
        ctx,
        run.stat("output_sequence_lengths", "avg"),
        run.count("n_samples_completed"),
        rel,
        bounds,
        measured_as=" (output_sequence_lengths.avg of the performance run)",
        beyond_official=False,
    )


__all__ = ["EndpointsDetailLog", "check_endpoints"]
