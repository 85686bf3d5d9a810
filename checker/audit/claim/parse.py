"""Read a claim: a YAML / JSON file (``schemas/claim.json``) or a bare ``--text``; and read its metric.

The metric comes from the claim's ``metric:`` field, else from the text ("tokens/s per GPU", "perf/W", "$ per
million tokens", "geomean across benchmarks", ...). Bad input raises :class:`UnusableInput` naming the file and
the offending field.

The claim file is read as a regular file under a size cap (a FIFO or ``/dev/zero`` is refused without blocking)
and parsed by :func:`checker.safe_yaml.load_yaml`, the bounded YAML reader: no anchors or aliases (so neither a
recursive document nor a "billion laughs" expansion can be built), bounded nesting and number length, no key
given twice, YAML 1.2 core scalars (a base-60 ``59:59``, a hex integer or a timestamp stays text).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from checker.audit.claim.model import Claim, ClaimResultSpec, Derivation, Metric
from checker.findings import UnusableInput
from checker.safe_io import display_name, read_input_bytes
from checker.safe_json import MAX_JSON_DEPTH
from checker.safe_yaml import load_yaml, yaml_error
from schemas import schema_errors

MAX_CLAIM_BYTES = 4 * 1024 * 1024  # a claim is a few lines of YAML


_BASES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("goodput", re.compile(r"\bgoodput\b", re.I)),
    ("ttft", re.compile(r"\b(ttft|time[ -]to[ -]first[ -]token)\b", re.I)),
    ("itl", re.compile(r"\b(itl|inter[ -]token latency)\b", re.I)),
    ("tpot", re.compile(r"\b(tpot|time[ -]per[ -]output[ -]token)\b", re.I)),
    (
        "tokens/s",
        re.compile(r"\btok(en)?s?\s*(/|per)\s*s(ec(ond)?)?\b|\btokens?/s\b|\btps\b|token throughput", re.I),
    ),
    ("queries/s", re.compile(r"\bquer(y|ies)\s*(/|per)\s*s(ec(ond)?)?\b|\bqps\b", re.I)),
    ("samples/s", re.compile(r"\bsamples?\s*(/|per)\s*s(ec(ond)?)?\b|\bimages?\s*(/|per)\s*s", re.I)),
    ("latency", re.compile(r"\blatency\b|\bms\b|millisecond", re.I)),
)

_DERIVATIONS: tuple[tuple[Derivation, re.Pattern[str]], ...] = (
    (
        Derivation.PER_ACCELERATOR,
        re.compile(
            r"\bper[ -](gpu|accelerator|chip|card|device|xpu|npu|tpu)s?\b|/\s*(gpu|accelerator|chip)\b|\bper-(gpu|chip)\b",
            re.I,
        ),
    ),
    (
        Derivation.PER_WATT,
        re.compile(
            r"\bper[ -]watt\b|\b(perf(ormance)?|tokens?|samples?|queries|inferences?)\s*/\s*w(att)?\b|\bper[ -]joule\b|"
            r"\btokens?/j\b|\b(energy|power)[ -]efficien|\bperf/w\b",
            re.I,
        ),
    ),
    (
        Derivation.COST,
        re.compile(
            r"\bper[ -](dollar|\$)|\$\s*\d|\bcost\b|\bprice\b|\btco\b|\bper (million|1m) tokens\b|\bcheaper\b",
            re.I,
        ),
    ),
    (
        Derivation.COMPOSITE,
        re.compile(
            r"\bgeo(metric)?[ -]?mean\b|\baverage (across|over|of)\b|\bcomposite\b|\boverall score\b|"
            r"\bacross (all|\d+|the) (mlperf )?benchmarks\b|\bsuite score\b",
            re.I,
        ),
    ),
)


def read_metric(text: str, metric_field: str | None) -> Metric:
    """The claim's metric from its ``metric:`` field, else from its wording."""
    source = metric_field if metric_field else text
    base = next((name for name, pattern in _BASES if pattern.search(source)), None)
    derivations = tuple(d for d, pattern in _DERIVATIONS if pattern.search(source))
    if metric_field:
        # a metric field that says nothing derived still counts derivations the text makes explicit
        derivations = tuple(dict.fromkeys(derivations + tuple(d for d, p in _DERIVATIONS if p.search(text))))
    return Metric(
        text=source if metric_field else _metric_phrase(text, base),
        base=base,
        derivations=derivations,
        from_text=not metric_field,
    )


def _metric_phrase(text: str, base: str | None) -> str:
    if base is None:
        return "(no metric found in the text)"
    pattern = dict(_BASES)[base]
    m = pattern.search(text)
    return m.group(0) if m else base


def load_claim_file(path: Path) -> Claim:
    where = display_name(str(path))
    raw_bytes = read_input_bytes(path, what="claim", max_bytes=MAX_CLAIM_BYTES)
    try:
        text = raw_bytes.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnusableInput(f"cannot read the claim: not UTF-8 text (byte {exc.start})", where) from exc
    try:
        raw = load_yaml(text)
    except yaml.YAMLError as exc:
        problem, line = yaml_error(exc)
        raise UnusableInput(f"invalid YAML: {problem}", where, line) from exc
    except RecursionError:  # belt and braces: the loader bounds nesting itself
        raise UnusableInput(f"invalid YAML: nested deeper than {MAX_JSON_DEPTH} levels", where) from None
    return claim_from_data(raw, where)


def claim_from_data(raw: Any, where: str) -> Claim:
    if not isinstance(raw, dict):
        raise UnusableInput("a claim is a mapping with at least 'text' (see schemas/claim.json)", where)
    problems = schema_errors(raw, "claim")
    if problems:
        raise UnusableInput("not a valid claim (schemas/claim.json): " + "; ".join(problems[:5]), where)
    try:
        return Claim.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = "/".join(str(p) for p in first["loc"])
        raise UnusableInput(f"not a valid claim: {loc}: {first['msg']}", where) from exc


def claim_from_text(text: str, results: tuple[ClaimResultSpec, ...] = ()) -> Claim:
    if not text.strip():
        raise UnusableInput("--text is empty")
    return Claim(text=text, results=results)
