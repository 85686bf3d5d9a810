"""MLPerf Inference round rules as versioned data.

The names below are imported on first use (PEP 562): ``import rules.cli`` for ``inference-audit rules --help`` must not
pay for the pydantic models (~0.2 s)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rules.models import (
        AccuracyTarget,
        Benchmark,
        Round,
        Scenario,
        ScenarioSet,
        Seeds,
        TokenLatencyLimit,
    )
    from rules.registry import (
        UnknownBenchmark,
        UnknownRound,
        find_benchmark,
        latest_round,
        list_rounds,
        load_round,
        normalize_round,
    )

__all__ = [
    "AccuracyTarget",
    "Benchmark",
    "Round",
    "Scenario",
    "ScenarioSet",
    "Seeds",
    "TokenLatencyLimit",
    "UnknownBenchmark",
    "UnknownRound",
    "find_benchmark",
    "latest_round",
    "list_rounds",
    "load_round",
    "normalize_round",
]


_HOME = {
    **dict.fromkeys(
        ("AccuracyTarget", "Benchmark", "Round", "Scenario", "ScenarioSet", "Seeds", "TokenLatencyLimit"), "rules.models"
    ),
    **dict.fromkeys(
        (
            "UnknownBenchmark", "UnknownRound", "find_benchmark", "latest_round", "list_rounds", "load_round",
            "normalize_round",
        ),
        "rules.registry",
    ),
}  # fmt: skip


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'rules' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
