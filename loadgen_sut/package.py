"""Lay out a submission run as the official results tree.

::

  <tree>/<division>/<submitter>/
    systems/<system>.json                       the user's system description (validated)
    results/<system>/<benchmark>/<scenario>/
      performance/run_1/{mlperf_log_summary.txt, mlperf_log_detail.txt}
      accuracy/{mlperf_log_summary.txt, mlperf_log_detail.txt, accuracy.txt, mlperf_log_accuracy.json}
      TEST06/...                                (v6.x layout: compliance inside the result dir)
    compliance/<system>/<benchmark>/<scenario>/TEST06/{verify_accuracy.txt, accuracy/, performance/run_1/}
                                                (v5.x layout)
    measurements/<system>/<benchmark>/<scenario>/{user.conf, mlperf.conf, README.md, <system>_<scenario>.json}
    documentation/calibration.md
    code/<benchmark>/README.md                  (``src/`` from v6.x)

Nothing the user already has is overwritten: an existing result directory refuses the package;
an existing system description must be identical; existing calibration/code READMEs are kept.
The accuracy log is truncated the way ``tools/submission/truncate_accuracy_log.py`` does (first
and last 4096 bytes) when it exceeds the round's size limit; its hash is already in accuracy.txt.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checker.findings import UnusableInput
from loadgen_sut.record import RunRecord
from loadgen_sut.settings import TestSettingsModel
from rules.models import Round, Scenario
from schemas import schema_errors

VIEWABLE_BYTES = 4096
SYSTEM_SCHEMA = "system-description"
MEASUREMENTS_SCHEMA = "measurements"


@dataclass(frozen=True)
class PackageRequest:
    tree: Path
    division: str
    submitter: str
    system_json: Path | None  # None only for the simulated engine (a simulated description is written)
    system_name: str | None = None  # directory name; default: the system JSON's file stem
    implementation: dict[str, str] | None = None  # measurements <system>_<scenario>.json fields


@dataclass
class PackageResult:
    tree: Path
    result_dir: Path
    written: list[Path] = field(default_factory=list)


def truncate_accuracy_log(src: Path, dst: Path, limit_bytes: int) -> bool:
    """Copy, truncating as the official tool does when ``src`` is ``limit_bytes`` or larger."""
    data = src.read_bytes()
    if len(data) < limit_bytes:
        dst.write_bytes(data)
        return False
    dst.write_bytes(data[:VIEWABLE_BYTES] + b"\n\n...\n\n" + data[-VIEWABLE_BYTES:])
    return True


def simulated_system_description(division: str, submitter: str, required: tuple[str, ...]) -> dict[str, Any]:
    """A system description for the SIMULATED engine: every field says so."""
    desc: dict[str, Any] = {name: "SIMULATED (no hardware measured)" for name in required}
    desc.update(
        {
            "division": division,
            "submitter": submitter,
            "status": "available",
            "system_type": "datacenter",
            "system_name": "SIMULATED system (inference-audit simulated engine; not a measurement)",
            "number_of_nodes": "1",
            "host_processors_per_node": "1",
            "host_processor_core_count": "1",
            "accelerators_per_node": "0",
            "accelerator_model_name": "SIMULATED (none)",
            "framework": "inference-audit simulated engine",
            "other_software_stack": "inference-audit simulated engine (sleeps for configured TTFT/TPOT)",
            "hw_notes": "SIMULATED: produced by the built-in simulated engine; no hardware was measured",
            "sw_notes": "SIMULATED: produced by the built-in simulated engine; no model was run",
        }
    )
    return desc


def _load_system(req: PackageRequest, rnd: Round, simulated: bool) -> tuple[str, dict[str, Any]]:
    if req.system_json is None:
        if not simulated:
            raise UnusableInput("--mode submission needs --system systems/<name>.json (your system description)")
        name = req.system_name or "simulated_system"
        return name, simulated_system_description(req.division, req.submitter, rnd.system.required_fields)
    path = req.system_json
    try:
        desc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UnusableInput(f"cannot read the system description: {exc.strerror or exc}", path=str(path)) from exc
    except ValueError as exc:
        raise UnusableInput(f"not JSON: {exc}", path=str(path)) from exc
    if not isinstance(desc, dict):
        raise UnusableInput("a system description is a JSON object", path=str(path))
    errors = schema_errors(desc, SYSTEM_SCHEMA)
    missing = [f for f in rnd.system.required_fields if f not in desc]
    errors += [f"(top level): '{m}' is a required property of round {rnd.name}" for m in missing if m not in str(errors)]
    if errors:
        raise UnusableInput("invalid system description:\n  " + "\n  ".join(errors), path=str(path))
    if str(desc.get("division", "")).lower() != req.division.lower():
        raise UnusableInput(f"division is {desc.get('division')!r} but the package is for {req.division!r}", path=str(path))
    if str(desc.get("submitter", "")).lower() != req.submitter.lower():
        raise UnusableInput(f"submitter is {desc.get('submitter')!r} but --submitter is {req.submitter!r}", path=str(path))
    if simulated:
        desc = {**desc, "sw_notes": f"SIMULATED engine run. {desc.get('sw_notes', '')}".strip()}
    return req.system_name or path.stem, desc


def _safe_name(name: str, what: str) -> str:
    if not name or "/" in name or name.startswith(".") or " " in name or name in ("..",):
        raise UnusableInput(f"{what} {name!r} cannot be a directory name (no '/', spaces or leading dot)")
    return name


def _write_new(path: Path, text: str, written: list[Path]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    written.append(path)


def _copy(src: Path, dst: Path, written: list[Path]) -> None:
    if not src.is_file():
        raise UnusableInput("expected LoadGen output is missing", path=str(src))
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)
    written.append(dst)


def mlperf_conf_text(settings: TestSettingsModel, loadgen_version: str | None) -> str:
    """The compiled mlperf.conf values LoadGen applied for this model and scenario, in conf format.

    The installed LoadGen wheel has no mlperf.conf file (it is compiled in); these are the values
    read back from LoadGen's TestSettings after FromConfig.
    """
    m, s = settings.conf_model, settings.loadgen_scenario.value
    lines = [
        "# mlperf.conf values compiled into the LoadGen used for this run, as LoadGen applied them",
        f"# (mlcommons-loadgen {loadgen_version or 'unknown'}; read back after FromConfig({m}, {s}) by inference-audit).",
        "# All times are in milliseconds.",
    ]
    if settings.seeds is not None:
        lines += [
            f"*.*.qsl_rng_seed = {settings.seeds.qsl_rng_seed}",
            f"*.*.sample_index_rng_seed = {settings.seeds.sample_index_rng_seed}",
            f"*.*.schedule_rng_seed = {settings.seeds.schedule_rng_seed}",
        ]
    if settings.performance_sample_count is not None:
        lines.append(f"{m}.*.performance_sample_count_override = {settings.performance_sample_count}")
    lines.append(f"{m}.*.sample_concatenate_permutation = {int(settings.sample_concatenate_permutation)}")
    lines.append(f"{m}.*.use_token_latencies = {int(settings.use_token_latencies)}")
    lines.append(f"*.{s}.min_duration = {settings.min_duration_ms}")
    if settings.target_latency_percentile is not None and settings.loadgen_scenario is not Scenario.OFFLINE:
        lines.append(f"*.{s}.target_latency_percentile = {settings.target_latency_percentile * 100:g}")
    if settings.ttft_latency_ns is not None:
        lines.append(f"{m}.Server.ttft_latency = {settings.ttft_latency_ns // 1_000_000}")
    if settings.tpot_latency_ns is not None:
        lines.append(f"{m}.Server.tpot_latency = {settings.tpot_latency_ns // 1_000_000}")
    if settings.loadgen_scenario is Scenario.OFFLINE:
        lines.append(f"{m}.Offline.min_query_count = {settings.min_query_count}")
    return "\n".join(lines) + "\n"


def _implementation(record: RunRecord, given: dict[str, str] | None) -> dict[str, str]:
    eng = record.engine
    if record.simulated:
        base = {
            "input_data_types": "int32 (token ids)",
            "retraining": "no",
            "starting_weights_filename": "SIMULATED: no weights (inference-audit simulated engine)",
            "weight_data_types": "SIMULATED",
            "weight_transformations": "none (simulated)",
        }
    else:
        base = {
            "input_data_types": "int32 (token ids)",
            "retraining": "no",
            "starting_weights_filename": (eng.model if eng else "") or "",
            "weight_data_types": (eng.precision if eng else "") or "",
            "weight_transformations": "none",
        }
    base.update(given or {})
    missing = [k for k, v in base.items() if not str(v).strip()]
    if missing:
        raise UnusableInput(
            f"the implementation description needs {', '.join(missing)} (pass --implementation-json FILE)"
        )
    return base


def _measurement_readme(record: RunRecord, system: str, scenario_dir: str) -> str:
    eng = record.engine
    sim = " (SIMULATED ENGINE: not a measurement of any system)" if record.simulated else ""
    lines = [
        f"# {record.benchmark} {record.scenario} on {system}{sim}",
        "",
        "Produced by inference-audit (`inference-audit run`), which runs the engine under the official MLPerf LoadGen.",
        "",
        "## Reproduce",
        "",
        "```",
        " ".join(record.command) if record.command else "inference-audit run ...",
        "```",
        "",
        "## Run facts",
        "",
        f"- run id: `{record.run_id}` ({record.created_utc})",
        f"- round: {record.round}; LoadGen {record.loadgen_version}",
        f"- engine: {eng.name if eng else 'n/a'} {eng.version or '' if eng else ''}".rstrip(),
        f"- model: {eng.model if eng else 'n/a'}; precision: {eng.precision if eng else 'n/a'}; tokenizer: {eng.tokenizer if eng else 'n/a'}",
        f"- generation: {json.dumps(record.generation, sort_keys=True)}",
        f"- dataset: {record.dataset.name if record.dataset else 'n/a'} ({record.dataset.samples if record.dataset else 0} samples"
        + (", SIMULATED/builtin data" if record.dataset and record.dataset.simulated else "")
        + ")",
        f"- hardware: {record.hardware.cpu_model}, {record.hardware.cpu_count} CPUs, {record.hardware.memory_gib} GiB"
        + (f"; {', '.join(record.hardware.accelerators)}" if record.hardware.accelerators else ""),
        f"- verdict of the run: {record.verdict.status}",
    ]
    if eng and eng.parameters:
        lines.append(f"- engine parameters: {json.dumps(eng.parameters, sort_keys=True)}")
    return "\n".join(lines) + "\n"


def _code_readme(record: RunRecord) -> str:
    sim = "\n\nThe runs in this tree used the SIMULATED engine: they measure no system." if record.simulated else ""
    return (
        f"# {record.benchmark}\n\n"
        "Harness: inference-audit (`loadgen_sut`), running the engine under the official MLPerf LoadGen "
        "(`mlcommons-loadgen`), one LoadGen test per process; engine behind an OpenAI-compatible streaming API, "
        "a local transformers model, or the simulated engine. See the measurements README of each scenario for the "
        f"exact command.{sim}\n"
    )


def _calibration(record: RunRecord) -> str:
    if record.simulated:
        return "# Calibration\n\nSIMULATED engine: no model, no quantization, no calibration.\n"
    prec = record.engine.precision if record.engine else "unknown"
    return (
        "# Calibration\n\n"
        f"The harness serves the weights as the engine loads them (precision: {prec}). If the weights were "
        "quantized, describe the calibration data set and procedure here before submitting.\n"
    )


def preflight_package(req: PackageRequest, rnd: Round, benchmark: str, scenario: str, simulated: bool) -> Path:
    """Refuse a package before a long run: bad system description, names, or an existing result."""
    bench = rnd.benchmark(benchmark)
    if bench is None:
        raise UnusableInput(f"round {rnd.name} has no benchmark {benchmark!r}")
    if req.division.lower() not in rnd.structure.divisions:
        raise UnusableInput(f"division must be one of {', '.join(rnd.structure.divisions)}")
    submitter = _safe_name(req.submitter, "submitter")
    system, desc = _load_system(req, rnd, simulated)
    system = _safe_name(system, "system name")
    base = req.tree / req.division.lower() / submitter
    result_dir = base / "results" / system / bench.name / scenario
    if result_dir.exists():
        raise UnusableInput("already exists: not overwriting results; use another --tree or remove it yourself", path=str(result_dir))
    sys_path = base / "systems" / f"{system}.json"
    if sys_path.exists() and json.loads(sys_path.read_text(encoding="utf-8")) != desc:
        raise UnusableInput("a different system description already exists there; not overwriting", path=str(sys_path))
    return result_dir


def package_run(record: RunRecord, run_dir: Path, rnd: Round, req: PackageRequest) -> PackageResult:
    """Copy a finished submission run into the official tree (refuses to overwrite results)."""
    tests = {t.name: t for t in record.tests}
    for needed in ("performance", "accuracy"):
        if needed not in tests or tests[needed].status != "finished":
            raise UnusableInput(f"the run has no finished {needed} test; package a --mode submission run", path=str(run_dir))
    failed = sum(t.sut.failed for t in record.tests)
    if failed:
        raise UnusableInput(
            f"{failed} sample(s) failed in the engine during the run: not packaging it (LoadGen's logs would hide them)",
            path=str(run_dir),
        )
    bench = rnd.benchmark(record.benchmark)
    if bench is None:  # pragma: no cover - the run resolved it
        raise UnusableInput(f"unknown benchmark {record.benchmark}")
    division = req.division.lower()
    if division not in rnd.structure.divisions:
        raise UnusableInput(f"division must be one of {', '.join(rnd.structure.divisions)}")
    submitter = _safe_name(req.submitter, "submitter")
    system, desc = _load_system(req, rnd, record.simulated)
    system = _safe_name(system, "system name")
    scenario = record.scenario
    base = req.tree / division / submitter
    result_dir = base / "results" / system / bench.name / scenario
    if result_dir.exists():
        raise UnusableInput("already exists: not overwriting results; use another --tree or remove it yourself", path=str(result_dir))
    res = PackageResult(tree=req.tree, result_dir=result_dir)
    w = res.written

    sys_path = base / "systems" / f"{system}.json"
    sys_text = json.dumps(desc, indent=2) + "\n"
    if sys_path.exists():
        if json.loads(sys_path.read_text(encoding="utf-8")) != desc:
            raise UnusableInput("a different system description already exists there; not overwriting", path=str(sys_path))
    else:
        _write_new(sys_path, sys_text, w)

    perf = run_dir / tests["performance"].directory
    for f in rnd.structure.performance_run_files:
        _copy(perf / f, result_dir / "performance" / "run_1" / f, w)
    acc = run_dir / tests["accuracy"].directory
    acc_dst = result_dir / "accuracy"
    for f in ("mlperf_log_summary.txt", "mlperf_log_detail.txt", "accuracy.txt"):
        _copy(acc / f, acc_dst / f, w)
    acc_dst.mkdir(parents=True, exist_ok=True)
    truncate_accuracy_log(acc / "mlperf_log_accuracy.json", acc_dst / "mlperf_log_accuracy.json", rnd.structure.max_accuracy_log_bytes)
    w.append(acc_dst / "mlperf_log_accuracy.json")

    for test in bench.compliance_tests:
        t = tests.get(test)
        if t is None or t.status != "finished":
            continue  # the checker reports the missing test
        src = run_dir / t.directory
        if rnd.structure.compliance_in_results_dir:
            cdir = result_dir / test
        else:
            cdir = base / "compliance" / system / bench.name / scenario / test
        _copy(src / "verification" / "verify_accuracy.txt", cdir / "verify_accuracy.txt", w)
        _copy(src / "mlperf_log_accuracy.json", cdir / "accuracy" / "mlperf_log_accuracy.json", w)
        for f in rnd.structure.compliance_performance_files:
            _copy(src / f, cdir / "performance" / "run_1" / f, w)

    mdir = base / "measurements" / system / bench.name / scenario
    settings = tests["performance"].loadgen_settings or record.settings
    _write_new(mdir / "user.conf", record.user_conf or "# no user.conf settings\n", w)
    _write_new(mdir / "mlperf.conf", mlperf_conf_text(settings, record.loadgen_version), w)
    _write_new(mdir / "README.md", _measurement_readme(record, system, scenario), w)
    impl = _implementation(record, req.implementation)
    errs = schema_errors(impl, MEASUREMENTS_SCHEMA)
    if errs:
        raise UnusableInput("invalid implementation description: " + "; ".join(errs))
    _write_new(mdir / f"{system}_{scenario}.json", json.dumps(impl, indent=2) + "\n", w)

    calib = base / "documentation" / "calibration.md"
    if not calib.exists() and not (base / "calibration.md").exists():
        _write_new(calib, _calibration(record), w)
    code = base / rnd.structure.code_dir / bench.name / "README.md"
    if not code.exists():
        _write_new(code, _code_readme(record), w)
    return res
