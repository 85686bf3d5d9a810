"""Build a random-weight model with a real byte-level BPE tokenizer, offline, for the GPU smoke run and CPU tests.

    python3 bench/device/build_model.py OUT_DIR [--arch llama|gpt-oss] [--size tiny|0.5b|1b] [--device cuda] [--seed 0]

1. Tokenizer: a byte-level BPE (the kind of tokenizer Llama 3 and gpt-oss use) trained with Hugging Face
   ``tokenizers`` on the first 150 ``*.py`` files of this Python's standard library plus the
   built-in data set's prompts and references; no download.
   - ``--arch llama``: ``<pad>``=0, ``<s>``=1 (prepended to every encoding), ``</s>``=2.
   - ``--arch gpt-oss``: the harmony format's special tokens (``HARMONY_TOKENS``: ``<|start|>``, ``<|message|>``,
     ``<|channel|>``, ``<|end|>``, ``<|return|>``, ...) as single special tokens, so a harmony prompt such as the
     data set's ``text_input`` encodes them as one id each and ``decode(..., skip_special_tokens=False)`` gives them
     back; nothing prepended (a harmony prompt starts with ``<|start|>``). EOS is ``<|return|>``; generation stops
     at ``<|return|>``, ``<|call|>`` or ``<|endoftext|>`` (the pad token), as gpt-oss's own generation config has it.
2. Model: ``LlamaForCausalLM`` or ``GptOssForCausalLM`` (mixture of experts, top-k routing, sliding and full
   attention layers with sinks) with random weights, created on ``--device`` (fast on a GPU), cast to bfloat16 and
   saved as safetensors (gpt-oss: not MXFP4-quantized). Its vocabulary is the tokenizer's, rounded up to a multiple
   of 64.
3. ``build.json`` in OUT_DIR says what was built (architecture, size, parameters, vocabulary, seconds, versions);
   ``smoke_report.py`` reads it.

Random weights produce random tokens, so the smoke run asks for ``--ignore-eos``.
Needs torch, transformers (gpt-oss: 4.55 or later, ``GptOssConfig``) and tokenizers (all in the H200 image).
"""

from __future__ import annotations

import argparse
import json
import sys
import sysconfig
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import tokenizers
import torch
import transformers
from tokenizers import decoders, models, pre_tokenizers, processors, trainers
from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

from loadgen_sut.datasets import load_dataset

BUILD_FILE = "build.json"
SPECIAL_TOKENS = ("<pad>", "<s>", "</s>")
# gpt-oss: the harmony format's special tokens (the markers of language/gpt-oss-120b/eval_accuracy.py:118 and the
# data set's text_input); <|endoftext|> first, so it is id 0 and the pad token
HARMONY_TOKENS = (
    "<|endoftext|>",
    "<|startoftext|>",
    "<|return|>",
    "<|call|>",
    "<|start|>",
    "<|end|>",
    "<|message|>",
    "<|channel|>",
    "<|constrain|>",
)
HARMONY_STOP = ("<|return|>", "<|call|>", "<|endoftext|>")  # generation ends at any of these
ARCHES = ("llama", "gpt-oss")


@dataclass(frozen=True)
class Shape:
    """A Llama shape; ``vocab`` is the tokenizer's target size."""

    vocab: int
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    intermediate: int
    tie: bool


@dataclass(frozen=True)
class MoeShape:
    """A gpt-oss shape: ``experts`` experts per layer, ``top_k`` of them per token; layers alternate sliding-window
    (``window`` tokens) and full attention, as gpt-oss-120b's do."""

    vocab: int
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    experts: int
    top_k: int
    window: int


MOE_SIZES: dict[str, MoeShape] = {
    # 0.71 M parameters: the CPU test (4 layers, 8 experts, 2 per token)
    "tiny": MoeShape(
        vocab=2048, hidden=64, layers=4, heads=4, kv_heads=2, head_dim=16, intermediate=64, experts=8, top_k=2, window=16
    ),
    # 0.49 B parameters (0.19 B active per token): 8 layers of width 1024, 16 experts, 4 per token (gpt-oss-120b: 36 x 2880, 128 / 4)
    "0.5b": MoeShape(
        vocab=32000, hidden=1024, layers=8, heads=16, kv_heads=4, head_dim=64, intermediate=1024, experts=16, top_k=4,
        window=128,
    ),
}

SIZES: dict[str, Shape] = {
    # a few hundred thousand parameters: the CPU test of the script
    "tiny": Shape(vocab=2048, hidden=64, layers=2, heads=4, kv_heads=2, intermediate=256, tie=False),
    # about 0.5 B: 16 layers of width 1536 (head 128, GQA 12/4)
    "0.5b": Shape(vocab=32000, hidden=1536, layers=16, heads=12, kv_heads=4, intermediate=4096, tie=False),
    # about 1.0 B: Llama-3.2-1B's body (16 layers of width 2048, GQA 32/8, MLP 8192, tied embeddings)
    "1b": Shape(vocab=32000, hidden=2048, layers=16, heads=32, kv_heads=8, intermediate=8192, tie=True),
}


def corpus(n_files: int = 150, max_chars: int = 2_000_000) -> Iterator[str]:
    """Standard-library sources (present on every machine) and the built-in data set's texts."""
    for s in load_dataset("builtin").samples:
        yield (s.prompt or "") + "\n" + (s.reference or "")
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    total = 0
    for f in sorted(p for p in stdlib.glob("*.py") if p.is_file())[:n_files]:
        text = f.read_text(encoding="utf-8", errors="replace")
        yield text
        total += len(text)
        if total >= max_chars:
            return


def train_tokenizer(out_dir: Path, vocab: int, arch: str = "llama") -> PreTrainedTokenizerFast:
    tok = tokenizers.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab,
        special_tokens=list(HARMONY_TOKENS if arch == "gpt-oss" else SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(corpus(), trainer)
    if arch == "gpt-oss":
        fast = PreTrainedTokenizerFast(
            tokenizer_object=tok,
            bos_token="<|startoftext|>",
            eos_token="<|return|>",
            pad_token="<|endoftext|>",
            model_max_length=4096,
        )
        fast.save_pretrained(str(out_dir))
        return fast
    bos_id = tok.token_to_id("<s>")
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", bos_id)]
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<s>", eos_token="</s>", pad_token="<pad>", model_max_length=2048
    )
    fast.save_pretrained(str(out_dir))
    return fast


def build_model(
    out_dir: Path, shape: Shape, vocab: int, tok: PreTrainedTokenizerFast, device: str, seed: int
) -> int:
    torch.manual_seed(seed)
    cfg = LlamaConfig(
        vocab_size=vocab,
        hidden_size=shape.hidden,
        intermediate_size=shape.intermediate,
        num_hidden_layers=shape.layers,
        num_attention_heads=shape.heads,
        num_key_value_heads=shape.kv_heads,
        max_position_embeddings=2048,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
        tie_word_embeddings=shape.tie,
    )
    with torch.device(device):
        model = LlamaForCausalLM(cfg)
    model = model.bfloat16()
    model.save_pretrained(str(out_dir))
    n_params = sum(p.numel() for p in model.parameters())
    del model
    if device.startswith("cuda"):
        torch.cuda.empty_cache()
    return n_params


def build_gpt_oss(
    out_dir: Path, shape: MoeShape, vocab: int, tok: PreTrainedTokenizerFast, device: str, seed: int
) -> int:
    from transformers import GptOssConfig, GptOssForCausalLM

    torch.manual_seed(seed)
    stop_ids = [int(tok.convert_tokens_to_ids(t)) for t in HARMONY_STOP]
    cfg = GptOssConfig(
        vocab_size=vocab,
        hidden_size=shape.hidden,
        intermediate_size=shape.intermediate,
        num_hidden_layers=shape.layers,
        num_attention_heads=shape.heads,
        num_key_value_heads=shape.kv_heads,
        head_dim=shape.head_dim,
        num_local_experts=shape.experts,
        num_experts_per_tok=shape.top_k,
        sliding_window=shape.window,
        layer_types=["sliding_attention" if i % 2 == 0 else "full_attention" for i in range(shape.layers)],
        max_position_embeddings=4096,
        bos_token_id=tok.bos_token_id,
        eos_token_id=stop_ids,
        pad_token_id=tok.pad_token_id,
        tie_word_embeddings=False,
    )
    with torch.device(device):
        model = GptOssForCausalLM(cfg)
    model = model.bfloat16()
    model.generation_config = GenerationConfig(
        bos_token_id=tok.bos_token_id, eos_token_id=stop_ids, pad_token_id=tok.pad_token_id
    )
    model.save_pretrained(str(out_dir))
    n_params = sum(p.numel() for p in model.parameters())
    del model
    if device.startswith("cuda"):
        torch.cuda.empty_cache()
    return n_params


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("--arch", default="llama", choices=ARCHES, help="llama (default) or gpt-oss (mixture of experts)")
    ap.add_argument(
        "--size", default=None, choices=sorted(set(SIZES) | set(MOE_SIZES)),
        help="llama: tiny, 0.5b, 1b (default 1b); gpt-oss: tiny, 0.5b (default 0.5b)",
    )
    ap.add_argument(
        "--device", default="cuda", help="where the random weights are made (cuda is much faster)"
    )
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    sizes: dict[str, Shape] | dict[str, MoeShape] = MOE_SIZES if args.arch == "gpt-oss" else SIZES
    size = args.size or ("0.5b" if args.arch == "gpt-oss" else "1b")
    if size not in sizes:
        ap.error(f"--arch {args.arch} has no size {size!r}; it has {', '.join(sorted(sizes))}")
    shape = sizes[size]
    args.out_dir.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    tok = train_tokenizer(args.out_dir, shape.vocab, args.arch)
    t_tok = time.perf_counter() - t0
    vocab = -(-len(tok) // 64) * 64
    if isinstance(shape, MoeShape):
        n_params = build_gpt_oss(args.out_dir, shape, vocab, tok, args.device, args.seed)
    else:
        n_params = build_model(args.out_dir, shape, vocab, tok, args.device, args.seed)
    t_all = time.perf_counter() - t0
    weights_bytes = sum(p.stat().st_size for p in args.out_dir.glob("*.safetensors"))
    probe = tok("Hello world")["input_ids"]
    build = {
        "arch": args.arch,
        "size": size,
        "shape": asdict(shape),
        "parameters": n_params,
        "dtype": "bfloat16",
        "tokenizer": "byte-level BPE trained offline (tokenizers), stdlib *.py + builtin data set"
        + (", harmony special tokens" if args.arch == "gpt-oss" else ""),
        "tokenizer_entries": len(tok),
        "model_vocab": vocab,
        "weights_bytes": weights_bytes,
        "built_on": args.device,
        "seed": args.seed,
        "tokenizer_s": round(t_tok, 2),
        "build_s": round(t_all, 2),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "tokenizers": tokenizers.__version__,
        "hello_world_ids": probe,
    }
    (args.out_dir / BUILD_FILE).write_text(json.dumps(build, indent=1) + "\n", encoding="utf-8")
    print(
        f"random {'gpt-oss' if args.arch == 'gpt-oss' else 'Llama'} {size} in {args.out_dir}: {n_params / 1e6:.1f} M parameters, bf16 {weights_bytes / 2**20:.0f} MiB, "
        f"vocabulary {len(tok)} (model {vocab}); tokenizer {t_tok:.1f} s, all {t_all:.1f} s; 'Hello world' -> {probe}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
