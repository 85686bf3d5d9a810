"""loadgen_sut.compliance: TEST07 / TEST09 audit.config texts and their verification files, on genuine LoadGen runs
of the tiny SUT (tests/data/loadgen_tiny_sut.py) with the audit.config this tool writes."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from checker.compliance.audit_run import AUDIT_CONFIG_MESSAGE, audit_run_report
from checker.compliance.test07 import parse_verify_accuracy
from checker.compliance.test09 import Test09Result as T09Result
from checker.compliance.test09 import reported_mean
from checker.findings import UnusableInput
from checker.parsers.mllog import parse_detail_file
from loadgen_sut.compliance import (
    VERIFY_FILE,
    VERIFY_OUTPUT_LEN_FILE,
    audit_settings,
    compliance_audit_config,
    verification_text_test07,
    verification_text_test09,
    verify_test07_run,
    verify_test09_run,
)
from loadgen_sut.datasets import load_dataset
from rules.models import Benchmark, Round
from rules.registry import load_round

TINY_SUT = Path(__file__).resolve().parents[1] / "data" / "loadgen_tiny_sut.py"

# The LoadGen keys of mlcommons/inference (HEAD b66003e1) compliance/TEST07/gpt-oss-120b/audit.config lines 10-37,
# compliance/TEST09/gpt-oss-120b/audit.config lines 10-42 and compliance/TEST09/e2e-rag-qna/audit.config lines 10-40.
OFFICIAL_TEST07_GPT_OSS = {
    "mode": "2",
    "accuracy_log_rng_seed": "720381539243781796",
    "accuracy_log_sampling_target": "990",
    "min_query_count": "990",
    "min_duration": "0",
    "performance_issue_unique": "1",
    "sample_concatenate_permutation": "0",
    "test07_accuracy_threshold": "60.698",
}
OFFICIAL_TEST09_GPT_OSS = {
    "mode": "2",
    "accuracy_log_rng_seed": "720381539243781796",
    "accuracy_log_sampling_target": "10000",
    "min_query_count": "6396",
    "min_duration": "0",
    "performance_issue_unique": "1",
    "sample_concatenate_permutation": "0",
    "test09_min_output_tokens": "1150.38",
    "test09_max_output_tokens": "1406.02",
}
OFFICIAL_TEST09_E2E_RAG = {
    "mode": "2",
    "accuracy_log_rng_seed": "720381539243781796",
    "accuracy_log_sampling_target": "10000",
    "min_query_count": "824",
    "min_duration": "0",
    "sample_concatenate_permutation": "0",
    "test09_min_output_tokens": "246.43",
    "test09_max_output_tokens": "301.19",
}


def _keys(text: str) -> dict[str, str]:
    return dict(re.findall(r"^\*\.\*\.(\w+) = (\S+)$", text, re.M))


def _bench(rnd: Round, name: str) -> Benchmark:
    b = rnd.benchmark(name)
    assert b is not None
    return b


def test_audit_configs_have_the_official_values() -> None:
    rnd = load_round("v6.1")
    gpt = _bench(rnd, "gpt-oss-120b")
    assert _keys(compliance_audit_config(rnd, gpt, "TEST07")) == OFFICIAL_TEST07_GPT_OSS
    assert _keys(compliance_audit_config(rnd, gpt, "TEST09")) == OFFICIAL_TEST09_GPT_OSS
    assert _keys(compliance_audit_config(rnd, _bench(rnd, "e2e-rag-qna"), "TEST09")) == OFFICIAL_TEST09_E2E_RAG
    assert dict(audit_settings(rnd, gpt, "TEST07")) == OFFICIAL_TEST07_GPT_OSS
    # v6.0 requires TEST09 of gpt-oss-120b only (HEAD checker models_TEST09), with the same file
    v60 = load_round("v6.0")
    assert _keys(compliance_audit_config(v60, _bench(v60, "gpt-oss-120b"), "TEST09")) == OFFICIAL_TEST09_GPT_OSS


def test_audit_config_refusals() -> None:
    rnd = load_round("v6.1")
    with pytest.raises(UnusableInput, match="does not require TEST07"):
        compliance_audit_config(rnd, _bench(rnd, "llama3.1-8b"), "TEST07")
    with pytest.raises(UnusableInput, match="does not require TEST06"):
        compliance_audit_config(rnd, _bench(rnd, "gpt-oss-120b"), "TEST06")
    # a benchmark the round asks TEST09 of, without this tool's values for it
    other = _bench(rnd, "llama3.1-8b").model_copy(
        update={"compliance_tests": ("TEST06", "TEST09"), "test09_min_output_tokens": 1.0, "test09_max_output_tokens": 2.0}
    )
    with pytest.raises(UnusableInput, match=r"no TEST09 audit\.config values for llama3\.1-8b"):
        compliance_audit_config(rnd, other, "TEST09")


def test_performance_sample_count_line_only_for_a_smaller_data_set() -> None:
    rnd = load_round("v6.1")
    gpt = _bench(rnd, "gpt-oss-120b")
    small = compliance_audit_config(rnd, gpt, "TEST07", dataset_samples=16, performance_sample_count=6396)
    assert _keys(small) == {**OFFICIAL_TEST07_GPT_OSS, "performance_sample_count_override": "16"}
    assert "SIGSEGV" in small
    full = compliance_audit_config(rnd, gpt, "TEST07", dataset_samples=990, performance_sample_count=990)
    assert _keys(full) == OFFICIAL_TEST07_GPT_OSS
    e2e = compliance_audit_config(rnd, _bench(rnd, "e2e-rag-qna"), "TEST09", dataset_samples=8, performance_sample_count=824)
    assert _keys(e2e) == OFFICIAL_TEST09_E2E_RAG  # no performance_issue_unique there, no crash to avoid


def _official_pass(text: str) -> bool:
    """What the HEAD checker's compliance_check.py reads of TEST07/TEST09: 'TEST PASS' in the file."""
    return "TEST PASS" in text


def test_test07_text_official_layout() -> None:
    out = "some evaluation output\n{'exact_match': 61.5, 'gen_num': 990}\n"
    text, score = verification_text_test07(out, 60.698, r"'exact_match':\s*([\d.]+)")
    assert score == 61.5
    assert text == (
        out + "\n" + "=" * 80 + "\nTEST07 Verification Summary\n" + "=" * 80
        + "\nAccuracy score: 61.5\nAccuracy threshold: 60.698\nAccuracy check pass: True\nTEST PASS\n"
    )
    rep = parse_verify_accuracy(text)
    assert (rep.output_score, rep.score, rep.threshold, rep.says_pass) == (61.5, 61.5, 60.698, True)
    assert _official_pass(text)
    low, _ = verification_text_test07("{'exact_match': 12.0}", 60.698, r"'exact_match':\s*([\d.]+)")
    assert "Accuracy check pass: False\nTEST FAIL\n" in low and not _official_pass(low)
    none, score = verification_text_test07("evaluation failed\n", 60.698, r"'exact_match':\s*([\d.]+)")
    assert score is None and none.endswith("Error: Could not parse accuracy score\nTEST FAIL\n")
    with pytest.raises(UnusableInput, match="not a regular expression"):
        verification_text_test07("x", 1.0, "(")


def test_test09_text_official_layout() -> None:
    res = T09Result(samples=3, mean=1200.0, min_tokens=1100, max_tokens=1300, low=1150.38, high=1406.02)
    text = verification_text_test09(res, 81.65)
    assert text == "\n".join(
        [
            "=" * 80,
            "TEST09: Verify Output Token Length in Performance Mode",
            "=" * 80,
            "",
            "Output Token Length Statistics",
            "-" * 40,
            "Total samples: 3",
            "Mean output tokens: 1200.00",
            "Min output tokens: 1100",
            "Max output tokens: 1300",
            "Std deviation: 81.65",
            "",
            "=" * 80,
            "Verification Results",
            "=" * 80,
            "Mean output tokens: 1200.00",
            "Min threshold: 1150.38",
            "Max threshold: 1406.02",
            "Min check pass: True",
            "Max check pass: True",
            "",
            "TEST PASS",
        ]
    ) + "\n"
    assert reported_mean(text) == 1200.0 and _official_pass(text)
    short = verification_text_test09(T09Result(2, 10.0, 9, 11, 1150.38, 1406.02), 1.0)
    assert "Min check pass: False\nMax check pass: True\n\nTEST FAIL\n" in short and not _official_pass(short)
    empty = verification_text_test09(T09Result(0, 0.0, 0, 0, 1.0, 2.0), None)
    assert "No entries found" in empty and not _official_pass(empty)


def _tiny_run(out: Path, audit: str | None, texts: Sequence[str], scenario: str = "Offline") -> Path:
    src = out.parent / f"{out.name}.texts.jsonl"
    src.write_text("".join(json.dumps({"reference": t}) + "\n" for t in texts), encoding="utf-8")
    cmd = [sys.executable, str(TINY_SUT), str(out), "--scenario", scenario, "--mode", "performance"]
    cmd += ["--samples", str(len(texts)), "--texts", str(src)]
    if audit is not None:
        cfg = out.parent / f"{out.name}.audit.config"
        cfg.write_text(audit, encoding="utf-8")
        cmd += ["--audit-config", str(cfg)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    return out


def _small_gpt_oss(n: int, **update: object) -> tuple[Round, Benchmark]:
    """gpt-oss-120b with TEST07/TEST09 data sets of ``n`` samples (the tiny SUT's), the round's audit.config files."""
    rnd = load_round("v6.1")
    b = _bench(rnd, "gpt-oss-120b").model_copy(
        update={"test07_sample_count": n, "test09_sample_count": n, **update}
    )
    return rnd, b


def _ids(text: str) -> list[int]:  # the tiny SUT's byte tokenizer: UTF-8 bytes + 3, then EOS 2
    return [b + 3 for b in text.encode("utf-8")] + [2]


def test_test09_on_a_genuine_run(tmp_path: Path) -> None:
    """TEST09 with this tool's audit.config: LoadGen logs every sample once; the mean is the ids the SUT returned."""
    texts = [f"answer {'x' * (i % 5)} {i}" for i in range(24)]
    rnd, bench = _small_gpt_oss(24, test09_min_output_tokens=10.0, test09_max_output_tokens=14.0)
    audit = compliance_audit_config(rnd, bench, "TEST09", dataset_samples=24, performance_sample_count=24)
    run = _tiny_run(tmp_path / "t09", audit, texts)
    rec = verify_test09_run(
        run / "mlperf_log_accuracy.json", bench, run, audit_config=audit, detail_log=run / "mlperf_log_detail.txt"
    )
    lengths = [len(_ids(t)) for t in texts]
    assert rec.samples == 24 and rec.mean_tokens == pytest.approx(sum(lengths) / 24)
    assert (rec.min_tokens, rec.max_tokens) == (min(lengths), max(lengths))
    assert rec.passed == (10.0 <= sum(lengths) / 24 <= 14.0)
    assert rec.audit_problems == ()
    text = (run / VERIFY_OUTPUT_LEN_FILE).read_text(encoding="utf-8")
    assert reported_mean(text) == round(sum(lengths) / 24, 2) and _official_pass(text) == rec.passed
    logged = json.loads((run / "mlperf_log_accuracy.json").read_text(encoding="utf-8"))
    assert sorted(e["qsl_idx"] for e in logged) == list(range(24))  # performance_issue_unique: each sample once


def test_test09_without_the_audit_config_is_not_the_test(tmp_path: Path) -> None:
    _, bench = _small_gpt_oss(24, test09_min_output_tokens=1.0, test09_max_output_tokens=100.0)
    run = _tiny_run(tmp_path / "plain", None, [f"s{i}" for i in range(24)])
    (run / "mlperf_log_accuracy.json").write_text("[]\n", encoding="utf-8")  # a performance run logs nothing
    rec = verify_test09_run(
        run / "mlperf_log_accuracy.json", bench, run, audit_config="", detail_log=run / "mlperf_log_detail.txt"
    )
    assert not rec.passed and rec.samples == 0
    assert any(AUDIT_CONFIG_MESSAGE in p for p in rec.audit_problems)
    assert any("sampling_target" in p for p in rec.audit_problems)


def test_test07_on_a_genuine_run(tmp_path: Path) -> None:
    """TEST07: the performance-mode log scored by the benchmark's evaluator (gpt-oss), threshold from the rules data."""
    n = 20
    rows = [
        {"prompt": f"Q{i}: A) 1 B) 2 C) 3 D) 4", "ground_truth": "C" if i % 4 else "B", "dataset": "gpqa_diamond"}
        for i in range(n)
    ]
    data = tmp_path / "gpqa.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    dataset = load_dataset(str(data))
    texts = ["Answer: C" for _ in range(n)]  # right for the 15 rows whose truth is C
    rnd, bench = _small_gpt_oss(n)
    audit = compliance_audit_config(rnd, bench, "TEST07", dataset_samples=n, performance_sample_count=n)
    run = _tiny_run(tmp_path / "t07", audit, texts)

    def detok(ids: Sequence[int]) -> str:
        return bytes(i - 3 for i in ids if i >= 3).decode("utf-8")

    out = tmp_path / "verification"
    rec = verify_test07_run(
        run / "mlperf_log_accuracy.json", dataset, bench, detok, out, audit_config=audit,
        detail_log=run / "mlperf_log_detail.txt", detokenize_special=detok,
    )
    assert rec.evaluation_error is None and rec.samples_scored == rec.samples_logged == n and rec.missing_samples == 0
    assert rec.score == pytest.approx(75.0) and rec.threshold == 60.698 and rec.passed
    assert rec.audit_problems == ()
    text = (out / VERIFY_FILE).read_text(encoding="utf-8")
    rep = parse_verify_accuracy(text)
    assert rep.score == rec.score == rep.output_score and _official_pass(text)
    # a stricter threshold: the same run fails, and the file says so
    strict = bench.model_copy(update={"test07_accuracy_threshold": 80.0})
    rec2 = verify_test07_run(
        run / "mlperf_log_accuracy.json", dataset, strict, detok, tmp_path / "v2", audit_config=audit,
        detokenize_special=detok,
    )
    assert not rec2.passed and not _official_pass((tmp_path / "v2" / VERIFY_FILE).read_text(encoding="utf-8"))


def test_test07_evaluation_failure_is_test_fail(tmp_path: Path) -> None:
    """A log whose samples the data set lacks: no score, TEST FAIL, the reason in the file and the record."""
    rnd, bench = _small_gpt_oss(8)
    audit = compliance_audit_config(rnd, bench, "TEST07", dataset_samples=8, performance_sample_count=8)
    run = _tiny_run(tmp_path / "t07", audit, [f"Answer: C {i}" for i in range(8)])
    data = tmp_path / "two.jsonl"
    data.write_text("".join(json.dumps({"prompt": "q", "ground_truth": "C", "dataset": "gpqa"}) + "\n" for _ in range(2)))
    rec = verify_test07_run(
        run / "mlperf_log_accuracy.json", load_dataset(str(data)), bench, lambda ids: "", tmp_path / "v",
        audit_config=audit, detokenize_special=lambda ids: "",
    )
    assert not rec.passed and rec.score is None and rec.evaluation_error and "qsl_idx" in rec.evaluation_error
    assert rec.samples_logged == 8 and rec.samples_scored == 0 and rec.missing_samples is None
    text = (tmp_path / "v" / VERIFY_FILE).read_text(encoding="utf-8")
    assert "failed" in text and text.endswith("TEST FAIL\n")


def test_loadgen_crashes_without_the_sample_count_line(tmp_path: Path) -> None:
    """Why compliance_audit_config adds performance_sample_count_override for a small data set: with
    performance_issue_unique and a performance_sample_count above the QSL's samples (gpt-oss-120b's mlperf.conf: 6396),
    an Offline run dies in StartTest (measured: 5.1.2, 6.0.15, 6.0.17); with the line it logs every sample once."""
    rnd, bench = _small_gpt_oss(16)
    audit = compliance_audit_config(rnd, bench, "TEST07") + "*.*.performance_sample_count_override = 200\n"
    out = tmp_path / "crash"
    src = tmp_path / "texts.jsonl"
    src.write_text("".join(json.dumps({"reference": f"s{i}"}) + "\n" for i in range(16)), encoding="utf-8")
    cfg = tmp_path / "crash.audit.config"
    cfg.write_text(audit, encoding="utf-8")
    cmd = [sys.executable, str(TINY_SUT), str(out), "--scenario", "Offline", "--mode", "performance", "--samples", "16"]
    proc = subprocess.run([*cmd, "--texts", str(src), "--audit-config", str(cfg)], capture_output=True, timeout=120, check=False)
    assert proc.returncode != 0  # SIGSEGV (-11) measured
    fixed = compliance_audit_config(rnd, bench, "TEST07", dataset_samples=16, performance_sample_count=200)
    run = _tiny_run(tmp_path / "fixed", fixed, [f"s{i}" for i in range(16)])
    rep = audit_run_report(parse_detail_file(run / "mlperf_log_detail.txt"))
    assert rep.applied and rep.issue_unique and rep.performance_sample_count == 16 and rep.problems(16) == []
