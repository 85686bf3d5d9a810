"""Where a report may be written: one policy for every command that writes one.

:func:`plan_outputs` judges every output path before the command does any work and raises
:class:`~checker.findings.UnusableInput` (exit 2, one line naming the option, the path and why) for anything
but

- ``-``: the report goes to standard output (at most one report per command);
- a new name in an existing directory;
- an existing regular file, and only with ``--force`` (it is replaced, keeping its mode).

Refused: a directory, FIFO, socket or device (never opened, so a FIFO cannot block the command), a symbolic
link (``os.replace`` would replace the link, and the file it names is someone else's), a path inside a tree the
command reads (``check PATH``, ``table --tree``) or equal to a file it reads (``score --accuracy-log``, the
table, a claim), and two reports naming the same file.

:func:`write_output` writes a report: a temporary file with a random name beside the target, created with
``O_CREAT | O_EXCL`` (``tempfile.mkstemp``: a name planted there, a symlink included, is never followed),
written and fsynced, then renamed over the target (``--force``) or hard-linked to the new name (so a file
that appeared meanwhile is not replaced): :func:`checker.report.atomic.atomic_file`, the one atomic writer. On any error the temporary file is removed, the target is left as
it was, and :class:`UnusableInput` says why (``--csv FILE: cannot write (No space left on device)``).
:func:`write_output_stream` does the same with the report given as an iterator of byte chunks (a large report,
``table --json``, is never held whole; :func:`json_item` renders its pieces as :func:`json_document` would).
"""

from __future__ import annotations

import errno
import json
import os
import stat
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from checker.findings import UnusableInput
from checker.report.atomic import atomic_file
from checker.safe_io import file_kind

STDOUT = "-"


@dataclass(frozen=True)
class OutputTarget:
    """One report's destination, judged by :func:`plan_outputs`."""

    option: str  # "--json"
    given: str  # the path as given on the command line
    path: Path | None  # None: standard output
    replace: bool  # an existing regular file is to be replaced (--force)
    identity: tuple[int, int] | None = None  # (st_dev, st_ino) of the file to replace

    @property
    def to_stdout(self) -> bool:
        return self.path is None

    @property
    def link_dir(self) -> Path | None:
        """The directory a page's relative file links start from (None: the page goes to stdout)."""
        return None if self.path is None else self.path.parent.absolute()

    def label(self) -> str:
        return f"{self.option} {self.given}"


def _kind(mode: int) -> str | None:
    """What a non-regular file is, in words (checker.safe_io.file_kind); None for a regular file."""
    return None if stat.S_ISREG(mode) else file_kind(mode)


def _refuse(option: str, given: str, why: str) -> UnusableInput:
    return UnusableInput(f"{option} {given}: {why}")


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _real_inputs(inputs: Iterable[Path | str | None]) -> list[tuple[str, str, tuple[int, int] | None]]:
    """(as given, real path, (dev, inode)) of each input that exists."""
    out: list[tuple[str, str, tuple[int, int] | None]] = []
    for p in inputs:
        if p is None or str(p) in ("", STDOUT):
            continue
        try:
            st = os.stat(p)
        except (OSError, ValueError):
            continue
        out.append((str(p), os.path.realpath(p), (st.st_dev, st.st_ino)))
    return out


CHECKED_TREE = "the checked tree"  # what a directory given to plan_outputs' trees is, unless it is named


def plan_outputs(
    outputs: Sequence[tuple[str, Path | str | None]],
    *,
    force: bool = False,
    trees: Iterable[Path | str | tuple[str, Path | str | None] | None] = (),
    inputs: Iterable[Path | str | None] = (),
) -> list[OutputTarget]:
    """Judge every ``(option, path)`` (``path`` None: the option was not given) before any work is done.

    ``trees``: directories the command reads (no report may land inside them), each a path or ``(what, path)``
    where the refusal should say what the directory is ("the tokenizer directory"; default
    :data:`CHECKED_TREE`); ``inputs``: files it reads (no report may replace one). Raises
    :class:`UnusableInput` naming the first path refused.
    """
    named = [t if isinstance(t, tuple) else (CHECKED_TREE, t) for t in trees]
    real_trees = [
        (what, str(t), os.path.realpath(t)) for what, t in named if t is not None and str(t) and os.path.isdir(t)
    ]
    real_inputs = _real_inputs(inputs)
    targets: list[OutputTarget] = []
    seen: dict[str, str] = {}  # real path (or "-") -> option
    for option, value in outputs:
        if value is None:
            continue
        given = str(value)
        target = _judge(option, given, force, real_trees, real_inputs)
        key = STDOUT if target.path is None else os.path.realpath(target.path)
        if key in seen:
            where = "standard output" if key == STDOUT else "the same file"
            raise _refuse(option, given, f"{seen[key]} writes to {where}; give each report its own file")
        seen[key] = option
        targets.append(target)
    return targets


def _judge(
    option: str,
    given: str,
    force: bool,
    real_trees: list[tuple[str, str, str]],
    real_inputs: list[tuple[str, str, tuple[int, int] | None]],
) -> OutputTarget:
    if given == STDOUT:
        return OutputTarget(option, given, None, replace=False)
    if not given or "\x00" in given:
        raise _refuse(option, repr(given), "not a file name")
    path = Path(given)
    try:
        st: os.stat_result | None = os.lstat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:  # a component is a file (ENOTDIR), a loop, a name too long, no permission
        raise _refuse(option, given, f"cannot use this path ({exc.strerror or exc})") from exc
    parent = path.parent
    if st is None:
        try:
            pst = os.stat(parent)
        except FileNotFoundError:
            raise _refuse(option, given, f"directory {parent} does not exist") from None
        except OSError as exc:
            raise _refuse(option, given, f"directory {parent}: {exc.strerror or exc}") from exc
        if not stat.S_ISDIR(pst.st_mode):
            raise _refuse(option, given, f"{parent} is not a directory")
    else:
        kind = _kind(st.st_mode)
        if kind == "a symbolic link":
            try:
                to = os.readlink(path)
            except OSError:
                to = "?"
            raise _refuse(
                option,
                given,
                f"is a symbolic link (to {to}); refusing to write through it: name the file itself",
            )
        if kind is not None:
            raise _refuse(option, given, f"is {kind}, not a regular file; refusing to write a report there")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise _refuse(option, given, f"cannot create files in directory {parent} (permission denied)")
    real = os.path.join(os.path.realpath(parent), path.name)
    for what, tree_given, tree_real in real_trees:
        if _inside(real, tree_real):
            raise _refuse(option, given, f"refusing to write inside {what} ({tree_given}, {tree_real})")
    identity = (st.st_dev, st.st_ino) if st is not None else None
    for in_given, in_real, in_id in real_inputs:
        if real == in_real or (identity is not None and identity == in_id):
            raise _refuse(
                option, given, f"is also an input of this command ({in_given}); refusing to replace it"
            )
    if st is not None and not force:
        raise _refuse(option, given, "exists: pass --force to replace it")
    return OutputTarget(option, given, path, replace=st is not None, identity=identity)


def write_output(target: OutputTarget, data: bytes) -> None:
    """Write ``data`` to ``target`` (see the module docstring); :class:`UnusableInput` when it cannot."""
    write_output_stream(target, (data,))


def write_output_stream(target: OutputTarget, chunks: Iterable[bytes]) -> None:
    """Write the concatenated ``chunks`` to ``target`` as :func:`write_output` does (the same temporary file,
    fsync and rename / hard link), one chunk at a time: a report need not be held whole. An error raised by
    ``chunks`` itself leaves the target as it was (the temporary file is removed) and propagates unchanged."""
    if target.path is None:
        _write_stdout_chunks(chunks)
        return
    path = target.path
    try:
        st: os.stat_result | None = os.lstat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise _refuse(target.option, target.given, f"cannot write ({exc.strerror or exc})") from exc
    if st is not None:  # something changed since plan_outputs judged it: judge again, never follow it
        kind = _kind(st.st_mode)
        if kind is not None:
            raise _refuse(target.option, target.given, f"is now {kind}; not written")
        if not target.replace:
            raise _refuse(target.option, target.given, "appeared while the command ran; not replaced")
    try:
        with atomic_file(path, replace=target.replace) as fh:
            for data in chunks:
                fh.write(data)
    except OSError as exc:
        if exc.errno == errno.EEXIST:
            raise _refuse(
                target.option, target.given, "appeared while the command ran; not replaced"
            ) from exc
        raise _refuse(target.option, target.given, f"cannot write ({exc.strerror or exc})") from exc


def _write_stdout_chunks(chunks: Iterable[bytes]) -> None:
    try:
        sys.stdout.flush()
        buffer = getattr(sys.stdout, "buffer", None)
        for data in chunks:
            if buffer is not None:
                buffer.write(data)
            else:
                sys.stdout.write(data.decode("utf-8"))
        if buffer is not None:
            buffer.flush()
        else:
            sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except OSError as exc:
        raise UnusableInput(f"cannot write the report to standard output ({exc.strerror or exc})") from exc


def any_to_stdout(targets: Iterable[OutputTarget]) -> bool:
    return any(t.to_stdout for t in targets)


def check_not_inputs(targets: Iterable[OutputTarget], inputs: Iterable[Path | str | None]) -> None:
    """Refuse a report that would replace one of ``inputs`` (files found only after parsing, e.g. a claim's)."""
    real_inputs = _real_inputs(inputs)
    for target in targets:
        if target.path is None:
            continue
        real = os.path.join(os.path.realpath(target.path.parent), target.path.name)
        for in_given, in_real, in_id in real_inputs:
            if real == in_real or (target.identity is not None and target.identity == in_id):
                raise _refuse(
                    target.option,
                    target.given,
                    f"is also an input of this command ({in_given}); refusing to replace it",
                )


def json_document(data: object) -> bytes:
    """A table / claim report as written: indented JSON, UTF-8, one final newline."""
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def json_item(data: object, level: int) -> str:
    """``data`` as :func:`json_document` writes it at nesting ``level`` (the items of a top-level key's list are
    at level 2), its first line indented: a fragment of a document streamed piece by piece
    (:func:`write_output_stream`). JSON text holds a line break only between its tokens (one in a string is
    written ``\\n``), so indenting every line of the item's own rendering is what the whole document's would be."""
    pad = "  " * level
    return pad + json.dumps(data, indent=2, ensure_ascii=False).replace("\n", "\n" + pad)
