"""The SUT's event loop: uvloop where installed, the standard loop on request, a clear error otherwise."""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path

import pytest
from sut_helpers import sim_engine, trial

from loadgen_sut.sut import EVENT_LOOP_ENV, new_event_loop

HAVE_UVLOOP = importlib.util.find_spec("uvloop") is not None


@pytest.mark.parametrize(("choice", "kind"), [("asyncio", "asyncio"), ("auto", "uvloop" if HAVE_UVLOOP else "asyncio")])
def test_loop_choice(monkeypatch: pytest.MonkeyPatch, choice: str, kind: str) -> None:
    monkeypatch.setenv(EVENT_LOOP_ENV, choice)
    loop, what = new_event_loop()
    try:
        assert what.split()[0] == kind
        assert loop.run_until_complete(asyncio.sleep(0, result=7)) == 7
    finally:
        loop.close()


def test_an_unknown_choice_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(EVENT_LOOP_ENV, "trio")
    with pytest.raises(ValueError, match="expected auto, uvloop or asyncio"):
        new_event_loop()


def test_a_run_with_an_unknown_loop_is_a_setup_error_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(EVENT_LOOP_ENV, "trio")
    out = trial(tmp_path, sim_engine(), scenario="Offline")
    (test,) = out.record.tests
    assert test.status == "setup_error"
    assert test.error is not None and f"{EVENT_LOOP_ENV}='trio'" in test.error
    assert out.record.verdict.status == "INCOMPLETE"
