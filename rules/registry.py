"""Find and load round rules: ``load_round("v5.1") -> Round``.

One YAML file per round under ``rules/data/``; a new round is a new file, not new code.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources
from pathlib import Path

import yaml
from pydantic import ValidationError

from rules.models import Benchmark, Round

_ROUND_FILE = re.compile(r"^v(\d+)\.(\d+)\.yaml$")
# libyaml's loader when PyYAML was built with it (same safe constructors, ~10x faster: every
# check-submission run loads a round file, and small trees take well under a second to check).
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class UnknownRound(LookupError):
    """The requested round has no data file."""


class UnknownBenchmark(LookupError):
    """The round has no benchmark of that name (nor an alias resolving to one)."""


def _data_dir() -> Path:
    return Path(str(resources.files("rules") / "data"))


def list_rounds() -> list[str]:
    """Round names with a data file, oldest first (``["v5.0", "v5.1", ...]``)."""
    found = []
    for p in _data_dir().iterdir():
        m = _ROUND_FILE.match(p.name)
        if m:
            found.append((int(m.group(1)), int(m.group(2)), p.name[: -len(".yaml")]))
    return [name for _, _, name in sorted(found)]


def normalize_round(name: str) -> str:
    """Accept ``v5.1``, ``5.1``, ``V5.1`` and ``5.1.1`` (patch ignored)."""
    s = name.strip().lower().lstrip("v")
    parts = s.split(".")
    if len(parts) < 2 or not all(p.isdigit() for p in parts[:2]):
        raise UnknownRound(f"not a round name: {name!r} (expected e.g. v5.1)")
    return f"v{int(parts[0])}.{int(parts[1])}"


@cache
def load_round(name: str) -> Round:
    """Load and validate one round's rules; raises UnknownRound naming the known rounds."""
    key = normalize_round(name)
    path = _data_dir() / f"{key}.yaml"
    if not path.is_file():
        raise UnknownRound(f"no rules for round {name!r}; known rounds: {', '.join(list_rounds())}")
    try:
        with path.open(encoding="utf-8") as fh:
            raw = yaml.load(fh, Loader=_YAML_LOADER)  # a safe loader (C or Python)
    except yaml.YAMLError as exc:  # a broken data file is a bug in this package, say where
        raise ValueError(f"{path}: not valid YAML: {exc}") from exc
    try:
        return Round.model_validate(raw)
    except ValidationError as exc:
        raise ValueError(f"{path}: invalid round data: {exc}") from exc


def find_benchmark(round_name: str, name: str) -> tuple[Round, Benchmark]:
    """Load a round and resolve a benchmark name or alias in it.

    Raises UnknownRound / UnknownBenchmark with a message that lists what is known.
    """
    rnd = load_round(round_name)
    bench = rnd.benchmark(name)
    if bench is None:
        others = [r for r in list_rounds() if r != rnd.name and load_round(r).benchmark(name)]
        hint = f" (it exists in {', '.join(others)})" if others else ""
        raise UnknownBenchmark(
            f"round {rnd.name} has no benchmark {name!r}{hint}; known: {', '.join(sorted(rnd.benchmarks))}"
        )
    return rnd, bench


def latest_round() -> str:
    rounds = list_rounds()
    if not rounds:
        raise UnknownRound("no round data files installed")
    return rounds[-1]
