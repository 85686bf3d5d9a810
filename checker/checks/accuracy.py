"""Accuracy run checks (catalogue E1-E13) and, beyond the official checker, the accuracy-log hash, LoadGen errors in
the accuracy run (the v5.1.1 checker crashes there) and the whole-data-set rule (the v5.1.1 checker only logs it).

Sets ``ctx.computed.accuracy`` (the summary CSV's Accuracy string) and ``ctx.computed.accuracy_metrics``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from checker.checks.catalog import OLD, Case, RuleInfo, register
from checker.checks.context import ResultContext
from checker.checks.performance import DETAIL_LOG_CASES, load_detail
from checker.findings import Finding, Severity
from checker.parsers.accuracy_log import has_truncate_separator, is_json
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
TRUNCATE = "tools/submission/truncate_accuracy_log.py"

# the rules this module emits (the registry: checker/checks/catalog.py)
RULES = register(
    __name__,
    RuleInfo(
        "ACC-TXT",
        "E1",
        "accuracy.txt missing or unreadable",
        source=f"{OLD}: check_results_dir L2585-2593",
        fix="run the benchmark's accuracy script (e.g. evaluation.py / process_accuracy.py) on "
        "mlperf_log_accuracy.json and save its output as accuracy/accuracy.txt",
        cases={"unreadable": Case()},  # the read problem says why
    ),
    RuleInfo(
        "ACC-FILES", "E2", "accuracy/ file list mismatch", source=f"{OLD}: check_results_dir L2594-2602"
    ),
    RuleInfo(
        "ACC-METRIC",
        "E3/E5/E11",
        "metric missing or below target (warning in open)",
        fix="the accuracy run must meet every target of the benchmark",
        cases={"missing": Case(fix="save the accuracy script's complete output")},
    ),
    RuleInfo(
        "ACC-UPPER",
        "E4",
        "metric above the upper limit",
        fix="generated lengths / scores must stay within the benchmark's bounds",
    ),
    RuleInfo(
        "ACC-HASH",
        "E6",
        "no hash= line in accuracy.txt",
        source=f"{OLD}: check_accuracy_dir L1454-1457",
        fix=f"truncate the accuracy log with {TRUNCATE} (it appends hash=)",
    ),
    RuleInfo(
        "ACC-LOG",
        "E7",
        "mlperf_log_accuracy.json missing",
        source=f"{OLD}: check_accuracy_dir L1459-1467",
        fix="keep the (truncated) mlperf_log_accuracy.json of the accuracy run",
        cases={"unreadable": Case()},  # the read problem says why
    ),
    RuleInfo(
        "ACC-LOG-SIZE",
        "E7",
        "mlperf_log_accuracy.json not truncated",
        source=f"MAX_ACCURACY_LOG_SIZE; {OLD}: check_accuracy_dir L1459-1467",
        fix=f"run {TRUNCATE}",
    ),
    RuleInfo(
        "ACC-HASH-MISMATCH",
        "-",
        "hash= does not match an untruncated accuracy log",
        beyond=True,
        source="truncate_accuracy_log.py records the SHA-256 of mlperf_log_accuracy.json in accuracy.txt",
        fix="recompute accuracy.txt from the submitted mlperf_log_accuracy.json",
    ),
    RuleInfo(
        "ACC-HASH-FORMAT",
        "-",
        "hash= value is not a SHA-256 (e.g. hash=TODO)",
        beyond=True,
        source="truncate_accuracy_log.py appends hash=<sha256 of mlperf_log_accuracy.json> (hashlib.sha256)",
        fix=f"run {TRUNCATE} on the accuracy run's log (it writes the hash)",
    ),
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
        official="v5.1.1 only logs it (HEAD fails)",
        trial=True,
        beyond=True,
        source="inference_rules.adoc: the accuracy run uses each sample of the data set once (G-QSL, "
        f"RULES_HEAD:474-475); {OLD}: L1477-1484 logs 'accurcy run does not cover all dataset'; HEAD dataset_check "
        "fails",
        fix="run the accuracy mode over the full data set (no accuracy sample count override)",
    ),
    RuleInfo(
        "ACC-EXTRA-FILES",
        "E10",
        "SDXL accuracy/images/ missing or incomplete",
        source=f"REQUIRED_ACC_BENCHMARK; {OLD}: check_extra_files L1297 via L2611-2628",
    ),
)

HASH_RE = re.compile(r"^hash=([\w\d]+)$")


@dataclass
class AccuracyScan:
    """What the official check_accuracy_dir scan of accuracy.txt finds (same order and stop rule)."""

    values: dict[str, str] = field(default_factory=dict)  # metric -> last matched value string
    below: list[tuple[str, str, float, int]] = field(default_factory=list)  # metric, value, target, line
    above: list[tuple[str, str, float, int]] = field(default_factory=list)  # metric, value, limit, line
    seen: dict[str, bool] = field(default_factory=dict)
    hash_value: str | None = None
    hash_line: int | None = None


def scan_accuracy_txt(ctx: ResultContext, text: str) -> AccuracyScan:
    bm = ctx.benchmark
    assert bm is not None
    pats = ctx.round.acc_patterns
    targets = [
        (t.metric, re.compile(pats[t.metric]), t.value)
        for t in bm.accuracy_targets_for(ctx.scenario)
        if t.metric in pats
    ]
    uppers = [
        (t.metric, re.compile(pats[t.metric]), t.value) for t in bm.accuracy_upper_limits if t.metric in pats
    ]
    scan = AccuracyScan(seen={m: False for m, _, _ in targets})
    for lineno, line in enumerate(text.splitlines(keepends=True), start=1):
        if line.endswith("\r\n") or line.endswith("\r"):
            # the official checker reads accuracy.txt in text mode: universal newlines turn CRLF / CR into LF
            line = line.rstrip("\r\n") + "\n"
        for metric, pat, target in targets:
            m = pat.match(line)
            if m:
                val = m.group(1)
                try:
                    ok = float(val) >= target
                except ValueError:
                    ok = False
                if ok:
                    scan.seen[metric] = True
                else:
                    scan.below.append((metric, val, target, lineno))
                if val:
                    scan.values[metric] = val
            h = HASH_RE.match(line)
            if h:
                scan.hash_value, scan.hash_line = h.group(1), lineno
        for metric, pat, limit in uppers:
            m = pat.match(line)
            if m:
                val = m.group(1)
                try:
                    bad = float(val) > limit
                except ValueError:
                    bad = True
                if bad:
                    scan.above.append((metric, val, limit, lineno))
        if all(scan.seen.values()) and scan.hash_value:
            break
    return scan


def accuracy_string(values: dict[str, str]) -> str:
    """The summary CSV's Accuracy column: ``json.dumps`` with ``, " { }`` stripped, as the official checker."""
    s = json.dumps(values)
    return s.replace(",", " ").replace('"', "").replace("{", "").replace("}", "")


def check_accuracy(ctx: ResultContext) -> list[Finding]:
    out: list[Finding] = []
    acc = ctx.rd.accuracy_dir
    txt = f"{acc}/accuracy.txt"
    open_div = not ctx.closed_or_network
    if not ctx.exists_file(txt):
        out.append(
            ctx.finding(
                "ACC-TXT",
                f"{txt} is missing",
                path=txt,
            )
        )
        return out
    st = ctx.round.structure
    present = set(ctx.list_files(acc))
    required = set(st.accuracy_files)
    missing = sorted(required - present)
    extra = sorted(present - required - set(st.accuracy_optional_files))
    if missing or extra:
        parts = ([f"missing {missing}"] if missing else []) + ([f"unexpected {extra}"] if extra else [])
        out.append(
            ctx.finding(
                "ACC-FILES",
                f"{acc} file list mismatch: {'; '.join(parts)}",
                path=acc,
                fix=f"accuracy/ must hold {sorted(required)} (optional: {sorted(st.accuracy_optional_files)})",
            )
        )
    bm = ctx.benchmark
    tr = ctx.files.text(txt)
    if tr.text is None:
        assert tr.problem is not None
        out.append(ctx.problem("ACC-TXT", tr.problem, case="unreadable"))
        return out
    if bm is None:
        return out
    scan = scan_accuracy_txt(ctx, tr.text)
    ctx.computed.accuracy_metrics = dict(scan.values)
    ctx.computed.accuracy = accuracy_string(scan.values)
    # E11: open division accepts failing accuracy when at least one metric was parsed
    soft = open_div and bool(scan.values)
    sev = Severity.WARNING if soft else Severity.ERROR
    open_note = " (open division: accepted, as the official checker does)" if soft else ""
    partial = bool(DATA_SET_TOTALS.intersection(m for m, *_ in scan.below)) and _partial_data_set(ctx)
    pats = ctx.round.acc_patterns
    out += target_findings(
        ctx,
        below=scan.below,
        missing=[
            (m, f"accuracy.txt (pattern {pats.get(m)!r})")
            for m, ok in scan.seen.items()
            if not ok and not any(b[0] == m for b in scan.below)
        ],
        above=scan.above,
        path=txt,
        soft=soft,
        partial_data_set=partial,
    )
    if not scan.hash_value:
        out.append(
            ctx.finding(
                "ACC-HASH",
                f"no hash= line in accuracy.txt{open_note}",
                severity=sev,
                path=txt,
            )
        )
    out += _hash_format(ctx, scan, txt)
    out += _accuracy_log_checks(ctx, scan, sev, open_note)
    out += _accuracy_detail_checks(ctx, _scored_samples(tr.text))
    out += _extra_files(ctx, sev, open_note)
    return out


# metrics that are sums over the data set, not means: the llama reference evaluations print gen_len as the sum of the
# generated lengths (language/llama3.1-8b/evaluation.py and llama2-70b/evaluate-accuracy.py: np.sum(prediction_lens)),
# so on part of the data set they miss their target whatever the outputs: what a trial's partial data set produces
DATA_SET_TOTALS = frozenset({"GEN_LEN"})


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


def _partial_data_set(ctx: ResultContext) -> bool:
    """The accuracy run covered fewer samples than its data set (ACC-DATASET)."""
    expected = _expected_samples(ctx)
    log = ctx.files.detail(ctx.acc_detail_path)[0] if expected is not None else None
    count = None if log is None else _run_count(log)[0]
    return count is not None and expected is not None and count < expected


def _accuracy_log_checks(
    ctx: ResultContext, scan: AccuracyScan, sev: Severity, open_note: str
) -> list[Finding]:
    out: list[Finding] = []
    rel = f"{ctx.rd.accuracy_dir}/mlperf_log_accuracy.json"
    limit = ctx.round.structure.max_accuracy_log_bytes
    size = ctx.sctx.sub.files.get(rel)
    if size is None:
        size = ctx.sctx.tree.size(rel) if ctx.exists_file(rel) else None
    if size is None:
        out.append(
            ctx.finding(
                "ACC-LOG",
                f"{rel} is missing{open_note}",
                severity=sev,
                path=rel,
            )
        )
        return out
    if size > limit:
        out.append(
            ctx.finding(
                "ACC-LOG-SIZE",
                f"{rel} is {size} bytes, above {limit}: not truncated{open_note}",
                severity=sev,
                path=rel,
            )
        )
        return out
    if scan.hash_value is None:
        return out
    data, problem = ctx.sctx.tree.read_bytes(rel, max_bytes=limit)
    if data is None:
        if problem is not None:
            out.append(ctx.problem("ACC-LOG", problem, case="unreadable"))
        return out
    text = data.decode("utf-8", errors="replace")
    if has_truncate_separator(text) and not is_json(text):
        return out  # truncated: the hash is of the original, which is not in the tree
    digest = hashlib.sha256(data).hexdigest()
    if digest != scan.hash_value.lower() and not _is_results_hash(ctx, scan.hash_value):
        out.append(
            ctx.finding(
                "ACC-HASH-MISMATCH",
                f"accuracy.txt records hash={scan.hash_value} but the untruncated {rel} hashes to {digest}: the "
                "accuracy.txt was not computed from this log. The official checker only checks that a hash line exists",
                path=f"{ctx.rd.accuracy_dir}/accuracy.txt",
                line=scan.hash_line,
            )
        )
    return out


def _is_results_hash(ctx: ResultContext, value: str) -> bool:
    """``value`` is the SHA-256 of accuracy.txt's results line, where the benchmark's reference evaluator hashes that
    line (``Benchmark.accuracy_txt_hash``; qwen3-vl's evaluation.py writes hash= of ``json.dumps({"f1": ...})``, its
    lines 403-411), not the log, and truncate_accuracy_log.py adds no hash for a log under its size limit that has
    one (lines 233-243)."""
    if ctx.benchmark is None or ctx.benchmark.accuracy_txt_hash != "results_line":
        return False
    text = ctx.files.text(f"{ctx.rd.accuracy_dir}/accuracy.txt").text
    want = value.lower()
    lines = (line.strip() for line in (text or "").splitlines())
    return any(
        hashlib.sha256(line.encode("utf-8")).hexdigest() == want for line in lines if line.startswith("{")
    )


SHA256_RE = re.compile(r"^[0-9a-fA-F]{64}$")
# the sample count the LLM accuracy scripts print with their scores ('gen_num': N)
GEN_NUM_RE = re.compile(r"""['"]gen_num['"]\s*:\s*['"]?(\d+)""")
AUDIT_CONFIG_MARK = "Found Audit Config file"


def _scored_samples(text: str) -> tuple[int, int] | None:
    """(count, line) of the last ``'gen_num': N`` in accuracy.txt: how many samples the score was computed from."""
    found = None
    for lineno, line in enumerate(text.splitlines(), start=1):
        for m in GEN_NUM_RE.finditer(line):
            found = (int(m.group(1)), lineno)
    return found


def _hash_format(ctx: ResultContext, scan: AccuracyScan, txt: str) -> list[Finding]:
    """Beyond official: the hash= value is a SHA-256 (the official regex takes any word, e.g. hash=TODO)."""
    if scan.hash_value is None or SHA256_RE.match(scan.hash_value):
        return []
    return [
        ctx.finding(
            "ACC-HASH-FORMAT",
            f"hash={scan.hash_value[:40]} in accuracy.txt is not a SHA-256 (64 hex digits): accuracy.txt was not "
            "written by truncate_accuracy_log.py from an accuracy log. The official checker only looks for a "
            "hash= line",
            path=txt,
            line=scan.hash_line,
        )
    ]


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


def _accuracy_detail_checks(ctx: ResultContext, scored: tuple[int, int] | None = None) -> list[Finding]:
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


# ---- rules that judge an accuracy run of either format (a LoadGen accuracy run, or an Endpoints result's
# accuracy_results.json through its EndpointsDetailLog and its score): one function each, called by both checks


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
            f"{expected}. The v5.1.1 checker only logs this; the rules require the accuracy run over the whole "
            "validation set, so this tool rejects it",
            log,
            rel,
            key,
            trial=count is not None and count < expected,  # a partial data set: what a trial runs
        )
    ]


Measured = tuple[str, str, float, int | None]  # metric, value as written, target or limit, line


def target_findings(
    ctx: ResultContext,
    *,
    below: Sequence[Measured],
    missing: Sequence[tuple[str, str]],
    above: Sequence[Measured],
    path: str,
    soft: bool,
    official_gap: str | None = None,
    cite: Callable[[str], str | None] = lambda metric: None,
    partial_data_set: bool = False,
) -> list[Finding]:
    """E3/E5/E11 ACC-METRIC and E4 ACC-UPPER for a result of either format. ``below`` / ``above``: metrics under their
    target / over their upper limit; ``missing``: (metric, where it was looked for). ``soft``: the open division
    takes a failing accuracy once a metric was read (E11, as the official checkers do), so these are warnings.
    ``official_gap``: what the official checker does not check for this format (the findings then go beyond it).
    ``cite``: a metric's own citation, where the round gives one. ``partial_data_set``: the run covered part of the
    data set, so a sum over it (GEN_LEN) misses its target whatever the outputs (a trial's)."""
    bm = ctx.benchmark
    assert bm is not None
    sev = Severity.WARNING if soft else Severity.ERROR
    note = " (open division: accepted, as the official checker does)" if soft else ""
    gap = f". {official_gap}" if official_gap else ""
    beyond = official_gap is not None
    out = []
    for metric, val, target, line in below:
        out.append(
            ctx.finding(
                "ACC-METRIC",
                f"{metric} = {val} is below the {ctx.mlperf_model} target {target:g}{note}{gap}",
                severity=sev,
                path=path,
                line=line,
                source=f"{cite(metric) or bm.accuracy_cite or 'accuracy-target'}; {OLD}: check_accuracy_dir L1399-1428",
                beyond_official=beyond,
                trial=partial_data_set and metric in DATA_SET_TOTALS,
            )
        )
    for metric, where in missing:
        out.append(
            ctx.finding(
                "ACC-METRIC",
                f"no {metric} value found in {where}{note}{gap}",
                severity=sev,
                path=path,
                source=f"ACC_PATTERN[{metric}]; {OLD}: check_accuracy_dir L1399-1428",
                beyond_official=beyond,
                case="missing",
            )
        )
    for metric, val, limit, line in above:
        out.append(
            ctx.finding(
                "ACC-UPPER",
                f"{metric} = {val} is above the {ctx.mlperf_model} upper limit {limit:g}{note}{gap}",
                severity=sev,
                path=path,
                line=line,
                source=f"{cite(metric) or 'accuracy-upper-limit'}; {OLD}: check_accuracy_dir L1430-1450",
                beyond_official=beyond,
            )
        )
    return out


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


def _extra_files(ctx: ResultContext, sev: Severity, open_note: str) -> list[Finding]:
    """E10; like every accuracy check, a warning in the open division once accuracy.txt gave a metric (E11: the
    official checkers take the result, "accuracy not valid but taken for open", v5.1.1 L2656-2662, CHK_v4.1:2023-2029)."""
    bm = ctx.benchmark
    if bm is None or not bm.extra_accuracy_files:
        return []
    out: list[Finding] = []
    for sub_dir, ids in bm.extra_accuracy_files.items():
        d = f"{ctx.rd.accuracy_dir}/{sub_dir}"
        names = ctx.sctx.sub.list_files(d) if ctx.exists_dir(d) else []
        stems = {n.split(".", 1)[0] for n in names}
        missing = [i for i in ids if i not in stems]
        if not ctx.exists_dir(d) or missing:
            what = f"{d}/ is missing" if not ctx.exists_dir(d) else f"{d}/ lacks {missing}"
            out.append(
                ctx.finding(
                    "ACC-EXTRA-FILES",
                    f"{ctx.mlperf_model} accuracy must include {sub_dir}/ with {list(ids)}: {what}{open_note}",
                    severity=sev,
                    path=d,
                    fix=f"copy the listed {sub_dir} from the accuracy run into accuracy/{sub_dir}/",
                )
            )
    return out
