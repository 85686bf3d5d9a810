"""The accuracy run itself, from its LoadGen detail log (catalogue E8, E9 and, beyond the official checker, its mode,
an audit.config and the samples it issued and accuracy.txt scored): what makes accuracy.txt an accuracy run's. The
accuracy.txt checks (targets, hash, files) are :mod:`checker.checks.accuracy`.
"""

from __future__ import annotations

from checker.checks.context import ResultContext
from checker.checks.performance import DETAIL_LOG_CASES, load_detail
from checker.checks.rule_registry import OLD, Case, RuleInfo, official_behaviour, register
from checker.findings import Finding
from checker.parsers.mllog import DetailLog

# ACC-MODE / ACC-AUDIT-CONFIG / ACC-SAMPLES: by the rules these results are invalid (errors). Two published results of
# the shared v5.1 subset (AMD 8xMI325X_2xEPYC_9575F_2 llama2-70b-99/-99.9 Offline) are exactly such runs (a
# PerformanceOnly run under an audit.config, 100 samples scored) and the official checker calls them valid: the
# deliberate differences in tests/fixtures/rounds/v5.1/deliberate.yaml (test_conformance, test_whole_rounds).
ACC_RUN_RULES = (
    "inference_rules.adoc: the accuracy result comes from a LoadGen run in accuracy mode (AccuracyOnly) over every "
    "sample of the data set once (RULES_HEAD:474-475); the audit tests' audit.config must be removed before the "
    "accuracy and performance runs (compliance/README: 'remove audit.config after the test')"
)
AUDIT_CONFIG_MARK = "Found Audit Config file"

# the rules this module emits (the registry: checker/checks/rule_registry.py)
RULES = register(
    __name__,
    RuleInfo(
        "ACC-MODE",
        "-",
        "accuracy/ holds a run that is not AccuracyOnly (a performance or compliance run)",
        beyond=True,
        source=ACC_RUN_RULES,
        fix="run the benchmark with --accuracy (LoadGen AccuracyOnly) and copy that run into accuracy/",
    ),
    RuleInfo(
        "ACC-AUDIT-CONFIG",
        "-",
        "LoadGen found an audit.config in the accuracy run",
        beyond=True,
        source=ACC_RUN_RULES,
        fix="remove audit.config from the working directory and rerun the accuracy run",
    ),
    RuleInfo(
        "ACC-SAMPLES",
        "-",
        "samples issued in the accuracy run, or scored in accuracy.txt (gen_num), differ from the data set size",
        beyond=True,
        source=ACC_RUN_RULES,
        fix="run the accuracy mode over the full data set and copy that run into accuracy/",
        cases={
            "qsl-capped": Case(
                source=ACC_RUN_RULES,
                fix="run the accuracy mode with the benchmark's whole data set in the QSL",
            ),
            "scored": Case(
                source=ACC_RUN_RULES,
                fix="score the accuracy run's full mlperf_log_accuracy.json with the benchmark's accuracy script",
            ),
        },
    ),
    RuleInfo("ACC-LOG-DETAIL", "E8/P", "accuracy detail log unreadable or malformed", cases=DETAIL_LOG_CASES),
    RuleInfo(
        "ACC-LOADGEN-ERRORS",
        "E8",
        "LoadGen errors in the accuracy run",
        official="v5.1.1 crashes (UnboundLocalError)",
        beyond=True,
        source=f"LoadGen num_errors / metadata.is_error; {OLD}: check_accuracy_dir L1469-1475",
        fix="fix the LoadGen error and rerun the accuracy run",
    ),
    RuleInfo(
        "ACC-DATASET",
        "E9",
        "accuracy run does not cover the whole data set",
        official="v5.1.1 only logs it, v4.1 does not check it (HEAD fails)",
        trial=True,
        beyond=True,
        source="inference_rules.adoc: the accuracy run uses each sample of the data set once (G-QSL, "
        f"RULES_HEAD:474-475); {OLD}: L1477-1484 logs 'accurcy run does not cover all dataset'; HEAD dataset_check "
        "fails",
        fix="run the accuracy mode over the full data set (no accuracy sample count override)",
    ),
)


def _expected_samples(ctx: ResultContext) -> int | None:
    """The samples the accuracy run of this result must cover (the scenario's accuracy set, else the data set)."""
    bm = ctx.benchmark
    if bm is None:
        return None
    by_scenario = bm.accuracy_sample_count_by_scenario.get(ctx.scenario) if ctx.scenario is not None else None
    return by_scenario or bm.accuracy_sample_count or bm.dataset_size


def _run_count(log: DetailLog) -> tuple[int | None, str]:
    """(samples the accuracy run says it covered, the LoadGen key that says so), as the official checkers read it."""
    count = log.int_value("effective_accuracy_sample_count")
    if count is not None:
        return count, "effective_accuracy_sample_count"
    return log.int_value("qsl_reported_total_count"), "qsl_reported_total_count"


def partial_data_set(ctx: ResultContext) -> bool:
    """The accuracy run covered fewer samples than its data set (ACC-DATASET)."""
    expected = _expected_samples(ctx)
    log = ctx.files.detail(ctx.acc_detail_path)[0] if expected is not None else None
    count = None if log is None else _run_count(log)[0]
    return count is not None and expected is not None and count < expected


def _accuracy_run_kind(ctx: ResultContext, log: DetailLog, rel: str) -> list[Finding]:
    """Beyond official: accuracy/ holds an accuracy-mode run, made without an audit.config."""
    out: list[Finding] = []
    mode = log.effective_test_mode
    if mode is not None and mode != "AccuracyOnly":
        out.append(
            ctx.finding(
                "ACC-MODE",
                f"the accuracy run's detail log says effective_test_mode = {mode!r}: accuracy/ holds a "
                f"{'performance or compliance' if mode == 'PerformanceOnly' else mode} run, not an accuracy run. "
                "Neither official checker reads the accuracy run's mode",
                path=rel,
                line=log.line_of("effective_test_mode"),
            )
        )
    for rec in log.records("warning_generic_message") + log.records("generic_message"):
        if isinstance(rec.value, str) and AUDIT_CONFIG_MARK in rec.value:
            out.append(
                ctx.finding(
                    "ACC-AUDIT-CONFIG",
                    f"LoadGen found an audit.config in the accuracy run ({rec.value!r}): the audit test's settings "
                    "replaced the accuracy run's, so this is a compliance run",
                    path=rel,
                    line=rec.line,
                )
            )
            break
    return out


def accuracy_run_findings(ctx: ResultContext, scored: tuple[int, int] | None = None) -> list[Finding]:
    out: list[Finding] = []
    rel = ctx.acc_detail_path
    if not ctx.exists_file(rel):
        return out  # ACC-FILES reports the missing file
    log, found = load_detail(ctx, rel, "ACC-LOG-DETAIL")
    out += found
    if log is None:
        return out
    n_err = log.num_errors()
    errs = log.errors
    if n_err or errs:
        first = errs[0] if errs else None
        out.append(
            ctx.finding(
                "ACC-LOADGEN-ERRORS",
                f"the accuracy run logged {n_err or len(errs)} LoadGen error(s)"
                + (f": {first.key} = {first.value!r}" if first else "")
                + ". The v5.1.1 checker crashes here (UnboundLocalError); the HEAD checker fails the result",
                path=rel,
                line=first.line if first else log.line_of("num_errors"),
            )
        )
    expected = _expected_samples(ctx)
    out += _accuracy_run_kind(ctx, log, rel)
    if expected is not None:
        out += _accuracy_sample_counts(ctx, log, rel, expected, scored)
    out += dataset_findings(ctx, log, rel)
    return out


# what each official checker does with a short accuracy run (v4.1's check_accuracy_dir compares no sample count)
_DATASET_OFFICIAL = {
    "HEAD": "fails the result as well (dataset_check)",
    "v5.1.1": "only logs this",
    "v4.1": "does not check this",
}


def dataset_findings(ctx: ResultContext, log: DetailLog, rel: str) -> list[Finding]:
    """E9: the accuracy run covered the scenario's accuracy data set (the count the official checkers read:
    effective_accuracy_sample_count, else qsl_reported_total_count; an Endpoints result's scored samples)."""
    expected = _expected_samples(ctx)
    count, key = _run_count(log)
    if expected is None or count == expected:
        return []
    return [
        ctx.log_finding(
            "ACC-DATASET",
            f"the accuracy run covered {count} samples ({log.label(key)}), the {ctx.mlperf_model} accuracy data set has "
            f"{expected}. "
            + official_behaviour(
                ctx.round.official_checker,
                _DATASET_OFFICIAL,
                "the rules require the accuracy run over the whole validation set, so this tool rejects it",
            ),
            log,
            rel,
            key,
            trial=count is not None and count < expected,  # a partial data set: what a trial runs
        )
    ]


# LoadGen 5.0.11 (mlcommons/inference ef1bd3b9) logs the samples per query an Offline accuracy batch really has; older
# releases log the configured samples_per_query instead (``spq = settings.samples_per_query``, loadgen.cc v4.1 L425)
LOGS_OFFLINE_BATCH_SIZE_FROM = (5, 0, 11)


def loadgen_accuracy_batches(
    total: int, set_size: int, scenario: str, samples_per_query: int, *, logs_batch_size: bool = True
) -> list[tuple[int, int]]:
    """The ``(generated_query_count, generated_samples_per_query)`` pairs LoadGen's accuracy mode logs for a QSL of
    ``total`` samples: one pair per loadable set of ``set_size`` (effective_performance_sample_count) samples, the
    last set holding the rest. Offline issues each set as one query of the set's size (logged as the configured
    ``samples_per_query`` before :data:`LOGS_OFFLINE_BATCH_SIZE_FROM`, unless ``logs_batch_size``); MultiStream
    issues ``ceil(set / samples_per_query)`` queries of ``samples_per_query`` over the set padded by
    ``samples_per_query - 1`` samples; SingleStream and Server one query per sample (loadgen/loadgen.cc v5.1.1:
    GenerateLoadableSets L624-681, GenerateQueries L278-290 and L408-429, RunAccuracyMode L1080-1110)."""
    if total <= 0 or set_size <= 0 or samples_per_query <= 0:
        return []
    sizes = [set_size] * (total // set_size) + ([total % set_size] if total % set_size else [])
    return [_batch(n, scenario, samples_per_query, logs_batch_size) for n in sizes]


def accuracy_batch_count(total: int, set_size: int) -> int:
    """How many loadable sets (and so logged pairs) LoadGen's accuracy mode makes of ``total`` samples."""
    return -(-total // set_size) if total > 0 and set_size > 0 else 0


def planned_issued(
    total: int, set_size: int, scenario: str, samples_per_query: int, logs_batch_size: bool
) -> int:
    """The samples of :func:`loadgen_accuracy_batches`, in closed form (the log's numbers may be huge)."""
    if total <= 0 or set_size <= 0 or samples_per_query <= 0:
        return 0
    full, rest = divmod(total, set_size)
    q, n = _batch(set_size, scenario, samples_per_query, logs_batch_size)
    out = full * q * n
    if rest:
        q, n = _batch(rest, scenario, samples_per_query, logs_batch_size)
        out += q * n
    return out


def _batch(size: int, scenario: str, samples_per_query: int, logs_batch_size: bool) -> tuple[int, int]:
    """The pair LoadGen logs for one loadable set of ``size`` samples."""
    if scenario == "Offline":
        return (1, size if logs_batch_size else samples_per_query)
    if scenario == "MultiStream":
        return ((size + samples_per_query - 1) // samples_per_query, samples_per_query)
    return (size // samples_per_query, samples_per_query)


def _accuracy_sample_counts(
    ctx: ResultContext, log: DetailLog, rel: str, expected: int, scored: tuple[int, int] | None
) -> list[Finding]:
    """Beyond official: LoadGen issued every sample of the accuracy run's QSL, and accuracy.txt scored them all.

    LoadGen's accuracy mode loads and issues a QSL larger than the performance sample count in batches and logs one
    ``generated_query_count`` / ``generated_samples_per_query`` pair per batch; the run covered its QSL when the
    logged pairs are the ones LoadGen logs for it (:func:`loadgen_accuracy_batches`); a performance run, or a run
    whose log was cut or edited, logs others. The QSL's size is LoadGen's ``effective_accuracy_sample_count`` (6.0+,
    capped to the QSL) or ``qsl_reported_total_count``; whether it is the whole data set is ACC-DATASET's question,
    so a short QSL fully issued and scored is one finding, not three."""
    out: list[Finding] = []
    qsl = log.int_value("qsl_reported_total_count")
    requested = log.int_value("effective_accuracy_sample_count")
    # LoadGen issues min(accuracy_sample_count, QSL size) (GenerateLoadableSets caps it, mlcommons/inference a8d4d783)
    total = min((n for n in (requested, qsl) if n), default=expected)
    of_set = f"the {ctx.mlperf_model} data set has {expected}" + (
        "" if total == expected else f", the run's QSL {total}"
    )
    logged = list(
        zip(
            log.int_values("generated_query_count"),
            log.int_values("generated_samples_per_query"),
            strict=False,
        )
    )
    batches = [(q, n) for q, n in logged if q is not None and n is not None]
    set_size = log.int_value("effective_performance_sample_count")
    spq = log.int_value("effective_samples_per_query")
    scenario = log.effective_scenario
    if batches and len(batches) == len(logged) and set_size and spq and scenario:
        release = log.loadgen_release
        forms = [
            logs
            for logs in (True, False)
            if release is None or (release >= LOGS_OFFLINE_BATCH_SIZE_FROM) == logs
        ]
        n_sets = accuracy_batch_count(total, set_size)
        # the plan is built only when it has as many pairs as the log (the log's numbers are the input's: a QSL of
        # 10^15 samples in sets of 1 must not make a list of 10^15 pairs)
        plans = (
            [loadgen_accuracy_batches(total, set_size, scenario, spq, logs_batch_size=logs) for logs in forms]
            if n_sets == len(batches)
            else []
        )
        if batches not in plans:
            issued = sum(q * n for q, n in batches)
            shown = ", ".join(f"{q}x{n}" for q, n in batches[:3]) + (", ..." if len(batches) > 3 else "")
            out.append(
                ctx.finding(
                    "ACC-SAMPLES",
                    f"the accuracy run issued {issued} samples in {len(batches)} batch(es) (generated_query_count x "
                    f"generated_samples_per_query: {shown}); {of_set}, for which LoadGen's {scenario} accuracy mode "
                    f"issues {planned_issued(total, set_size, scenario, spq, forms[0])} in {n_sets} batch(es) of up to "
                    f"{set_size} "
                    "(effective_performance_sample_count)",
                    path=rel,
                    line=log.line_of("generated_samples_per_query"),
                )
            )
        elif total != expected and total != (requested if requested is not None else qsl):
            # ACC-DATASET judges the logged count; here LoadGen capped it to a smaller QSL and issued only that
            out.append(
                ctx.finding(
                    "ACC-SAMPLES",
                    f"the accuracy run issued {total} samples (its whole QSL, qsl_reported_total_count {qsl}; LoadGen "
                    f"caps effective_accuracy_sample_count {requested} to it); the {ctx.mlperf_model} data set has "
                    f"{expected}",
                    path=rel,
                    line=log.line_of("qsl_reported_total_count"),
                    case="qsl-capped",
                    trial=True,  # a partial data set: what a trial runs
                )
            )
    if scored is not None and scored[0] != total:
        out.append(
            ctx.finding(
                "ACC-SAMPLES",
                f"accuracy.txt was computed from {scored[0]} samples (gen_num); {of_set}: the score is not the "
                "accuracy run's",
                path=f"{ctx.rd.accuracy_dir}/accuracy.txt",
                line=scored[1],
                case="scored",
            )
        )
    return out
