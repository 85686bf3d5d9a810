"""user.conf numbers exactly as LoadGen reads them, checked against the real LoadGen.

LoadGen (test_settings_internal.cc) applies an integer key as strtoull(text, NULL, 0) and a double key as
strtod: '6e5' is 6 for min_duration, not 600000. The planned settings must be what LoadGen applies, lines
whose text means something else are flagged, and values LoadGen would crash on or mis-apply are refused
before any LoadGen process starts.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from sut_helpers import ROUND, sim_engine, trial

from checker.findings import Severity, UnusableInput
from loadgen_sut.run.plan import RunRequest, resolve
from loadgen_sut.run.preflight import preflight
from loadgen_sut.settings import (
    RunMode,
    SettingsError,
    c_strtod,
    c_strtoull,
    loadgen_accepts_number,
    loadgen_value,
    parse_user_conf_text,
    plan_settings,
)
from rules import load_round
from rules.models import Scenario

BENCH = "llama3.1-8b"


def _plan(conf: str, scenario: Scenario) -> Any:
    rnd = load_round(ROUND)
    bench = rnd.benchmark(BENCH)
    assert bench is not None
    return plan_settings(rnd, bench, scenario, parse_user_conf_text(conf, "user.conf"))


# (scenario, user.conf line, mirror field, the value LoadGen applies: measured on mlcommons-loadgen 6.0.17)
CASES: list[tuple[Scenario, str, str, Any]] = [
    (Scenario.OFFLINE, "*.Offline.min_duration = 6e5", "min_duration_ms", 6),
    (Scenario.OFFLINE, "*.Offline.min_duration = 1e30", "min_duration_ms", 1),
    (Scenario.OFFLINE, "*.Offline.min_duration = 1.5", "min_duration_ms", 1),
    (Scenario.OFFLINE, "*.Offline.min_duration = 010", "min_duration_ms", 8),
    (Scenario.OFFLINE, "*.Offline.min_duration = 08", "min_duration_ms", 0),
    (Scenario.OFFLINE, "*.Offline.min_duration = 0x10", "min_duration_ms", 16),
    (Scenario.OFFLINE, "*.Offline.min_query_count = +40", "min_query_count", 40),
    (Scenario.OFFLINE, "*.Offline.min_query_count = 5 7", "min_query_count", 7),  # the last value wins
    (Scenario.OFFLINE, "*.Offline.target_qps = 0x10", "offline_expected_qps", 16.0),
    (Scenario.SERVER, "*.Server.target_qps = 010", "server_target_qps", 10.0),
    (Scenario.SERVER, "*.Server.target_qps = 2.5e2", "server_target_qps", 250.0),
    (Scenario.SERVER, "*.Server.target_latency_percentile = 99.5", "target_latency_percentile", 99.5 * 0.01),
    (Scenario.SERVER, "*.Server.ttft_latency = 2e3", "ttft_latency_ns", 2_000_000),
    (Scenario.SERVER, "*.Server.use_token_latencies = 2", "use_token_latencies", False),
    (Scenario.SERVER, "*.Server.sample_concatenate_permutation = 1.5", "sample_concatenate_permutation", True),
]

DRIVER = r"""
import json, sys
from loadgen_sut import probe
out = []
for js, conf in json.loads(sys.argv[1]):
    sys.stdout.flush()
    import io, contextlib
    o, e = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(o), contextlib.redirect_stderr(e):
        rc = probe.main([js, conf])
    out.append({"rc": rc, "out": o.getvalue(), "err": e.getvalue()})
print(json.dumps(out))
"""


def _probe_all(tmp_path: Path, items: list[tuple[Any, str]]) -> list[dict[str, Any]]:
    """The probe (FromConfig in a fresh forked process each) for each (settings, user.conf text)."""
    pairs = []
    for k, (settings, conf) in enumerate(items):
        js, cf = tmp_path / f"s{k}.json", tmp_path / f"u{k}.conf"
        js.write_text(settings.model_dump_json(), encoding="utf-8")
        cf.write_text(conf, encoding="utf-8")
        pairs.append((str(js), str(cf)))
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER, json.dumps(pairs)], capture_output=True, text=True, timeout=300, check=False
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    result: list[dict[str, Any]] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def test_planned_values_are_what_the_real_loadgen_applies(tmp_path: Path) -> None:
    items = []
    for scenario, line, field, value in CASES:
        planned = _plan(line + "\n", scenario)
        assert getattr(planned.effective, field) == value, line
        items.append((planned.effective, line + "\n"))
    for (_, line, field, value), res in zip(CASES, _probe_all(tmp_path, items), strict=True):
        # rc 0: the probe found every user.conf setting LoadGen read back equal to the planned one
        assert res["rc"] == 0, (line, res["err"])
        back = json.loads(res["out"].strip().splitlines()[-1])
        assert back[field] == value, line


def test_text_that_does_not_mean_what_loadgen_applies_is_flagged() -> None:
    planned = _plan("*.Offline.min_duration = 6e5\n*.Offline.min_query_count = 010\n", Scenario.OFFLINE)
    assert planned.effective.min_duration_ms == 6  # not 600 s: judged as LoadGen runs it
    numbers = {f.line: f for f in planned.conf_problems if f.rule == "RUN-CONF-NUMBER"}
    assert set(numbers) == {1, 2} and all(f.severity is Severity.ERROR for f in numbers.values())
    assert "6, not 600000" in numbers[1].message and "8, not 10" in numbers[2].message
    md = next(o for o in planned.overrides if o.setting == "min_duration_ms")
    assert md.effective == "6" and not md.compliant
    # plain decimal integers, hex and '+7' mean what they say
    quiet = _plan("*.Offline.min_duration = 600000\n*.Offline.min_query_count = 0x40\n", Scenario.OFFLINE)
    assert not [f for f in quiet.conf_problems if f.rule == "RUN-CONF-NUMBER"]


@pytest.mark.parametrize(("mode", "severity"), [(RunMode.SUBMISSION, Severity.ERROR), (RunMode.PERFORMANCE, Severity.WARNING)])
def test_a_misread_number_refuses_a_submission_and_warns_a_trial(tmp_path: Path, mode: RunMode, severity: Severity) -> None:
    conf = tmp_path / "u.conf"
    conf.write_text("*.Offline.min_duration = 6e5\n", encoding="utf-8")
    request = RunRequest(
        round_name=ROUND, benchmark=BENCH, scenario="Offline", mode=mode, engine=sim_engine(), out=tmp_path, user_conf=conf
    )
    rnd, bench, scenario = resolve(request)
    _, findings = preflight(request, rnd, bench, scenario, conf.read_text(encoding="utf-8"))
    number = [f for f in findings if f.rule == "RUN-CONF-NUMBER"]
    assert number and number[0].severity is severity
    if mode is RunMode.SUBMISSION:  # and the override itself is not compliant (6 ms < 600 s)
        assert any(f.rule == "RUN-CONF-NONCOMPLIANT" and f.severity is Severity.ERROR for f in findings)


@pytest.mark.parametrize(
    ("scenario", "line", "why"),
    [
        (Scenario.OFFLINE, "*.Offline.min_query_count = -5", "negative"),  # LoadGen: 2^64-5, SIGSEGV
        (Scenario.OFFLINE, "*.Offline.performance_sample_count_override = 18446744073709551616", "64 bits"),
        (Scenario.OFFLINE, "*.Offline.min_duration = 9223372036855", "overflows"),  # x 1e6 ns > int64
        (Scenario.OFFLINE, "*.Offline.min_duration = inf", "not a number"),  # strtoull: 0
        (Scenario.SERVER, "*.Server.ttft_latency = 18446744073709", "overflows"),  # x 1e6 wraps
        (Scenario.SERVER, "*.Server.target_qps = -5", "not positive"),  # LoadGen's schedule hangs
        (Scenario.SERVER, "*.Server.target_qps = 0", "not positive"),
        (Scenario.SERVER, "*.Server.target_qps = nan", "not a number"),
        (Scenario.OFFLINE, "*.Offline.target_qps = 1e400", "infinite"),
        (Scenario.SERVER, "*.Server.target_latency_percentile = 150", "outside"),
    ],
)
def test_values_loadgen_would_crash_on_or_misapply_are_refused(scenario: Scenario, line: str, why: str) -> None:
    with pytest.raises(SettingsError, match=why):
        _plan(line + "\n", scenario)


def test_a_refused_value_never_starts_a_loadgen_process(tmp_path: Path) -> None:
    with pytest.raises(UnusableInput, match="refusing to start LoadGen"):
        trial(tmp_path, sim_engine(), scenario="Offline", conf="*.Offline.min_query_count = -5\n")
    assert not (tmp_path / "out" / "runs").exists()  # refused before any run directory or child


def test_lines_loadgen_rejects_or_ignores_are_reported() -> None:
    uc = parse_user_conf_text(
        "*.Offline.min_duration = 5 # note\n*.Offline.min_duration\n*.Offline.min_query_count = 0x\n"
        "*.Offline.min_query_count\u00a0=\u00a05\n",
        "u.conf",
    )
    by_line = {f.line: f for f in uc.problems}
    assert "'#' after the value" in by_line[1].message and "rejects the whole file" in by_line[1].message
    assert "silently ignores" in by_line[2].message
    assert "not an integer or a number" in by_line[3].message
    assert 4 in by_line  # a non-ASCII space is no separator for LoadGen: one token, ignored
    assert uc.entries == ()


def test_a_huge_user_conf_is_planned_in_linear_time_and_reported_in_bounded_lines() -> None:
    """20,000 unknown keys took minutes (a lookup per entry scanned every entry) and printed a warning each; 200,000
    junk lines printed 200,000 (38 MB). Now the first MAX_LISTED_PER_KIND of a kind are listed, the rest counted."""
    from checker.parsers.loadgen_conf import MAX_LISTED_PER_KIND

    unknown = "".join(f"*.Server.bogus_key_{i} = {i}\n" for i in range(20_000))
    t0 = time.perf_counter()
    planned = _plan("*.Server.target_qps = 100\n" + unknown + "garbage here\n" * 50_000, Scenario.SERVER)
    assert time.perf_counter() - t0 < 20  # minutes before
    assert planned.effective.server_target_qps == 100.0
    by_rule: dict[str, list[Any]] = {}
    for f in planned.conf_problems:
        by_rule.setdefault(f.rule, []).append(f)
    for rule, unlisted, first in (("RUN-CONF-UNKNOWN-KEY", 19_980, 22), ("RUN-CONF-SYNTAX", 50_000 - 20, 20_022)):
        found = by_rule[rule]
        assert len(found) == MAX_LISTED_PER_KIND + 1
        assert found[-1].message == f"{unlisted} more line(s) of this kind, from line {first} on, are not listed one by one"
        assert found[-1].line == first


@pytest.mark.parametrize("qps", ["1e-9", "1e-300"])
def test_a_rate_that_would_never_end_is_refused_before_the_first_test(tmp_path: Path, qps: str) -> None:
    """target_qps = 1e-9 planned 27,777,777 hours (the deadline thread died on its timestamp, the run never ended);
    1e-300 crashed LoadGen (SIGSEGV). Refused before any test starts, and no run directory is left."""
    with pytest.raises(UnusableInput, match=r"the performance test is planned to take .*longer than any MLPerf test"):
        trial(tmp_path, sim_engine(), scenario="Server", conf=f"*.Server.target_qps = {qps}\n")
    assert not list((tmp_path / "out").glob("runs/*"))


def test_a_deadline_beyond_30_days_is_refused() -> None:
    from loadgen_sut.cli.arg_types import positive_seconds

    assert positive_seconds("2592000") == 2592000.0
    with pytest.raises(argparse.ArgumentTypeError, match="more than 30 days"):
        positive_seconds("1e300")


def test_loadgen_rejects_a_comment_after_a_value(tmp_path: Path) -> None:
    planned = _plan("", Scenario.OFFLINE)
    res = _probe_all(tmp_path, [(planned.effective, "*.Offline.min_duration = 5 # note\n")])[0]
    assert res["rc"] == 4 and "FromConfig returned -22" in res["err"]


def test_c_number_parsers() -> None:
    assert c_strtoull("6e5") == (6, False) and c_strtoull("-5") == (2**64 - 5, False)
    assert c_strtoull("18446744073709551616") == (2**64 - 1, True) and c_strtoull("0x1F") == (31, False)
    assert c_strtoull("0x") == (0, False) and c_strtoull("077") == (63, False) and c_strtoull(".5") == (0, False)
    assert c_strtod("0x1p4") == 16.0 and math.isinf(c_strtod("1e400")) and math.isnan(c_strtod("nan"))
    for ok in ("5", "-5", "1.5", "6e5", ".5", "5.", "0x10", "0x1p4", "inf", "NaN", "08", "+7"):
        assert loadgen_accepts_number(ok), ok
    for bad in ("0x", "1e", "5e", "1_000", "12abc", "#", "", "0x1p"):
        assert not loadgen_accepts_number(bad), bad
    assert loadgen_value("target_latency", "1.5", Scenario.SINGLE_STREAM).value == 1.5e6  # a double there
    assert loadgen_value("target_latency", "1.5", Scenario.SERVER).value == 1_000_000  # an integer here


def test_probe_refuses_a_plan_loadgen_does_not_apply(tmp_path: Path) -> None:
    planned = _plan("", Scenario.OFFLINE)
    wrong = planned.effective.model_copy(update={"min_duration_ms": 600_000})  # the old float() reading of 6e5
    res = _probe_all(tmp_path, [(wrong, "*.Offline.min_duration = 6e5\n")])[0]
    assert res["rc"] == 5
    assert "min_duration_ms" in res["err"] and "600000" in res["err"]


CRASHER = r"""
import os, signal, sys
from loadgen_sut import probe
probe._loadgen_read_back = lambda settings, path: os.kill(os.getpid(), signal.SIGSEGV)
sys.exit(probe.main(sys.argv[1:]))
"""


def test_a_crash_in_the_probe_is_a_clear_error(tmp_path: Path) -> None:
    js, cf = tmp_path / "s.json", tmp_path / "u.conf"
    js.write_text(_plan("", Scenario.OFFLINE).effective.model_dump_json(), encoding="utf-8")
    cf.write_text("", encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-c", CRASHER, str(js), str(cf)], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 4
    assert "LoadGen crashed (SIGSEGV)" in proc.stderr and "Traceback" not in proc.stderr
