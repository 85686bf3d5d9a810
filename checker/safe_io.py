"""Every read of a checked tree goes through here.

Guarantees:
- paths are relative to the checked root; a symlink (or ``..``) that resolves outside the root is never
  followed: the read fails with a :class:`ReadProblem` naming the path;
- a file is opened component by component from a descriptor of the checked root, every component with
  ``O_NOFOLLOW`` (the file itself also with ``O_NONBLOCK``), and what was opened is verified with ``fstat``: it must
  be a regular file (a FIFO, device or socket is a problem, never read, so nothing blocks) and, where the walk saw
  the file, the same file (device and inode): a tree changed while it is checked (a file swapped for a symlink or a
  FIFO) is a problem, never a read outside the root. Reads are not limited by PATH_MAX;
- reads are capped (``max_bytes``): a huge file (or ``/dev/zero``) is a problem, not an out-of-memory;
- a non-UTF-8, binary (NUL bytes), empty or unreadable file is a problem naming the file;
- JSON is parsed with bounds (:func:`checker.safe_json.parse_json`): nesting deeper than ``MAX_JSON_DEPTH``, a
  number of more than ``MAX_NUMBER_DIGITS`` digits, a key given twice in one object and malformed text are
  problems naming the file and line;
- nothing is ever written into the tree, and nothing from it is executed or imported.

Top-level inputs of ``inference-audit table`` / ``claim`` (a path the user names) are read with
:func:`read_input_bytes`: the same regular-file check and size cap, raising :class:`UnusableInput`.

Names that are not UTF-8 (a file name is bytes on POSIX) are shown with :func:`display_name` (``\\xNN`` for each
byte that is not UTF-8), so every path in a finding encodes as UTF-8.

Each read returns ``(value, problem)`` through :class:`TextRead` / :class:`JsonRead`; callers turn a problem
into a finding with their own rule id (see :meth:`ReadProblem.finding`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from checker.checks.rule_registry import registered_finding
from checker.findings import Finding, Severity, UnusableInput
from checker.safe_json import JsonProblem, parse_json

DEFAULT_MAX_TEXT_BYTES = 64 * 1024 * 1024  # a LoadGen detail log of a long run stays well below
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_OPEN_FILE = os.O_RDONLY | _O_NOFOLLOW | _O_NONBLOCK | _O_CLOEXEC
_OPEN_DIR = os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC
_DIR_FD_CACHE = 16  # directory descriptors kept open per tree (reads come in bursts per directory)
_CHUNK = 1 << 20


def display_name(name: str) -> str:
    """``name`` as printable, UTF-8-encodable text: bytes that are not UTF-8 (``os.fsdecode`` keeps them as lone
    surrogates) become a visible ``\\xNN``; any other text is returned unchanged."""
    try:
        name.encode("utf-8")
        return name
    except UnicodeEncodeError:
        pass
    try:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        return name.encode("utf-8", "backslashreplace").decode("utf-8")


def is_utf8_name(name: str) -> bool:
    """False when ``name`` holds bytes that are not UTF-8 (lone surrogates from ``os.fsdecode``)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def file_kind(mode: int) -> str:
    """What a non-regular file is, in words (for messages)."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "not a regular file"


# ---- top-level input files (table / claim / peer result files) -------------------------------------------
def open_input(path: Path, *, what: str = "file") -> tuple[BinaryIO, int]:
    """Open a file the user named on the command line for streaming: ``O_NONBLOCK`` (a FIFO opens at once), then
    ``fstat``: anything but a regular file (a FIFO, ``/dev/zero``, a directory) is refused without reading. Returns
    the binary file object and the size ``fstat`` saw; raises :class:`UnusableInput` naming the file. Symbolic links
    are followed (the user chose the path). Callers that stream must still cap what they read."""
    where = display_name(str(path))
    try:
        fd = os.open(path, os.O_RDONLY | _O_NONBLOCK | _O_CLOEXEC)
    except FileNotFoundError:
        raise UnusableInput(f"cannot read the {what}: no such file", where) from None
    except OSError as exc:
        raise UnusableInput(f"cannot read the {what}: {exc.strerror or exc}", where) from None
    try:
        st = os.fstat(fd)
    except OSError as exc:
        os.close(fd)
        raise UnusableInput(f"cannot read the {what}: {exc.strerror or exc}", where) from None
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise UnusableInput(
            f"cannot read the {what}: {file_kind(st.st_mode)}, not a regular file; not read", where
        )
    return os.fdopen(fd, "rb"), st.st_size


def read_input_bytes(path: Path, *, what: str = "file", max_bytes: int = DEFAULT_MAX_TEXT_BYTES) -> bytes:
    """Read a file the user named on the command line (see :func:`open_input`), at most ``max_bytes``; raises
    :class:`UnusableInput` naming the file. A file whose size is above the cap is refused unread (a sparse file
    costs no read); one whose size says less (a file in /proc says 0) is still read to the cap only."""
    fh, size = open_input(path, what=what)
    if size > max_bytes:
        fh.close()
        raise UnusableInput(
            f"the {what} is larger than the {max_bytes} byte read limit; not read", display_name(str(path))
        )
    with fh:
        try:
            data = _read_capped(fh.fileno(), max_bytes, size)
        except OSError as exc:
            raise UnusableInput(
                f"cannot read the {what}: {exc.strerror or exc}", display_name(str(path))
            ) from None
    if len(data) > max_bytes:
        raise UnusableInput(
            f"the {what} is larger than the {max_bytes} byte read limit; not read", display_name(str(path))
        )
    return data


def read_input_json(path: Path, what: str, max_bytes: int = 1024 * 1024) -> Any:
    """A JSON file the user named (:func:`read_input_bytes`, then :func:`parse_json`): a regular file, bounded in
    size, nesting depth and integer length, UTF-8; raises :class:`UnusableInput` naming the file."""
    data = read_input_bytes(path, what=what, max_bytes=max_bytes)
    try:
        return parse_json(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise UnusableInput(f"the {what} is not UTF-8 (byte {exc.start})", display_name(str(path))) from None
    except JsonProblem as exc:
        where = f" (line {exc.lineno})" if exc.lineno else ""
        raise UnusableInput(f"the {what} is not JSON{where}: {exc.msg}", display_name(str(path))) from None


def _read_capped(fd: int, max_bytes: int, size_hint: int) -> bytes:
    """Up to ``max_bytes + 1`` bytes from ``fd`` (one more than allowed tells the caller it is too large)."""
    want = max_bytes + 1
    parts: list[bytes] = []
    got = 0
    first = min(want, size_hint + 1) if size_hint > 0 else min(want, _CHUNK)
    n = max(first, 1)
    while got < want:
        chunk = os.read(fd, min(n, want - got))
        if not chunk:
            break
        parts.append(chunk)
        got += len(chunk)
        n = _CHUNK
    return parts[0] if len(parts) == 1 else b"".join(parts)


@dataclass(frozen=True, slots=True)
class ReadProblem:
    """Why a file could not be read (``kind``: missing, outside-root, too-large, binary, not-utf8, empty,
    unreadable, invalid-json, not-a-file, changed)."""

    path: str
    kind: str
    message: str
    line: int | None = None

    def finding(
        self,
        rule: str,
        *,
        result: str | None = None,
        scope: str | None = None,
        severity: Severity | None = None,
        source: str | None = None,
        fix: str | None = None,
        case: str | None = None,
    ) -> Finding:
        """A finding of ``rule`` about this problem, made by the one factory (severity, "beyond", fix and source default
        to the rule's registration); never a trial's: a file that cannot be read is not what a short run produces."""
        return registered_finding(
            rule,
            self.message,
            severity=severity,
            result=result,
            scope=scope,
            path=self.path,
            line=self.line,
            source=source,
            fix=fix,
            trial=False,
            case=case,
        )


@dataclass(frozen=True, slots=True)
class TextRead:
    text: str | None
    problem: ReadProblem | None


@dataclass(frozen=True, slots=True)
class JsonRead:
    value: Any
    problem: ReadProblem | None


def join(rel: str, name: str) -> str:
    """Join POSIX relative paths (``""`` is the root)."""
    return f"{rel}/{name}" if rel else name


class SafeTree:
    """Read-only, root-confined access to a results tree. Paths are POSIX strings relative to ``root``."""

    def __init__(self, root: Path, confine: Path | None = None) -> None:
        """Read below ``root``; never outside ``confine`` (default: ``root``)."""
        self.root = root
        self.real_root = Path(os.path.realpath(confine if confine is not None else root))
        self._real_root_s = str(self.real_root)
        self._dir_cache: dict[str, str] = {}
        self._root_s = str(root)
        # walked subtrees (rel prefix) whose every symlink is known: paths below them that cross no known
        # link are inside without any syscall
        self._walked: dict[str, frozenset[str]] = {}
        # (st_dev, st_ino) of the regular files the walk saw: what is opened must be that file
        self._ids: dict[str, tuple[int, int]] = {}
        # ``confine`` relative to ``root`` (lexically): paths below it are opened beneath the confined root's fd
        rel_confine = os.path.relpath(confine, root) if confine is not None else "."
        # None: ``confine`` is not lexically below ``root``; every path is resolved first
        self._prefix: str | None = "" if rel_confine == "." else rel_confine.replace(os.sep, "/")
        if rel_confine == ".." or rel_confine.startswith(".." + os.sep):
            self._prefix = None
        self._fds: OrderedDict[tuple[str, ...], int] = OrderedDict()  # open directory fds (LRU)
        self._root_fd: int | None = None

    def register_walk(
        self, prefix: str, links: frozenset[str], ids: dict[str, tuple[int, int]] | None = None
    ) -> None:
        """Declare that ``prefix`` (a real directory inside the root) was walked and holds exactly ``links``;
        ``ids``: (device, inode) of each regular file the walk saw (reads verify them)."""
        if self._confine_slow(prefix) is None and not os.path.islink(self.abspath(prefix)):
            self._walked[prefix] = links
        if ids:
            self._ids.update(ids)

    def close(self) -> None:
        """Close the directory descriptors this tree keeps (also done when it is garbage-collected)."""
        fds = list(self._fds.values())
        if self._root_fd is not None:
            fds.append(self._root_fd)
        self._fds.clear()
        self._root_fd = None
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()

    # ---- confinement ---------------------------------------------------------------------------------------
    def abspath(self, rel: str) -> Path:
        return self.root / rel if rel else self.root

    def _abs(self, rel: str) -> str:
        return os.path.join(self._root_s, rel) if rel else self._root_s

    def _inside(self, real: str) -> bool:
        return real == self._real_root_s or real.startswith(self._real_root_s + os.sep)

    def _real_dir(self, rel_dir: str) -> str:
        real = self._dir_cache.get(rel_dir)
        if real is None:
            real = os.path.realpath(self.abspath(rel_dir))
            self._dir_cache[rel_dir] = real
        return real

    def is_inside(self, rel: str) -> bool:
        """True when ``rel`` resolves (following every symlink) to a place inside the root."""
        return self._confine(rel) is None

    def _confine(self, rel: str) -> ReadProblem | None:
        """None when ``rel`` stays inside the root, else the problem."""
        for prefix, links in self._walked.items():
            if rel.startswith(prefix + "/"):
                if not links:
                    return None
                parts = rel.split("/")
                if not any(
                    "/".join(parts[:i]) in links for i in range(prefix.count("/") + 2, len(parts) + 1)
                ):
                    return None
                break
        return self._confine_slow(rel)

    def _confine_slow(self, rel: str) -> ReadProblem | None:
        """As :meth:`_confine`, resolving real paths (parent dirs' real paths are cached)."""
        if rel.startswith("/") or ".." in rel.split("/"):
            return ReadProblem(rel, "outside-root", f"{rel}: path leaves the checked root")
        if not rel:
            return None
        parent, _, name = rel.rpartition("/")
        real_parent = self._real_dir(parent)
        if not self._inside(real_parent):
            return ReadProblem(
                rel,
                "outside-root",
                f"{rel}: a parent directory is a symbolic link leading outside the checked root; not followed",
            )
        full = os.path.join(real_parent, name)
        if os.path.islink(full):
            real = os.path.realpath(full)
            if not self._inside(real):
                return ReadProblem(
                    rel,
                    "outside-root",
                    f"{rel}: symbolic link resolves outside the checked root ({os.readlink(full)}); not followed",
                )
        return None

    # ---- queries ------------------------------------------------------------------------------------------
    def exists(self, rel: str) -> bool:
        return self._confine(rel) is None and os.path.exists(self._abs(rel))

    def is_file(self, rel: str) -> bool:
        return self._confine(rel) is None and os.path.isfile(self._abs(rel))

    def is_dir(self, rel: str) -> bool:
        return self._confine(rel) is None and os.path.isdir(self._abs(rel))

    def list_dir(self, rel: str) -> list[str]:
        """Sorted entry names (empty when not a readable dir inside the root)."""
        if self._confine(rel) is not None:
            return []
        try:
            return sorted(os.listdir(self._abs(rel)))
        except OSError:
            return []

    def size(self, rel: str) -> int | None:
        try:
            return os.stat(self._abs(rel)).st_size if self._confine(rel) is None else None
        except OSError:
            return None

    # ---- reads --------------------------------------------------------------------------------------------
    def read_bytes(
        self, rel: str, *, max_bytes: int = DEFAULT_MAX_TEXT_BYTES
    ) -> tuple[bytes | None, ReadProblem | None]:
        problem = self._confine(rel)
        if problem is not None:
            return None, problem
        fd, problem = self._open(rel)
        if problem is not None:
            return None, problem
        assert fd is not None
        try:
            try:
                st = os.fstat(fd)
            except OSError as exc:
                return None, ReadProblem(rel, "unreadable", f"{rel}: cannot read ({exc.strerror or exc})")
            if not stat.S_ISREG(st.st_mode):
                return None, ReadProblem(
                    rel, "not-a-file", f"{rel}: not a regular file ({file_kind(st.st_mode)}); not read"
                )
            seen = self._ids.get(rel)
            if seen is not None and seen != (st.st_dev, st.st_ino):
                return None, ReadProblem(
                    rel,
                    "changed",
                    f"{rel}: replaced while the tree was being checked (not the file the walk saw); not read",
                )
            try:
                data = _read_capped(fd, max_bytes, st.st_size)
            except OSError as exc:
                return None, ReadProblem(rel, "unreadable", f"{rel}: cannot read ({exc.strerror or exc})")
        finally:
            os.close(fd)
        if len(data) > max_bytes:
            return None, ReadProblem(
                rel, "too-large", f"{rel}: larger than the {max_bytes} byte read limit; not read"
            )
        return data, None

    # ---- opening beneath the root -------------------------------------------------------------------------
    def _lexical_parts(self, rel: str) -> list[str] | None:
        """``rel`` as components below the confined root, when it lies there lexically and crosses no symlink
        the walk recorded (else None: resolve it first)."""
        prefix = self._prefix
        if prefix is None:
            return None
        if prefix:
            if not rel.startswith(prefix + "/"):
                return None
            rest = rel[len(prefix) + 1 :]
        else:
            rest = rel
        for wprefix, links in self._walked.items():
            if links and (rel == wprefix or rel.startswith(wprefix + "/")):
                parts = rel.split("/")
                if any("/".join(parts[:i]) in links for i in range(1, len(parts) + 1)):
                    return None
        return [c for c in rest.split("/") if c and c != "."]

    def _resolved_parts(self, rel: str) -> list[str] | None:
        """``rel`` with every symlink resolved, as components below the confined root (None: outside it)."""
        real = os.path.realpath(self._abs(rel))
        if real == self._real_root_s or not self._inside(real):
            return None if real != self._real_root_s else []
        return real[len(self._real_root_s) + 1 :].split(os.sep)

    def _open(self, rel: str) -> tuple[int | None, ReadProblem | None]:
        """An fd of ``rel`` opened beneath the confined root with no symlink followed (see module docstring)."""
        parts = self._lexical_parts(rel)
        resolved = parts is None
        if parts is None:
            parts = self._resolved_parts(rel)
        while True:
            if parts is None:
                return None, ReadProblem(
                    rel, "outside-root", f"{rel}: resolves outside the checked root; not followed"
                )
            if not parts:
                return None, ReadProblem(
                    rel, "not-a-file", f"{rel}: not a regular file (a directory); not read"
                )
            try:
                dfd = self._dir_fd(tuple(parts[:-1]))
                # what is there now, before opening it: a device or FIFO is never opened at all
                mode = os.stat(parts[-1], dir_fd=dfd, follow_symlinks=False).st_mode
                if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
                    return None, ReadProblem(
                        rel, "not-a-file", f"{rel}: not a regular file ({file_kind(mode)}); not read"
                    )
                return os.open(parts[-1], _OPEN_FILE, dir_fd=dfd), None
            except OSError as exc:
                code = exc.errno
            if code in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK) and not resolved:
                # a symlink inside the root (allowed when it stays inside): resolve, then open that
                resolved = True
                parts = self._resolved_parts(rel)
                continue
            if code in (errno.ELOOP, errno.EMLINK):
                return None, ReadProblem(
                    rel,
                    "changed",
                    f"{rel}: became a symbolic link while the tree was being checked; not followed",
                )
            if code in (errno.ENOENT, errno.ENOTDIR):
                return None, ReadProblem(rel, "missing", f"{rel}: file not found")
            if code == errno.ENXIO:  # a socket
                return None, ReadProblem(rel, "not-a-file", f"{rel}: not a regular file (a socket); not read")
            if code == errno.EISDIR:
                return None, ReadProblem(
                    rel, "not-a-file", f"{rel}: not a regular file (a directory); not read"
                )
            return None, ReadProblem(rel, "unreadable", f"{rel}: cannot read ({os.strerror(code or 0)})")

    def _dir_fd(self, parts: tuple[str, ...]) -> int:
        """An fd of the directory ``parts`` below the confined root, each component opened with O_NOFOLLOW."""
        fd = self._fds.get(parts)
        if fd is not None:
            self._fds.move_to_end(parts)
            return fd
        if not parts:
            if self._root_fd is None:
                self._root_fd = os.open(self._real_root_s, os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC)
            return self._root_fd
        parent = self._dir_fd(parts[:-1])
        fd = os.open(parts[-1], _OPEN_DIR, dir_fd=parent)
        self._fds[parts] = fd
        if len(self._fds) > _DIR_FD_CACHE:
            _, old = self._fds.popitem(last=False)
            os.close(old)
        return fd

    def read_text(
        self, rel: str, *, max_bytes: int = DEFAULT_MAX_TEXT_BYTES, allow_empty: bool = False
    ) -> TextRead:
        data, problem = self.read_bytes(rel, max_bytes=max_bytes)
        if data is None:
            return TextRead(None, problem)
        if not data and not allow_empty:
            return TextRead(None, ReadProblem(rel, "empty", f"{rel}: file is empty"))
        if b"\x00" in data:
            line = data[: data.index(b"\x00")].count(b"\n") + 1
            return TextRead(
                None, ReadProblem(rel, "binary", f"{rel}: binary content (NUL byte), expected text", line)
            )
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            return TextRead(
                None, ReadProblem(rel, "not-utf8", f"{rel}: not valid UTF-8 (byte {exc.start})", line)
            )
        if text.startswith("\ufeff"):
            text = text[1:]
        return TextRead(text, None)

    def read_json(self, rel: str, *, max_bytes: int = DEFAULT_MAX_TEXT_BYTES) -> JsonRead:
        tr = self.read_text(rel, max_bytes=max_bytes)
        if tr.text is None:
            return JsonRead(None, tr.problem)
        return json_read(rel, tr.text)


def json_read(rel: str, text: str) -> JsonRead:
    """Parse ``text`` (the content of ``rel``, a system or measurements description of a checked tree) with
    :func:`parse_json`; a problem names the file and line. A repeated key keeps its last value, as the official
    checker's ``json.load`` does: published submissions repeat keys with different values (v5.1 measurements
    JSON of five submitters give ``weight_transformations`` twice), and their verdicts are the oracle."""
    try:
        return JsonRead(parse_json(text, repeated_keys=True), None)
    except JsonProblem as exc:
        return JsonRead(None, ReadProblem(rel, "invalid-json", f"{rel}: invalid JSON: {exc.msg}", exc.lineno))
