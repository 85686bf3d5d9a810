"""The issue thread's timer slack: LoadGen's Server loop sleeps until each scheduled time on it."""

from __future__ import annotations

import sys
import threading

import pytest

from loadgen_sut.timer_slack import tighten_timer_slack, timer_slack_ns


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl timer slack is Linux-only")
def test_tightening_is_per_thread() -> None:
    seen: dict[str, int | None] = {}

    def worker() -> None:
        seen["before"] = timer_slack_ns()
        seen["tightened"] = int(tighten_timer_slack(1))
        seen["after"] = timer_slack_ns()

    main_before = timer_slack_ns()
    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert seen["tightened"] == 1
    assert seen["after"] == 1
    assert seen["before"] == main_before  # a new thread inherits its creator's slack
    assert timer_slack_ns() == main_before  # and tightening it leaves the creator's alone
