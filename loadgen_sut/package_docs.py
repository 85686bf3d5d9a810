"""The documents a package writes for a run: the mlperf.conf values LoadGen applied, the measurement and code
READMEs, the calibration note, and a SIMULATED system description for the simulated engine."""

from __future__ import annotations

import json
from typing import Any

from loadgen_sut.record import RunRecord
from loadgen_sut.settings import TestSettingsModel
from rules.models import Scenario


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


SIMULATED_NOTE = "SIMULATED engine run."


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


def _known(value: object) -> str:
    """A fact for a README: never the string 'None'."""
    return "not reported" if value is None or str(value).strip() in ("", "None") else str(value)


def measurement_readme(record: RunRecord, system: str, implementation: dict[str, Any]) -> str:
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
        f"- engine: {_known(eng.name if eng else None)} {eng.version or '' if eng else ''}".rstrip(),
        f"- model: {_known(eng.model if eng else None)}; precision: {_known(eng.precision if eng else None)}; "
        f"tokenizer: {_known(eng.tokenizer if eng else None)}",
        f"- generation: {json.dumps(record.generation, sort_keys=True)}",
        f"- dataset: {record.dataset.name if record.dataset else 'n/a'} ({record.dataset.samples if record.dataset else 0} samples"
        + (", SIMULATED/builtin data" if record.dataset and record.dataset.simulated else "")
        + ")",
        f"- hardware: {record.hardware.cpu_model}, {record.hardware.cpu_count} CPUs, {record.hardware.memory_gib} GiB"
        + (f"; {', '.join(record.hardware.accelerators)}" if record.hardware.accelerators else ""),
        f"- weight data types: {_known(implementation.get('weight_data_types'))}",
        f"- verdict of the run: {record.verdict.status}",
    ]
    if eng and eng.parameters:
        lines.append(f"- engine parameters: {json.dumps(eng.parameters, sort_keys=True)}")
    return "\n".join(lines) + "\n"


def code_readme(record: RunRecord) -> str:
    sim = (
        "\n\nThe runs in this tree used the SIMULATED engine: they measure no system."
        if record.simulated
        else ""
    )
    return (
        f"# {record.benchmark}\n\n"
        "Harness: inference-audit (`loadgen_sut`), running the engine under the official MLPerf LoadGen "
        "(`mlcommons-loadgen`), one LoadGen test per process; engine behind an OpenAI-compatible streaming API, "
        "a local transformers model, or the simulated engine. See the measurements README of each scenario for the "
        f"exact command.{sim}\n"
    )


def calibration_text(record: RunRecord, implementation: dict[str, Any]) -> str:
    if record.simulated:
        return "# Calibration\n\nSIMULATED engine: no model, no quantization, no calibration.\n"
    return (
        "# Calibration\n\n"
        f"The harness serves the weights as the engine loads them (weight data types: "
        f"{_known(implementation.get('weight_data_types'))}; transformations: "
        f"{_known(implementation.get('weight_transformations'))}). If the weights were quantized, describe the "
        "calibration data set and procedure here before submitting.\n"
    )
