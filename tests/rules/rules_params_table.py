"""Parse shared/reference/official-checker-v5.1-parameters.md (the v5.1.1 checker's MODEL_CONFIG)."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ParamRow:
    benchmark: str
    lower: dict[str, str]  # metric -> "%g" string
    upper: dict[str, str]
    performance_sample_count: int
    dataset_size: int
    offline_min_spq: int | None  # None where the checker raises KeyError
    server_latency_ns: int | None
    ttft_tpot_ns: dict[str, tuple[str, str]]  # scenario -> ("%g" ttft, "%g" tpot)
    equal_issue: bool
    token_latencies: bool
    compliance: tuple[str, ...]
    required: dict[str, tuple[str, ...]]  # datacenter / edge / datacenter+edge
    optional_dc: tuple[str, ...]
    result_overrides: dict[str, str]
    min_query_count: dict[str, int]


def _bounds(cell: str, sep: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in cell.split(","))):
        metric, value = part.split(sep)
        out[metric] = value
    return out


def _scen(cell: str) -> tuple[str, ...]:
    cell = cell.strip()
    return () if cell in ("-", "") else tuple(cell.split("/"))


def parse(path: Path) -> dict[str, ParamRow]:
    rows: dict[str, ParamRow] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("| ") or line.startswith("| benchmark"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 15:
            raise ValueError(f"{path}: unexpected row {line!r}")
        ttft: dict[str, tuple[str, str]] = {}
        for part in filter(None, (p.strip() for p in cells[7].split(";"))):
            scen, vals = part.split(":")
            t, p = vals.strip().split("/")
            ttft[scen.strip()] = (t, p)
        overrides: dict[str, str] = {}
        for part in filter(None, (p.strip() for p in cells[13].split(";"))):
            scen, key = part.split(":")
            overrides[scen.strip()] = key.strip()
        req = [_scen(c) for c in cells[11].split(";")]
        rows[cells[0]] = ParamRow(
            benchmark=cells[0],
            lower=_bounds(cells[1], ">="),
            upper=_bounds(cells[2], "<="),
            performance_sample_count=int(cells[3]),
            dataset_size=int(cells[4]),
            offline_min_spq=None if cells[5] == "(KeyError)" else int(cells[5]),
            server_latency_ns=int(cells[6]) if cells[6] else None,
            ttft_tpot_ns=ttft,
            equal_issue=cells[8] == "True",
            token_latencies=cells[9] == "True",
            compliance=() if cells[10] == "none" else tuple(cells[10].split(",")),
            required={"datacenter": req[0], "edge": req[1], "datacenter+edge": req[2]},
            optional_dc=_scen(cells[12]),
            result_overrides=overrides,
            min_query_count={k: int(v) for k, v in ast.literal_eval(cells[14]).items()},
        )
    return rows
