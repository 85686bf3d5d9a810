"""System description checks (catalogue B1-B9; B10 is disabled in the official checker, B11/B12 are HEAD-only).

SYS-FIELD-TYPE (beyond the catalogue): values the official checkers crash on, or misread, while writing the summary
CSV (a non-string concatenated as a string, int() of a count, a double quote in a quoted column).

System-level findings carry ``scope`` = the system JSON path; the engine copies ERRORs into every result of that
system (the official checker skips all of them). The checks read the parsed record
(:class:`checker.parsers.system_desc.SystemDesc`): its typed fields, and its raw mapping for the schema (which fields
are there, the exact value a message quotes, the JSON types the official checkers trip over).
"""

from __future__ import annotations

from checker.checks.context import SubmitterContext
from checker.checks.rule_registry import OLD, WARN, Case, RuleInfo, register, registered_finding
from checker.findings import Finding, Severity
from checker.parsers.system_desc import NOT_AN_OBJECT, SystemDesc
from rules.models import SystemDescriptionRules

HEAD = "HEAD checker"

# the rules this module emits (the registry: checker/checks/rule_registry.py)
RULES = register(
    __name__,
    RuleInfo(
        "SYS-MISSING",
        "A14",
        "result system without systems/<system>.json",
        source=f"{OLD}: check_results_dir L2426-2433",
    ),
    RuleInfo(
        "SYS-JSON",
        "B",
        "system description unreadable or not a JSON object",
        source=f"{OLD}: json.load",
        fix="write a JSON object",
        cases={"unreadable": Case(source=f"{OLD}: json.load of the system description")},
    ),
    RuleInfo(
        "SYS-STATUS",
        "B1",
        "status not available/preview/rdi",
        source=f"{OLD}: check_results_dir L2445-2451; {HEAD} system_check.py:89-95",
        fix="set status to available, preview or rdi",
        cases={
            "not-a-string": Case(
                source=f"{OLD}: check_results_dir L2445 (system_json.get('status').lower()); {HEAD} system_check.py:89",
                fix='write status as a string: "available", "preview" or "rdi"',
            )
        },
    ),
    RuleInfo(
        "SYS-TYPE",
        "B2",
        "invalid system_type",
        source=f"{OLD}: check_results_dir L2452-2463; {HEAD} system_check.py:106-110, loader.py:301,336-338 -> "
        "configuration.py:62-75 (set_type)",
        fix="set system_type to datacenter, edge or datacenter,edge (lower case, no spaces)",
    ),
    RuleInfo(
        "SYS-NETWORK",
        "B3",
        "is_network does not match the division",
        source=f"{OLD}: is_system_over_network L1983",
        fix='set "is_network": "true"',
        cases={
            "not-a-string": Case(
                source=f"{OLD}: is_system_over_network L1991-1995; {HEAD} system_check.py:131-136, "
                "performance_check.py:405-410",
                fix='write it as a string, "true" or "false" (or leave it out for a system that is not over the '
                "network)",
            ),
            "closed": Case(
                source=f"{OLD}: is_system_over_network L1983",
                fix="move the submission to network/ or set is_network false",
            ),
        },
    ),
    RuleInfo(
        "SYS-FIELDS",
        "B4/B6",
        "required field missing",
        fix="add every required field (see the round's system description template)",
        cases={
            "network-fields": Case(
                source=f"{HEAD} system_check.py:159-161 (if is_network: required_fields += ..._NETWORK_MODE)",
                fix="leave is_network out for a system that is not over the network",
            )
        },
    ),
    RuleInfo(
        "SYS-EMPTY-FIELDS",
        "B5",
        "field that needs a value is empty",
        source=f"SYSTEM_DESC_MEANINGFUL_RESPONSE_REQUIRED_FIELDS; {OLD}: L2903-2915; {HEAD} system_check.py:169-177",
        fix="fill in these fields",
    ),
    RuleInfo(
        "SYS-UNKNOWN-FIELD",
        "B7",
        "unknown field",
        WARN,
        source=f"{OLD}: check_system_desc_id L2920-2923 (warning)",
        fix="remove it or check its spelling",
    ),
    RuleInfo(
        "SYS-PLACEHOLDER",
        "-",
        "placeholder value (TBD, TODO, N/A) in a required field",
        WARN,
        beyond=True,
        fix="write the actual value (or a real 'none' where the field does not apply)",
    ),
    RuleInfo(
        "SYS-TRIAL-VALUE",
        "-",
        "a field still holds the value `init system --trial` writes (a trial's description, not a system's)",
        beyond=True,
        trial=True,
        source="MLPerf_Audit_Guidelines.adoc:56 (inference_policies@ac93e89): the system is checked against what its "
        "system JSON documents; a 'TRIAL:' value documents nothing (the official checkers accept any non-empty text)",
        fix="describe the system: replace each 'TRIAL:' value (`inference-audit init check FILE --submission` "
        "lists what a submission still lacks)",
    ),
    RuleInfo(
        "SYS-SUBMITTER",
        "B8",
        "submitter field differs from the directory",
        source=f"{OLD}: check_system_desc_id L2925-2932; {HEAD} system_check.py:197",
        fix="make the submitter field equal the directory name",
    ),
    RuleInfo(
        "SYS-DIVISION",
        "B9",
        "division field differs from the directory",
        source=f"{OLD}: check_system_desc_id L2933-2940 (case-sensitive); {HEAD} system_check.py:216",
        fix="make the division field equal the division directory",
    ),
    RuleInfo(
        "SYS-FIELD-TYPE",
        "-",
        "value the official checkers crash on or misread while writing the summary CSV",
        official="v5.1.1/HEAD raise TypeError/ValueError and stop the run",
        beyond=True,
        fix="use single quotes",  # a double quote in a quoted column; the other cases name the field to rewrite
        cases={
            "not-whole": Case(
                source=f"{HEAD} results.py:104-105 (ResultExporter.add_result, not inside a check: no try)"
            ),
            "notes-not-string": Case(
                source=f"{OLD}: log_result L2099-2102, L2184/L2218; {HEAD} results.py:110-113"
            ),
            "notes-quote": Case(
                source=f"{OLD}: log_result L2184/L2218; {HEAD} results.py:148 (export_row)",
                fix="use single quotes",
            ),
            "bare-count": Case(
                source=f"{OLD}: log_result L2175-2178/L2209-2212",
                fix="write the count without commas, quotes or line breaks",
            ),
            "power-only": Case(
                source=f"{OLD}: get_boolean L1323-1335, called from log_result L2160",
                fix='write it as "true"/"false" or a JSON boolean',
            ),
        },
    ),
)

# what `inference-audit init system|implementation --trial` writes for what a trial leaves undescribed: a trial tree
# holds it (the official checkers accept any non-empty text), a submission must not (SYS-/MEAS-TRIAL-VALUE)
TRIAL_PREFIX = "TRIAL:"

# values that stand for "not filled in yet" (compared upper-case, without surrounding spaces and dots)
PLACEHOLDER_VALUES = frozenset(
    {"TBD", "TBC", "TODO", "XXX", "FIXME", "PLACEHOLDER"}
)  # not N/A: real systems use it for "not applicable"

# fields both official checkers concatenate into the summary CSV as strings ('"' + value + '"'), where a
# non-string raises TypeError (v5.1.1 log_result, no try: the whole run stops) and a double quote breaks the row
_CSV_TEXT_FIELDS = (
    ("system_name", "log_result L2168/L2202 (value from L2828)"),
    ("host_processor_model_name", "log_result L2176/L2210"),
    ("accelerator_model_name", "log_result L2179/L2213"),
    ("framework", "log_result L2182/L2216"),
    ("operating_system", "log_result L2183/L2217"),
)
# counts v5.1.1 writes into the summary CSV unquoted (log_result L2175-2178 / L2209-2212)
_CSV_BARE_FIELDS = ("number_of_nodes", "host_processors_per_node", "host_processor_core_count")


def check_system(sctx: SubmitterContext, system: str) -> list[Finding]:
    sub = sctx.sub
    rules = sctx.round.system
    rel = sctx.round.structure.layout.system_file_of(sub.division, sub.name, system)
    out: list[Finding] = []
    if system not in sub.systems:
        msg = f"results/{system} has no system description {rel}"
        out.append(
            registered_finding(
                "SYS-MISSING",
                msg,
                scope=rel,
                path=rel,
                fix=f"add systems/{system}.json describing the system",
            )
        )
        return out
    read = sctx.system_read(system)
    if read.desc is None:
        problem = read.problem
        if problem is None or problem.kind == NOT_AN_OBJECT:
            out.append(
                registered_finding("SYS-JSON", "system description is not a JSON object", scope=rel, path=rel)
            )
        else:
            out.append(problem.finding("SYS-JSON", scope=rel, case="unreadable"))
        return out
    d = read.desc
    out += _status_and_type_findings(d, rules, rel)
    out += _network_findings(d, sub.division, rel)
    out += _field_findings(d, rules, rel, head_round=sctx.round.official_checker == "HEAD")
    out += _field_type_findings(d, rules.summary_int_fields, rel)
    out += _unknown_field_findings(d, rules, rel)
    out += _identity_findings(d, sub.division, sub.name, rel)
    out += _trial_value_findings(d, rel)
    return out


def _trial_value_findings(d: SystemDesc, rel: str) -> list[Finding]:
    """The fields a trial left as `init system --trial` wrote them (one finding, at the first)."""
    trial = [f for f, v in d.raw.items() if isinstance(v, str) and v.startswith(TRIAL_PREFIX)]
    if not trial:
        return []
    return [
        registered_finding(
            "SYS-TRIAL-VALUE",
            f"{len(trial)} field(s) hold a trial's value ({TRIAL_PREFIX} ...), not a description: "
            + ", ".join(repr(f) for f in trial[:8])  # repr: a key is the input's text (an escape stays visible)
            + (f" and {len(trial) - 8} more" if len(trial) > 8 else ""),
            scope=rel,
            path=rel,
            line=d.line_of(trial[0]),
        )
    ]


def _status_and_type_findings(d: SystemDesc, rules: SystemDescriptionRules, rel: str) -> list[Finding]:
    """B1 status, B2 system_type."""
    out: list[Finding] = []
    js = d.raw  # the schema: which fields are there, the values messages quote
    raw_status = js.get("status")
    if d.status is None:
        msg = (
            f"status {raw_status!r} is not a string: the official checkers call .lower() on it "
            "(v5.1.1 stops the whole run with AttributeError; HEAD fails the result)"
        )
        out.append(
            registered_finding(
                "SYS-STATUS", msg, scope=rel, path=rel, line=d.line_of("status"), case="not-a-string"
            )
        )
    elif d.availability not in rules.valid_status:
        msg = f"status {raw_status!r} is not one of {list(rules.valid_status)} (any case, no surrounding spaces)"
        out.append(registered_finding("SYS-STATUS", msg, scope=rel, path=rel, line=d.line_of("status")))
    st = d.system_type
    if st is None or st not in rules.valid_system_types:
        near = st is not None and st.strip().lower().replace(" ", "") in rules.valid_system_types
        msg = (
            f"system_type {js.get('system_type')!r} is not one of {list(rules.valid_system_types)}"
            + (" (both official checkers compare it exactly: case and spaces count)" if near else "")
            + "; in closed/network HEAD's loader raises ValueError('invalid system type') and stops the whole run"
        )
        out.append(registered_finding("SYS-TYPE", msg, scope=rel, path=rel, line=d.line_of("system_type")))
    return out


def _network_findings(d: SystemDesc, division: str, rel: str) -> list[Finding]:
    """B3: is_network is a string, and true exactly in the network division."""
    out: list[Finding] = []
    js = d.raw
    is_net_raw = js.get("is_network")
    if is_net_raw is not None and not isinstance(is_net_raw, str):
        msg = (
            f"is_network {is_net_raw!r} is not a string: the official checkers call .lower() on it "
            "(v5.1.1 stops the whole run with AttributeError; HEAD fails the result)"
        )
        line = d.line_of("is_network")
        out.append(
            registered_finding("SYS-NETWORK", msg, scope=rel, path=rel, line=line, case="not-a-string")
        )
    # as the official checkers read it (.lower() == "true", no strip); a non-string is reported above
    is_net = d.is_network is True
    if division == "network" and not is_net:
        msg = f"network division requires is_network = true (found {is_net_raw!r})"
        out.append(registered_finding("SYS-NETWORK", msg, scope=rel, path=rel))
    elif division == "closed" and is_net:
        msg = "closed division system has is_network = true; network systems belong in the network division"
        out.append(registered_finding("SYS-NETWORK", msg, scope=rel, path=rel, case="closed"))
    return out


def _field_findings(
    d: SystemDesc, rules: SystemDescriptionRules, rel: str, *, head_round: bool
) -> list[Finding]:
    """B4 required fields, B5 meaningful values, B6 network fields (``head_round``: the round's checker is HEAD's),
    and placeholders in required fields."""
    out: list[Finding] = []
    js = d.raw
    is_net_raw = js.get("is_network")
    is_net = d.is_network is True
    required = list(rules.required_fields) + (list(rules.network_fields) if is_net else [])
    missing = [f for f in required if f not in js]
    if missing:
        source = f"{rules.cite or 'SYSTEM_DESC_REQUIRED_FIELDS'}; {OLD}: check_system_desc_id L2881-2899"
        msg = f"missing required field(s): {', '.join(missing)}"
        out.append(registered_finding("SYS-FIELDS", msg, scope=rel, path=rel, source=source))
    elif is_net_raw and not is_net:
        # HEAD tests `if is_network:` (truthiness), so "false" (a non-empty string) still asks for the 13 fields
        net_missing = [f for f in rules.network_fields if f not in js]
        if net_missing:
            msg = (
                f"is_network is {is_net_raw!r} but the HEAD checker requires the network-mode fields whenever "
                f"is_network is a non-empty value; missing: {', '.join(net_missing)}"
                + ("" if head_round else " (v5.1.1 does not ask for them)")
            )
            out.append(
                registered_finding(
                    "SYS-FIELDS",
                    msg,
                    severity=Severity.ERROR if head_round else Severity.WARNING,
                    scope=rel,
                    path=rel,
                    line=d.line_of("is_network"),
                    case="network-fields",
                )
            )
    empty = [f for f in rules.meaningful_fields if d.given(f) and not d.filled(f)]
    if empty:
        zero = [f for f in empty if js.get(f) == 0 and not isinstance(js.get(f), bool)]
        msg = f"field(s) that need a meaningful value are empty: {', '.join(empty)}" + (
            f' (the number 0 counts as empty: `not 0` is true; write the string "0" in {", ".join(zero)})'
            if zero
            else ""
        )
        out.append(registered_finding("SYS-EMPTY-FIELDS", msg, scope=rel, path=rel, line=d.line_of(empty[0])))
    placeholders = [
        f for f in required if (d.text_of(f) or "").strip().strip(".").upper() in PLACEHOLDER_VALUES
    ]
    if placeholders:
        shown = ", ".join(f"{f} = {js[f]!r}" for f in placeholders)
        out.append(
            registered_finding(
                "SYS-PLACEHOLDER",
                f"required field(s) hold a placeholder, not a description: {shown}. The official checkers "
                "accept any non-empty value",
                scope=rel,
                path=rel,
                line=d.line_of(placeholders[0]),
                source="inference_rules.adoc 'System description': every required field describes the system "
                f"({rules.cite or 'SYSTEM_DESC_REQUIRED_FIELDS'})",
            )
        )
    return out


def _unknown_field_findings(d: SystemDesc, rules: SystemDescriptionRules, rel: str) -> list[Finding]:
    """B7: fields no rule of the round knows (a warning)."""
    out: list[Finding] = []
    known = set(rules.required_fields) | set(rules.network_fields) | set(rules.power_fields)
    for f in d.raw:
        if f not in known:
            out.append(
                registered_finding(
                    "SYS-UNKNOWN-FIELD", f"field {f!r} is unknown", scope=rel, path=rel, line=d.line_of(f)
                )
            )
    return out


def _identity_findings(d: SystemDesc, division: str, submitter: str, rel: str) -> list[Finding]:
    """B8 submitter, B9 division: as the directories name them."""
    out: list[Finding] = []
    js = d.raw
    if d.submitter is None or d.submitter.lower() != submitter.lower():
        msg = f"submitter {js.get('submitter')!r} does not match the submitter directory {submitter!r}" + (
            ""
            if d.submitter is not None
            else " and is not a string (v5.1.1 .lower() stops the whole run; HEAD fails the result)"
        )
        out.append(registered_finding("SYS-SUBMITTER", msg, scope=rel, path=rel, line=d.line_of("submitter")))
    if d.division != division:
        msg = f"division {js.get('division')!r} does not match the division directory {division!r}" + (
            "" if d.division is not None else " and is not a string (HEAD .lower() fails the result)"
        )
        out.append(registered_finding("SYS-DIVISION", msg, scope=rel, path=rel, line=d.line_of("division")))
    return out


def _field_type_findings(d: SystemDesc, int_fields: tuple[str, ...], rel: str) -> list[Finding]:
    """SYS-FIELD-TYPE: values the official checkers crash on (or silently misread) while writing the summary.

    ``int_fields``: the counts an official checker of the round converts with int() (the round's
    ``system.summary_int_fields``; none for v4.1, which no HEAD checker version covers). A value that only
    breaks the CSV row (a quote, a comma) is a warning; one that stops the official run, an error."""
    return (
        _count_findings(d, int_fields, rel)
        + _text_field_findings(d, rel)
        + _notes_findings(d, rel)
        + _bare_field_findings(d, rel)
    )


def _count_findings(d: SystemDesc, int_fields: tuple[str, ...], rel: str) -> list[Finding]:
    """The counts HEAD multiplies with int() for total_accelerators are whole numbers."""
    js = d.raw
    out: list[Finding] = []
    counts = {"number_of_nodes": d.number_of_nodes, "accelerators_per_node": d.accelerators_per_node}
    for f, count in ((f, counts[f]) for f in int_fields if f in counts):
        v = js.get(f)
        if v and count is None:  # not a whole number; an empty one is SYS-EMPTY-FIELDS
            msg = (
                f"{f} {v!r} is not a whole number: HEAD computes int(number_of_nodes) * int(accelerators_per_node) "
                "for the summary CSV's total_accelerators"
                + (" and truncates it" if isinstance(v, float) else ", which raises and stops the whole run")
            )
            fix = f'write {f} as a whole number, e.g. 8 or "8"'
            out.append(
                registered_finding(
                    "SYS-FIELD-TYPE", msg, scope=rel, path=rel, line=d.line_of(f), fix=fix, case="not-whole"
                )
            )
    return out


def _text_field_findings(d: SystemDesc, rel: str) -> list[Finding]:
    """The text columns both official checkers concatenate are strings without a double quote."""
    js = d.raw
    out: list[Finding] = []
    warn = Severity.WARNING
    for f, where in _CSV_TEXT_FIELDS:
        text = d.text_of(f)
        if d.given(f) and text is None:
            msg = (
                f"{f} {js[f]!r} is not a string: v5.1.1 concatenates it into the summary CSV ('\"' + value + '\"'), "
                "a TypeError that stops the whole run"
            )
            out.append(
                registered_finding(
                    "SYS-FIELD-TYPE",
                    msg,
                    scope=rel,
                    path=rel,
                    line=d.line_of(f),
                    source=f"{OLD}: {where}",
                    fix=f"write {f} as text",
                )
            )
        elif text is not None and '"' in text:
            msg = (
                f"{f} contains a double quote: both official checkers write it between double quotes without "
                "escaping, which breaks the summary CSV row"
            )
            source = f"{OLD}: {where}; {HEAD} results.py:148 (export_row)"
            out.append(
                registered_finding(
                    "SYS-FIELD-TYPE",
                    msg,
                    severity=warn,
                    scope=rel,
                    path=rel,
                    line=d.line_of(f),
                    source=source,
                )
            )
    return out


def _notes_findings(d: SystemDesc, rel: str) -> list[Finding]:
    """hw_notes and sw_notes are strings (joined with +) without a double quote."""
    js = d.raw
    out: list[Finding] = []
    warn = Severity.WARNING
    # notes = hw_notes (default "") + ". " + sw_notes when sw_notes is filled: a non-string joined with + fails
    sw_bad = d.filled("sw_notes") and d.sw_notes is None
    hw_bad = d.given("hw_notes") and d.hw_notes is None
    bad_notes = [f for f, bad in (("hw_notes", hw_bad), ("sw_notes", sw_bad)) if bad]
    if hw_bad and d.filled("sw_notes") and not d.filled("hw_notes"):
        bad_notes.remove("hw_notes")  # an empty hw_notes is dropped before the join
    for f in bad_notes:
        msg = (
            f"{f} {js[f]!r} is not a string: both official checkers join hw_notes and sw_notes into the notes column "
            "with +, a TypeError that stops the whole run"
        )
        out.append(
            registered_finding(
                "SYS-FIELD-TYPE",
                msg,
                scope=rel,
                path=rel,
                line=d.line_of(f),
                fix=f"write {f} as text",
                case="notes-not-string",
            )
        )
    for f, notes in (("hw_notes", d.hw_notes), ("sw_notes", d.sw_notes)):
        if notes is not None and '"' in notes:
            msg = (
                f"{f} contains a double quote, which breaks the official summary CSV row (written between double "
                "quotes without escaping)"
            )
            out.append(
                registered_finding(
                    "SYS-FIELD-TYPE",
                    msg,
                    severity=warn,
                    scope=rel,
                    path=rel,
                    line=d.line_of(f),
                    case="notes-quote",
                )
            )
    return out


def _bare_field_findings(d: SystemDesc, rel: str) -> list[Finding]:
    """The counts v5.1.1 writes unquoted hold no comma, quote or line break; system_power_only is a bool, string or
    integer."""
    js = d.raw
    out: list[Finding] = []
    warn = Severity.WARNING
    for f in _CSV_BARE_FIELDS:
        v = d.text_of(f)  # the count as written: the CSV carries the text, not the number
        if v is not None and any(c in v for c in ',"\n\r'):
            msg = (
                f"{f} {v!r} holds a comma, quote or line break: v5.1.1 writes it into the summary CSV unquoted, "
                "which shifts the row's columns"
            )
            out.append(
                registered_finding(
                    "SYS-FIELD-TYPE",
                    msg,
                    severity=warn,
                    scope=rel,
                    path=rel,
                    line=d.line_of(f),
                    case="bare-count",
                )
            )
    spo = js.get("system_power_only")
    if spo is not None and d.system_power_only is None:  # not a bool, string or integer
        msg = (
            f"system_power_only {spo!r} is not a bool, string or integer: for a power result v5.1.1 raises "
            "TypeError in get_boolean and stops the whole run"
        )
        line = d.line_of("system_power_only")
        out.append(
            registered_finding(
                "SYS-FIELD-TYPE", msg, severity=warn, scope=rel, path=rel, line=line, case="power-only"
            )
        )
    return out
