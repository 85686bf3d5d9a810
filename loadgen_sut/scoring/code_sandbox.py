"""What confines a generated program besides its resource limits: another user when the grader is root, a pids
cgroup of its own where the machine offers one, and its session killed afterwards with whatever it left running."""

from __future__ import annotations

import contextlib
import functools
import os
import pwd
import signal
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from checker.findings import UnusableInput

# what the supervisor runs with (the program gets an environment of its own, code_exec._child_env)
SUPERVISOR_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}


@dataclass(frozen=True)
class RunAs:
    uid: int | None  # None: the grader's own uid (the grader is not root)
    gid: int | None
    python: str  # an interpreter that uid can execute


def _user_ids(name: str) -> tuple[int, int]:
    try:
        pw = pwd.getpwnam(name)
        return pw.pw_uid, pw.pw_gid
    except KeyError:
        if name == "nobody":
            return 65534, 65534
        raise UnusableInput(f"--code-user {name!r}: no such user") from None


def _can_run(python: str, uid: int, gid: int) -> bool:
    probe = "import sys; raise SystemExit(0 if sys.version_info >= (3, 10) else 1)"
    try:
        done = subprocess.run(
            [python, "-I", "-c", probe],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd="/",
            env=dict(SUPERVISOR_ENV),
            user=uid,
            group=gid,
            extra_groups=[],
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


@functools.lru_cache(maxsize=8)
def run_as(python: str, user: str) -> RunAs:
    """As root: ``user``, with ``python`` if that user can execute it, else the system's python3."""
    if os.geteuid() != 0:
        return RunAs(uid=None, gid=None, python=python)
    uid, gid = _user_ids(user)
    if uid == 0:
        raise UnusableInput(f"--code-user {user!r} is root: generated programs never run as root")
    candidates = [python, *(p for p in ("/usr/bin/python3", "/usr/local/bin/python3") if p != python)]
    for candidate in candidates:
        if os.path.exists(candidate) and _can_run(candidate, uid, gid):
            return RunAs(uid=uid, gid=gid, python=candidate)
    raise UnusableInput(
        f"running as root, generated programs run as {user!r}, who cannot execute {python} "
        "(nor /usr/bin/python3, Python 3.10+); install a system python3 or run in a container as a normal user"
    )


def _mounts() -> list[tuple[str, str, str, set[str]]]:
    """(root, mount point, fs type, super options) of each mount."""
    found = []
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            left, _, right = line.partition(" - ")
            fields, tail = left.split(), right.split()
            if len(fields) >= 5 and len(tail) >= 3:
                found.append((fields[3], fields[4], tail[0], set(tail[2].split(","))))
    return found


def _under(mount_root: str, mount_point: str, path: str) -> Path:
    rel = os.path.relpath(path, mount_root) if path.startswith(mount_root) else "."
    return Path(mount_point) / ("" if rel == "." else rel)


@functools.lru_cache(maxsize=1)
def _pids_cgroup_parent() -> tuple[Path, int] | None:
    """A directory where this process may make pids cgroups (and the cgroup version), or None."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    mounts = _mounts()
    candidates: list[tuple[Path, int]] = []
    for line in lines:
        hid, controllers, path = line.split(":", 2)
        if hid == "0" and controllers == "":
            for root, point, fstype, _ in mounts:
                if fstype == "cgroup2":
                    base = _under(root, point, path)
                    with contextlib.suppress(OSError):
                        if "pids" in (base / "cgroup.subtree_control").read_text().split():
                            candidates.append((base, 2))
        elif "pids" in controllers.split(","):
            for root, point, fstype, opts in mounts:
                if fstype == "cgroup" and "pids" in opts:
                    candidates.append((_under(root, point, path), 1))
    for base, version in candidates:
        probe = base / f"inference-audit-probe-{os.getpid()}"
        try:
            probe.mkdir()
            ok = (probe / "pids.max").exists()
            probe.rmdir()
        except OSError:
            continue
        if ok:
            return base, version
    return None


class PidsCgroup:
    """One program's pids cgroup: at most ``max_pids`` tasks, killed whole afterwards."""

    def __init__(self, path: Path, version: int) -> None:
        self.path, self.version = path, version

    @classmethod
    def make(cls, max_pids: int) -> PidsCgroup | None:
        parent = _pids_cgroup_parent()
        if parent is None:
            return None
        path = parent[0] / f"lcb-{os.getpid()}-{uuid.uuid4().hex[:12]}"
        try:
            path.mkdir()
            (path / "pids.max").write_text(str(max_pids))
        except OSError:
            with contextlib.suppress(OSError):
                path.rmdir()
            return None
        return cls(path, parent[1])

    def add(self, pid: int) -> bool:
        try:
            (self.path / "cgroup.procs").write_text(str(pid))
            return True
        except OSError:
            return False

    def pids(self) -> list[int]:
        try:
            return [int(p) for p in (self.path / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return []

    def kill_all(self, give_up_s: float = 10.0) -> int:
        killed: set[int] = set()
        end = time.monotonic() + give_up_s
        if self.version == 2 and (self.path / "cgroup.kill").exists():
            with contextlib.suppress(OSError):
                (self.path / "cgroup.kill").write_text("1")
        while time.monotonic() < end:
            pids = self.pids()
            if not pids:
                break
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                    killed.add(pid)
            time.sleep(0.01)
        return len(killed)

    def remove(self) -> None:
        end = time.monotonic() + 5.0
        while True:
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                if time.monotonic() > end:
                    return
                time.sleep(0.02)


def _session_of(pid: str) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
        return int(stat[stat.rindex(b")") + 2 :].split()[3])
    except (OSError, ValueError, IndexError):
        return None


def kill_session(sid: int) -> int:
    """SIGKILL every process of session ``sid`` (found through /proc), until none is left."""
    killed: set[int] = set()
    end = time.monotonic() + 10.0
    while time.monotonic() < end:
        members = [int(p) for p in os.listdir("/proc") if p.isdigit() and _session_of(p) == sid]
        if not members:
            break
        for pid in members:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
        time.sleep(0.01)
    return len(killed)
