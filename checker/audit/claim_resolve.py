"""Turn a claim's ``results:`` entries into :class:`ResolvedResult` records.

- ``file:`` -> a peer-tool run (``path#N`` picks run N of a GuideLLM sweep);
- ``row:`` -> that row of ``--table``;
- ``id:`` in the published form (``5.1-0001``) -> the row of ``--table`` with that ID, benchmark and scenario;
- anything else with a ``result:`` -> a number of the claim's own (unverified).

Notes about the lookup (e.g. an ID that is not in the table) come back as findings; input that cannot be resolved
at all (no table for an ID, an ID matching several rows) raises :class:`UnusableInput`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from checker.audit.claim_model import Claim, ClaimResultSpec, Origin, ResolvedResult, ServerMetric
from checker.audit.peer_parse import apply_metadata, load_peer_runs
from checker.audit.table_checks import RESULT_ID
from checker.audit.table_model import ResultTable, TableRow
from checker.findings import Finding, Severity, UnusableInput
from rules.models import Round, Scenario

OWN_SOURCES = ("own", "own measurement", "self", "self-measured", "unverified")
MLPERF_HARNESSES = ("mlperf-loadgen", "loadgen", "mlperf", "mlperf loadgen", "inference-audit")


@dataclass
class Resolution:
    results: list[ResolvedResult] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


def _bench_family(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", re.sub(r"-99(\.9)?$", "", name.lower()))


def _row_matches(row: TableRow, spec: ClaimResultSpec, rnd: Round) -> bool:
    if spec.benchmark:
        want = rnd.benchmark(spec.benchmark)
        want_name = want.name if want else spec.benchmark
        if (row.benchmark or "").lower() != want_name.lower() and (
            row.used_model or ""
        ).lower() != spec.benchmark.lower():
            return False
    return not spec.scenario or Scenario.parse(spec.scenario) == (
        Scenario.parse(row.scenario) if row.scenario else None
    )


def _version_of_id(result_id: str | None) -> str | None:
    m = RESULT_ID.match(result_id or "")
    return f"{int(m.group(1))}.{int(m.group(2))}" if m else None


def _from_row(index: int, row: TableRow, spec: ClaimResultSpec | None) -> ResolvedResult:
    accelerators = None
    if row.accelerators_per_node is not None:
        accelerators = row.accelerators_per_node * (row.nodes or 1)
    label = row.identity() if not row.id else (" ".join(p for p in (row.id, row.benchmark, row.scenario) if p))
    return ResolvedResult(
        index=index,
        label=label,
        origin=Origin.TABLE,
        verified=True,
        mlperf=True,
        id=row.id,
        benchmark=row.benchmark,
        scenario=Scenario.parse(row.scenario) if row.scenario else None,
        version=(row.version or "").lower().lstrip("v") or _version_of_id(row.id),
        division=(row.division or "").lower() or None,
        availability=(row.availability or "").lower() or None,
        suite=row.suite,
        submitter=row.submitter,
        system=row.system,
        result=row.result,
        units=row.units,
        accelerators=accelerators,
        has_power=row.has_power,
        power_watts=row.power_result if row.power_units == "Watts" else None,
        power_basis="mlperf-power" if row.has_power else None,
        server_metric=ServerMetric.COMPLETED
        if row.scenario and Scenario.parse(row.scenario) in (Scenario.SERVER, Scenario.INTERACTIVE)
        else None,
        row=row,
        metadata={k: str(v) for k, v in (spec.metadata.items() if spec else ())},
    )


def resolve(claim: Claim, claim_path: Path | None, table: ResultTable | None, rnd: Round) -> Resolution:
    out = Resolution()
    base_dir = claim_path.parent if claim_path is not None else Path(".")
    claim_own = (claim.source or "").strip().lower() in OWN_SOURCES
    for index, spec in enumerate(claim.results, start=1):
        where = f"results[{index}]"
        if spec.file:
            out.results.append(_peer(index, spec, base_dir))
            continue
        if spec.row is not None:
            if table is None:
                raise UnusableInput(f"{where}: row {spec.row} needs --table")
            if spec.row > len(table.rows):
                raise UnusableInput(
                    f"{where}: row {spec.row} is beyond the table's {len(table.rows)} rows", table.path
                )
            out.results.append(_from_row(index, table.rows[spec.row - 1], spec))
            continue
        entry_own = (spec.source or "").strip().lower() in OWN_SOURCES
        if spec.id and RESULT_ID.match(spec.id) and not entry_own:
            if table is None:
                raise UnusableInput(f"{where}: result {spec.id} is looked up in the table; pass --table FILE")
            rows = [r for r in table.rows if r.id == spec.id and _row_matches(r, spec, rnd)]
            if len(rows) > 1:
                names = ", ".join(f"{r.benchmark} {r.scenario}" for r in rows)
                raise UnusableInput(
                    f"{where}: {spec.id} matches {len(rows)} rows ({names}); give benchmark and scenario",
                    table.path,
                )
            if rows:
                resolved = _from_row(index, rows[0], spec)
                if (
                    spec.result is not None
                    and rows[0].result is not None
                    and abs(spec.result - rows[0].result) > 1e-6 * max(abs(rows[0].result), 1.0)
                ):
                    out.findings.append(
                        Finding(
                            rule="VER-05",
                            severity=Severity.ERROR,
                            message=f"{where}: the claim quotes {spec.result:g} for {resolved.label}; the table says "
                            f"{rows[0].result_text} {rows[0].units or ''}".rstrip(),
                            scope=where,
                            path=table.path,
                            line=rows[0].line,
                            source="MSG:171 (VER-05)",
                            fix=f"quote the published value {rows[0].result_text}",
                        )
                    )
                out.results.append(resolved)
                continue
            if spec.result is None:
                raise UnusableInput(
                    f"{where}: {spec.id} {spec.benchmark or ''} {spec.scenario or ''} is not in the table and the "
                    "entry gives no result of its own",
                    table.path,
                )
            out.findings.append(
                Finding(
                    rule="LBL-03",
                    severity=Severity.ERROR,
                    message=f"{where}: {spec.id} {spec.benchmark or ''} {spec.scenario or ''} does not resolve to a published "
                    "result of the table: the number is unverified",
                    scope=where,
                    path=table.path,
                    source="claim checklist step 1 (VER-01, LBL-02, LBL-03)",
                    fix="cite a published result ID, or label the number unverified",
                )
            )
        if spec.result is None:
            raise UnusableInput(f"{where}: no published ID, row, file or result to compare")
        out.results.append(_own(index, spec, claim_own or entry_own, rnd))
    if not out.results:
        raise UnusableInput("the claim names no results (results: ... or result IDs in the text)")
    return out


def _own(index: int, spec: ClaimResultSpec, own: bool, rnd: Round) -> ResolvedResult:
    harness = (spec.harness or "").strip().lower()
    mlperf = bool(spec.benchmark) and (not harness or harness in MLPERF_HARNESSES)
    scenario = Scenario.parse(spec.scenario) if spec.scenario else None
    label = " ".join(p for p in (spec.id or "own", spec.benchmark, spec.scenario) if p)
    return ResolvedResult(
        index=index,
        label=label,
        origin=Origin.GIVEN,
        verified=False,
        mlperf=mlperf,
        id=spec.id,
        benchmark=spec.benchmark,
        scenario=scenario,
        version=(spec.version or "").lower().lstrip("v") or rnd.version,
        division=(spec.division or "").lower() or None,
        availability=(spec.availability or "").lower() or None,
        suite=spec.suite,
        submitter=spec.submitter,
        system=spec.system,
        result=spec.result,
        units=spec.units,
        accelerators=spec.accelerators,
        has_power=None,
        power_watts=spec.power_watts,
        power_basis=(spec.power_basis or "").lower() or None,
        server_metric=spec.server_metric,
        metadata={k: str(v) for k, v in spec.metadata.items()},
    )


def _peer(index: int, spec: ClaimResultSpec, base_dir: Path) -> ResolvedResult:
    assert spec.file is not None
    name, _, pick = spec.file.partition("#")
    path = Path(os.path.normpath(name if Path(name).is_absolute() else base_dir / name))
    runs = load_peer_runs(path)
    if pick:
        if not pick.isdigit() or int(pick) >= len(runs):
            raise UnusableInput(
                f"results[{index}]: '#{pick}' is not a run of this file (0..{len(runs) - 1})", str(path)
            )
        run = runs[int(pick)]
    else:
        run = runs[0]
    run = apply_metadata(run, spec.metadata)
    return ResolvedResult(
        index=index,
        label=run.label,
        origin=Origin.PEER,
        verified=False,
        mlperf=False,
        id=spec.id,
        benchmark=spec.benchmark,
        scenario=Scenario.parse(spec.scenario) if spec.scenario else None,
        result=spec.result if spec.result is not None else run.output_throughput_tps,
        units=spec.units or ("Tokens/s" if run.output_throughput_tps is not None else None),
        accelerators=spec.accelerators,
        system=spec.system,
        submitter=spec.submitter,
        peer=run,
        metadata={k: str(v) for k, v in spec.metadata.items()},
    )


def specs_from_text(
    text: str, table: ResultTable | None, rnd: Round
) -> tuple[list[ClaimResultSpec], list[Finding]]:
    """Result entries for a bare ``--text`` claim: its result IDs, narrowed by the benchmark and scenario it names."""
    from_ids = list(dict.fromkeys(re.findall(r"(?<![\d.])(\d+\.\d+-\d{4})(?!\d)", text)))
    if not from_ids:
        return [], []
    if table is None:
        raise UnusableInput("the text cites result IDs; pass --table FILE to look them up")
    if "id" not in table.columns:
        raise UnusableInput(
            f"--text cites {', '.join(from_ids)}, but the table has no result-ID column ({table.format.value}; "
            "the v6.1 summary has none): its results are identified by organisation, system, model and scenario; "
            "write a claim file whose results name submitter, system, benchmark and scenario",
            table.path,
        )
    norm = re.sub(r"[^a-z0-9.]", "", text.lower())
    scenarios = [s for s in Scenario if re.search(rf"\b{s.value}\b", text, re.I)]
    specs: list[ClaimResultSpec] = []
    notes: list[Finding] = []
    for rid in from_ids:
        rows = [r for r in table.rows if r.id == rid]
        if len(scenarios) == 1:
            rows = [r for r in rows if r.scenario and Scenario.parse(r.scenario) is scenarios[0]]
        named = [r for r in rows if r.benchmark and _bench_family(r.benchmark) in norm.replace(".", "")]
        rows = named or rows
        if len(rows) > 1 and "99.9" not in text:
            plain = [r for r in rows if not (r.benchmark or "").endswith("99.9")]
            if plain and len(plain) < len(rows):
                notes.append(
                    Finding(
                        rule="CMP-01",
                        severity=Severity.INFO,
                        scope="text",
                        message=f"{rid}: the text does not say 99.9; took the 99% accuracy variant",
                    )
                )
                rows = plain
        if len(rows) != 1:
            names = ", ".join(f"{r.benchmark} {r.scenario}" for r in rows) or "no row"
            raise UnusableInput(
                f"--text: {rid} resolves to {names}; name one benchmark and scenario in the text, "
                "or write a claim file",
                table.path,
            )
        specs.append(ClaimResultSpec(id=rid, benchmark=rows[0].benchmark, scenario=rows[0].scenario))
    return specs, notes
