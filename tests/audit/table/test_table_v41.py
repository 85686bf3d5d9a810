"""``inference-audit table`` on rows of the official v4.1 summary CSV (written by the v4.1 checker, inference tag v4.1,
on the published v4.1 tree; rows 587, 814 and 815 of that CSV, unchanged): the round is read from the version
column, and a CPU-only system's accelerators_per_node 'N/A', which the v4.1 checker copies from the system
description, is no count rather than a broken cell."""

from __future__ import annotations

from pathlib import Path

HEADER = (
    "Organization,Availability,Division,SystemType,SystemName,Platform,Model,MlperfModel,Scenario,Result,Accuracy,"
    "number_of_nodes,host_processor_model_name,host_processors_per_node,host_processor_core_count,"
    "accelerator_model_name,accelerators_per_node,Location,framework,operating_system,notes,compliance,errors,version,"
    "inferred,has_power,Units"
)
ROWS = (
    'Cisco,available,closed,"datacenter","Cisco UCS X210c M7 (2x L40S, TensorRT)",X210c_L40SX2_TRT,gptj-99,gptj-99,'
    'Server,1725.98,43.0605,1,"INTEL(R) XEON(R) PLATINUM 8562Y+",2,32,"NVIDIA L40S","2",'
    'closed/Cisco/results/X210c_L40SX2_TRT/gptj-99/Server,"TensorRT 10.2.0, CUDA 12.4","Ubuntu 22.04.4","",1,0,v4.1,0,'
    "False,Queries/s",
    'Quanta_Cloud_Technology,available,closed,"datacenter","1-node-2S-EMR-PyTorch",1-node-2S-EMR-PyTorch,resnet50,'
    'resnet,Server,22501.7,75.730,1,"Intel(R) Xeon(R) Platinum 8592+",2,64,"N/A","N/A",'
    'closed/Quanta_Cloud_Technology/results/1-node-2S-EMR-PyTorch/resnet50/Server,"PyTorch","Rocky Linux 9.2",'
    '"QuantaGrid D54X-1U",1,0,v4.1,0,False,Queries/s',
    'Quanta_Cloud_Technology,available,closed,"datacenter","1-node-2S-EMR-PyTorch",1-node-2S-EMR-PyTorch,resnet50,'
    'resnet,Offline,24491.1,75.730,1,"Intel(R) Xeon(R) Platinum 8592+",2,64,"N/A","N/A",'
    'closed/Quanta_Cloud_Technology/results/1-node-2S-EMR-PyTorch/resnet50/Offline,"PyTorch","Rocky Linux 9.2",'
    '"QuantaGrid D54X-1U",1,0,v4.1,0,False,Samples/s',
)


def test_official_v41_rows_have_no_error(audit, tmp_path: Path) -> None:
    path = tmp_path / "summary.csv"
    path.write_text("\n".join((HEADER, *ROWS)) + "\n", encoding="utf-8")
    run = audit("table", str(path))
    assert run.report is not None
    assert run.report["round"] == "v4.1"
    assert run.report["round_detection"].startswith("from the 'version' column")
    assert run.findings(severity="error") == [], run.out
    # gptj's tokens/s labelled Queries/s by the v4.1 checker's unit_dict: a warning that names the cause
    units = run.findings(rule="TABLE-UNITS")
    assert [f["severity"] for f in units] == ["warning"]
    assert "result_inferred_completed_tokens_per_second" in units[0]["message"]


def test_a_count_that_is_not_a_number_nor_na_is_still_named(audit, tmp_path: Path) -> None:
    path = tmp_path / "summary.csv"
    path.write_text("\n".join((HEADER, ROWS[1].replace('"N/A",closed', '"eight",closed'))) + "\n", encoding="utf-8")
    run = audit("table", str(path))
    assert [f["message"] for f in run.findings(rule="TABLE-VALUE")] == [
        "row 1 (Quanta_Cloud_Technology 1-node-2S-EMR-PyTorch resnet Server): column 'accelerators_per_node': "
        "'eight' is not an integer"
    ]
