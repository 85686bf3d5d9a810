"""Checks before a run: the installed LoadGen release against the round's, the overrides a mode allows, and
the one-line description of the gates a run is judged by.
"""

from __future__ import annotations

import importlib.metadata

from checker.checks.rule_registry import RuleInfo, register, registered_finding
from checker.findings import Finding, Severity
from loadgen_sut.settings.modes import _NS_PER_MS, LOADGEN_DISTRIBUTION, RunMode
from loadgen_sut.settings.plan import PlannedSettings
from rules.models import Round, Scenario

RULES = register(
    __name__,
    RuleInfo("RUN-LOADGEN-MISSING", "-", "the LoadGen package (mlcommons-loadgen) is not installed"),
    RuleInfo(
        "RUN-LOADGEN-VERSION", "-", "the installed LoadGen is not a release of the round (WARNING outside --mode "
        "submission)",
    ),
    RuleInfo(
        "RUN-CONF-NONCOMPLIANT", "-", "a user.conf override of a setting the rules fix (WARNING outside --mode "
        "submission: a trial, not a result)",
        fix="remove the line for a submission run (fine for performance/accuracy trials)",
    ),
)

# --------------------------------------------------------------------------------------------
# pre-run checks


def installed_loadgen_version() -> str | None:
    try:
        return importlib.metadata.version(LOADGEN_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return None


def _accepted_text(entry: str) -> str:
    """``"6.0."`` (a series) -> ``"6.0.x"``; ``"6.0.15"`` (one release) stays as it is."""
    return f"{entry}x" if entry.endswith(".") else entry


def _pip_requirement(entry: str) -> str:
    """The pip requirement installing an accepted entry: ``==6.0.*`` for a series, ``==6.0.15`` for a release."""
    return f"{LOADGEN_DISTRIBUTION}=={entry}*" if entry.endswith(".") else f"{LOADGEN_DISTRIBUTION}=={entry}"


def loadgen_version_findings(rnd: Round, installed: str | None) -> list[Finding]:
    """The installed LoadGen must be a release of the round (``Round.loadgen_runs``; else ``loadgen_versions``).

    A release carries one round's compiled mlperf.conf (seeds, gates, model keys): another round's release runs,
    but with the wrong seeds. The refusal names the release to install.
    """
    runs = rnd.loadgen_runs
    if runs is not None:
        fix: str | None = f"pip install '{runs.pip_requirement}'"
        accepted = runs.accepts(installed) if installed is not None else False
        want = (
            f"{runs.releases[0]}-{runs.releases[-1]}" if len(runs.releases) > 2 else ", ".join(runs.releases)
        )
        cite = runs.cite
    else:
        fix = f"pip install '{_pip_requirement(rnd.loadgen_versions[-1])}'" if rnd.loadgen_versions else None
        accepted = installed is not None and rnd.accepts_loadgen(installed)
        want = ", ".join(_accepted_text(p) for p in rnd.loadgen_versions) or "(none listed)"
        cite = rnd.loadgen_versions_cite
    if installed is None:
        return [
            registered_finding(
                rule="RUN-LOADGEN-MISSING",
                message=f"{LOADGEN_DISTRIBUTION} is not installed",
                fix=fix,
            )
        ]
    if accepted:
        return []
    return [
        registered_finding(
            rule="RUN-LOADGEN-VERSION",
            message=f"installed LoadGen {installed} is not a {rnd.name} release (needs {want}); its compiled "
            f"mlperf.conf (seeds, gates) is that of another round"
            + (f"; install it with: {fix}" if fix else ""),
            source=cite,
            fix=fix,
        )
    ]


def override_findings(planned: PlannedSettings, mode: RunMode) -> list[Finding]:
    """Non-compliant overrides: warnings in trials, errors (refusal) in submission mode."""
    sev = None if mode is RunMode.SUBMISSION else Severity.WARNING  # None: the registered ERROR
    out: list[Finding] = []
    for o in planned.non_compliant:
        out.append(
            registered_finding(
                rule="RUN-CONF-NONCOMPLIANT",
                severity=sev,
                message=f"{o.entry.text}: {o.setting} {o.official if o.official is not None else '(unset)'} -> "
                f"{o.effective}: {o.reason}; a result with this setting is not compliant",
                path=planned.conf_path,
                line=o.entry.line,
            )
        )
    return out


def noncompliant_summary(planned: PlannedSettings) -> Finding:
    """The run's verdict note on its non-compliant overrides (each was reported before the run): a trial's."""
    return registered_finding(
        "RUN-CONF-NONCOMPLIANT",
        f"{len(planned.non_compliant)} non-compliant user.conf override(s): a trial, not a result",
        severity=Severity.WARNING,
        path=planned.conf_path,
    )


def gates_text(planned: PlannedSettings) -> str:
    """Human summary of the effective gates for the scenario."""
    e = planned.effective
    parts = [
        f"{planned.benchmark} {e.scenario.value} (LoadGen {e.loadgen_scenario.value}, conf model {e.conf_model})"
    ]
    if e.ttft_latency_ns is not None and e.tpot_latency_ns is not None:
        pct = f"p{e.target_latency_percentile * 100:g}" if e.target_latency_percentile else "p99"
        parts.append(
            f"gates: {pct} TTFT < {e.ttft_latency_ns / _NS_PER_MS:g} ms, {pct} TPOT < {e.tpot_latency_ns / _NS_PER_MS:g} ms"
        )
    elif e.loadgen_scenario is Scenario.SERVER and e.server_target_latency_ns:
        parts.append(f"gate: p99 latency <= {e.server_target_latency_ns / _NS_PER_MS:g} ms")
    else:
        parts.append(
            "no latency gate (throughput scenario)"
            if e.loadgen_scenario is Scenario.OFFLINE
            else "latency is the result"
        )
    parts.append(f"min duration {e.min_duration_ms / 1000:g} s, min queries {e.min_query_count}")
    if e.server_target_qps is not None:
        parts.append(f"target {e.server_target_qps:g} QPS")
    if e.offline_expected_qps is not None:
        parts.append(f"expected {e.offline_expected_qps:g} samples/s")
    return "; ".join(parts)


