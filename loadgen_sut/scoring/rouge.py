"""ROUGE (and the llama3.1-405b exact-match rule), as the summarisation reference scripts score it.

``language/llama2-70b/evaluate-accuracy.py`` and ``language/llama3.1-8b/evaluation.py``: predictions and
references are stripped, split into sentences and re-joined with newlines ("rougeLSum expects newline after each
sentence"); ROUGE-1/2/L/Lsum with Porter stemming from Google's ``rouge-score`` package (what the reference's
``evaluate.load("rouge")`` wraps), mean F-measure of the per-sample scores times 100, rounded to 4 places;
``gen_len`` = characters of the post-processed predictions summed; ``tokens_per_sample`` = output ids / samples,
rounded to 1. ``exact_match`` only for a benchmark with an exact-match target: the llama3.1-405b reference's
``qa_em`` rule (answer after the last ``"Answer: "``, contained in the reference, ``|`` alternatives, whitespace
and case ignored), except that an empty answer scores 0 (the reference scores it 100).

Sentence splitting: the reference uses ``nltk.sent_tokenize`` with the pretrained English Punkt model, which it
downloads at run time. When that model is installed (``nltk.download('punkt_tab')`` done once by the user) it is
used; otherwise NLTK's Punkt algorithm runs untrained with a list of common English abbreviations. Only rougeLsum
and gen_len depend on the split; the score records which splitter ran.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
from nltk.tokenize import sent_tokenize
from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer
from rouge_score import rouge_scorer

from loadgen_sut.scoring.inputs import EvalInput

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")

SPLITTER_PUNKT_PRETRAINED = "nltk punkt (pretrained English, as the reference)"
SPLITTER_PUNKT_UNTRAINED = (
    "nltk punkt algorithm, untrained + English abbreviations (pretrained model not installed)"
)
SPLITTER_NOT_USED = "not used (deepseek-r1 evaluators)"

_ABBREVIATIONS = [
    "mr",
    "mrs",
    "ms",
    "dr",
    "prof",
    "sr",
    "jr",
    "st",
    "mt",
    "vs",
    "etc",
    "inc",
    "ltd",
    "co",
    "corp",
    "dept",
    "gov",
    "gen",
    "col",
    "lt",
    "sgt",
    "rev",
    "fig",
    "no",
    "vol",
    "jan",
    "feb",
    "mar",
    "apr",
    "jun",
    "jul",
    "aug",
    "sep",
    "sept",
    "oct",
    "nov",
    "dec",
    "mon",
    "tue",
    "wed",
    "thu",
    "fri",
    "sat",
    "sun",
    "u.s",
    "u.k",
    "u.n",
    "e.g",
    "i.e",
    "a.m",
    "p.m",
    "approx",
    "est",
]


class SentenceSplitter:
    """Sentence splitting for rougeLsum: pretrained Punkt when installed, else untrained Punkt."""

    def __init__(self) -> None:
        self.name = SPLITTER_PUNKT_PRETRAINED
        self._fallback: PunktSentenceTokenizer | None = None
        try:
            sent_tokenize("Probe sentence. Another one.")
        except LookupError:
            params = PunktParameters()
            params.abbrev_types = set(_ABBREVIATIONS)
            self._fallback = PunktSentenceTokenizer(params)
            self.name = SPLITTER_PUNKT_UNTRAINED

    def split(self, text: str) -> list[str]:
        if self._fallback is None:
            return list(sent_tokenize(text))
        return list(self._fallback.tokenize(text))


def postprocess(texts: Sequence[str], splitter: SentenceSplitter) -> list[str]:
    """The reference ``postprocess_text``: strip, then one sentence per line."""
    return ["\n".join(splitter.split(t.strip())) for t in texts]


def rouge_scores(predictions: Sequence[str], references: Sequence[str]) -> dict[str, float]:
    """Mean ROUGE F-measures ×100, rounded to 4 places, of post-processed texts (as ``evaluate``'s rouge)."""
    if len(predictions) != len(references):
        raise ValueError("predictions and references differ in length")
    if not predictions:
        raise ValueError("nothing to score")
    scorer = rouge_scorer.RougeScorer(list(ROUGE_TYPES), use_stemmer=True)
    per: dict[str, list[float]] = {k: [] for k in ROUGE_TYPES}
    for pred, ref in zip(predictions, references, strict=True):
        score = scorer.score(ref, pred)
        for k in ROUGE_TYPES:
            per[k].append(score[k].fmeasure)
    return {k: round(float(np.mean(per[k])) * 100, 4) for k in ROUGE_TYPES}


def qa_exact_match(reference: str, prediction: str) -> float:
    """The llama3.1-405b reference ``qa_em`` rule (100 or 0); an empty answer scores 0."""
    answer = prediction
    if "Answer: " in prediction:
        answer = prediction[prediction.rfind("Answer: ") + len("Answer: ") :]
    if not answer.strip():
        return 0.0
    if answer in reference:
        return 100.0
    normalized = re.sub(r"\s+", "", answer).lower()
    entries = [re.sub(r"\s+", "", e).lower() for e in reference.split("|")]
    return 100.0 if any(e and e in normalized for e in entries) else 0.0


def evaluate(data: EvalInput) -> dict[str, Any]:
    """The ROUGE evaluator's part of a score (llama2-70b, llama3.1-8b, llama3.1-405b, gpt-j)."""
    bench = data.benchmark
    splitter = SentenceSplitter()
    preds = postprocess(data.texts, splitter)
    refs = postprocess(data.references, splitter)
    rouge = rouge_scores(preds, refs)
    exact = None
    if any(
        t.metric == "exact_match"
        for scen in (None, *bench.accuracy_targets_by_scenario)
        for t in bench.accuracy_targets_for(scen)
    ):
        exact = round(float(np.mean([qa_exact_match(r, p) for p, r in zip(preds, refs, strict=True)])), 4)
    gen_tok_len = sum(len(x) for x in data.ids)
    return {
        "sentence_splitter": splitter.name,
        "rouge1": rouge["rouge1"],
        "rouge2": rouge["rouge2"],
        "rougeL": rouge["rougeL"],
        "rougeLsum": rouge["rougeLsum"],
        "exact_match": exact,
        "gen_len": sum(len(p) for p in preds),
        "tokens_per_sample": round(gen_tok_len / len(data.ids), 1),
    }
