"""What both clients share (loadgen_sut/sut.py): the ``array('i')`` path of :func:`response_array` says what numpy's
says about every list, and :class:`SutStats` tallies outputs and failures one way for the in-process client and the
worker pool."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from loadgen_sut.sut import BadOutput, SutStats, response_array


class _ListForNumpy(list):  # type: ignore[type-arg]
    """A list that skips the ``array('i')`` path (it takes exact lists and tuples): numpy judges it, as before."""


def _outcome(ids: Any) -> tuple[str, Any]:
    try:
        arr = response_array(ids)
    except BadOutput as exc:
        return "bad", str(exc)
    assert arr.dtype == np.int32 and arr.flags.c_contiguous
    return "ok", arr.tolist()


_ids = st.lists(
    st.one_of(
        st.integers(min_value=-(2**33), max_value=2**33),
        st.integers(min_value=0, max_value=2**31 - 1),
        st.booleans(),
        st.floats(allow_nan=False, allow_infinity=False),
        st.just("7"),
    ),
    max_size=6,
)


@given(_ids)
def test_the_fast_path_accepts_and_refuses_what_numpy_does(ids: list[Any]) -> None:
    expected = _outcome(_ListForNumpy(ids))
    assert _outcome(ids) == expected
    assert _outcome(tuple(ids)) == expected


@pytest.mark.parametrize(
    "ids",
    [[0, 2**31 - 1], [True, 5], [np.int64(7), 3], [], (9,)],
)
def test_plain_id_lists_convert_to_int32(ids: Any) -> None:
    assert _outcome(ids) == _outcome(_ListForNumpy(ids))
    assert _outcome(ids)[0] == "ok"


def test_output_tally_counts_tokens_and_loadgens_tpot() -> None:
    s = SutStats()
    s.count_output(64, 1_000_000, 64_000_000, retokenized=False)  # 63 ms over 63 tokens after the first
    s.count_output(1, 5, 9, retokenized=True)
    s.count_output(0, 5, 9, retokenized=False)
    assert s.output_tokens == 65 and s.output_lengths == [64, 1, 0]
    assert s.tpot_ms == [pytest.approx(1.0)]  # a 0- or 1-token output has no TPOT
    assert s.single_token_outputs == 1 and s.retokenized == 1


def test_failure_tally_keeps_every_count_and_twenty_examples() -> None:
    s = SutStats()
    for i in range(25):
        s.count_failure(i, "deadline" if i % 2 else "engine", "x" * 400, None if i else "http://e:1")
    assert s.failed == 25 and dict(s.failures_by_kind) == {"engine": 13, "deadline": 12}
    assert len(s.failure_examples) == 20
    assert s.failure_examples[0] == {"sample_index": 0, "kind": "engine", "message": "x" * 300, "endpoint": "http://e:1"}
