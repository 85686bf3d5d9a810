"""LoadGen releases: the guard for TestSettings attributes a release does not bind, and the version/seed findings.

Measured on the PyPI wheels (``dir(mlperf_loadgen.TestSettings())`` and the detail log of a run per release):
5.0.x and 5.1.x bind neither ``sample_concatenate_permutation`` nor ``accuracy_sample_count_override``;
6.0.3-6.0.5 bind ``sample_concatenate_permutation`` only; 6.0.6 and later bind both. The installed release
(6.0.x) binds both; older releases are stood in for by a TestSettings with those attributes removed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mlperf_loadgen as lg
import pytest
from sut_helpers import BENCH, ROUND, sim_engine

from loadgen_sut import probe
from loadgen_sut.generation import GenerationSpec
from loadgen_sut.lgtest import RESULT_FILE, TestSpec, run_test
from loadgen_sut.settings import (
    OPTIONAL_LOADGEN_SETTINGS,
    SettingsError,
    TestSettingsModel,
    compare_with_loadgen,
    from_loadgen,
    installed_loadgen_version,
    loadgen_version_findings,
    parse_user_conf_text,
    plan_settings,
    read_back_from_log,
    require_loadgen_settings,
    rounds_with_seeds,
    to_loadgen,
    unavailable_loadgen_settings,
    unavailable_text,
)
from rules import load_round
from rules.models import Scenario, Seeds

# tests of the installed release itself need one that binds both (6.0.6 and later); elsewhere they skip
needs_full_binding = pytest.mark.skipif(
    not all(hasattr(lg.TestSettings(), a) for a in ("sample_concatenate_permutation", "accuracy_sample_count_override")),
    reason="the installed LoadGen release does not bind every optional TestSettings attribute",
)
BOTH = frozenset({"sample_concatenate_permutation", "accuracy_sample_count_override"})
REAL_TEST_SETTINGS = lg.TestSettings  # the installed class (the fixture below replaces lg.TestSettings)
ACC_CONF = "llama3_1-8b.Offline.accuracy_sample_count_override = 10\n"


class FakeTestSettings:
    """A ``TestSettings`` of an older release: the installed one's attributes and defaults, minus ``missing``."""

    def __init__(self, missing: frozenset[str]) -> None:
        real = REAL_TEST_SETTINGS()
        for name in dir(real):
            if name.startswith("_") or name in missing or name == "FromConfig":
                continue
            setattr(self, name, getattr(real, name))
        self.from_config_calls: list[tuple[str, str, str]] = []

    def FromConfig(self, path: str, model: str, scenario: str) -> int:  # LoadGen's spelling
        self.from_config_calls.append((path, model, scenario))
        return 0


def _planned(conf: str = "", rnd: str = ROUND, scenario: Scenario = Scenario.OFFLINE) -> TestSettingsModel:
    r = load_round(rnd)
    b = r.benchmark(BENCH)
    assert b is not None
    return plan_settings(r, b, scenario, parse_user_conf_text(conf, "user.conf")).effective


@pytest.fixture
def release_without(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Make ``mlperf_loadgen.TestSettings()`` build a FakeTestSettings lacking the given attributes."""
    made: list[FakeTestSettings] = []

    def use(missing: frozenset[str]) -> list[FakeTestSettings]:
        def factory() -> FakeTestSettings:
            made.append(FakeTestSettings(missing))
            return made[-1]

        monkeypatch.setattr(lg, "TestSettings", factory)  # the module object every settings module uses
        return made

    yield use


# --------------------------------------------------------------------------------------------
# the capability check


@needs_full_binding
def test_installed_release_binds_every_optional_setting() -> None:
    assert unavailable_loadgen_settings() == ()
    assert unavailable_loadgen_settings(lg.TestSettings()) == ()
    assert {o.attribute for o in OPTIONAL_LOADGEN_SETTINGS} == BOTH


@needs_full_binding
def test_capability_check_is_per_attribute() -> None:
    assert set(unavailable_loadgen_settings(FakeTestSettings(BOTH))) == BOTH  # 5.0.x, 5.1.x
    assert unavailable_loadgen_settings(FakeTestSettings(frozenset({"accuracy_sample_count_override"}))) == (
        "accuracy_sample_count_override",  # 6.0.3-6.0.5
    )


def test_read_back_on_a_release_without_the_optional_settings() -> None:
    settings = _planned()
    assert settings.sample_concatenate_permutation  # llama3.1-8b: equal-issue mode
    fake = FakeTestSettings(BOTH)
    got = from_loadgen(fake, settings.scenario, settings.conf_model, fallback=settings)
    assert got.accuracy_sample_count is None  # the release has no override: the whole data set
    assert got.sample_concatenate_permutation is True  # applied in C++, not readable: the value asked for
    assert not [f for f in compare_with_loadgen(settings, got, ROUND) if "sample_concatenate_permutation" in f.message]
    bare = from_loadgen(fake, settings.scenario, settings.conf_model)
    assert bare.sample_concatenate_permutation is False


@needs_full_binding
def test_read_back_on_the_installed_release_reads_the_attributes() -> None:
    ts = lg.TestSettings()
    ts.accuracy_sample_count_override = 7
    ts.sample_concatenate_permutation = True
    settings = _planned()
    got = from_loadgen(ts, settings.scenario, settings.conf_model, fallback=settings.model_copy(
        update={"sample_concatenate_permutation": False}
    ))
    assert got.accuracy_sample_count == 7 and got.sample_concatenate_permutation is True


def test_missing_settings_a_run_does_not_need_are_recorded_not_refused() -> None:
    missing = require_loadgen_settings(_planned(), tuple(BOTH))
    assert {o.attribute for o in missing} == BOTH
    lines = unavailable_text(missing)
    release = installed_loadgen_version()
    assert len(lines) == 2 and all(f"mlcommons-loadgen {release}" in line for line in lines)
    assert any("effective_sample_concatenate_permutation" in line for line in lines)
    assert require_loadgen_settings(_planned(), ()) == ()


def test_missing_setting_a_run_needs_refuses_naming_setting_and_release() -> None:
    settings = _planned(ACC_CONF)
    assert settings.accuracy_sample_count == 10
    with pytest.raises(SettingsError) as err:
        require_loadgen_settings(settings, ("accuracy_sample_count_override",))
    msg = str(err.value)
    assert "accuracy_sample_count_override = 10" in msg
    assert f"mlcommons-loadgen {installed_loadgen_version()}" in msg
    assert "6.0.6 and later" in msg and "refusing to start LoadGen" in msg
    # a release that binds it runs the same settings
    assert require_loadgen_settings(settings, ()) == ()
    # sample_concatenate_permutation is applied by every release: never a refusal
    assert len(require_loadgen_settings(settings, ("sample_concatenate_permutation",))) == 1


def test_to_loadgen_refuses_before_fromconfig(release_without: Any, tmp_path: Path) -> None:
    conf = tmp_path / "user.conf"
    conf.write_text(ACC_CONF, encoding="utf-8")
    made = release_without(BOTH)
    with pytest.raises(SettingsError, match="accuracy_sample_count_override"):
        to_loadgen(_planned(ACC_CONF), conf)
    assert made and made[-1].from_config_calls == []  # LoadGen never saw the conf
    ts = to_loadgen(_planned(), conf)
    assert ts is made[-1] and len(made[-1].from_config_calls) == 1


def test_probe_refuses_or_notes(release_without: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    release_without(BOTH)
    conf = tmp_path / "user.conf"
    js = tmp_path / "settings.json"
    conf.write_text(ACC_CONF, encoding="utf-8")
    js.write_text(_planned(ACC_CONF).model_dump_json(), encoding="utf-8")
    assert probe.main([str(js), str(conf)]) == 4
    err = capsys.readouterr().err
    assert "refusing to start LoadGen" in err and "accuracy_sample_count_override" in err

    conf.write_text("", encoding="utf-8")
    js.write_text(_planned().model_dump_json(), encoding="utf-8")
    assert probe.main([str(js), str(conf)]) == 0
    out = capsys.readouterr()
    back = TestSettingsModel.model_validate_json(out.out.strip().splitlines()[-1])
    assert back.sample_concatenate_permutation is True and back.accuracy_sample_count is None
    assert "note: sample_concatenate_permutation" in out.err


def test_lgtest_refuses_before_the_engine_starts(release_without: Any, tmp_path: Path) -> None:
    release_without(BOTH)
    conf = tmp_path / "user.conf"
    conf.write_text(ACC_CONF, encoding="utf-8")
    spec = TestSpec(
        name="accuracy",
        round_name=ROUND,
        settings=_planned(ACC_CONF),
        user_conf=str(conf),
        dataset="builtin",
        engine=sim_engine(),
        generation=GenerationSpec(max_new_tokens=8),
    )
    interval = sys.getswitchinterval()
    try:
        assert run_test(spec, tmp_path) == 4
    finally:
        sys.setswitchinterval(interval)
    result = json.loads((tmp_path / RESULT_FILE).read_text(encoding="utf-8"))
    assert result["status"] == "setup_error" and "accuracy_sample_count_override" in result["error"]
    assert not (tmp_path / "mlperf_log_detail.txt").exists()


def _mllog(key: str, value: object) -> str:
    body = {"key": key, "value": value, "time_ms": 0.01, "namespace": "mlperf::logging", "event_type": "POINT_IN_TIME",
            "metadata": {"is_error": False, "is_warning": False, "file": "x.cc", "line_no": 1, "pid": 1, "tid": 1}}
    return ":::MLLOG " + json.dumps(body) + "\n"


def test_unreadable_setting_is_read_back_from_the_detail_log(tmp_path: Path) -> None:
    settings = _planned()
    missing = require_loadgen_settings(settings, tuple(BOTH))
    detail = tmp_path / "mlperf_log_detail.txt"
    detail.write_text(_mllog("loadgen_version", "5.1.2 @ 06c742a84a") + _mllog("effective_sample_concatenate_permutation", False))
    got = read_back_from_log(settings, detail, missing)
    assert got.sample_concatenate_permutation is False
    assert any("sample_concatenate_permutation=False" in f.message for f in compare_with_loadgen(settings, got, ROUND))
    assert read_back_from_log(settings, detail, ()) == settings  # a release that binds it: Python's read-back stands
    assert read_back_from_log(settings, tmp_path / "absent.txt", missing) == settings


@needs_full_binding
def test_installed_release_applies_accuracy_override(tmp_path: Path) -> None:
    """On the installed release the override is a real setting: the probe reads it back (no refusal)."""
    (tmp_path / "user.conf").write_text(ACC_CONF, encoding="utf-8")
    (tmp_path / "settings.json").write_text(_planned(ACC_CONF).model_dump_json(), encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "loadgen_sut.probe", str(tmp_path / "settings.json"), str(tmp_path / "user.conf")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    back = TestSettingsModel.model_validate_json(out.stdout.strip().splitlines()[-1])
    assert back.accuracy_sample_count == 10 and back.sample_concatenate_permutation is True
    assert "note:" not in out.stderr


# --------------------------------------------------------------------------------------------
# which release fits a round


def test_version_findings_take_series_and_single_releases() -> None:
    """Without release data, loadgen_versions series or single releases decide (and name the pip requirement)."""
    v60 = load_round("v6.0").model_copy(update={"loadgen_runs": None})
    pinned = v60.model_copy(update={"loadgen_versions": ("6.0.15",)})
    assert loadgen_version_findings(pinned, "6.0.15") == []
    bad = loadgen_version_findings(pinned, "6.0.17")
    assert bad and "needs 6.0.15)" in bad[0].message
    assert bad[0].fix == "pip install 'mlcommons-loadgen==6.0.15'" and bad[0].fix in bad[0].message
    series = v60.model_copy(update={"loadgen_versions": ("6.0.",)})
    wrong = loadgen_version_findings(series, "5.1.2")
    assert "needs 6.0.x" in wrong[0].message and wrong[0].fix == "pip install 'mlcommons-loadgen==6.0.*'"
    assert loadgen_version_findings(pinned, None)[0].fix == "pip install 'mlcommons-loadgen==6.0.15'"


@pytest.mark.parametrize(
    ("round_name", "good", "bad", "install"),
    [
        ("v5.1", ["5.0.22", "5.0.25", "5.1.0", "5.1.2"], ["5.0.21", "6.0.3", "6.0.17"], "5.1.2"),
        ("v6.0", ["6.0.5", "6.0.15"], ["6.0.4", "6.0.16", "6.0.17", "5.1.2"], "6.0.15"),
        ("v6.1", ["6.0.16", "6.0.17"], ["6.0.15", "5.1.2"], "6.0.17"),
    ],
)
def test_each_round_runs_on_the_releases_that_carry_its_seeds(
    round_name: str, good: list[str], bad: list[str], install: str
) -> None:
    """Round.loadgen_runs (measured per release): 6.0.16/6.0.17 carry the v6.1 seeds, so v6.0 needs 6.0.15."""
    rnd = load_round(round_name)
    for v in good:
        assert loadgen_version_findings(rnd, v) == [], v
    for v in bad:
        (f,) = loadgen_version_findings(rnd, v)
        assert f.rule == "RUN-LOADGEN-VERSION" and f.fix == f"pip install 'mlcommons-loadgen=={install}'", v
        assert f"install it with: pip install 'mlcommons-loadgen=={install}'" in f.message


def test_seed_mismatch_names_the_round_the_seeds_belong_to() -> None:
    v60 = _planned(rnd="v6.0")
    v61_seeds = load_round("v6.1").seeds
    assert v61_seeds is not None
    actual = v60.model_copy(update={"seeds": v61_seeds})
    msgs = [f.message for f in compare_with_loadgen(v60, actual, "v6.0")]
    assert any("the seeds of round v6.1" in m for m in msgs)
    odd = v60.model_copy(update={"seeds": Seeds(qsl_rng_seed=1, sample_index_rng_seed=2, schedule_rng_seed=3)})
    assert any("no known round" in f.message for f in compare_with_loadgen(v60, odd, "v6.0"))
    assert rounds_with_seeds((1, 2, 3)) == []
