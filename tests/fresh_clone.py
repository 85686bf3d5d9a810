"""A scratch directory laid out like a fresh clone of this checkout, for the tests that run the docs as written."""

from __future__ import annotations

import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def link_fresh_clone(work: Path) -> None:
    """Link into ``work`` the top-level entries a fresh clone has: what git tracks or would add (not what it ignores:
    the files the docs' own commands leave in a checkout, ``mybox.json`` or ``first-trial/``, are no clone's, and a
    command writing one would meet a link into the checkout). Without git, every entry but ``.git`` and ``out/``."""
    try:
        listed = subprocess.run(
            ["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            capture_output=True,
            check=True,
            timeout=60,
        ).stdout
        names = {p.split(b"/", 1)[0].decode("utf-8", "surrogateescape") for p in listed.split(b"\0") if p}
    except (OSError, subprocess.SubprocessError):
        names = {e.name for e in REPO.iterdir()} - {".git", "out"}
    for name in sorted(names):
        if (REPO / name).exists():  # listed but deleted in the working tree: a clone would have it, this one not
            (work / name).symlink_to(REPO / name)
