"""The flags the checker's commands share: the report flags (``--json``/``--csv``/``--junit``/``--html``, ``--force``)
and ``--select``/``--ignore`` (``check``, ``table`` and ``claim``).

``--select`` / ``--ignore`` take rule ids or prefixes, checked against the rules a command can emit before any work:
a typo (``--select PREF``) would otherwise select nothing and pass everything; ``check``, ``table`` and ``claim``
refuse a pattern that matches no registered rule of theirs (exit 2).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Mapping, Sequence

# the parser is built before any work (``--help`` included): this module imports nothing heavy, the filters' checks
# import the findings model when they run
FORCE_HELP = "replace report files that already exist (never a directory, device, FIFO or symlink)"


def add_report_options(parser: argparse.ArgumentParser, reports: Mapping[str, str]) -> None:
    """``--<kind> FILE`` for each report ``kind -> what it is`` (``-`` writes it to stdout), then ``--force``; the
    paths are judged by :func:`checker.report.output.plan_outputs`."""
    for kind, what in reports.items():
        parser.add_argument(f"--{kind}", metavar="FILE", help=f"write {what}; - for stdout")
    parser.add_argument("--force", action="store_true", help=FORCE_HELP)


def add_rule_filters(parser: argparse.ArgumentParser) -> None:
    """``--select`` and ``--ignore`` (read them with :func:`parse_filters`)."""
    parser.add_argument(
        "--select",
        metavar="IDS",
        action="append",
        default=[],
        help="only these rule ids or prefixes, comma-separated (e.g. PERF,ACC-HASH); repeatable",
    )
    parser.add_argument(
        "--ignore",
        metavar="IDS",
        action="append",
        default=[],
        help="drop these rule ids or prefixes, comma-separated; repeatable",
    )


def split_ids(values: Sequence[str]) -> list[str]:
    """Comma-separated, repeatable option values -> one pattern each."""
    return [part.strip() for v in values for part in v.split(",") if part.strip()]


def refuse_unknown(option: str, patterns: Sequence[str], known: Iterable[str]) -> None:
    """Raise :class:`UnusableInput` naming the patterns of ``option`` that match none of ``known``."""
    from checker.findings import UnusableInput, rule_matches

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
