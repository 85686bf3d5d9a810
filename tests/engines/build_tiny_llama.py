"""Build a tiny random Llama with a real (locally trained) SentencePiece tokenizer, fully offline.

    python build_tiny_llama.py OUT_DIR [--vocab 2048] [--hidden 128] [--layers 2] [--heads 2] [--seed 0]

Needs torch, transformers and sentencepiece (all in the vLLM CPU venv made by setup_vllm_cpu.sh).

1. Corpus: the first 150 ``*.py`` files (sorted) of this Python's standard library, which every
   machine has; no download.
2. A byte-fallback BPE SentencePiece model (the same kind of tokenizer as Llama-2's): unk=0, bos=1, eos=2.
3. transformers turns the bare ``tokenizer.model`` into a fast tokenizer (``tokenizer.json``) through
   ``AutoTokenizer.from_pretrained`` (``LlamaTokenizerFast(vocab_file=...)`` gives a 3-token vocabulary
   in transformers 5, so it is not used), and a simple chat template is added.
4. ``LlamaForCausalLM`` with random weights (seeded) in bfloat16, saved as safetensors (about 2 MB).

Random weights produce random tokens: requests must send ``ignore_eos`` to get exactly N tokens.
"""

from __future__ import annotations

import argparse
import json
import sys
import sysconfig
import tempfile
from pathlib import Path

import sentencepiece as spm
import torch
from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "{{ '<|' + message['role'] + '|>\n' + message['content'] + '\n' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% endif %}"
)


def write_corpus(path: Path, n_files: int = 150, max_chars: int = 2_000_000) -> int:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in stdlib.glob("*.py") if p.is_file())[:n_files]
    if not files:
        raise SystemExit(f"no *.py files under {stdlib} to train the tokenizer on")
    total = 0
    with path.open("w", encoding="utf-8") as out:
        for f in files:
            text = f.read_text(encoding="utf-8", errors="replace")
            out.write(text)
            out.write("\n")
            total += len(text)
            if total >= max_chars:
                break
    return total


def train_tokenizer(out_dir: Path, vocab: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus.txt"
        write_corpus(corpus)
        spm.SentencePieceTrainer.train(
            input=str(corpus),
            model_prefix=str(out_dir / "tokenizer"),
            model_type="bpe",
            vocab_size=vocab,
            byte_fallback=True,
            unk_id=0,
            bos_id=1,
            eos_id=2,
            pad_id=-1,
            character_coverage=1.0,
            num_threads=1,
            minloglevel=2,
        )
    (out_dir / "tokenizer.vocab").unlink(missing_ok=True)
    config = {
        "tokenizer_class": "LlamaTokenizer",
        "bos_token": "<s>",
        "eos_token": "</s>",
        "unk_token": "<unk>",
        "add_bos_token": True,
        "add_eos_token": False,
        "model_max_length": 2048,
    }
    (out_dir / "tokenizer_config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    tok = AutoTokenizer.from_pretrained(str(out_dir))
    if len(tok) != vocab:
        raise SystemExit(f"tokenizer has {len(tok)} entries, expected {vocab}")
    tok.chat_template = CHAT_TEMPLATE
    tok.save_pretrained(str(out_dir))


def build_model(out_dir: Path, vocab: int, hidden: int, layers: int, heads: int, seed: int) -> int:
    torch.manual_seed(seed)
    cfg = LlamaConfig(
        vocab_size=vocab,
        hidden_size=hidden,
        intermediate_size=hidden * 2,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=heads,
        max_position_embeddings=2048,
        bos_token_id=1,
        eos_token_id=2,
        tie_word_embeddings=False,
        torch_dtype="bfloat16",
    )
    model = LlamaForCausalLM(cfg).to(torch.bfloat16)
    model.save_pretrained(str(out_dir))
    return sum(p.numel() for p in model.parameters())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("--vocab", type=int, default=2048)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--heads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    train_tokenizer(args.out_dir, args.vocab)
    n_params = build_model(args.out_dir, args.vocab, args.hidden, args.layers, args.heads, args.seed)
    tok = AutoTokenizer.from_pretrained(str(args.out_dir))
    probe = tok("Hello world")["input_ids"]
    print(f"tiny Llama in {args.out_dir}: {n_params} parameters, vocab {len(tok)}, 'Hello world' -> {probe}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
