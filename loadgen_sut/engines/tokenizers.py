"""Tokenizers the harness uses: the served model's HF tokenizer, or the simulated word tokenizer.

``encode`` never adds special tokens (it tokenizes generated text); ``decode`` skips them, ``decode_special``
(not part of the protocol) keeps them.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

from checker.findings import UnusableInput


def _not_torch_advice(record: logging.LogRecord) -> bool:
    return not record.getMessage().startswith(_TORCH_ADVICE)


_TORCH_ADVICE = "PyTorch was not found."  # transformers' import-time advice, once per process that imports it


def quiet_torch_advice() -> None:
    """Drop transformers' "PyTorch was not found" advice: a tokenizer does not need PyTorch, and every process that
    loads one (a run's runner and each of its tests, ``score``) printed it again, four times a submission run. The
    engine that does need PyTorch (``--engine transformers``) is refused before the run when it is missing
    (:mod:`loadgen_sut.run.engine_probe`). Only that message is dropped: transformers' other warnings still show."""
    logger = logging.getLogger("transformers")  # the logger transformers' __init__ logs it on
    if _not_torch_advice not in logger.filters:
        logger.addFilter(_not_torch_advice)


class Tokenizer(Protocol):
    name: str
    eos_token_id: int | None

    def encode(self, text: str) -> list[int]: ...

    def decode(self, token_ids: Sequence[int]) -> str: ...


class HFTokenizer:
    """``transformers.AutoTokenizer`` from a local directory (no network)."""

    def __init__(self, directory: Path) -> None:
        quiet_torch_advice()  # before transformers is imported
        try:
            from transformers import AutoTokenizer
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise UnusableInput("reading a tokenizer needs transformers: pip install 'inference-audit[hf]'") from exc
        if not directory.is_dir():
            raise UnusableInput("tokenizer directory not found", path=str(directory))
        try:
            self._tok: Any = AutoTokenizer.from_pretrained(str(directory), local_files_only=True)
        except (OSError, ValueError) as exc:
            raise UnusableInput(f"cannot load a tokenizer from it: {exc}", path=str(directory)) from exc
        self.name = str(directory)
        eos = self._tok.eos_token_id
        self.eos_token_id = int(eos) if isinstance(eos, int) else None

    @property
    def vocab_size(self) -> int:
        """Ids 0 to ``vocab_size - 1`` decode (the added and special tokens included): ``len(tokenizer)``."""
        return len(self._tok)

    def encode(self, text: str) -> list[int]:
        return list(self._tok.encode(text, add_special_tokens=False))

    def decode(self, token_ids: Sequence[int]) -> str:
        return str(self._tok.decode(list(token_ids), skip_special_tokens=True))

    def decode_special(self, token_ids: Sequence[int]) -> str:
        """The text with special tokens kept (``skip_special_tokens=False``: gpt-oss's harmony channel markers)."""
        return str(self._tok.decode(list(token_ids), skip_special_tokens=False))


class WordTokenizer:
    """The simulated engine's tokenizer: one id per whitespace-separated word of a fixed vocabulary.

    Ids 0-3 are ``<pad> <bos> <eos> <unk>``; words get ids in order of first appearance in the
    texts it is built from (the dataset's prompts and references), so a run is reproducible.
    """

    PAD, BOS, EOS, UNK = 0, 1, 2, 3
    _SPECIAL = ("<pad>", "<bos>", "<eos>", "<unk>")

    def __init__(self, texts: Iterable[str]) -> None:
        self.name = "simulated-word-tokenizer"
        self.eos_token_id: int | None = self.EOS
        self._vocab: dict[str, int] = {}
        self._words: list[str] = list(self._SPECIAL)
        for text in texts:
            for word in text.split():
                if word not in self._vocab:
                    self._vocab[word] = len(self._words)
                    self._words.append(word)

    @property
    def vocab_size(self) -> int:
        return len(self._words)

    def encode(self, text: str) -> list[int]:
        return [self._vocab.get(w, self.UNK) for w in text.split()]

    def decode(self, token_ids: Sequence[int]) -> str:
        words = self._words
        return " ".join(words[i] for i in token_ids if len(self._SPECIAL) <= i < len(words))

    def decode_special(self, token_ids: Sequence[int]) -> str:
        """The text with ``<pad> <bos> <eos> <unk>`` kept."""
        words = self._words
        return " ".join(words[i] for i in token_ids if 0 <= i < len(words))
