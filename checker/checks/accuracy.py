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

from checker.checks.accuracy_run import accuracy_run_findings, partial_data_set
from checker.checks.context import ResultContext
from checker.checks.rule_registry import OLD, Case, RuleInfo, register
from checker.findings import Finding, Severity
from checker.parsers.accuracy_log import has_truncate_separator, is_json

TRUNCATE = "tools/submission/truncate_accuracy_log.py"

# the rules this module emits (the registry: checker/checks/rule_registry.py)
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
    partial = bool(DATA_SET_TOTALS.intersection(m for m, *_ in scan.below)) and partial_data_set(ctx)
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
    out += accuracy_run_findings(ctx, _scored_samples(tr.text))
    out += _extra_files(ctx, sev, open_note)
    return out


# metrics that are sums over the data set, not means: the llama reference evaluations print gen_len as the sum of the
# generated lengths (language/llama3.1-8b/evaluation.py and llama2-70b/evaluate-accuracy.py: np.sum(prediction_lens)),
# so on part of the data set they miss their target whatever the outputs: what a trial's partial data set produces
DATA_SET_TOTALS = frozenset({"GEN_LEN"})


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


# ---- rules that judge an accuracy run of either format (a LoadGen accuracy run, or an Endpoints result's
# accuracy_results.json through its EndpointsDetailLog and its score): one function each, called by both checks


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
