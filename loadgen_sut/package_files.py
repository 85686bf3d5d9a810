"""How a run's files go into a results tree: read from the run without following links, the accuracy log
truncated as the official tool does, everything staged beside the tree and moved into place all or nothing."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from pathlib import Path
from typing import BinaryIO

from checker.findings import UnusableInput
from checker.safe_io import file_kind

VIEWABLE_BYTES = 4096


def open_run_file(src: Path, run_dir: Path | None = None) -> tuple[BinaryIO, int]:
    """A file of a run, opened for copying into a tree, and its size: only a regular file is read (a FIFO, device
    or directory is refused without blocking), never through a symbolic link (``O_NOFOLLOW``: the target of a
    link, a file outside the run, is never copied), and with ``run_dir`` only when its directory lies inside it."""
    if run_dir is not None:
        real_run, real_parent = os.path.realpath(run_dir), os.path.realpath(src.parent)
        if real_parent != real_run and not real_parent.startswith(real_run + os.sep):
            raise UnusableInput(
                f"lies outside the run directory {run_dir} (through a symbolic link); not copied",
                path=str(src),
            )
    flags = (
        os.O_RDONLY
        | getattr(os, "O_NOFOLLOW", 0)
        | getattr(os, "O_NONBLOCK", 0)
        | getattr(os, "O_CLOEXEC", 0)
    )
    try:
        fd = os.open(src, flags)
    except FileNotFoundError:
        raise UnusableInput("expected LoadGen output is missing", path=str(src)) from None
    except OSError as exc:
        if os.path.islink(src):
            raise UnusableInput(
                "is a symbolic link: only regular files of the run are copied (its target is not)",
                path=str(src),
            ) from None
        raise UnusableInput(f"cannot read ({exc.strerror or exc})", path=str(src)) from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise UnusableInput(f"is {file_kind(st.st_mode)}, not a regular file; not copied", path=str(src))
    return os.fdopen(fd, "rb"), st.st_size


def truncate_accuracy_log(src: Path, dst: Path, limit_bytes: int, run_dir: Path | None = None) -> bool:
    """Copy, truncating as the official tool does when ``src`` is ``limit_bytes`` or larger (streamed: only the
    first and last :data:`VIEWABLE_BYTES` of a large log are read)."""
    fh, size = open_run_file(src, run_dir)
    with fh, open(dst, "xb") as out:
        if size < limit_bytes:
            shutil.copyfileobj(fh, out)
            return False
        head = fh.read(VIEWABLE_BYTES)
        fh.seek(max(size - VIEWABLE_BYTES, 0))
        out.write(head + b"\n\n...\n\n" + fh.read(VIEWABLE_BYTES))
    return True


def refuse_symlinks_inside(tree: Path, rel: str) -> None:
    """No component of ``tree/rel`` below the tree may be a symbolic link: a package never writes outside the tree."""
    cur = tree
    for part in Path(rel).parts:
        cur = cur / part
        if os.path.islink(cur):
            raise UnusableInput("a symbolic link inside the tree: not packaging through it", path=str(cur))
        if not os.path.lexists(cur):
            return


class Staging:
    """Files written under a staging directory beside the tree, then moved into the tree as a whole."""

    def __init__(self, tree: Path) -> None:
        self.tree = Path(os.path.realpath(tree)) if os.path.lexists(tree) else Path(os.path.abspath(tree))
        self.made = make_parents(self.tree.parent)  # removed again when nothing was installed
        self.root = Path(tempfile.mkdtemp(prefix=f".{self.tree.name}.staging-", dir=self.tree.parent))
        self.files: list[str] = []
        self.installed = False

    def write(self, rel: str, text: str) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        self.files.append(rel)

    def copy(self, src: Path, rel: str, run_dir: Path) -> None:
        """Copy ``src``, a regular file inside ``run_dir`` (:func:`open_run_file`), to ``rel`` of the tree."""
        fh, _ = open_run_file(src, run_dir)
        dst = self.root / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        with fh, open(dst, "xb") as out:
            shutil.copyfileobj(fh, out)
        self.files.append(rel)

    def install(self, new_dirs: list[str], shared_files: list[str]) -> list[Path]:
        """Move the new directories and the absent shared files into the tree; on any failure undo every move."""
        moved: list[tuple[Path, Path]] = []
        made: list[Path] = []
        try:
            for rel in new_dirs + shared_files:
                src, dst = self.root / rel, self.tree / rel
                if not os.path.lexists(src):
                    continue
                refuse_symlinks_inside(self.tree, rel)
                if os.path.lexists(dst):
                    if rel in shared_files:
                        continue  # kept as the user has it (checked identical where that matters)
                    raise UnusableInput("appeared while packaging: not overwriting", path=str(dst))
                made += make_parents(dst.parent)
                if src.is_dir():
                    os.rename(src, dst)
                else:
                    try:
                        os.link(src, dst)  # fails rather than replace a file that appeared meanwhile
                    except FileExistsError:
                        if dst.is_file() and not dst.is_symlink() and dst.read_bytes() == src.read_bytes():
                            continue  # the same shared file, written by a concurrent package
                        raise
                moved.append((src, dst))
        except BaseException:
            for src, dst in reversed(moved):
                if dst.is_dir() and not dst.is_symlink():
                    os.rename(dst, src)
                else:
                    dst.unlink(missing_ok=True)
            for d in reversed(made):
                with contextlib.suppress(OSError):
                    d.rmdir()
            raise
        self.installed = True
        return [self.tree / rel for rel in self.files if (self.tree / rel).is_file()]

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
        if not self.installed:
            for d in reversed(self.made):
                with contextlib.suppress(OSError):
                    d.rmdir()


def make_parents(path: Path) -> list[Path]:
    """mkdir -p, returning the directories this call created (outermost first); another process may race it."""
    missing: list[Path] = []
    cur = path
    while not os.path.lexists(cur) and cur != cur.parent:
        missing.append(cur)
        cur = cur.parent
    made: list[Path] = []
    for d in reversed(missing):
        try:
            d.mkdir()
            made.append(d)
        except FileExistsError:
            if not d.is_dir():
                raise
    return made
