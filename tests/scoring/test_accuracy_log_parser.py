"""checker.parsers.accuracy_log on genuine LoadGen logs, the truncated form and broken input."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from checker.findings import UnusableInput
from checker.parsers.accuracy_log import (
    TRUNCATE_SEPARATOR,
    TRUNCATE_VIEWABLE_CHARS,
    TokenDecodeError,
    TokenDtype,
    accuracy_log_hash,
    decode_token_ids,
    parse_accuracy_log,
    recorded_hash,
)

RunTinySut = Callable[..., Path]


def _expected_ids(index: int) -> tuple[int, ...]:
    # The tiny SUT answers "sample <index>" as UTF-8 bytes + 3, then EOS (2).
    return (*(b + 3 for b in f"sample {index}".encode()), 2)


def test_server_log_entries_decode(server_accuracy_log: Path) -> None:
    log = parse_accuracy_log(server_accuracy_log)
    assert not log.truncated
    assert len(log.entries) == 12
    assert log.has_token_counts and log.has_first_tokens
    for e in log.entries:
        ids = e.token_ids(TokenDtype.INT32)
        assert ids == _expected_ids(e.qsl_idx)
        assert e.token_count == len(ids)
        assert e.first_token_ids() == ids[:1]
    assert sorted(e.qsl_idx for e in log.unique_by_qsl_idx()) == list(range(12))


def test_offline_log_has_no_first_tokens(offline_accuracy_log: Path) -> None:
    log = parse_accuracy_log(offline_accuracy_log)
    assert log.has_token_counts
    assert not log.has_first_tokens
    assert all(e.first_token_ids() is None for e in log.entries)


def test_int64_log(tmp_path: Path, tiny_sut: RunTinySut) -> None:
    path = tiny_sut(tmp_path, "--scenario", "Offline", "--samples", "4", "--dtype", "int64")
    entry = parse_accuracy_log(path).entries[0]
    assert entry.token_ids(TokenDtype.INT64) == _expected_ids(entry.qsl_idx)
    # Read as int32, little-endian int64 ids interleave with zero high words.
    assert entry.token_ids(TokenDtype.INT32)[1::2] == (0,) * len(_expected_ids(entry.qsl_idx))


def test_hash_matches_truncation_script(server_accuracy_log: Path) -> None:
    data = server_accuracy_log.read_bytes()
    assert accuracy_log_hash(server_accuracy_log) == hashlib.sha256(data).hexdigest()
    assert parse_accuracy_log(server_accuracy_log).sha256 == hashlib.sha256(data).hexdigest()
    assert (
        recorded_hash(["rouge1: 1", f"hash={hashlib.sha256(data).hexdigest()}\n"])
        == hashlib.sha256(data).hexdigest()
    )
    assert recorded_hash(["no hash here"]) is None


def _truncate_like_official(src: Path, dst: Path) -> None:
    """What truncate_accuracy_log.truncate_file writes: 4096 chars, separator, last 4096 chars."""
    text = src.read_text()
    dst.write_text(text[:TRUNCATE_VIEWABLE_CHARS] + TRUNCATE_SEPARATOR + text[-TRUNCATE_VIEWABLE_CHARS:])


def test_truncated_form(tmp_path: Path, tiny_sut: RunTinySut) -> None:
    full = tiny_sut(tmp_path / "run", "--scenario", "Server", "--samples", "200")
    assert full.stat().st_size > 3 * TRUNCATE_VIEWABLE_CHARS
    cut = tmp_path / "mlperf_log_accuracy.json"
    _truncate_like_official(full, cut)
    log = parse_accuracy_log(cut)
    assert log.truncated
    full_log = parse_accuracy_log(full)
    by_seq = {e.seq_id: e for e in full_log.entries}
    assert 0 < len(log.entries) < len(full_log.entries)
    for e in log.entries:
        assert e.data_hex == by_seq[e.seq_id].data_hex
    # The first and the last entries are fully visible in the windows.
    assert {full_log.entries[0].seq_id, full_log.entries[-1].seq_id} <= {e.seq_id for e in log.entries}


def test_whole_json_layout(tmp_path: Path, server_accuracy_log: Path) -> None:
    rows = json.loads(server_accuracy_log.read_text())
    compact = tmp_path / "compact.json"
    compact.write_text(json.dumps(rows))
    assert len(parse_accuracy_log(compact).entries) == len(rows)
    with pytest.raises(UnusableInput, match="refusing a whole-file JSON parse"):
        parse_accuracy_log(compact, max_json_bytes=10)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("", "empty file"),
        ("[\n", "not closed"),
        (
            '[\n{ "seq_id" : 0, "qsl_idx" : 0, "data" : "0A0" },\n]\n',
            r":2: entry 0: data must be a hex string",
        ),
        (
            '[\n{ "seq_id" : 0, "qsl_idx" : 0, "data" : "0A" },\n{ "seq_id" : 1, "qsl_idx" : 1 },\n]\n',
            r":3: entry 1: missing key",
        ),
        ('[\n{ "seq_id" : -1, "qsl_idx" : 0, "data" : "0A" }\n]\n', "seq_id must be a non-negative integer"),
        (
            '[\n{ "seq_id" : 0, "qsl_idx" : 0, "data" : "0A", "token_count" : "3" }\n]\n',
            "token_count must be",
        ),
        ('[\n{ "seq_id" : 0, "qsl_idx" : 0, "data" : "0A", "extra" : 1 }\n]\n', "unknown key"),
        ('[\n{ "seq_id" : 0, "qsl_idx" : 0, "data" : "0A" \n]\n', r":2: entry 0: not a JSON object"),
        ('[\n{ "seq_id" : 0, "qsl_idx" : 0, "data" : "0A" }\n]\n[\n', "text after the closing"),
        ('{"seq_id": 0}', "expected a JSON list"),
        ("not json at all", "not valid JSON"),
    ],
)
def test_bad_input_names_file_and_entry(tmp_path: Path, text: str, match: str) -> None:
    path = tmp_path / "mlperf_log_accuracy.json"
    path.write_text(text)
    with pytest.raises(UnusableInput, match=match) as info:
        parse_accuracy_log(path)
    assert str(path) in str(info.value)


def test_missing_and_binary_files(tmp_path: Path) -> None:
    with pytest.raises(UnusableInput, match="cannot read"):
        parse_accuracy_log(tmp_path / "absent.json")
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"[\n\xff\xfe\n]")
    with pytest.raises(UnusableInput, match="not UTF-8"):
        parse_accuracy_log(binary)


def test_decode_errors() -> None:
    with pytest.raises(TokenDecodeError, match="not a multiple"):
        decode_token_ids(b"\x01\x02\x03", TokenDtype.INT32)
    assert decode_token_ids((7).to_bytes(4, "little") + (9).to_bytes(4, "little")) == (7, 9)
    with pytest.raises(TokenDecodeError, match="whole numbers"):
        decode_token_ids(bytes.fromhex("0000C03F"), TokenDtype.FLOAT32)  # 1.5
