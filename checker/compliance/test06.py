"""Re-verify the TEST06 compliance test (LLM output consistency) from accuracy-log entries.

TEST06 is a performance-mode run with ``compliance/TEST06/audit.config``: LoadGen logs about
``accuracy_log_sampling_target`` (100) sampled responses, and ``compliance/TEST06/run_verification.py``
checks them:

1. **First token** (not for Offline): every logged output starts with the ids the SUT reported
   through ``FirstTokenComplete`` (``token_data``), compared element-wise with ``zip``.
2. **EOS**: no output ends with two or more EOS ids (an output of exactly two ids is allowed).
   The loop runs ``while i > 0``, so position 0 is never counted.
3. **Sample length**: ``token_count`` (the ``n_tokens`` reported to LoadGen) equals the number of ids returned.

:func:`verify_test06` repeats those checks per sample, returns which samples fail and why, and
records next to each verdict what the official script would print (``official_pass``), which
differs where the official script is lenient or breaks:

- first token: an empty ``token_data`` passes officially (``zip`` of nothing); a first-token
  report longer than the output passes officially when the output is its prefix. Both fail here.
- a decode error or a missing key makes the official EOS/first-token check fail and the official
  sample-length check crash (no ``verify_accuracy.txt`` at all); here each is a per-sample reason.
- ``--eos_token_id`` has no ``type=int`` in the official script, so any ``-e N`` on its command line
  compares ints with a string and the EOS check always passes; ``official_pass`` assumes no ``-e``,
  i.e. the default EOS id 2.
- the EOS check here uses the model's EOS ids (``Benchmark.test06_eos_token_ids``: 128001/128008/128009
  for Llama-3.1, whose EOS is not 2) and counts trailing ids that are any of them.
- beyond the official script, the number of logged samples is checked (none logged means the audit
  config was not applied; far more than the sampling target means an accuracy-mode run).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from enum import Enum
from itertools import repeat

from pydantic import BaseModel, ConfigDict

from checker.parsers.accuracy_log import AccuracyEntry, TokenDecodeError, TokenDtype
from rules.models import Benchmark, Scenario

OFFICIAL_DEFAULT_EOS_TOKEN_ID = 2  # run_verification.py: --eos_token_id default
OFFICIAL_SAMPLING_TARGET = 100  # compliance/TEST06/audit.config: accuracy_log_sampling_target
# Beyond official: more logged samples than this multiple of the target is not a TEST06 run.
MAX_SAMPLES_FACTOR = 2


class Test06Check(str, Enum):
    FIRST_TOKEN = "first_token"
    EOS = "eos"
    SAMPLE_LENGTH = "sample_length"
    SAMPLE_COUNT = "sample_count"


class SampleProblem(BaseModel):
    """Why one logged sample fails one check."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    check: Test06Check
    entry_index: int
    seq_id: int
    qsl_idx: int
    line: int | None
    reason: str
    official_catches: bool  # False where run_verification.py would pass this sample


class CheckOutcome(BaseModel):
    """One check over all samples. ``passed`` None means skipped (first token in Offline)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    check: Test06Check
    passed: bool | None
    official_pass: bool | None  # what run_verification.py prints (None: skipped / not an official check)
    samples_checked: int
    problems: tuple[SampleProblem, ...] = ()
    note: str | None = None


class Test06Result(BaseModel):
    """TEST06 verdict with per-check outcomes."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    scenario: Scenario
    dtype: TokenDtype
    eos_token_id: int  # the first of ``eos_token_ids``
    eos_token_id_given: bool  # False: the official default (2) was used
    eos_token_ids: tuple[int, ...] = ()  # every id counted as EOS
    sample_count: int
    first_token: CheckOutcome
    eos: CheckOutcome
    sample_length: CheckOutcome
    samples: CheckOutcome

    @property
    def passed(self) -> bool:
        return all(c.passed is not False for c in self.outcomes)

    @property
    def official_passed(self) -> bool:
        """What the official script's last line would say (complete vs failed)."""
        return all(c.official_pass is not False for c in (self.first_token, self.eos, self.sample_length))

    @property
    def outcomes(self) -> tuple[CheckOutcome, ...]:
        return (self.first_token, self.eos, self.sample_length, self.samples)

    def verify_accuracy_lines(self) -> list[str]:
        """The official ``verify_accuracy.txt`` lines for this verdict (our stricter verdicts)."""

        def word(passed: bool | None) -> str:
            return "Skipped" if passed is None else str(passed)

        complete = "TEST06 verification complete" if self.passed else "TEST06 verification failed"
        return [
            f"First token check pass: {word(self.first_token.passed)}",
            f"EOS check pass: {word(self.eos.passed)}",
            f"Sample length check pass: {word(self.sample_length.passed)}",
            complete,
        ]


def _problem(check: Test06Check, e: AccuracyEntry, reason: str, official: bool) -> SampleProblem:
    return SampleProblem(
        check=check,
        entry_index=e.index,
        seq_id=e.seq_id,
        qsl_idx=e.qsl_idx,
        line=e.line,
        reason=reason,
        official_catches=official,
    )


def _decode(e: AccuracyEntry, dtype: TokenDtype) -> tuple[int, ...] | str:
    try:
        return e.token_ids(dtype)
    except TokenDecodeError as err:
        return f"output bytes do not decode as {dtype.value}: {err}"


def token_settings_of(bench: Benchmark | None) -> tuple[tuple[int, ...], TokenDtype]:
    """The benchmark's TEST06 EOS ids and output dtype (rules data), else the official script's defaults."""
    eos_ids = bench.test06_eos_token_ids if bench is not None else ()
    dtype_name = bench.test06_token_dtype if bench is not None else None
    return (eos_ids or (OFFICIAL_DEFAULT_EOS_TOKEN_ID,)), TokenDtype(dtype_name or TokenDtype.INT32.value)


def _int64_shaped(e: AccuracyEntry) -> bool:
    """``data`` is ``token_count`` little-endian int64 ids whose high 32-bit words are all zero."""
    h = e.data_hex
    return (
        e.token_count is not None
        and len(h) == 16 * e.token_count
        and all(h[i + 8 : i + 16] == "00000000" for i in range(0, len(h), 16))
    )


def detect_token_dtype(entries: Sequence[AccuracyEntry], default: TokenDtype) -> tuple[TokenDtype, str]:
    """The id width of one TEST06 log, decided from its data, with the reason.

    A SUT may log int32 ids (most reference SUTs) or int64 ids (the llama2-70b reference accuracy script's default;
    the official ``run_verification.py --dtype int64`` accepts such a log). The log is read as int64 when every
    entry with a ``token_count`` holds exactly 8 bytes per counted token and every high 32-bit word is zero (token
    ids are small non-negative numbers), as int32 when every such entry holds exactly 4 bytes per counted token;
    otherwise (mixed or inconsistent entries, no token counts) as ``default`` (the benchmark's dtype), and the
    sample-length check says which entries disagree.
    """
    counted = [e for e in entries if e.token_count]
    if not counted:
        return default, f"no token counts logged: ids read as {default.value} (the benchmark's width)"
    if all(_int64_shaped(e) for e in counted):
        return TokenDtype.INT64, (
            f"ids read as int64: all {len(counted)} counted entries hold 8 bytes per token_count with zero high "
            "words (run_verification.py --dtype int64)"
        )
    if all(e.data_nbytes == 4 * (e.token_count or 0) for e in counted):
        return TokenDtype.INT32, f"ids read as int32: all {len(counted)} counted entries hold 4 bytes per token_count"
    return default, f"ids read as {default.value} (the benchmark's width): the byte lengths fit neither width throughout"


def _trailing_eos(ids: Sequence[int], eos: frozenset[int]) -> int:
    """Trailing EOS ids counted as the official loop does (position 0 never counted)."""
    n = 0
    for i in range(len(ids) - 1, 0, -1):
        if ids[i] not in eos:
            break
        n += 1
    return n


def _first_token(entries: Sequence[AccuracyEntry], scenario: Scenario, dtype: TokenDtype) -> CheckOutcome:
    if scenario.loadgen_scenario is Scenario.OFFLINE:
        return CheckOutcome(
            check=Test06Check.FIRST_TOKEN,
            passed=None,
            official_pass=None,
            samples_checked=0,
            note="skipped for Offline, as the official script does",
        )
    problems = []
    for e in entries:
        ids = _decode(e, dtype)
        if isinstance(ids, str):
            problems.append(_problem(Test06Check.FIRST_TOKEN, e, ids, True))
            continue
        if e.token_data_hex is None:
            reason = "no token_data in the log (FirstTokenComplete not called, or use_token_latencies off)"
            problems.append(_problem(Test06Check.FIRST_TOKEN, e, reason, True))
            continue
        try:
            first = e.first_token_ids(dtype) or ()
        except TokenDecodeError as err:
            problems.append(_problem(Test06Check.FIRST_TOKEN, e, f"token_data does not decode: {err}", True))
            continue
        official_ok = all(a == b for a, b in zip(ids, first, strict=False))
        if not official_ok:
            k = next(i for i, (a, b) in enumerate(zip(ids, first, strict=False)) if a != b)
            reason = f"reported first token(s) {list(first[:4])} but the output starts {list(ids[:4])} (differs at position {k})"
            problems.append(_problem(Test06Check.FIRST_TOKEN, e, reason, True))
        elif not first:
            reason = "FirstTokenComplete reported no token (empty token_data)"
            problems.append(_problem(Test06Check.FIRST_TOKEN, e, reason, False))
        elif len(first) > len(ids):
            reason = f"reported {len(first)} first-token id(s) but the output has only {len(ids)}"
            problems.append(_problem(Test06Check.FIRST_TOKEN, e, reason, False))
    return CheckOutcome(
        check=Test06Check.FIRST_TOKEN,
        passed=not problems,
        official_pass=not any(p.official_catches for p in problems),
        samples_checked=len(entries),
        problems=tuple(problems),
    )


def _eos(entries: Sequence[AccuracyEntry], eos: tuple[int, ...], dtype: TokenDtype) -> CheckOutcome:
    problems = []
    eos_set = frozenset(eos)
    official_eos = frozenset({OFFICIAL_DEFAULT_EOS_TOKEN_ID})
    official_fails = 0
    shown = "/".join(str(i) for i in eos)
    for e in entries:
        ids = _decode(e, dtype)
        if isinstance(ids, str):
            problems.append(_problem(Test06Check.EOS, e, ids, True))
            official_fails += 1
            continue
        official = _trailing_eos(ids, official_eos) >= 2
        official_fails += official
        n = _trailing_eos(ids, eos_set)
        if n >= 2:
            problems.append(_problem(Test06Check.EOS, e, f"output ends with {n} EOS ({shown}) tokens", official))
    return CheckOutcome(
        check=Test06Check.EOS,
        passed=not problems,
        official_pass=official_fails == 0,
        samples_checked=len(entries),
        problems=tuple(problems),
    )


def _sample_length(entries: Sequence[AccuracyEntry], dtype: TokenDtype) -> CheckOutcome:
    problems = []
    crashes = False
    for e in entries:
        if e.token_count is None:
            crashes = True
            reason = "no token_count in the log (use_token_latencies off?); the official script crashes here"
            problems.append(_problem(Test06Check.SAMPLE_LENGTH, e, reason, True))
            continue
        if e.data_nbytes % dtype.itemsize:
            crashes = True
            reason = f"output bytes ({e.data_nbytes}) are not whole {dtype.value} ids; the official script crashes here"
            problems.append(_problem(Test06Check.SAMPLE_LENGTH, e, reason, True))
            continue
        n_ids = e.data_nbytes // dtype.itemsize
        if n_ids != e.token_count:
            reason = f"token_count {e.token_count} reported to LoadGen but {n_ids} ids returned"
            problems.append(_problem(Test06Check.SAMPLE_LENGTH, e, reason, True))
    note = (
        "the official run_verification.py raises on this log and writes no verify_accuracy.txt"
        if crashes
        else None
    )
    return CheckOutcome(
        check=Test06Check.SAMPLE_LENGTH,
        passed=not problems,
        official_pass=not problems,
        samples_checked=len(entries),
        problems=tuple(problems),
        note=note,
    )


def _sample_count(entries: Sequence[AccuracyEntry], target: int, truncated: bool = False) -> CheckOutcome:
    n = len(entries)
    if truncated:
        return CheckOutcome(
            check=Test06Check.SAMPLE_COUNT,
            passed=None,
            official_pass=None,
            samples_checked=n,
            note=f"the log is truncated: only {n} entries are visible, so the logged sample count is unknown",
        )
    if n == 0:
        note = (
            "no sample was logged: the run did not apply TEST06's audit.config (accuracy_log_sampling_target)"
        )
        passed = False
    elif n > MAX_SAMPLES_FACTOR * target:
        note = (
            f"{n} samples logged, more than {MAX_SAMPLES_FACTOR}x the sampling target {target}: "
            "this looks like an accuracy-mode run, not the TEST06 performance run"
        )
        passed = False
    else:
        note = f"{n} samples logged (sampling target {target}; LoadGen samples randomly, so the count varies)"
        passed = True
    return CheckOutcome(
        check=Test06Check.SAMPLE_COUNT, passed=passed, official_pass=None, samples_checked=n, note=note
    )


def verify_test06(
    entries: Sequence[AccuracyEntry],
    scenario: Scenario,
    *,
    eos_token_id: int | None = None,
    eos_token_ids: Sequence[int] = (),
    dtype: TokenDtype = TokenDtype.INT32,
    sampling_target: int = OFFICIAL_SAMPLING_TARGET,
    truncated: bool = False,
) -> Test06Result:
    """Verify TEST06 over the logged entries (all of them, in file order, without dedup).

    The EOS ids are ``eos_token_ids`` when given (e.g. a benchmark's ``test06_eos_token_ids``, see
    :func:`token_settings_of`), else ``eos_token_id``, else the official default (2, Llama-2's EOS).
    ``truncated``: the entries are the visible part of a truncated log (the sample count is then not judged).
    """
    given = tuple(eos_token_ids) or (() if eos_token_id is None else (eos_token_id,))
    eos = given or (OFFICIAL_DEFAULT_EOS_TOKEN_ID,)
    return Test06Result(
        scenario=scenario,
        dtype=dtype,
        eos_token_id=eos[0],
        eos_token_id_given=bool(given),
        eos_token_ids=eos,
        sample_count=len(entries),
        first_token=_first_token(entries, scenario, dtype),
        eos=_eos(entries, eos, dtype),
        sample_length=_sample_length(entries, dtype),
        samples=_sample_count(entries, sampling_target, truncated),
    )


def eos_pair_suffixes(eos_ids: Sequence[int]) -> tuple[bytes, ...]:
    """Every two-id EOS ending as little-endian int32 bytes (``endswith`` screens over raw output bytes)."""
    return tuple(
        a.to_bytes(4, "little", signed=True) + b.to_bytes(4, "little", signed=True) for a in eos_ids for b in eos_ids
    )


# the lines of verify_accuracy.txt that pass each check (run_verification.py prints them; Skipped: Offline only)
FIRST_TOKEN_SKIPPED = "First token check pass: Skipped"
PASS_LINES = {
    "First token check pass": ("First token check pass: True", FIRST_TOKEN_SKIPPED),
    "EOS check pass": ("EOS check pass: True",),
    "Sample length check pass": ("Sample length check pass: True",),
}


def describe_failure(outcome: CheckOutcome, dtype_why: str) -> str:
    """A failed check in words: how many samples fail, the first one and why, and what the official script says."""
    first = outcome.problems[0] if outcome.problems else None
    extra = f"; first: entry {first.entry_index} (qsl_idx {first.qsl_idx}): {first.reason}" if first else ""
    note = f" ({outcome.note})" if outcome.note else ""
    if outcome.official_pass is None:
        official = " run_verification.py does not check this"
    elif outcome.official_pass:
        official = " The official run_verification.py passes this"
    else:
        official = ""
    return (
        f"TEST06 {outcome.check.value} check fails on {len(outcome.problems)} of {outcome.samples_checked} "
        f"logged samples{extra}{note} [{dtype_why}].{official}"
    )


def fix_for(check: Test06Check, n: int) -> str:
    if check is Test06Check.SAMPLE_COUNT and n == 0:
        return (
            "LoadGen logged no sample, so it never read TEST06's audit.config: copy compliance/TEST06/audit.config "
            "into the directory the benchmark runs from (LoadGen's working directory), rerun TEST06 and check that "
            "its detail log says 'Found Audit Config file (audit.config)'"
        )
    if check is Test06Check.SAMPLE_COUNT:
        return "run TEST06 as a performance-mode run with its audit.config (not an accuracy run) and submit that log"
    if check is Test06Check.FIRST_TOKEN:
        return "report the first token's ids through FirstTokenComplete exactly as they start the response, rerun TEST06"
    if check is Test06Check.EOS:
        return "stop the output at the first EOS (do not pad with EOS tokens), rerun TEST06"
    return "report to LoadGen (n_tokens / token_count) exactly the number of token ids in the response, rerun TEST06"


# The screens: a verdict of 'every sample passes' without decoding a token, else the full parser and verify_test06 decide


def _hex_field(line: str, name: str) -> bytes | None:
    """The bytes of the hex string ``"<name>" : "..."`` in a LoadGen accuracy-log line; None when absent or not pure
    hex (``bytes.fromhex`` skips whitespace, so the length check rejects it)."""
    tag = f'"{name}" : "'
    i = line.find(tag)
    if i < 0:
        return None
    i += len(tag)
    j = line.find('"', i)
    if j < 0:
        return None
    try:
        raw = bytes.fromhex(line[i:j])
    except ValueError:
        return None
    return raw if 2 * len(raw) == j - i else None


def screen_text(
    text: str, scenario: Scenario, eos_ids: tuple[int, ...] = (OFFICIAL_DEFAULT_EOS_TOKEN_ID,)
) -> bool:
    """True when every logged sample certainly passes :func:`verify_test06` (int32 ids, the official
    EOS id): a screen over LoadGen's line layout and the raw bytes, without decoding a token. Anything unusual
    returns False and the log goes through the full parser and verifier, which give the verdict and the per-sample
    reasons."""
    lines = text.split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    if len(lines) < 3 or lines[0].strip() != "[" or lines[-1].strip() != "]":
        return False
    entries = lines[1:-1]
    if len(entries) > MAX_SAMPLES_FACTOR * OFFICIAL_SAMPLING_TARGET:
        return False
    first_token_needed = scenario is not Scenario.OFFLINE
    eos2 = eos_pair_suffixes(eos_ids)
    for raw in entries:
        ln = raw.strip()
        if not ln.startswith('{ "seq_id" : ') or not (ln.endswith(" }") or ln.endswith(" },")):
            return False
        data = _hex_field(ln, "data")
        first = _hex_field(ln, "token_data")
        k = ln.find('"token_count" : ')
        if data is None or k < 0:
            return False
        if ln.count('" : ') != 4 + (first is not None):
            return False  # another key, or a field spelled otherwise
        digits = ln[k + len('"token_count" : ') :].rstrip(",").rstrip("}").strip()
        if not digits.isdigit() or len(data) % 4:
            return False
        try:
            if len(data) // 4 != int(digits):
                return False
        except ValueError:  # 4,301 digits or more, or a digit int() does not read ("²"): the full parser decides
            return False
        if data.endswith(eos2):
            return False
        if first_token_needed and (
            not first or len(first) % 4 or len(first) > len(data) or not data.startswith(first)
        ):
            return False
    return True


_HEX_UPPER = b"0123456789ABCDEF"
# LoadGen's accuracy-log entry as ``bytes.split(b'"')`` cuts the whole file: (pieces per entry, the fixed pieces
# by offset within the entry, offset of the token_data hex or None). The other offsets hold numbers and hex.
_LAYOUT_WITH_FIRST = (
    14,
    (
        (1, b"seq_id"),
        (3, b"qsl_idx"),
        (5, b"data"),
        (6, b" : "),
        (8, b", "),
        (9, b"token_data"),
        (10, b" : "),
        (12, b", "),
        (13, b"token_count"),
    ),
    11,
)
_LAYOUT_NO_FIRST = (
    10,
    ((1, b"seq_id"), (3, b"qsl_idx"), (5, b"data"), (6, b" : "), (8, b", "), (9, b"token_count")),
    None,
)


# The numbers between the fixed pieces, each list joined with NUL (which the fixed pieces never hold).
_IDS_RE = re.compile(rb" : [0-9]+, (?:\x00 : [0-9]+, )*")
_COUNTS_RE = re.compile(rb"(?: : ([0-9]+) \},\n\{ \x00)* : ([0-9]+) \}\n\]\n?")
_COUNT_RE = re.compile(rb" : ([0-9]+) ")


def screen_bytes(
    data: bytes, scenario: Scenario, eos_ids: tuple[int, ...] = (OFFICIAL_DEFAULT_EOS_TOKEN_ID,)
) -> bool:
    """A faster, narrower form of :func:`screen_text` on the raw bytes, for LoadGen's exact layout (upper-case
    hex, one entry a line, ``token_data`` present or, in Offline, absent): True only where :func:`screen_text`
    is True too. One ``split(b'"')`` of the whole file cuts every entry into a fixed number of pieces; the fixed
    pieces are compared per offset, the numbers matched per column with one regex each, and the hex fields checked
    with ``bytes.translate``, so nothing is decoded or handled line by line."""
    p = split_quotes(data)
    first_token_needed = scenario is not Scenario.OFFLINE
    # b'"token_data"' in data: a piece between two quotes is exactly b"token_data" (the first and last pieces have a
    # quote on one side only); the first entry's p[9] usually answers, else the list is searched, not the bytes
    with_first = first_token_needed or (len(p) > 10 and p[9] == b"token_data") or b"token_data" in p[1:-1]
    layout = _LAYOUT_WITH_FIRST if with_first else _LAYOUT_NO_FIRST
    stride, fixed, first_at = layout
    n, rem = divmod(len(p) - 1, stride)
    if rem or n < 1 or n > MAX_SAMPLES_FACTOR * OFFICIAL_SAMPLING_TARGET or p[0] != b"[\n{ ":
        return False
    for off, want in fixed:
        if p[off::stride].count(want) != n:
            return False
    for ids in (b"\x00".join(p[2::stride]), b"\x00".join(p[4::stride])):
        if ids.count(b"\x00") != n - 1 or _IDS_RE.fullmatch(ids) is None:
            return False
    ends = b"\x00".join(p[stride::stride])
    if ends.count(b"\x00") != n - 1 or _COUNTS_RE.fullmatch(ends) is None:
        return False
    counts = _COUNT_RE.findall(ends)
    hexes = p[7::stride]
    firsts = p[first_at::stride] if first_at is not None else [b""] * n
    if len(counts) != n:
        return False
    eos2 = tuple(pair.hex().upper().encode() for pair in eos_pair_suffixes(eos_ids))
    try:
        for hexd, first, count in zip(hexes, firsts, counts, strict=True):
            if len(hexd) % 8 or len(first) % 8 or len(hexd) != 8 * int(count) or hexd.endswith(eos2):
                return False
            if first_token_needed and (not first or not hexd.startswith(first)):
                return False
    except ValueError:  # a count of 4,301 digits or more (int() refuses it): no entry's length; the full parser decides
        return False
    # bytes.translate deleting the hex digits leaves nothing of a pure hex field
    return not any(map(bytes.translate, hexes, repeat(None), repeat(_HEX_UPPER))) and not any(
        map(bytes.translate, firsts, repeat(None), repeat(_HEX_UPPER))
    )


_DATA_OPEN = b'"data" : "'


def split_quotes(data: bytes) -> list[bytes]:
    """``data.split(b'"')``, faster on an accuracy log: ``bytes.split`` looks at every byte, here the long hex of
    each ``"data"`` field is skipped with ``find`` (memchr). Exact for any input: for a quote at ``q1`` and the next
    quote at ``q2``, ``split(data) == split(data[:q1]) + [data[q1 + 1 : q2]] + split(data[q2 + 1 :])``."""
    out: list[bytes] = []
    find = data.find
    pos = 0
    while True:
        a = find(_DATA_OPEN, pos)
        if a < 0:
            break
        q1 = a + len(_DATA_OPEN) - 1  # the quote that opens the hex
        q2 = find(b'"', q1 + 1)
        if q2 < 0:
            break
        out += data[pos:q1].split(b'"')
        out.append(data[q1 + 1 : q2])
        pos = q2 + 1
    out += data[pos:].split(b'"')
    return out
