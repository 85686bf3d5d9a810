"""``python -m loadgen_sut.probe SETTINGS.json USER_CONF``: what the installed LoadGen will apply.

Runs ``FromConfig`` in a fresh process (LoadGen applies its compiled mlperf.conf only on the first
call of a process) and prints the settings read back from ``mlperf_loadgen.TestSettings`` as JSON.
Kept apart from the test process so it imports nothing heavy. A setting the run needs but the
installed release lacks refuses here (exit 4), before any LoadGen test starts; settings the release
cannot read back are noted on stderr.
"""

from __future__ import annotations

import sys
from pathlib import Path

from checker.findings import UnusableInput
from loadgen_sut.settings import (
    TestSettingsModel,
    from_loadgen,
    require_loadgen_settings,
    to_loadgen,
    unavailable_loadgen_settings,
    unavailable_text,
)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m loadgen_sut.probe SETTINGS.json USER_CONF", file=sys.stderr)
        return 2
    try:
        settings = TestSettingsModel.model_validate_json(Path(args[0]).read_text(encoding="utf-8"))
        ts = to_loadgen(settings, Path(args[1]))  # refuses a setting the run needs and this release lacks
    except (OSError, ValueError, UnusableInput) as exc:
        print(f"inference-audit: error: {exc}", file=sys.stderr)
        return 4
    for line in unavailable_text(require_loadgen_settings(settings, unavailable_loadgen_settings(ts))):
        print(f"inference-audit: note: {line}", file=sys.stderr)
    # the last stdout line is the read-back (the runner parses it)
    print(from_loadgen(ts, settings.scenario, settings.conf_model, fallback=settings).model_dump_json())
    return 0


if __name__ == "__main__":
    sys.exit(main())
