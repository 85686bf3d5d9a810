"""The project's runtime requirements as the device machine needs them, read from their one home, pyproject.toml.

    python3 bench/device/requirements.py           # every requirement, LoadGen pinned to the series the wheels hold
    python3 bench/device/requirements.py --fetch   # those to carry as wheels: what the image lacks or may hold too old
    python3 bench/device/requirements.py --check   # exit 0 when every requirement is installed at a version it accepts

fetch_wheels.sh downloads the --fetch list here; gpu_smoke.sh and workers_ladder.sh, on the device, skip the install
where --check passes and otherwise install the whole list offline from the carried wheels. A dependency added to
pyproject.toml thus travels without editing any script (msgspec once did not, and the offline install failed).
"""

from __future__ import annotations

import argparse
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import tomllib

try:
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name
except ImportError:  # pip always carries a copy
    from pip._vendor.packaging.requirements import Requirement  # type: ignore[no-redef]
    from pip._vendor.packaging.utils import canonicalize_name  # type: ignore[no-redef]

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
# the LoadGen series the carried wheels hold: a build of the default round (rules/data/v6.1.yaml loadgen_versions)
LOADGEN = "mlcommons-loadgen==6.0.*"
# in the device image 'cuda' as /work/.library/device/KINDS.md lists it (read on 2026-11-17): not carried
IMAGE_CARRIES = frozenset({"numpy", "scipy", "pandas", "pyarrow", "pillow", "matplotlib", "sympy", "uvloop"})
# carried although the image has a copy: pydantic-core 2.x needs a newer typing-extensions than the image may hold
CARRIED_PINS = ("typing-extensions>=4.14",)


def requirements(pyproject: Path = PYPROJECT) -> list[str]:
    """pyproject.toml's dependencies, LoadGen's replaced by the pinned series."""
    deps: list[str] = tomllib.loads(pyproject.read_text())["project"]["dependencies"]
    return [d for d in deps if canonicalize_name(Requirement(d).name) != "mlcommons-loadgen"] + [LOADGEN]


def to_fetch(reqs: list[str]) -> list[str]:
    return [r for r in reqs if canonicalize_name(Requirement(r).name) not in IMAGE_CARRIES] + list(
        CARRIED_PINS
    )


def unsatisfied(reqs: list[str]) -> list[str]:
    """The requirements (for this platform) that no installed distribution meets, each with what is installed."""
    out = []
    for line in reqs:
        req = Requirement(line)
        if req.marker is not None and not req.marker.evaluate():
            continue
        try:
            have = version(req.name)
        except PackageNotFoundError:
            out.append(f"{line} (not installed)")
            continue
        if not req.specifier.contains(have, prereleases=True):
            out.append(f"{line} (installed: {have})")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    what = ap.add_mutually_exclusive_group()
    what.add_argument("--fetch", action="store_true", help="only those carried as wheels")
    what.add_argument("--check", action="store_true", help="exit 1, naming them, when any is not installed")
    args = ap.parse_args(argv)
    reqs = requirements()
    if args.check:
        missing = unsatisfied(reqs)
        for m in missing:
            print(f"  not satisfied: {m}", file=sys.stderr)
        return 1 if missing else 0
    print("\n".join(to_fetch(reqs) if args.fetch else reqs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
