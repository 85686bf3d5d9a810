"""A sweep's results file, which is its state: read back only when it is this tool's (a rerun resumes it when its
settings are the same), written atomically after every level, and one sweep at a time per work directory (a
lock)."""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import os
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

from pydantic import ValidationError

from checker.findings import UnusableInput
from checker.report.output import OutputTarget, json_document, plan_outputs, write_output
from checker.safe_json import parse_json
from loadgen_sut.sweep_model import SWEEP_TOOL, SweepResult, SweepSettings

MAX_RESULTS_BYTES = 64 * 1024 * 1024
LOCK_FILE = ".sweep.lock"


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _read_own_results(path: Path, given: str) -> SweepResult:
    """An existing results file at --out: ours (returned) or refused, never overwritten."""
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_RESULTS_BYTES + 1)
    except OSError as exc:
        raise UnusableInput(f"--out {given}: cannot read it ({exc.strerror or exc})") from exc
    not_ours = f"--out {given}: exists and is not an inference-audit sweep results file; refusing to overwrite it (choose another --out)"
    if len(data) > MAX_RESULTS_BYTES:
        raise UnusableInput(not_ours)
    try:
        obj = parse_json(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise UnusableInput(not_ours) from None
    if not isinstance(obj, dict) or obj.get("tool") != SWEEP_TOOL:
        raise UnusableInput(not_ours)
    try:
        return SweepResult.model_validate(obj)
    except ValidationError as exc:
        detail = str(exc).splitlines()[0][:200]
        raise UnusableInput(
            f"--out {given}: a sweep results file this version cannot read ({detail}); refusing to overwrite it "
            "(choose another --out)"
        ) from None


def settings_differences(old: SweepSettings, new: SweepSettings) -> list[str]:
    """Top-level (and engine) fields that differ, as 'name: old -> new'."""
    a, b = old.model_dump(mode="json"), new.model_dump(mode="json")
    out: list[str] = []
    for key in a.keys() | b.keys():
        if a.get(key) == b.get(key):
            continue
        if isinstance(a.get(key), dict) and isinstance(b.get(key), dict):
            for sub in sorted(a[key].keys() | b[key].keys()):
                if a[key].get(sub) != b[key].get(sub):
                    out.append(f"{key}.{sub}: {a[key].get(sub)!r} -> {b[key].get(sub)!r}")
        else:
            out.append(f"{key}: {_short(a.get(key))} -> {_short(b.get(key))}")
    return sorted(out)


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


class ResultsFile:
    """The results file: judged by the output-path policy, then written atomically after every level."""

    def __init__(self, given: Path) -> None:
        self.given = given
        if str(given) == "-":
            raise UnusableInput("--out -: the sweep's results file is its state (for resuming): name a file")
        exists = os.path.lexists(given)
        # symlinks, directories, FIFOs, a missing directory: refused here whether or not the file exists
        (target,) = plan_outputs([("--out", given)], force=True)
        self.previous: SweepResult | None = _read_own_results(given, str(given)) if exists else None
        self.target: OutputTarget = target if exists else dataclasses.replace(target, replace=False)

    def write(self, result: SweepResult) -> None:
        write_output(self.target, json_document(result.model_dump(mode="json")))
        if not self.target.replace:  # from now on the file is ours: replace it
            self.target = dataclasses.replace(self.target, replace=True)


@contextlib.contextmanager
def sweep_lock(work_dir: Path) -> Iterator[None]:
    """One sweep at a time per work directory (two would interleave their writes of the same results file)."""
    try:
        work_dir.mkdir(exist_ok=True)
        fd = os.open(work_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise UnusableInput(
            f"cannot use the work directory ({exc.strerror or exc})", path=str(work_dir)
        ) from exc
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise UnusableInput(
                "another sweep is running with this work directory", path=str(work_dir)
            ) from None
        yield
    finally:
        os.close(fd)
