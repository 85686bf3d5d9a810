"""Run modes and LoadGen test modes (the harness's and LoadGen's names for what a run does).
"""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, ConfigDict

LOADGEN_DISTRIBUTION = "mlcommons-loadgen"
_NS_PER_MS = 1_000_000


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class RunMode(str, Enum):
    """What the user asked for on the command line."""

    PERFORMANCE = "performance"
    ACCURACY = "accuracy"
    SUBMISSION = "submission"
    # the whole submission flow (tests, tree, checker) with trial settings; never submittable
    SUBMISSION_TRIAL = "submission-trial"
    FIND_PEAK = "find-peak"

    @property
    def is_submission_flow(self) -> bool:
        return self in (RunMode.SUBMISSION, RunMode.SUBMISSION_TRIAL)


class TestMode(str, Enum):
    """One LoadGen test's mode (``mlperf_loadgen.TestMode``)."""

    PERFORMANCE_ONLY = "PerformanceOnly"
    ACCURACY_ONLY = "AccuracyOnly"
    FIND_PEAK_PERFORMANCE = "FindPeakPerformance"

    __test__ = False  # not a pytest class


