"""LoadGen log parsers on real logs (fixture base trees) and on one-line mutations of them."""

from __future__ import annotations

import json
from pathlib import Path

from checker.parsers.mllog import parse_detail_file, parse_detail_text, parse_summary_file, parse_summary_text

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "checker" / "base"
RUN = FIX / "llm/closed/RedHat/results/XE8640_4xH100_vLLM/llama3.1-8b/Server/performance/run_1"
EDGE_RUN = FIX / "edge/open/NVIDIA/results/Jetson-Thor_TRT/llama3.1-8b-edge/SingleStream/performance/run_1"


def test_typed_accessors_on_a_real_server_log() -> None:
    log = parse_detail_file(RUN / "mlperf_log_detail.txt")
    assert log.result_validity == "VALID"
    assert log.effective_scenario == "Server"
    assert log.early_stopping_met is True
    assert log.num_errors() == 0 and log.errors == [] and log.problems == []
    seeds = log.seeds()
    assert (seeds.qsl_rng_seed, seeds.sample_index_rng_seed, seeds.schedule_rng_seed) == (
        1780908523862526354,
        14771362308971278857,
        18209322760996052031,
    )
    ttft = log.percentile_ns("first_token", 99)
    assert ttft is not None and ttft == log.float_value("result_first_token_99.00_percentile_latency_ns")
    assert log.loadgen_version_number is not None and log.loadgen_version_number.count(".") == 2
    line = log.line_of("result_validity")
    assert line is not None
    text = (RUN / "mlperf_log_detail.txt").read_text(encoding="utf-8").split("\n")
    assert '"key": "result_validity"' in text[line - 1]
    assert log.first_line_ok


def test_first_occurrence_wins_and_all_are_kept() -> None:
    text = (RUN / "mlperf_log_detail.txt").read_text(encoding="utf-8")
    rec = {"key": "result_validity", "value": "INVALID", "metadata": {"is_error": False, "is_warning": False}}
    log = parse_detail_text(text + "\n:::MLLOG " + json.dumps(rec) + "\n")
    assert log.result_validity == "VALID"
    assert log.values("result_validity") == ["VALID", "INVALID"]
    assert log.count("result_validity") == 2


def test_malformed_line_is_a_problem_with_its_line_not_an_exception() -> None:
    lines = (RUN / "mlperf_log_detail.txt").read_text(encoding="utf-8").split("\n")
    i = next(n for n, ln in enumerate(lines) if '"key": "effective_min_duration_ms"' in ln)
    lines[i] = lines[i][: len(lines[i]) // 2]
    log = parse_detail_text("\n".join(lines))
    assert [p.line for p in log.problems] == [i + 1]
    assert log.value("effective_min_duration_ms") is None
    assert log.result_validity == "VALID"


def test_error_records_and_num_errors() -> None:
    text = (RUN / "mlperf_log_detail.txt").read_text(encoding="utf-8")
    rec = {"key": "error_runtime", "value": "boom", "metadata": {"is_error": True, "is_warning": False}}
    log = parse_detail_text(text + "\n:::MLLOG " + json.dumps(rec) + "\n")
    assert [e.key for e in log.errors] == ["error_runtime"]
    assert log.error_keys == ["error_runtime"]
    assert log.logged_num_errors == 0 and log.num_errors() == 0  # the official parser trusts num_errors
    no_count = parse_detail_text("\n".join(ln for ln in text.split("\n") if '"key": "num_errors"' not in ln) + "\n:::MLLOG " + json.dumps(rec))
    assert no_count.num_errors() == 1


def test_warnings_are_parsed() -> None:
    rec = {"key": "warning_generic_message", "value": "Found Audit Config file", "metadata": {"is_error": False, "is_warning": True}}
    log = parse_detail_text(":::MLLOG " + json.dumps(rec))
    assert [w.value for w in log.warnings] == ["Found Audit Config file"]


def test_not_a_loadgen_log() -> None:
    log = parse_detail_text("hello\nworld\n")
    assert not log.first_line_ok and log.keys() == [] and log.problems == []


def test_summary_log() -> None:
    s = parse_summary_file(RUN / "mlperf_log_summary.txt")
    assert s.result_validity == "VALID" and s.scenario == "Server"
    assert s.value("qsl_rng_seed") == "1780908523862526354"
    assert s.line_of("Scenario") is not None
    edge = parse_summary_file(EDGE_RUN / "mlperf_log_summary.txt")
    assert edge.scenario == "SingleStream"
    assert parse_summary_text("no separator here\n").entries == {}


def test_line_numbers_with_and_without_foreign_lines() -> None:
    """Line numbers stay exact when a log holds lines that are not :::MLLOG records."""
    text = (RUN / "mlperf_log_detail.txt").read_text(encoding="utf-8")
    noisy = "garbage\n\n" + text.replace('\n:::MLLOG {"key": "result_validity"', '\nnoise\n:::MLLOG {"key": "result_validity"')
    for t in (text, noisy):
        log = parse_detail_text(t)
        lines = t.split("\n")
        for key in ("result_validity", "effective_scenario", "num_errors", "loadgen_version"):
            ln = log.line_of(key)
            assert ln is not None and f'"key": "{key}"' in lines[ln - 1]
            rec = log.record(key)
            assert rec is not None and rec.line == ln


# record bodies whose decoding the in-place scan must give exactly as parse_json (json.loads with bounds) does
_BODIES = [
    '{"key": "k", "value": 1.5, "metadata": {"is_error": false, "is_warning": false}}',
    '{"key": "k", "value": NaN, "metadata": {"is_error": false, "is_warning": false}}',
    '{"key": "k", "value": 1, "value": -Infinity}',  # duplicate key: the last wins
    '{"key": "k", "value": ' + "9" * 5000 + "}",  # beyond int()'s 4,300 digits
    '{"key": "k", "value": ' + "[" * 150 + "]" * 150 + "}",  # nested deeper than MAX_JSON_DEPTH
    '{"key": "k", "value": ' + "[" * 3000 + "]" * 3000 + "}",  # deeper than the recursion limit
    '{"key": "k", "value": ' + "[" * 60 + "]" * 60 + "}",  # many brackets, shallow enough
    '{"key": "k", "value": 1} }',  # text after the object
    '{"key": "k", "value": 1}\t',  # whitespace after it
    '{"key": "k", "value": "\x01"}',  # a control character in a string
    '{"key": "k", "value": [1, 2}',
    '{"key": "k", "value": {"a": 1}, "x": [}',
]


def test_records_decode_exactly_as_parse_json() -> None:
    from checker.safe_json import JsonProblem, parse_json

    for body in _BODIES:
        for layout in (":::MLLOG " + body, ":::MLLOG  " + body + "\n"):  # LoadGen's layout, and the general path
            log = parse_detail_text(layout + "\n" + ':::MLLOG {"key": "other", "value": 2}\n')
            try:
                want = parse_json(body, repeated_keys=True)  # a repeated key: the last value, as json.loads
            except JsonProblem as exc:
                assert log.value("k") is None
                assert [(p.line, p.message) for p in log.problems] == [(1, f"malformed :::MLLOG JSON: {exc.msg}")]
            else:
                assert repr(log.value("k")) == repr(want["value"]) and log.problems == []
            assert log.value("other") == 2
