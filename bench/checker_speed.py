"""How fast is ``check-submission`` on a results repository of realistic size?

Builds a large tree by replicating the shared v5.1 subset under different submitter names
(hard links where possible; ``systems/*.json`` rewritten so their ``submitter`` field matches
the new directory name), then measures in the same run:

- the floor: a process that walks the tree (stat of every entry, as the structure checks need)
  and reads every file a check needs (systems, measurements, results and compliance files),
  doing nothing else;
- ``check-submission`` on the same tree (``--quiet --json``), as a child process.

Both run after a warm-up pass, so both read from the page cache; each is timed ``--repeat``
times, floor and check alternating (a burst of load on a shared machine then hits both alike),
and the fastest run of each counts (the machine may be shared). Printed: wall time, CPU time
(user+system of the process and its children, from ``getrusage(RUSAGE_CHILDREN)``), peak RSS
(largest single process, ``ru_maxrss``) and peak RSS of the whole process tree (sampled from
/proc every 100 ms), and the ratio check/floor. Targets: ratio <= 3, peak <= 200 MB.

    python3 bench/checker_speed.py [--copies 23] [--keep DIR] [--shared PATH] [-- extra check-submission args]

On a real tree instead (nothing built; e.g. a whole published round), with the round's official checker
(bench/whole_round.py: its tag of the mlcommons/inference mirror, extracted into a temporary directory) timed in
the same run, alternating with the floor and ``check-submission``:

    python3 bench/checker_speed.py --tree /work/rounds/v5.1 --round v5.1 [--official-checker-time] [--mirror GITDIR]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import whole_round

REPO = Path(__file__).resolve().parent.parent
TARGET_RATIO = 3.0
TARGET_PEAK_MB = 200.0
SAMPLE_PERIOD_S = 0.1  # process-tree RSS sampling (reads a few /proc files of our own processes)
# Folders of a submitter the checker reads files from (the rest it only walks).
READ_DIRS = ("systems", "measurements", "results", "compliance")
CHECK_SUMMARY = re.compile(r"^\d+ results: ")  # check-submission's final line


def find_shared(explicit: str | None) -> Path:
    candidates = [Path(explicit)] if explicit else []
    env = os.environ.get("INFERENCE_AUDIT_SHARED")
    candidates += [Path(env)] if env else []
    candidates += [REPO.parent / "shared", REPO / "shared", Path("/work/shared")]
    for c in candidates:
        if (c / "data" / "mlperf-inference-v5.1").is_dir():
            return c / "data" / "mlperf-inference-v5.1"
    sys.exit("checker_speed: the shared v5.1 tree was not found (use --shared PATH)")


# ---- building the big tree ----------------------------------------------------------------------------------


def _link_or_copy(src: Path, dst: Path) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def _rewrite_system_json(src: Path, dst: Path, old: str, new: str) -> None:
    data = json.loads(src.read_text(encoding="utf-8"))
    if isinstance(data, dict) and str(data.get("submitter", "")).lower() == old.lower():
        data["submitter"] = new
    dst.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def build_tree(source: Path, dest: Path, copies: int) -> tuple[int, int]:
    """Replicate every ``<division>/<submitter>`` of ``source`` ``copies`` times; returns (files, results)."""
    files = 0
    results = 0
    for division in sorted(p for p in source.iterdir() if p.is_dir()):
        for submitter in sorted(p for p in division.iterdir() if p.is_dir()):
            for k in range(copies):
                new = submitter.name if k == 0 else f"{submitter.name}{k:02d}"
                target = dest / division.name / new
                for dirpath, dirnames, filenames in os.walk(submitter):
                    rel = Path(dirpath).relative_to(submitter)
                    (target / rel).mkdir(parents=True, exist_ok=True)
                    if len(rel.parts) == 4 and rel.parts[0] == "results":
                        results += 1
                    for name in filenames:
                        src = Path(dirpath) / name
                        dst = target / rel / name
                        if rel.parts == ("systems",) and name.endswith(".json"):
                            _rewrite_system_json(src, dst, submitter.name, new)
                        else:
                            _link_or_copy(src, dst)
                        files += 1
                    dirnames.sort()
    return files, results


# ---- the floor --------------------------------------------------------------------------------------------


def floor(root: Path) -> tuple[int, int]:
    """Walk ``root`` (stat every entry) and read every file under the folders the checks read."""
    n_files = 0
    n_bytes = 0
    for dirpath, _dirnames, filenames in os.walk(root):
        rel = Path(dirpath).relative_to(root).parts
        read = len(rel) >= 3 and rel[2] in READ_DIRS
        for name in filenames:
            path = os.path.join(dirpath, name)
            os.lstat(path)  # the structure checks need every entry's type and size
            n_files += 1
            if read:
                with open(path, "rb") as fh:
                    n_bytes += len(fh.read())
    return n_files, n_bytes


# ---- measuring a child process -----------------------------------------------------------------------------


@dataclass
class Measurement:
    wall_s: float
    cpu_s: float
    peak_rss_mb: float  # largest single process
    peak_tree_rss_mb: float  # sum over the process tree, sampled
    returncode: int
    output: str


_PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as fh:
                out.extend(int(c) for c in fh.read().split())
    except OSError:
        pass
    return out


def _tree_rss_kb(pid: int) -> int:
    """Resident set of ``pid`` and all its descendants (kB), from /proc (cheap: only our own processes)."""
    total, stack = 0, [pid]
    while stack:
        p = stack.pop()
        try:
            with open(f"/proc/{p}/statm", "rb") as fh:
                total += int(fh.read().split()[1]) * _PAGE_KB
        except (OSError, IndexError, ValueError):
            continue
        stack.extend(_children(p))
    return total


def measure(cmd: list[str], cwd: Path = REPO) -> Measurement:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    peak_tree = 0
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=cwd)
    done = threading.Event()

    def sample() -> None:
        nonlocal peak_tree
        while not done.is_set():
            peak_tree = max(peak_tree, _tree_rss_kb(proc.pid))
            done.wait(SAMPLE_PERIOD_S)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, _ = proc.communicate()
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Measurement(
        wall_s=wall,
        cpu_s=cpu,
        peak_rss_mb=after.ru_maxrss / 1024.0,
        peak_tree_rss_mb=peak_tree / 1024.0,
        returncode=proc.returncode,
        output=out.decode("utf-8", errors="replace"),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--copies", type=int, default=23, help="replicas of each submitter (default 23: ~1,400 results)"
    )
    parser.add_argument("--shared", help="the shared v5.1 tree (default: ../shared beside the checkout)")
    parser.add_argument(
        "--repeat", type=int, default=3, help="timed runs of each, alternating; the fastest counts (default 3)"
    )
    parser.add_argument("--keep", type=Path, help="build the tree in this (new) directory and keep it")
    parser.add_argument("--tree", type=Path, help="measure on this existing tree (nothing is built), e.g. /work/rounds/v5.1")
    parser.add_argument("--round", choices=sorted(whole_round.OFFICIAL_TAG), help="with --tree: the round (check-submission --round)")
    parser.add_argument(
        "--official-checker-time",
        action="store_true",
        help="with --tree and --round: also time the round's official checker on the tree, in the same run",
    )
    parser.add_argument("--mirror", type=Path, default=whole_round.DEFAULT_MIRROR, help="mlcommons/inference git mirror")
    parser.add_argument("--floor-only", type=Path, help=argparse.SUPPRESS)  # internal: run the floor on PATH
    parser.add_argument("check_args", nargs="*", help="extra check-submission arguments (after --)")
    args = parser.parse_args(argv)

    if args.floor_only is not None:
        files, size = floor(args.floor_only)
        print(f"floor: {files} files, {size} bytes read")
        return 0

    if args.tree is None and (args.round or args.official_checker_time):
        parser.error("--round and --official-checker-time go with --tree")
    if args.official_checker_time and args.round is None:
        parser.error("--official-checker-time needs --round")
    if args.tree is not None and not (args.tree / "closed").is_dir() and not (args.tree / "open").is_dir():
        parser.error(f"--tree {args.tree}: no closed/ or open/ there")
    work = Path(tempfile.mkdtemp(prefix="checker-speed-")) if args.keep is None else args.keep
    if args.keep is not None:
        work.mkdir(parents=True, exist_ok=False)
    tree = work / "tree" if args.tree is None else args.tree.resolve()
    try:
        if args.tree is None:
            source = find_shared(args.shared)
            t0 = time.perf_counter()
            files, results = build_tree(source, tree, args.copies)
            print(f"tree: {tree}  {files} files, {results} result dirs ({args.copies} copies of {source})")
            print(f"  built in {time.perf_counter() - t0:.1f} s")
        else:
            print(f"tree: {tree}  {len(whole_round.result_dirs(tree))} result dirs (as it is)")
        official_cmd: list[str] = []
        if args.official_checker_time:
            script = whole_round.extract_checker(args.mirror, whole_round.OFFICIAL_TAG[args.round], work / "official")
            official_cmd = [
                sys.executable,
                str(script),
                "--input",
                str(tree),
                "--version",
                args.round,
                "--skip-extra-files-in-root-check",
                "--csv",
                str(work / "official-summary.csv"),
            ]

        floor_cmd = [sys.executable, str(Path(__file__).resolve()), "--floor-only", str(tree)]
        check_cmd = [
            sys.executable,
            "-m",
            "checker.cli.check",
            str(tree),
            "--quiet",
            "--json",
            str(work / "report.json"),
            "--force",  # each timed repeat replaces the previous repeat's report
            *(["--round", args.round] if args.round else []),
            *args.check_args,
        ]
        measure(floor_cmd)  # warm-up: page cache, not timed
        floors: list[Measurement] = []
        checks: list[Measurement] = []
        officials: list[Measurement] = []
        start_ns = time.time_ns()
        for _ in range(args.repeat):
            floors.append(measure(floor_cmd))
            checks.append(measure(check_cmd))
            if official_cmd:
                officials.append(measure(official_cmd, cwd=work))
        if args.tree is not None:
            changed = whole_round.changed_since(tree, start_ns)
            if changed:
                print(f"the tree was written to while measuring: {changed[:10]}")
                return 2
        best_floor = min(floors, key=lambda m: m.wall_s)
        # ru_maxrss of RUSAGE_CHILDREN is a running maximum: the first floor ran before any check
        best_floor.peak_rss_mb = floors[0].peak_rss_mb
        ck = min(checks, key=lambda m: m.wall_s)
        if officials:  # the running maximum would include the official checker's runs: the first check ran before any
            ck.peak_rss_mb = checks[0].peak_rss_mb
        ck.peak_tree_rss_mb = max(m.peak_tree_rss_mb for m in checks)

        print(f"floor ({best_floor.output.strip()}):")
        print(
            f"  wall {best_floor.wall_s:7.2f} s   cpu {best_floor.cpu_s:7.2f} s   peak RSS {best_floor.peak_rss_mb:6.1f} MB"
        )
        print(f"check-submission (exit {ck.returncode}):")
        print(
            f"  wall {ck.wall_s:7.2f} s   cpu {ck.cpu_s:7.2f} s   peak RSS {ck.peak_rss_mb:6.1f} MB "
            f"(largest process), {ck.peak_tree_rss_mb:6.1f} MB (process tree, sampled)"
        )
        last = ck.output.strip().splitlines()[-1:] or ["(no output)"]
        print(f"  {last[0]}")
        if officials:
            oc = min(officials, key=lambda m: m.wall_s)
            tag = whole_round.OFFICIAL_TAG[args.round]
            last_official = (oc.output.strip().splitlines() or ["(no output)"])[-1]
            print(f"official checker {tag} (exit {oc.returncode}): {last_official}")
            print(f"  wall {oc.wall_s:7.2f} s   cpu {oc.cpu_s:7.2f} s   (check-submission/official: {ck.wall_s / oc.wall_s:.2f}x)")
            if "SUMMARY: submission" not in oc.output:
                print("the official checker did not finish:\n" + oc.output[-4000:])
                return 2
        ratio = ck.wall_s / best_floor.wall_s if best_floor.wall_s > 0 else float("inf")
        cpu_ratio = ck.cpu_s / best_floor.cpu_s if best_floor.cpu_s > 0 else float("inf")
        peak = max(ck.peak_rss_mb, ck.peak_tree_rss_mb)
        load = os.getloadavg()
        print(
            f"machine: {os.cpu_count()} CPUs, load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} (1/5/15 min)"
        )
        print(f"ratio check/floor: wall {ratio:.2f}x, cpu {cpu_ratio:.2f}x (target <= {TARGET_RATIO:.0f}x)")
        print(f"peak memory: {peak:.1f} MB (target <= {TARGET_PEAK_MB:.0f} MB)")
        # exit 1 is also Python's for a module that is not there: the final line tells a checked tree from that
        if ck.returncode not in (0, 1) or not CHECK_SUMMARY.match(last[0]):
            print("check-submission failed:\n" + ck.output[-4000:])
            return 2
        ok = ratio <= TARGET_RATIO and peak <= TARGET_PEAK_MB
        print("PASS" if ok else "MISS")
        return 0 if ok else 1
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
