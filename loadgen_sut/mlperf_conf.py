"""The mlperf.conf compiled into the installed LoadGen: the file a submission copies into each measurement directory.

A LoadGen wheel has no mlperf.conf file: the build embeds the text (``mlperf_conf.h``) and ``FromConfig`` reads it
from memory. The text sits in the extension module as one NUL-terminated string starting with the file's own first
line, so it can be read back byte for byte, without the user.conf overrides a run applies on top of it.
"""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path

MLPERF_CONF_FILE = "mlperf.conf"
_START = b"# The format of this config file is 'key = value'."
_MAX_BYTES = 256 * 1024  # the v6.0 file is ~8.5 KiB; anything near this bound is not the conf text


@cache
def compiled_mlperf_conf() -> str | None:
    """The embedded mlperf.conf of the installed ``mlperf_loadgen``, or None when it cannot be found."""
    spec = importlib.util.find_spec("mlperf_loadgen")
    if spec is None or spec.origin is None:
        return None
    return mlperf_conf_from_binary(Path(spec.origin))


def mlperf_conf_from_binary(path: Path) -> str | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    start = data.find(_START)
    if start < 0:
        return None
    end = data.find(b"\0", start, start + _MAX_BYTES)
    if end < 0:
        return None
    try:
        text = data[start:end].decode("utf-8")
    except UnicodeDecodeError:
        return None
    if "qsl_rng_seed" not in text:
        return None
    return text if text.endswith("\n") else text + "\n"
