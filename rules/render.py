"""A round's rules as ``inference-audit rules show`` and ``rules list`` print them: one benchmark's rules, each with
the source it comes from (text), the same as JSON, and a benchmark's scenarios on one line."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, TextIO

from rules.models import AccuracyTarget, Benchmark, Round, Scenario

_SCENARIO_ORDER = [
    Scenario.SINGLE_STREAM,
    Scenario.MULTI_STREAM,
    Scenario.OFFLINE,
    Scenario.SERVER,
    Scenario.INTERACTIVE,
]
_SOURCE_ID = re.compile(r"\s*([A-Za-z][A-Za-z0-9_.]*?)(?::|#|$)")


def scenario_summary(b: Benchmark) -> str:
    parts = []
    for st, sset in b.scenarios.items():
        req = "+".join(s.value for s in sset.required)
        if sset.one_of:
            req += " +(" + "|".join(s.value for s in sset.one_of) + ")"
        parts.append(f"{st}: {req}")
    return "; ".join(parts)


def _siblings(rnd: Round, bench: Benchmark) -> list[Benchmark]:
    """The other quality variant(s): llama2-70b-99 <-> llama2-70b-99.9."""
    for suffix in ("-99.9", "-99"):
        if bench.name.endswith(suffix):
            stem = bench.name[: -len(suffix)]
            return [
                b
                for n, b in rnd.benchmarks.items()
                if n != bench.name and n in (f"{stem}-99", f"{stem}-99.9")
            ]
    return []


def _round_context(rnd: Round) -> dict[str, Any]:
    return {
        "name": rnd.name,
        "checker": rnd.checker,
        "rules_source": rnd.rules_source,
        "mlperf_conf_source": rnd.mlperf_conf_source,
        "loadgen_versions": list(rnd.loadgen_versions),
        "loadgen_versions_cite": rnd.loadgen_versions_cite,
        "seeds": rnd.seeds.model_dump(mode="json"),
        "scenario_defaults": {s.value: d.model_dump(mode="json") for s, d in rnd.scenario_defaults.items()},
        "min_duration_ms": rnd.min_duration_ms,
        "min_duration_cite": rnd.min_duration_cite,
        "early_stopping_scenarios": [s.value for s in rnd.early_stopping_scenarios],
        "early_stopping_cite": rnd.early_stopping_cite,
        "result_fields": {s.value: k for s, k in rnd.result_fields.items()},
        "units": {s.value: u for s, u in rnd.units.items()},
        "compliance_delta_pct": rnd.compliance_delta_pct,
        "compliance_delta_pct_cite": rnd.compliance_delta_pct_cite,
    }


def show_payload(rnd: Round, bench: Benchmark) -> dict[str, Any]:
    return {
        "round": _round_context(rnd),
        "benchmark": bench.model_dump(mode="json"),
        "quality_variants": {b.name: b.model_dump(mode="json") for b in _siblings(rnd, bench)},
        "sources": {k: v.model_dump(mode="json") for k, v in rnd.sources.items()},
    }


def _num(x: float | int) -> str:
    if isinstance(x, int) or float(x).is_integer():
        return str(int(x))
    return f"{x:.10g}"


def _target_text(t: AccuracyTarget, op: str) -> str:
    how = ""
    if t.reference is not None and t.factor is not None:
        how = f"  (= {_num(t.reference)} x {_num(t.factor)})"
    return f"{t.metric} {op} {_num(t.value)}{how}"


class ShowText:
    """``rules show BENCHMARK``: every group of a benchmark's rules, each line with its source, then the sources cited."""

    def __init__(self, rnd: Round, bench: Benchmark, out: TextIO) -> None:
        self.rnd = rnd
        self.b = bench
        self.out = out
        self.cited: set[str] = set()

    def _note_cite(self, cite: str | None) -> None:
        for part in (cite or "").split(";"):
            m = _SOURCE_ID.match(part)
            if m and m.group(1):
                self.cited.add(m.group(1))

    def line(self, text: str, cite: str | None = None, indent: int = 2) -> None:
        self._note_cite(cite)
        pad = " " * indent
        self.out.write(f"{pad}{text}" + (f"   [{cite}]" if cite else "") + "\n")

    def head(self, title: str, cite: str | None = None) -> None:
        self._note_cite(cite)
        self.out.write(f"\n{title}" + (f"   [{cite}]" if cite else "") + "\n")

    def write(self) -> None:
        b, r = self.b, self.rnd
        self.out.write(f"{b.name} — round {r.name}\n")
        self.line(f"checker: {r.checker}", indent=0)
        self.line(f"rules text: {r.rules_source}; mlperf.conf: {r.mlperf_conf_source}", indent=0)
        self.line(f"categories: {', '.join(b.categories) or '-'}; LLM: {b.is_llm}", indent=0)
        self._scenarios()
        self._samples()
        self._latency()
        self._accuracy()
        self._generation()
        self._compliance()
        self._results()
        self._round_rules()
        self._rules_text()
        self._notes()
        self._sources()

    def _scenarios(self) -> None:
        self.head("Scenarios (closed/network division) per system type")
        for st, sset in self.b.scenarios.items():
            parts = [f"required {', '.join(s.value for s in sset.required) or '-'}"]
            if sset.optional:
                parts.append(f"optional {', '.join(s.value for s in sset.optional)}")
            if sset.one_of:
                parts.append(f"at least one of {' | '.join(s.value for s in sset.one_of)}")
            self.line(f"{st}: " + "; ".join(parts), sset.cite)

    def _samples(self) -> None:
        b, c = self.b, self.b.cites
        self.head("Sample counts and minimum queries")
        if b.performance_sample_count is not None:
            self.line(
                f"performance_sample_count >= {_num(b.performance_sample_count)}",
                c.get("performance_sample_count"),
            )
        if b.dataset_size is not None:
            self.line(f"accuracy run covers {_num(b.dataset_size)} samples", c.get("dataset_size"))
        if b.accuracy_sample_count is not None:
            self.line(
                f"accuracy sample count {_num(b.accuracy_sample_count)}",
                c.get("accuracy_sample_count"),
            )
        for scen, n in b.accuracy_sample_count_by_scenario.items():
            self.line(f"accuracy sample count ({scen.value}) {_num(n)}", c.get("accuracy_sample_count"))
        if b.offline_min_samples_per_query is not None:
            self.line(
                f"Offline samples per query >= {_num(b.offline_min_samples_per_query)}",
                c.get("offline_min_samples_per_query"),
            )
        if b.min_query_count:
            es = set(self.rnd.early_stopping_scenarios)
            items = []
            for scen in _ordered(b.min_query_count):
                flag = " (early stopping: not enforced)" if scen in es else ""
                items.append(f"{scen.value} {_num(b.min_query_count[scen])}{flag}")
            self.line("min_query_count: " + ", ".join(items), c.get("min_query_count"))
        if b.min_duration_exempt:
            self.line("minimum duration: exempt", c.get("min_duration_exempt"))
        else:
            self.line(f"minimum duration >= {_num(self.rnd.min_duration_ms)} ms", self.rnd.min_duration_cite)

    def _latency(self) -> None:
        b, c = self.b, self.b.cites
        self.head("Latency gates")
        shown = False
        server = b.target_latency_ns_for(Scenario.SERVER)
        interactive = b.target_latency_ns_for(Scenario.INTERACTIVE)
        for name, bound in (("Server", server), ("Interactive", interactive if interactive != server else None)):
            if bound is not None:
                self.line(f"{name}: target latency <= {_num(bound)} ns ({bound / 1e6:g} ms)", c.get("server_target_latency_ns"))
                shown = True
        for scen in _ordered(b.token_latency_limits):
            lim = b.token_latency_limits[scen]
            self.line(
                f"{scen.value}: p99 TTFT < {_num(lim.ttft_ms)} ms and p99 TPOT < {_num(lim.tpot_ms)} ms",
                lim.cite,
            )
            shown = True
        for scen, pct in b.target_latency_percentile_overrides.items():
            self.line(
                f"{scen.value}: latency percentile {pct:g}",
                c.get("target_latency_percentile_overrides"),
            )
            shown = True
        if b.mlperf_conf_target_latency_ms:
            vals = ", ".join(f"{s.value} {_num(v)} ms" for s, v in b.mlperf_conf_target_latency_ms.items())
            self.line(f"mlperf.conf target_latency: {vals}", c.get("mlperf_conf_target_latency_ms"))
        if not shown:
            self.line("none beyond the scenario defaults (Offline has no latency gate)")
        if b.use_token_latencies_required:
            self.line(
                "use_token_latencies must be on (TTFT/TPOT logged)",
                c.get("use_token_latencies_required"),
            )

    def _accuracy(self) -> None:
        b = self.b
        self.head("Accuracy", b.accuracy_cite)
        self._targets(b)
        for sib in _siblings(self.rnd, b):
            self.line(f"quality variant {sib.name}:")
            self._targets(sib, indent=4)
        if b.compliance_delta_pct_overrides:
            vals = ", ".join(f"{m} {v:g} %" for m, v in b.compliance_delta_pct_overrides.items())
            self.line(f"TEST01 accuracy delta: {vals}", b.cites.get("compliance_delta_pct_overrides"))
        for kind, ids in b.extra_accuracy_files.items():
            self.line(f"accuracy/{kind}/ must hold: {', '.join(ids)}", b.cites.get("extra_accuracy_files"))

    def _targets(self, b: Benchmark, indent: int = 2) -> None:
        for t in b.accuracy_targets_for():  # the base list; per-scenario overrides below
            self.line(_target_text(t, ">="), t.cite, indent)
        for scen, ts in b.accuracy_targets_by_scenario.items():
            for t in ts:
                self.line(f"({scen.value}) " + _target_text(t, ">="), t.cite, indent)
        for t in b.accuracy_upper_limits:
            self.line(_target_text(t, "<="), t.cite, indent)

    def _generation(self) -> None:
        b, c = self.b, self.b.cites
        if not (b.max_new_tokens or b.min_new_tokens or b.decoding):
            return
        self.head("Generation")
        if b.decoding:
            self.line(f"decoding: {b.decoding}", c.get("decoding"))
        if b.min_new_tokens is not None:
            self.line(f"min_new_tokens = {b.min_new_tokens}", c.get("min_new_tokens"))
        if b.max_new_tokens is not None:
            self.line(f"max_new_tokens = {b.max_new_tokens}", c.get("max_new_tokens"))
        if b.max_new_tokens_performance is not None:
            self.line(
                f"max_new_tokens (performance run) = {b.max_new_tokens_performance}",
                c.get("max_new_tokens_performance"),
            )
        for t in b.accuracy_targets_for():
            if t.metric in ("TOKENS_PER_SAMPLE", "GEN_LEN"):
                upper = [u for u in b.accuracy_upper_limits if u.metric == t.metric]
                bound = f" and <= {_num(upper[0].value)}" if upper else ""
                self.line(f"generation length: {t.metric} >= {_num(t.value)}{bound}", t.cite)

    def _compliance(self) -> None:
        b = self.b
        self.head("Compliance tests (closed/network)", b.compliance_cite)
        self.line(", ".join(b.compliance_tests) or "none")
        if "TEST01" not in b.compliance_tests:
            return
        self.line(
            "TEST01 accuracy delta default: "
            + ", ".join(f"-{k}: {v:g} %" for k, v in self.rnd.compliance_delta_pct.items()),
            self.rnd.compliance_delta_pct_cite,
        )

    def _results(self) -> None:
        b, r = self.b, self.rnd
        self.head("Reported result and units")
        scenarios: set[Scenario] = set()
        for st in b.scenarios:
            scenarios.update(b.allowed_scenarios(st))
        for scen in _ordered(scenarios):
            key = b.result_field_overrides.get(scen, r.result_fields.get(scen, "?"))
            unit = b.units_overrides.get(scen, r.units.get(scen, "?"))
            cite = b.cites.get("result_field_overrides") if scen in b.result_field_overrides else None
            self.line(f"{scen.value}: {key}  ->  {unit}", cite or r.result_fields_cite)
        if b.mlperf_conf_model:
            extra = (
                f", Interactive: {b.mlperf_conf_interactive_model}" if b.mlperf_conf_interactive_model else ""
            )
            self.line(
                f"mlperf.conf model key: {b.mlperf_conf_model}{extra}", b.cites.get("mlperf_conf_model")
            )
        if b.mlperf_conf_flags:
            flags = ", ".join(f"{k}={v}" for k, v in b.mlperf_conf_flags.items())
            self.line(f"mlperf.conf flags: {flags}", b.cites.get("mlperf_conf_flags"))
        if b.equal_issue_required:
            self.line(
                "equal-issue mode (sample_concatenate_permutation) required",
                b.cites.get("equal_issue_required"),
            )

    def _round_rules(self) -> None:
        r = self.rnd
        self.head("Round-wide")
        s = r.seeds
        self.line(
            f"seeds: qsl {s.qsl_rng_seed}, sample_index {s.sample_index_rng_seed}, "
            f"schedule {s.schedule_rng_seed}",
            s.cite,
        )
        self.line(
            "early stopping (min_query_count not enforced): "
            + ", ".join(x.value for x in r.early_stopping_scenarios),
            r.early_stopping_cite,
        )
        for scen in _ordered(r.scenario_defaults):
            d = r.scenario_defaults[scen]
            extra = f", samples_per_query {d.samples_per_query}" if d.samples_per_query else ""
            extra += f", min_query_count {d.min_query_count}" if d.min_query_count else ""
            self.line(
                f"mlperf.conf {scen.value}: min_duration {_num(d.min_duration_ms)} ms, "
                f"p{d.target_latency_percentile:g}{extra}",
                d.cite,
            )
        self.line(
            f"LoadGen versions accepted in logs: {', '.join(v + 'x' if v.endswith('.') else v for v in r.loadgen_versions)}",
            r.loadgen_versions_cite,
        )
        if r.loadgen_runs is not None:
            self.line(
                f"LoadGen releases for runs: {', '.join(r.loadgen_runs.releases)} "
                f"(install: pip install '{r.loadgen_runs.pip_requirement}')",
                r.loadgen_runs.cite,
            )

    def _rules_text(self) -> None:
        if not self.b.rules_text:
            return
        self.head("Rules text (verbatim cells)", self.b.cites.get("rules_text"))
        for k, v in self.b.rules_text.items():
            self.line(f"{k}: {v}")

    def _notes(self) -> None:
        if not self.b.notes:
            return
        self.head("Notes")
        for n in self.b.notes:
            self.line(f"- {n}")

    def _sources(self) -> None:
        self.head("Sources cited above")
        for sid, src in self.rnd.sources.items():
            if sid in self.cited:
                self.line(f"{sid}: {src.path} — {src.provenance}")


def _ordered(items: Iterable[Scenario]) -> list[Scenario]:
    return sorted(items, key=_SCENARIO_ORDER.index)
