"""A tokenizer loads without PyTorch, and no command prints transformers' "PyTorch was not found" advice for it
(``tokenizers.quiet_torch_advice``, in ``HFTokenizer``: a run, ``score``, anything that reads a tokenizer).

Each case runs in a fresh interpreter (transformers prints the advice once, when first imported) that cannot see
torch (``sys.modules['torch'] = None``), as on a machine without it, CI's included, which installs torch."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TOKENIZER = REPO / "examples" / "token-server-tokenizer"
ADVICE = "PyTorch was not found"
NO_TORCH = "import sys; sys.modules['torch'] = None\n"


def _stderr(code: str) -> str:
    proc = subprocess.run([sys.executable, "-c", NO_TORCH + code], capture_output=True, text=True, cwd=REPO,
                          timeout=120, check=True)  # fmt: skip
    return proc.stdout + proc.stderr


def test_transformers_prints_the_advice_without_torch() -> None:
    pytest.importorskip("transformers")
    assert ADVICE in _stderr("import transformers")  # what the filter is for: else the next test shows nothing


def test_a_tokenizer_loads_without_the_advice() -> None:
    pytest.importorskip("transformers")
    out = _stderr(
        "from pathlib import Path\n"
        "from loadgen_sut.engines.tokenizers import HFTokenizer\n"
        f"print(HFTokenizer(Path({str(TOKENIZER)!r})).encode('hello world'))\n"
    )
    assert ADVICE not in out
    assert out.strip().startswith("[")
