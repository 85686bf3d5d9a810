"""The submission tree: official layout, passes the checker's structure checks, never overwrites."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sut_helpers import sim_engine, trial

from checker.engine import check_tree
from checker.findings import Severity, UnusableInput
from loadgen_sut.package import PackageRequest, package_run, truncate_accuracy_log
from loadgen_sut.runner import RunOutcome
from loadgen_sut.settings import RunMode
from rules import load_round

# What a short simulated trial legitimately fails on: durations/counts, and accuracy on a
# 32-sample built-in set. Every other check family (tree, system, measurements, compliance,
# seeds, token latencies, hashes, file lists, log errors) must pass on the produced tree.
EXPECTED_TRIAL_RULES = {"PERF-MIN-DURATION", "PERF-OFFLINE-SPQ", "ACC-METRIC", "ACC-UPPER", "ACC-DATASET"}


def _package(out: RunOutcome, tree: Path, **kw: object) -> Path:
    rnd = load_round(out.record.round)
    req = PackageRequest(tree=tree, division="closed", submitter="Demo", system_json=None, **kw)  # type: ignore[arg-type]
    return package_run(out.record, out.run_dir, rnd, req).result_dir


@pytest.fixture(scope="module")
def trial_tree(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[RunOutcome]]:
    base = tmp_path_factory.mktemp("pkg")
    outs = [
        trial(base / s, sim_engine(), scenario=s, mode=RunMode.SUBMISSION_TRIAL) for s in ("Offline", "Server")
    ]
    tree = base / "tree"
    for out in outs:
        _package(out, tree)
    return tree, outs


def test_layout_is_the_official_tree(trial_tree: tuple[Path, list[RunOutcome]]) -> None:
    tree, outs = trial_tree
    sub = tree / "closed" / "Demo"
    for scen in ("Offline", "Server"):
        res = sub / "results" / "simulated_system" / "llama3.1-8b" / scen
        assert sorted(p.name for p in (res / "performance" / "run_1").iterdir()) == [
            "mlperf_log_detail.txt",
            "mlperf_log_summary.txt",
        ]
        acc = res / "accuracy"
        assert {p.name for p in acc.iterdir()} == {
            "accuracy.txt",
            "mlperf_log_accuracy.json",
            "mlperf_log_detail.txt",
            "mlperf_log_summary.txt",
        }
        # v6.x layout: TEST06 inside the result directory
        assert (res / "TEST06" / "verify_accuracy.txt").is_file()
        assert (res / "TEST06" / "accuracy" / "mlperf_log_accuracy.json").is_file()
        meas = sub / "measurements" / "simulated_system" / "llama3.1-8b" / scen
        assert {p.name for p in meas.iterdir()} == {
            "user.conf",
            "mlperf.conf",
            "README.md",
            f"simulated_system_{scen}.json",
        }
        assert "SIMULATED" in (meas / "README.md").read_text(encoding="utf-8")
        assert "qsl_rng_seed" in (meas / "mlperf.conf").read_text(encoding="utf-8")
    system = json.loads((sub / "systems" / "simulated_system.json").read_text(encoding="utf-8"))
    assert "SIMULATED" in system["system_name"] and system["division"] == "closed"
    assert (sub / "documentation" / "calibration.md").is_file()
    assert (sub / "src" / "llama3.1-8b" / "README.md").is_file()  # code dir is src/ from v6.x
    assert all(o.record.verdict.status == "NOT_SUBMITTABLE" for o in outs)


def test_tree_passes_the_checker_structure_checks(trial_tree: tuple[Path, list[RunOutcome]]) -> None:
    tree, _ = trial_tree
    report = check_tree(tree, load_round("v6.1"), workers=1)
    assert len(report.results) == 2
    errors = {f.rule for f in report.findings if f.severity is Severity.ERROR}
    for r in report.results:
        errors |= {f.rule for f in r.findings if f.severity is Severity.ERROR}
    # tree-level "required scenario" errors follow from the invalid results, nothing else
    unexpected = errors - EXPECTED_TRIAL_RULES - {"TREE-REQUIRED-SCENARIOS", "TREE-SERVER-OR-INTERACTIVE"}
    assert unexpected == set(), unexpected
    assert "PERF-MIN-DURATION" in errors  # the checker sees the trial settings


def test_packaging_never_overwrites(trial_tree: tuple[Path, list[RunOutcome]]) -> None:
    tree, outs = trial_tree
    before = (tree / "closed" / "Demo" / "systems" / "simulated_system.json").read_bytes()
    with pytest.raises(UnusableInput, match="not overwriting"):
        _package(outs[0], tree)
    other = tree.parent / "sys.json"
    desc = json.loads(before)
    desc["system_name"] = "another"
    other.write_text(json.dumps(desc), encoding="utf-8")
    # a different description under an existing system name is refused (before any result is copied)
    fresh = tree.parent / "tree2"
    fresh_sys = fresh / "closed" / "Demo" / "systems" / "simulated_system.json"
    fresh_sys.parent.mkdir(parents=True)
    fresh_sys.write_bytes(before)
    with pytest.raises(UnusableInput, match="not overwriting"):
        package_run(
            outs[0].record,
            outs[0].run_dir,
            load_round("v6.1"),
            PackageRequest(tree=fresh, division="closed", submitter="Demo", system_json=other, system_name="simulated_system"),
        )
    assert fresh_sys.read_bytes() == before
    assert not (fresh / "closed" / "Demo" / "results").exists()
    assert (tree / "closed" / "Demo" / "systems" / "simulated_system.json").read_bytes() == before


def test_invalid_system_description_is_rejected(trial_tree: tuple[Path, list[RunOutcome]], tmp_path: Path) -> None:
    _, outs = trial_tree
    bad = tmp_path / "box.json"
    bad.write_text(json.dumps({"division": "closed", "submitter": "Demo", "status": "available"}), encoding="utf-8")
    with pytest.raises(UnusableInput, match="invalid system description") as exc:
        package_run(
            outs[0].record,
            outs[0].run_dir,
            load_round("v6.1"),
            PackageRequest(tree=tmp_path / "t", division="closed", submitter="Demo", system_json=bad),
        )
    assert "box.json" in str(exc.value) and "system_name" in str(exc.value)


def test_accuracy_log_truncation_matches_official_tool(tmp_path: Path) -> None:
    src = tmp_path / "big.json"
    src.write_bytes(b"[\n" + b"x" * 20000 + b"\n]\n")
    dst = tmp_path / "t.json"
    assert truncate_accuracy_log(src, dst, 10240)
    data = dst.read_bytes()
    assert data == src.read_bytes()[:4096] + b"\n\n...\n\n" + src.read_bytes()[-4096:]
    small = tmp_path / "s.json"
    small.write_bytes(b"[]\n")
    assert not truncate_accuracy_log(small, tmp_path / "s2.json", 10240)
