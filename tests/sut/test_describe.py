"""``inference-audit init system|implementation``: templates the schema refuses until they are filled in."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from checker.findings import UnusableInput
from loadgen_sut.cli import main
from loadgen_sut.describe import (
    TRIAL_VALUE,
    HostFacts,
    implementation_template,
    is_placeholder,
    probe_host,
    refuse_trial_values,
    system_template,
    trial_fields,
)
from schemas import schema_errors

CPUINFO = "".join(
    f"processor\t: {i}\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 9575F 64-Core Processor\n"
    f"physical id\t: {i // 4}\ncore id\t\t: {(i % 4) // 2}\n\n"
    for i in range(8)
)
MEMINFO = "MemTotal:       2113241088 kB\nMemFree:        1000 kB\n"


def _fake_host(tmp_path: Path, gpus: str | None) -> tuple[Path, Path, str | None]:
    proc, sys_root = tmp_path / "proc", tmp_path / "sys"
    proc.mkdir()
    sys_root.mkdir()
    (proc / "cpuinfo").write_text(CPUINFO)
    (proc / "meminfo").write_text(MEMINFO)
    smi = None
    if gpus is not None:
        smi_path = tmp_path / "nvidia-smi"
        smi_path.write_text(f"#!/bin/sh\ncat <<'EOF'\n{gpus}EOF\n")
        smi_path.chmod(0o755)
        smi = str(smi_path)
    return proc, sys_root, smi


def test_probe_reads_cpu_memory_and_gpus(tmp_path: Path) -> None:
    proc, sys_root, smi = _fake_host(tmp_path, "NVIDIA H200, 143771, 570.124.06\n" * 8)
    facts = probe_host(proc, sys_root, nvidia_smi=smi)
    v = facts.values
    assert v["host_processor_model_name"] == "AMD EPYC 9575F 64-Core Processor"
    assert v["host_processors_per_node"] == 2
    assert v["host_processor_core_count"] == 2  # 2 distinct cores per socket in the fake cpuinfo
    assert v["host_memory_capacity"] == "1.97 TiB"
    assert v["accelerators_per_node"] == 8
    assert v["accelerator_model_name"] == "NVIDIA H200"
    assert v["accelerator_memory_capacity"] == "140 GiB"
    assert v["other_software_stack"]["NVIDIA driver"] == "570.124.06"
    assert "Python" in v["other_software_stack"]
    assert all(f in facts.sources for f in v)


def test_probe_without_nvidia_smi_leaves_accelerators_to_fill(tmp_path: Path) -> None:
    proc, sys_root, _ = _fake_host(tmp_path, None)
    facts = probe_host(proc, sys_root, nvidia_smi="", gpus=True)
    assert "accelerators_per_node" not in facts.values
    assert any("nvidia-smi" in n for n in facts.notes)
    tpl = system_template(
        division="closed", submitter="ACME", system_name=None, status=None, system_type=None, facts=facts
    )
    assert {"accelerators_per_node", "accelerator_model_name", "system_name", "status"} <= set(tpl.to_fill)


def _fill(doc: dict[str, Any]) -> dict[str, Any]:
    fills = {
        "accelerators_per_node": "0",
        "number_of_nodes": "1",
        "status": "available",
        "system_type": "datacenter",
    }
    return {k: (fills.get(k, "filled in") if is_placeholder(v) else v) for k, v in doc.items()}


def test_template_is_refused_until_filled_and_names_the_fields(tmp_path: Path) -> None:
    proc, sys_root, smi = _fake_host(tmp_path, "NVIDIA H200, 143771, 570.124.06\n")
    facts = probe_host(proc, sys_root, nvidia_smi=smi)
    tpl = system_template(
        division="closed", submitter="ACME", system_name="X1", status=None, system_type=None, facts=facts
    )
    errors = schema_errors(tpl.doc, "system-description")
    refused = {e.split(":", 1)[0] for e in errors}
    assert refused == set(tpl.to_fill)
    assert "status" in refused and "cooling" in refused and "framework" in refused
    assert "host_processor_model_name" not in refused and "submitter" not in refused
    assert schema_errors(_fill(tpl.doc), "system-description") == []


def test_network_division_template_asks_for_the_network_fields() -> None:
    tpl = system_template(
        division="network",
        submitter="ACME",
        system_name="X1",
        status="available",
        system_type="datacenter",
        facts=HostFacts(),
    )
    assert tpl.doc["is_network"] == "true"
    assert "network_topology" in tpl.to_fill
    assert schema_errors(_fill(tpl.doc), "system-description") == []


def test_a_refused_sysinfo_value_goes_back_to_a_placeholder() -> None:
    sysinfo = {"accelerators_per_node": "1.0", "cooling": "air", "host_storage_type": "NVMe"}
    tpl = system_template(
        division="closed",
        submitter="ACME",
        system_name="X1",
        status="available",
        system_type="edge",
        facts=HostFacts(),
        sysinfo=sysinfo,
    )
    assert tpl.doc["cooling"] == "air" and tpl.doc["host_storage_type"] == "NVMe"
    assert is_placeholder(tpl.doc["accelerators_per_node"])
    assert any(n.startswith("accelerators_per_node:") for n in tpl.notes)


def test_cli_init_system_writes_and_lists_fields(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sys.json"
    rc = main(
        ["init", "system", "--out", str(out), "--submitter", "ACME", "--system-name", "X1", "--no-gpu-probe"]
    )
    assert rc == 0
    doc = json.loads(out.read_text())
    assert doc["submitter"] == "ACME" and doc["division"] == "closed" and doc["system_name"] == "X1"
    err = capsys.readouterr().err
    assert "fill in" in err and "  cooling\n" in err and "  framework\n" in err
    assert schema_errors(doc, "system-description")  # unfilled: refused
    # with --from-sysinfo (a system_desc.json of `mlperf-sysinfo capture`: "" where it detected nothing)
    si = tmp_path / "system_desc.json"
    si.write_text(json.dumps({"cooling": "air", "framework": "", "mlperf_sysinfo": {"version": "1"}}))
    out2 = tmp_path / "sys2.json"
    assert main(["init", "system", "--out", str(out2), "--from-sysinfo", str(si), "--no-gpu-probe"]) == 0
    doc2 = json.loads(out2.read_text())
    assert doc2["cooling"] == "air" and is_placeholder(doc2["framework"]) and "mlperf_sysinfo" not in doc2


def test_cli_init_implementation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "impl.json"
    assert main(["init", "implementation", "--out", str(out), "--weight-data-types", "fp8"]) == 0
    doc = json.loads(out.read_text())
    assert doc["weight_data_types"] == "fp8"
    refused = {e.split(":", 1)[0] for e in schema_errors(doc, "measurements")}
    assert refused == {
        "input_data_types",
        "retraining",
        "starting_weights_filename",
        "weight_transformations",
    }
    assert "  retraining\n" in capsys.readouterr().err
    rc = main(
        ["init", "implementation", "--out", str(tmp_path / "bad.json"), "--weight-data-types", 'fp8 "x"']
    )
    assert rc == 2 and not (tmp_path / "bad.json").exists()
    assert "weight-data-types" in capsys.readouterr().err


def test_cli_init_to_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", "implementation", "--out", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["retraining"].startswith("<FILL IN")


def test_cli_refuses_existing_directory_fifo_and_device(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    existing = tmp_path / "system.json"
    existing.write_text("keep me")
    assert main(["init", "system", "--out", str(existing), "--no-gpu-probe"]) == 2
    assert existing.read_text() == "keep me"
    assert "--force" in capsys.readouterr().err
    assert main(["init", "system", "--out", str(existing), "--no-gpu-probe", "--force"]) == 0
    assert json.loads(existing.read_text())["division"] == "closed"

    assert main(["init", "system", "--out", str(tmp_path), "--no-gpu-probe", "--force"]) == 2
    assert "is a directory" in capsys.readouterr().err

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert main(["init", "implementation", "--out", str(fifo), "--force"]) == 2
    assert "not a regular file" in capsys.readouterr().err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)

    if Path("/dev/null").exists():
        assert main(["init", "implementation", "--out", "/dev/null", "--force"]) == 2
        assert "not a regular file" in capsys.readouterr().err

    assert main(["init", "implementation", "--out", str(tmp_path / "no" / "such" / "dir.json")]) == 2
    assert "does not exist" in capsys.readouterr().err

    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(tmp_path / "nowhere")
    assert main(["init", "implementation", "--out", str(dangling), "--force"]) == 2
    assert not (tmp_path / "nowhere").exists()


def test_cli_bad_options_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["init", "system", "--division", "Closed"])
    assert exc.value.code == 2
    assert (
        main(["init", "system", "--out", str(tmp_path / "s.json"), "--submitter", " ", "--no-gpu-probe"]) == 2
    )
    assert "--submitter" in capsys.readouterr().err
    assert main(["init", "system", "--out", str(tmp_path / "s.json"), "--from-sysinfo", str(tmp_path)]) == 2
    assert (
        main(["init", "system", "--out", str(tmp_path / "s.json"), "--from-sysinfo", str(tmp_path / "x")])
        == 2
    )
    assert not (tmp_path / "s.json").exists()


def test_trial_template_is_accepted_and_every_trial_value_is_named(tmp_path: Path) -> None:
    proc, sys_root, _ = _fake_host(tmp_path, None)
    facts = probe_host(proc, sys_root, nvidia_smi="", gpus=True)
    tpl = system_template(
        division="closed",
        submitter="ACME",
        system_name="X1",
        status=None,
        system_type=None,
        facts=facts,
        trial=True,
    )
    assert tpl.to_fill == [] and schema_errors(tpl.doc, "system-description") == []
    # the fields a schema takes only listed values or counts in get the stated default; the rest the trial value
    assert (tpl.doc["status"], tpl.doc["system_type"], tpl.doc["accelerators_per_node"]) == (
        "available",
        "datacenter",
        "0",
    )
    assert tpl.doc["cooling"] == TRIAL_VALUE and tpl.doc["accelerator_model_name"] == TRIAL_VALUE
    assert tpl.doc["host_processor_model_name"] == "AMD EPYC 9575F 64-Core Processor"  # probed values stay
    assert set(trial_fields(tpl.doc)) == set(tpl.trial) - {"status", "system_type", "accelerators_per_node"}
    impl = implementation_template({"weight_data_types": "bf16"}, trial=True)
    assert impl.doc["weight_data_types"] == "bf16" and impl.doc["retraining"] == TRIAL_VALUE
    assert schema_errors(impl.doc, "measurements") == []


def test_hints_say_which_fields_may_be_empty() -> None:
    tpl = system_template(
        division="closed", submitter="A", system_name="X", status=None, system_type=None, facts=HostFacts()
    )
    empty_ok = [f for f, v in tpl.doc.items() if is_placeholder(v) and 'may be an empty string' in v]
    na_ok = [f for f, v in tpl.doc.items() if is_placeholder(v) and "N/A if there is none; not empty" in v]
    filled = {f: ("" if f in empty_ok else "N/A") for f in empty_ok + na_ok}
    doc = {**_fill(tpl.doc), **filled}
    assert (
        schema_errors(doc, "system-description") == []
    )  # "" where the hint says so, N/A elsewhere: accepted
    assert {
        e.split(":", 1)[0] for e in schema_errors({**doc, **dict.fromkeys(na_ok, "")}, "system-description")
    } == set(na_ok)


def test_cli_init_trial_and_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    system, impl = tmp_path / "box.json", tmp_path / "impl.json"
    assert (
        main(
            [
                "init",
                "system",
                "--trial",
                "--submitter",
                "ACME",
                "--system-name",
                "X1",
                "--no-gpu-probe",
                "--out",
                str(system),
            ]
        )
        == 0
    )
    assert main(["init", "implementation", "--trial", "--out", str(impl)]) == 0
    err = capsys.readouterr().err
    assert "set for the trial: status=available" in err and "schemas/system-description.json: valid" in err
    assert main(["init", "check", str(system)]) == 0
    out = capsys.readouterr().out
    assert "system description: accepted by --mode submission-trial" in out and "trial value(s)" in out
    assert main(["init", "check", str(impl), "--submission"]) == 1
    out = capsys.readouterr().out
    assert "retraining: a trial value" in out and out.rstrip().endswith(
        "--mode submission refuses it (exit 1)"
    )
    placeholders = tmp_path / "p.json"
    assert main(["init", "system", "--submitter", "ACME", "--no-gpu-probe", "--out", str(placeholders)]) == 0
    capsys.readouterr()
    assert main(["init", "check", str(placeholders)]) == 1
    assert "cooling: still the template placeholder" in capsys.readouterr().out
    partial = tmp_path / "w.json"
    partial.write_text('{"weight_data_types": "bf16"}')
    assert main(["init", "check", str(partial)]) == 0
    assert "filled by the run where it knows them: input_data_types: int32" in capsys.readouterr().out
    assert main(["init", "check", str(tmp_path / "missing.json")]) == 2
    (tmp_path / "list.json").write_text("[]")
    assert main(["init", "check", str(tmp_path / "list.json")]) == 2


def test_a_submission_refuses_trial_values_naming_them(tmp_path: Path) -> None:
    system = tmp_path / "box.json"
    system.write_text(json.dumps({"division": "closed", "cooling": TRIAL_VALUE, "hw_notes": ""}))
    with pytest.raises(UnusableInput, match=r"1 trial value\(s\).*: cooling;") as exc:
        refuse_trial_values(system, None, None)
    assert exc.value.path == str(system)
    with pytest.raises(UnusableInput, match="implementation description holds 1 trial value"):
        refuse_trial_values(None, {"retraining": TRIAL_VALUE}, tmp_path / "impl.json")
    system.write_text(json.dumps({"division": "closed", "cooling": "air"}))
    refuse_trial_values(system, {"retraining": "no"}, None)  # described: accepted
