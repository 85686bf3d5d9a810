"""``--select`` / ``--ignore``: rule ids or prefixes, checked against the rules a command can emit before any work.

A typo (``--select PREF``) would otherwise select nothing and pass everything; ``check``, ``table`` and ``claim``
refuse a pattern that matches no registered rule of theirs (exit 2).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from checker.findings import UnusableInput, rule_matches


def split_ids(values: Sequence[str]) -> list[str]:
    """Comma-separated, repeatable option values -> one pattern each."""
    return [part.strip() for v in values for part in v.split(",") if part.strip()]


def refuse_unknown(option: str, patterns: Sequence[str], known: Iterable[str]) -> None:
    """Raise :class:`UnusableInput` naming the patterns of ``option`` that match none of ``known``."""
    ids = list(known)
    unknown = [p for p in patterns if not any(rule_matches(r, [p]) for r in ids)]
    if unknown:
        raise UnusableInput(
            f"{option} {','.join(unknown)}: no rule id matches; rule ids look like {ids[0] if ids else 'PERF-SEEDS'} "
            "(prefixes select families; inference-audit rules ids lists them)"
        )


def parse_filters(select: Sequence[str], ignore: Sequence[str], known: Iterable[str]) -> tuple[list[str], list[str]]:
    """``--select`` and ``--ignore`` as given -> their patterns, each refused (exit 2) when it matches no rule."""
    ids = list(known)
    selected, ignored = split_ids(select), split_ids(ignore)
    refuse_unknown("--select", selected, ids)
    refuse_unknown("--ignore", ignored, ids)
    return selected, ignored
