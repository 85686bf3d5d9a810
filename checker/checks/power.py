"""Power checks (catalogue G1-G4) for results with ``performance/power/``.

G4 (the Power WG checker) is covered in part: client/server JSON present and parseable with the required top-level
fields, equal UUIDs and session names, and no ERROR line in ptd_logs.txt inside the testing window is NOT checked
(the PTD log format needs the WG's parser). Sets ``ctx.computed.power_metric``.
"""

from __future__ import annotations

import datetime as dt
import re

from checker.checks.context import ResultContext
from checker.checks.performance import DETAIL_LOG_CASES, load_detail
from checker.checks.rule_registry import OLD, Case, RuleInfo, register
from checker.findings import Finding
from rules.models import Scenario

# the rules this module emits (the registry: checker/checks/rule_registry.py)
RULES = register(
    __name__,
    RuleInfo(
        "POWER-FILES",
        "G1",
        "power / ranging file list incomplete",
        source=f"{OLD}: check_power_dir L1916-1936",
        fix="keep the ranging run's LoadGen logs and spl.txt",
        cases={
            "power-dir": Case(
                source=f"{OLD}: check_power_dir L1916-1936",
                fix="copy the PTD client/server logs of the power run",
            )
        },
    ),
    RuleInfo("POWER-RANGING", "G2", "ranging run log unreadable", cases=DETAIL_LOG_CASES),
    RuleInfo(
        "POWER-METRIC",
        "G3",
        "no power samples inside the run",
        source=f"{OLD}: get_power_metric L1825",
        fix="run the performance run under the PTD power client",
        cases={
            "no-samples": Case(
                source=f"{OLD}: get_power_metric L1825",
                fix="check the PTD and SUT clocks; the samples must cover the run",
            ),
            "unreadable": Case(),  # spl.txt cannot be read: the read problem says why
        },
    ),
    RuleInfo(
        "POWER-WG",
        "G4",
        "Power WG checks (subset): client/server JSON fields, uuid, session name",
        source="power/power_checker.py: required fields of client/server JSON",
        fix="submit the PTD client/server JSON unedited",
        cases={
            "unreadable": Case(source="power_checker.py: client/server JSON"),
            "session": Case(
                source="power/power_checker.py: uuid_check / session_name_check",
                fix="the client and server logs must come from the same session",
            ),
        },
    ),
)
POWER_TIME_FORMAT = "%m-%d-%Y %H:%M:%S.%f"
WG_JSON_FIELDS = (
    "version",
    "timezone",
    "modules",
    "sources",
    "messages",
    "uuid",
    "session_name",
    "results",
    "phases",
)


# POWER_TIME_FORMAT's usual form (PTD's and LoadGen's: zero-padded fields), read without strptime: an spl.txt has a
# line per second of the run (31,000 in the published v5.1 power results); anything else goes through strptime
_POWER_TIME = re.compile(r"(\d\d)-(\d\d)-(\d{4}) (\d\d):(\d\d):(\d\d)\.(\d{1,6})")


def _parse_time(value: object) -> dt.datetime | None:
    text = str(value)
    m = _POWER_TIME.fullmatch(text)
    if m is not None:
        mo, d, y, h, mi, s, frac = m.groups()
        try:
            return dt.datetime(int(y), int(mo), int(d), int(h), int(mi), int(s), int(frac.ljust(6, "0")))
        except ValueError:
            return None
    try:
        return dt.datetime.strptime(text, POWER_TIME_FORMAT)
    except ValueError:
        return None


def check_power(ctx: ResultContext) -> list[Finding]:
    if not ctx.has_power:
        return []
    out: list[Finding] = []
    st = ctx.round.structure
    rd = ctx.rd
    # G1 file lists
    perf_files = set(st.performance_run_files) | set(st.power_run_files or ("spl.txt",))
    for d in (rd.ranging_dir,):
        present = set(ctx.list_files(d)) if ctx.exists_dir(d) else set()
        missing = sorted(perf_files - present)
        if missing:
            out.append(
                ctx.finding(
                    "POWER-FILES",
                    f"{d} is missing {missing}",
                    path=d,
                )
            )
    pdir = rd.power_dir
    want = set(
        st.power_dir_files or ("client.json", "client.log", "ptd_logs.txt", "server.json", "server.log")
    )
    present = set(ctx.list_files(pdir))
    if want - present:
        out.append(
            ctx.finding(
                "POWER-FILES",
                f"{pdir} is missing {sorted(want - present)}",
                path=pdir,
                case="power-dir",
            )
        )
    # G2 ranging run parses
    rrel = f"{rd.ranging_dir}/mlperf_log_detail.txt"
    if ctx.exists_file(rrel):
        _log, found = load_detail(ctx, rrel, "POWER-RANGING")
        out += found
    # G3 power metric
    out += _power_metric(ctx)
    # G4 (subset)
    out += _wg_checks(ctx, pdir)
    return out


def _power_metric(ctx: ResultContext) -> list[Finding]:
    log = ctx.perf_detail()
    spl_rel = f"{ctx.rd.performance_dir}/spl.txt"
    if log is None or not ctx.exists_file(spl_rel):
        return []
    begin, end = _parse_time(log.value("power_begin")), _parse_time(log.value("power_end"))
    if begin is None or end is None:
        return [
            ctx.finding(
                "POWER-METRIC",
                "power_begin / power_end missing or unparseable in the performance detail log",
                path=ctx.perf_detail_path,
                line=log.line_of("power_begin"),
            )
        ]
    tr = ctx.files.text(spl_rel)
    if tr.text is None:
        return [ctx.problem("POWER-METRIC", tr.problem, case="unreadable")] if tr.problem else []
    watts: list[float] = []
    for line in tr.text.splitlines():
        if not line.startswith("Time"):
            continue
        parts = line.split(",")
        if len(parts) < 4:
            continue
        ts = _parse_time(parts[1])
        if ts is None or not (begin < ts < end):
            continue
        try:
            v = float(parts[3])
        except ValueError:
            continue
        if v > 0:
            watts.append(v)
    if not watts:
        return [
            ctx.finding(
                "POWER-METRIC",
                "no positive power sample in spl.txt between power_begin and power_end",
                path=spl_rel,
                case="no-samples",
            )
        ]
    avg = sum(watts) / len(watts)
    scen = ctx.scenario
    eff = Scenario.parse(log.effective_scenario or "")
    if scen in (Scenario.OFFLINE, Scenario.SERVER, Scenario.INTERACTIVE):
        metric = avg
    else:
        n = log.int_value("result_query_count") or 0
        duration_s = (end - begin).total_seconds()
        metric = avg * duration_s * 1000 / n if n else 0.0
        if scen is Scenario.MULTI_STREAM and eff is Scenario.SINGLE_STREAM:
            metric *= 8
    ctx.computed.power_metric = metric
    return []


def _wg_checks(ctx: ResultContext, pdir: str) -> list[Finding]:
    out: list[Finding] = []
    docs = {}
    for name in ("client.json", "server.json"):
        rel = f"{pdir}/{name}"
        if not ctx.exists_file(rel):
            continue
        jr = ctx.files.json(rel)
        if not isinstance(jr.value, dict):
            if jr.problem is not None:
                out.append(ctx.problem("POWER-WG", jr.problem, case="unreadable"))
            continue
        docs[name] = jr.value
        missing = [f for f in WG_JSON_FIELDS if f not in jr.value]
        if missing:
            out.append(
                ctx.finding(
                    "POWER-WG",
                    f"{name} lacks {missing}",
                    path=rel,
                )
            )
    if len(docs) == 2:
        c, s = docs["client.json"], docs["server.json"]
        for key in ("uuid", "session_name"):
            if key in c and key in s and c[key] != s[key]:
                out.append(
                    ctx.finding(
                        "POWER-WG",
                        f"client.json and server.json differ in {key} ({c[key]!r} vs {s[key]!r})",
                        path=f"{pdir}/client.json",
                        case="session",
                    )
                )
    return out
