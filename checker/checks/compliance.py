"""Compliance test checks (catalogue F1-F9) and the TEST06 re-verification from its accuracy log (beyond official:
the official checker only reads ``verify_accuracy.txt``).

Only for closed/network (the official checker skips open). Sets ``ctx.computed.compliance``.
"""

from __future__ import annotations

import re
from itertools import repeat

from checker.audit_run import SHORT_QSL, audit_run_report
from checker.checks.catalog import WARN, RuleInfo, register
from checker.checks.context import ResultContext
from checker.checks.latency import latency_checks
from checker.checks.performance import detail_log_checks, load_detail
from checker.findings import Finding, Severity, UnusableInput
from checker.parsers.accuracy_log import (
    TRUNCATE_SEPARATOR,
    TRUNCATE_SEPARATOR_CRLF,
    TokenDtype,
    parse_accuracy_log,
)
from checker.test06 import (
    MAX_SAMPLES_FACTOR,
    OFFICIAL_DEFAULT_EOS_TOKEN_ID,
    OFFICIAL_SAMPLING_TARGET,
    Test06Check,
    detect_token_dtype,
    eos_pair_suffixes,
    token_settings_of,
    verify_test06,
)
from checker.test07 import DEFAULT_SCORE_PATTERN, parse_verify_accuracy
from checker.test09 import reported_mean, verify_test09
from rules.models import Scenario

# the rules this module emits (the registry: checker/checks/catalog.py)
RULES = register(
    __name__,
    RuleInfo("COMPL-DIR", "F1", "compliance directory missing"),
    RuleInfo("COMPL-TEST-DIR", "F2", "required TESTxx directory missing"),
    RuleInfo("COMPL-VERIFY-PERF", "F4", "verify_performance.txt without TEST PASS"),
    RuleInfo("COMPL-PERF-FILES", "F5", "TESTxx/performance/run_1 file list mismatch"),
    RuleInfo("COMPL-PERF-LOG", "F3", "TESTxx performance log missing or malformed"),
    RuleInfo("COMPL-TEST01-ACC", "F6/F7", "TEST01 accuracy not passed"),
    RuleInfo("COMPL-TEST06", "F8", "TEST06 verify_accuracy.txt does not pass"),
    RuleInfo("COMPL-VERIFY", "F10", "TEST07/TEST08/TEST09 verification file without TEST PASS (v6.x)"),
    RuleInfo("COMPL-RULES-DATA", "-", "compliance threshold not in the rules data; not re-verified", WARN, beyond=True),
    RuleInfo("COMPL-TEST07-REVERIFY", "-", "TEST07 verify_accuracy.txt inconsistent with its score, the round's threshold or its PASS line", beyond=True),
    RuleInfo("COMPL-TEST07-LOG", "-", "TEST07 accuracy log missing or with fewer samples than the test logs", beyond=True),
    RuleInfo(
        "COMPL-AUDIT-RUN",
        "-",
        "TEST07/TEST09 performance log missing, or it does not show the test's audit.config applied (performance mode, "
        "every sample of the test's data set issued and logged, no concatenation)",
        beyond=True,
    ),
    RuleInfo("COMPL-TEST09-REVERIFY", "F12", "TEST09 mean output length (re-computed) outside the round's bounds"),
    RuleInfo("COMPL-TEST09-LOG", "-", "TEST09 accuracy log missing, unparseable or with fewer samples than the test logs", beyond=True),
    RuleInfo("COMPL-TEST06-LOG", "-", "TEST06 accuracy log missing or unparseable", beyond=True),
    RuleInfo("COMPL-TEST06-REVERIFY", "-", "TEST06 re-run on the accuracy log fails", beyond=True),
    RuleInfo(
        "COMPL-TEST06-SKIPPED", "-", "TEST06 first-token check 'Skipped' outside Offline", WARN, beyond=True
    ),
    RuleInfo(
        "COMPL-TEST06-TRUNCATED",
        "-",
        "TEST06 accuracy log truncated: re-verification covers only the visible entries",
        WARN,
        beyond=True,
    ),
)

OLD = "official checker v5.1.1"
TEST06_MAX_LOG_BYTES = 64 * 1024 * 1024


def check_compliance(ctx: ResultContext) -> list[Finding]:
    out: list[Finding] = []
    bm = ctx.benchmark
    ctx.computed.compliance = 1
    if not ctx.closed_or_network or bm is None or not bm.compliance_tests:
        return out
    cdir = ctx.compliance_dir()
    src = f"{bm.compliance_cite or 'compliance tests of the round'}; {OLD}: check_compliance_dir L3256-3319"
    if not ctx.exists_dir(cdir):
        out.append(
            ctx.finding(
                "COMPL-DIR",
                f"no compliance directory {cdir} (required: {', '.join(bm.compliance_tests)})",
                path=cdir,
                source=src,
                fix="run the audit tests of the benchmark and copy their output",
            )
        )
        ctx.computed.compliance = 0
        return out
    for test in bm.compliance_tests:
        tdir = f"{cdir}/{test}"
        if not ctx.exists_dir(tdir):
            out.append(
                ctx.finding(
                    "COMPL-TEST-DIR",
                    f"{test} is required for {ctx.mlperf_model} but {tdir} is missing",
                    path=tdir,
                    source=src,
                    fix=f"run compliance/{test} and copy its output",
                )
            )
            continue
        if test in ("TEST01", "TEST04", "TEST05"):
            out += _perf_test(ctx, test, tdir)
        if test == "TEST01":
            out += _test01_accuracy(ctx, tdir)
        if test == "TEST06":
            out += _test06(ctx, tdir)
        if test in PASS_FILE_TESTS:
            out += _pass_file_test(ctx, test, tdir)
        if test == "TEST07":
            out += _test07_reverify(ctx, tdir)
        if test == "TEST09":
            out += _test09_reverify(ctx, tdir)
        if test in AUDIT_RUN_SAMPLES:
            out += _audit_run(ctx, test, tdir)
    if any(f.severity is Severity.ERROR for f in out):
        ctx.computed.compliance = 0
    return out


def _perf_test(ctx: ResultContext, test: str, tdir: str) -> list[Finding]:
    out: list[Finding] = []
    vp = f"{tdir}/verify_performance.txt"
    tr = ctx.files.text(vp)
    if tr.text is None or "TEST PASS" not in tr.text:
        why = (
            tr.problem.message
            if tr.problem is not None and tr.text is None
            else "does not contain 'TEST PASS'"
        )
        out.append(
            ctx.finding(
                "COMPL-VERIFY-PERF",
                f"{test}: {vp} {why}" if tr.text is not None else f"{test}: {why}",
                path=vp,
                source=f"{OLD}: check_compliance_perf_dir L3089",
                fix=f"rerun {test} until run_verification.py reports TEST PASS",
            )
        )
    run = f"{tdir}/performance/run_1"
    if not ctx.exists_dir(run):
        out.append(
            ctx.finding(
                "COMPL-PERF-FILES", f"{test}: {run} is missing", path=run, source=f"{OLD}: L3109-3124"
            )
        )
        return out
    present = set(ctx.list_files(run))
    required = {"mlperf_log_summary.txt", "mlperf_log_detail.txt"}
    extra = sorted(present - required - {"mlperf_log_accuracy.json"})
    missing = sorted(required - present)
    if missing or extra:
        out.append(
            ctx.finding(
                "COMPL-PERF-FILES",
                f"{test}: {run} file list mismatch: missing {missing}, unexpected {extra}",
                path=run,
                source=f"{OLD}: check_compliance_perf_dir L3109-3124",
                fix="keep exactly the LoadGen summary and detail logs (accuracy log optional)",
            )
        )
    rel = f"{run}/mlperf_log_detail.txt"
    if "mlperf_log_detail.txt" in present:
        log, found = load_detail(ctx, rel, "COMPL-PERF-LOG")
        out += found
        if log is not None:
            out += detail_log_checks(ctx, log, rel, prefix="COMPL-", test=test)
            out += latency_checks(ctx, log, rel, prefix="COMPL-")
    return out


# v6.x tests judged by a verification file that must say TEST PASS (catalogue F10)
PASS_FILE_TESTS = {
    "TEST07": "verify_accuracy.txt",
    "TEST08": "verify_accuracy.txt",
    "TEST09": "verify_output_len.txt",
}


def _pass_file_test(ctx: ResultContext, test: str, tdir: str) -> list[Finding]:
    rel = f"{tdir}/{PASS_FILE_TESTS[test]}"
    tr = ctx.files.text(rel)
    if tr.text is not None and any("TEST PASS" in line for line in tr.text.splitlines()):
        return []
    why = (
        tr.problem.message
        if tr.text is None and tr.problem is not None
        else f"{rel} does not contain 'TEST PASS'"
    )
    return [
        ctx.finding(
            "COMPL-VERIFY",
            f"{test}: {why}",
            path=rel,
            source="HEAD checker compliance_check.py (TEST07/TEST08/TEST09), catalogue F10",
            fix=f"run compliance/{test} and keep its verification output",
        )
    ]


def _test01_accuracy(ctx: ResultContext, tdir: str) -> list[Finding]:
    out: list[Finding] = []
    va = f"{tdir}/verify_accuracy.txt"
    tr = ctx.files.text(va)
    if tr.text is None:
        msg = tr.problem.message if tr.problem else f"{va} is missing"
        out.append(
            ctx.finding(
                "COMPL-TEST01-ACC",
                f"TEST01: {msg}",
                path=va,
                source=f"{OLD}: check_compliance_acc_dir L3129-3171",
            )
        )
        return out
    acc = f"{tdir}/accuracy"
    if not ctx.exists_dir(acc):
        out.append(
            ctx.finding(
                "COMPL-TEST01-ACC",
                f"TEST01: {acc} is missing",
                path=acc,
                source=f"{OLD}: check_compliance_acc_dir L3129-3171",
                fix="copy TEST01's accuracy output (mlperf_log_accuracy.json, accuracy.txt)",
            )
        )
        return out
    files = set(ctx.list_files(acc))
    if any("TEST PASS" in line for line in tr.text.splitlines()):
        if "mlperf_log_accuracy.json" not in files:
            out.append(
                ctx.finding(
                    "COMPL-TEST01-ACC",
                    f"TEST01: {acc}/mlperf_log_accuracy.json is missing",
                    path=acc,
                    source=f"{OLD}: check_compliance_acc_dir L3129-3171",
                    fix="keep TEST01's (truncated) accuracy log",
                )
            )
        return out
    # non-deterministic fallback: compare baseline and compliance accuracy within the delta
    bm = ctx.benchmark
    need = {"baseline_accuracy.txt", "compliance_accuracy.txt"}
    if not need <= files or bm is None:
        out.append(
            ctx.finding(
                "COMPL-TEST01-ACC",
                f"TEST01 did not pass ({va} has no 'TEST PASS') and {acc} lacks {sorted(need - files)} for the "
                "accuracy-delta fallback",
                path=va,
                source=f"{OLD}: check_compliance_acc_dir L3172-3226",
                fix="run TEST01's accuracy comparison (baseline and compliance accuracy.txt)",
            )
        )
        return out
    delta = _delta_pct(ctx)
    pats = ctx.round.acc_patterns
    base_t = ctx.files.text(f"{acc}/baseline_accuracy.txt").text or ""
    comp_t = ctx.files.text(f"{acc}/compliance_accuracy.txt").text or ""
    for t in bm.accuracy_targets_for(ctx.scenario):
        pat = pats.get(t.metric)
        if pat is None:
            continue
        b, c = _first_value(pat, base_t), _first_value(pat, comp_t)
        if not b or not c:
            out.append(
                ctx.finding(
                    "COMPL-TEST01-ACC",
                    f"TEST01: {t.metric} missing or zero in baseline ({b}) / compliance ({c}) accuracy",
                    path=acc,
                    source=f"{OLD}: L3172-3226",
                )
            )
            continue
        diff = abs(1 - b / c) * 100
        if diff > delta:
            out.append(
                ctx.finding(
                    "COMPL-TEST01-ACC",
                    f"TEST01: {t.metric} baseline {b} vs compliance {c} differ by {diff:.3f}% > {delta}%",
                    path=acc,
                    source=f"Config.get_delta_perc; {OLD}: L3172-3226",
                    fix="make the SUT's results independent of the sampled performance-mode logging",
                )
            )
    return out


def _delta_pct(ctx: ResultContext) -> float:
    deltas = ctx.round.compliance_delta_pct
    model = ctx.mlperf_model or ""
    if model.endswith("99.9") and "99.9" in deltas:
        return deltas["99.9"]
    return deltas.get("99", 1.0)


def _first_value(pattern: str, text: str) -> float | None:
    rx = re.compile(pattern)
    for line in text.splitlines():
        m = rx.match(line)
        if m:
            try:
                return float(m.group(1))
            except ValueError:
                return None
    return None


def _test06(ctx: ResultContext, tdir: str) -> list[Finding]:
    out: list[Finding] = []
    va = f"{tdir}/verify_accuracy.txt"
    tr = ctx.files.text(va)
    src = f"{OLD}: check_compliance_dir TEST06 L3227-3247"
    if tr.text is None:
        msg = tr.problem.message if tr.problem else f"{va} is missing"
        out.append(
            ctx.finding(
                "COMPL-TEST06",
                f"TEST06: {msg}",
                path=va,
                source=src,
                fix="run compliance/TEST06/run_verification.py",
            )
        )
        return out
    lines = [ln.strip() for ln in tr.text.splitlines()]
    wanted = {
        "First token check pass": ("First token check pass: True", "First token check pass: Skipped"),
        "EOS check pass": ("EOS check pass: True",),
        "Sample length check pass": ("Sample length check pass: True",),
    }
    for name, ok in wanted.items():
        if not any(ln in ok for ln in lines):
            line_no = next((i for i, ln in enumerate(lines, 1) if ln.startswith(name)), None)
            out.append(
                ctx.finding(
                    "COMPL-TEST06",
                    f"TEST06: verify_accuracy.txt does not report '{ok[0]}'",
                    path=va,
                    line=line_no,
                    source=src,
                    fix="fix the SUT (first token / EOS / token count) and rerun TEST06",
                )
            )
    skipped = next((i for i, ln in enumerate(lines, 1) if ln == "First token check pass: Skipped"), None)
    if (
        skipped is not None
        and ctx.scenario is not None
        and ctx.scenario.loadgen_scenario is not Scenario.OFFLINE
    ):
        out.append(
            ctx.finding(
                "COMPL-TEST06-SKIPPED",
                f"TEST06: verify_accuracy.txt says 'First token check pass: Skipped' for a {ctx.scenario.value} "
                "result; run_verification.py skips the first-token check only for --scenario Offline, so it was run "
                "with the wrong scenario. The official checker accepts 'Skipped' in every scenario",
                severity=Severity.WARNING,
                path=va,
                line=skipped,
                source="compliance/TEST06/run_verification.py: need_first_token_check = scenario != 'Offline'; "
                f"{src} accepts Skipped",
                fix=f"rerun run_verification.py with --scenario {ctx.scenario.value}",
                beyond_official=True,
            )
        )
    out += _test06_reverify(ctx, tdir)
    return out


def _hex_field(line: str, name: str) -> bytes | None:
    """The bytes of the hex string ``"<name>" : "..."`` in a LoadGen accuracy-log line; None when absent or not pure
    hex (``bytes.fromhex`` skips whitespace, so the length check rejects it)."""
    tag = f'"{name}" : "'
    i = line.find(tag)
    if i < 0:
        return None
    i += len(tag)
    j = line.find('"', i)
    if j < 0:
        return None
    try:
        raw = bytes.fromhex(line[i:j])
    except ValueError:
        return None
    return raw if 2 * len(raw) == j - i else None


def _test06_screen(
    text: str, scenario: Scenario, eos_ids: tuple[int, ...] = (OFFICIAL_DEFAULT_EOS_TOKEN_ID,)
) -> bool:
    """True when every logged sample certainly passes :func:`checker.test06.verify_test06` (int32 ids, the official
    EOS id): a screen over LoadGen's line layout and the raw bytes, without decoding a token. Anything unusual
    returns False and the log goes through the full parser and verifier, which give the verdict and the per-sample
    reasons."""
    lines = text.split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    if len(lines) < 3 or lines[0].strip() != "[" or lines[-1].strip() != "]":
        return False
    entries = lines[1:-1]
    if len(entries) > MAX_SAMPLES_FACTOR * OFFICIAL_SAMPLING_TARGET:
        return False
    first_token_needed = scenario is not Scenario.OFFLINE
    eos2 = eos_pair_suffixes(eos_ids)
    for raw in entries:
        ln = raw.strip()
        if not ln.startswith('{ "seq_id" : ') or not (ln.endswith(" }") or ln.endswith(" },")):
            return False
        data = _hex_field(ln, "data")
        first = _hex_field(ln, "token_data")
        k = ln.find('"token_count" : ')
        if data is None or k < 0:
            return False
        if ln.count('" : ') != 4 + (first is not None):
            return False  # another key, or a field spelled otherwise
        digits = ln[k + len('"token_count" : ') :].rstrip(",").rstrip("}").strip()
        if not digits.isdigit() or len(data) % 4:
            return False
        try:
            if len(data) // 4 != int(digits):
                return False
        except ValueError:  # 4,301 digits or more, or a digit int() does not read ("²"): the full parser decides
            return False
        if data.endswith(eos2):
            return False
        if first_token_needed and (
            not first or len(first) % 4 or len(first) > len(data) or not data.startswith(first)
        ):
            return False
    return True


_HEX_UPPER = b"0123456789ABCDEF"
# LoadGen's accuracy-log entry as ``bytes.split(b'"')`` cuts the whole file: (pieces per entry, the fixed pieces
# by offset within the entry, offset of the token_data hex or None). The other offsets hold numbers and hex.
_LAYOUT_WITH_FIRST = (
    14,
    (
        (1, b"seq_id"),
        (3, b"qsl_idx"),
        (5, b"data"),
        (6, b" : "),
        (8, b", "),
        (9, b"token_data"),
        (10, b" : "),
        (12, b", "),
        (13, b"token_count"),
    ),
    11,
)
_LAYOUT_NO_FIRST = (
    10,
    ((1, b"seq_id"), (3, b"qsl_idx"), (5, b"data"), (6, b" : "), (8, b", "), (9, b"token_count")),
    None,
)


# The numbers between the fixed pieces, each list joined with NUL (which the fixed pieces never hold).
_IDS_RE = re.compile(rb" : [0-9]+, (?:\x00 : [0-9]+, )*")
_COUNTS_RE = re.compile(rb"(?: : ([0-9]+) \},\n\{ \x00)* : ([0-9]+) \}\n\]\n?")
_COUNT_RE = re.compile(rb" : ([0-9]+) ")


def _test06_screen_bytes(
    data: bytes, scenario: Scenario, eos_ids: tuple[int, ...] = (OFFICIAL_DEFAULT_EOS_TOKEN_ID,)
) -> bool:
    """A faster, narrower form of :func:`_test06_screen` on the raw bytes, for LoadGen's exact layout (upper-case
    hex, one entry a line, ``token_data`` present or, in Offline, absent): True only where :func:`_test06_screen`
    is True too. One ``split(b'"')`` of the whole file cuts every entry into a fixed number of pieces; the fixed
    pieces are compared per offset, the numbers matched per column with one regex each, and the hex fields checked
    with ``bytes.translate``, so nothing is decoded or handled line by line."""
    p = _split_quotes(data)
    first_token_needed = scenario is not Scenario.OFFLINE
    # b'"token_data"' in data: a piece between two quotes is exactly b"token_data" (the first and last pieces have a
    # quote on one side only); the first entry's p[9] usually answers, else the list is searched, not the bytes
    with_first = first_token_needed or (len(p) > 10 and p[9] == b"token_data") or b"token_data" in p[1:-1]
    layout = _LAYOUT_WITH_FIRST if with_first else _LAYOUT_NO_FIRST
    stride, fixed, first_at = layout
    n, rem = divmod(len(p) - 1, stride)
    if rem or n < 1 or n > MAX_SAMPLES_FACTOR * OFFICIAL_SAMPLING_TARGET or p[0] != b"[\n{ ":
        return False
    for off, want in fixed:
        if p[off::stride].count(want) != n:
            return False
    for ids in (b"\x00".join(p[2::stride]), b"\x00".join(p[4::stride])):
        if ids.count(b"\x00") != n - 1 or _IDS_RE.fullmatch(ids) is None:
            return False
    ends = b"\x00".join(p[stride::stride])
    if ends.count(b"\x00") != n - 1 or _COUNTS_RE.fullmatch(ends) is None:
        return False
    counts = _COUNT_RE.findall(ends)
    hexes = p[7::stride]
    firsts = p[first_at::stride] if first_at is not None else [b""] * n
    if len(counts) != n:
        return False
    eos2 = tuple(pair.hex().upper().encode() for pair in eos_pair_suffixes(eos_ids))
    try:
        for hexd, first, count in zip(hexes, firsts, counts, strict=True):
            if len(hexd) % 8 or len(first) % 8 or len(hexd) != 8 * int(count) or hexd.endswith(eos2):
                return False
            if first_token_needed and (not first or not hexd.startswith(first)):
                return False
    except ValueError:  # a count of 4,301 digits or more (int() refuses it): no entry's length; the full parser decides
        return False
    # bytes.translate deleting the hex digits leaves nothing of a pure hex field
    return not any(map(bytes.translate, hexes, repeat(None), repeat(_HEX_UPPER))) and not any(
        map(bytes.translate, firsts, repeat(None), repeat(_HEX_UPPER))
    )


_DATA_OPEN = b'"data" : "'


def _split_quotes(data: bytes) -> list[bytes]:
    """``data.split(b'"')``, faster on an accuracy log: ``bytes.split`` looks at every byte, here the long hex of
    each ``"data"`` field is skipped with ``find`` (memchr). Exact for any input: for a quote at ``q1`` and the next
    quote at ``q2``, ``split(data) == split(data[:q1]) + [data[q1 + 1 : q2]] + split(data[q2 + 1 :])``."""
    out: list[bytes] = []
    find = data.find
    pos = 0
    while True:
        a = find(_DATA_OPEN, pos)
        if a < 0:
            break
        q1 = a + len(_DATA_OPEN) - 1  # the quote that opens the hex
        q2 = find(b'"', q1 + 1)
        if q2 < 0:
            break
        out += data[pos:q1].split(b'"')
        out.append(data[q1 + 1 : q2])
        pos = q2 + 1
    out += data[pos:].split(b'"')
    return out


def _test06_reverify(ctx: ResultContext, tdir: str) -> list[Finding]:
    """Beyond official: recheck TEST06 from its accuracy log with checker.test06."""
    rel = f"{tdir}/accuracy/mlperf_log_accuracy.json"
    tree = ctx.sctx.tree
    if not ctx.exists_file(rel):
        return [
            ctx.finding(
                "COMPL-TEST06-LOG",
                f"TEST06: {rel} is missing; the verification cannot be reproduced",
                path=rel,
                source="compliance/TEST06: the accuracy log is part of the TEST06 output",
                fix="copy TEST06's mlperf_log_accuracy.json",
                beyond_official=True,
            )
        ]
    size = tree.size(rel)
    if not tree.is_inside(rel) or size is None or size > TEST06_MAX_LOG_BYTES:
        return []  # tree hygiene / size findings report these
    scen = ctx.scenario.loadgen_scenario if ctx.scenario else Scenario.SERVER
    eos_ids, dtype = token_settings_of(ctx.benchmark)
    if dtype is TokenDtype.INT32:  # the screens read 4-byte ids
        raw, _problem = tree.read_bytes(rel)
        if raw is not None and _test06_screen_bytes(raw, scen, eos_ids):
            return []  # LoadGen's exact layout, every sample passes: a narrower form of the screen below
        del raw
        tr = ctx.files.text(rel)
        if tr.text is not None and _test06_screen(tr.text, scen, eos_ids):
            return []  # every sample passes the screen, which is stricter than verify_test06
    try:
        log = parse_accuracy_log(tree.abspath(rel))
    except UnusableInput as exc:
        return [
            ctx.finding(
                "COMPL-TEST06-LOG",
                f"TEST06 accuracy log cannot be parsed: {exc}",
                path=rel,
                line=exc.line,
                source="LoadGen mlperf_log_accuracy.json format",
                beyond_official=True,
            )
        ]
    dtype, dtype_why = detect_token_dtype(log.entries, dtype)
    res = verify_test06(log.entries, scen, eos_token_ids=eos_ids, dtype=dtype, truncated=log.truncated)
    out: list[Finding] = []
    if log.truncated:
        out.append(
            ctx.finding(
                "COMPL-TEST06-TRUNCATED",
                f"TEST06: {rel} is the truncated form (head and tail windows): the re-verification covers only the "
                f"{len(log.entries)} entries visible in it, not every logged sample; run_verification.py cannot read "
                "a truncated log at all",
                severity=Severity.WARNING,
                path=rel,
                source="compliance/TEST06/run_verification.py copies the whole accuracy log into TEST06/accuracy/; "
                "only the accuracy run's log is truncated (truncate_accuracy_log.py)",
                fix="submit TEST06's mlperf_log_accuracy.json as run_verification.py copied it (untruncated)",
                beyond_official=True,
            )
        )
    for outcome in res.outcomes:
        if outcome.passed is False:
            first = outcome.problems[0] if outcome.problems else None
            extra = (
                f"; first: entry {first.entry_index} (qsl_idx {first.qsl_idx}): {first.reason}"
                if first
                else ""
            )
            note = f" ({outcome.note})" if outcome.note else ""
            if outcome.official_pass is None:
                official = " run_verification.py does not check this"
            elif outcome.official_pass:
                official = " The official run_verification.py passes this"
            else:
                official = ""
            out.append(
                ctx.finding(
                    "COMPL-TEST06-REVERIFY",
                    f"TEST06 {outcome.check.value} check fails on {len(outcome.problems)} of {outcome.samples_checked} "
                    f"logged samples{extra}{note} [{dtype_why}].{official}",
                    path=rel,
                    line=first.line if first else None,
                    source="compliance/TEST06/run_verification.py checks, re-run on the submitted accuracy log",
                    fix=_reverify_fix(outcome.check, outcome.samples_checked),
                    beyond_official=True,
                )
            )
    return out


def _reverify_fix(check: Test06Check, n: int) -> str:
    if check is Test06Check.SAMPLE_COUNT and n == 0:
        return (
            "LoadGen logged no sample, so it never read TEST06's audit.config: copy compliance/TEST06/audit.config "
            "into the directory the benchmark runs from (LoadGen's working directory), rerun TEST06 and check that "
            "its detail log says 'Found Audit Config file (audit.config)'"
        )
    if check is Test06Check.SAMPLE_COUNT:
        return "run TEST06 as a performance-mode run with its audit.config (not an accuracy run) and submit that log"
    if check is Test06Check.FIRST_TOKEN:
        return "report the first token's ids through FirstTokenComplete exactly as they start the response, rerun TEST06"
    if check is Test06Check.EOS:
        return "stop the output at the first EOS (do not pad with EOS tokens), rerun TEST06"
    return "report to LoadGen (n_tokens / token_count) exactly the number of token ids in the response, rerun TEST06"


def _rules_data(ctx: ResultContext, what: str, fields: str) -> Finding:
    return ctx.finding(
        "COMPL-RULES-DATA",
        f"{what} is not in the rules data of round {ctx.round.name} ({fields}); not re-verified",
        severity=Severity.WARNING,
        source="rules/data: the round's data must carry the compliance thresholds (the benchmark's audit.config)",
        fix=f"add {fields} to the round's rules data",
        beyond_official=True,
    )


def _test07_reverify(ctx: ResultContext, tdir: str) -> list[Finding]:
    """Beyond official (which reads only the PASS line): the summary of verify_accuracy.txt against its own
    script output, the round's threshold and its PASS line; the accuracy log is present with every sample."""
    bm = ctx.benchmark
    out: list[Finding] = []
    va = f"{tdir}/verify_accuracy.txt"
    tr = ctx.files.text(va)
    threshold = getattr(bm, "test07_accuracy_threshold", None)
    pattern = getattr(bm, "test07_score_pattern", None) or DEFAULT_SCORE_PATTERN
    src = "compliance/TEST07/run_verification.py (score = first --score-pattern match; pass = score >= threshold)"

    def add(rule: str, msg: str, path: str, fix: str, trial: bool = False) -> None:
        out.append(
            ctx.finding(rule, f"TEST07: {msg}", path=path, source=src, fix=fix, beyond_official=True, trial=trial)
        )

    if threshold is None:
        out.append(
            _rules_data(
                ctx,
                f"the TEST07 accuracy threshold of {ctx.mlperf_model}",
                "Benchmark.test07_accuracy_threshold",
            )
        )
    if tr.text is not None:
        rep = parse_verify_accuracy(tr.text, pattern)
        if not rep.has_summary or rep.score is None:
            add(
                "COMPL-TEST07-REVERIFY",
                f"{va} has no 'TEST07 Verification Summary' with an 'Accuracy score'",
                va,
                "keep verify_accuracy.txt exactly as run_verification.py wrote it",
            )
        else:
            if rep.output_score is not None and rep.output_score != rep.score:
                add(
                    "COMPL-TEST07-REVERIFY",
                    f"the summary's score {rep.score:g} is not the accuracy script's "
                    f"output score {rep.output_score:g}",
                    va,
                    "keep verify_accuracy.txt exactly as written",
                )
            if threshold is not None and rep.threshold is not None and rep.threshold < threshold:
                add(
                    "COMPL-TEST07-REVERIFY",
                    f"verified against threshold {rep.threshold:g}, below the round's {threshold:g}",
                    va,
                    "run run_verification.py with the benchmark's audit.config",
                )
            want = threshold if threshold is not None else rep.threshold
            if want is not None and not rep.score >= want:
                add(
                    "COMPL-TEST07-REVERIFY",
                    f"score {rep.score:g} is below the threshold {want:g}"
                    + (" although the file says TEST PASS" if rep.says_pass else ""),
                    va,
                    "fix the SUT's accuracy in performance mode and rerun TEST07",
                )
            elif want is not None and not rep.says_pass:
                add(
                    "COMPL-TEST07-REVERIFY",
                    f"score {rep.score:g} >= {want:g} but no TEST PASS line",
                    va,
                    "rerun run_verification.py",
                )
    log = f"{tdir}/accuracy/mlperf_log_accuracy.json"
    if not ctx.exists_file(log):
        add(
            "COMPL-TEST07-LOG",
            f"{log} is missing; the score cannot be reproduced",
            log,
            "copy TEST07's mlperf_log_accuracy.json (run_verification.py copies it to TEST07/accuracy/)",
        )
        return out
    need = getattr(bm, "test07_sample_count", None)
    if need is not None:
        n = _entry_count(ctx, log)
        if isinstance(n, str):
            add("COMPL-TEST07-LOG", n, log, "submit the log as LoadGen wrote it")
        elif n is not None and n < need:
            add(
                "COMPL-TEST07-LOG",
                f"{log} holds {n} distinct samples (qsl_idx); TEST07 logs each of its {need} once",
                log,
                "run TEST07 with its audit.config (accuracy_log_sampling_target, min_query_count, "
                "performance_issue_unique) on its data set",
                trial=_partial_test_data_set(ctx, tdir, need),
            )
    return out


def _partial_test_data_set(ctx: ResultContext, tdir: str, need: int) -> bool:
    """The test's performance run held fewer samples in its QSL than the test's data set (a trial's partial data set),
    which is why its accuracy log holds fewer."""
    log = ctx.files.detail(f"{tdir}/performance/run_1/mlperf_log_detail.txt")[0]
    qsl = None if log is None else log.int_value("qsl_reported_total_count")
    return qsl is not None and qsl < need


def _entry_count(ctx: ResultContext, rel: str) -> int | str | None:
    tree = ctx.sctx.tree
    size = tree.size(rel)
    if not tree.is_inside(rel) or size is None or size > TEST06_MAX_LOG_BYTES:
        return None
    try:  # distinct samples: a sample issued twice (no performance_issue_unique) is one sample scored
        return len({e.qsl_idx for e in parse_accuracy_log(tree.abspath(rel)).entries})
    except UnusableInput as exc:
        return f"the accuracy log cannot be parsed: {exc}"


def _test09_reverify(ctx: ResultContext, tdir: str) -> list[Finding]:
    """Beyond official (which reads only the PASS line): the mean output length recomputed from TEST09's accuracy
    log as run_verification.py computes it, against the round's bounds."""
    bm = ctx.benchmark
    low = getattr(bm, "test09_min_output_tokens", None)
    high = getattr(bm, "test09_max_output_tokens", None)
    src = "compliance/TEST09/run_verification.py (4-byte ids per sample, mean over logged samples, bounds inclusive)"
    rel = f"{tdir}/accuracy/mlperf_log_accuracy.json"

    def finding(rule: str, msg: str, fix: str, line: int | None = None, trial: bool = False) -> Finding:
        return ctx.finding(
            rule, f"TEST09: {msg}", path=rel, line=line, source=src, fix=fix, beyond_official=True, trial=trial
        )

    if low is None or high is None:
        return [
            _rules_data(
                ctx,
                f"the TEST09 mean output length bounds of {ctx.mlperf_model}",
                "Benchmark.test09_min_output_tokens / test09_max_output_tokens",
            )
        ]
    if not ctx.exists_file(rel):
        return [
            finding(
                "COMPL-TEST09-LOG",
                f"{rel} is missing; the mean output length cannot be re-computed",
                "copy TEST09's mlperf_log_accuracy.json (run_verification.py copies it to TEST09/accuracy/)",
            )
        ]
    tree = ctx.sctx.tree
    size = tree.size(rel)
    if not tree.is_inside(rel) or size is None:
        return []  # tree hygiene findings report these
    if size > TEST06_MAX_LOG_BYTES:  # never silently skipped: say the mean was not re-computed
        return [
            ctx.finding(
                "COMPL-TEST09-LOG",
                f"{rel} is {size} bytes, more than this tool re-reads ({TEST06_MAX_LOG_BYTES}); the mean output "
                "length was not re-computed",
                severity=Severity.WARNING,
                path=rel,
                source="beyond the official checker, which only reads verify_output_len.txt",
                fix="nothing to fix in the submission if TEST09 passed; verify it with compliance/TEST09/run_verification.py",
                beyond_official=True,
            )
        ]
    try:
        log = parse_accuracy_log(tree.abspath(rel))
    except UnusableInput as exc:
        return [
            finding(
                "COMPL-TEST09-LOG",
                f"the accuracy log cannot be parsed: {exc}",
                "submit the log as LoadGen wrote it",
                exc.line,
            )
        ]
    out: list[Finding] = []
    res = verify_test09(log.entries, low, high)
    need = getattr(bm, "test09_sample_count", None)
    if log.truncated or (need is not None and res.samples < need):
        out.append(
            finding(
                "COMPL-TEST09-LOG",
                f"{rel} holds {res.samples} samples"
                + (" (truncated)" if log.truncated else "")
                + (f"; TEST09 logs all {need}" if need else ""),
                "run TEST09 with its audit.config and submit its whole accuracy log",
                trial=not log.truncated and need is not None and _partial_test_data_set(ctx, tdir, need),
            )
        )
    if not res.passed:
        out.append(
            finding(
                "COMPL-TEST09-REVERIFY",
                f"mean output length {res.mean:.2f} tokens over {res.samples} "
                f"samples is outside [{low:g}, {high:g}]",
                "generate outputs of the reference length (do not truncate or pad) and rerun TEST09",
            )
        )
    vt = ctx.files.text(f"{tdir}/verify_output_len.txt").text
    shown = reported_mean(vt) if vt else None
    if shown is not None and abs(shown - res.mean) > 0.006:
        out.append(
            finding(
                "COMPL-TEST09-REVERIFY",
                f"verify_output_len.txt reports mean {shown:g}, the accuracy log "
                f"gives {res.mean:.2f}: the verification was not made on this log",
                "rerun run_verification.py on the submitted accuracy log",
            )
        )
    return out


# the rules-data field with each test's data set size (the audit.config's min_query_count)
AUDIT_RUN_SAMPLES = {"TEST07": "test07_sample_count", "TEST09": "test09_sample_count"}
_AUDIT_RUN_SOURCE = (
    "compliance/TEST07/README.md, compliance/TEST09/README.md: 'Verify that audit.config was properly read by checking "
    "mlperf_log_detail.txt'; the audit.config files: mode = 2, accuracy_log_sampling_target >= the data set size "
    "('Log ALL samples'), sample_concatenate_permutation = 0; the verification copies performance/run_1 into the "
    "submission ('These files must be submitted as part of the compliance audit trail')"
)


def _audit_run(ctx: ResultContext, test: str, tdir: str) -> list[Finding]:
    """Beyond official (which reads only the verification file): the test's performance-mode detail log shows that
    LoadGen read the audit.config and ran the test as it asks (:mod:`checker.audit_run`), and the accuracy log holds
    every sample LoadGen issued."""
    rel = f"{tdir}/performance/run_1/mlperf_log_detail.txt"
    fix = f"run {test} with compliance/{test}/{ctx.mlperf_model}/audit.config in LoadGen's working directory and submit "
    fix += f"its performance/run_1 logs as compliance/{test}/run_verification.py copies them"

    def finding(msg: str, line: int | None = None, severity: Severity | None = None, trial: bool = False) -> Finding:
        return ctx.finding(
            "COMPL-AUDIT-RUN", f"{test}: {msg}", path=rel, line=line, source=_AUDIT_RUN_SOURCE, fix=fix, severity=severity,
            trial=trial,
        )

    if not ctx.exists_file(rel):  # the official checker does not require it (nor this tool TEST06's): a warning
        return [
            finding(
                f"{rel} is missing: nothing shows that the test ran with its audit.config (the official checker "
                "reads only the verification file)",
                severity=Severity.WARNING,
            )
        ]
    log, out = load_detail(ctx, rel, "COMPL-AUDIT-RUN")
    if log is None:
        return out
    need = getattr(ctx.benchmark, AUDIT_RUN_SAMPLES[test], None)
    rep = audit_run_report(log)
    lines = {
        "LoadGen did not log": None,
        "effective_test_mode": log.line_of("effective_test_mode"),
        "effective_accuracy_log_sampling_target": log.line_of("effective_accuracy_log_sampling_target"),
        SHORT_QSL: log.line_of("qsl_reported_total_count"),
        "effective_sample_concatenate_permutation": log.line_of("effective_sample_concatenate_permutation"),
    }
    short = rep.qsl_total is not None and need is not None and rep.qsl_total < need  # a trial's partial data set
    for problem in rep.problems(need):
        line = next((ln for k, ln in lines.items() if problem.startswith(k)), None)
        out.append(finding(problem, line, trial=short and problem.startswith(SHORT_QSL)))
    queries = log.int_value("generated_query_count")
    per_query = log.int_value("generated_samples_per_query")
    acc = f"{tdir}/accuracy/mlperf_log_accuracy.json"
    logged = _logged_entries(ctx, acc)
    if queries is not None and per_query is not None and logged is not None and logged < queries * per_query:
        out.append(
            finding(
                f"LoadGen issued {queries * per_query} samples (generated_query_count x generated_samples_per_query) "
                f"but {acc} holds {logged}: not every sample was logged",
                log.line_of("generated_samples_per_query"),
            )
        )
    return out


def _logged_entries(ctx: ResultContext, rel: str) -> int | None:
    """Entries of a LoadGen accuracy log, counted by their ``"qsl_idx"`` keys (None: absent, too large, outside the
    tree, or the truncated form; the TEST07/TEST09 log findings report those)."""
    tree = ctx.sctx.tree
    size = tree.size(rel)
    if not tree.is_inside(rel) or size is None or size > TEST06_MAX_LOG_BYTES:
        return None
    raw, _problem = tree.read_bytes(rel)
    if raw is None or TRUNCATE_SEPARATOR.encode() in raw or TRUNCATE_SEPARATOR_CRLF.encode() in raw:
        return None
    return raw.count(b'"qsl_idx"')
