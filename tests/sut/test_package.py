"""The submission tree: the round's official layout, passes the checker's structure checks, atomic, never overwrites."""

from __future__ import annotations

import errno
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from sut_helpers import sim_engine, trial

from checker.engine import check_tree
from checker.findings import Severity, UnusableInput
from loadgen_sut.mlperf_conf import compiled_mlperf_conf
from loadgen_sut.package import PackageRequest, package_run, plan_package
from loadgen_sut.package_docs import simulated_system_description
from loadgen_sut.package_files import truncate_accuracy_log
from loadgen_sut.runner import RunOutcome
from loadgen_sut.settings import RunMode
from rules import load_round

# What a short simulated trial legitimately fails on: durations/counts, and accuracy on a
# 32-sample built-in set. Every other check family (tree, system, measurements, compliance,
# seeds, token latencies, hashes, file lists, log errors) must pass on the produced tree.
EXPECTED_TRIAL_RULES = {"PERF-MIN-DURATION", "PERF-OFFLINE-SPQ", "ACC-METRIC", "ACC-UPPER", "ACC-DATASET", "ACC-SAMPLES"}


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
        # v6.x layout: TEST06 and the measurement files inside the result directory (HEAD checker MEASUREMENTS_PATH)
        assert (res / "TEST06" / "verify_accuracy.txt").is_file()
        assert (res / "TEST06" / "accuracy" / "mlperf_log_accuracy.json").is_file()
        assert {p.name for p in res.iterdir() if p.is_file()} == {"user.conf", "mlperf.conf", "README.md", "measurements.json"}
        assert "SIMULATED" in (res / "README.md").read_text(encoding="utf-8")
        # the mlperf.conf LoadGen compiled in, byte for byte: no user.conf override leaks into it
        conf = (res / "mlperf.conf").read_text(encoding="utf-8")
        assert conf == compiled_mlperf_conf()
        assert "min_query_count = 32" not in conf and "qsl_rng_seed" in conf
        assert "None" not in (res / "README.md").read_text(encoding="utf-8")
    assert not (sub / "measurements").exists() and not (sub / "compliance").exists()
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


def test_v5_layout(tmp_path: Path) -> None:
    """v5.1 keeps measurements/ and compliance/ trees, <system>_<scenario>.json and code/ (v5.1.1 checker paths)."""
    out = trial(tmp_path, sim_engine(), scenario="Offline", mode=RunMode.SUBMISSION_TRIAL, round_name="v5.1")
    tree = tmp_path / "tree"
    _package(out, tree)
    sub = tree / "closed" / "Demo"
    meas = sub / "measurements" / "simulated_system" / "llama3.1-8b" / "Offline"
    assert {p.name for p in meas.iterdir()} == {"user.conf", "mlperf.conf", "README.md", "simulated_system_Offline.json"}
    comp = sub / "compliance" / "simulated_system" / "llama3.1-8b" / "Offline" / "TEST06"
    assert (comp / "verify_accuracy.txt").is_file() and (comp / "accuracy" / "mlperf_log_accuracy.json").is_file()
    res = sub / "results" / "simulated_system" / "llama3.1-8b" / "Offline"
    assert sorted(p.name for p in res.iterdir()) == ["accuracy", "performance"]
    assert (sub / "code" / "llama3.1-8b" / "README.md").is_file()
    report = check_tree(tree, load_round("v5.1"), workers=1)
    rules = {f.rule for r in report.results for f in r.findings} | {f.rule for f in report.findings}
    layout = ("MEAS-DIR", "MEAS-FILES", "MEAS-JSON", "MEAS-CODE", "TREE-UNKNOWN", "TREE-OTHER", "COMPL-DIR", "COMPL-TEST")
    assert not {r for r in rules if r.startswith(layout)}
    # this v5.1 trial ran on the installed LoadGen (a v6.1 release): its mlperf.conf copy is not v5.1's, and says so
    assert "MEAS-MLPERF-CONF" in rules


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")) if root.exists() else []


def test_failed_packaging_leaves_nothing_and_a_rerun_works(
    trial_tree: tuple[Path, list[RunOutcome]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Disk full while staging, Ctrl-C while moving into place: no partial tree, no staging left, rerun works."""
    _, outs = trial_tree
    tree = tmp_path / "tree"
    real_copy = shutil.copyfileobj
    calls = {"n": 0}

    def full_disk(src: Any, dst: Any, *args: Any) -> None:
        calls["n"] += 1
        if calls["n"] == 4:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_copy(src, dst, *args)

    monkeypatch.setattr(shutil, "copyfileobj", full_disk)
    with pytest.raises(UnusableInput, match="nothing was written"):
        _package(outs[0], tree)
    monkeypatch.setattr(shutil, "copyfileobj", real_copy)
    assert _files(tree) == [] and _files(tmp_path) == []  # no tree, no staging directory beside it

    real_link = os.link

    def interrupted(src: object, dst: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "link", interrupted)  # the result directory moved, then Ctrl-C on the first file
    with pytest.raises(KeyboardInterrupt):
        _package(outs[0], tree)
    monkeypatch.setattr(os, "link", real_link)
    assert _files(tree) == [] and [p.name for p in tmp_path.iterdir()] == []

    result = _package(outs[0], tree)  # the rerun works
    assert (result / "measurements.json").is_file()
    assert [p.name for p in tmp_path.iterdir()] == ["tree"]


def test_missing_implementation_fields_are_refused_before_the_run(tmp_path: Path) -> None:
    """A real engine that does not report its weights' precision: refused before the first query, fields named."""
    rnd = load_round("v6.1")
    system = tmp_path / "box.json"
    system.write_text(json.dumps(simulated_system_description("closed", "Demo", rnd.system.required_fields)), encoding="utf-8")
    req = PackageRequest(tree=tmp_path / "t", division="closed", submitter="Demo", system_json=system)
    with pytest.raises(UnusableInput) as exc:
        plan_package(req, rnd, "llama3.1-8b", "Offline", simulated=False, model="served-model")
    assert "weight_data_types" in str(exc.value) and "--implementation-json" in str(exc.value)
    assert "init implementation" in str(exc.value)


@pytest.mark.parametrize("kind", ["file-link", "dir-link", "fifo"])
def test_package_copies_only_regular_files_inside_the_run(
    trial_tree: tuple[Path, list[RunOutcome]], tmp_path: Path, kind: str
) -> None:
    """A symbolic link inside the run directory (to a file, or a test's subdirectory leading out of it) is never
    followed: the file outside is not copied into the tree; a FIFO is refused without blocking."""
    _, outs = trial_tree
    run_dir = tmp_path / "run"
    shutil.copytree(outs[0].run_dir, run_dir, symlinks=True)
    secret = tmp_path / "secret.txt"
    secret.write_text("outside the run")
    perf = run_dir / next(t.directory for t in outs[0].record.tests if t.name == "performance")
    if kind == "file-link":
        target = perf / "mlperf_log_summary.txt"
        target.unlink()
        target.symlink_to(secret)
        why = "symbolic link"
    elif kind == "dir-link":
        tests = {t.name: t for t in outs[0].record.tests}
        test = next(n for n in ("TEST06", "TEST07", "TEST09", "TEST01") if n in tests)
        verification = run_dir / tests[test].directory / "verification"
        outside = tmp_path / "elsewhere"
        shutil.copytree(verification, outside) if verification.is_dir() else outside.mkdir()
        shutil.rmtree(verification, ignore_errors=True)
        verification.symlink_to(outside)
        why = "outside the run directory"
    else:
        target = perf / "mlperf_log_summary.txt"
        target.unlink()
        os.mkfifo(target)
        why = "not a regular file"
    tree = tmp_path / "tree"
    rnd = load_round(outs[0].record.round)
    req = PackageRequest(tree=tree, division="closed", submitter="Demo", system_json=None)
    with pytest.raises(UnusableInput, match=why):
        package_run(outs[0].record, run_dir, rnd, req)
    assert not any(p.read_bytes() == b"outside the run" for p in tmp_path.rglob("*") if p.is_file() and tree in p.parents)
    assert _files(tree) == []
