"""Whole published rounds in the development loop: our verdict on every result against the official checker's.

Runs the official MLCommons submission checker of the round (extracted from the mlcommons/inference mirror at the
round's tag into a temporary directory, never into the project) on a whole results tree, parses its log into one
verdict per result directory (``<division>/<submitter>/results/<system>/<benchmark>/<scenario>``) with the ERROR
lines that concern it, runs our checker (``checker.engine.check_tree``) on the same tree, and prints the counts,
every disagreement (our error findings beside the official lines; the ones in the committed deliberate list apart
from the unexplained ones) and both wall times.

    python3 bench/whole_round.py /work/rounds/v5.1 --round v5.1 [--official-log FILE] [--save-official-log FILE]
        [--write-verdicts FILE] [--listing FILE] [--results-mirror GITDIR] [--official-only]

Official verdict of a result: valid when the checker logged ``Results <path> <value>`` for it (exactly the rows of
its summary CSV); every other result directory it saw (``NoResults``) or skipped (a submitter-, system- or
benchmark-level error stops it before the result) is invalid. An ERROR line concerns a result when it names the
result (or a file under it), its measurements or compliance directory, or one of its ancestors (benchmark, system,
``systems/<system>.json``, submitter); a line naming no path (the power checker's report, a traceback) belongs to
the result named last before it.

Exit 0 when every disagreement is in the deliberate list (``tests/fixtures/rounds/<round>/deliberate.yaml``),
1 otherwise, 2 on unusable input (no tree, unknown round, a checker that did not finish).
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures" / "rounds"
DEFAULT_MIRROR = Path("/work/.mirror/mlcommons+inference/repo")
# the official checker that judged each round's publication: the round's tag of mlcommons/inference
OFFICIAL_TAG = {"v5.1": "v5.1.1", "v4.1": "v4.1"}
CHECKER_DIR = "tools/submission"
DIVISIONS = ("closed", "open", "network")
VERDICTS_COLUMNS = ("path", "verdict", "errors")
# the committed verdict CSV keeps it small: at most this many lines per result, each cut at this length
MAX_LINES = 6
MAX_LINE_CHARS = 200
JOIN = " | "

LINE = re.compile(r"^\[[^\]]*? (?P<src>\S+):(?P<lineno>\d+) (?P<level>[A-Z]+)\] (?P<msg>.*)$")
# a path under the results tree, as the official checker prints it (relative to the tree, maybe "./")
PATH = re.compile(
    r"(?:\./)?(?P<div>closed|open|network)/(?P<sub>[^/\s'\",\]\[]+)"
    r"(?:/(?P<kind>results|measurements|compliance|systems)(?P<rest>(?:/[^/\s'\",\]\[]+)*))?"
)
RESULTS_LINE = re.compile(r"^Results (?P<path>\S+) ")


# ---- the official checker's log ----------------------------------------------------------------------------------


@dataclass
class Record:
    """One log record: its first line and the unprefixed lines printed after it (a traceback, a report)."""

    level: str
    msg: str
    lineno: int  # 1-based line of the log
    more: list[str] = field(default_factory=list)

    def text(self) -> str:
        """The record on one line: its message, and the last non-empty continuation line (an exception's)."""
        tail = next((m.strip() for m in reversed(self.more) if m.strip()), "")
        return f"{self.msg.strip()} ... {tail}" if tail else self.msg.strip()


def records(log_text: str) -> Iterator[Record]:
    current: Record | None = None
    for n, raw in enumerate(log_text.splitlines(), 1):
        m = LINE.match(raw)
        if m is None:
            if current is not None:
                current.more.append(raw)
            continue
        if current is not None:
            yield current
        current = Record(m.group("level"), m.group("msg"), n)
    if current is not None:
        yield current


def scopes(text: str) -> list[str]:
    """The result-tree keys a text names: a result ``div/sub/results/sys/bm/scen`` or an ancestor of results
    (``div/sub/results/sys/bm``, ``div/sub/results/sys``, ``div/sub``)."""
    out: list[str] = []
    for m in PATH.finditer(text):
        div, sub, kind = m.group("div"), m.group("sub"), m.group("kind")
        parts = [p for p in (m.group("rest") or "").split("/") if p]
        if parts:
            parts[-1] = parts[-1].rstrip(".:;")
        if kind == "systems" and parts:
            parts = [parts[0].removesuffix(".json")]
        elif kind is None or kind == "systems":
            parts = []
        key = "/".join([div, sub, "results", *parts[:3]]) if parts else f"{div}/{sub}"
        if key not in out:
            out.append(key)
    return out


def ancestors(result: str) -> list[str]:
    """The keys whose lines concern ``result``: itself, its benchmark, its system, its submitter."""
    parts = result.split("/")
    return [result, "/".join(parts[:5]), "/".join(parts[:4]), "/".join(parts[:2])]


@dataclass
class OfficialLog:
    valid: set[str]  # results the checker logged as "Results <path> <value>"
    errors: dict[str, list[str]]  # key (result or ancestor) -> ERROR lines, in log order
    finished: bool  # the log ends with the checker's summary


def parse_official(log_text: str) -> OfficialLog:
    valid: set[str] = set()
    errors: dict[str, list[str]] = {}
    last: list[str] = []
    finished = False
    for rec in records(log_text):
        named = scopes(rec.msg + "\n" + "\n".join(rec.more))
        if named:
            last = named
        m = RESULTS_LINE.match(rec.msg)
        if rec.level == "INFO" and m and m.group("path").count("/") == 5:
            valid.add(m.group("path"))
        if rec.msg.startswith("SUMMARY: submission"):
            finished = True
            continue
        if rec.level == "ERROR" and not rec.msg.startswith("NoResults "):
            for key in named or last:
                errors.setdefault(key, []).append(rec.text())
    return OfficialLog(valid, errors, finished)


def official_lines(log: OfficialLog, result: str) -> list[str]:
    return [line for key in ancestors(result) for line in log.errors.get(key, [])]


def result_dirs(tree: Path) -> list[str]:
    """Every ``<division>/<submitter>/results/<system>/<benchmark>/<scenario>`` directory of ``tree``."""
    found: list[str] = []
    for div in DIVISIONS:
        for sub in _dirs(tree / div):
            for system in _dirs(sub / "results"):
                for bm in _dirs(system):
                    found.extend(str(s.relative_to(tree)) for s in _dirs(bm))
    return sorted(found)


def _dirs(path: Path) -> list[Path]:
    try:
        return sorted(p for p in path.iterdir() if p.is_dir() and not p.is_symlink())
    except (FileNotFoundError, NotADirectoryError):
        return []


# ---- running the official checker ----------------------------------------------------------------------------


@dataclass
class OfficialRun:
    log_text: str
    summary_csv: str | None  # None when a saved log was reused
    wall_s: float | None
    command: list[str]


def extract_checker(mirror: Path, tag: str, dest: Path) -> Path:
    """Write ``tools/submission`` of ``tag`` into ``dest`` (blob by blob: the mirror is partial) and return the
    path of its ``submission_checker.py``."""
    listing = subprocess.run(
        ["git", f"--git-dir={mirror}", "ls-tree", "-r", "-z", tag, "--", CHECKER_DIR],
        capture_output=True,
        check=True,
    ).stdout
    for rec in listing.split(b"\0"):
        if not rec:
            continue
        meta, rel = rec.split(b"\t", 1)
        _mode, kind, sha = meta.split()
        if kind != b"blob":
            continue
        blob = subprocess.run(
            ["git", f"--git-dir={mirror}", "cat-file", "blob", sha.decode()], capture_output=True, check=True
        ).stdout
        target = dest / rel.decode()
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(blob)
    script = dest / CHECKER_DIR / "submission_checker.py"
    if not script.is_file():
        raise SystemExit(f"whole_round: {mirror} has no {CHECKER_DIR}/submission_checker.py at {tag}")
    return script


def changed_since(tree: Path, start_ns: int) -> list[str]:
    """Entries of ``tree`` created, written, renamed or removed (their directory's ctime) since ``start_ns``."""
    changed: list[str] = []
    for dirpath, dirnames, filenames in os.walk(tree):
        for name in [".", *dirnames, *filenames]:
            p = os.path.join(dirpath, name)
            if os.lstat(p).st_ctime_ns >= start_ns:
                changed.append(os.path.relpath(p, tree))
    return changed


def run_official(tree: Path, round_name: str, mirror: Path) -> OfficialRun:
    tag = OFFICIAL_TAG[round_name]
    with tempfile.TemporaryDirectory(prefix=f"official-{tag}-") as tmp:
        work = Path(tmp)
        script = extract_checker(mirror, tag, work / "checker")
        flags = ["--skip-extra-files-in-root-check"]
        accepted = script.read_text(encoding="utf-8")
        missing = [f for f in flags if f'"{f}"' not in accepted]
        if missing:
            raise SystemExit(f"whole_round: the {tag} checker does not accept {missing}")
        cmd = [
            sys.executable,
            str(script),
            "--input",
            str(tree.resolve()),
            "--version",
            round_name,
            *flags,
            "--csv",
            str(work / "summary.csv"),
        ]
        start_ns = time.time_ns()
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=work, capture_output=True, text=True, errors="replace")
        wall = time.perf_counter() - t0
        changed = changed_since(tree, start_ns)
        if changed:
            raise SystemExit(f"whole_round: the official checker wrote into {tree}: {changed[:10]}")
        summary = work / "summary.csv"
        return OfficialRun(
            log_text=proc.stdout + proc.stderr,
            summary_csv=summary.read_text(encoding="utf-8") if summary.is_file() else None,
            wall_s=wall,
            command=[*cmd[:1], f"{CHECKER_DIR}/submission_checker.py@{tag}", *cmd[2:-1], "summary.csv"],
        )


def summary_locations(summary_csv: str) -> set[str]:
    return {row["Location"] for row in csv.DictReader(io.StringIO(summary_csv))}


# ---- committed data: verdicts and deliberate differences ------------------------------------------------------


@dataclass(frozen=True)
class Deliberate:
    path: str
    official: str  # the official checker's verdict, "valid" or "invalid"
    rules: frozenset[str]  # our error rules on it ("ours" is the opposite verdict; none when we say valid)
    why: str
    source: str  # the rules text that makes us right


def verdicts_path(round_name: str) -> Path:
    return FIXTURES / round_name / "official-verdicts.csv"


def deliberate_path(round_name: str) -> Path:
    return FIXTURES / round_name / "deliberate.yaml"


def load_verdicts(path: Path) -> dict[str, tuple[str, str]]:
    """path -> (verdict, official error lines joined by " | ")."""
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        if tuple(reader.fieldnames or ()) != VERDICTS_COLUMNS:
            raise SystemExit(f"{path}: columns {reader.fieldnames}, expected {list(VERDICTS_COLUMNS)}")
        return {row["path"]: (row["verdict"], row["errors"]) for row in reader}


def load_deliberate(path: Path) -> dict[str, Deliberate]:
    if not path.is_file():
        return {}
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    out: dict[str, Deliberate] = {}
    for i, e in enumerate(data.get("results") or [], 1):
        try:
            d = Deliberate(
                path=str(e["path"]),
                official=str(e["official"]),
                rules=frozenset(str(r) for r in e.get("rules") or ()),
                why=str(e["why"]),
                source=str(e["source"]),
            )
        except (KeyError, TypeError) as exc:
            raise SystemExit(f"{path}: entry {i} lacks {exc}") from None
        out[d.path] = d
    return out


def cut(result: str, lines: Iterable[str]) -> str:
    """The lines of ``result`` for the committed CSV: its own path written ``<result>``, each line and their
    number capped (MAX_LINE_CHARS, MAX_LINES)."""
    short = [ln.replace(result, "<result>") for ln in lines]
    kept = [ln if len(ln) <= MAX_LINE_CHARS else ln[: MAX_LINE_CHARS - 3] + "..." for ln in short]
    if len(kept) > MAX_LINES:
        kept = [*kept[:MAX_LINES], f"(+{len(kept) - MAX_LINES} more lines)"]
    return JOIN.join(kept)


def write_verdicts(path: Path, results: list[str], log: OfficialLog) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(VERDICTS_COLUMNS)
        for r in results:
            w.writerow([r, "valid" if r in log.valid else "invalid", cut(r, official_lines(log, r))])


def absent_files(results_mirror: Path, tree: Path) -> dict[str, list[str]]:
    """result -> files of the published repository (HEAD of its mirror) this extraction lacks."""
    listing = subprocess.run(
        ["git", f"--git-dir={results_mirror}", "ls-tree", "-r", "-z", "--name-only", "HEAD"],
        capture_output=True,
        check=True,
    ).stdout
    out: dict[str, list[str]] = {}
    for rel in listing.decode("utf-8", errors="replace").split("\0"):
        if rel and not os.path.lexists(tree / rel):
            for key in scopes(rel):
                if key.count("/") == 5:
                    out.setdefault(key, []).append(rel)
    return out


# ---- main --------------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tree", type=Path, help="a whole results tree (e.g. /work/rounds/v5.1)")
    ap.add_argument("--round", required=True, choices=sorted(OFFICIAL_TAG))
    ap.add_argument("--mirror", type=Path, default=DEFAULT_MIRROR, help="mlcommons/inference git mirror")
    ap.add_argument(
        "--official-log", type=Path, help="reuse this saved official log instead of running the checker"
    )
    ap.add_argument("--save-official-log", type=Path, help="write the official checker's log here")
    ap.add_argument("--write-verdicts", type=Path, help="(re)write the official verdict CSV here")
    ap.add_argument("--deliberate", type=Path, help="deliberate differences (default: the committed fixture)")
    ap.add_argument("--listing", type=Path, help="also write the disagreement listing to this file")
    ap.add_argument(
        "--results-mirror",
        type=Path,
        help="git mirror of the published results repository: name "
        "the files this extraction lacks beside each disagreement",
    )
    ap.add_argument("--official-only", action="store_true", help="only the official verdicts (no check_tree)")
    args = ap.parse_args(argv)

    tree: Path = args.tree
    if not tree.is_dir():
        print(f"whole_round: {tree}: not a directory", file=sys.stderr)
        return 2
    if args.official_log is not None:
        run = OfficialRun(args.official_log.read_text(encoding="utf-8", errors="replace"), None, None, [])
    else:
        run = run_official(tree, args.round, args.mirror)
    if args.save_official_log is not None:
        args.save_official_log.write_text(run.log_text, encoding="utf-8")
    log = parse_official(run.log_text)
    if not log.finished:
        print(
            "whole_round: the official log has no SUMMARY line (the checker did not finish):\n"
            + run.log_text[-3000:],
            file=sys.stderr,
        )
        return 2
    results = result_dirs(tree)
    out: list[str] = []
    say = out.append
    say(
        f"tree {tree}  round {args.round}  official checker {OFFICIAL_TAG[args.round]}"
        + (f" (saved log {args.official_log})" if args.official_log else "")
    )
    unknown = sorted(log.valid - set(results))
    if unknown:
        say(f"official 'Results' for {len(unknown)} paths that are not result directories: {unknown[:5]}")
    if run.summary_csv is not None and summary_locations(run.summary_csv) != log.valid:
        say("WARNING: the official summary CSV and the log's Results lines name different results")
    n_valid = sum(1 for r in results if r in log.valid)
    say(
        f"official: {len(results)} results: {n_valid} valid, {len(results) - n_valid} invalid"
        + (f"  wall {run.wall_s:.1f} s" if run.wall_s is not None else "")
    )
    absent = absent_files(args.results_mirror, tree) if args.results_mirror else {}
    if absent:
        lacking = [
            r
            for r in results
            if r not in log.valid
            and any(Path(f).name in " ".join(official_lines(log, r)) for f in absent.get(r, ()))
        ]
        say(
            f"data: {len(absent)} results lack files of the published repository here; {len(lacking)} official "
            "rejections name such a file (this extraction's, not the round's)"
        )
    if args.write_verdicts is not None:
        write_verdicts(args.write_verdicts, results, log)
        say(f"wrote {args.write_verdicts} ({args.write_verdicts.stat().st_size} bytes)")
    if args.official_only:
        print("\n".join(out))
        return 0

    from checker.engine import check_tree
    from checker.findings import Severity
    from rules import load_round

    t0 = time.perf_counter()
    report = check_tree(tree, load_round(args.round), workers=2)
    ours_wall = time.perf_counter() - t0
    ours = {e.path: e for e in report.results}
    ours_valid = sum(1 for e in report.results if e.valid)
    say(
        f"ours:     {len(ours)} results: {ours_valid} valid, {len(ours) - ours_valid} invalid  wall {ours_wall:.1f} s"
    )
    only_official = sorted(set(results) - set(ours))
    only_ours = sorted(set(ours) - set(results))
    if only_official or only_ours:
        say(
            f"result directories only in the tree walk: {only_official[:10]}; only in our report: {only_ours[:10]}"
        )
    deliberate = load_deliberate(args.deliberate or deliberate_path(args.round))

    agree = 0
    explained: dict[str, str] = {}  # path -> listing block
    unexplained: dict[str, str] = {}
    both_ways = {"official valid, ours invalid": 0, "official invalid, ours valid": 0}
    for r in results:
        entry = ours.get(r)
        if entry is None:
            continue
        official_valid = r in log.valid
        if entry.valid == official_valid:
            agree += 1
            continue
        both_ways["official valid, ours invalid" if official_valid else "official invalid, ours valid"] += 1
        errs = [f for f in entry.findings if f.severity is Severity.ERROR]
        block = [
            f"{r}  official {'valid' if official_valid else 'invalid'}, ours "
            f"{'valid' if entry.valid else 'invalid'} {sorted({f.rule for f in errs})}"
        ]
        block += [f"    ours:     {f.rule} {f.location()}: {f.message}" for f in errs]
        block += [f"    official: {line}" for line in official_lines(log, r)]
        if r in absent:
            block.append(f"    data:     absent from this extraction: {', '.join(absent[r][:4])}")
        d = deliberate.get(r)
        if (
            d is not None
            and d.official == ("valid" if official_valid else "invalid")
            and (d.rules == {f.rule for f in errs})
        ):
            block.append(f"    deliberate: {d.why} [{d.source}]")
            explained[r] = "\n".join(block)
        else:
            if d is not None:
                block.append(
                    f"    deliberate entry does not match: official {d.official}, rules {sorted(d.rules)}"
                )
            unexplained[r] = "\n".join(block)
    stale = sorted(set(deliberate) - set(explained) - set(unexplained))
    say(
        f"agree {agree}, disagree {len(explained) + len(unexplained)} ("
        + ", ".join(f"{k}: {v}" for k, v in both_ways.items())
        + f"); deliberate {len(explained)}, unexplained {len(unexplained)}"
    )
    if stale:
        say(f"WARNING: deliberate entries that are not (or no longer) a disagreement: {stale}")
    say(
        f"wall: official {run.wall_s:.1f} s, ours {ours_wall:.1f} s"
        if run.wall_s is not None
        else f"wall: ours {ours_wall:.1f} s (official: saved log, not timed)"
    )
    listing = [
        *out,
        "",
        f"== deliberate ({len(explained)})",
        *explained.values(),
        "",
        f"== unexplained ({len(unexplained)})",
        *unexplained.values(),
    ]
    if args.listing is not None:
        args.listing.write_text("\n".join(listing) + "\n", encoding="utf-8")
    print("\n".join(listing))
    return 0 if not unexplained else 1


if __name__ == "__main__":
    sys.exit(main())
