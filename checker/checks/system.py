"""System description checks (catalogue B1-B9; B10 is disabled in the official checker, B11/B12 are HEAD-only).

System-level findings carry ``scope`` = the system JSON path; the engine copies ERRORs into every result of that
system (the official checker skips all of them).
"""

from __future__ import annotations

import re
from typing import Any

from checker.checks.context import SYSTEM_TYPE_KEYS, SubmitterContext
from checker.findings import Finding, Severity

OLD = "official checker v5.1.1"


def check_system(sctx: SubmitterContext, system: str) -> list[Finding]:
    sub = sctx.sub
    rules = sctx.round.system
    rel = f"{sub.path}/systems/{system}.json"
    out: list[Finding] = []

    def add(
        rule: str,
        msg: str,
        source: str,
        fix: str,
        *,
        sev: Severity = Severity.ERROR,
        field: str | None = None,
    ) -> None:
        out.append(
            Finding(
                rule=rule,
                severity=sev,
                message=msg,
                scope=rel,
                path=rel,
                line=_line_of_field(sctx, rel, field),
                source=source,
                fix=fix,
            )
        )

    if system not in sub.systems:
        add(
            "SYS-MISSING",
            f"results/{system} has no system description {rel}",
            f"{OLD}: check_results_dir L2426-2433",
            f"add systems/{system}.json describing the system",
        )
        return out
    jr = sctx.files.json(rel)
    if jr.value is None or not isinstance(jr.value, dict):
        if jr.problem is not None:
            out.append(
                jr.problem.finding(
                    "SYS-JSON", scope=rel, source=f"{OLD}: json.load of the system description"
                )
            )
        else:
            add(
                "SYS-JSON",
                "system description is not a JSON object",
                f"{OLD}: json.load",
                "write a JSON object",
            )
        return out
    js: dict[str, Any] = jr.value
    status = str(js.get("status", "")).strip().lower()
    if status not in rules.valid_status:
        add(
            "SYS-STATUS",
            f"status {js.get('status')!r} is not one of {list(rules.valid_status)}",
            f"{OLD}: check_results_dir L2437-2443",
            "set status to available, preview or rdi",
            field="status",
        )
    st = js.get("system_type")
    if not isinstance(st, str) or st.strip().lower() not in rules.valid_system_types:
        add(
            "SYS-TYPE",
            f"system_type {st!r} is not one of {list(rules.valid_system_types)}",
            f"{OLD}: check_results_dir L2444-2456",
            "set system_type to datacenter, edge or datacenter,edge",
            field="system_type",
        )
    # B3 network mode
    is_net_raw = js.get("is_network")
    is_net = str(is_net_raw).strip().lower() == "true" if is_net_raw is not None else False
    if sub.division == "network" and not is_net:
        add(
            "SYS-NETWORK",
            f"network division requires is_network = true (found {is_net_raw!r})",
            f"{OLD}: is_system_over_network L1983",
            'set "is_network": "true"',
        )
    elif sub.division == "closed" and is_net:
        add(
            "SYS-NETWORK",
            "closed division system has is_network = true; network systems belong in the network division",
            f"{OLD}: is_system_over_network L1983",
            "move the submission to network/ or set is_network false",
        )
    # B4 required fields, B5 meaningful, B6 network fields
    required = list(rules.required_fields) + (list(rules.network_fields) if is_net else [])
    missing = [f for f in required if f not in js]
    if missing:
        add(
            "SYS-FIELDS",
            f"missing required field(s): {', '.join(missing)}",
            f"{rules.cite or 'SYSTEM_DESC_REQUIRED_FIELDS'}; {OLD}: check_system_desc_id L2881-2899",
            "add every required field (see the round's system description template)",
        )
    empty = [f for f in rules.meaningful_fields if f in js and not js.get(f)]
    if empty:
        add(
            "SYS-EMPTY-FIELDS",
            f"field(s) that need a meaningful value are empty: {', '.join(empty)}",
            f"SYSTEM_DESC_MEANINGFUL_RESPONSE_REQUIRED_FIELDS; {OLD}: L2903-2915",
            "fill in these fields",
            field=empty[0],
        )
    known = set(rules.required_fields) | set(rules.network_fields) | set(rules.power_fields)
    for f in js:
        if f not in known:
            add(
                "SYS-UNKNOWN-FIELD",
                f"field {f!r} is unknown",
                f"{OLD}: check_system_desc_id L2920-2923 (warning)",
                "remove it or check its spelling",
                sev=Severity.WARNING,
                field=f,
            )
    sub_field = js.get("submitter")
    if str(sub_field).lower() != sub.name.lower():
        add(
            "SYS-SUBMITTER",
            f"submitter {sub_field!r} does not match the submitter directory {sub.name!r}",
            f"{OLD}: check_system_desc_id L2925-2932",
            "make the submitter field equal the directory name",
            field="submitter",
        )
    div_field = js.get("division")
    if div_field != sub.division:
        add(
            "SYS-DIVISION",
            f"division {div_field!r} does not match the division directory {sub.division!r}",
            f"{OLD}: check_system_desc_id L2933-2940 (case-sensitive)",
            "make the division field equal the division directory",
            field="division",
        )
    return out


def _line_of_field(sctx: SubmitterContext, rel: str, field: str | None) -> int | None:
    """1-based line of ``"field"`` as a key in the JSON text (None when not found)."""
    if field is None:
        return None
    text = sctx.files.text(rel).text
    if not text:
        return None
    m = re.search(r'"' + re.escape(field) + r'"\s*:', text)
    return None if m is None else text.count("\n", 0, m.start()) + 1


def system_type_key(js: dict[str, Any] | None) -> str | None:
    st = (js or {}).get("system_type")
    return SYSTEM_TYPE_KEYS.get(str(st).strip().lower()) if st is not None else None
