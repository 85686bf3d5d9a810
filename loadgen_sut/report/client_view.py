"""A test's client self-diagnostics read for the run page: each delay and CPU signal beside the CLIENT-BOUND
threshold it is judged against, and which one tripped.

The thresholds and the verdict are :mod:`loadgen_sut.client_diag`'s, imported: a signal "tripped" when
:func:`~loadgen_sut.client_diag.client_bound_reasons` gives a reason for the test's diagnostics holding that signal
alone (so the page marks exactly what the verdict judges). Why a signal was not judged (not measured, too few
samples, Offline's dispatch) is said in words beside it. "Not measured" is None throughout, never 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from checker.findings import Finding
from loadgen_sut.client_diag import MIN_COUNT, client_bound_reasons, lag_limit_ms
from loadgen_sut.record import CLIENT_BOUND_RULE, ClientDiagnostics, LagStats
from loadgen_sut.report.explain import PERF_TESTS
from loadgen_sut.report.run_data import RunView, TestView
from loadgen_sut.report.timeline_stats import LagOverTime, dispatch_lag_over_time
from loadgen_sut.settings import TestSettingsModel
from rules.models import Scenario

Outcome = Literal["CLIENT-BOUND", "within", "not judged", "not measured"]

LAG_WHAT = {
    "dispatch lag": "per sample (SUT timeline): LoadGen's issue → the request handed to the socket",
    "receive lag": "probe: a timerfd readable → the loop's callback for it ran (what a readable response waits)",
    "event-loop lag": "probe: the lateness of a timer re-armed on the loop",
}


@dataclass(frozen=True)
class LagRow:
    name: str  # "dispatch lag", "receive lag", "event-loop lag"
    stats: LagStats | None  # None (or count 0): not measured
    outcome: Outcome
    note: str  # why, in words

    @property
    def measured(self) -> bool:
        return self.stats is not None and self.stats.count > 0 and self.stats.p99_ms is not None


@dataclass(frozen=True)
class ClientView:
    """One test's diagnostics against the thresholds."""

    test: str
    diag: ClientDiagnostics
    settings: TestSettingsModel | None  # the test's read-back LoadGen settings (what the verdict was judged with)
    limit_ms: float  # the delay limit of this test
    limit_why: str  # what it is derived from
    judged: bool  # the run judges this test (performance, find-peak)
    lags: tuple[LagRow, ...]
    loop_cpu: Outcome
    reasons: tuple[str, ...]  # client_bound_reasons today (also for a test the run does not judge)
    recorded: Finding | None  # the run's RUN-CLIENT-BOUND finding of this test, as the run wrote it
    over_time: LagOverTime | None  # dispatch lag per time bin, from the timeline

    @property
    def client_bound(self) -> bool:
        return self.judged and bool(self.reasons)

    @property
    def disagrees(self) -> bool:
        """The thresholds of this version judge the test otherwise than the run's verdict did."""
        return self.judged and self.client_bound != (self.recorded is not None)


_ALONE = {"dispatch_lag": LagStats(), "receive_lag": None, "loop_lag": None, "loop_thread_cpu_fraction": None}


def _trips(diag: ClientDiagnostics, settings: TestSettingsModel | None, field: str) -> bool:
    """Whether the verdict's own function finds a reason in ``field`` alone."""
    only = diag.model_copy(update={**_ALONE, field: getattr(diag, field)})
    return bool(client_bound_reasons(only, settings))


def _lag_row(name: str, field: str, diag: ClientDiagnostics, settings: TestSettingsModel | None, limit_ms: float,
             judged: bool) -> LagRow:
    stats: LagStats | None = getattr(diag, field)
    measured = stats is not None and stats.count > 0 and stats.p99_ms is not None
    if not measured:
        why = {
            "dispatch_lag": "no sample was handed to a socket (an in-process engine has none)",
            "receive_lag": "no timerfd on this system (Linux only)",
            "loop_lag": "no probe ran",
        }[field]
        return LagRow(name, stats, "not measured", why)
    assert stats is not None and stats.p99_ms is not None
    over = stats.p99_ms >= limit_ms
    if judged and _trips(diag, settings, field):
        return LagRow(name, stats, "CLIENT-BOUND", f"p99 at or over the {limit_ms:.1f} ms limit")
    if not judged:
        return LagRow(name, stats, "not judged", f"only the {' and '.join(PERF_TESTS)} tests are judged"
                      + (f" (its p99 is at or over the {limit_ms:.1f} ms limit)" if over else ""))
    if field == "dispatch_lag" and settings is not None and settings.loadgen_scenario is Scenario.OFFLINE:
        return LagRow(name, stats, "not judged", "not judged in Offline: every sample arrives in one query and waits "
                      "for a concurrency slot by design")
    if field == "dispatch_lag" and stats.count < MIN_COUNT:
        return LagRow(name, stats, "not judged", f"reported, not judged: fewer than {MIN_COUNT} samples")
    slots = diag.wall_s * 1000.0 / diag.probe_interval_ms if diag.probe_interval_ms > 0 else 0.0
    if field != "dispatch_lag" and slots < MIN_COUNT:
        return LagRow(name, stats, "not judged", f"not judged: the test lasted fewer than {MIN_COUNT} probe intervals "
                      f"of {diag.probe_interval_ms:g} ms")
    return LagRow(name, stats, "within", f"p99 under the {limit_ms:.1f} ms limit")


def _recorded(view: RunView, test: str) -> Finding | None:
    return next((f for f in view.record.verdict.findings
                 if f.rule == CLIENT_BOUND_RULE and f.message.startswith(f"{test}: ")), None)


def client_view(view: RunView, t: TestView) -> ClientView | None:
    """The test's view; None when its record has no diagnostics (an older record, or the test did not run)."""
    diag = t.test.client
    if diag is None:
        return None
    settings = t.test.loadgen_settings  # what the run judged the test with (loadgen_sut.runner)
    limit_ms, why = lag_limit_ms(settings)
    judged = t.test.name in PERF_TESTS
    lags = tuple(
        _lag_row(name, field, diag, settings, limit_ms, judged)
        for name, field in (("dispatch lag", "dispatch_lag"), ("receive lag", "receive_lag"),
                            ("event-loop lag", "loop_lag"))
    )
    if diag.loop_thread_cpu_fraction is None:
        loop_cpu: Outcome = "not measured"
    elif not judged:
        loop_cpu = "not judged"
    else:
        loop_cpu = "CLIENT-BOUND" if _trips(diag, settings, "loop_thread_cpu_fraction") else "within"
    over_time = dispatch_lag_over_time(t.timeline.samples) if t.timeline is not None else None
    return ClientView(
        test=t.test.name,
        diag=diag,
        settings=settings,
        limit_ms=limit_ms,
        limit_why=why,
        judged=judged,
        lags=lags,
        loop_cpu=loop_cpu,
        reasons=tuple(client_bound_reasons(diag, settings)),
        recorded=_recorded(view, t.test.name),
        over_time=over_time,
    )
