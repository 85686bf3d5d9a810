"""checker.compliance.test06 on genuine TEST06-style LoadGen logs: a pass and each failure kind."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from checker.compliance.test06 import Test06Check as Check06
from checker.compliance.test06 import token_settings_of, verify_test06
from checker.parsers.accuracy_log import AccuracyEntry, TokenDtype, parse_accuracy_log
from rules.models import Scenario
from rules.registry import load_round

RunTest06 = Callable[..., Path]


def _entries(run_dir: Path) -> tuple[AccuracyEntry, ...]:
    return parse_accuracy_log(run_dir / "mlperf_log_accuracy.json").entries


@pytest.mark.parametrize("scenario", ["Server", "Offline"])
def test_clean_run_passes(test06_run: RunTest06, scenario: str) -> None:
    run_dir = test06_run(scenario)
    assert "Found Audit Config file" in (run_dir / "mlperf_log_detail.txt").read_text()
    entries = _entries(run_dir)
    result = verify_test06(entries, Scenario(scenario))
    assert result.passed and result.official_passed
    assert result.sample_count == len(entries) > 0
    assert result.eos.samples_checked == len(entries)
    if scenario == "Offline":
        assert result.first_token.passed is None
        assert result.verify_accuracy_lines()[0] == "First token check pass: Skipped"
    else:
        assert result.first_token.passed is True
    assert result.verify_accuracy_lines()[1:] == [
        "EOS check pass: True",
        "Sample length check pass: True",
        "TEST06 verification complete",
    ]


def test_first_token_mismatch(test06_run: RunTest06) -> None:
    entries = _entries(test06_run("Server", "first-token"))
    result = verify_test06(entries, Scenario.SERVER)
    assert result.first_token.passed is False and result.first_token.official_pass is False
    assert len(result.first_token.problems) == len(entries)
    assert "differs at position 0" in result.first_token.problems[0].reason
    assert result.eos.passed and result.sample_length.passed
    assert not result.passed
    assert result.verify_accuracy_lines()[0] == "First token check pass: False"
    assert result.verify_accuracy_lines()[-1] == "TEST06 verification failed"


def test_first_token_left_out_of_output(test06_run: RunTest06) -> None:
    # The llama2-70b reference Server SUT's pattern: the final output excludes the first token.
    result = verify_test06(_entries(test06_run("Server", "skip-first")), Scenario.SERVER)
    assert result.first_token.passed is False


def test_first_token_is_interactive_too(test06_run: RunTest06) -> None:
    result = verify_test06(_entries(test06_run("Server", "first-token")), Scenario.INTERACTIVE)
    assert result.first_token.passed is False


def test_offline_skips_first_token(test06_run: RunTest06) -> None:
    entries = _entries(test06_run("Offline"))
    assert all(e.token_data_hex is None for e in entries)
    assert verify_test06(entries, Scenario.OFFLINE).first_token.passed is None


def test_double_eos(test06_run: RunTest06) -> None:
    entries = _entries(test06_run("Server", "double-eos"))
    result = verify_test06(entries, Scenario.SERVER)
    assert result.eos.passed is False
    assert result.eos.problems[0].reason == "output ends with 2 EOS (2) tokens"
    assert result.first_token.passed and result.sample_length.passed
    # With another EOS id the same outputs pass (the id matters: Llama-3's is not 2).
    assert verify_test06(entries, Scenario.SERVER, eos_token_id=128009).eos.passed is True


def test_token_count_mismatch(test06_run: RunTest06) -> None:
    result = verify_test06(_entries(test06_run("Offline", "count")), Scenario.OFFLINE)
    assert result.sample_length.passed is False
    assert "token_count" in result.sample_length.problems[0].reason
    assert result.verify_accuracy_lines()[2] == "Sample length check pass: False"


def test_int64_outputs_read_as_int32_fail(test06_run: RunTest06) -> None:
    entries = _entries(test06_run("Offline", "none", "--dtype", "int64"))
    assert verify_test06(entries, Scenario.OFFLINE, dtype=TokenDtype.INT64).passed
    # Read with the wrong dtype the id count doubles, so the length check fails.
    assert verify_test06(entries, Scenario.OFFLINE, dtype=TokenDtype.INT32).sample_length.passed is False


def test_accuracy_mode_log_is_not_a_test06_run(tmp_path: Path) -> None:
    fake = [
        AccuracyEntry(index=i, line=None, seq_id=i, qsl_idx=i, data_hex="0A00000002000000", token_count=2)
        for i in range(250)
    ]
    result = verify_test06(fake, Scenario.OFFLINE)
    assert result.samples.passed is False and "accuracy-mode" in (result.samples.note or "")
    assert verify_test06([], Scenario.OFFLINE).samples.passed is False


def test_official_leniencies_are_reported(test06_run: RunTest06) -> None:
    entries = _entries(test06_run("Server"))
    # Empty first-token data: the official zip() compares nothing and passes.
    emptied = [e.model_copy(update={"token_data_hex": ""}) for e in entries]
    result = verify_test06(emptied, Scenario.SERVER)
    assert result.first_token.passed is False
    assert result.first_token.official_pass is True
    assert not any(p.official_catches for p in result.first_token.problems)
    # No token_count: the official script crashes.
    no_count = [e.model_copy(update={"token_count": None}) for e in entries]
    outcome = verify_test06(no_count, Scenario.SERVER).sample_length
    assert outcome.passed is False and outcome.note and "raises" in outcome.note
    assert {p.check for p in outcome.problems} == {Check06.SAMPLE_LENGTH}


def test_llama3_eos_ids_from_the_rules(test06_run: RunTest06) -> None:
    """A Llama-3.1 benchmark's EOS ids come from the rules data: one trailing 128009 passes, two fail; with the
    official default (2) the doubled 128009 goes unseen, as run_verification.py without -e would miss it."""
    bench = load_round("v5.1").benchmark("llama3.1-8b")
    eos_ids, dtype = token_settings_of(bench)
    assert 128009 in eos_ids and 128001 in eos_ids and dtype is TokenDtype.INT32
    single = verify_test06(
        _entries(test06_run("Server", "none", "--eos", "128009")),
        Scenario.SERVER,
        eos_token_ids=eos_ids,
        dtype=dtype,
    )
    assert single.passed and single.eos_token_ids == eos_ids and single.eos_token_id_given
    doubled = verify_test06(
        _entries(test06_run("Server", "double-eos", "--eos", "128009")),
        Scenario.SERVER,
        eos_token_ids=eos_ids,
        dtype=dtype,
    )
    assert doubled.eos.passed is False and doubled.eos.official_pass is True
    assert doubled.eos.problems[0].reason == "output ends with 2 EOS (128001/128008/128009) tokens"
    assert not doubled.eos.problems[0].official_catches
    assert token_settings_of(load_round("v5.1").benchmark("llama2-70b-99")) == ((2,), TokenDtype.INT32)
