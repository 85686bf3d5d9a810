"""``user.conf`` and ``mlperf.conf`` as LoadGen reads them: ``model.Scenario.key = value`` lines (whitespace-separated
tokens, lookup order ``model.Scenario`` > ``*.Scenario`` > ``model.*`` > ``*.*``), the lines LoadGen would reject or
silently ignore, and each value as LoadGen turns it into a number (C's strtoull/strtod, multipliers, wrapping).

One parser for both sides: the harness plans a run's settings from the user's user.conf (``loadgen_sut.settings``;
``loadgen_sut/settings/user_conf.py`` turns the :class:`ConfProblem` records into its RUN-CONF-* findings), the
checker reads a submission's measurement conf files where a LoadGen release did not log the setting
(:mod:`checker.run_conf`).
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from fractions import Fraction
from functools import cached_property
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from checker.findings import UnusableInput
from rules.models import Scenario

_NS_PER_MS = 1_000_000
# problems listed one by one per kind; the rest of a kind are counted in one more (a 200,000-line file of junk printed
# 200,000 warnings)
MAX_LISTED_PER_KIND = 20


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


# --------------------------------------------------------------------------------------------
# user.conf


class ConfEntry(_Frozen):
    """One ``model.Scenario.key = value`` line as LoadGen reads it."""

    model: str
    scenario: str
    key: str
    value: str
    line: int

    @property
    def text(self) -> str:
        return f"{self.model}.{self.scenario}.{self.key} = {self.value}"


class ConfProblem(_Frozen):
    """A line LoadGen would reject (error_invalid_config: the whole file), silently ignore, or read otherwise than
    written. ``kind`` is SYNTAX, NUMBER (several values), SCENARIO (matches no scenario) or UNKNOWN-KEY."""

    kind: str
    message: str
    path: str | None
    line: int
    fix: str | None = None


class UserConf(_Frozen):
    """A parsed user.conf: its entries (in file order) and lines LoadGen would mishandle."""

    path: str | None
    entries: tuple[ConfEntry, ...] = ()
    problems: tuple[ConfProblem, ...] = ()

    @cached_property
    def _last(self) -> dict[tuple[str, str, str], ConfEntry]:
        """(model, scenario, key) -> its last line: LoadGen fills a map, so within one pattern the last line wins.
        One pass, so that a lookup per entry stays linear in the file (it was quadratic: 20,000 lines, minutes)."""
        return {(e.model, e.scenario, e.key): e for e in self.entries}

    def lookup(self, model: str, scenario: str, key: str) -> ConfEntry | None:
        """LoadGen's lookup order: ``model.Scenario`` > ``*.Scenario`` > ``model.*`` > ``*.*``."""
        for m, s in ((model, scenario), ("*", scenario), (model, "*"), ("*", "*")):
            hit = self._last.get((m, s, key))
            if hit is not None:
                return hit
        return None

    def applying_to(self, model: str, scenario: str) -> tuple[ConfEntry, ...]:
        """Entries whose pattern matches this model and scenario (the ones that can take effect)."""
        return tuple(
            e
            for e in self.entries
            if e.model in (model, "*")
            and e.scenario in (scenario, "*")
            and self.lookup(model, scenario, e.key) is e
        )


# LoadGen's tokenizer: ``std::getline`` (lines end at "\n" only) and ``operator>>`` (C-locale isspace).
_C_SPACE = re.compile(r"[ \t\n\v\f\r]+")


def _tokens(line: str) -> list[str]:
    return [t for t in _C_SPACE.split(line) if t]


def parse_user_conf_text(text: str, path: str | None = None) -> UserConf:
    """Parse user.conf text with LoadGen's tokenizer rules (``test_settings_internal.cc``, measured on 6.0.17).

    LoadGen splits each line on (ASCII) whitespace: the first token is the key, the second must be
    ``=``, every further token is a value (the last one wins) that must read completely as an integer
    (``strtoul(s, &end, 0)``) or a double (``strtod``). A ``#`` token ends the line before the value
    only: ``key = 5 # note`` is an error (``#`` is read as a value) and LoadGen then rejects the whole
    file. ``k=v`` without spaces is one token and is silently ignored, so are ``key`` and ``key =``;
    ``#comment`` (no space) followed by more words is an error. Every such line is reported here so the
    user does not believe a setting applied when it did not. What a value *means* depends on the key
    (:func:`loadgen_value`); that is judged when the settings are planned.
    """
    entries: list[ConfEntry] = []
    problems: list[ConfProblem] = []
    listed: dict[str, int] = {}  # kind -> problems listed
    unlisted: dict[str, tuple[int, int]] = {}  # kind -> (problems past MAX_LISTED_PER_KIND, the first one's line)
    for line_nr, line in enumerate(text.split("\n"), start=1):
        found: list[tuple[str, str, str | None]] = []  # (kind, message, fix) of this line
        entry = _parse_line(line, line_nr, found)
        for kind, message, fix in found:
            if listed.get(kind, 0) < MAX_LISTED_PER_KIND:
                listed[kind] = listed.get(kind, 0) + 1
                problems.append(ConfProblem(kind=kind, message=message, fix=fix, path=path, line=line_nr))
            else:
                n, first = unlisted.get(kind, (0, line_nr))
                unlisted[kind] = (n + 1, first)
        if entry is not None:
            entries.append(entry)
    problems += [
        ConfProblem(
            kind=kind,
            message=f"{n} more line(s) of this kind, from line {first} on, are not listed one by one",
            path=path,
            line=first,
        )
        for kind, (n, first) in unlisted.items()
    ]
    return UserConf(path=path, entries=tuple(entries), problems=tuple(problems))


_COMMENT_OR_SETTING_FIX = "comments need '# ' with a space; settings need 'model.Scenario.key = value'"


def _shape_problem(tokens: list[str], line: str) -> tuple[str, str] | None:
    """Why a line that is no comment gives LoadGen no ``key = value`` (message, fix); None when it does."""
    if "=" in tokens[0] and tokens[0] != "=" and len(tokens) == 1:
        return (
            f"{tokens[0]!r}: LoadGen needs spaces around '=' ('key = value'); it would ignore this line",
            "write 'model.Scenario.key = value'",
        )
    if len(tokens) >= 2 and tokens[1] != "=":
        return (
            f"expected 'key = value', got {line.strip()!r} (LoadGen logs error_invalid_config "
            "and rejects the whole file)",
            _COMMENT_OR_SETTING_FIX,
        )
    if len(tokens) < 3:
        return f"{line.strip()!r}: no value; LoadGen silently ignores this line", _COMMENT_OR_SETTING_FIX
    return None


def _value_problem(key: str, values: list[str]) -> str | None:
    """Why LoadGen rejects the values of a ``key = value ...`` line (the whole file with it); None when it reads
    them."""
    bad = [v for v in values if not loadgen_accepts_number(v)]
    if not bad:
        return None
    what = (
        "a '#' after the value is read as one more value, not as a comment"
        if "#" in bad
        else f"value {bad[0]!r} is not an integer or a number"
    )
    return f"{key}: {what} (LoadGen logs error_invalid_config and rejects the whole file)"


def _key_problems(key: str, scenario: str, name: str) -> list[tuple[str, str, str | None]]:
    """A scenario that matches nothing and a key LoadGen does not read (the entry is kept)."""
    found: list[tuple[str, str, str | None]] = []
    if scenario != "*" and scenario not in {s.value for s in Scenario}:
        found.append(
            (
                "SCENARIO",
                f"{key!r}: scenario {scenario!r} matches nothing (LoadGen is case-sensitive: "
                "SingleStream, MultiStream, Server, Offline)",
                None,
            )
        )
    if name not in KNOWN_KEYS:
        found.append(("UNKNOWN-KEY", f"{key!r}: LoadGen does not read key {name!r}", None))
    return found


def _parse_line(line: str, line_nr: int, found: list[tuple[str, str, str | None]]) -> ConfEntry | None:
    """The entry one line gives LoadGen (None for a comment, a blank line or one LoadGen ignores or rejects), its
    problems appended to ``found`` as (kind, message, fix)."""
    tokens = _tokens(line)
    if not tokens or tokens[0] == "#":
        return None
    if len(tokens) > 1 and tokens[1] == "#":
        return None  # 'key # ...': LoadGen stops at the '#' before any '='
    shape = _shape_problem(tokens, line)
    if shape is not None:
        found.append(("SYNTAX", *shape))
        return None
    key, values = tokens[0], tokens[2:]
    rejected = _value_problem(key, values)
    if rejected is not None:
        found.append(("SYNTAX", rejected, "one number per line; comments on lines of their own"))
        return None
    value = values[-1]
    if len(values) > 1:
        found.append(
            (
                "NUMBER",
                f"{key}: {len(values)} values {' '.join(values)!r}: LoadGen keeps only the last, {value}",
                "one value per line",
            )
        )
    parts = key.rsplit(".", 2)
    if len(parts) != 3 or not all(parts):
        found.append(("SYNTAX", f"{key!r}: keys are 'model.Scenario.key' (model may be '*')", None))
        return None
    model, scenario, name = parts
    found.extend(_key_problems(key, scenario, name))
    return ConfEntry(model=model, scenario=scenario, key=name, value=value, line=line_nr)


# --------------------------------------------------------------------------------------------
# numbers as LoadGen reads them
#
# Measured on mlcommons-loadgen 6.0.17 (FromConfig on a user.conf, TestSettings read back) and read in
# loadgen/test_settings_internal.cc: a value token is accepted when strtoul(s, &end, 0) or strtod(s, &end)
# consumes all of it; an integer key is then applied as strtoull(s, NULL, 0) * multiplier (uint64_t,
# wrapping), a double key as strtod(s, NULL) * multiplier. So an integer key reads only the leading
# integer of its text in C's base-0 syntax: '6e5' -> 6, '1e30' -> 1, '1.5' -> 1, '010' -> 8 (octal),
# '08' -> 0, 'inf'/'nan' -> 0, '-5' -> 2^64-5, '18446744073709551616' -> 2^64-1.

_U64 = 1 << 64
_I64_MAX = (1 << 63) - 1
_STRTOUL_FULL = re.compile(r"[+-]?(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)\Z")
_DEC_FLOAT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\Z")
_HEX_FLOAT = re.compile(r"[+-]?0[xX]([0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)([pP][+-]?\d+)?\Z")
_SPECIAL_FLOAT = re.compile(r"[+-]?(inf|infinity|nan(\([0-9A-Za-z_]*\))?)\Z", re.IGNORECASE)


def loadgen_accepts_number(text: str) -> bool:
    """Whether LoadGen's conf parser accepts this value token (a whole strtoul or strtod number)."""
    return bool(
        _STRTOUL_FULL.match(text)
        or _DEC_FLOAT.match(text)
        or _HEX_FLOAT.match(text)
        or _SPECIAL_FLOAT.match(text)
    )


def c_strtoull(text: str) -> tuple[int, bool]:
    """C ``strtoull(text, NULL, 0)``: (value, out of range). Reads the longest integer prefix, base 0."""
    i, neg = 0, False
    if text[:1] in ("+", "-"):
        neg, i = text[0] == "-", 1
    rest = text[i:]
    if re.match(r"0[xX][0-9a-fA-F]", rest):
        digits, base = re.match(r"[0-9a-fA-F]*", rest[2:]).group(), 16  # type: ignore[union-attr]
    elif rest.startswith("0"):
        digits, base = re.match(r"[0-7]*", rest).group(), 8  # type: ignore[union-attr]
    else:
        digits, base = re.match(r"[0-9]*", rest).group(), 10  # type: ignore[union-attr]
    if not digits:
        return 0, False
    magnitude = int(digits, base)
    if magnitude >= _U64:
        return _U64 - 1, True  # ERANGE: ULLONG_MAX, the sign is not applied
    return ((-magnitude) % _U64 if neg else magnitude), False


def c_strtod(text: str) -> float:
    """C ``strtod(text, NULL)`` for a token LoadGen accepted (decimal, hex float, inf, nan; C locale)."""
    if _SPECIAL_FLOAT.match(text):
        body = text.lstrip("+-").lower()
        sign = -1.0 if text.startswith("-") else 1.0
        return math.copysign(math.nan, sign) if body.startswith("nan") else sign * math.inf
    if _HEX_FLOAT.match(text):
        try:
            return float.fromhex(text)
        except OverflowError:
            return -math.inf if text.startswith("-") else math.inf
    return float(text)  # decimal: both are correctly rounded; overflow -> inf like HUGE_VAL


def _apparent(text: str) -> Fraction | None:
    """The exact number the text seems to write (decimal as written, hex as hex); None for inf/nan."""
    if _SPECIAL_FLOAT.match(text):
        return None
    if _HEX_FLOAT.match(text):
        if re.fullmatch(r"[+-]?0[xX][0-9a-fA-F]+", text):
            return Fraction(int(text, 16))
        try:
            return Fraction(float.fromhex(text))
        except OverflowError:
            return None
    return Fraction(Decimal(text))


class KeyType(_Frozen):
    """How LoadGen reads one key: integer (strtoull) or double (strtod), times a multiplier."""

    kind: str  # "integer" | "double"
    multiplier: int | float = 1
    flag: str | None = None  # integer flags: "eq1" (true only for 1) or "ne0" (true unless 0)
    from_user_conf: bool = True  # False: read from the compiled mlperf.conf only (seeds, test05, ...)


_INT = KeyType(kind="integer")
_EQ1 = KeyType(kind="integer", flag="eq1")
_NE0 = KeyType(kind="integer", flag="ne0")
_MS_TO_NS_INT = KeyType(kind="integer", multiplier=_NS_PER_MS)
_MS_TO_NS_DOUBLE = KeyType(kind="double", multiplier=1000.0 * 1000.0)
_DOUBLE = KeyType(kind="double")
_PERCENT = KeyType(kind="double", multiplier=0.01)
_CONF_ONLY_INT = KeyType(kind="integer", from_user_conf=False)

_KEY_TYPES: dict[str, KeyType] = {
    "mode": _INT,
    "use_token_latencies": _EQ1,
    "infer_token_latencies": _EQ1,
    "sample_concatenate_permutation": _EQ1,
    "performance_issue_unique": _NE0,
    "performance_issue_same": _NE0,
    "coalesce_queries": _NE0,
    "print_timestamps": _NE0,
    "ttft_latency": _MS_TO_NS_INT,
    "tpot_latency": _MS_TO_NS_INT,
    "target_latency_percentile": _PERCENT,
    "target_qps": _DOUBLE,
    "test05": KeyType(kind="integer", flag="eq1", from_user_conf=False),
    "accuracy_log_probability": KeyType(kind="double", multiplier=0.01, from_user_conf=False),
    **{k: _CONF_ONLY_INT for k in ("qsl_rng_seed", "sample_index_rng_seed", "schedule_rng_seed")},
    **{
        k: _CONF_ONLY_INT
        for k in ("test05_qsl_rng_seed", "test05_sample_index_rng_seed", "test05_schedule_rng_seed")
    },
}
_DURATION_KEYS = frozenset({"min_duration", "max_duration"})  # ms; LoadGen turns them into int64 ns


def key_type(key: str, lg_scenario: Scenario) -> KeyType:
    """How LoadGen reads ``key`` for a test of this (LoadGen) scenario: Server's target_latency is an integer
    (ms -> ns), SingleStream's and MultiStream's a double; every other unlisted key an integer."""
    if key == "target_latency":
        return _MS_TO_NS_INT if lg_scenario is Scenario.SERVER else _MS_TO_NS_DOUBLE
    return _KEY_TYPES.get(key, _INT)


class ConfNumber(_Frozen):
    """One user.conf value as LoadGen applies it, and whether the text means that."""

    key: str
    text: str
    kind: str
    value: int | float  # what LoadGen stores (multiplier applied; integers wrapped to uint64)
    read: int | float  # the number LoadGen read before the multiplier (strtoull / strtod)
    misread: str | None = None  # the text does not mean what LoadGen applies
    refused: str | None = None  # LoadGen would crash on or mis-apply it: never started with it

    @property
    def flag_on(self) -> bool:
        return self.read == 1 if key_type(self.key, Scenario.OFFLINE).flag == "eq1" else self.read != 0


def loadgen_value(key: str, text: str, lg_scenario: Scenario) -> ConfNumber:
    """What LoadGen applies for ``key = text`` in a test of ``lg_scenario`` (the text must be an accepted token)."""
    kt = key_type(key, lg_scenario)
    apparent = _apparent(text)
    misread = refused = None
    if kt.kind == "integer":
        read, overflow = c_strtoull(text)
        mult = int(kt.multiplier)
        value = (read * mult) % _U64
        if apparent is None:
            refused = f"{text!r} is not a number; LoadGen's integer parser reads it as {read}"
        elif apparent < 0:
            refused = (
                f"negative: LoadGen reads {text!r} as the unsigned integer {read} (2^64 - {_U64 - read})"
            )
        elif overflow:
            refused = f"{text!r} does not fit 64 bits: LoadGen reads it as 2^64 - 1 = {read}"
        elif read * mult > _I64_MAX or (key in _DURATION_KEYS and read * _NS_PER_MS > _I64_MAX):
            what = f"{read} x {mult}" if mult != 1 else str(read)
            refused = f"{what} overflows LoadGen's 64-bit arithmetic" + (
                f" (it would store {value})" if read * mult >= _U64 else ""
            )
        elif apparent != read:
            misread = f"LoadGen reads only the leading integer of {text!r} (C base-0 syntax): {read}, not {_num_text(apparent)}"
        elif kt.flag == "eq1" and read not in (0, 1):
            misread = (
                f"{read} is neither 0 nor 1: LoadGen turns the setting on only for exactly 1, so this is off"
            )
        elif key == "mode" and read not in (0, 1, 2, 3):
            misread = f"mode {read} is not 0-3: LoadGen logs error_invalid_config and keeps the mode"
        return ConfNumber(
            key=key, text=text, kind=kt.kind, value=value, read=read, misread=misread, refused=refused
        )
    dread = c_strtod(text)
    dvalue = dread * float(kt.multiplier)
    if not math.isfinite(dvalue):
        refused = f"{text!r} is {'not a number' if math.isnan(dread) else 'infinite'} as LoadGen reads it ({dvalue})"
    elif key == "target_qps" and dvalue <= 0:
        refused = f"target_qps {dvalue:g} is not positive: LoadGen's Server schedule never ends (measured: it hangs)"
    elif key == "target_latency" and dvalue <= 0:
        refused = f"target_latency {text} ms is not positive"
    elif key == "target_latency_percentile" and not 0 < dvalue <= 1:
        refused = f"target_latency_percentile {text} is outside (0, 100]"
    return ConfNumber(
        key=key, text=text, kind=kt.kind, value=dvalue, read=dread, misread=misread, refused=refused
    )


def _num_text(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{float(x):g}"


def load_user_conf(path: Path | None) -> UserConf:
    if path is None:
        return UserConf(path=None)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UnusableInput(f"cannot read user.conf: {exc.strerror or exc}", path=str(path)) from exc
    except UnicodeDecodeError as exc:
        raise UnusableInput("user.conf is not UTF-8 text", path=str(path)) from exc
    return parse_user_conf_text(text, str(path))


# Keys LoadGen reads from a conf file. "free": a submission may set it. Others are judged below.
FREE_KEYS = frozenset(
    {"target_qps", "coalesce_queries", "max_async_queries", "print_timestamps", "samples_per_query"}
)
SEED_KEYS = ("qsl_rng_seed", "sample_index_rng_seed", "schedule_rng_seed")
AUDIT_KEYS = frozenset(
    {
        "mode",
        "accuracy_log_rng_seed",
        "accuracy_log_probability",
        "accuracy_log_sampling_target",
        "performance_issue_unique",
        "performance_issue_same",
        "performance_issue_same_index",
        "test05",
        "test05_qsl_rng_seed",
        "test05_sample_index_rng_seed",
        "test05_schedule_rng_seed",
    }
)
KNOWN_KEYS = (
    FREE_KEYS
    | AUDIT_KEYS
    | frozenset(SEED_KEYS)
    | frozenset(
        {
            "min_duration",
            "max_duration",
            "min_query_count",
            "max_query_count",
            "performance_sample_count_override",
            "accuracy_sample_count_override",
            "sample_concatenate_permutation",
            "use_token_latencies",
            "ttft_latency",
            "tpot_latency",
            "target_latency",
            "target_latency_percentile",
            "infer_token_latencies",
            "token_latency_scaling_factor",
            "max_async_queries",
        }
    )
)
