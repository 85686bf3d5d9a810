"""How long does ``inference-audit`` take to start?

Times, in the same run and alternating (a burst of load on a shared machine then hits each alike), the wall time of

- the floor: ``python -c pass`` with the interpreter the package is installed in;
- ``inference-audit --help`` and ``inference-audit`` alone (the list of commands), through the installed console
  script beside that interpreter (not a pyenv shim, which adds its own start-up), else ``python -m loadgen_sut.cli``;
- ``check-submission --help`` and ``inference-audit rules --help`` (a subcommand's parser: its module is imported).

Each is run ``--repeat`` times; the fastest run counts (the machine may be shared) and the median is printed beside
it. Printed: milliseconds and the ratio to the floor. Target: ``inference-audit --help`` under 0.5 s.

    python3 bench/cli_startup.py [--repeat 15]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path


def _tool(name: str) -> list[str]:
    beside = Path(sys.executable).parent / name
    if beside.is_file():
        return [str(beside)]
    found = shutil.which(name)
    if found is not None:
        return [found]
    module = "loadgen_sut.cli" if name == "inference-audit" else "checker.cli.check"
    return [sys.executable, "-m", module]


def _wall_s(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=15, help="runs of each command (default 15)")
    args = ap.parse_args(argv)
    ia, cs = _tool("inference-audit"), _tool("check-submission")
    cases = {
        "python -c pass (floor)": [sys.executable, "-c", "pass"],
        "inference-audit --help": [*ia, "--help"],
        "inference-audit (alone)": ia,
        "inference-audit rules --help": [*ia, "rules", "--help"],
        "check-submission --help": [*cs, "--help"],
    }
    for cmd in cases.values():  # warm-up: the page cache and .pyc files
        _wall_s(cmd)
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(args.repeat):
        for name, cmd in cases.items():
            times[name].append(_wall_s(cmd))
    floor = min(times["python -c pass (floor)"])
    print(f"interpreter: {sys.executable}; console scripts: {ia[0]}, {cs[0]}; {args.repeat} runs each, alternating")
    print(f"{'command':32} {'fastest ms':>10} {'median ms':>10} {'x floor':>8}")
    for name, values in times.items():
        best = min(values)
        print(f"{name:32} {best * 1e3:10.1f} {statistics.median(values) * 1e3:10.1f} {best / floor:8.2f}")
    best_help = min(times["inference-audit --help"])
    verdict = "met" if best_help < 0.5 else "NOT met"
    print(f"inference-audit --help: {best_help * 1e3:.0f} ms = {best_help / floor:.2f}x python -c pass; "
          f"target < 500 ms: {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
