"""Data sets the harness runs: samples with prompt ids or text, and the reference output.

``load_dataset(spec)`` understands:

- ``builtin``: the small summarisation set shipped in ``loadgen_sut/data/builtin_summaries.jsonl``
  (short prompts with reference summaries, written for this project, Apache-2.0 like the code);
- a JSONL file (``*.jsonl`` / ``*.ndjson``, or ``jsonl:PATH``): one object per line with the prompt
  as ``prompt`` (or ``input``) text and/or ``input_ids`` (or ``tok_input``) ids, and the reference as
  ``reference`` (or ``output``);
- the official llama2-70b OpenOrca pickle (``*.pkl`` / ``*.pickle``, or ``openorca:PATH``): a pandas
  DataFrame with ``tok_input`` (prompt ids), ``input`` (prompt text) and ``output`` (reference),
  as ``language/llama2-70b/dataset.py`` and ``evaluate-accuracy.py`` read it. A pickle can run code
  when loaded: load only files you trust (the official download);
- the official deepseek-r1 pickle (``*.pkl``): ``text_input`` (prompt text, no chat template
  applied), ``ground_truth`` (or ``gt_output``) and ``dataset`` (the sub-data set: gpqa, mmlu_pro,
  math500, aime..., livecodebench), kept as ``reference`` and ``subset`` for
  :mod:`loadgen_sut.scoring.deepseek`; an integer ground truth becomes its decimal text;
- the official llama3.1-8b CNN/DailyMail JSON (``*.json``, or ``cnndm:PATH``): records with
  ``tok_input``, ``input`` and ``output``, as ``language/llama3.1-8b/dataset.py`` reads it with
  ``pandas.read_json`` (a list of records, or pandas' column-oriented form).
- qwen3-vl's Shopify product catalogue (a ``*.parquet`` file with its columns, or ``shopify:PATH`` for a file or
  the Hugging Face snapshot directory; ``shopify-v6.0:PATH`` for the v6.0 reference's prompt): chat messages
  with the product image inline, the ground-truth category as reference (:mod:`loadgen_sut.datasets_vl`).
- gpt-oss-120b's data sets (``acc_eval_inputs.parquet``, ``perf_eval_ref.parquet``, ... or the older pickles: a
  ``*.parquet`` with a ``tok_input`` or ``input_tokens`` column, a ``*.pkl`` with one and ``dataset`` or
  ``text_input``, or ``gpt-oss:PATH``): prompt ids from ``tok_input`` (pre-v4.0) else ``input_tokens`` (v4.0+), as
  ``language/gpt-oss-120b/utils/tokenization.py`` picks them; ``text_input`` (the harmony-formatted prompt) as
  prompt text, never the raw ``prompt`` column; ``ground_truth`` and ``dataset`` (aime25, gpqa_diamond,
  livecodebench_v6) as ``reference`` and ``subset`` for :mod:`loadgen_sut.scoring.gpt_oss`; the data set says
  ``evaluator="gpt-oss"``, whose evaluator object gives the simulated engine's answers (this loader imports no
  scoring). Ground truth and sub-data set may be absent (the performance data set).

Sample ``index`` is the row position, which is LoadGen's QSL index and the accuracy log's ``qsl_idx``.
Bad input raises :class:`checker.findings.UnusableInput` naming the file and the line (JSONL/JSON)
or row (pickle).
"""

from __future__ import annotations

import pickle
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict

from checker.findings import UnusableInput
from checker.safe_io import open_input, read_input_bytes
from checker.safe_json import JsonProblem, parse_json
from loadgen_sut.engines.base import ChatMessage
from loadgen_sut.engines.tokenizers import Tokenizer

BUILTIN_SPEC = "builtin"
BUILTIN_FILE = "builtin_summaries.jsonl"

_PROMPT_KEYS = ("prompt", "input", "text_input")
_IDS_KEYS = ("input_ids", "tok_input")
_REFERENCE_KEYS = ("reference", "output")
_SUBSET_KEY = "dataset"  # deepseek-r1: the sub-data set of the sample
_GROUND_TRUTH_KEYS = ("gt_output", "ground_truth")  # deepseek-r1, in the order its evaluator reads them
# Largest JSON / JSONL data set file read: it is read whole, then parsed (a few times its size in memory); a larger
# file (a sparse 8 GB one too) is refused from its size, unread
MAX_DATASET_BYTES = 1 << 30


class Sample(BaseModel):
    """One data-set sample. At least one of ``input_ids`` / ``prompt`` / ``messages`` is set."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    index: int
    input_ids: tuple[int, ...] | None = None
    prompt: str | None = None
    reference: str | None = None
    subset: str | None = None  # deepseek-r1's sub-data set (the pickle's ``dataset`` column)
    # a chat prompt with content parts (qwen3-vl: system text, then the product's text and its image inline)
    messages: tuple[ChatMessage, ...] | None = None
    # the output a perfect model gives when it is not ``reference`` itself (qwen3-vl: the JSON object with the
    # ground-truth category, brand and second-hand flag; ``reference`` is the category scored): what the
    # simulated engine answers (:func:`loadgen_sut.engines.simulated.simulated_answers`); where the evaluator family
    # defines the answer (gpt-oss-120b's harmony output), the family's evaluator gives it instead (Dataset.evaluator)
    answer: str | None = None


class Dataset(BaseModel):
    """A loaded data set. ``simulated`` marks generated (not real) samples."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    samples: tuple[Sample, ...]
    simulated: bool = False
    source: str | None = None  # the file it came from
    # the evaluator family whose output format the samples are in, where it is not the benchmark's alone (gpt-oss:
    # harmony channels): its evaluator object gives the simulated engine's answers (loadgen_sut.scoring.evaluators)
    evaluator: str | None = None

    @property
    def references(self) -> dict[int, str]:
        return {s.index: s.reference for s in self.samples if s.reference is not None}


def _pick(row: Mapping[str, Any], keys: Sequence[str]) -> Any:
    for k in keys:
        if k in row and row[k] is not None:
            return row[k]
    return None


def _as_ids(value: Any, where: str) -> tuple[int, ...]:
    if hasattr(value, "tolist"):  # numpy arrays in the pickles
        value = value.tolist()
    if not isinstance(value, (list, tuple)) or not value:
        raise ValueError(f"{where} must be a non-empty list of token ids")
    out = []
    for v in value:
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise ValueError(f"{where} holds {v!r}, not a non-negative integer token id")
        out.append(int(v))
    return tuple(out)


def _sample(index: int, row: Any, tokenizer: Tokenizer | None) -> Sample:
    """Build a sample from one record (raises ValueError with a message; the caller adds file/line)."""
    if not isinstance(row, Mapping):
        raise ValueError(f"expected an object, got {type(row).__name__}")
    prompt = _pick(row, _PROMPT_KEYS)
    ids = _pick(row, _IDS_KEYS)
    subset = row.get(_SUBSET_KEY)
    if subset is not None and not isinstance(subset, str):
        raise ValueError(f"{_SUBSET_KEY} must be a string, got {type(subset).__name__}")
    # deepseek-r1 rows (with a sub-data set) keep their ground truth, never another output column
    reference = _pick(row, _GROUND_TRUTH_KEYS if subset is not None else _REFERENCE_KEYS)
    if isinstance(reference, int) and not isinstance(reference, bool):
        reference = str(reference)  # deepseek-r1 AIME answers may be stored as integers
    if prompt is not None and not isinstance(prompt, str):
        raise ValueError(f"prompt must be a string, got {type(prompt).__name__}")
    if reference is not None and not isinstance(reference, str):
        raise ValueError(f"reference must be a string, got {type(reference).__name__}")
    input_ids = None if ids is None else _as_ids(ids, "input_ids")
    if input_ids is None and not prompt:
        raise ValueError(
            f"needs a prompt ({' or '.join(_PROMPT_KEYS)}) or token ids ({' or '.join(_IDS_KEYS)})"
        )
    if prompt is None and input_ids is not None and tokenizer is not None:
        prompt = tokenizer.decode(input_ids)  # for engines that take text only
    return Sample(index=index, input_ids=input_ids, prompt=prompt, reference=reference, subset=subset)


def _read_text(path: Path) -> str:
    """A JSON / JSONL data set file's text: a regular file (a FIFO or device is refused unread), at most
    :data:`MAX_DATASET_BYTES` (a larger one is refused from its size, before a byte is read), UTF-8."""
    data = read_input_bytes(path, what="data set", max_bytes=MAX_DATASET_BYTES)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise UnusableInput(f"not UTF-8 text ({e.reason})", str(path), line) from e


def _lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) split at "\n" only (and a "\r" before it), as JSON Lines are: ``str.splitlines`` also
    splits at U+2028, U+0085, form feeds..., which a JSON string may hold raw, and would cut a record in two."""
    for lineno, line in enumerate(text.split("\n"), start=1):
        yield lineno, line.removesuffix("\r")


def _jsonl_rows(path: Path, text: str) -> Iterator[tuple[int, Any]]:
    for lineno, line in _lines(text):
        if not line.strip():
            continue
        try:
            yield lineno, parse_json(line)  # bounded: nesting depth, long numbers, repeated keys
        except JsonProblem as e:
            raise UnusableInput(f"not a JSON object ({e.msg})", str(path), lineno) from e


def _load_jsonl(path: Path, text: str, tokenizer: Tokenizer | None, limit: int | None) -> list[Sample]:
    samples: list[Sample] = []
    for lineno, row in _jsonl_rows(path, text):
        if limit is not None and len(samples) >= limit:
            break
        try:
            samples.append(_sample(len(samples), row, tokenizer))
        except ValueError as e:
            raise UnusableInput(f"sample {len(samples)}: {e}", str(path), lineno) from e
    return samples


def _records_from_columns(path: Path, obj: Mapping[str, Any]) -> list[dict[str, Any]]:
    """pandas' column-oriented form as records in row order: ``{"column": {"row": value}}`` (``to_json``'s default;
    a cell a column lacks is None) or ``{"column": [values]}``. Refused, naming the column: lists of other lengths,
    lists mixed with objects, a row label that is not a row number, two labels of one row ("0" and "00")."""
    columns = list(obj.items())
    if all(isinstance(values, list) for _, values in columns):
        first, n = columns[0][0], len(columns[0][1])
        for name, values in columns:
            if len(values) != n:
                raise UnusableInput(
                    f"column-oriented JSON: column {_shown(name)} has {len(values)} values, column {_shown(first)} {n}",
                    str(path),
                )
        return [{name: _cell(values[i]) for name, values in columns} for i in range(n)]
    if not all(isinstance(cells, dict) for _, cells in columns):
        kinds = {name: type(cells).__name__ for name, cells in columns}
        lists = next(name for name, kind in kinds.items() if kind == "list")
        objects = next(name for name, kind in kinds.items() if kind == "dict")
        raise UnusableInput(
            f"column-oriented JSON mixes a column of values ({_shown(lists)}) with one of row-labelled cells "
            f"({_shown(objects)})",
            str(path),
        )
    labels: dict[int, str] = {}
    for name, cells in columns:
        for label in cells:
            if not _ROW_LABEL.fullmatch(label):
                raise UnusableInput(
                    f"column-oriented JSON: row label {_shown(label)} of column {_shown(name)} is not a row number",
                    str(path),
                )
            seen = labels.setdefault(int(label), label)
            if seen != label:
                raise UnusableInput(
                    f"column-oriented JSON: duplicate row label: {_shown(seen)} and {_shown(label)} (column "
                    f"{_shown(name)}) are both row {int(label)}",
                    str(path),
                )
    return [{name: _cell(cells.get(label)) for name, cells in columns} for _, label in sorted(labels.items())]


# a row label of pandas' column-oriented JSON: the row number (pandas' default index), at most 18 digits as an int64
_ROW_LABEL = re.compile(r"[0-9]{1,18}")


def _shown(text: str) -> str:
    """A column name or row label for a message: quoted, at most 40 characters of it."""
    return repr(text if len(text) <= 40 else text[:40] + "...")


def _cell(v: Any) -> Any:
    return None if _isna(v) else v


def _isna(v: Any) -> bool:
    return v is None or (isinstance(v, float) and v != v)


def _load_json(path: Path, text: str, tokenizer: Tokenizer | None, limit: int | None) -> list[Sample]:
    try:
        obj = parse_json(text)
    except JsonProblem as e:
        raise UnusableInput(f"not valid JSON ({e.msg})", str(path), e.lineno) from e
    if isinstance(obj, list):
        rows: list[Any] = obj
    elif isinstance(obj, dict) and obj and all(isinstance(v, (dict, list)) for v in obj.values()):
        rows = _records_from_columns(path, obj)
    else:
        raise UnusableInput("expected a JSON list of records (or pandas' column-oriented form)", str(path))
    return _rows_to_samples(path, rows, tokenizer, limit, "record")


def _rows_to_samples(
    path: Path, rows: Iterable[Any], tokenizer: Tokenizer | None, limit: int | None, what: str
) -> list[Sample]:
    samples: list[Sample] = []
    for i, row in enumerate(rows):
        if limit is not None and i >= limit:
            break
        try:
            samples.append(_sample(i, row, tokenizer))
        except ValueError as e:
            raise UnusableInput(f"{what} {i}: {e}", str(path)) from e
    return samples


def _load_pickle(path: Path, tokenizer: Tokenizer | None, limit: int | None) -> Dataset:
    try:
        frame = pd.read_pickle(path)
    except (
        OSError,
        pickle.UnpicklingError,
        EOFError,
        ValueError,
        TypeError,
        AttributeError,
        ImportError,
    ) as e:
        raise UnusableInput(f"cannot read the pickle: {e}", str(path)) from e
    if not isinstance(frame, pd.DataFrame):
        raise UnusableInput(f"expected a pandas DataFrame, got {type(frame).__name__}", str(path))
    if _is_gpt_oss_frame(frame):  # gpt-oss-120b's older pickle
        return _gpt_oss_dataset(path, frame, tokenizer, limit)
    have = set(map(str, frame.columns))
    if not have & set(_IDS_KEYS + _PROMPT_KEYS):
        raise UnusableInput(
            f"no prompt column (tok_input, input or text_input); columns are {sorted(have)}", str(path)
        )
    if limit is not None:
        frame = frame.iloc[:limit]
    rows = (
        {str(k): (None if _isna(v) else v) for k, v in rec.items()} for rec in frame.to_dict(orient="records")
    )
    return Dataset(name=path.name, samples=tuple(_rows_to_samples(path, rows, tokenizer, None, "row")), source=str(path))


# the spec prefixes that name a loader for any file name
_PREFIXES = {
    "jsonl:": "jsonl",
    "cnndm:": "json",
    "openorca:": "pickle",
    "shopify:": "shopify",
    "shopify-v6.0:": "shopify-v6.0",
    "gpt-oss:": "gpt-oss",
}


def dataset_path(spec: str) -> Path | None:
    """The file or directory a data set spec names, without its loader prefix (``jsonl:ds.jsonl`` names
    ``ds.jsonl``); None for ``builtin`` (shipped with the package). A command's outputs are judged against it
    (never the data set, never inside its directory), so it answers for every spec :func:`load_dataset` takes,
    without reading anything."""
    if spec == BUILTIN_SPEC:
        return None
    prefixed = _prefixed(spec)
    return prefixed[1] if prefixed is not None else Path(spec)


def _prefixed(spec: str) -> tuple[str, Path] | None:
    for prefix, kind in _PREFIXES.items():
        if spec.startswith(prefix):
            return kind, Path(spec[len(prefix) :])
    return None


def _resolve(spec: str) -> tuple[str, Path]:
    """(kind, path) for a spec; kind is jsonl, json, pickle, parquet, shopify, shopify-v6.0 or gpt-oss."""
    prefixed = _prefixed(spec)
    if prefixed is not None:
        return prefixed
    path = Path(spec)
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl", path
    if suffix == ".json":
        return "json", path
    if suffix in (".pkl", ".pickle"):
        return "pickle", path
    if suffix == ".parquet":
        return "parquet", path
    raise UnusableInput(
        "unknown data set: use 'builtin', a .jsonl/.json/.pkl/.parquet file, or jsonl:/cnndm:/openorca:/shopify: PATH",
        spec,
    )


def _load_shopify(kind: str, path: Path, limit: int | None) -> Dataset:
    """qwen3-vl's Shopify product catalogue (parquet file or snapshot directory; see :mod:`loadgen_sut.datasets_vl`)."""
    from loadgen_sut import datasets_vl as vl  # pyarrow/Pillow only for this data set

    if kind == "parquet" and path.is_file() and not vl.is_shopify_parquet(path):
        raise UnusableInput("a parquet file without the Shopify product catalogue's columns: no loader for it", str(path))
    style = vl.PromptStyle.REFERENCE_V60 if kind == "shopify-v6.0" else vl.PromptStyle.ENDPOINTS
    samples = tuple(Sample(**fields) for fields in vl.load_shopify(path, style, limit))
    return Dataset(name=path.name, samples=samples, source=str(path))


# ---------------------------------------------------------------------------------------------- gpt-oss-120b

_GPT_OSS_IDS = ("tok_input", "input_tokens")  # the reference's order (utils/tokenization.py: tok_input first)


def _is_gpt_oss_frame(frame: pd.DataFrame) -> bool:
    cols = set(map(str, frame.columns))
    return bool(cols & set(_GPT_OSS_IDS)) and bool(cols & {"dataset", "text_input"})


def _is_gpt_oss_parquet(path: Path) -> bool:
    """A parquet file with gpt-oss-120b's columns (read from its schema only)."""
    if path.suffix.lower() != ".parquet" or not path.is_file():
        return False
    try:
        import pyarrow.parquet as pq

        names = set(pq.read_schema(path).names)
    except (ImportError, OSError, ValueError):  # not readable here: the other parquet loader says why
        return False
    return bool(names & set(_GPT_OSS_IDS))  # prompt token ids: the performance set may have nothing else


def _load_gpt_oss(path: Path, tokenizer: Tokenizer | None, limit: int | None) -> Dataset:
    """gpt-oss-120b's parquet (or pickle) data set as the reference reads it (``pd.read_parquet`` / ``read_pickle``)."""
    if not path.is_file():
        raise UnusableInput("data set file not found", str(path))
    if path.suffix.lower() in (".pkl", ".pickle"):
        return _load_pickle(path, tokenizer, limit)
    try:
        frame = _read_gpt_oss_parquet(path, limit)
    except ImportError as e:
        raise UnusableInput(f"reading parquet needs pyarrow: pip install pyarrow ({e})", str(path)) from e
    except (OSError, ValueError, TypeError) as e:  # pyarrow's ArrowInvalid / ArrowMemoryError are among them
        raise UnusableInput(f"cannot read the parquet file: {e}", str(path)) from e
    return _gpt_oss_dataset(path, frame, tokenizer, limit)


# The most a gpt-oss-120b parquet's columns read may decode to: room for 6,396 prompts (the performance set's rows) of
# 20,000 int64 token ids each; an 11 KB zstd file can declare 400,000,000 token ids (3.2 GB), which is refused.
MAX_PARQUET_DECODED_BYTES = 1 << 30
_GPT_OSS_COLUMNS = ("text_input", "dataset", "ground_truth")  # what a sample takes besides its token ids
_PARQUET_BATCH_ROWS = 16
_PHYSICAL_WIDTH = {"INT64": 8, "INT32": 4, "DOUBLE": 8, "FLOAT": 4, "BOOLEAN": 1}


def _read_gpt_oss_parquet(path: Path, limit: int | None) -> pd.DataFrame:
    """The columns a gpt-oss-120b sample takes, of the first ``limit`` rows (all without one), as the DataFrame
    ``pd.read_parquet`` gives. Bounded (:data:`MAX_PARQUET_DECODED_BYTES`): first from the footer, before any data is
    read (each numeric column's value count times its width; other columns their stated uncompressed size), then as
    the rows are decoded, a few at a time, in case the footer understates them; only the rows needed are decoded."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    fh, _ = open_input(path, what="data set")
    with fh, pq.ParquetFile(fh) as pf:
        names = set(pf.schema_arrow.names)
        ids = next((c for c in _GPT_OSS_IDS if c in names), None)
        if ids is None:
            raise _no_gpt_oss_ids(path, names)
        columns = [c for c in (ids, *_GPT_OSS_COLUMNS) if c in names]
        meta = pf.metadata
        declared = 0
        for g in range(meta.num_row_groups):
            group = meta.row_group(g)
            for c in range(group.num_columns):
                chunk = group.column(c)
                if chunk.path_in_schema.split(".")[0] in columns:
                    width = _PHYSICAL_WIDTH.get(chunk.physical_type)
                    declared += max(chunk.total_uncompressed_size, chunk.num_values * width if width else 0)
        if declared > MAX_PARQUET_DECODED_BYTES:
            raise UnusableInput(
                f"its columns {', '.join(columns)} decode to {declared} bytes (from the file's metadata), above the "
                f"{MAX_PARQUET_DECODED_BYTES} byte limit; not read",
                str(path),
            )
        batches, rows, decoded = [], 0, 0
        for batch in pf.iter_batches(batch_size=_PARQUET_BATCH_ROWS, columns=columns):
            decoded += batch.nbytes
            if decoded > MAX_PARQUET_DECODED_BYTES:
                raise UnusableInput(
                    f"its columns {', '.join(columns)} decode to more than the {MAX_PARQUET_DECODED_BYTES} byte limit "
                    f"(at row {rows}), though its metadata says {declared}; not read",
                    str(path),
                )
            batches.append(batch)
            rows += batch.num_rows
            if limit is not None and rows >= limit:
                break
        table = pa.Table.from_batches(batches, schema=pa.schema([pf.schema_arrow.field(c) for c in columns]))
    return table.to_pandas()


def _no_gpt_oss_ids(path: Path, columns: set[str]) -> UnusableInput:
    return UnusableInput(
        f"a gpt-oss-120b data set needs a 'tok_input' or 'input_tokens' column; columns are {sorted(columns)}", str(path)
    )


def _gpt_oss_truth(value: Any) -> str | None:
    """A ground truth as text: AIME integers (also integral floats, as a column with gaps stores them) in decimal,
    LiveCodeBench question ids and GPQA letters as they are."""
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()  # numpy scalars
    if value is None or _isna(value):
        return None
    if isinstance(value, bool):
        raise ValueError(f"ground_truth {value!r} is not an answer")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value.is_integer():
            return str(int(value))
        raise ValueError(f"ground_truth {value!r} is not an integer nor text")
    if isinstance(value, str):
        return value
    raise ValueError(f"ground_truth must be text or an integer, got {type(value).__name__}")


def _gpt_oss_dataset(path: Path, frame: pd.DataFrame, tokenizer: Tokenizer | None, limit: int | None) -> Dataset:
    cols = set(map(str, frame.columns))
    ids_col = next((c for c in _GPT_OSS_IDS if c in cols), None)
    if ids_col is None:
        raise _no_gpt_oss_ids(path, cols)
    if limit is not None:
        frame = frame.iloc[:limit]
    decode = getattr(tokenizer, "decode_special", None) or (tokenizer.decode if tokenizer is not None else None)
    samples: list[Sample] = []
    for i, rec in enumerate(frame.to_dict(orient="records")):
        row = {str(k): v for k, v in rec.items()}
        try:
            raw_ids = row.get(ids_col)
            if raw_ids is None or (isinstance(raw_ids, float) and raw_ids != raw_ids):
                raise ValueError(f"no token ids in {ids_col!r} (failed tokenization)")
            ids = _as_ids(raw_ids, ids_col)
            prompt = row.get("text_input")
            if prompt is not None and _isna(prompt):
                prompt = None
            if prompt is not None and not isinstance(prompt, str):
                raise ValueError(f"text_input must be a string, got {type(prompt).__name__}")
            if prompt is None and decode is not None:
                prompt = decode(ids)  # for engines that take text only (special tokens kept: harmony)
            subset = row.get("dataset")
            if subset is not None and _isna(subset):
                subset = None
            if subset is not None and not isinstance(subset, str):
                raise ValueError(f"dataset must be a string, got {type(subset).__name__}")
            sample = Sample(
                index=i, input_ids=ids, prompt=prompt, reference=_gpt_oss_truth(row.get("ground_truth")), subset=subset
            )
        except ValueError as e:
            raise UnusableInput(f"row {i}: {e}", str(path)) from e
        samples.append(sample)
    return Dataset(name=path.name, samples=tuple(samples), source=str(path), evaluator="gpt-oss")


def load_dataset(spec: str, *, tokenizer: Tokenizer | None = None, limit: int | None = None) -> Dataset:
    """Load a data set by spec (see the module docstring). ``limit`` keeps the first N samples.

    ``tokenizer``, when given, fills in the prompt text of id-only samples (for text-only engines).
    """
    if limit is not None and limit < 1:
        raise UnusableInput(f"dataset limit must be at least 1, got {limit}", spec)
    if spec == BUILTIN_SPEC:
        ref = resources.files("loadgen_sut").joinpath("data", BUILTIN_FILE)
        path = Path(str(ref))
        samples = _load_jsonl(path, ref.read_text(encoding="utf-8"), tokenizer, limit)
        return Dataset(name=BUILTIN_SPEC, samples=tuple(samples), source=str(path))
    kind, path = _resolve(spec)
    if kind == "gpt-oss" or (kind == "parquet" and _is_gpt_oss_parquet(path)):  # gpt-oss-120b's data sets
        return _load_gpt_oss(path, tokenizer, limit)
    if kind in ("shopify", "shopify-v6.0", "parquet"):  # qwen3-vl's Shopify catalogue (loadgen_sut.datasets_vl)
        return _load_shopify(kind, path, limit)
    if not path.is_file():
        raise UnusableInput("data set file not found", str(path))
    if kind == "pickle":
        return _load_pickle(path, tokenizer, limit)
    text = _read_text(path)
    samples = (_load_jsonl if kind == "jsonl" else _load_json)(path, text, tokenizer, limit)
    return Dataset(name=path.name, samples=tuple(samples), source=str(path))
