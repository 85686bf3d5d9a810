"""Every read of a checked tree is confined, capped and reports bad files by name."""

from __future__ import annotations

import os
from pathlib import Path

from checker.safe_io import SafeTree


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "d").mkdir(parents=True)
    (root / "d" / "a.txt").write_text("hello\n", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("outside\n", encoding="utf-8")
    return root


def test_reads_inside(tmp_path: Path) -> None:
    t = SafeTree(_tree(tmp_path))
    r = t.read_text("d/a.txt")
    assert r.text == "hello\n" and r.problem is None
    assert t.list_dir("d") == ["a.txt"] and t.is_file("d/a.txt") and t.is_dir("d")


def test_symlink_outside_is_not_followed(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    os.symlink(tmp_path / "secret.txt", root / "d" / "link.txt")
    os.symlink(tmp_path, root / "up")
    t = SafeTree(root)
    for rel in ("d/link.txt", "up/secret.txt", "../secret.txt", "/etc/hostname"):
        r = t.read_text(rel)
        assert r.text is None and r.problem is not None and r.problem.kind == "outside-root", rel
        assert not t.exists(rel)
    assert t.list_dir("up") == []


def test_symlink_inside_is_followed(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    os.symlink("a.txt", root / "d" / "b.txt")
    assert SafeTree(root).read_text("d/b.txt").text == "hello\n"


def test_walked_subtree_fast_path_still_confines(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    os.symlink(tmp_path / "secret.txt", root / "d" / "link.txt")
    t = SafeTree(root)
    t.register_walk("d", frozenset({"d/link.txt"}))
    assert t.read_text("d/a.txt").text == "hello\n"
    problem = t.read_text("d/link.txt").problem
    assert problem is not None and problem.kind == "outside-root"


def test_bad_files_are_problems_naming_the_file(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    (root / "d" / "empty.txt").write_bytes(b"")
    (root / "d" / "bin.txt").write_bytes(b"ab\ncd\x00ef")
    (root / "d" / "latin1.txt").write_bytes(b"ok\ncaf\xe9\n")
    (root / "d" / "big.txt").write_bytes(b"x" * 2048)
    (root / "d" / "bad.json").write_text('{"a": 1,\n oops}', encoding="utf-8")
    t = SafeTree(root)
    cases = {
        "d/empty.txt": ("empty", None),
        "d/bin.txt": ("binary", 2),
        "d/latin1.txt": ("not-utf8", 2),
        "d/missing.txt": ("missing", None),
        "d": ("not-a-file", None),
    }
    for rel, (kind, line) in cases.items():
        p = t.read_text(rel).problem
        assert p is not None and p.kind == kind and p.path == rel and rel in p.message, rel
        assert p.line == line, rel
    big = t.read_text("d/big.txt", max_bytes=1024).problem
    assert big is not None and big.kind == "too-large"
    bad = t.read_json("d/bad.json").problem
    assert bad is not None and bad.kind == "invalid-json" and bad.line == 2
    f = bad.finding("SYS-JSON", scope="d")
    assert f.path == "d/bad.json" and f.line == 2


def test_nothing_is_written(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    before = sorted((p.relative_to(root).as_posix(), p.stat().st_mtime_ns) for p in root.rglob("*"))
    t = SafeTree(root)
    t.read_text("d/a.txt")
    t.read_json("d/a.txt")
    t.list_dir("d")
    assert sorted((p.relative_to(root).as_posix(), p.stat().st_mtime_ns) for p in root.rglob("*")) == before
