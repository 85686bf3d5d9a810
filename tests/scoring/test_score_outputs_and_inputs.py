"""``score --accuracy-txt`` and ``run --html`` never replace the data set, whatever its spec's prefix
(``jsonl:ds.jsonl`` names ``ds.jsonl``), and never write inside a data set, tokenizer or problems directory;
the refusal says what the directory is. ``score --scenario`` is judged before any scoring."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from loadgen_sut.cli import main
from loadgen_sut.datasets import dataset_path

BUILTIN = Path(__file__).resolve().parents[2] / "loadgen_sut" / "data" / "builtin_summaries.jsonl"


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize(
    ("spec", "path"),
    [
        ("builtin", None),
        ("ds.jsonl", Path("ds.jsonl")),
        ("jsonl:ds.txt", Path("ds.txt")),
        ("cnndm:cnn_eval.json", Path("cnn_eval.json")),
        ("openorca:orca.pkl", Path("orca.pkl")),
        ("shopify:snapshot", Path("snapshot")),
        ("shopify-v6.0:snapshot", Path("snapshot")),
        ("gpt-oss:acc.parquet", Path("acc.parquet")),
    ],
)
def test_dataset_path_drops_the_loader_prefix(spec: str, path: Path | None) -> None:
    assert dataset_path(spec) == path


def _score(tmp_path: Path, dataset: str, *extra: str) -> list[str]:
    log = tmp_path / "acc.json"
    log.write_text('[\n{ "seq_id" : 0, "qsl_idx" : 1, "data" : "01000000", "token_count" : 1 }\n]\n')
    tok = tmp_path / "tok"
    tok.mkdir(exist_ok=True)
    return [
        "score", "--accuracy-log", str(log), "--dataset", dataset, "--benchmark", "llama3.1-8b",
        "--tokenizer", str(tok), *extra,
    ]  # fmt: skip


@pytest.mark.parametrize("prefix", ["", "jsonl:"])
def test_score_never_replaces_a_prefixed_data_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], prefix: str
) -> None:
    ds = tmp_path / "ds.jsonl"
    ds.write_bytes(BUILTIN.read_bytes())
    before = _digest(ds)
    assert main(_score(tmp_path, f"{prefix}{ds}", "--accuracy-txt", str(ds), "--force")) == 2
    err = capsys.readouterr().err
    assert "is also an input of this command" in err and "Traceback" not in err
    assert _digest(ds) == before


@pytest.mark.parametrize(
    ("prefix", "what"),
    [("shopify:", "the data set directory"), ("", "the tokenizer directory")],
)
def test_score_refusal_names_the_directory_it_is_inside(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], prefix: str, what: str
) -> None:
    snapshot = tmp_path / "snapshot"
    snapshot.mkdir()
    inside = snapshot if prefix else tmp_path / "tok"
    argv = _score(tmp_path, f"{prefix}{snapshot}" if prefix else "builtin", "--accuracy-txt", str(inside / "a.txt"))
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"refusing to write inside {what}" in err and "checked tree" not in err
    assert not (inside / "a.txt").exists()


def test_score_judges_the_scenario_first(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the data set is not there and the tokenizer directory is empty: the scenario is refused before either is read
    assert main(_score(tmp_path, str(tmp_path / "absent.jsonl"), "--scenario", "Bogus")) == 2
    err = capsys.readouterr().err
    assert "unknown scenario 'Bogus'" in err and "absent.jsonl" not in err


def test_run_never_replaces_a_prefixed_data_set(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ds = tmp_path / "ds.jsonl"
    ds.write_bytes(BUILTIN.read_bytes())
    before = _digest(ds)
    conf = tmp_path / "off.conf"
    conf.write_text("*.Offline.min_duration = 1000\n")
    argv = [
        "run", "--engine", "simulated", "--benchmark", "llama3.1-8b", "--scenario", "Offline", "--mode", "accuracy",
        "--user-conf", str(conf), "--out", str(tmp_path / "out"), "--dataset", f"jsonl:{ds}", "--dataset-limit", "4",
        "--html", str(ds), "--force", "--progress-interval", "0",
    ]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--html" in err and "is also an input of this command" in err
    assert _digest(ds) == before
    assert not (tmp_path / "out").exists()  # refused before the run


def test_run_html_never_lands_among_earlier_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record = tmp_path / "out" / "runs" / "20260101T000000Z-abcdef" / "run-record.json"
    record.parent.mkdir(parents=True)
    record.write_text("{}\n")  # an earlier run's record: `report` reads it
    argv = [
        "run", "--engine", "simulated", "--benchmark", "llama3.1-8b", "--scenario", "Offline",
        "--out", str(tmp_path / "out"), "--html", str(record), "--force",
    ]  # fmt: skip
    assert main(argv) == 2
    assert "refusing to write inside the runs under --out" in capsys.readouterr().err
    assert record.read_text() == "{}\n"
