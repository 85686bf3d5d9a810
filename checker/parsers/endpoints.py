"""MLPerf Endpoints results (v6.1): ``config.yaml``, ``performance/result_summary.json``, ``accuracy/accuracy_results.json``.

An endpoints result replaces LoadGen's logs of a result directory by the files the MLPerf Endpoints harness writes:

- ``<scenario>/config.yaml`` (or ``config.yml``): the run configuration (``type`` offline/online, model parameters,
  ``settings.runtime`` durations and seeds, ``settings.load_pattern``);
- ``<scenario>/performance/result_summary.json``: counts, duration, ``qps`` / ``tps`` and the ``ttft`` / ``tpot`` /
  ``latency`` / ``output_sequence_lengths`` distributions (with ``percentiles`` and ``early_stopping_percentiles``);
- ``<scenario>/accuracy/accuracy_results.json``: ``accuracy_scores`` (one per data set) with their sample counts;
- ``<scenario>/audit/audit_<test>.json``: compliance audits (``{"test": name, "passed": bool}``).

:func:`parse_endpoints` turns the three documents into an :class:`EndpointsRun`; :meth:`EndpointsRun.detail_log`
and :meth:`EndpointsRun.accuracy_detail_log` present it as a :class:`checker.parsers.mllog.DetailLog` holding the
LoadGen keys the official checker maps them to (its ``ENDPOINTS_MAPPINGS``: ``duration_ns`` ->
``generated_query_duration``, ``ttft.early_stopping_percentiles.99.0`` ->
``result_first_token_99.00_percentile_latency_ns`` ...), so the LoadGen rules read both formats through one API.
Values missing from the documents are absent keys, never 0. Nothing here raises on malformed input: each problem is
an :class:`EndpointsProblem`.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import yaml

from checker.parsers.mllog import DetailLog
from checker.parsers.mllog_index import MLLOG_PREFIX
from checker.safe_json import JsonProblem, parse_json
from checker.safe_yaml import load_yaml, yaml_error

CONFIG_FILES = ("config.yaml", "config.yml")
RESULT_SUMMARY = "performance/result_summary.json"
ACCURACY_RESULTS = "accuracy/accuracy_results.json"
AUDIT_DIR = "audit"
# what the Endpoints harness writes besides the three documents (kept in the result directory, read by nobody)
HARNESS_EXTRA_ENTRIES = ("report.txt", "metrics", AUDIT_DIR)

# result_summary.json distribution -> LoadGen key stem (official ENDPOINTS_MAPPINGS; percentiles from the
# early-stopping estimates as there)
_PERCENTILES = ("50.0", "90.0", "95.0", "99.0", "99.9")
_DISTRIBUTIONS = {
    "latency": (
        "result_",
        "_percentile_latency_ns",
        "result_min_latency_ns",
        "result_max_latency_ns",
        "result_mean_latency_ns",
    ),
    "ttft": (
        "result_first_token_",
        "_percentile_latency_ns",
        "result_first_token_min_latency_ns",
        "result_first_token_max_latency_ns",
        "result_first_token_mean_latency_ns",
    ),
    "tpot": (
        "result_time_per_output_token_",
        "_percentile_ns",
        "result_time_per_output_token_min",
        "result_time_per_output_token_max",
        "result_time_per_output_token_mean",
    ),
}


@dataclass(frozen=True, slots=True)
class EndpointsProblem:
    """A document of the result that is missing, unreadable or not what the harness writes."""

    path: str  # relative to the result directory
    message: str


def _get(data: Any, *path: str) -> Any:
    cur = data
    for p in path:
        if not isinstance(cur, dict) or p not in cur:
            return None
        cur = cur[p]
    return cur


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    try:
        f = float(v)
    except OverflowError:
        return None
    return f if math.isfinite(f) else None


def _int(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return None


# the LoadGen keys of loadgen_values() read from config.yaml / result_summary.json, and the field each comes from
CONFIG_ORIGINS = {
    "effective_min_duration_ms": "settings.runtime.min_duration_ms",
    "effective_max_duration_ms": "settings.runtime.max_duration_ms",
    "effective_min_query_count": "settings.runtime.n_samples_to_issue",
    "effective_sample_index_rng_seed": "settings.runtime.dataloader_random_seed",
    "effective_schedule_rng_seed": "settings.runtime.scheduler_random_seed",
    "effective_target_qps": "settings.load_pattern.target_qps",
}
SUMMARY_ORIGINS = {
    "num_errors": "n_samples_failed",
    "generated_query_count": "n_samples_issued",
    "result_query_count": "n_samples_completed",
    "generated_query_duration": "duration_ns",
}


@dataclass(frozen=True)
class EndpointsRun:
    """One endpoints result: the three documents (``None`` when missing or unreadable) and typed accessors."""

    config: dict[str, Any] | None
    summary: dict[str, Any] | None
    accuracy: dict[str, Any] | None
    config_name: str | None = None  # config.yaml or config.yml
    problems: tuple[EndpointsProblem, ...] = ()

    # ---- config.yaml ---------------------------------------------------------------------------------------
    @property
    def run_type(self) -> str | None:
        """``offline`` / ``online`` (config ``type``, else ``benchmark_mode``)."""
        v = _get(self.config, "type")
        if not isinstance(v, str):
            v = _get(self.config, "benchmark_mode")
        return v.strip().lower() if isinstance(v, str) else None

    @property
    def loadgen_scenario(self) -> str | None:
        """The LoadGen scenario the run corresponds to: Offline for ``offline``, Server for ``online``."""
        return {"offline": "Offline", "online": "Server", "server": "Server"}.get(self.run_type or "")

    def runtime(self, name: str) -> Any:
        return _get(self.config, "settings", "runtime", name)

    @property
    def load_pattern(self) -> str | None:
        v = _get(self.config, "settings", "load_pattern", "type")
        return v if isinstance(v, str) else None

    @property
    def target_qps(self) -> float | None:
        return _num(_get(self.config, "settings", "load_pattern", "target_qps"))

    def model_param(self, name: str) -> Any:
        return _get(self.config, "model_params", name)

    @property
    def min_duration_ms(self) -> int | None:
        return _int(self.runtime("min_duration_ms"))

    @property
    def sample_index_rng_seed(self) -> int | None:
        return _int(self.runtime("dataloader_random_seed"))

    @property
    def schedule_rng_seed(self) -> int | None:
        return _int(self.runtime("scheduler_random_seed"))

    # ---- result_summary.json -------------------------------------------------------------------------------
    def count(self, name: str) -> int | None:
        return _int(_get(self.summary, name))

    @property
    def duration_ns(self) -> int | None:
        return _int(_get(self.summary, "duration_ns"))

    @property
    def complete(self) -> bool | None:
        v = _get(self.summary, "complete")
        return v if isinstance(v, bool) else None

    @property
    def state(self) -> str | None:
        v = _get(self.summary, "state")
        return v if isinstance(v, str) else None

    @property
    def qps(self) -> float | None:
        return _num(_get(self.summary, "qps"))

    @property
    def tps(self) -> float | None:
        return _num(_get(self.summary, "tps"))

    def percentile(self, dist: str, pct: str = "99.0", *, early_stopping: bool = True) -> float | None:
        """``dist`` (latency / ttft / tpot / output_sequence_lengths) percentile ``pct`` in ns (tokens)."""
        table = _get(self.summary, dist, "early_stopping_percentiles" if early_stopping else "percentiles")
        if not isinstance(table, dict):
            return None
        for key in (pct, pct.removesuffix(".0")):
            if key in table:
                return _num(table[key])
        return None

    def stat(self, dist: str, name: str) -> float | None:
        return _num(_get(self.summary, dist, name))

    # ---- accuracy_results.json -----------------------------------------------------------------------------
    @property
    def accuracy_scores(self) -> tuple[dict[str, Any], ...]:
        scores = _get(self.accuracy, "accuracy_scores")
        if not isinstance(scores, list):
            return ()
        return tuple(
            s for s in scores if isinstance(s, dict) and s.get("dataset_type", "accuracy") == "accuracy"
        )

    @property
    def accuracy_score(self) -> float | None:
        """The first data set's score (as the official parser's ``accuracy_score``), else ``average_accuracy``."""
        for s in self.accuracy_scores:
            v = _num(s.get("score"))
            if v is not None:
                return v
        return _num(_get(self.accuracy, "average_accuracy"))

    @property
    def accuracy_sample_count(self) -> int | None:
        """Samples scored: the sum of ``total_samples`` (``response_counts.issued`` when absent) over the data sets."""
        counts = []
        for s in self.accuracy_scores:
            n = _int(s.get("total_samples"))
            if n is None:
                n = _int(_get(s, "response_counts", "issued"))
            if n is not None:
                counts.append(n)
        return sum(counts) if counts else None

    @property
    def accuracy_mean_output_tokens(self) -> float | None:
        """Mean generated tokens per sample of the accuracy run (over its data sets, weighted by their samples)."""
        total = n = 0.0
        for s in self.accuracy_scores:
            t = _num(_get(s, "output_sequence_lengths", "total"))
            c = _int(s.get("total_samples"))
            if t is None or not c:
                return None
            total, n = total + t, n + c
        return total / n if n else None

    def accuracy_complete(self) -> bool | None:
        flags = [s.get("complete") for s in self.accuracy_scores]
        if not flags or not all(isinstance(f, bool) for f in flags):
            return None
        return all(flags)

    # ---- the LoadGen view ----------------------------------------------------------------------------------
    def loadgen_values(self) -> dict[str, Any]:
        """The performance run as the LoadGen keys the official checker maps it to (absent values left out)."""
        vals: dict[str, Any] = {
            "loadgen_version": _get(self.config, "version")
            if self.summary is None
            else _get(self.summary, "version"),
            "effective_scenario": self.loadgen_scenario,
            "effective_test_mode": "PerformanceOnly",
            "effective_min_duration_ms": self.min_duration_ms,
            "effective_max_duration_ms": _int(self.runtime("max_duration_ms")),
            "effective_min_query_count": _int(self.runtime("n_samples_to_issue")),
            "effective_sample_index_rng_seed": self.sample_index_rng_seed,
            "effective_schedule_rng_seed": self.schedule_rng_seed,
            "effective_target_qps": self.target_qps,
            "generated_query_count": self.count("n_samples_issued"),
            "qsl_reported_total_count": self.count("n_samples_issued"),
            "generated_query_duration": self.duration_ns,
            "result_query_count": self.count("n_samples_completed"),
            "num_errors": self.count("n_samples_failed"),
            "mean_output_tokens": self.stat("output_sequence_lengths", "avg"),
            "min_output_tokens": self.stat("output_sequence_lengths", "min"),
            "max_output_tokens": self.stat("output_sequence_lengths", "max"),
        }
        qps, tps = self.qps, self.tps
        if self.loadgen_scenario == "Offline":
            vals["result_samples_per_second"] = qps
            vals["result_tokens_per_second"] = tps
        else:
            vals["result_completed_samples_per_sec"] = qps
            vals["result_completed_tokens_per_second"] = tps
        for dist, (prefix, suffix, kmin, kmax, kmean) in _DISTRIBUTIONS.items():
            vals[kmin] = self.stat(dist, "min")
            vals[kmax] = self.stat(dist, "max")
            vals[kmean] = self.stat(dist, "avg")
            for pct in _PERCENTILES:
                vals[f"{prefix}{float(pct):.2f}{suffix}"] = self.percentile(dist, pct)
        return {k: v for k, v in vals.items() if v is not None}

    def detail_log(self, path: str, config_path: str | None = None) -> EndpointsDetailLog:
        """The performance run as a LoadGen detail log at ``path`` (result_summary.json); the settings name the
        config file (``config_path``) and field they come from."""
        origins = {key: (config_path or path, field) for key, field in CONFIG_ORIGINS.items()}
        origins |= {key: (path, field) for key, field in SUMMARY_ORIGINS.items()}
        for dist, (prefix, suffix, *_) in _DISTRIBUTIONS.items():
            for pct in _PERCENTILES:
                origins[f"{prefix}{float(pct):.2f}{suffix}"] = (path, f"{dist}.early_stopping_percentiles.{pct}")
        return EndpointsDetailLog(path, self.loadgen_values(), origins)

    def accuracy_detail_log(self, path: str) -> EndpointsDetailLog:
        vals: dict[str, Any] = {
            "effective_scenario": self.loadgen_scenario,
            "effective_test_mode": "AccuracyOnly",
            "qsl_reported_total_count": self.accuracy_sample_count,
            "effective_accuracy_sample_count": self.accuracy_sample_count,
            "accuracy_score": self.accuracy_score,
        }
        return EndpointsDetailLog(path, {k: v for k, v in vals.items() if v is not None})


class EndpointsDetailLog(DetailLog):
    """A :class:`DetailLog` built from an endpoints result's values: one record per LoadGen key, no line numbers
    (the values come from JSON/YAML documents, not from an ``:::MLLOG`` file). ``origins`` maps a key to the
    document (tree path) and field it was read from; a key without an Endpoints equivalent (the QSL seed) is not
    carried."""

    __slots__ = ("_origins",)

    def __init__(self, path: str | None, values: dict[str, Any], origins: dict[str, tuple[str, str]] | None = None) -> None:
        lines = [f"{MLLOG_PREFIX} {json.dumps({'key': k, 'value': v})}" for k, v in values.items()]
        super().__init__(path, "\n".join(lines) + "\n")
        self._origins = origins or {}

    def line_of(self, key: str) -> int | None:
        return None

    def document(self, key: str | None, default: str) -> str:
        origin = self._origins.get(key) if key else None
        return origin[0] if origin else default

    def label(self, key: str) -> str:
        origin = self._origins.get(key)
        return f"{key} from {origin[1]}" if origin else key

    def carries(self, key: str) -> bool:
        return key in self._origins or key in self._first


def parse_endpoints(
    config: tuple[str, str | None, str | None] | None,
    summary_text: str | None,
    accuracy_text: str | None,
) -> EndpointsRun:
    """Parse the documents of one endpoints result (texts already read; ``None``: missing).

    ``config`` is ``(name, text, problem)``: the config file's name, its text, or why it could not be read."""
    problems: list[EndpointsProblem] = []
    cfg: dict[str, Any] | None = None
    cfg_name = None
    if config is None:
        problems.append(EndpointsProblem(CONFIG_FILES[0], "config.yaml is missing"))
    else:
        cfg_name, text, why = config
        if text is None:
            problems.append(EndpointsProblem(cfg_name, why or f"{cfg_name} cannot be read"))
        else:
            try:
                loaded = load_yaml(text)  # bounded: no anchors or aliases, YAML 1.2 core scalars, no key twice
            except yaml.YAMLError as exc:
                problem, line = yaml_error(exc)
                where = f" (line {line})" if line is not None else ""
                problems.append(
                    EndpointsProblem(cfg_name, f"{cfg_name} is not valid YAML{where}: {problem[:200]}")
                )
            else:
                if isinstance(loaded, dict):
                    cfg = loaded
                else:
                    problems.append(EndpointsProblem(cfg_name, f"{cfg_name} is not a YAML mapping"))

    def load(rel: str, text: str | None) -> dict[str, Any] | None:
        if text is None:
            return None
        try:
            obj = parse_json(text)  # bounded: nesting depth, long integers
        except JsonProblem as exc:
            problems.append(EndpointsProblem(rel, f"{rel} is not valid JSON: {exc.msg}"))
            return None
        if not isinstance(obj, dict):
            problems.append(EndpointsProblem(rel, f"{rel} is not a JSON object"))
            return None
        return obj

    return EndpointsRun(
        config=cfg,
        summary=load(RESULT_SUMMARY, summary_text),
        accuracy=load(ACCURACY_RESULTS, accuracy_text),
        config_name=cfg_name,
        problems=tuple(problems),
    )


@dataclass(frozen=True, slots=True)
class AuditFile:
    """``audit/audit_<test>.json``: which test it reports and whether it passed (None: not a boolean)."""

    test: str | None
    passed: bool | None
    problem: str | None = None


def parse_audit(text: str) -> AuditFile:
    try:
        obj = parse_json(text)
    except JsonProblem as exc:
        return AuditFile(None, None, f"not valid JSON: {exc.msg}")
    if not isinstance(obj, dict):
        return AuditFile(None, None, "not a JSON object")
    test = obj.get("test")
    passed = obj.get("passed")
    return AuditFile(
        test if isinstance(test, str) else None,
        passed if isinstance(passed, bool) else None,
        None,
    )
