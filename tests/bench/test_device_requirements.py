"""bench/device/requirements.py: the device scripts install, and fetch_wheels.sh carries, what pyproject.toml lists.

The device machine cannot reach PyPI: a dependency that is neither carried as a wheel nor in its image fails the
offline install of the one device call (msgspec did, until the list came from pyproject.toml)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import tomllib
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "bench" / "device" / "requirements.py"


def _module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("device_requirements", SCRIPT)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _names(lines: list[str]) -> set[str]:
    return {canonicalize_name(Requirement(line).name) for line in lines}


def test_every_dependency_is_installed_and_carried_or_in_the_image() -> None:
    mod = _module()
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    reqs = mod.requirements()
    assert _names(reqs) == _names(deps)
    assert (
        "mlcommons-loadgen==6.0.*" in reqs
    )  # the series the carried wheels hold, not pyproject's open range
    fetched = mod.to_fetch(reqs)
    assert _names(deps) - mod.IMAGE_CARRIES <= _names(fetched)
    assert "msgspec" in _names(fetched)
    assert not (_names(fetched) & mod.IMAGE_CARRIES)


def test_unsatisfied_names_each_missing_or_mismatched_requirement() -> None:
    mod = _module()
    assert mod.unsatisfied(["no-such-distribution-xyz>=1"]) == ["no-such-distribution-xyz>=1 (not installed)"]
    have = mod.version("pytest")
    assert mod.unsatisfied(["pytest<1"]) == [f"pytest<1 (installed: {have})"]
    assert mod.unsatisfied(["pytest>=1"]) == []
    assert mod.unsatisfied(["no-such-distribution-xyz; sys_platform == 'no-such-platform'"]) == []


def test_check_passes_where_the_project_is_installed() -> None:
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
