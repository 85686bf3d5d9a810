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
