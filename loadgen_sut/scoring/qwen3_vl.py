"""qwen3-vl-235b-a22b's accuracy: the category hierarchical F1 of the Shopify product catalogue.

As ``multimodal/qwen3-vl/src/mlperf_inf_mm_q3vl/evaluation.py`` computes it (mlcommons/inference b66003e1,
lines 37-117, 214-254, 343, 403-411; mlcommons/endpoints' ``ShopifyCategoryF1Scorer`` follows the same):

1. Each response is validated against the answer's schema (``ProductMetadata.model_validate_json``: one JSON
   object with exactly ``category`` (string), ``brand`` (string) and ``is_secondhand`` (boolean); no fence, no
   other text). One that fails is *unparsable*: its category becomes the pad token repeated as many levels as
   the ground truth has, so it matches nothing and still counts its levels.
2. Both paths are split on ``" > "`` and each level stripped; the intersection is the longest common prefix
   (matching stops at the first different level).
3. Over all samples: hP = sum of intersections / sum of predicted levels, hR = sum of intersections / sum of
   true levels, F1 = 2 hP hR / (hP + hR) (0 when both are 0). A micro average, not a mean of per-sample F1s.

The responses are read as the reference reads them: each accuracy-log entry's ``data`` is the answer's UTF-8
text (``bytes.fromhex(elem["data"]).decode("utf-8")``, evaluation.py line 216), which is what the reference SUT
hands LoadGen (``task.py`` lines 329-344: the chat completion's ``content`` encoded as UTF-8) and what this
harness's SUT logs for qwen3-vl (``Benchmark.accuracy_log_format`` ``utf8_text``). Unlike evaluation.py, entries
are deduplicated by ``qsl_idx`` (first wins), as every other scorer here; an accuracy run logs each sample once, so
the score is the same. ``tokens_per_sample`` is the engine's counts LoadGen logged (``token_count``, present with
``use_token_latencies``), else not measured; evaluation.py reports none.

``accuracy.txt`` then holds ``{"f1": F1}`` (``json.dumps``, as the reference writes it), which the checker's
``F1_HIERARCHICAL`` pattern reads. The reference's brand and second-hand scores and its random baselines are
printed by it but not reported or judged; they are not computed here (its second-hand F1 depends on random
choices for unparsable responses).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from loadgen_sut.datasets_vl import CATEGORY_SEPARATOR, ProductMetadata
from loadgen_sut.scoring.inputs import EvalInput

PRED_CATEGORY_PAD = "<|__PRED_CATEGORY_PAD__|>"  # evaluation.py _PRED_CATEGORY_PAD
SPLITTER_NOT_USED = "not used (qwen3-vl category hierarchical F1)"


@dataclass(frozen=True, slots=True)
class HierarchicalF1:
    """The aggregate, with its parts."""

    f1: float
    precision: float  # hP
    recall: float  # hR
    intersection: int
    predicted_levels: int
    true_levels: int
    samples: int


def levels(path: str, separator: str = CATEGORY_SEPARATOR) -> list[str]:
    """A category path's levels, each stripped (``str.split`` on the separator: "" gives one empty level)."""
    return [c.strip() for c in path.split(separator)]


def hierarchical_components(predicted: str, true: str, separator: str = CATEGORY_SEPARATOR) -> tuple[int, int, int]:
    """(longest common prefix in levels, predicted levels, true levels) of one sample."""
    pred, truth = levels(predicted, separator), levels(true, separator)
    common = 0
    for p, t in zip(pred, truth, strict=False):  # the shorter path ends the comparison
        if p != t:
            break
        common += 1
    return common, len(pred), len(truth)


def hierarchical_f1(pairs: Sequence[tuple[str, str]], separator: str = CATEGORY_SEPARATOR) -> HierarchicalF1:
    """Micro-averaged hierarchical precision, recall and F1 of (predicted, true) category paths."""
    inter = pred_n = true_n = 0
    for predicted, true in pairs:
        i, p, t = hierarchical_components(predicted, true, separator)
        inter, pred_n, true_n = inter + i, pred_n + p, true_n + t
    hp = inter / pred_n if pred_n > 0 else 0.0
    hr = inter / true_n if true_n > 0 else 0.0
    f1 = 0.0 if hp + hr == 0 else 2 * (hp * hr) / (hp + hr)
    return HierarchicalF1(f1, hp, hr, inter, pred_n, true_n, len(pairs))


def predicted_category(response: str, true: str, separator: str = CATEGORY_SEPARATOR) -> tuple[str, bool]:
    """(the category to score, whether the response parsed): an unparsable response gets the pad path."""
    try:
        return ProductMetadata.model_validate_json(response).category, True
    except ValidationError:
        return separator.join([PRED_CATEGORY_PAD] * len(true.split(separator))), False


def evaluate(data: EvalInput) -> dict[str, Any]:
    """qwen3-vl's part of a score: the category hierarchical F1 (``f1_hierarchical``, ``F1_HIERARCHICAL``)."""
    pairs = []
    unparsable = 0
    for text, truth in zip(data.texts, data.references, strict=True):
        category, parsed = predicted_category(text, truth)
        unparsable += not parsed
        pairs.append((category, truth))
    h = hierarchical_f1(pairs)
    if data.ids:  # a log of token ids (this harness's earlier format, read with a tokenizer)
        counts: list[int | None] = [len(x) for x in data.ids]
    else:  # the UTF-8 text the reference logs: the engine's counts, where LoadGen logged them
        counts = [e.token_count for e in data.entries]
    measured = [c for c in counts if c is not None]
    return {
        "sentence_splitter": SPLITTER_NOT_USED,
        "gen_len": sum(len(t) for t in data.texts),
        "tokens_per_sample": sum(measured) / len(measured) if measured and len(measured) == len(counts) else None,
        "f1_hierarchical": h.f1,
        "hierarchical_precision": h.precision,
        "hierarchical_recall": h.recall,
        "unparsable_responses": unparsable,
    }
