"""Score an accuracy run as the reference evaluation scripts do, and write ``accuracy.txt``.

What is computed (``language/llama2-70b/evaluate-accuracy.py``, ``language/llama3.1-8b/evaluation.py``):

1. The accuracy log is deduplicated by ``qsl_idx`` (first entry wins) and each output is decoded
   from little-endian ids (``dtype``; the reference SUTs write int32, the llama2-70b HF Offline SUT
   int64) and detokenized (``skip_special_tokens``, the caller's ``detokenize``).
2. Predictions and references are stripped, split into sentences and re-joined with newlines
   ("rougeLSum expects newline after each sentence").
3. ROUGE-1/2/L/Lsum with Porter stemming from Google's ``rouge-score`` package, the implementation
   the reference's ``evaluate.load("rouge")`` wraps; mean F-measure of the per-sample scores
   (``use_aggregator=False``) times 100, rounded to 4 places.
4. ``gen_len`` = characters of the post-processed predictions summed, ``gen_num`` = samples,
   ``gen_tok_len`` = output ids summed, ``tokens_per_sample`` = gen_tok_len / gen_num rounded to 1.
5. ``exact_match`` (only for benchmarks with an exact-match target): the llama3.1-405b reference's
   ``qa_em`` rule (answer after the last ``"Answer: "``, contained in the reference, ``|`` alternatives,
   whitespace and case ignored), except that an empty answer scores 0 (the reference scores it 100).
6. deepseek-r1 (``language/deepseek-r1/eval_accuracy.py``) is scored by its own evaluators in
   :mod:`loadgen_sut.scoring.deepseek` (multiple choice for GPQA/MMLU-Pro, the PRM800K math grader
   for MATH-500, integers for AIME, LiveCodeBench tests for code): ``exact_match`` and an unrounded
   ``tokens_per_sample``, no ROUGE. Code is executed only with an explicit ``code_execution``
   opt-in; without it the code samples are not scored and the score is incomplete (never judged
   against the round's target).
7. gpt-oss-120b (``language/gpt-oss-120b/eval_mlperf_accuracy.py``): :mod:`loadgen_sut.scoring.gpt_oss`
   reads the outputs decoded with special tokens kept (its harmony channels; ``detokenize_special``),
   counts per sub-data set with its repeats (AIME25 x8, GPQA Diamond x5, LiveCodeBench v6 x3) and
   gives ``exact_match`` = 100 x sum(correct/repeats) / sum(total/repeats), to 3 decimals as printed.
8. A benchmark whose reference SUT logs the answer's text (``Benchmark.accuracy_log_format`` ``utf8_text``:
   qwen3-vl, ``evaluation.py:216`` reads ``bytes.fromhex(data).decode("utf-8")``) is read the same way: no
   tokenizer; ``gen_tok_len`` / ``tokens_per_sample`` are the engine's counts LoadGen logged (``token_count``,
   with ``use_token_latencies``), else not measured (None). A log of that benchmark holding token ids (this
   harness's earlier format: int32 ids leave zero bytes, which UTF-8 text never holds) is read as ids with the
   tokenizer given, and accuracy.txt says the official script cannot read it; without a tokenizer it is refused.

Sentence splitting: the reference uses ``nltk.sent_tokenize`` with the pretrained English Punkt
model, which it downloads at run time. When that model is installed (``nltk.download('punkt_tab')``
done once by the user) it is used; otherwise NLTK's Punkt algorithm runs untrained with a list of
common English abbreviations. Only rougeLsum and gen_len depend on the split; the score records
which splitter ran.

Judgement: against the round's targets (``Benchmark.accuracy_targets_for(scenario)`` / ``accuracy_upper_limits``)
only when the whole official data set was scored; otherwise against a reference run of the same
model and data that the user made, with the same factors the round applies.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from checker.checks.rule_registry import INFO, WARN, RuleInfo, register, registered_finding
from checker.findings import Finding, UnusableInput
from checker.parsers.accuracy_log import (
    AccuracyEntry,
    TokenDecodeError,
    TokenDtype,
    accuracy_log_hash,
    parse_accuracy_log,
)
from checker.report.atomic import write_atomic
from loadgen_sut.datasets import Dataset
from loadgen_sut.scoring.code_exec import CodeExecution
from loadgen_sut.scoring.deepseek import SubsetScore
from loadgen_sut.scoring.evaluators import evaluator_for, keeps_special_tokens
from loadgen_sut.scoring.gpt_oss import DatasetComponent, component_lines
from loadgen_sut.scoring.inputs import EvalInput
from loadgen_sut.scoring.rouge import ROUGE_TYPES
from rules.models import AccuracyTarget, Benchmark, Scenario

# The judgement of a score (AccuracyScore.findings); the official tools score accuracy but judge no harness run
RULES = register(
    __name__,
    RuleInfo("RUN-ACC-COVERAGE", "-", "the accuracy log covers fewer samples than the data set", beyond=True),
    RuleInfo(
        "RUN-ACC-INCOMPLETE", "-", "samples not scored (code execution not enabled): the metric is not judged", WARN,
        beyond=True,
    ),
    RuleInfo("RUN-ACC-REFERENCE", "-", "the reference run scored other samples or another data set", beyond=True),
    RuleInfo(
        "RUN-ACC-SUBSET", "-", "not the full official data set: the round's targets do not apply (compare with a "
        "reference run)", INFO, beyond=True,
    ),
    RuleInfo("RUN-ACC-NOT-MEASURED", "-", "a target's metric this harness does not compute (not checked)", WARN, beyond=True),
    RuleInfo("RUN-ACC-TARGET", "-", "a metric below the benchmark's target (or the reference run's bound)", beyond=True),
    RuleInfo("RUN-ACC-UPPER", "-", "a metric above the benchmark's upper limit (e.g. tokens per sample)", beyond=True),
)

# accuracy.txt dict key -> ACC_PATTERN metric name of the round
METRIC_KEYS = {
    "rouge1": "ROUGE1",
    "rouge2": "ROUGE2",
    "rougeL": "ROUGEL",
    "rougeLsum": "ROUGELSUM",
    "gen_len": "GEN_LEN",
    "tokens_per_sample": "TOKENS_PER_SAMPLE",
    "exact_match": "exact_match",
    "f1_hierarchical": "F1_HIERARCHICAL",
}
Detokenize = Callable[[Sequence[int]], str]


class AccuracyScore(BaseModel):
    """Scores of one accuracy run. Metrics that were not computed are None."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    benchmark: str
    dataset: str
    dataset_samples: int
    simulated: bool
    dtype: TokenDtype
    sentence_splitter: str
    accuracy_log: str
    accuracy_log_sha256: str
    gen_num: int  # samples scored (unique qsl_idx)
    duplicate_entries: int
    missing_samples: int  # data-set samples with no entry in the log
    rouge1: float | None = None
    rouge2: float | None = None
    rougeL: float | None = None  # the reference script's key
    rougeLsum: float | None = None  # the reference script's key
    exact_match: float | None = None
    gen_len: int
    gen_tok_len: int | None  # None: not measured (a text log without LoadGen's token_count)
    tokens_per_sample: float | None
    # what the log's responses hold: output token ids (dtype), or the answer's UTF-8 text (qwen3-vl)
    accuracy_log_format: Literal["token_ids", "utf8_text"] = "token_ids"
    # deepseek-r1: samples not scored (code not executed), so exact_match is None; the mean over
    # the scored samples; per sub-data set scores; whether generated code was executed
    not_scored: int = 0
    exact_match_scored: float | None = None
    subsets: tuple[SubsetScore, ...] = ()
    code_execution: str | None = None
    # gpt-oss-120b (loadgen_sut.scoring.gpt_oss): each sub-data set's correct/total with its repeats
    components: tuple[DatasetComponent, ...] = ()
    # qwen3-vl (loadgen_sut.scoring.qwen3_vl): the category hierarchical F1 (accuracy.txt's {"f1": ...}), its
    # precision and recall, and how many responses did not parse as the answer's JSON object
    f1_hierarchical: float | None = None
    hierarchical_precision: float | None = None
    hierarchical_recall: float | None = None
    unparsable_responses: int | None = None

    def metrics(self) -> dict[str, float]:
        """Values by ACC_PATTERN metric name (ROUGE1, GEN_LEN, TOKENS_PER_SAMPLE, exact_match, ...)."""
        out: dict[str, float] = {}
        for key, metric in METRIC_KEYS.items():
            value = getattr(self, key)
            if value is not None:
                out[metric] = float(value)
        return out

    @property
    def complete(self) -> bool:
        """The log covers every sample of the data set."""
        return self.missing_samples == 0

    def findings(
        self, benchmark: Benchmark, *, reference: AccuracyScore | None = None, scenario: Scenario | None = None
    ) -> list[Finding]:
        """Judge the scores: vs a reference run when given, else vs the round's targets for ``scenario``
        (``Benchmark.accuracy_targets_for``: v6.1 qwen3-vl has its own Interactive target).

        The round's targets hold only for the official data set scored in full; on any other data
        set (or a partial log) they are not applied and an INFO finding says so.
        """
        return _judge(self, benchmark, reference, scenario)


def _finding(
    rule: str,
    message: str,
    score: AccuracyScore,
    *,
    source: str | None = None,
    fix: str | None = None,
) -> Finding:
    """A finding of a RUN-ACC-* rule about ``score``'s accuracy log (severity and "beyond": its registration)."""
    return registered_finding(rule, message, path=score.accuracy_log, source=source, fix=fix)


def _bounds(target: AccuracyTarget, base: float | None) -> float | None:
    """The threshold relative to ``base`` (a reference run) with the round's factor, or the round's own value."""
    if base is None:
        return target.value
    if target.factor is None:
        return None
    return base * target.factor


def _judge(
    score: AccuracyScore, benchmark: Benchmark, reference: AccuracyScore | None, scenario: Scenario | None = None
) -> list[Finding]:
    out: list[Finding] = []
    tag = " (simulated engine)" if score.simulated else ""
    if score.missing_samples:
        out.append(
            _finding(
                "RUN-ACC-COVERAGE",
                f"the accuracy log covers {score.gen_num} of {score.dataset_samples} samples of {score.dataset}; "
                f"{score.missing_samples} have no output{tag}",
                score,
                source="accuracy run covers the whole data set",
                fix="run the accuracy test over the whole data set (accuracy_sample_count)",
            )
        )
    if score.not_scored:
        out.append(
            _finding(
                "RUN-ACC-INCOMPLETE",
                f"{score.not_scored} of {score.gen_num} samples were not scored (code execution: "
                f"{score.code_execution}): exact_match is not computed and not judged{tag}",
                score,
                fix="score again with the code-execution opt-in and the LiveCodeBench problems",
            )
        )
    metrics = score.metrics()
    if reference is not None:
        if (reference.dataset, reference.gen_num) != (score.dataset, score.gen_num):
            out.append(
                _finding(
                    "RUN-ACC-REFERENCE",
                    f"the reference run scored {reference.gen_num} samples of {reference.dataset}, this run "
                    f"{score.gen_num} of {score.dataset}: not comparable",
                    score,
                    fix="score both runs on the same data set and samples",
                )
            )
            return out
        base_metrics = reference.metrics()
        basis = "the reference run"
    else:
        # the samples the scenario's accuracy run covers (v6.1 qwen3-vl Interactive: its 8000-sample data set)
        want = (
            (benchmark.accuracy_sample_count_by_scenario.get(scenario) if scenario is not None else None)
            or benchmark.accuracy_sample_count
            or benchmark.dataset_size
        )
        official = want is not None and score.dataset_samples == want
        if not (official and score.complete):
            out.append(
                _finding(
                    "RUN-ACC-SUBSET",
                    f"scored {score.gen_num} samples of {score.dataset}, not the full official {benchmark.name} "
                    f"data set ({want} samples): the round's accuracy targets do not apply; "
                    f"compare with a reference run of the same model instead{tag}",
                    score,
                    source=benchmark.accuracy_cite,
                )
            )
            return out
        base_metrics = {}
        basis = f"the {benchmark.name} target"
    for target in benchmark.accuracy_targets_for(scenario):
        if score.not_scored and target.metric not in metrics:
            continue  # RUN-ACC-INCOMPLETE says why
        out.extend(
            _check(
                score, target, metrics, base_metrics, reference is not None, lower=True, basis=basis, tag=tag
            )
        )
    for limit in benchmark.accuracy_upper_limits:
        out.extend(
            _check(
                score, limit, metrics, base_metrics, reference is not None, lower=False, basis=basis, tag=tag
            )
        )
    return out


def _check(
    score: AccuracyScore,
    target: AccuracyTarget,
    metrics: dict[str, float],
    base_metrics: dict[str, float],
    relative: bool,
    *,
    lower: bool,
    basis: str,
    tag: str,
) -> list[Finding]:
    value = metrics.get(target.metric)
    rule = "RUN-ACC-TARGET" if lower else "RUN-ACC-UPPER"
    if value is None:
        return [
            _finding(
                "RUN-ACC-NOT-MEASURED",
                f"{target.metric} is not computed by this harness; it is not checked{tag}",
                score,
                source=target.cite,
            )
        ]
    base = base_metrics.get(target.metric) if relative else None
    if relative and base is None:
        return [
            _finding(
                "RUN-ACC-NOT-MEASURED", f"the reference run has no {target.metric}", score
            )
        ]
    bound = _bounds(target, base)
    if bound is None:
        return []
    ok = value >= bound if lower else value <= bound
    if ok:
        return []
    word = "below" if lower else "above"
    of = f" ({target.factor} x {base:g})" if relative and base is not None else ""
    return [
        _finding(
            rule,
            f"{target.metric} = {value:g} is {word} {basis} bound {bound:g}{of}{tag}",
            score,
            source=target.cite,
        )
    ]


def _decode_all(
    entries: Sequence[AccuracyEntry], dtype: TokenDtype, path: Path, detokenize: Detokenize
) -> list[tuple[int, ...]]:
    """Each entry's token ids, every one an id of the tokenizer that decodes them: a negative id (int32 FFFFFFFF) or
    one past its vocabulary is refused naming the entry. The reference's ``tokenizer.batch_decode`` fails on a negative
    id (an OverflowError, no score) and drops one past the vocabulary without a word: ids a tokenizer does not have
    are not the model's output (a wrong --dtype or tokenizer), so both are refused here."""
    vocab = getattr(getattr(detokenize, "__self__", None), "vocab_size", None)  # tokenizer.decode given
    size = vocab if isinstance(vocab, int) and not isinstance(vocab, bool) else None
    out = []
    for e in entries:
        try:
            ids = e.token_ids(dtype)
        except TokenDecodeError as err:
            raise UnusableInput(f"entry {e.index}: {err} (wrong --dtype?)", str(path), e.line) from err
        if ids and (min(ids) < 0 or (size is not None and max(ids) >= size)):
            bad = next(i for i in ids if i < 0 or (size is not None and i >= size))
            known = f"0 to {size - 1}" if size is not None else "none negative"
            raise UnusableInput(
                f"entry {e.index} (qsl_idx {e.qsl_idx}): token id {bad} is not in the tokenizer's vocabulary ({known}): "
                f"the output cannot be decoded (wrong --dtype {dtype.value}, or the model's tokenizer?)",
                str(path),
                e.line,
            )
        out.append(ids)
    return out


def _special_decoder(
    benchmark: Benchmark, detokenize: Detokenize, detokenize_special: Detokenize | None, accuracy_log: Path
) -> Detokenize:
    """The decoder the benchmark's evaluator reads: special tokens skipped, or kept (gpt-oss-120b)."""
    if not keeps_special_tokens(benchmark):
        return detokenize
    if detokenize_special is not None:
        return detokenize_special
    special = getattr(getattr(detokenize, "__self__", None), "decode_special", None)  # tokenizer.decode given
    if callable(special):
        decode: Detokenize = special
        return decode
    raise UnusableInput(
        f"{benchmark.name} outputs are scored with their special tokens (the reference's skip_special_tokens=False): "
        "this decoder cannot keep them",
        str(accuracy_log),
    )


# an int32 id below 2^24 (every vocabulary's) has a zero high byte; UTF-8 text never holds one
_NUL = b"\x00"


def _logged_tokens(entries: Sequence[AccuracyEntry]) -> int | None:
    """The outputs' tokens as LoadGen logged the SUT's counts (``token_count``); None when an entry has none."""
    counts = [e.token_count for e in entries]
    return None if any(c is None for c in counts) else sum(c or 0 for c in counts)


def _text_outputs(
    entries: Sequence[AccuracyEntry], benchmark: Benchmark, detokenize: Detokenize | None, dtype: TokenDtype, path: Path
) -> tuple[list[str], list[tuple[int, ...]], Literal["token_ids", "utf8_text"]]:
    """(texts, ids, what the log holds) of a benchmark whose reference SUT logs the answer's UTF-8 text.

    Text: each response decoded as UTF-8 (no ids). A log whose responses hold zero bytes is this harness's earlier
    format (int32 ids): read as ids with ``detokenize``, refused without one or when only some responses do.
    """
    with_nul = [e for e in entries if _NUL in e.data]
    if not with_nul:
        texts = []
        for e in entries:
            try:
                texts.append(e.text())
            except UnicodeDecodeError as err:
                raise UnusableInput(
                    f"entry {e.index}: the response is not UTF-8 text ({err.reason} at byte {err.start}); the "
                    f"{benchmark.name} reference SUT logs the answer's UTF-8 bytes",
                    str(path),
                    e.line,
                ) from err
        return texts, [], "utf8_text"
    text_like = [e for e in entries if e.data_nbytes and _NUL not in e.data]
    if text_like:
        raise UnusableInput(
            f"entries {with_nul[0].index} and {text_like[0].index} disagree: one holds zero bytes (token ids), the "
            f"other none (UTF-8 text); the {benchmark.name} reference SUT logs UTF-8 text only",
            str(path),
            text_like[0].line,
        )
    if detokenize is None:
        raise UnusableInput(
            f"entry {with_nul[0].index}: the responses hold token ids (zero bytes), not the UTF-8 text the "
            f"{benchmark.name} reference SUT logs (its evaluation.py cannot read them): this harness's earlier "
            "format; give the model's tokenizer to score it, or run the accuracy test again",
            str(path),
            with_nul[0].line,
        )
    ids = _decode_all(entries, dtype, path, detokenize)
    return [detokenize(x) for x in ids], ids, "token_ids"


def score_accuracy(
    accuracy_log: Path,
    dataset: Dataset,
    benchmark: Benchmark,
    detokenize: Detokenize | None,
    *,
    dtype: TokenDtype = TokenDtype.INT32,
    simulated: bool = False,
    code_execution: CodeExecution | None = None,
    detokenize_special: Detokenize | None = None,
) -> AccuracyScore:
    """Score ``mlperf_log_accuracy.json`` of an accuracy run against the data set's references.

    ``simulated`` marks outputs of the simulated engine (as does a simulated data set): the score,
    its findings and accuracy.txt then say so. ``code_execution`` is the opt-in to run generated
    code (deepseek-r1's and gpt-oss-120b's LiveCodeBench samples); without it those samples are not scored.

    ``detokenize`` decodes with special tokens skipped; an evaluator that reads them (gpt-oss-120b's harmony
    channels, :func:`~loadgen_sut.scoring.evaluators.keeps_special_tokens`) uses ``detokenize_special``, by default
    the ``decode_special`` of the tokenizer whose bound ``decode`` is ``detokenize``. A benchmark whose log holds the
    answer's text (``accuracy_log_format`` ``utf8_text``) needs none (None).
    """
    log = parse_accuracy_log(accuracy_log)
    if log.truncated:
        raise UnusableInput("the accuracy log is truncated; scoring needs the full log", str(accuracy_log))
    unique = log.unique_by_qsl_idx()
    if not unique:
        raise UnusableInput("the accuracy log has no entries", str(accuracy_log))
    evaluate = evaluator_for(benchmark).evaluate  # by Benchmark.evaluator; none: refused before any decoding
    by_index = {s.index: s for s in dataset.samples}
    for e in unique:
        sample = by_index.get(e.qsl_idx)
        if sample is None:
            raise UnusableInput(
                f"entry {e.index}: qsl_idx {e.qsl_idx} is not in data set {dataset.name} ({len(dataset.samples)} samples)",
                str(accuracy_log),
                e.line,
            )
        if sample.reference is None:
            raise UnusableInput(
                f"sample {e.qsl_idx} of {dataset.name} has no reference output", dataset.source
            )
    log_format: Literal["token_ids", "utf8_text"] = "token_ids"
    if benchmark.accuracy_log_format == "utf8_text":  # the reference SUT logs the answer's UTF-8 (qwen3-vl)
        texts, ids, log_format = _text_outputs(unique, benchmark, detokenize, dtype, accuracy_log)
    else:
        if detokenize is None:
            raise UnusableInput(f"{benchmark.name} logs output token ids: scoring needs the model's tokenizer", str(accuracy_log))
        ids = _decode_all(unique, dtype, accuracy_log, detokenize)
        decode = _special_decoder(benchmark, detokenize, detokenize_special, accuracy_log)
        texts = [decode(x) for x in ids]
    gen_tok_len = sum(len(x) for x in ids) if log_format == "token_ids" else _logged_tokens(unique)
    common: dict[str, Any] = {  # what every benchmark's score holds
        "benchmark": benchmark.name,
        "dataset": dataset.name,
        "dataset_samples": len(dataset.samples),
        "simulated": dataset.simulated or simulated,
        "dtype": dtype,
        "accuracy_log": str(accuracy_log),
        "accuracy_log_sha256": log.sha256,
        "gen_num": len(unique),
        "duplicate_entries": len(log.entries) - len(unique),
        "missing_samples": len(set(by_index) - {e.qsl_idx for e in unique}),
        "gen_tok_len": gen_tok_len,
        "accuracy_log_format": log_format,
    }
    data = EvalInput(
        benchmark=benchmark,
        dataset=dataset,
        entries=unique,
        samples=[by_index[e.qsl_idx] for e in unique],
        texts=texts,
        ids=ids,  # a text log holds none: empty (qwen3_vl.evaluate then reads the logged token counts)
        code_execution=code_execution,
    )
    return AccuracyScore(**common, **evaluate(data))


def accuracy_txt(score: AccuracyScore, log_hash: str) -> str:
    """The text of ``accuracy.txt``: the reference scripts' printed result dict, then ``hash=``."""
    result: dict[str, float | int] = {}
    for key in ROUGE_TYPES:
        value = getattr(score, key)
        if value is not None:
            result[key] = float(value)
    if score.exact_match is not None:
        result["exact_match"] = float(score.exact_match)
    result.update(gen_len=int(score.gen_len), gen_num=int(score.gen_num))
    if score.gen_tok_len is not None:  # not measured: a text log without LoadGen's token_count
        result["gen_tok_len"] = int(score.gen_tok_len)
    if score.tokens_per_sample is not None:
        result["tokens_per_sample"] = float(score.tokens_per_sample)
    lines = []
    if score.simulated:
        lines.append("inference-audit: SIMULATED engine output: these scores do not measure a real model")
    held = "UTF-8 text responses" if score.accuracy_log_format == "utf8_text" else f"dtype {score.dtype.value}"
    lines.append(
        f"inference-audit: {score.benchmark}, {score.gen_num} samples of {score.dataset}, {held}, "
        f"sentence split: {score.sentence_splitter}"
    )
    lines += [
        f"inference-audit: {s.subset.value}: {s.correct} of {s.scored} scored samples correct, {s.not_scored} not scored"
        for s in score.subsets
    ]
    lines += component_lines(score.components)  # gpt-oss-120b: per sub-data set with its repeats, the final score
    if score.not_scored:
        lines.append(
            f"inference-audit: INCOMPLETE: {score.not_scored} samples not scored (code execution: "
            f"{score.code_execution}); exact_match is not computed (over the scored samples: "
            f"{score.exact_match_scored})"
        )
    results_line = repr(result)
    if score.f1_hierarchical is not None:  # qwen3-vl: evaluation.py writes json.dumps({"f1": ...}, sort_keys=True)
        lines.append(
            f"inference-audit: hierarchical precision {score.hierarchical_precision}, recall "
            f"{score.hierarchical_recall}; {score.unparsable_responses} of {score.gen_num} responses unparsable; "
            f"{results_line}"
        )
        results_line = json.dumps({"f1": float(score.f1_hierarchical)}, sort_keys=True)
        if score.accuracy_log_format == "token_ids":  # the reference SUT logs UTF-8 text (evaluation.py:216)
            lines.append(
                "inference-audit: the log holds token ids (this harness's earlier format), read with the tokenizer "
                "given: the official evaluation.py cannot read it"
            )
    lines += ["", "Results", "", results_line, "", f"hash={log_hash}"]
    return "\n".join(lines) + "\n"


def write_accuracy_txt(score: AccuracyScore, path: Path, accuracy_log: Path) -> None:
    """Write ``accuracy.txt`` with the ``hash=`` (SHA-256) of ``accuracy_log`` as the truncation script computes it."""
    text = accuracy_txt(score, accuracy_log_hash(accuracy_log))
    write_atomic(path, text.encode("utf-8"))  # a random temporary beside it, then renamed
