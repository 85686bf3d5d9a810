"""The qwen3-vl data set loader: the Shopify catalogue in its official parquet layouts, as the references read it."""

from __future__ import annotations

import base64
import importlib.util
import io
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image

from checker.findings import UnusableInput
from loadgen_sut.datasets import Sample, load_dataset
from loadgen_sut.datasets_vl import PromptStyle, schema_text, system_text
from loadgen_sut.engines.simulated import simulated_answers, simulated_vocabulary

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "qwen3_vl" / "make_fixture.py"


@pytest.fixture(scope="module")
def fx() -> ModuleType:
    spec = importlib.util.spec_from_file_location("qwen3_vl_fixture", FIXTURE)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def hf_dir(fx: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fx.write_hf(tmp_path_factory.mktemp("hf"))  # type: ignore[no-any-return]


def _image_part(s: Sample) -> str:
    assert s.messages is not None
    part = s.messages[1].content[1]
    assert not isinstance(part, str) and part.type == "image_url" and part.image_url is not None
    return part.image_url


def _user_text(s: Sample) -> str:
    assert s.messages is not None
    part = s.messages[1].content[0]
    assert not isinstance(part, str) and part.text is not None
    return part.text


def test_hf_layout(fx: ModuleType, hf_dir: Path) -> None:
    ds = load_dataset(f"shopify:{hf_dir}")
    assert [s.index for s in ds.samples] == list(range(6))
    # train (4 rows) then test (2 rows): the reference's split="train+test"
    assert [s.reference for s in ds.samples] == [p["ground_truth_category"] for p in fx.PRODUCTS]
    s = ds.samples[1]
    assert s.prompt is None and s.input_ids is None  # a chat only: text engines cannot take it
    assert s.messages is not None and [m.role for m in s.messages] == ["system", "user"]
    assert s.messages[0].content == system_text(PromptStyle.ENDPOINTS)
    assert json.loads(s.answer or "") == {"category": "Sporting Goods > Cycling > Bicycles", "brand": "Velo", "is_secondhand": True}
    text = _user_text(s)
    assert text.startswith("The title of the product is the following:\n```text\nUsed Road Bike\n```\n")
    assert "```text\n<div>Aluminium frame, <b>21 gears</b>. Lightly used.</div>\n```" in text
    # the candidate categories as endpoints serialises them (json.dumps of the list)
    assert text.endswith('```json\n["Sporting Goods > Cycling > Bicycles", "Vehicles & Parts > Vehicles"]\n```\n')


def test_image_is_resaved_like_the_reference(fx: ModuleType, hf_dir: Path) -> None:
    ds = load_dataset(f"shopify:{hf_dir}")
    for i, s in enumerate(ds.samples):
        url = _image_part(s)
        assert url.startswith("data:image/PNG;base64,")  # Pillow's format name, as both references send it
        sent = base64.b64decode(url.split(",", 1)[1])
        original = Image.open(io.BytesIO(fx.image_bytes(i)))
        expected = io.BytesIO()
        original.save(expected, format=original.format)  # task.py line 593 / endpoints _process_sample_to_row
        assert sent == expected.getvalue()
        assert Image.open(io.BytesIO(sent)).tobytes() == original.tobytes()  # PNG: the same pixels


def test_endpoints_layout_sent_as_stored(fx: ModuleType, tmp_path: Path, hf_dir: Path) -> None:
    path = fx.write_endpoints(tmp_path / "shopify_product_catalogue_train+test.parquet")
    ds = load_dataset(str(path))  # a .parquet with the catalogue's columns
    hf = load_dataset(f"shopify:{hf_dir}")
    assert [s.reference for s in ds.samples] == [s.reference for s in hf.samples]
    assert [s.answer for s in ds.samples] == [s.answer for s in hf.samples]
    assert [_user_text(s) for s in ds.samples] == [_user_text(s) for s in hf.samples]
    for i, s in enumerate(ds.samples):  # the stored base64 exactly
        assert _image_part(s) == "data:image/PNG;base64," + base64.b64encode(fx.image_bytes(i)).decode()


def test_v60_prompt(hf_dir: Path) -> None:
    s = load_dataset(f"shopify-v6.0:{hf_dir}").samples[3]
    system = s.messages[0].content if s.messages else ""
    assert isinstance(system, str)
    assert "correct, and specifc\ncategory" in system and "match the followng JSON schema" in system  # task.py 606, 617
    assert '"description": "The brand of the product, e.g., \\"giorgio armani\\"."' in system  # attribute docstrings
    # the list formatted by the f-string: Python's repr, non-ASCII kept
    assert _user_text(s).endswith("```json\n['Office Supplies > Paper Products > Notebooks', 'Media > Books']\n```\n")
    assert "Papier recyclé, 96 pages — « idéal pour l'école »." in _user_text(s)
    v61 = system_text(PromptStyle.ENDPOINTS)
    assert "correct, and specific\ncategory" in v61 and "match the following JSON schema" in v61
    assert json.loads(schema_text(PromptStyle.ENDPOINTS))["properties"]["brand"] == {"title": "Brand", "type": "string"}


def test_limit_and_simulated_answers(hf_dir: Path) -> None:
    ds = load_dataset(f"shopify:{hf_dir}", limit=2)
    assert len(ds.samples) == 2
    answers = simulated_answers(ds)
    assert answers == {0: ds.samples[0].answer, 1: ds.samples[1].answer}  # the JSON object, not the category
    vocab = simulated_vocabulary(ds)
    assert ds.samples[0].answer in vocab and ds.samples[0].reference in vocab


def _write(path: Path, rows: list[dict[str, Any]], schema: pa.Schema | None = None) -> Path:
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
    return path


def test_images_are_never_fetched(fx: ModuleType, tmp_path: Path) -> None:
    rows = fx.hf_rows()[:2]
    rows[1] = {**rows[1], "product_image": {"bytes": None, "path": "https://example.com/bike.jpg"}}
    bad = _write(tmp_path / "train-0.parquet", rows)
    with pytest.raises(UnusableInput, match=r"row 1 .*a link \(https://example.com/bike.jpg\): images are never fetched"):
        load_dataset(str(bad))
    rows[1] = {**rows[1], "product_image": {"bytes": None, "path": "images/bike.jpg"}}
    with pytest.raises(UnusableInput, match="not embedded"):
        load_dataset(str(_write(tmp_path / "train-1.parquet", rows)))
    ep = [
        {c: json.dumps(v) if c in ("potential_product_categories", "ground_truth_is_secondhand") else v for c, v in p.items()}
        | {"product_image_base64": "http://example.com/a.png", "product_image_format": "PNG"}
        for p in fx.PRODUCTS[:1]
    ]
    with pytest.raises(UnusableInput, match=r"is a link .* never fetched"):
        load_dataset(str(_write(tmp_path / "ep.parquet", ep)))


def test_bad_input(fx: ModuleType, tmp_path: Path) -> None:
    other = _write(tmp_path / "other.parquet", [{"text": "hello"}])
    with pytest.raises(UnusableInput, match="without the Shopify product catalogue's columns"):
        load_dataset(str(other))
    with pytest.raises(UnusableInput, match="missing columns"):
        load_dataset(f"shopify:{other}")
    rows = fx.hf_rows()[:1]
    rows[0] = {**rows[0], "product_image": {"bytes": b"not an image", "path": None}}
    with pytest.raises(UnusableInput, match=r"row 0 .*cannot read product_image"):
        load_dataset(str(_write(tmp_path / "broken.parquet", rows)))
    xpm = b'/* XPM */\nstatic char *x[] = {\n"2 2 1 1",\n"a c #ff0000",\n"aa",\n"aa"\n};\n'  # read, not written
    rows[0] = {**rows[0], "product_image": {"bytes": xpm, "path": None}}
    with pytest.raises(UnusableInput, match=r"row 0 .*the image is XPM, which Pillow cannot write back"):
        load_dataset(str(_write(tmp_path / "xpm.parquet", rows)))  # a KeyError from Image.save was exit 3
    rows = [{**fx.hf_rows()[0], "ground_truth_category": "  "}]
    with pytest.raises(UnusableInput, match="ground_truth_category is empty"):
        load_dataset(str(_write(tmp_path / "empty.parquet", rows)))
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    _write(mixed / "train-0.parquet", fx.hf_rows()[:1])
    _write(mixed / "validation-0.parquet", fx.hf_rows()[:1])
    with pytest.raises(UnusableInput, match="neither train\\* nor test\\*"):
        load_dataset(f"shopify:{mixed}")
    with pytest.raises(UnusableInput, match="data set not found"):
        load_dataset(f"shopify:{tmp_path / 'nowhere'}")


def test_conversion_to_the_endpoints_layout(hf_dir: Path, tmp_path: Path) -> None:
    from loadgen_sut.cli import main

    out = tmp_path / "shopify_product_catalogue_train+test.parquet"
    assert main(["dataset", "qwen3-vl", str(hf_dir), str(out)]) == 0
    assert main(["dataset", "qwen3-vl", str(hf_dir), str(out)]) == 2  # never replaced
    assert not list(tmp_path.glob("*.tmp"))
    for prefix in ("shopify:", "shopify-v6.0:"):
        converted = load_dataset(f"{prefix}{out}").samples
        direct = load_dataset(f"{prefix}{hf_dir}").samples
        assert converted == direct  # the same messages (image bytes included), references and answers
    table = pq.read_table(out)
    assert table.column("ground_truth_is_secondhand").to_pylist()[:2] == ["false", "true"]  # JSON text, as endpoints
