"""The official checkers' module-level constants the facts file lacks, read from
``rules/sources/official-constants.yaml`` (each group with its citation) for the rules-data generator."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from rules.build_values import check_cite

CONSTANTS_FILE = Path(__file__).resolve().parent / "sources" / "official-constants.yaml"


@dataclass(frozen=True)
class OfficialConstants:
    """The constants file's groups (``data``), with the lookups that depend on a round's checker family."""

    data: dict[str, Any]

    def family(self, round_name: str) -> str:
        """The checker family of a round: ``v4``, ``v5`` or ``head``."""
        return str(self.data["rounds"][round_name]["family"])

    def cite(self, round_name: str, key: str) -> str:
        """Where the round's checker holds group ``key``: the round's own citation, else its family's."""
        own = self.data["rounds"][round_name].get("cites", {})
        return check_cite(str(own.get(key) or self.data["family_cites"][self.family(round_name)][key]))

    def has_cite(self, round_name: str, key: str) -> bool:
        """Whether the round's checker family holds group ``key`` at all."""
        return key in self.data["family_cites"][self.family(round_name)]

    def group(self, name: str, round_name: str | None = None) -> Any:
        """A copy of group ``name`` (so that the generated data shares no object), overlaid with ``<name>_v4`` for a
        round of the v4 family when the file has one."""
        value = copy.deepcopy(self.data[name])
        if round_name is not None and self.family(round_name) == "v4" and f"{name}_v4" in self.data:
            value.update(copy.deepcopy(self.data[f"{name}_v4"]))
        return value


def load_constants(path: Path = CONSTANTS_FILE) -> OfficialConstants:
    """The constants file; a file that is not a mapping of groups is a ValueError naming it."""
    with path.open(encoding="utf-8") as fh:
        data = yaml.safe_load(fh)
    if not isinstance(data, dict) or "rounds" not in data or "family_cites" not in data:
        raise ValueError(f"{path}: not the official-constants file (no 'rounds' or 'family_cites')")
    return OfficialConstants(data)
