"""Measurement directory checks (catalogue C1-C6).

Sets ``ctx.computed["weight_data_types"]`` from the measurement JSON (summary CSV column).
"""

from __future__ import annotations

from checker.checks.context import ResultContext
from checker.findings import Finding

OLD = "official checker v5.1.1"


def _measurement_json(ctx: ResultContext, d: str) -> str | None:
    files = ctx.list_files(d)
    want = f"{ctx.rd.system}_{ctx.rd.scenario}.json"
    if want in files:
        return f"{d}/{want}"
    for f in files:
        if f.startswith(ctx.rd.system) and f.endswith(".json"):
            return f"{d}/{f}"
    return None


def check_measurements(ctx: ResultContext) -> list[Finding]:
    out: list[Finding] = []
    d = ctx.rd.measurement_dir
    if not ctx.exists_dir(d):
        out.append(
            ctx.finding(
                "MEAS-DIR",
                f"no measurement directory {d}",
                path=d,
                source=f"{OLD}: check_results_dir L2572-2580",
                fix="add measurements/<system>/<benchmark>/<scenario>/ with user.conf, README.md and <system>.json",
            )
        )
        return out
    files = set(ctx.list_files(d))
    for name in ctx.round.structure.measurement_required_files:
        rel = f"{d}/{name}"
        size = ctx.sctx.sub.files.get(rel)
        if name not in files:
            out.append(
                ctx.finding(
                    "MEAS-FILES",
                    f"{rel} is missing",
                    path=rel,
                    source=f"{OLD}: check_measurement_dir L2991-3000",
                    fix=f"add {name} (the settings / instructions used for this run)",
                )
            )
        elif size == 0:
            out.append(
                ctx.finding(
                    "MEAS-FILES",
                    f"{rel} is empty",
                    path=rel,
                    source=f"{OLD}: check_measurement_dir L2991-3000 (--skip-empty-files-check)",
                    fix=f"fill in {name}",
                )
            )
    if ctx.has_power:
        for stem in ("analyzer_table", "power_settings"):
            found = False
            cur = d
            for _ in range(4):
                for f in ctx.list_files(cur):
                    if f.startswith(stem + ".") and ctx.sctx.sub.files.get(f"{cur}/{f}", 0) > 0:
                        found = True
                if found or "/" not in cur:
                    break
                cur = cur.rsplit("/", 1)[0]
            if not found:
                out.append(
                    ctx.finding(
                        "MEAS-POWER-FILES",
                        f"power result without a non-empty {stem}.* in {d} or its 3 parent directories",
                        path=d,
                        source=f"{OLD}: check_measurement_dir L3002-3040",
                        fix=f"add the power analyzer's {stem} file",
                    )
                )
    mj = _measurement_json(ctx, d)
    if mj is None:
        out.append(
            ctx.finding(
                "MEAS-JSON",
                f"no {ctx.rd.system}_{ctx.rd.scenario}.json or {ctx.rd.system}*.json in {d}",
                path=d,
                source=f"{OLD}: check_measurement_dir L3042-3052",
                fix=f"add {ctx.rd.system}.json describing the implementation (weights, data types, retraining)",
            )
        )
    else:
        jr = ctx.files.json(mj)
        if not isinstance(jr.value, dict):
            if jr.problem is not None:
                out.append(ctx.problem("MEAS-JSON", jr.problem))
            else:
                out.append(ctx.finding("MEAS-JSON", f"{mj} is not a JSON object", path=mj))
        else:
            ctx.computed["weight_data_types"] = jr.value.get("weight_data_types")
            empty = [f for f in ctx.round.structure.measurement_json_fields if not jr.value.get(f)]
            if empty:
                out.append(
                    ctx.finding(
                        "MEAS-JSON-FIELDS",
                        f"{mj}: missing or empty field(s) {', '.join(empty)}",
                        path=mj,
                        source=f"SYSTEM_IMP_REQUIRED_FILES; {OLD}: check_measurement_dir L3054-3066",
                        fix="fill in every implementation field",
                    )
                )
    # C6 code directory
    sub = ctx.sctx.sub.path
    code = ctx.round.structure.code_dir
    bm_code = f"{sub}/{code}/{ctx.rd.benchmark}"
    if not (ctx.exists_dir(bm_code) or ctx.exists_file(bm_code)):
        out.append(
            ctx.finding(
                "MEAS-CODE",
                f"no {code}/{ctx.rd.benchmark} for this benchmark",
                path=f"{sub}/{code}",
                source=f"{OLD}: check_measurement_dir L3068-3080",
                fix=f"add the implementation under {code}/{ctx.rd.benchmark}/",
            )
        )
    return out
