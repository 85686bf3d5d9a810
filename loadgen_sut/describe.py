"""The description templates of a submission (``inference-audit init``; its flags: :mod:`loadgen_sut.cli.init`).

``init system`` writes ``systems/<system>.json`` as the official checkers read it (the fields of
``schemas/system-description.json``), filled with what this host shows: CPU model, sockets, cores per
socket, memory, OS, Python and kernel, and the GPUs ``nvidia-smi`` lists when it is installed.
``--from-sysinfo FILE`` takes the values of a ``system_desc.json`` written by MLCommons' own capture tool
(``mlperf-sysinfo capture``, PyPI ``mlperf-sysinfo``) first. ``init implementation`` writes the
implementation description (``schemas/measurements.json``: weight data types, starting weights, ...).

Whatever cannot be read is written as ``"<FILL IN: ...>"``, a placeholder the schema refuses, so an
unfilled template cannot be packaged; the command lists those fields, and the probed values to review.

With ``--trial`` the same fields get ``"TRIAL: not described"`` instead (and the few fields the schema allows only
fixed values or counts in get a stated default: :data:`TRIAL_DEFAULTS`): a value the schema and the official checkers
accept, so a ``--mode submission-trial`` tree can be made and checked at once, and that ``--mode submission``
refuses (:func:`refuse_trial_values`), so a trial description never becomes a submission's. ``init check FILE``
judges a description before a run (:func:`check_description`).
"""

from __future__ import annotations

import contextlib
import platform
import shutil
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checker.checks.system import (
    TRIAL_PREFIX,  # the schemas accept it; --mode submission and the check refuse it
)
from checker.findings import UnusableInput
from checker.safe_io import read_input_json
from schemas import load_schema, schema_errors

SYSTEM_SCHEMA = "system-description"
IMPLEMENTATION_SCHEMA = "measurements"
PLACEHOLDER_PREFIX = "<FILL IN"  # the schemas refuse strings that start with it ($defs/text)
TRIAL_VALUE = f"{TRIAL_PREFIX} not described"
# fields whose schema takes only listed values or whole numbers: a trial gets this default, said and to review
TRIAL_DEFAULTS: dict[str, str] = {
    "status": "available",
    "system_type": "datacenter",
    "accelerators_per_node": "0",
    "number_of_nodes": "1",
    "host_processors_per_node": "1",
    "host_processor_core_count": "1",
}
# the hints say which fields may be empty: the schema takes "" there, and N/A (not "") where it needs a value
_EMPTY_OK = "(may be an empty string)"  # no double quote: one in hw_notes or sw_notes is a schema error of its own
_NA_OK = "(N/A if there is none; not empty)"

# what to write in each field, shown inside its placeholder
_SYSTEM_HINTS: dict[str, str] = {
    "division": "closed, open or network",
    "submitter": "your organisation, as the submitter directory is named",
    "status": "available, preview or rdi",
    "system_name": "the system's name as published, e.g. 'ACME X1 (8x H200-SXM-141GB, vLLM)'",
    "number_of_nodes": "number of nodes, e.g. 1",
    "host_processor_model_name": "CPU model, e.g. AMD EPYC 9575F",
    "host_processors_per_node": "CPU sockets per node, e.g. 2",
    "host_processor_core_count": "cores per CPU, e.g. 64",
    "host_memory_capacity": "host memory per node, e.g. 2 TB",
    "host_storage_capacity": "storage per node, e.g. 15 TB",
    "host_storage_type": "storage type, e.g. NVMe SSD",
    "accelerators_per_node": 'accelerators per node, e.g. 8 ("0" if there is none)',
    "accelerator_model_name": "accelerator model, e.g. NVIDIA H200-SXM-141GB " + _NA_OK,
    "accelerator_memory_capacity": "memory per accelerator, e.g. 141 GB " + _NA_OK,
    "framework": "inference framework and version, e.g. vLLM 0.10.0",
    "operating_system": "OS and version, e.g. Ubuntu 24.04",
    "system_type": "datacenter, edge or datacenter,edge",
    "other_software_stack": "drivers and libraries with versions, e.g. CUDA 12.8, PyTorch 2.7",
    "host_processor_frequency": "CPU frequency, e.g. 2.8 GHz " + _EMPTY_OK,
    "host_processor_caches": "CPU caches, e.g. L3: 256 MiB " + _EMPTY_OK,
    "host_memory_configuration": "DIMMs, e.g. 24x 64GB DDR5-6000",
    "host_processor_interconnect": "CPU interconnect " + _EMPTY_OK,
    "host_networking": "host networking, e.g. Infiniband",
    "host_networking_topology": "network topology, e.g. Ethernet/Infiniband on switching network",
    "accelerator_frequency": "accelerator frequency " + _EMPTY_OK,
    "accelerator_host_interconnect": "accelerator-host link, e.g. PCIe Gen5 x16 " + _NA_OK,
    "accelerator_interconnect": "accelerator-accelerator link, e.g. NVLink " + _NA_OK,
    "accelerator_interconnect_topology": "e.g. NVLink Switch " + _EMPTY_OK,
    "accelerator_memory_configuration": "e.g. HBM3e " + _NA_OK,
    "accelerator_on-chip_memories": "on-chip memories " + _EMPTY_OK,
    "cooling": "e.g. air-cooled",
    "hw_notes": "hardware notes " + _EMPTY_OK,
    "sw_notes": "software notes " + _EMPTY_OK,
    "host_network_card_count": "network cards, e.g. 8x 400Gb Infiniband",
    "system_type_detail": "e.g. cloud, on-premise " + _EMPTY_OK,
    "is_network": '"true" for a network-division system',
}
IMPLEMENTATION_HINTS: dict[str, str] = {
    "input_data_types": "input data types, e.g. int32 (token ids)",
    "retraining": "no, or yes with details",
    "starting_weights_filename": "the reference checkpoint the weights derive from, e.g. a Hugging Face URL",
    "weight_data_types": "weight data types, e.g. fp8",
    "weight_transformations": "e.g. quantization, or none",
}


def placeholder(hint: str) -> str:
    return f"{PLACEHOLDER_PREFIX}: {hint}>"


def is_placeholder(value: Any) -> bool:
    return isinstance(value, str) and value.startswith(PLACEHOLDER_PREFIX)


@dataclass
class HostFacts:
    """What this host shows, as system-description field -> value, and where each came from."""

    values: dict[str, Any] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def set(self, name: str, value: Any, source: str) -> None:
        self.values[name] = value
        self.sources[name] = source


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _cpuinfo_records(text: str) -> list[dict[str, str]]:
    records: list[dict[str, str]] = []
    for block in text.split("\n\n"):
        rec = {}
        for line in block.splitlines():
            key, sep, val = line.partition(":")
            if sep:
                rec[key.strip().lower()] = val.strip()
        if rec:
            records.append(rec)
    return records


def _probe_cpu(facts: HostFacts, proc: Path, sys_root: Path) -> None:
    text = _read(proc / "cpuinfo") or ""
    recs = [r for r in _cpuinfo_records(text) if "processor" in r]
    keys = ("model name", "cpu model", "hardware")
    model = next((r[k] for r in _cpuinfo_records(text) for k in keys if r.get(k)), "")
    if model:
        facts.set("host_processor_model_name", " ".join(model.split()), "/proc/cpuinfo")
    # sockets and cores per socket: /proc/cpuinfo (x86), else sysfs topology (also ARM)
    pairs = {(r["physical id"], r["core id"]) for r in recs if "physical id" in r and "core id" in r}
    source = "/proc/cpuinfo (physical id, core id)"
    if not pairs:
        source = "/sys/devices/system/cpu/cpu*/topology"
        for cpu in sorted((sys_root / "devices/system/cpu").glob("cpu[0-9]*")):
            pkg, core = _read(cpu / "topology/physical_package_id"), _read(cpu / "topology/core_id")
            if pkg is not None and core is not None:
                pairs.add((pkg.strip(), core.strip()))
    if pairs:
        sockets = len({p for p, _ in pairs})
        facts.set("host_processors_per_node", sockets, source)
        facts.set("host_processor_core_count", len(pairs) // sockets, source + ": cores per socket")
    max_khz = _read(sys_root / "devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
    if max_khz and max_khz.strip().isdigit():
        facts.set(
            "host_processor_frequency",
            f"{int(max_khz) / 1e6:.2f} GHz (max)",
            "/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq",
        )


def _probe_memory(facts: HostFacts, proc: Path) -> None:
    for line in (_read(proc / "meminfo") or "").splitlines():
        key, _, rest = line.partition(":")
        parts = rest.split()
        if key == "MemTotal" and parts and parts[0].isdigit():
            gib = int(parts[0]) / 1024**2
            text = f"{gib / 1024:.2f} TiB" if gib >= 1024 else f"{gib:.0f} GiB"
            facts.set(
                "host_memory_capacity", text, "/proc/meminfo MemTotal (usable, below the installed size)"
            )
            return


def _probe_os(facts: HostFacts) -> None:
    uname = platform.uname()
    name = ""
    with contextlib.suppress(OSError):
        name = platform.freedesktop_os_release().get("PRETTY_NAME", "")
    facts.set("operating_system", name or f"{uname.system} {uname.release}", "/etc/os-release PRETTY_NAME")
    stack = {
        "Python": platform.python_version(),
        "kernel": f"{uname.system} {uname.release} ({uname.machine})",
    }
    facts.set("other_software_stack", stack, "platform (add the framework's libraries, e.g. CUDA, PyTorch)")


def _probe_nvidia(facts: HostFacts, nvidia_smi: str | None) -> None:
    if not nvidia_smi:
        facts.notes.append("no accelerator probed (nvidia-smi not found): fill in the accelerator fields")
        return
    query = "--query-gpu=name,memory.total,driver_version"
    try:
        done = subprocess.run(
            [nvidia_smi, query, "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        facts.notes.append(f"nvidia-smi failed ({exc}): fill in the accelerator fields")
        return
    rows = [[c.strip() for c in line.split(",")] for line in done.stdout.splitlines() if line.strip()]
    rows = [r for r in rows if len(r) == 3]
    if done.returncode != 0 or not rows:
        facts.notes.append(
            f"nvidia-smi listed no GPU (exit {done.returncode}): fill in the accelerator fields"
        )
        return
    names = Counter(r[0] for r in rows)
    src = f"nvidia-smi {query}"
    facts.set("accelerators_per_node", len(rows), src)
    facts.set(
        "accelerator_model_name",
        " + ".join(f"{n}x {m}" if len(names) > 1 else m for m, n in names.items()),
        src,
    )
    mib = [int(r[1]) for r in rows if r[1].isdigit()]
    if mib and len(set(mib)) == 1:
        facts.set("accelerator_memory_capacity", f"{mib[0] / 1024:.0f} GiB", src + " (usable memory.total)")
    stack = dict(facts.values.get("other_software_stack") or {})
    stack["NVIDIA driver"] = rows[0][2]
    facts.values["other_software_stack"] = stack


def probe_host(
    proc: Path = Path("/proc"),
    sys_root: Path = Path("/sys"),
    nvidia_smi: str | None = None,
    gpus: bool = True,
) -> HostFacts:
    """Read this host's facts (nothing is written; nvidia-smi only when ``gpus``)."""
    facts = HostFacts()
    _probe_cpu(facts, proc, sys_root)
    _probe_memory(facts, proc)
    _probe_os(facts)
    if gpus:
        _probe_nvidia(facts, nvidia_smi if nvidia_smi is not None else shutil.which("nvidia-smi"))
    return facts


def system_fields(network: bool) -> list[str]:
    """The system description's fields in the schema's order (plus the network-mode ones)."""
    schema = load_schema(SYSTEM_SCHEMA)
    names: list[str] = list(schema["required"])
    if network:
        names += [f for f in schema["then"]["required"] if f not in names]
    return names


def read_sysinfo(path: Path) -> dict[str, Any]:
    data = read_input_json(path, "mlperf-sysinfo system description")  # a regular file, bounded
    if not isinstance(data, dict):
        raise UnusableInput("an mlperf-sysinfo system_desc.json is a JSON object", path=str(path))
    # mlperf-sysinfo writes "" for what it did not detect: those stay placeholders here
    return {k: v for k, v in data.items() if v not in ("", None, [], {})}


def field_errors(doc: dict[str, Any], schema: str) -> dict[str, list[str]]:
    by_field: dict[str, list[str]] = {}
    for err in schema_errors(doc, schema):
        where, _, msg = err.partition(": ")
        by_field.setdefault(where.split("/")[0], []).append(msg)
    return by_field


@dataclass
class Template:
    doc: dict[str, Any]
    to_fill: list[str]  # fields left as placeholders
    to_review: dict[str, str]  # probed / given field -> where its value came from
    notes: list[str]
    trial: list[str] = field(
        default_factory=list
    )  # fields given a trial value (--trial): a submission refuses them


def _trial_fill(doc: dict[str, Any]) -> list[str]:
    """``--trial``: every placeholder becomes the trial value, or the stated default where the schema takes only
    listed values or counts. Returns the fields filled so."""
    filled = [f for f, v in doc.items() if is_placeholder(v)]
    for f in filled:
        doc[f] = TRIAL_DEFAULTS.get(f, TRIAL_VALUE)
    return filled


def system_template(
    *,
    division: str,
    submitter: str | None,
    system_name: str | None,
    status: str | None,
    system_type: str | None,
    facts: HostFacts,
    sysinfo: dict[str, Any] | None = None,
    trial: bool = False,
) -> Template:
    network = division == "network"
    names = system_fields(network)
    doc: dict[str, Any] = {f: placeholder(_SYSTEM_HINTS.get(f, f.replace("_", " "))) for f in names}
    review: dict[str, str] = {}
    for f, v in facts.values.items():
        if f in doc:
            doc[f] = v
            review[f] = facts.sources[f]
    if "host_processor_model_name" in facts.values:
        doc["number_of_nodes"] = 1
        review["number_of_nodes"] = "this host (a single-node system)"
    for f, v in (sysinfo or {}).items():
        if f in doc:
            doc[f] = v
            review[f] = "mlperf-sysinfo system_desc.json"
    given = {"division": division, "submitter": submitter, "system_name": system_name, "status": status}
    given["system_type"] = system_type
    if network:
        given["is_network"] = "true"
    for f, v in given.items():
        if v is not None:
            doc[f] = v
            review.pop(f, None)
    # a probed or imported value the schema refuses goes back to a placeholder, with the reason
    notes = list(facts.notes)
    for f, msgs in field_errors(doc, SYSTEM_SCHEMA).items():
        if f in review:
            notes.append(f"{f}: {review.pop(f)} gave {doc[f]!r}, refused: {msgs[0]}")
            doc[f] = placeholder(_SYSTEM_HINTS.get(f, f.replace("_", " ")))
    filled = _trial_fill(doc) if trial else []
    to_fill = [f for f, v in doc.items() if is_placeholder(v)]
    return Template(doc, to_fill, review, notes, filled)


def implementation_template(given: dict[str, str | None], trial: bool = False) -> Template:
    doc: dict[str, Any] = {}
    for f, hint in IMPLEMENTATION_HINTS.items():
        v = given.get(f)
        doc[f] = v if v is not None else placeholder(hint)
    filled = _trial_fill(doc) if trial else []
    return Template(doc, [f for f, v in doc.items() if is_placeholder(v)], {}, [], filled)


def is_trial_value(value: Any) -> bool:
    return isinstance(value, str) and value.startswith(TRIAL_PREFIX)


def trial_fields(doc: dict[str, Any]) -> list[str]:
    """The fields of a description that hold a trial value (``init --trial``), in the file's order."""
    return [f for f, v in doc.items() if is_trial_value(v)]


def refuse_trial_values(
    system: Path | None, implementation: dict[str, Any] | None, source: Path | None
) -> None:
    """``--mode submission``: a description with trial values (``init --trial``) is a trial's, never a result's."""
    for what, doc, where in (
        ("system description", read_input_json(system, "system description") if system else None, system),
        ("implementation description", implementation, source),
    ):
        fields = trial_fields(doc) if isinstance(doc, dict) else []
        if fields:
            raise UnusableInput(
                f"--mode submission: the {what} holds {len(fields)} trial value(s) ({TRIAL_VALUE!r}, written by "
                f"`inference-audit init --trial`): {', '.join(fields)}; describe them (or run --mode submission-trial)",
                path=str(where) if where else None,
            )


@dataclass
class DescriptionCheck:
    """``init check FILE``: what a run would say about a description before it starts."""

    kind: str  # "system" or "implementation"
    errors: list[
        str
    ]  # refused by the schema (or, with ``submission``, trial values): the run would refuse it
    trial: list[str]  # fields with trial values: a submission-trial accepts them, a submission refuses them
    filled_by_run: list[str]  # implementation fields the file leaves out, which the run fills where it can


def description_kind(doc: dict[str, Any]) -> str:
    """An implementation description has only implementation fields (and extras); a system one has its names."""
    return "system" if {"system_name", "division", "submitter"} & doc.keys() else "implementation"


def check_description(path: Path, kind: str | None, submission: bool) -> DescriptionCheck:
    doc = read_input_json(path, "description")
    if not isinstance(doc, dict):
        raise UnusableInput("a system or implementation description is a JSON object", path=str(path))
    kind = kind or description_kind(doc)
    trial = trial_fields(doc)
    if kind == "system":
        errors = schema_errors(doc, SYSTEM_SCHEMA)
        left_out: list[str] = []
    else:
        # the run fills what it knows before it validates (loadgen_sut.package.implementation_description): only the
        # fields present are judged here, the missing ones are listed
        left_out = [f for f in IMPLEMENTATION_HINTS if f not in doc]
        errors = [e for e in schema_errors(doc, IMPLEMENTATION_SCHEMA) if "is a required property" not in e]
    if submission and trial:
        errors += [f"{f}: a trial value ({doc[f]!r}): --mode submission refuses it" for f in trial]
    return DescriptionCheck(kind, errors, trial, left_out)
