"""Turn a claim's ``results:`` entries into :class:`ResolvedResult` records.

- ``file:`` -> a peer-tool run (``path#N`` picks run N of a GuideLLM sweep);
- ``row:`` -> that row of ``--table``;
- ``id:`` in the published form (``5.1-0001``) -> the row of ``--table`` with that ID, benchmark and scenario;
- ``submitter:`` + ``system:`` + ``benchmark:`` + ``scenario:`` (no ID: how the v6.1 summary, which has no
  result-ID column, identifies a result) -> the row of ``--table`` with that organisation, system (its system
  name or its system-description name), model (benchmark or model run) and scenario;
- anything else with a ``result:`` -> a number of the claim's own (unverified).

Notes about the lookup (e.g. an ID that is not in the table) come back as findings; input that cannot be resolved
at all (no table for an ID, an ID matching several rows) raises :class:`UnusableInput`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from checker.audit.claim.comparison import variant_note
from checker.audit.claim.figures import quoted_value_finding
from checker.audit.claim.model import Claim, ClaimResultSpec, Origin, ResolvedResult, ServerMetric
from checker.audit.claim.text import mentions
from checker.audit.peers.load import load_peer_runs
from checker.audit.peers.metadata import apply_metadata
from checker.audit.table.checks import RESULT_ID, row_benchmark
from checker.audit.table.model import ResultTable, TableRow
from checker.checks.rule_registry import RuleInfo, register, registered_finding
from checker.findings import Finding, UnusableInput
from rules.models import Round, Scenario

RULES = register(
    __name__,
    RuleInfo(
        "LBL-03",
        "-",
        "claim: a cited result ID that does not resolve to a published row of the table",
        source="claim checklist step 1 (VER-01, LBL-02, LBL-03)",
        fix="cite a published result ID, or label the number unverified",
    ),
)

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


def _system_names(row: TableRow) -> set[str]:
    """The names a row's system goes by, normalised: the system-description name (``Platform``), the published
    system name, and that name without its parenthesised accelerator count ('NVIDIA Vera Rubin NVL72')."""
    names = {row.platform, row.system}
    if row.system and "(" in row.system:
        names.add(re.sub(r"\s*\([^)]*\)", " ", row.system))
    return {n for n in (_norm(x) for x in names if x) if n}


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _identity_matches(row: TableRow, spec: ClaimResultSpec, rnd: Round) -> bool:
    """The row is the result ``spec`` names by organisation, system, model and scenario."""
    if spec.submitter and _norm(row.submitter or "") != _norm(spec.submitter):
        return False
    if spec.system and _norm(spec.system) not in _system_names(row):
        return False
    if spec.benchmark:
        want = rnd.benchmark(spec.benchmark)
        names = {_norm(n) for n in (row.benchmark, row.used_model) if n}
        own = row_benchmark(rnd, row)
        if _norm(spec.benchmark) not in names and not (want is not None and own is not None and want == own):
            return False
    return not spec.scenario or Scenario.parse(spec.scenario) == (
        Scenario.parse(row.scenario) if row.scenario else None
    )


def identity_text(spec: ClaimResultSpec) -> str:
    return " / ".join(p or "?" for p in (spec.submitter, spec.system, spec.benchmark, spec.scenario))


def _version_of_id(result_id: str | None) -> str | None:
    m = RESULT_ID.match(result_id or "")
    return f"{int(m.group(1))}.{int(m.group(2))}" if m else None


def _from_row(index: int, row: TableRow, spec: ClaimResultSpec | None) -> ResolvedResult:
    accelerators = None
    if row.accelerators_per_node is not None:
        accelerators = row.accelerators_per_node * (row.nodes or 1)
    label = (
        row.identity() if not row.id else (" ".join(p for p in (row.id, row.benchmark, row.scenario) if p))
    )
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
                out.results.append(_published(index, rows[0], spec, where, table, out))
                continue
            if spec.result is None:
                raise UnusableInput(
                    f"{where}: {spec.id} {spec.benchmark or ''} {spec.scenario or ''} is not in the table and the "
                    "entry gives no result of its own",
                    table.path,
                )
            out.findings.append(
                registered_finding(
                    rule="LBL-03",
                    message=f"{where}: {spec.id} {spec.benchmark or ''} {spec.scenario or ''} does not resolve to a published "
                    "result of the table: the number is unverified",
                    scope=where,
                    path=table.path,
                )
            )
        elif (
            not spec.id
            and spec.system
            and spec.benchmark
            and spec.scenario
            and not (claim_own or entry_own)
            and (table is not None or spec.result is None)
        ):
            if table is None:
                raise UnusableInput(
                    f"{where}: {identity_text(spec)} is looked up in the table by organisation, system, model and "
                    "scenario; pass --table FILE"
                )
            rows = [r for r in table.rows if _identity_matches(r, spec, rnd)]
            if len(rows) > 1:
                names = "; ".join(r.identity() + (f" ({r.used_model})" if r.used_model else "") for r in rows)
                raise UnusableInput(
                    f"{where}: {identity_text(spec)} matches {len(rows)} rows ({names}); name the system by its "
                    "system-description name (the Platform column) and the model run",
                    table.path,
                )
            if rows:
                out.results.append(_published(index, rows[0], spec, where, table, out))
                continue
            if spec.result is None:
                how = (
                    "organisation, system, model and scenario"
                    if "id" in table.columns
                    else "the table has no result-ID column: its results are identified by organisation, system, "
                    "model and scenario"
                )
                raise UnusableInput(
                    f"{where}: {identity_text(spec)} resolves to no row of the table ({how}); the entry gives no "
                    "result of its own",
                    table.path,
                )
        if spec.result is None:
            raise UnusableInput(f"{where}: no published ID, row, file or result to compare")
        out.results.append(_own(index, spec, claim_own or entry_own, rnd))
    if not out.results:
        raise UnusableInput(
            "the claim names no results (results: ..., result IDs in the text, or, for a table without result "
            "IDs, organisation, system, model and scenario in the text)"
        )
    return out


def _published(
    index: int, row: TableRow, spec: ClaimResultSpec, where: str, table: ResultTable, out: Resolution
) -> ResolvedResult:
    """The published row an entry cites; VER-05 when the entry quotes another number for it."""
    resolved = _from_row(index, row, spec)
    if (
        spec.result is not None
        and row.result is not None
        and abs(spec.result - row.result) > 1e-6 * max(abs(row.result), 1.0)
    ):
        out.findings.append(quoted_value_finding(where, spec.result, resolved.label, row, table.path))
    return resolved


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
    if table is not None and "id" not in table.columns:
        if from_ids:
            raise UnusableInput(
                f"--text cites {', '.join(from_ids)}, but the table has no result-ID column ({table.format.value}; "
                "the v6.1 summary has none): its results are identified by organisation, system, model and "
                "scenario; name them so in the text (e.g. 'NVIDIA VR-NVL72_VR-288GB_aarch64x72_TRT "
                "qwen3-vl-235b-a22b Offline'), or write a claim file whose results name submitter, system, "
                "benchmark and scenario",
                table.path,
            )
        return specs_by_identity(text, table), []
    if not from_ids:
        return [], []
    if table is None:
        raise UnusableInput("the text cites result IDs; pass --table FILE to look them up")
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
                notes.append(variant_note(rid))
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


def specs_by_identity(text: str, table: ResultTable) -> list[ClaimResultSpec]:
    """The rows a ``--text`` claim names by organisation, system, model and scenario (a table without result IDs,
    such as the v6.1 summary): each row whose submitter, system (system-description name, published system name,
    or that name without its parenthesised accelerator count), model (benchmark column or model run) and
    scenario the text all mention. Where the name one row matches overlaps a longer name another row matches
    ('..._TRT' in '..._TRT_open', 'NVIDIA GB300 NVL72' in 'NVIDIA GB300-NVL72_GB300-288GB_aarch64x72_TRT',
    'llama2-70b-99' in 'llama2-70b-99.9'), the longer name is the one named; a name several rows share (a
    published system name used for several system descriptions) is refused as ambiguous."""
    scenarios = {s for s in Scenario if re.search(rf"(?<![A-Za-z]){s.value}(?![A-Za-z])", text, re.I)}
    if not scenarios:
        return []
    flat = _norm(text)
    hits: list[tuple[TableRow, Scenario, str, str]] = []  # row, scenario, system name matched, model matched
    for row in table.rows:
        scen = Scenario.parse(row.scenario) if row.scenario else None
        if scen is None or scen not in scenarios or not row.submitter or not mentions(text, row.submitter):
            continue
        systems = [n for n in _system_names(row) if len(n) >= 4 and n in flat]
        models = [_norm(m) for m in (row.benchmark, row.used_model) if m and mentions(text, m)]
        if systems and models:
            hits.append((row, scen, max(systems, key=len), max(models, key=len)))

    def spans(name: str) -> list[tuple[int, int]]:
        return [(m.start(), m.start() + len(name)) for m in re.finditer(f"(?={re.escape(name)})", flat)]

    def inside(short: str, long: str) -> bool:
        """Every occurrence of ``short`` overlaps one of the longer ``long``."""
        if len(long) <= len(short):
            return False
        outer = spans(long)
        return all(any(a < d and c < b for c, d in outer) for a, b in spans(short))

    kept = [
        (row, scen, system, model)
        for row, scen, system, model in hits
        if not any(
            o_row is not row
            and o_scen is scen
            and (inside(system, o_sys) or (system == o_sys and inside(model, o_model)))
            for o_row, o_scen, o_sys, o_model in hits
        )
    ]
    by_name: dict[tuple[Scenario, str, str], list[TableRow]] = {}
    for row, scen, system, model in kept:
        by_name.setdefault((scen, system, model), []).append(row)
    for rows in by_name.values():
        if len(rows) > 1:
            names = ", ".join(sorted({r.platform or r.system or "?" for r in rows}))
            raise UnusableInput(
                f"--text: {rows[0].identity()} names {len(rows)} rows (systems {names}); name the system by its "
                "system-description name (the Platform column), or write a claim file",
                table.path,
            )
    return [
        ClaimResultSpec(
            submitter=row.submitter,
            system=row.platform or row.system,
            benchmark=row.used_model or row.benchmark,
            scenario=row.scenario,
        )
        for row, _, _, _ in kept
    ]
