"""The qwen3-vl-235b-a22b data set: the Shopify product catalogue, read as the references read it.

What a sample is (``multimodal/qwen3-vl/src/mlperf_inf_mm_q3vl/task.py`` ``ShopifyGlobalCatalogue.
formulate_loaded_sample`` at mlcommons/inference b66003e1, lines 576-669, for v6.0; mlcommons/endpoints
``dataset_manager/predefined/shopify_product_catalogue`` ``_process_sample_to_row`` and ``presets.py``
``ShopifyMultimodalFormatter`` for v6.1):

- the columns ``product_title``, ``product_description``, ``product_image``, ``potential_product_categories``
  and the ground truth ``ground_truth_category``, ``ground_truth_brand``, ``ground_truth_is_secondhand``;
- a chat of two messages: a system text asking for a JSON object (``category``, ``brand``, ``is_secondhand``,
  with the JSON schema of the answer embedded), then the user's content parts: the title, description and
  candidate categories as text, and the image inline as ``data:image/<PIL format>;base64,...``;
- the image is the data set's image re-saved by Pillow in its own format (``image.save(buf,
  format=image.format)``), which is what both references send; it is never fetched from anywhere.

Files this reads (``load_shopify``):

- the Hugging Face data set as downloaded (``Shopify/product-catalogue`` at d5c517c5, 48,289 samples, or
  ``nvidia/Shopify-product-catalogue-8k`` at 2bc8c6c4, 8,000, for Interactive): a ``.parquet`` file, or the
  snapshot directory, whose ``train*`` files come first and then its ``test*`` files (the reference's
  ``split="train+test"``). ``product_image`` is the ``datasets`` Image struct ``{bytes, path}``: only embedded
  bytes are used; an image given as a path or link is refused (an ``http(s)://`` link is never fetched).
  Re-saving needs Pillow (a dependency);
- the parquet the endpoints client generates from it (``product_image_base64``, ``product_image_format``,
  categories and second-hand flag as JSON text): its images are already the re-saved bytes, sent as they are.

Prompt: ``shopify:PATH`` (or a path with these columns) builds the v6.1 prompt (endpoints' formatter: its
spelling, the candidate categories as ``json.dumps``, endpoints' schema); ``shopify-v6.0:PATH`` the v6.0
reference's (``task.py``: its typos "specifc"/"followng", the categories as Python's ``repr`` of the list,
the schema with field descriptions). Parquet is read with pyarrow (a dependency).

Sample ``reference`` is the ground-truth category (what the accuracy script scores); ``answer`` is the JSON
object a perfect model returns, which the simulated engine answers.
"""

from __future__ import annotations

import base64
import io
import json
import re
import warnings
from collections.abc import Iterator, Mapping, Sequence
from enum import Enum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from checker.findings import UnusableInput
from checker.report.atomic import atomic_file
from checker.safe_json import JsonProblem, parse_json
from loadgen_sut.engines.base import ChatMessage, ContentPart

SHOPIFY_PREFIX = "shopify:"
SHOPIFY_V60_PREFIX = "shopify-v6.0:"
CATEGORY_SEPARATOR = " > "  # evaluation.py _CATEGORY_SEPARATOR

# the columns of each layout
HF_COLUMNS = (
    "product_title",
    "product_description",
    "product_image",
    "potential_product_categories",
    "ground_truth_category",
    "ground_truth_brand",
    "ground_truth_is_secondhand",
)
ENDPOINTS_COLUMNS = (
    "product_title",
    "product_description",
    "product_image_base64",
    "product_image_format",
    "potential_product_categories",
    "ground_truth_category",
    "ground_truth_brand",
    "ground_truth_is_secondhand",
)
_BATCH_ROWS = 256
_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")
_FORMAT = re.compile(r"[A-Za-z0-9.+-]{1,32}")
_LINK = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


class PromptStyle(str, Enum):
    """Which reference's prompt a sample gets."""

    ENDPOINTS = "endpoints-v6.1"  # mlcommons/endpoints ShopifyMultimodalFormatter (v6.1 round)
    REFERENCE_V60 = "inference-v6.0"  # mlcommons/inference multimodal/qwen3-vl task.py (v6.0 round)


class ProductMetadata(BaseModel):
    """Json format for the expected responses from the VLM."""

    # The answer's schema as the v6.0 reference declares it (schema.py lines 137-145, 822-835: attribute
    # docstrings become the descriptions, extra fields are forbidden). Its validation is what both references'
    # scorers apply to a response (``ProductMetadata.model_validate_json``).
    model_config = ConfigDict(use_attribute_docstrings=True, extra="forbid")

    category: str
    """The complete category of the product, e.g.,
    "Clothing & Accessories > Clothing > Shirts > Polo Shirts".
    Each categorical level is separated by " > ".
    """

    brand: str
    """The brand of the product, e.g., "giorgio armani"."""

    is_secondhand: bool
    """True if the product is second-hand, False otherwise."""


class _EndpointsProductMetadata(BaseModel):
    """JSON format for expected VLM responses (matches MLCommons Q3VL schema).

    Reference: https://github.com/mlcommons/inference/blob/master/multimodal/qwen3-vl/src/mlperf_inf_mm_q3vl/schema.py
    """

    # endpoints' metadata.py: the same fields, extra forbidden, no attribute descriptions in its schema
    model_config = ConfigDict(extra="forbid", title="ProductMetadata")

    category: str
    brand: str
    is_secondhand: bool


def schema_text(style: PromptStyle) -> str:
    """``json.dumps(ProductMetadata.model_json_schema(), indent=2)`` of the style's reference."""
    model = ProductMetadata if style is PromptStyle.REFERENCE_V60 else _EndpointsProductMetadata
    return json.dumps(model.model_json_schema(), indent=2)


def system_text(style: PromptStyle) -> str:
    """The system message (task.py lines 600-621; endpoints presets.py, with "specific"/"following")."""
    specific, following = ("specifc", "followng") if style is PromptStyle.REFERENCE_V60 else ("specific", "following")
    return (
        "Please analyze the product from the user prompt\n"
        "and provide the following fields in a valid JSON object:\n"
        "- category\n"
        "- brand\n"
        "- is_secondhand\n"
        "\n"
        f"You must choose only one, which is the most appropriate, correct, and {specific}\n"
        "category out of the list of possible product categories.\n"
        "\n"
        "The description of the product sometimes contains various types of source code\n"
        "(e.g., JavaScript, CSS, HTML, etc.), where useful product information is embedded\n"
        "somewhere inside the source code. For this task, you should extract the useful\n"
        "product information from the source code and leverage it, and discard the\n"
        "programmatic parts of the source code.\n"
        "\n"
        "Your response should only contain a valid JSON object and nothing more, e.g.,\n"
        "you should not fence the JSON object inside a ```json code block.\n"
        f"The JSON object should match the {following} JSON schema:\n"
        "```json\n"
        f"{schema_text(style)}\n"
        "```\n"
    )


def user_text(title: str, description: str, categories: str) -> str:
    """The text part of the user message (task.py lines 628-642; endpoints presets.py, the same text)."""
    return (
        "The title of the product is the following:\n"
        "```text\n"
        f"{title}\n"
        "```\n"
        "\n"
        "The description of the product is the following:\n"
        "```text\n"
        f"{description}\n"
        "```\n"
        "\n"
        "The following are the possible product categories:\n"
        "```json\n"
        f"{categories}\n"
        "```\n"
    )


def image_data_url(image_format: str, image_base64: str) -> str:
    """``data:image/{format};base64,{data}``: the format as Pillow names it (``PNG``, ``JPEG``), as both send it."""
    return f"data:image/{image_format};base64,{image_base64}"


def perfect_answer(category: str, brand: str, is_secondhand: bool) -> str:
    """The JSON object a perfect model returns (the simulated engine's answer)."""
    return json.dumps({"category": category, "brand": brand, "is_secondhand": is_secondhand})


class _Row:
    """One record, read and checked (raises ValueError with a message; the caller adds file and row)."""

    __slots__ = (
        "brand",
        "categories",
        "categories_json",
        "category",
        "description",
        "image_b64",
        "image_format",
        "secondhand",
        "title",
    )

    def __init__(self, rec: Mapping[str, Any], endpoints: bool, style: PromptStyle) -> None:
        self.title = _text(rec, "product_title")
        self.description = _text(rec, "product_description")
        self.category = _text(rec, "ground_truth_category", nonempty=True)
        self.brand = _text(rec, "ground_truth_brand")
        if endpoints:
            cats_json = _text(rec, "potential_product_categories")
            cats = _json_value(cats_json, "potential_product_categories")
            self.secondhand = _json_value(_text(rec, "ground_truth_is_secondhand"), "ground_truth_is_secondhand")
            self.image_b64, self.image_format = _endpoints_image(rec)
        else:
            cats = rec.get("potential_product_categories")
            self.secondhand = rec.get("ground_truth_is_secondhand")
            self.image_b64, self.image_format = _reencoded_image(rec.get("product_image"))
            cats_json = json.dumps(cats)  # endpoints' _process_sample_to_row
        if not isinstance(cats, list) or not all(isinstance(c, str) for c in cats):
            raise ValueError("potential_product_categories must be a list of strings")
        if not isinstance(self.secondhand, bool):
            raise ValueError(f"ground_truth_is_secondhand must be true or false, got {self.secondhand!r}")
        self.categories_json = cats_json
        # the v6.0 reference formats the list itself into the prompt (an f-string: Python's repr)
        self.categories = repr(cats) if style is PromptStyle.REFERENCE_V60 else cats_json


def _text(rec: Mapping[str, Any], key: str, *, nonempty: bool = False) -> str:
    value = rec.get(key)
    if not isinstance(value, str):
        raise ValueError(f"{key} must be a string, got {type(value).__name__}")
    if nonempty and not value.strip():
        raise ValueError(f"{key} is empty")
    return value


def _json_value(text: str, key: str) -> Any:
    try:
        return parse_json(text)
    except JsonProblem as e:
        raise ValueError(f"{key} is not JSON text ({e.msg})") from e


def _endpoints_image(rec: Mapping[str, Any]) -> tuple[str, str]:
    data = _text(rec, "product_image_base64", nonempty=True)
    fmt = _text(rec, "product_image_format", nonempty=True)
    if _LINK.match(data.strip()):
        raise ValueError(f"product_image_base64 is a link ({data[:80]!r}), not image data: never fetched")
    if not _BASE64.fullmatch(data) or len(data) % 4:
        raise ValueError("product_image_base64 is not base64 image data")
    if not _FORMAT.fullmatch(fmt):
        raise ValueError(f"product_image_format {fmt[:40]!r} is not an image format name")
    return data, fmt


# Largest image decoded (width x height). A catalogue photograph is well below a megapixel or two; a 40-megapixel
# camera image still passes. Checked from the header before any pixel is decoded: a 35 KB parquet cell can hold a
# 13000x13000 PNG (1.4 GB once decoded). Pillow's own limit (MAX_IMAGE_PIXELS, 89 megapixels) only warns.
MAX_IMAGE_PIXELS = 40_000_000


def _reencoded_image(image: Any) -> tuple[str, str]:
    """The image as the references send it: decoded and saved again by Pillow in its own format, base64."""
    if not isinstance(image, Mapping):
        raise ValueError(f"product_image must be an image struct {{bytes, path}}, got {type(image).__name__}")
    raw = image.get("bytes")
    path = image.get("path")
    if not raw:
        if isinstance(path, str) and re.match(r"(?i)^https?://", path.strip()):
            raise ValueError(f"product_image is a link ({path[:120]}): images are never fetched; use a data set with the images embedded")
        if isinstance(path, str) and path:
            raise ValueError(f"product_image is not embedded (only a path, {path[:120]!r}); use a data set with the images embedded")
        raise ValueError("product_image has no image bytes")
    if not isinstance(raw, (bytes, bytearray, memoryview)):
        raise ValueError(f"product_image bytes must be binary, got {type(raw).__name__}")
    try:
        from PIL import Image
    except ImportError as e:
        raise UnusableInput(
            "the references send each image re-saved by Pillow; reading the Hugging Face layout needs it: "
            "pip install pillow"
        ) from e
    try:
        with warnings.catch_warnings():  # Pillow's bomb warning: the size is judged below, before any decode
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            im = Image.open(io.BytesIO(bytes(raw)))  # reads the header only; the pixels are decoded by save
        with im:
            fmt = im.format
            if not fmt:
                raise ValueError("Pillow cannot tell the image's format")
            width, height = im.size
            if width * height > MAX_IMAGE_PIXELS:
                raise ValueError(
                    f"the image is {width}x{height} pixels, more than {MAX_IMAGE_PIXELS:,}; not decoded"
                )
            buf = io.BytesIO()
            try:
                im.save(buf, format=fmt)
            except KeyError:  # a format Pillow reads but cannot write (XPM): the references' re-save fails too
                raise ValueError(f"the image is {fmt}, which Pillow cannot write back") from None
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError) as e:
        raise ValueError(f"cannot read product_image: {e}") from e
    return base64.b64encode(buf.getvalue()).decode("ascii"), fmt


def _pyarrow_parquet() -> Any:
    try:
        import pyarrow.parquet as pq
    except ImportError as e:
        raise UnusableInput("reading the parquet data set needs pyarrow: pip install pyarrow") from e
    return pq


def parquet_files(path: Path) -> list[Path]:
    """The parquet files of a data set, in the reference's order: ``train`` then ``test`` (a directory's
    ``train*`` files, then its ``test*`` files, each sorted by name)."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise UnusableInput("data set not found", str(path))
    files = sorted(p for p in path.rglob("*.parquet") if p.is_file())
    train = [p for p in files if p.name.startswith("train")]
    test = [p for p in files if p.name.startswith("test")]
    other = [p for p in files if p not in train and p not in test]
    if other:
        raise UnusableInput(
            f"parquet files that are neither train* nor test*: {', '.join(str(p.relative_to(path)) for p in other[:5])}; "
            "the order of the samples would be a guess (give the file itself)",
            str(path),
        )
    if not files:
        raise UnusableInput("no .parquet files in this directory", str(path))
    return train + test


def is_shopify_parquet(path: Path) -> bool:
    """Whether a ``.parquet`` file holds the Shopify catalogue's columns (either layout)."""
    pq = _pyarrow_parquet()
    try:
        names = set(pq.read_schema(path).names)
    except (OSError, ValueError) as e:
        raise UnusableInput(f"cannot read the parquet file: {e}", str(path)) from e
    return {"ground_truth_category", "potential_product_categories"} <= names


def _records(files: Sequence[Path]) -> Iterator[tuple[Path, int, bool, dict[str, Any]]]:
    """(file, row in file, endpoints layout?, record) for every row of the files, in order."""
    pq = _pyarrow_parquet()
    for f in files:
        try:
            pf = pq.ParquetFile(f)
        except (OSError, ValueError) as e:
            raise UnusableInput(f"cannot read the parquet file: {e}", str(f)) from e
        names = set(pf.schema_arrow.names)
        columns: tuple[str, ...]
        if set(ENDPOINTS_COLUMNS) <= names:
            endpoints, columns = True, ENDPOINTS_COLUMNS
        elif set(HF_COLUMNS) <= names:
            endpoints, columns = False, HF_COLUMNS
        else:
            missing = sorted(set(HF_COLUMNS) - names)
            raise UnusableInput(
                f"not the Shopify product catalogue: missing columns {', '.join(missing)} (columns: {', '.join(sorted(names))})",
                str(f),
            )
        row = 0
        try:
            for batch in pf.iter_batches(batch_size=_BATCH_ROWS, columns=list(columns)):
                for rec in batch.to_pylist():
                    yield f, row, endpoints, rec
                    row += 1
        except (OSError, ValueError) as e:
            raise UnusableInput(f"cannot read row {row}: {e}", str(f)) from e


def load_shopify(path: Path, style: PromptStyle, limit: int | None = None) -> list[dict[str, Any]]:
    """The samples' fields (``index``, ``messages``, ``reference``, ``answer``) in data-set order, for
    :class:`loadgen_sut.datasets.Sample`. Bad input raises UnusableInput naming the file and row."""
    system = ChatMessage(role="system", content=system_text(style))
    out: list[dict[str, Any]] = []
    for f, row, endpoints, rec in _records(parquet_files(path)):
        if limit is not None and len(out) >= limit:
            break
        try:
            r = _Row(rec, endpoints, style)
        except ValueError as e:
            raise UnusableInput(f"row {row} (sample {len(out)}): {e}", str(f)) from e
        user = ChatMessage(
            role="user",
            content=(
                ContentPart(type="text", text=user_text(r.title, r.description, r.categories)),
                ContentPart(type="image_url", image_url=image_data_url(r.image_format, r.image_b64)),
            ),
        )
        out.append(
            {
                "index": len(out),
                "messages": (system, user),
                "reference": r.category,
                "answer": perfect_answer(r.category, r.brand, r.secondhand),
            }
        )
    return out


def write_endpoints_layout(src: Path, out: Path) -> int:
    """Write the data set at ``src`` (either layout) as the endpoints client's parquet (images re-saved once, as
    its ``_process_sample_to_row`` does), so later loads skip Pillow. Never replaces a file; returns the rows."""
    pq = _pyarrow_parquet()
    import pyarrow as pa

    if out.exists() or out.is_symlink():
        raise UnusableInput("exists already: not replaced", str(out))
    if not out.parent.is_dir():
        raise UnusableInput(f"directory {out.parent} does not exist", str(out))
    schema = pa.schema([(c, pa.string()) for c in ENDPOINTS_COLUMNS])
    n = 0
    # written through a random temporary beside OUT (never a fixed name: a planted OUT.tmp or symlink is neither
    # written through nor removed), linked to OUT when complete (a file that appeared meanwhile is not replaced)
    try:
        with atomic_file(out, replace=False) as fh, pq.ParquetWriter(fh, schema) as writer:
            rows: list[dict[str, str]] = []
            for f, row, endpoints, rec in _records(parquet_files(src)):
                try:
                    r = _Row(rec, endpoints, PromptStyle.ENDPOINTS)
                except ValueError as e:
                    raise UnusableInput(f"row {row} (sample {n}): {e}", str(f)) from e
                rows.append(
                    {
                        "product_title": r.title,
                        "product_description": r.description,
                        "product_image_base64": r.image_b64,
                        "product_image_format": r.image_format,
                        "potential_product_categories": r.categories_json,
                        "ground_truth_category": r.category,
                        "ground_truth_brand": r.brand,
                        "ground_truth_is_secondhand": json.dumps(r.secondhand),
                    }
                )
                n += 1
                if len(rows) >= _BATCH_ROWS:
                    writer.write_table(pa.Table.from_pylist(rows, schema=schema))
                    rows = []
            if rows:
                writer.write_table(pa.Table.from_pylist(rows, schema=schema))
    except FileExistsError:
        raise UnusableInput("appeared while the data set was written: not replaced", str(out)) from None
    return n
