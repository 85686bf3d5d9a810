"""Write a tiny word-level Hugging Face tokenizer to a directory, for peers that insist on loading one.

The peers (AIPerf, GuideLLM) load a tokenizer to synthesise prompts and count tokens; their defaults fetch one
from the Hugging Face hub, which this machine cannot reach. This tokenizer splits on whitespace and knows a few
hundred common English words plus ``tok`` (the token server's output word), so one streamed token event is one
token for a peer that counts tokens itself.

It is also the served model's tokenizer of ``bench/token_server.py`` in the documented first-submission path
(``run --tokenizer examples/token-server-tokenizer``): that directory is this script's output, committed
(``tests/sut/test_first_submission_path.py`` checks that it still is).

    $PEERS_VENV/bin/python bench/peers/make_tokenizer.py DIR
    python3 bench/peers/make_tokenizer.py examples/token-server-tokenizer   # needs only `tokenizers` ([hf] brings it)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tokenizers import Tokenizer, models, pre_tokenizers

_WORDS_TEXT = (
    "tok the of and to in a is that for it as was with be by on not he i this are or his from at which but "
    "have an they you were her she there one all we their has been would more when if no will other its who "
    "so what about up out into them than some time could only these two may then do first any my now such like "
    "our over man me even most made after also did many before must through back years where much your way "
    "well down should because each just those people how too little state good very make world still own see "
    "men work long get here between both life being under never day same another know while last might us "
    "great old year off come since against go came right used take three"
)
WORDS = _WORDS_TEXT.split()


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: make_tokenizer.py DIR", file=sys.stderr)
        return 2
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    vocab = {"[UNK]": 0, "<s>": 1, "</s>": 2}
    for word in WORDS:
        vocab.setdefault(word, len(vocab))
    tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer.save(str(out / "tokenizer.json"))
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "unk_token": "[UNK]",
        "bos_token": "<s>",
        "eos_token": "</s>",
        "model_max_length": 1 << 20,
    }
    (out / "tokenizer_config.json").write_text(json.dumps(config, indent=1) + "\n", encoding="utf-8")
    (out / "special_tokens_map.json").write_text(
        json.dumps({"unk_token": "[UNK]", "bos_token": "<s>", "eos_token": "</s>"}) + "\n", encoding="utf-8"
    )
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
