"""Against the official scripts themselves: ``language/gpt-oss-120b/eval_mlperf_accuracy.py`` (and its
``eval_accuracy.py``) read from a local git mirror of mlcommons/inference at test time -- never copied into this
repository -- run on a genuine LoadGen accuracy log, and their answer extraction compared on many generated outputs.

Skipped when no mirror is found (``INFERENCE_AUDIT_MLCOMMONS_GIT``: a bare clone of mlcommons/inference; by default
``../.mirror/mlcommons+inference/repo`` beside the checkout). The sub-data sets used need neither of the reference's
submodules (PRM800K for MATH-500, LiveCodeBench): AIME, GPQA, MMLU-Pro and names without repeats.
"""

from __future__ import annotations

import importlib.util
import json
import os
import random
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest
from gpt_oss_fixture import SAMPLES, frame, make_tokenizer

from loadgen_sut.datasets import load_dataset
from loadgen_sut.engines.tokenizers import HFTokenizer
from loadgen_sut.scoring import deepseek, gpt_oss
from loadgen_sut.scoring.score import score_accuracy
from rules.registry import load_round

RunTinySut = Callable[..., Path]
REPO = Path(__file__).resolve().parents[2]
SCRIPTS = ("eval_accuracy.py", "eval_mlperf_accuracy.py")


def _mirror() -> Path | None:
    env = os.environ.get("INFERENCE_AUDIT_MLCOMMONS_GIT")
    for c in [Path(env)] if env else [REPO.parent / ".mirror" / "mlcommons+inference" / "repo"]:
        if c.is_dir():
            return c
    return None


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    mirror = _mirror()
    if mirror is None or shutil.which("git") is None:
        pytest.skip("no git mirror of mlcommons/inference (set INFERENCE_AUDIT_MLCOMMONS_GIT)")
    pytest.importorskip("tqdm")  # the reference scripts import it
    out = tmp_path_factory.mktemp("official-gpt-oss")
    for name in SCRIPTS:
        shown = subprocess.run(
            ["git", f"--git-dir={mirror}", "show", f"HEAD:language/gpt-oss-120b/{name}"],
            capture_output=True,
            check=False,
        )
        if shown.returncode != 0:
            pytest.skip(f"the mirror has no language/gpt-oss-120b/{name}")
        (out / name).write_bytes(shown.stdout)
    return out


def _module(reference: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("official_gpt_oss_eval_accuracy", reference / "eval_accuracy.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FRAGMENTS = [
    "<|channel|>analysis<|message|>", "<|channel|>final<|message|>", "<|channel|>final 明<|message|>",
    "<|channel|>final537<|message|>", "<|end|>", "<|start|>assistant", "<|return|>", "Answer: B", "answer: c",
    "ANSWER:(D)", "FINAL ANSWER = a", "Final Answer: (J)", "**C**", "**Answer: A**", "The answer is D.", "D", " b) ",
    "['A']", '["B"]', "\\n", "\\'", "\n", " ", "Because", "I think E", "G.", "\\boxed{42}", "\\boxed{ 7 }",
    "\\boxed{\\frac{1}{2}}", "Answer: 1000", "Answer: 33", "Answer: 12.", "```python\nprint(1)\n```",
    "```\nprint(2)\n```", "```py\nx=3\n```", "```python\n```", "```", "\\boxed{", "}", "{", "x", "A", ":", "**",
]


def test_extraction_matches_the_reference_on_generated_outputs(reference: Path) -> None:
    ref = _module(reference)
    rng = random.Random(20260)
    for _ in range(3000):
        text = "".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(0, 9)))
        assert gpt_oss.final_section(text) == ref.extract_final_section(text), text
        assert gpt_oss.extract_choice(text, "D") == ref.parse_multiple_choice(text, "D"), text
        assert gpt_oss.extract_choice(text, "J") == ref.parse_multiple_choice(text, "J"), text
        assert gpt_oss.extract_code(text) == ref.parse_code(text), text
        assert deepseek.extract_aime(text) == ref.parse_aime_answer(text), text
        assert deepseek.extract_boxed(text) == ref.parse_boxed_math(text), text


def test_exact_match_equals_the_reference_scripts(
    reference: Path, tiny_sut: RunTinySut, tmp_path: Path
) -> None:
    tokdir = make_tokenizer(tmp_path / "tok")
    tok = HFTokenizer(tokdir)
    outputs = [out for d, _, out, _ in SAMPLES if d != "livecodebench_v6"]
    rng = random.Random(7)
    rows: list[tuple[str, str | int]] = []
    texts: list[str] = []
    for _ in range(120):  # outputs with ground truths drawn at random: some right, most wrong
        name = rng.choice(["aime25", "aime25", "aime2024", "gpqa_diamond", "gpqa_diamond", "GPQA_other", "mmlu_pro"])
        truth = str(rng.choice([70, 588, 33, 5])) if name.startswith("aime") else rng.choice("ABCD")
        rows.append((name, truth))
        texts.append(rng.choice(outputs))
    data = tmp_path / "acc.parquet"
    frame(rows, "input_tokens", tok.encode, text_truth=True).to_parquet(data)
    ids = tmp_path / "ids.jsonl"
    ids.write_text("".join(json.dumps({"ids": tok.encode(t)}) + "\n" for t in texts))
    log = tiny_sut(tmp_path / "run", "--scenario", "Offline", "--samples", str(len(rows)), "--ids", str(ids))
    cmd = [sys.executable, "eval_mlperf_accuracy.py", "--mlperf-log", str(log), "--reference-data", str(data)]
    official = subprocess.run(
        [*cmd, "--tokenizer", str(tokdir)],
        cwd=reference,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert official.returncode == 0, official.stderr[-2000:]
    printed = re.search(r"^'exact_match': ([\d.]+)$", official.stdout, re.MULTILINE)
    assert printed is not None, official.stdout[-2000:]
    bench = load_round("v6.1").benchmark("gpt-oss-120b")
    assert bench is not None
    ours = score_accuracy(log, load_dataset(str(data)), bench, tok.decode)
    assert ours.exact_match == float(printed.group(1))
    for c in ours.components:  # the reference's per-data-set table: name, correct, total, repeats
        assert re.search(rf"^{re.escape(c.dataset)}\s+{c.correct}\s+{c.samples}\s+{c.repeats}\s", official.stdout, re.MULTILINE)
