"""The transformers engine: a tiny random Llama in a worker process, under LoadGen.

Needs torch (not a dependency of the project); skipped where torch is not installed.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sut_helpers import trial

from checker.parsers.accuracy_log import parse_accuracy_log
from loadgen_sut.engines.factory import EngineSpec
from loadgen_sut.settings import RunMode

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")


def _tiny_model(directory: Path) -> Path:
    """A 2-layer random Llama with a word-level tokenizer over the built-in data set's words."""
    from loadgen_sut.datasets import load_dataset

    words: dict[str, int] = {"<unk>": 0, "<s>": 1, "</s>": 2, "<pad>": 3}
    for s in load_dataset("builtin").samples:
        for w in (s.prompt or "").split() + (s.reference or "").split():
            words.setdefault(w, len(words))
    tok = tokenizers.Tokenizer(tokenizers.models.WordLevel(words, unk_token="<unk>"))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.WhitespaceSplit()
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="<unk>", bos_token="<s>", eos_token="</s>", pad_token="<pad>"
    )
    fast.save_pretrained(directory)
    cfg = transformers.LlamaConfig(
        vocab_size=len(words),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=512,
        bos_token_id=1,
        eos_token_id=2,
        pad_token_id=3,
    )
    torch.manual_seed(0)
    transformers.LlamaForCausalLM(cfg).save_pretrained(directory)
    return directory


@pytest.mark.slow
def test_transformers_engine_accuracy_run(tmp_path: Path) -> None:
    model = _tiny_model(tmp_path / "tiny")
    engine = EngineSpec(kind="transformers", model=str(model), dtype="float32", batch_size=4)
    out = trial(tmp_path / "run", engine, scenario="Server", mode=RunMode.ACCURACY, max_new_tokens=8, min_new_tokens=2)
    t = out.record.tests[0]
    assert t.status == "finished", t.error
    assert t.sut.failed == 0 and t.sut.completed == 32
    log = parse_accuracy_log(out.run_dir / "accuracy" / "mlperf_log_accuracy.json")
    for e in log.entries:
        ids = e.token_ids()
        assert e.token_count is not None and 2 <= e.token_count == len(ids) <= 8
        assert e.first_token_ids() == ids[:1]
    assert out.record.engine is not None and out.record.engine.name == "transformers"
    assert out.record.engine.precision == "float32"
