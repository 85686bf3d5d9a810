"""A small synthetic gpt-oss-120b accuracy data set (written for this project, no official data) and outputs whose
grades are known by construction, with a byte-level BPE tokenizer that has the harmony special tokens.

Expected scores are computed by hand from the counts below (see ``EXPECTED_*``), not by the code under test.
"""

from __future__ import annotations

import json
import sysconfig
from collections.abc import Callable
from pathlib import Path

import pandas as pd
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast

HARMONY = ["<|start|>", "<|end|>", "<|message|>", "<|channel|>", "<|return|>"]
A = "<|channel|>analysis<|message|>"
F = "<|end|><|start|>assistant<|channel|>final<|message|>"
R = "<|return|>"

# (sub-data set, ground truth, model output, correct?) -- None: LiveCodeBench, known only with code execution
SAMPLES: list[tuple[str, str | int, str, bool | None]] = [
    # aime25: the last \boxed{N} of the whole output, else the last "Answer: N"; 0-999 only
    ("aime25", 70, f"{A}Try Answer: 12 first.{F}So the sum is \\boxed{{70}}{R}", True),
    ("aime25", "588", f"{A}A draft \\boxed{{5}}.{F}\\boxed{{588}}{R}", True),  # the last box wins
    ("aime25", 33, f"{A}Work.{F}Answer: 33{R}", True),
    ("aime25", 100, f"{A}Work.{F}\\boxed{{1000}}{R}", False),  # not 0-999: no answer
    # gpqa_diamond: the final channel first
    ("gpqa_diamond", "C", f"{A}Maybe Answer: B.{F}**C**{R}", True),  # the analysis' draft is ignored
    ("gpqa_diamond", "A", f"{A}Hmm.{F}The correct choice is (A).\n\nAnswer: A{R}", True),
    ("gpqa_diamond", "D", f"{A}Hmm.{F}Because of symmetry, D.{R}", False),  # no letter the rules find
    ("gpqa_diamond", "B", f"{A}Hmm.<|end|><|start|>assistant<|channel|>final 明<|message|>B{R}", True),  # corrupted marker
    ("gpqa_diamond", "D", "No harmony here.\nFinal Answer: (d)", True),  # whole text: FINAL ANSWER (d)
    # livecodebench_v6: the last code block of the final channel (ground truth = question_id)
    ("livecodebench_v6", "lcb_double", f"{A}Plan.{F}```python\nn = int(input())\nprint(2 * n)\n```{R}", True),
    (
        "livecodebench_v6",
        "lcb_double",
        f"{A}```python\nprint(2 * int(input()))\n```{F}```python\nprint(0)\n```{R}",  # the final block is wrong
        False,
    ),
    ("livecodebench_v6", "lcb_sum", f"{A}Plan.{F}```py\na, b = map(int, input().split())\nprint(a + b)\n```{R}", True),
]
LCB_PROBLEMS = [
    {
        "question_id": "lcb_double",
        "public_test_cases": json.dumps([{"input": "3\n", "output": "6\n", "testtype": "stdin"}]),
        "private_test_cases": json.dumps([{"input": "-21\n", "output": "-42\n", "testtype": "stdin"}]),
        "metadata": "{}",
    },
    {
        "question_id": "lcb_sum",
        "public_test_cases": json.dumps([{"input": "2 5\n", "output": "7\n", "testtype": "stdin"}]),
        "private_test_cases": json.dumps([{"input": "-1 1\n", "output": "0\n", "testtype": "stdin"}]),
        "metadata": "{}",
    },
]
# By hand: aime25 3 of 4 (repeats 8), gpqa_diamond 4 of 5 (repeats 5), livecodebench_v6 2 of 3 (repeats 3).
# exact_match = 100 * (3/8 + 4/5 + 2/3) / (4/8 + 5/5 + 3/3) = 100 * (221/120) / (300/120) = 100 * 221/300
EXPECTED_WITH_CODE = 73.667  # 73.6666..., printed with 3 decimals
# Without code execution the code samples are not scored: over the others 100 * (3/8 + 4/5) / (4/8 + 5/5) = 100 * 141/180
EXPECTED_SCORED_WITHOUT_CODE = 100 * 141 / 180


def make_tokenizer(out: Path) -> Path:
    """A byte-level BPE tokenizer trained on some standard-library sources, with the harmony special tokens."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in stdlib.glob("*.py") if p.is_file())[:12]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=800, special_tokens=HARMONY, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train([str(f) for f in files], trainer)
    out.mkdir(parents=True, exist_ok=True)
    PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="<|return|>", additional_special_tokens=HARMONY[:4]
    ).save_pretrained(str(out))
    return out


def prompt_text(i: int) -> str:
    return f"<|start|>system<|message|>Reasoning: high<|end|><|start|>user<|message|>Question {i}<|end|><|start|>assistant"


def frame(
    rows: list[tuple[str, str | int]], ids_column: str, encode: Callable[[str], list[int]] | None = None, text_truth: bool = False
) -> pd.DataFrame:
    """The official layout: ``dataset``, ``ground_truth``, token ids, ``text_input`` and a raw ``prompt`` (never sent).

    ``text_truth``: every ground truth as text (a parquet column holds one type); else AIME's as integers."""
    texts = [prompt_text(i) for i in range(len(rows))]
    ids = [encode(t) if encode is not None else [10 + i, 11, 12] for i, t in enumerate(texts)]
    return pd.DataFrame(
        {
            "dataset": [d for d, _ in rows],
            "ground_truth": pd.Series([str(g) if text_truth else g for _, g in rows], dtype=object),
            ids_column: ids,
            "text_input": texts,
            "prompt": [f"raw question {i}" for i in range(len(rows))],
            "question": [f"Question {i}" for i in range(len(rows))],
        }
    )


def write_problems(path: Path) -> Path:
    path.write_text("".join(json.dumps(p) + "\n" for p in LCB_PROBLEMS), encoding="utf-8")
    return path
