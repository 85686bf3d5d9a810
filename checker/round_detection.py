"""Guess which round a results tree was made for, from the LoadGen versions in its logs.

``check-submission`` uses this when ``--round`` is not given. Only the first 4 KiB of a
sample of performance detail logs are read (LoadGen writes ``loadgen_version`` first); symbolic
links are never followed, so nothing outside the tree is read.

Submissions of a round often use the previous round's LoadGen (v5.1 trees hold 5.0.x logs), so
the versions seen can fit several rounds: the round chosen is the only one accepting every
version seen; when several do, the latest of them, and when none does, the latest round; a
choice that is not clear-cut says so in :attr:`Detection.note`.
"""

from __future__ import annotations

import os
import re
import stat
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from rules.models import Round
from rules.registry import latest_round, list_rounds, load_round

_VERSION_RE = re.compile(rb'"key"\s*:\s*"loadgen_version"\s*,\s*"value"\s*:\s*"(\d+)\.(\d+)(\.\d+)?[^"]*"')
_DETAIL_LOG = "mlperf_log_detail.txt"
MAX_LOGS = 64
_SKIP_DIRS = frozenset({"compliance", "accuracy", "code", "documentation", "measurements", "systems"})
MAX_DEPTH = 9  # <division>/<submitter>/results/<system>/<benchmark>/<scenario>/performance/run_1/<file>


@dataclass(frozen=True)
class Detection:
    round: Round
    loadgen_versions: dict[str, int]  # "5.1" -> number of logs sampled
    note: str  # how the round was chosen, for the terminal and JSON reports
    clear: bool  # False when the choice was a fallback


def sample_loadgen_versions(root: Path, max_logs: int = MAX_LOGS, *, releases: bool = False) -> Counter[str]:
    """major.minor LoadGen versions (``releases``: the full ``5.1.2``) of up to ``max_logs`` performance detail logs.

    Symbolic links are never followed (neither to directories nor to files), so nothing outside
    ``root`` is read; unreadable directories are skipped.
    """
    found = _sample_releases(root, max_logs)
    return found if releases else _series(found)


def _series(releases: Counter[str]) -> Counter[str]:
    """``5.1.2`` / ``5.1.0`` -> ``5.1``, counts added."""
    short: Counter[str] = Counter()
    for version, n in releases.items():
        short[".".join(version.split(".")[:2])] += n
    return short


def _sample_releases(root: Path, max_logs: int) -> Counter[str]:
    """The LoadGen release of each sampled performance detail log (``5.1.2``; ``5.1`` when the log gives no patch)."""
    seen: Counter[str] = Counter()
    stack: list[tuple[str, int]] = [(str(root), 0)]
    logs = 0
    while stack and logs < max_logs:
        directory, depth = stack.pop()
        try:
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name, reverse=True)
        except OSError:
            continue
        for entry in entries:
            if entry.name == _DETAIL_LOG:
                if not entry.is_file(follow_symlinks=False):
                    continue
                logs += 1
                version = _first_version(entry.path)
                if version:
                    seen[version] += 1
                if logs >= max_logs:
                    break
            elif (
                depth < MAX_DEPTH
                and entry.name not in _SKIP_DIRS
                and not entry.name.startswith(".")
                and entry.is_dir(follow_symlinks=False)
            ):
                stack.append((entry.path, depth + 1))
    return seen


def _first_version(path: str) -> str | None:
    try:  # as the checker opens files: no symlink, never blocks on a FIFO swapped in after the walk
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        head = os.read(fd, 4096)
    except OSError:
        return None
    finally:
        os.close(fd)
    m = _VERSION_RE.search(head)
    if m is None:
        return None
    short = f"{int(m.group(1))}.{int(m.group(2))}"
    return short + m.group(3).decode() if m.group(3) else short


def _as_tuple(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


def detect_round(root: Path) -> Detection:
    """The round ``root`` was most likely made for (never raises for bad trees; falls back to the latest)."""
    exact = _sample_releases(root, MAX_LOGS)  # one walk: the releases, and their major.minor series
    versions = _series(exact)
    latest = latest_round()
    if not versions:
        return Detection(
            load_round(latest),
            {},
            f"{latest} (no LoadGen version found in the logs; latest round assumed)",
            clear=False,
        )
    rounds = [load_round(name) for name in list_rounds()]
    seen = ", ".join(f"{v} ({n} logs)" for v, n in sorted(versions.items(), key=lambda kv: _as_tuple(kv[0])))
    accepting = [r for r in rounds if all(r.accepts_loadgen(v) for v in versions)]
    if len(accepting) == 1:
        chosen = accepting[0]
        return Detection(chosen, dict(versions), f"{chosen.name} (detected from LoadGen {seen})", clear=True)
    if len(accepting) > 1:
        # several rounds accept the series (6.0.x: v6.0 and v6.1); the exact releases say whose seeds the logs carry
        by_release = [
            r for r in accepting if r.loadgen_runs and all(r.loadgen_runs.accepts(v) for v in exact)
        ]
        if exact and len(by_release) == 1:
            chosen = by_release[0]
            rel = ", ".join(sorted(exact))
            return Detection(
                chosen,
                dict(versions),
                f"{chosen.name} (detected from LoadGen {rel}, a {chosen.name} release)",
                clear=True,
            )
    if accepting:
        chosen = accepting[-1]
        names = ", ".join(r.name for r in accepting)
        return Detection(
            chosen,
            dict(versions),
            f"{chosen.name} (LoadGen {seen} fits rounds {names}; the latest assumed, use --round to choose)",
            clear=False,
        )
    return Detection(
        load_round(latest),
        dict(versions),
        f"{latest} (no round accepts every LoadGen version seen: {seen}; latest round assumed, use --round)",
        clear=False,
    )
