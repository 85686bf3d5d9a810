"""loadgen_sut.datasets: every format, limits, and bad input naming file and line."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pandas as pd
import pytest

from checker.findings import UnusableInput
from loadgen_sut.datasets import MAX_DATASET_BYTES, load_dataset
from loadgen_sut.engines.tokenizers import WordTokenizer


def test_builtin_set() -> None:
    ds = load_dataset("builtin")
    assert ds.name == "builtin" and not ds.simulated
    assert 24 <= len(ds.samples) <= 64
    assert [s.index for s in ds.samples] == list(range(len(ds.samples)))
    for s in ds.samples:
        assert s.prompt and s.prompt.startswith("Summarize") and s.input_ids is None
        assert s.reference and len(s.reference) < len(s.prompt)
    assert len(load_dataset("builtin", limit=5).samples) == 5
    assert ds.references[0] == ds.samples[0].reference


def test_jsonl_prompt_and_ids(tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    rows = [
        {"prompt": "Say hi", "reference": "hi"},
        {"input_ids": [1, 5, 9]},
        {"input": "alias keys", "output": "work too", "tok_input": [3, 4]},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n")
    ds = load_dataset(str(path))
    assert ds.name == "set.jsonl" and ds.source == str(path)
    assert ds.samples[0].prompt == "Say hi" and ds.samples[0].reference == "hi"
    assert ds.samples[1].input_ids == (1, 5, 9) and ds.samples[1].prompt is None
    assert ds.samples[2].input_ids == (3, 4) and ds.samples[2].reference == "work too"
    # An explicit prefix works for any file name.
    other = tmp_path / "set.txt"
    other.write_text(path.read_text())
    assert len(load_dataset(f"jsonl:{other}").samples) == 3


def test_tokenizer_fills_prompt_of_id_only_samples(tmp_path: Path) -> None:
    tok = WordTokenizer(["alpha beta gamma"])
    path = tmp_path / "ids.jsonl"
    path.write_text(json.dumps({"input_ids": tok.encode("beta gamma")}) + "\n")
    assert load_dataset(str(path), tokenizer=tok).samples[0].prompt == "beta gamma"


def _openorca_frame() -> pd.DataFrame:
    # The columns the llama2-70b reference reads: tok_input (ids), input (prompt), output (reference).
    return pd.DataFrame(
        {
            "system_prompt": ["You are helpful.", ""],
            "question": ["What is 2+2?", "Name a colour."],
            "input": ["<s>[INST] What is 2+2? [/INST]", "<s>[INST] Name a colour. [/INST]"],
            "tok_input": [[1, 518, 25580], [1, 518, 4408, 29962]],
            "output": ["4", "Blue."],
            "tok_output": [[29946], [10924, 29889]],
        }
    )


def test_openorca_pickle(tmp_path: Path) -> None:
    path = tmp_path / "open_orca_gpt4_tokenized_llama.sampled_24576.pkl"
    _openorca_frame().to_pickle(path)
    ds = load_dataset(str(path))
    assert [s.input_ids for s in ds.samples] == [(1, 518, 25580), (1, 518, 4408, 29962)]
    assert [s.reference for s in ds.samples] == ["4", "Blue."]
    assert ds.samples[0].prompt == "<s>[INST] What is 2+2? [/INST]"
    assert len(load_dataset(f"openorca:{path}", limit=1).samples) == 1


def test_cnndm_json_records_and_columns(tmp_path: Path) -> None:
    records = [
        {"instruction": "Summarize", "input": "Article one.", "tok_input": [128000, 9], "output": "One."},
        {"instruction": "Summarize", "input": "Article two.", "tok_input": [128000, 10], "output": "Two."},
    ]
    as_records = tmp_path / "cnn_eval.json"
    as_records.write_text(json.dumps(records, indent=2))
    as_columns = tmp_path / "cnn_columns.json"
    pd.DataFrame(records).to_json(as_columns)  # pandas' default (column-oriented) form
    for path in (as_records, as_columns):
        ds = load_dataset(str(path))
        assert [s.input_ids for s in ds.samples] == [(128000, 9), (128000, 10)]
        assert [s.reference for s in ds.samples] == ["One.", "Two."]


@pytest.mark.parametrize(
    ("text", "match", "line"),
    [
        ('{"prompt": "ok"}\n{"prompt": \n', "not a JSON object", 2),
        ('{"prompt": "ok"}\n\n["a list"]\n', "sample 1: expected an object", 3),
        ('{"reference": "no prompt"}\n', "needs a prompt", 1),
        ('{"input_ids": [1, -2]}\n', "not a non-negative integer", 1),
        ('{"input_ids": []}\n', "non-empty list", 1),
        ('{"prompt": 5}\n', "prompt must be a string", 1),
        ('{"prompt": "x", "reference": ["y"]}\n', "reference must be a string", 1),
    ],
)
def test_bad_jsonl_names_file_and_line(tmp_path: Path, text: str, match: str, line: int) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(text)
    with pytest.raises(UnusableInput, match=match) as info:
        load_dataset(str(path))
    assert info.value.path == str(path) and info.value.line == line


def test_bad_json_and_pickle(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('[\n  {"input": "a"},\n  {"input": \n')
    with pytest.raises(UnusableInput, match="not valid JSON") as info:
        load_dataset(str(bad))
    assert info.value.line is not None
    scalar = tmp_path / "scalar.json"
    scalar.write_text("42")
    with pytest.raises(UnusableInput, match="expected a JSON list"):
        load_dataset(str(scalar))
    not_pickle = tmp_path / "data.pkl"
    not_pickle.write_text("plain text")
    with pytest.raises(UnusableInput, match="cannot read the pickle"):
        load_dataset(str(not_pickle))
    no_columns = tmp_path / "frame.pkl"
    pd.DataFrame({"x": [1]}).to_pickle(no_columns)
    with pytest.raises(UnusableInput, match="no prompt column"):
        load_dataset(str(no_columns))
    bad_row = tmp_path / "row.pkl"
    pd.DataFrame({"tok_input": [[1, 2], "text"]}).to_pickle(bad_row)
    with pytest.raises(UnusableInput, match="row 1: input_ids must be"):
        load_dataset(str(bad_row))


def test_unknown_and_missing(tmp_path: Path) -> None:
    with pytest.raises(UnusableInput, match="unknown data set"):
        load_dataset("data.csv")
    with pytest.raises(UnusableInput, match="not found"):
        load_dataset(str(tmp_path / "absent.jsonl"))
    with pytest.raises(UnusableInput, match="at least 1"):
        load_dataset("builtin", limit=0)
    binary = tmp_path / "bin.jsonl"
    binary.write_bytes(b"\xff\xfe{}")
    with pytest.raises(UnusableInput, match="not UTF-8"):
        load_dataset(str(binary))


@pytest.mark.parametrize(
    ("columns", "match"),
    [
        ({"input": ["a", "b"], "output": ["x"]}, "column 'output' has 1 values, column 'input' 2"),
        ({"input": ["a", "b"], "output": {"0": "x"}}, r"mixes a column of values \('input'\) with one of row-labelled"),
        ({"input": {"99999999999999999999999": "a"}}, "row label '99999999999999999999999' of column 'input' is not a row"),
        ({"input": {"0": "a", "x": "b"}}, "row label 'x' of column 'input' is not a row number"),
        ({"input": {"0": "a", "00": "b"}}, "duplicate row label: '0' and '00' .* are both row 0"),
        ({"input": {"0": "a"}, "output": {"00": "x"}}, r"duplicate row label: '0' and '00' \(column 'output'\)"),
    ],
)
def test_bad_column_oriented_json_is_refused(tmp_path: Path, columns: dict[str, object], match: str) -> None:
    path = tmp_path / "cnn_eval.json"
    path.write_text(json.dumps(columns))
    with pytest.raises(UnusableInput, match=match) as info:
        load_dataset(str(path))
    assert info.value.path == str(path)


def test_column_oriented_json_rows_in_label_order(tmp_path: Path) -> None:
    path = tmp_path / "cols.json"
    path.write_text(json.dumps({"input": {"1": "second", "0": "first"}, "output": {"0": "one"}}))
    ds = load_dataset(str(path))
    assert [(s.prompt, s.reference) for s in ds.samples] == [("first", "one"), ("second", None)]
    as_lists = tmp_path / "lists.json"
    as_lists.write_text(json.dumps({"input": ["first", "second"], "output": ["one", float("nan")]}))
    ds = load_dataset(str(as_lists))
    assert [(s.prompt, s.reference) for s in ds.samples] == [("first", "one"), ("second", None)]


def test_jsonl_lines_end_at_newline_only(tmp_path: Path) -> None:
    # U+2028, U+2029 and U+0085 are valid raw inside a JSON string; str.splitlines would cut the record there
    path = tmp_path / "u.jsonl"
    path.write_bytes(
        '{"prompt": "a\u2028b", "reference": "x"}\r\n\n{"prompt": "c\u2029d\u0085", "reference": "y"}\n{"prompt": 3}\n'
        .encode()
    )
    with pytest.raises(UnusableInput, match="sample 2: prompt must be a string") as info:
        load_dataset(str(path))
    assert info.value.line == 4
    ds = load_dataset(str(path), limit=2)
    assert [s.prompt for s in ds.samples] == ["a\u2028b", "c\u2029d\u0085"]


@pytest.mark.parametrize("name", ["big.jsonl", "big.json"])
def test_data_set_above_the_size_cap_is_refused_unread(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    with path.open("wb") as fh:
        fh.truncate(MAX_DATASET_BYTES + 1)  # sparse: nothing to read but zeros
    t0 = time.perf_counter()
    with pytest.raises(UnusableInput, match=f"larger than the {MAX_DATASET_BYTES} byte read limit") as info:
        load_dataset(str(path))
    assert time.perf_counter() - t0 < 1.0 and info.value.path == str(path)


def test_small_data_set_over_a_lowered_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "set.jsonl"
    path.write_text('{"prompt": "Say hi", "reference": "hi"}\n' * 10)
    monkeypatch.setattr("loadgen_sut.datasets.MAX_DATASET_BYTES", 100)
    with pytest.raises(UnusableInput, match="larger than the 100 byte read limit"):
        load_dataset(str(path))


def test_not_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b'{"prompt": "ok"}\n{"prompt": "\xff"}\n')
    with pytest.raises(UnusableInput, match="not UTF-8") as info:
        load_dataset(str(path))
    assert info.value.line == 2


def _token_parquet(path: Path, rows: int, per_row: int, groups: int = 1, prompt: str = "") -> Path:
    """A gpt-oss-120b style parquet: ``rows`` rows of ``per_row`` zero token ids (zstd: a few KB whatever the ids),
    written ``groups`` times as row groups; ``prompt``: a raw column the loader never reads."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    ids = pa.ListArray.from_arrays(
        pa.array(np.arange(0, rows * per_row + 1, per_row, dtype=np.int32)), pa.array(np.zeros(rows * per_row, dtype=np.int64))
    )
    table = pa.table({"input_tokens": ids, "dataset": ["aime25"] * rows, "prompt": [prompt] * rows})
    with pq.ParquetWriter(path, table.schema, compression="zstd") as writer:
        for _ in range(groups):
            writer.write_table(table)
    return path


def test_parquet_bomb_is_refused_from_its_footer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # 700 rows of 200,000 token ids: 1.1 GB of int64 in a file of some 30 KB (the red team's held 3.2 GB in 11 KB)
    bomb = _token_parquet(tmp_path / "bomb.parquet", rows=10, per_row=200_000, groups=70)
    assert bomb.stat().st_size < 100_000

    def no_decoding(*_a: object, **_k: object) -> None:
        raise AssertionError("decoded rows of a file its footer refuses")

    monkeypatch.setattr("pyarrow.parquet.ParquetFile.iter_batches", no_decoding)
    t0 = time.perf_counter()
    with pytest.raises(UnusableInput, match=r"input_tokens, dataset decode to 11200\d{5} bytes .* above the") as info:
        load_dataset(str(bomb), limit=2)  # a limit does not make a bomb readable
    assert time.perf_counter() - t0 < 2.0 and info.value.path == str(bomb)


def test_parquet_decoding_is_capped_when_the_footer_understates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = _token_parquet(tmp_path / "acc.parquet", rows=64, per_row=10_000)  # 5 MB of ids decoded
    monkeypatch.setattr("loadgen_sut.datasets.MAX_PARQUET_DECODED_BYTES", 1 << 20)
    monkeypatch.setattr("loadgen_sut.datasets._PHYSICAL_WIDTH", {})  # as a footer that understates the value count
    with pytest.raises(UnusableInput, match=r"decode to more than the 1048576 byte limit \(at row 0\)"):
        load_dataset(str(data))
    # a limit decodes only the rows it needs (16 at a time): 16 rows of 2,500 ids are under the cap, 64 are not
    small = _token_parquet(tmp_path / "small.parquet", rows=64, per_row=2_500)
    assert len(load_dataset(str(small), limit=3).samples) == 3
    with pytest.raises(UnusableInput, match="decode to more than"):
        load_dataset(str(small))


def test_parquet_columns_the_loader_does_not_use_are_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = _token_parquet(tmp_path / "perf.parquet", rows=8, per_row=3, prompt="p" * 1_000_000)  # 8 MB of raw prompts
    monkeypatch.setattr("loadgen_sut.datasets.MAX_PARQUET_DECODED_BYTES", 1 << 20)
    ds = load_dataset(str(data))
    assert [s.input_ids for s in ds.samples] == [(0, 0, 0)] * 8 and ds.samples[0].subset == "aime25"
