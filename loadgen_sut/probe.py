"""``python -m loadgen_sut.probe SETTINGS.json USER_CONF``: what the installed LoadGen will apply.

Runs ``FromConfig`` in a fresh process (LoadGen applies its compiled mlperf.conf only on the first
call of a process) and prints the settings read back from ``mlperf_loadgen.TestSettings`` as JSON.
Kept apart from the test process so it imports nothing heavy. A setting the run needs but the
installed release lacks refuses here (exit 4), before any LoadGen test starts; settings the release
cannot read back are noted on stderr.

Every setting the user.conf sets is compared with the value the harness planned for it (the planned
settings are SETTINGS.json, built by :func:`loadgen_sut.settings.plan_settings` from the same file): a
difference means the harness would judge a run LoadGen does not make, and refuses (exit 5). The other
settings come from the compiled mlperf.conf; the runner compares them with the round's rules.

LoadGen itself runs in a forked child: a crash there (SIGSEGV, abort) becomes one clear error line
(exit 4), never a traceback or a silent death.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import sys
from pathlib import Path

from checker.findings import UnusableInput
from checker.printable import printable
from loadgen_sut.settings import (
    TestSettingsModel,
    conf_applied_fields,
    from_loadgen,
    load_user_conf,
    require_loadgen_settings,
    to_loadgen,
    unavailable_loadgen_settings,
    unavailable_text,
)

EXIT_SETUP = 4
EXIT_MISMATCH = 5


def planned_mismatches(settings: TestSettingsModel, actual: TestSettingsModel, conf_path: Path) -> list[str]:
    """Settings the user.conf sets whose read-back differs from the planned value (empty: all agree)."""
    applied = conf_applied_fields(load_user_conf(conf_path), settings)
    out = []
    for name, value in applied.items():
        planned, got = getattr(settings, name), getattr(actual, name)
        if planned != value:  # the plan itself did not take the user.conf value
            out.append(f"{name}: the user.conf gives {value!r} but the harness planned {planned!r}")
        elif got != planned:
            out.append(f"{name}: LoadGen applies {got!r} but the harness planned {planned!r}")
    return out


def _loadgen_read_back(settings: TestSettingsModel, conf_path: Path) -> int:
    """FromConfig and the read-back (runs in the forked child; prints the result)."""
    try:
        ts = to_loadgen(settings, conf_path)  # refuses a setting the run needs and this release lacks
    except (OSError, ValueError, UnusableInput) as exc:
        print(printable(f"inference-audit: error: {exc}"), file=sys.stderr)
        return EXIT_SETUP
    for line in unavailable_text(require_loadgen_settings(settings, unavailable_loadgen_settings(ts))):
        print(printable(f"inference-audit: note: {line}"), file=sys.stderr)
    actual = from_loadgen(ts, settings.scenario, settings.conf_model, fallback=settings)
    try:
        diffs = planned_mismatches(settings, actual, conf_path)
    except UnusableInput as exc:
        print(printable(f"inference-audit: error: {exc}"), file=sys.stderr)
        return EXIT_SETUP
    if diffs:
        print(
            f"inference-audit: error: {conf_path}: LoadGen does not apply the planned settings ("
            + "; ".join(diffs)
            + "); refusing to run a test the harness would misjudge",
            file=sys.stderr,
        )
        return EXIT_MISMATCH
    # the last stdout line is the read-back (the runner parses it)
    print(actual.model_dump_json())
    return 0


def _in_child(settings: TestSettingsModel, conf_path: Path) -> int:
    """Run :func:`_loadgen_read_back` in a forked process; a crash becomes a clear error (exit 4).

    The child's Python output comes back through a pipe and is printed here (to this process's
    ``sys.stdout``/``sys.stderr``, so callers capturing them see it).
    """
    if not hasattr(os, "fork"):  # pragma: no cover - not Linux/macOS
        return _loadgen_read_back(settings, conf_path)
    sys.stdout.flush()
    sys.stderr.flush()
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child (coverage does not follow forks)
        os.close(rfd)
        code, out, err = 1, io.StringIO(), io.StringIO()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = _loadgen_read_back(settings, conf_path)
        except BaseException as exc:  # reported by the parent, never a traceback
            err.write(f"inference-audit: error: {type(exc).__name__}: {exc}\n")
            code = EXIT_SETUP
        finally:
            with contextlib.suppress(Exception):
                data = json.dumps({"code": code, "out": out.getvalue(), "err": err.getvalue()}).encode()
                with os.fdopen(wfd, "wb") as w:
                    w.write(data)
            os._exit(code)
    os.close(wfd)
    with os.fdopen(rfd, "rb") as r:
        data = r.read()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        print(
            f"inference-audit: error: LoadGen crashed ({name}) reading the settings from {conf_path} "
            f"(conf model {settings.conf_model}, scenario {settings.loadgen_scenario.value}); "
            "check the user.conf values, or the installed mlcommons-loadgen",
            file=sys.stderr,
        )
        return EXIT_SETUP
    try:
        reply = json.loads(data.decode())
    except ValueError:
        print("inference-audit: error: the LoadGen settings probe ended without an answer", file=sys.stderr)
        return EXIT_SETUP
    sys.stdout.write(reply["out"])
    sys.stderr.write(reply["err"])
    return int(reply["code"])


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m loadgen_sut.probe SETTINGS.json USER_CONF", file=sys.stderr)
        return 2
    try:
        settings = TestSettingsModel.model_validate_json(Path(args[0]).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print(printable(f"inference-audit: error: {exc}"), file=sys.stderr)
        return EXIT_SETUP
    return _in_child(settings, Path(args[1]))


if __name__ == "__main__":
    sys.exit(main())
