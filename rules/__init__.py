"""MLPerf Inference round rules as versioned data."""

from rules.models import (
    AccuracyTarget,
    Benchmark,
    Round,
    Scenario,
    ScenarioSet,
    Seeds,
    TokenLatencyLimit,
)
from rules.registry import UnknownRound, latest_round, list_rounds, load_round, normalize_round

__all__ = [
    "AccuracyTarget",
    "Benchmark",
    "Round",
    "Scenario",
    "ScenarioSet",
    "Seeds",
    "TokenLatencyLimit",
    "UnknownRound",
    "latest_round",
    "list_rounds",
    "load_round",
    "normalize_round",
]
