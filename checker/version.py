"""The tool's version, written into every report (check JSON/JUnit/terminal, table and claim JSON, run record).

It is the version of the installed ``inference-audit`` distribution (``pyproject.toml``), so a report always names
the code that produced it; a source checkout that is not installed reports ``0+unknown``.
"""

from __future__ import annotations

from functools import cache
from importlib import metadata

DISTRIBUTION = "inference-audit"
UNKNOWN_VERSION = "0+unknown"


@cache
def tool_version() -> str:
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return UNKNOWN_VERSION
