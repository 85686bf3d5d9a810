"""Every read of a checked tree goes through here.

Guarantees:
- paths are relative to the checked root; a symlink (or ``..``) that resolves outside the root is never
  followed: the read fails with a :class:`ReadProblem` naming the path;
- reads are capped (``max_bytes``): a huge file is a problem, not an out-of-memory;
- a non-UTF-8, binary (NUL bytes), empty or unreadable file is a problem naming the file;
- nothing is ever written into the tree, and nothing from it is executed or imported.

Each read returns ``(value, problem)`` through :class:`TextRead` / :class:`JsonRead`; callers turn a problem
into a finding with their own rule id (see :meth:`ReadProblem.finding`).
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from checker.findings import Finding, Severity

DEFAULT_MAX_TEXT_BYTES = 64 * 1024 * 1024  # a LoadGen detail log of a long run stays well below


@dataclass(frozen=True, slots=True)
class ReadProblem:
    """Why a file could not be read (``kind``: missing, outside-root, too-large, binary, not-utf8, empty,
    unreadable, invalid-json, not-a-file)."""

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
        severity: Severity = Severity.ERROR,
        source: str | None = None,
        fix: str | None = None,
    ) -> Finding:
        return Finding(
            rule=rule,
            severity=severity,
            message=self.message,
            result=result,
            scope=scope,
            path=self.path,
            line=self.line,
            source=source,
            fix=fix,
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

    def register_walk(self, prefix: str, links: frozenset[str]) -> None:
        """Declare that ``prefix`` (a real directory inside the root) was walked and holds exactly ``links``."""
        if self._confine_slow(prefix) is None and not os.path.islink(self.abspath(prefix)):
            self._walked[prefix] = links

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
        p = self._abs(rel)
        try:
            mode = os.stat(p).st_mode  # one stat for os.path.exists + os.path.isfile
        except (OSError, ValueError):
            return None, ReadProblem(rel, "missing", f"{rel}: file not found")
        if not stat.S_ISREG(mode):
            return None, ReadProblem(rel, "not-a-file", f"{rel}: not a regular file")
        try:
            with open(p, "rb") as fh:
                data = fh.read(max_bytes + 1)
        except OSError as exc:
            return None, ReadProblem(rel, "unreadable", f"{rel}: cannot read ({exc.strerror or exc})")
        if len(data) > max_bytes:
            return None, ReadProblem(
                rel, "too-large", f"{rel}: larger than the {max_bytes} byte read limit; not read"
            )
        return data, None

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
        try:
            return JsonRead(json.loads(tr.text), None)
        except json.JSONDecodeError as exc:
            return JsonRead(
                None, ReadProblem(rel, "invalid-json", f"{rel}: invalid JSON: {exc.msg}", exc.lineno)
            )
