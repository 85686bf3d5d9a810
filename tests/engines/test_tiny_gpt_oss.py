"""End to end with a real engine: a tiny random gpt-oss (``GptOssForCausalLM``) in the transformers engine.

``bench/device/build_model.py --arch gpt-oss --size tiny`` builds the model offline (4 layers of width 64, 8 experts,
2 per token, sliding and full attention with sinks; a byte-level BPE with the harmony special tokens), and
``inference-audit run --engine transformers --benchmark gpt-oss-120b --round v6.1`` drives it under the real LoadGen
on the synthetic data set of ``tests/fixtures/gpt_oss/make_dataset.py``.

- Performance (Offline, a shortened trial): VALID, every sample generated with the round's sampling (temperature 1,
  top_p 1, top_k disabled) and exactly ``--max-new-tokens`` tokens counted (``--ignore-eos``).
- Accuracy, with a *scripted* copy of the model: its attention and expert outputs zeroed, so each position's hidden
  state is its own token's embedding, and the embedding and LM head set so that every ordinary token is followed by
  ``<|channel|>``, then ``final``, ``<|message|>``, ``C`` and ``<|call|>`` (logit margin 80: deterministic even when
  sampled at temperature 1). The engine must stop at ``<|call|>`` (a stop id of the model's generation config, not
  the tokenizer's EOS) and count 6 tokens, the scorer must read the output with its special tokens (the harmony
  final channel holds ``C``: one GPQA sample right), and accuracy.txt must say so.

Skipped when torch (or a transformers with gpt-oss) is not importable; ``.ci/run`` installs torch 2.13.0 CPU.
"""

from __future__ import annotations

import itertools
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from engine_runs import recorded_test, run_recorded

from checker.parsers.accuracy_log import parse_accuracy_log

torch = pytest.importorskip("torch", reason="torch is not installed: the transformers engine needs it (.ci/run installs it)")
transformers = pytest.importorskip("transformers", reason="transformers is not installed")
if not hasattr(transformers, "GptOssForCausalLM"):
    pytest.skip(f"transformers {transformers.__version__} has no GptOssForCausalLM (4.55 or later)", allow_module_level=True)

pytestmark = pytest.mark.slow  # about 30 s in all on 2 CPU cores (model build, two LoadGen runs)

REPO = Path(__file__).resolve().parents[2]
MAX_NEW_TOKENS = 16
VOCAB = 2048
CHAIN_TEXT = "<|channel|>final<|message|>C<|call|>"  # what the scripted model answers to any prompt


def _build(out: Path) -> Path:
    cmd = [sys.executable, str(REPO / "bench/device/build_model.py"), str(out), "--arch", "gpt-oss"]
    cmd += ["--size", "tiny", "--device", "cpu"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False, cwd=REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _build(tmp_path_factory.mktemp("tiny-gpt-oss") / "model")


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("gpt-oss-data") / "synthetic.parquet"
    proc = subprocess.run(
        [sys.executable, str(REPO / "tests/fixtures/gpt_oss/make_dataset.py"), str(out)],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def _chain_ids(tok: Any) -> list[int]:
    ids: list[int] = tok.encode(CHAIN_TEXT, add_special_tokens=False)
    assert len(ids) == len(set(ids)), f"the chain needs distinct tokens: {ids}"
    return ids


@pytest.fixture(scope="module")
def scripted_dir(model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model with weights set so that it answers CHAIN_TEXT to every prompt (see the module docstring)."""
    from transformers import AutoTokenizer, GptOssForCausalLM

    out = tmp_path_factory.mktemp("tiny-gpt-oss-scripted") / "model"
    tok = AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)
    chain = _chain_ids(tok)
    model = GptOssForCausalLM.from_pretrained(str(model_dir), dtype=torch.float32, local_files_only=True)
    hidden = model.config.hidden_size
    assert len(chain) < hidden
    with torch.no_grad():
        for layer in model.model.layers:  # no attention or expert contribution: the residual stream is the embedding
            layer.self_attn.o_proj.weight.zero_()
            layer.self_attn.o_proj.bias.zero_()
            layer.mlp.experts.down_proj.zero_()
            layer.mlp.experts.down_proj_bias.zero_()
        model.model.norm.weight.fill_(1.0)
        emb = model.model.embed_tokens.weight
        emb.zero_()
        emb[:, 0] = 1.0  # every ordinary token: direction 0
        head = model.lm_head.weight
        head.zero_()
        head[chain[0], 0] = 10.0  # ordinary token -> the chain's first token
        for i, (cur, nxt) in enumerate(itertools.pairwise(chain), start=1):
            emb[cur].zero_()
            emb[cur, i] = 1.0
            head[nxt, i] = 10.0  # chain token i -> chain token i + 1; logit 10 x sqrt(hidden) = 80
    model.save_pretrained(str(out))
    for f in model_dir.iterdir():
        if f.name.startswith("tokenizer") or f.name == "generation_config.json":
            shutil.copy(f, out / f.name)
    return out


def _run(out: Path, model: Path, data: Path, mode: str, *extra: str, conf: str = "") -> tuple[int, dict[str, Any], str]:
    out.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "loadgen_sut.cli", "run", "--engine", "transformers", "--model", str(model)]
    cmd += ["--device", "cpu", "--dtype", "float32", "--batch-size", "8"]
    cmd += ["--benchmark", "gpt-oss-120b", "--round", "v6.1", "--scenario", "Offline", "--mode", mode]
    cmd += ["--dataset", str(data), "--max-new-tokens", str(MAX_NEW_TOKENS), "--progress-interval", "0"]
    if conf:
        (out / "trial.conf").write_text(conf)
        cmd += ["--user-conf", str(out / "trial.conf")]
    cmd += ["--out", str(out / "work"), *extra]
    return run_recorded(cmd, out, out / "work", 300, f"gpt-oss {mode}")


def test_offline_performance(model_dir: Path, dataset: Path, tmp_path: Path) -> None:
    """A shortened Offline trial: VALID, sampled with the round's settings, 16 tokens counted per sample."""
    conf = "*.Offline.min_duration = 0\n*.Offline.min_query_count = 20\n*.Offline.target_qps = 20\n"
    code, record, output = _run(tmp_path, model_dir, dataset, "performance", "--ignore-eos", conf=conf)
    assert record["simulated"] is False
    assert "sampling, temperature=1, top_p=1, top_k disabled; output text with special tokens" in output, output
    perf = recorded_test(record, "performance")
    assert perf["status"] == "finished", output
    lg = perf["loadgen"]
    assert lg["result_validity"] == "VALID" and lg["num_errors"] == 0, output
    assert lg["result_value"] > 0  # tokens/s
    sut = perf["sut"]
    assert sut["failed"] == 0 and sut["completed"] == sut["issued"] >= 20, output
    assert sut["output_tokens"] == sut["completed"] * MAX_NEW_TOKENS
    assert perf["output_tokens"]["min"] == perf["output_tokens"]["max"] == MAX_NEW_TOKENS
    assert record["verdict"]["status"] == "NOT_SUBMITTABLE" and code == 0, output  # a trial, never a result


def test_accuracy_scripted_harmony_answer(scripted_dir: Path, dataset: Path, tmp_path: Path) -> None:
    """The scripted model's harmony answer: stopped at <|call|>, 6 tokens counted, scored with special tokens kept."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(scripted_dir), local_files_only=True)
    chain = _chain_ids(tok)
    assert chain[-1] == tok.convert_tokens_to_ids("<|call|>") != tok.eos_token_id  # a generation-config stop only
    # the first 4 rows: 2 AIME25, 2 GPQA (ground truths C and A); the LiveCodeBench row would need code execution
    code, record, output = _run(tmp_path, scripted_dir, dataset, "accuracy", "--dataset-limit", "4")
    acc = recorded_test(record, "accuracy")
    assert acc["status"] == "finished" and acc["sut"]["completed"] == 4 and acc["sut"]["failed"] == 0, output
    assert acc["sut"]["output_tokens"] == 4 * len(chain), output
    (run_dir,) = (tmp_path / "work" / "runs").iterdir()
    log = parse_accuracy_log(run_dir / "accuracy" / "mlperf_log_accuracy.json")
    assert sorted(e.qsl_idx for e in log.unique_by_qsl_idx()) == [0, 1, 2, 3]
    for entry in log.entries:
        ids = list(entry.token_ids())
        assert ids == chain and entry.token_count == len(chain), (ids, entry.token_count)
        assert all(0 <= i < VOCAB for i in ids)
        assert tok.decode(ids, skip_special_tokens=False) == CHAIN_TEXT
    text = (run_dir / "accuracy" / "accuracy.txt").read_text()
    assert "gpqa_diamond (gpqa, repeats 5): 1 of 2 correct" in text, text
    assert "aime25 (aime, repeats 8): 0 of 2 correct" in text, text
    # the scored texts kept their special tokens: 4 x len(CHAIN_TEXT) characters, 4 x 6 ids
    assert f"'gen_len': {4 * len(CHAIN_TEXT)}" in text and f"'gen_tok_len': {4 * len(chain)}" in text, text
    assert "'exact_match': 30.769" in text, text  # (1/5) / (2/8 + 2/5) = 30.769 %
    assert code == 0, output
