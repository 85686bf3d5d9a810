"""The one atomic writer: every file the tools write (reports, run records, data sets) goes through here.

:func:`atomic_file` gives a binary file object on a temporary file with a random name beside the target, created
exclusively (``tempfile.mkstemp``: ``O_CREAT | O_EXCL``, so a planted ``<name>.tmp`` or symbolic link is never
followed, written through or deleted). When the block ends it is fsynced and

- renamed over the target (``replace=True``): a reader sees the old file or the whole new one;
- or given the target's name with a hard link (``replace=False``): a file that appeared meanwhile (a symlink
  included) is never replaced; :class:`FileExistsError` says so.

On any error (a full disk, an exception of the block, Ctrl-C) the temporary file is removed and the target is left
as it was. The file keeps the target's mode when it replaces one, else the umask's default.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO


@contextlib.contextmanager
def atomic_file(path: Path, *, replace: bool = True) -> Iterator[BinaryIO]:
    """Write ``path`` through a random temporary beside it (see the module docstring)."""
    directory = str(path.parent) or "."
    mode = _mode_for(path) if replace else _new_file_mode()
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    done = False
    try:
        os.fchmod(fd, mode)  # mkstemp creates 0600
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        if replace:
            os.replace(tmp, path)
        else:
            _link_new(tmp, path)
        done = True
        _fsync_dir(directory)
    finally:
        if not done:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def write_atomic(path: Path, data: bytes, *, replace: bool = True) -> None:
    """Write ``data`` to ``path`` so a reader sees the old file or the whole new one, never a part."""
    with atomic_file(path, replace=replace) as fh:
        fh.write(data)


def _link_new(tmp: str, path: Path) -> None:
    """Give the written temporary file its new name, failing (EEXIST) if the name was taken meanwhile."""
    try:
        os.link(tmp, path, follow_symlinks=False)
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
            raise
        # a file system without hard links: rename, after one last look that the name is still free
        if os.path.lexists(path):
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(path)) from exc
        os.rename(tmp, path)
        return
    os.unlink(tmp)


def _fsync_dir(directory: str) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _new_file_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _mode_for(path: Path) -> int:
    try:
        st = os.lstat(path)
    except OSError:
        return _new_file_mode()
    return stat.S_IMODE(st.st_mode) if stat.S_ISREG(st.st_mode) else _new_file_mode()
