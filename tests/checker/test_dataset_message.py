"""ACC-DATASET says what the round's own official checker does with a short accuracy run, not another round's.

v4.1's ``check_accuracy_dir`` compares no sample count (submission_checker.py at tag v4.1 has no
``qsl_reported_total_count``); v5.1.1 logs "accurcy run does not cover all dataset" and goes on (L1477-1484); HEAD's
``dataset_check`` fails the result (checks/accuracy_check.py L281-307).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from checker.engine import check_tree
from rules import load_round
from rules.models import Round
from tests.checker.fixture_cases import materialize

REPO = Path(__file__).resolve().parents[2]
OFFLINE = "closed/RedHat/results/XE8640_4xH100_vLLM/llama3.1-8b/Offline"


def _short_accuracy_tree(tmp_path: Path) -> Path:
    """The published llama3.1-8b Offline result with its accuracy run logged as 1,000 samples of 13,368."""
    acc = f"{OFFLINE}/accuracy/mlperf_log_detail.txt"
    spec = {"base": "llm", "mutations": [{"op": "mllog_set", "path": acc, "key": "qsl_reported_total_count", "value": 1000}]}
    return materialize(spec, tmp_path / "tree")


def _dataset_messages(root: Path, rnd: Round) -> list[str]:
    report = check_tree(root, rnd, workers=1)
    return [f.message for r in report.results for f in r.findings if f.rule == "ACC-DATASET"]


@pytest.mark.parametrize("name", ["v4.1", "v5.0", "v5.1", "v6.0", "v6.1"])
def test_each_round_names_its_checker(name: str) -> None:
    assert load_round(name).official_checker == {"v4.1": "v4.1", "v6.0": "HEAD", "v6.1": "HEAD"}.get(name, "v5.1.1")


def test_a_v5_1_tree_names_the_v5_1_1_checker_and_a_v4_1_checker_checks_nothing(tmp_path: Path) -> None:
    root = _short_accuracy_tree(tmp_path)
    v51 = load_round("v5.1")
    (msg,) = _dataset_messages(root, v51)
    assert "covered 1000 samples" in msg and "The v5.1.1 checker only logs this" in msg, msg
    # the same data judged as a round whose checker is v4.1's: the message follows the checker, nothing else
    as_v41 = v51.model_copy(update={"checker": load_round("v4.1").checker})
    (msg,) = _dataset_messages(root, as_v41)
    assert "The v4.1 checker does not check this" in msg and "v5.1.1" not in msg, msg


def test_a_v6_1_tree_names_the_head_checker() -> None:
    """submissions/ is a v6.1 tree with a 32-sample data set: HEAD fails it, and the message says so."""
    msgs = _dataset_messages(REPO / "submissions", load_round("v6.1"))
    assert msgs and all("The HEAD checker fails the result as well" in m and "v5.1.1" not in m for m in msgs), msgs


def test_a_round_whose_checker_is_not_named_says_nothing_of_it(tmp_path: Path) -> None:
    root = _short_accuracy_tree(tmp_path)
    for text in (None, "", "inference master", "tag 5.1.1", "at tag v5.1.1x"):
        rnd = load_round("v5.1").model_copy(update={"checker": text})
        assert rnd.official_checker is None, text
        (msg,) = _dataset_messages(root, rnd)
        assert "checker" not in msg and msg.endswith("so this tool rejects it"), (text, msg)


def test_early_stopping_names_the_round_s_checker_too(tmp_path: Path) -> None:
    """LAT-EARLY-STOPPING: v4.1 (L1179-1184) and v5.1.1 (L1667-1672) log an ERROR line and go on; HEAD fails it."""
    detail = f"{OFFLINE.rsplit('/', 1)[0]}/Server/performance/run_1/mlperf_log_detail.txt"
    spec = {"base": "llm", "mutations": [{"op": "mllog_set", "path": detail, "key": "early_stopping_met", "value": False}]}
    root = materialize(spec, tmp_path / "tree")
    v51 = load_round("v5.1")
    expected = {"v5.1.1": "The v5.1.1 checker only logs this; the rules define", "v4.1": "The v4.1 checker only logs this",
                "HEAD": "The HEAD checker fails it as well"}  # fmt: skip
    for tag, checker in (("v5.1.1", v51.checker), ("v4.1", load_round("v4.1").checker), ("HEAD", load_round("v6.1").checker)):
        report = check_tree(root, v51.model_copy(update={"checker": checker}), workers=1)
        (msg,) = [f.message for r in report.results for f in r.findings if f.rule == "LAT-EARLY-STOPPING"]
        assert expected[tag] in msg, (tag, msg)
