"""The raw-bytes TEST06 screen accepts only what the text screen accepts (same verdicts, less work)."""

from __future__ import annotations

from pathlib import Path

import pytest

from checker.compliance.test06 import screen_bytes, screen_text
from rules.models import Scenario


def _scenario(path: Path) -> Scenario:
    return Scenario.OFFLINE if "/Offline/" in path.as_posix() else Scenario.SERVER


def _variants(data: bytes) -> list[bytes]:
    """Edits that a real log might carry: each either keeps the verdict or must send the log to the slow path."""
    first_data = data.index(b'"data" : "') + len(b'"data" : "')
    return [
        data,
        data.rstrip(b"\n"),
        data.lower(),
        data.replace(b"\n", b"\r\n"),
        data.replace(b'" : ', b'": ', 1),
        data[:first_data] + b"02000000" + data[first_data:],  # token_count no longer matches
        data.replace(b'", "token_count"', b'02000000", "token_count"', 1),  # EOS run at the end
        data.replace(b'"token_data" : "', b'"token_data" : "00', 1),  # not whole int32 ids
        data[:first_data] + b"G" + data[first_data + 1 :],  # not hex
        data.replace(b'"seq_id" : ', b'"seq_id" : x', 1),
    ]


def test_bytes_screen_implies_text_screen(v51_tree: Path) -> None:
    logs = sorted(v51_tree.glob("*/*/compliance/*/*/*/TEST06/accuracy/mlperf_log_accuracy.json"))
    assert logs, "no TEST06 accuracy logs in the shared v5.1 tree"
    accepted = 0
    for log in logs:
        scen = _scenario(log)
        raw = log.read_bytes()
        # the real logs are LoadGen's exact layout: both screens agree on them
        assert screen_bytes(raw, scen) == screen_text(raw.decode("utf-8"), scen), log
        for variant in _variants(raw):
            if screen_bytes(variant, scen):
                accepted += 1
                assert screen_text(variant.decode("utf-8"), scen), (log, variant[:200])
    assert accepted >= len(logs)  # at least the unmodified logs pass the byte screen


@pytest.mark.parametrize("scenario", [Scenario.SERVER, Scenario.OFFLINE])
def test_bytes_screen_rejects_eos_and_first_token(scenario: Scenario) -> None:
    ok = b'[\n{ "seq_id" : 1, "qsl_idx" : 7, "data" : "0500000002000000", "token_data" : "05000000", "token_count" : 2 }\n]\n'
    assert screen_bytes(ok, scenario)
    two_eos = ok.replace(b'"0500000002000000"', b'"050000000200000002000000"').replace(b": 2 }", b": 3 }")
    assert not screen_bytes(two_eos, scenario)
    wrong_first = ok.replace(b'"token_data" : "05000000"', b'"token_data" : "06000000"')
    assert screen_bytes(wrong_first, scenario) is (scenario is Scenario.OFFLINE)
    no_first = ok.replace(b', "token_data" : "05000000"', b"")
    assert screen_bytes(no_first, scenario) is (scenario is Scenario.OFFLINE)


def test_screens_never_raise_on_a_count_int_cannot_read() -> None:
    """A token_count of 5,000 digits (int() refuses 4,301 or more) is no entry's length: both screens say False and
    the full parser reports the log, where the screens used to raise (an internal error of check-submission)."""
    ok = b'[\n{ "seq_id" : 1, "qsl_idx" : 7, "data" : "0500000002000000", "token_data" : "05000000", "token_count" : 2 }\n]\n'
    huge = ok.replace(b": 2 }", b": " + b"1" * 5000 + b" }")
    for scenario in (Scenario.SERVER, Scenario.OFFLINE):
        assert screen_bytes(ok, scenario) and screen_text(ok.decode(), scenario)
        assert not screen_bytes(huge, scenario)
        assert not screen_text(huge.decode(), scenario)


def test_quote_split_is_bytes_split() -> None:
    """The byte screen's split skips each "data" hex with find(); it equals bytes.split(b'"') on any input."""
    import random

    from checker.compliance.test06 import split_quotes

    rnd = random.Random(7)
    parts = [b'"', b'"data" : "', b"0A", b"token_data", b" : ", b"\n"]
    for _ in range(3000):
        data = b"".join(rnd.choice(parts) for _ in range(rnd.randrange(0, 16)))
        assert split_quotes(data) == data.split(b'"'), data
