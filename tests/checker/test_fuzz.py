"""Seeded fuzzing of ``check-submission`` on mutated copies of real v5.1 submitter trees.

Each case copies one real submitter, applies 1-3 random mutations (byte flips, truncations,
file and directory deletions, JSON edits, LoadGen log line edits, junk files, symbolic links out of
the tree, to themselves or dangling, and the hostile classes: JSON nested thousands deep or holding
integers over 4,300 digits, NaN / infinite / negative / huge results and latencies, names that are
not UTF-8, FIFOs in place of files), checks it, and
asserts the invariants every input must keep: no exception (exit code 0, 1 or 2; 3 is an
internal error), no traceback, the input tree unchanged, a JSON report that validates against
``schemas/check-report.json``, results that name existing directories, and findings that name
files inside the tree that exist (or that the mutation removed, or that the finding says are
missing).

``INFERENCE_AUDIT_FUZZ_CASES`` sets the number of cases (default 36: about half a minute);
``INFERENCE_AUDIT_FUZZ_SEED`` the base seed, ``INFERENCE_AUDIT_FUZZ_SUBMITTERS`` the submitters
(comma-separated, e.g. ``closed/AMD,open/Krai``). A failure prints the seed and the mutations.
"""

from __future__ import annotations

import codecs
import hashlib
import json
import os
import random
import re
import shutil
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from checker.cli import check as cli
from schemas import schema_errors

SUBMITTERS = tuple(
    os.environ.get("INFERENCE_AUDIT_FUZZ_SUBMITTERS", "closed/RedHat,closed/The_Stage,open/NVIDIA").split(",")
)
CASES = int(os.environ.get("INFERENCE_AUDIT_FUZZ_CASES", "36"))
BASE_SEED = int(os.environ.get("INFERENCE_AUDIT_FUZZ_SEED", "20251130"))
MAX_EDIT_BYTES = 4 * 1024 * 1024  # whole-file edits only on files up to this size


def fingerprint(root: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = p.lstat()
            rel = str(p.relative_to(root))
            if stat.S_ISLNK(st.st_mode):
                out[rel] = "link " + os.readlink(p)
            elif stat.S_ISREG(st.st_mode):
                out[rel] = f"{st.st_mode:o} {hashlib.sha256(p.read_bytes()).hexdigest()}"
            else:
                out[rel] = f"{st.st_mode:o}"
    return out


class Mutator:
    """Applies random, seeded mutations to a tree and remembers what it did and removed."""

    def __init__(self, root: Path, rng: random.Random) -> None:
        self.root = root
        self.rng = rng
        self.log: list[str] = []
        self.removed: set[str] = set()

    def files(self, pred: Callable[[Path], bool] = lambda p: True) -> list[Path]:
        return sorted(p for p in self.root.rglob("*") if p.is_file() and not p.is_symlink() and pred(p))

    def dirs(self) -> list[Path]:
        return sorted(p for p in self.root.rglob("*") if p.is_dir() and not p.is_symlink())

    def rel(self, p: Path) -> str:
        return str(p.relative_to(self.root))

    def pick(self, items: list[Path]) -> Path | None:
        return self.rng.choice(items) if items else None

    # ---- mutations ----------------------------------------------------------------------------------------
    def flip_bytes(self) -> None:
        p = self.pick(self.files(lambda q: 0 < q.stat().st_size <= MAX_EDIT_BYTES))
        if p is None:
            return
        data = bytearray(p.read_bytes())
        n = self.rng.randint(1, 8)
        for _ in range(n):
            i = self.rng.randrange(len(data))
            data[i] = self.rng.randrange(256)
        p.write_bytes(bytes(data))
        self.log.append(f"flip {n} bytes in {self.rel(p)}")

    def truncate(self) -> None:
        p = self.pick(self.files(lambda q: q.stat().st_size > 0))
        if p is None:
            return
        size = p.stat().st_size
        cut = self.rng.choice([0, 1, self.rng.randrange(size), size // 2, max(size - 1, 0)])
        with p.open("r+b") as fh:
            fh.truncate(cut)
        self.log.append(f"truncate {self.rel(p)} to {cut} of {size} bytes")

    def delete_file(self) -> None:
        p = self.pick(self.files())
        if p is None:
            return
        p.unlink()
        self.removed.add(self.rel(p))
        self.log.append(f"delete {self.rel(p)}")

    def delete_dir(self) -> None:
        p = self.pick(self.dirs())
        if p is None:
            return
        shutil.rmtree(p)
        self.removed.add(self.rel(p))
        self.log.append(f"delete dir {self.rel(p)}")

    def json_edit(self) -> None:
        p = self.pick(self.files(lambda q: q.suffix == ".json" and q.stat().st_size <= MAX_EDIT_BYTES))
        if p is None:
            return
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            return
        junk: list[Any] = [None, 0, -1, 1e308, "", "x" * 300, [], {}, True, {"nested": [1, {"a": None}]}]
        if isinstance(data, dict) and data:
            key = self.rng.choice(sorted(data))
            how = self.rng.choice(["drop", "set", "retype"])
            if how == "drop":
                del data[key]
            elif how == "set":
                data[key] = self.rng.choice(junk)
            else:
                data = self.rng.choice(junk)
            self.log.append(f"json {how} {key!r} in {self.rel(p)}")
        elif isinstance(data, list) and data:
            i = self.rng.randrange(len(data))
            data[i] = self.rng.choice(junk)
            self.log.append(f"json set item {i} in {self.rel(p)}")
        else:
            data = self.rng.choice(junk)
            self.log.append(f"json replace {self.rel(p)}")
        p.write_text(json.dumps(data), encoding="utf-8")

    def log_line_edit(self) -> None:
        p = self.pick(self.files(lambda q: q.name.startswith("mlperf_log_") and q.suffix == ".txt"))
        if p is None:
            return
        lines = p.read_bytes().split(b"\n")
        i = self.rng.randrange(len(lines))
        how = self.rng.choice(["drop", "dup", "value", "garble"])
        if how == "drop":
            del lines[i]
        elif how == "dup":
            lines.insert(i, lines[i])
        elif how == "value":
            new = self.rng.choice([b"null", b"-1", b'"garbage"', b"1e400", b"1e308", b"[]", b"{}", b"NaN"])
            if b":::MLLOG" in lines[i]:  # detail log: replace the JSON value
                lines[i] = re.sub(rb'"value": ("[^"]*"|[^,}]*)', b'"value": ' + new, lines[i], count=1)
            else:  # summary log: "key : value"
                lines[i] = re.sub(rb"(:\s*)(\S+)$", rb"\g<1>" + new, lines[i], count=1)
        else:
            lines[i] = lines[i][: self.rng.randrange(len(lines[i]) + 1)] + b'\xff{"key": '
        p.write_bytes(b"\n".join(lines))
        self.log.append(f"log {how} line {i + 1} of {self.rel(p)}")

    def add_junk(self) -> None:
        d = self.pick(self.dirs())
        if d is None:
            return
        name = self.rng.choice(
            ["junk.bin", "extra.txt", ".hidden", "with space.json", "mlperf_log_detail.txt.bak"]
        )
        (d / name).write_bytes(self.rng.randbytes(self.rng.randint(0, 512)))
        self.log.append(f"add {self.rel(d / name)}")

    def add_symlink(self) -> None:
        """Replace a file by a link, or add one: out of the tree, to itself, dangling or to a sibling."""
        files = self.files()
        p = self.pick(files)
        if p is None:
            return
        target = self.rng.choice(["/etc/passwd", "../" * 12 + "etc", p.name, "missing/file", str(files[0])])
        if self.rng.random() < 0.5:
            p.unlink()
            self.removed.add(self.rel(p))
            link = p
        else:
            link = p.with_name(p.name + ".lnk")
        link.symlink_to(target)
        self.log.append(f"symlink {self.rel(link)} -> {target}")

    # ---- hostile classes -------------------------------------------------------------------------------------
    def hostile_json(self) -> None:
        p = self.pick(self.files(lambda q: q.suffix == ".json" and q.stat().st_size <= MAX_EDIT_BYTES))
        if p is None:
            return
        how = self.rng.choice(["deep", "long-int"])
        if how == "deep":
            n = self.rng.choice([150, 1000, 20_000])
            p.write_text("[" * n + "]" * n, encoding="utf-8")
        else:
            p.write_text('{"x": ' + "9" * self.rng.choice([4301, 20_000]) + "}", encoding="utf-8")
        self.log.append(f"hostile json {how} {self.rel(p)}")

    def hostile_value(self) -> None:
        p = self.pick(self.files(lambda q: q.name == "mlperf_log_detail.txt"))
        if p is None:
            return
        lines = p.read_bytes().split(b"\n")
        idx = [i for i, ln in enumerate(lines) if b'"key": "result_' in ln or b'"key": "num_errors"' in ln]
        if not idx:
            return
        i = self.rng.choice(idx)
        new = self.rng.choice([b"NaN", b"Infinity", b"-Infinity", b"-24593.8", b"1e30", b'"nan"', b"1" * 5000])
        lines[i] = re.sub(rb'"value": ("[^"]*"|[^,}]*)', b'"value": ' + new, lines[i], count=1)
        p.write_bytes(b"\n".join(lines))
        self.log.append(f"hostile value {new[:12]!r} line {i + 1} of {self.rel(p)}")

    def odd_name(self) -> None:
        d = self.pick(self.dirs())
        if d is None:
            return
        name = self.rng.choice([b"caf\xe9.txt", b"\xff\xfe", b"ok-\x80-dir"])
        target = os.fsencode(d) + b"/" + name
        if name.endswith(b"dir"):
            os.mkdir(target)
        else:
            with open(target, "wb") as fh:
                fh.write(b"x\n")
        self.log.append(f"non-UTF-8 name {name!r} in {self.rel(d)}")

    def special_file(self) -> None:
        p = self.pick(self.files())
        if p is None:
            return
        p.unlink()
        os.mkfifo(p)
        self.log.append(f"fifo in place of {self.rel(p)}")

    def mutate(self) -> None:
        ops = [
            self.flip_bytes,
            self.truncate,
            self.delete_file,
            self.delete_dir,
            self.json_edit,
            self.json_edit,
            self.log_line_edit,
            self.log_line_edit,
            self.add_junk,
            self.add_symlink,
            self.hostile_json,
            self.hostile_value,
            self.odd_name,
            self.special_file,
        ]
        for _ in range(self.rng.randint(1, 3)):
            self.rng.choice(ops)()


def _path_is_accounted_for(root: Path, path: str, message: str, removed: set[str]) -> bool:
    if os.path.lexists(root / path):
        return True
    if "\\x" in path:  # a name that is not UTF-8, shown with \xNN escapes
        raw = codecs.escape_decode(path.encode("utf-8"))[0]
        if os.path.lexists(os.fsencode(root) + b"/" + raw):
            return True
    if any(path == r or path.startswith(r + "/") for r in removed):
        return True
    return Path(path).name in message  # a finding saying this expected file is missing


@pytest.fixture(scope="module")
def pristine(v51_tree: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("fuzz-pristine")
    out = {}
    for sub in SUBMITTERS:
        shutil.copytree(v51_tree / sub, base / sub / sub)
        out[sub] = base / sub
    return out


@pytest.mark.parametrize("case", range(CASES))
def test_fuzzed_tree_keeps_the_invariants(
    case: int, pristine: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seed = BASE_SEED + case
    rng = random.Random(seed)
    sub = SUBMITTERS[case % len(SUBMITTERS)]
    root = tmp_path / "tree"
    shutil.copytree(pristine[sub], root, symlinks=True)
    mutator = Mutator(root, rng)
    mutator.mutate()
    where = f"seed {seed}, {sub}: " + "; ".join(mutator.log)

    before = fingerprint(root)
    report_path = tmp_path / "report.json"
    code = cli.main([str(root), "--round", "v5.1", "--quiet", "--json", str(report_path)])
    captured = capsys.readouterr()
    output = captured.out + captured.err
    assert code in (0, 1, 2), f"{where}\n{output}"
    assert "Traceback" not in output, f"{where}\n{output}"
    assert fingerprint(root) == before, f"{where}: the input tree changed"
    if code == 2:
        assert output.strip(), where
        return
    data = json.loads(report_path.read_text())
    assert schema_errors(data, "check-report") == [], where
    assert data["exit_code"] == code
    for result in data["results"]:
        assert (root / result["path"]).is_dir(), f"{where}: result {result['path']} is not a directory"
    findings = list(data["findings"]) + [f for r in data["results"] for f in r["findings"]]
    for f in findings:
        path = f["path"]
        if path is None:
            continue
        assert not path.startswith("/") and ".." not in path.split("/"), f"{where}: {f}"
        assert _path_is_accounted_for(root, path, f["message"], mutator.removed), f"{where}: {f}"
