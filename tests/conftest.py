"""Shared test fixtures.

``shared_dir`` is the ``shared/`` folder beside the checkout (official v5.1 trees, verdicts and
reference material). Tests that need it are skipped when it is absent.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def find_shared() -> Path | None:
    env = os.environ.get("INFERENCE_AUDIT_SHARED")
    candidates = [Path(env)] if env else []
    candidates += [REPO.parent / "shared", REPO / "shared"]
    for c in candidates:
        if (c / "data" / "mlperf-inference-v5.1").is_dir():
            return c
    return None


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    found = find_shared()
    if found is None:
        pytest.skip("../shared (official v5.1 trees and verdicts) is not present")
    return found


@pytest.fixture(scope="session")
def v51_tree(shared_dir: Path) -> Path:
    return shared_dir / "data" / "mlperf-inference-v5.1"
