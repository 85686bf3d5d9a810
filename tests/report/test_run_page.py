"""The run page: LoadGen's numbers against the round's limits, the plots, and why a run is INVALID in words."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from report_helpers import RealRun, copy_run, edit_detail, html_text, plots, write_test_timeline

from checker.findings import UnusableInput
from checker.parsers.mllog import parse_detail_file
from loadgen_sut.cli import main
from loadgen_sut.report.explain import explain
from loadgen_sut.report.run_data import load_run
from loadgen_sut.report.run_page import run_page
from loadgen_sut.timeline import TIMELINE_FILE


def _page(run_dir: Path, link_dir: Path | None = None) -> str:
    return run_page(load_run(run_dir), link_dir=link_dir).decode("utf-8")


def _p99_ttft_ms(run_dir: Path) -> float:
    log = parse_detail_file(run_dir / "performance" / "mlperf_log_detail.txt")
    value = log.percentile_ns("first_token", 99.0)
    assert value is not None
    return value / 1e6


def test_run_html_writes_the_invalid_run_with_its_reason(invalid_run: RealRun) -> None:
    assert invalid_run.exit_code == 1  # INVALID
    html = html_text(invalid_run.html)
    record = load_run(invalid_run.run_dir).record
    assert record.verdict.status == "INVALID"
    p99 = _p99_ttft_ms(invalid_run.run_dir)
    assert p99 > 2000
    # the explanation names the constraint, LoadGen's value, the limit and by how much it missed
    why = html[html.index('id="why"') : html.index('id="verdict-findings"')]
    assert "p99 time to first token (TTFT)" in why
    assert f"{p99:,.0f} ms" in why
    assert "less than 2,000 ms for llama3.1-8b Server in round v6.1" in why
    over = p99 - 2000
    assert f"{over:,.0f} ms ({100 * over / 2000:.0f} %) over the limit" in why
    assert "lower target_qps (it is 200 now)" in why
    # ... and the early-stopping failure as a consequence, with LoadGen's own count of queries needed
    es = load_run(invalid_run.run_dir).test("performance")
    assert es is not None and es.detail is not None
    more = next(t.more_needed for t in es.detail.early_stopping if t.which == "TTFT")
    assert more is not None and f"at least {more:,} more" in why
    assert "This follows from the TTFT latency failure above" in why
    # the evidence: file and line of the detail log
    line = es.detail.line("result_first_token_99.00_percentile_latency_ns")
    assert f"performance/mlperf_log_detail.txt:{line}" in why


def test_run_page_draws_the_plots_with_the_round_limits(invalid_run: RealRun) -> None:
    html = html_text(invalid_run.html)
    run = load_run(invalid_run.run_dir)
    perf = run.test("performance")
    assert perf is not None and perf.timeline is not None  # the SUT wrote its timeline
    assert plots(html) == [
        "performance-ttft-cdf",
        "performance-tpot-cdf",
        "performance-early-stopping",
        "performance-ttft-over-time",
        "performance-tpot-over-time",
        "performance-rate-over-time",
        "performance-tokens-over-time",
        "performance-client-lags",  # the client self-diagnostics (tests/report/test_client_section.py)
        "performance-client-cpu",
    ]
    assert html.count("<svg") == 9
    # the round's p99 limits are drawn (legend text in the SVG) and cited
    assert "v6.1 limit: p99 TTFT &lt; 2,000 ms" in html
    assert "v6.1 limit: p99 TPOT &lt; 100 ms" in html
    assert "constants.py:1778-1780" in html
    # LoadGen's numbers and the SUT's side by side in the CDF's table
    log = parse_detail_file(run.run_dir / "performance" / "mlperf_log_detail.txt")
    p50 = log.percentile_ns("first_token", 50.0)
    assert p50 is not None and f"{p50 / 1e6:,.0f} ms" in html
    tokens = log.float_value("result_completed_tokens_per_second")
    assert tokens is not None and f"LoadGen: {tokens:,.1f} tokens/s" in html
    assert "target_qps 200" in html
    assert "SIMULATED" in html
    assert "mathdefault" not in html  # axis labels are plain text (mathtext is off)


def test_the_bound_agrees_with_loadgens_early_stopping(invalid_run: RealRun) -> None:
    """LoadGen's early-stopping answer ("would need at least N more queries") is exactly our rule's
    ``min_queries_to_pass(k)`` for some count k of queries over the TTFT limit, and k is the SUT timeline's count
    within a few queries: the SUT stamps a first token when it hands it to LoadGen, LoadGen when it takes it, and on
    a loaded machine that gap (micro- to milliseconds) moves the queries nearest the limit across it. LoadGen's
    latencies hold it, so its count is the larger (measured: 94 against the timeline's 89 while two other test runs
    shared the 2 cores; equal within one on a quiet machine)."""
    from loadgen_sut.report.early_stopping import count_over, min_queries_to_pass
    from loadgen_sut.report.timeline_stats import ttft_ms

    perf = load_run(invalid_run.run_dir).test("performance")
    assert perf is not None and perf.timeline is not None and perf.detail is not None
    es = next(t for t in perf.detail.early_stopping if t.which == "TTFT")
    assert es.more_needed is not None and es.processed == len(perf.timeline.samples)
    over = count_over(ttft_ms(perf.timeline.samples), 2000.0)
    needed = es.processed + es.more_needed
    loadgens = [k for k in range(es.processed + 1) if min_queries_to_pass(k) == needed]
    assert loadgens, f"no count over the limit gives LoadGen's {needed} queries: the rules differ"
    assert over - 1 <= loadgens[0] <= over + max(2, round(0.1 * over)), (loadgens[0], over)


def test_a_run_without_a_timeline_has_fewer_plots_and_says_why(invalid_run: RealRun, tmp_path: Path) -> None:
    run_dir = copy_run(invalid_run.run_dir, tmp_path / "run")
    (run_dir / "performance" / TIMELINE_FILE).unlink()
    html = _page(run_dir)
    assert plots(html) == ["performance-ttft-cdf", "performance-tpot-cdf", "performance-early-stopping",
                           "performance-client-lags", "performance-client-cpu"]
    assert 'data-note="no-timeline"' in html
    assert f"no per-sample timeline ({TIMELINE_FILE})" in html
    assert "LoadGen&#x27;s logged percentiles" in html
    # the explanation still comes from the detail log
    assert "p99 time to first token (TTFT)" in html


def test_tpot_failure_is_explained_with_its_amount(invalid_run: RealRun, tmp_path: Path) -> None:
    run_dir = copy_run(invalid_run.run_dir, tmp_path / "run")
    detail = run_dir / "performance" / "mlperf_log_detail.txt"
    edit_detail(detail, **{"result_first_token_99.00_percentile_latency_ns": 1_500_000_000,
                           "result_time_per_output_token_99.00_percentile_ns": 150_000_000,
                           "result_invalid_reason": "TPOT constrain not met: Reduce target QPS to improve latency."})
    items = explain(load_run(run_dir))
    tpot = [e for e in items if e.constraint == "p99 time per output token (TPOT)"]
    assert len(tpot) == 1 and not any("TTFT" in e.constraint and "p99" in e.constraint for e in items)
    assert tpot[0].by_how_much == "50.0 ms (50 %) over the limit"
    assert "150 ms" in tpot[0].measured and "less than 100 ms" in tpot[0].measured
    assert "--max-num-seqs" in tpot[0].change


def test_early_stopping_alone_asks_for_a_longer_run(invalid_run: RealRun, tmp_path: Path) -> None:
    run_dir = copy_run(invalid_run.run_dir, tmp_path / "run")
    detail = run_dir / "performance" / "mlperf_log_detail.txt"
    text = " * Run unsuccessful.  * Processed 384 queries.  * Would need to run at least 75 more queries,  with the run being successful if every additional  query were under latency."
    edit_detail(detail, result_perf_constraints_met=True, result_query_count=384, early_stopping_ttft_result=text,
                **{"result_first_token_99.00_percentile_latency_ns": 900_000_000})
    (run_dir / "performance" / TIMELINE_FILE).unlink()
    items = explain(load_run(run_dir))
    assert [e.constraint for e in items if e.rule == "RUN-LOADGEN-INVALID"] == ["early stopping (TTFT)"]
    es = items[0]
    assert "LoadGen processed 384 queries" in es.measured and "at least 75 more" in es.measured
    assert es.by_how_much == "75 more queries needed"
    assert "at least 459 queries" in es.change  # the fewest that can pass at p99 with none over the limit


def test_min_duration_and_min_queries(invalid_run: RealRun, tmp_path: Path) -> None:
    run_dir = copy_run(invalid_run.run_dir, tmp_path / "run")
    detail = run_dir / "performance" / "mlperf_log_detail.txt"
    edit_detail(detail, result_perf_constraints_met=True, early_stopping_met=True, result_min_duration_met=False,
                result_min_queries_met=False, effective_min_duration_ms=600000, effective_min_query_count=1000,
                effective_max_query_count=500, result_query_count=500)
    items = {e.constraint: e for e in explain(load_run(run_dir))}
    dur = items["minimum duration"]
    assert "the minimum duration is 600 s (min_duration)" in dur.measured
    assert dur.by_how_much is not None and dur.by_how_much.endswith("short")
    assert "max_query_count = 500" in dur.change
    q = items["minimum query count"]
    assert "LoadGen processed 500 queries; at least 1,000 are required" in q.measured
    assert q.by_how_much == "500 queries short"


def test_early_stopping_bound_counts_the_timeline(invalid_run: RealRun, tmp_path: Path) -> None:
    """A timeline written with write_timeline: 600 samples, every 100th over the TTFT limit (6 over): with 600
    queries none may be over (at most 0; 1 needs 664), so the page says 6 over, 0 allowed, and the queries needed."""
    run_dir = copy_run(invalid_run.run_dir, tmp_path / "run")
    write_test_timeline(run_dir / "performance", 600, qps=200, ttft_ms=300, tpot_ms=25, tokens=20, slow_every=100,
                        slow_ttft_ms=2500)
    html = _page(run_dir)
    es = html[html.index('data-plot="performance-early-stopping"') :]
    es = es[: es.index("</figure>")]
    assert "this run, TTFT: 6 of 600 over (SUT timeline)" in es
    from loadgen_sut.report.early_stopping import min_queries_to_pass

    needed = min_queries_to_pass(6)
    assert re.search(rf">{needed:,}<", es)


def test_report_command_finds_the_run_and_refuses_what_it_must(invalid_run: RealRun, tmp_path: Path) -> None:
    out = tmp_path / "page.html"
    assert main(["report", str(invalid_run.run_dir), "--html", str(out)]) == 0
    first = out.read_bytes()
    assert b'data-report="run"' in first
    # the run's --out with one run in it, and the record file itself, stand for the run
    assert main(["report", str(invalid_run.run_dir.parent.parent), "--html", str(out), "--force"]) == 0
    assert main(["report", str(invalid_run.run_dir / "run-record.json"), "--html", str(out), "--force"]) == 0
    assert out.read_bytes() == first  # deterministic: the same run, the same bytes
    # refused: an existing file without --force, an input of the command, a directory
    assert main(["report", str(invalid_run.run_dir), "--html", str(out)]) == 2
    assert main(["report", str(invalid_run.run_dir), "--html", str(invalid_run.run_dir / "run-record.json"),
                 "--force"]) == 2  # fmt: skip
    assert main(["report", str(invalid_run.run_dir), "--html", str(tmp_path)]) == 2
    # a file at any depth of the run directory may be read for the page (a record can name a test directory
    # one level deeper): none is replaced, even with --force
    run_copy = tmp_path / "run-copy"
    shutil.copytree(invalid_run.run_dir, run_copy)
    deep = run_copy / "performance" / "deeper" / "mlperf_log_detail.txt"
    deep.parent.mkdir(parents=True)
    deep.write_text("a log")
    assert main(["report", str(run_copy), "--html", str(deep), "--force"]) == 2
    assert deep.read_text() == "a log"
    assert main(["report", str(tmp_path / "nothing"), "--html", str(tmp_path / "x.html")]) == 2
    (tmp_path / "bad.json").write_text('{"tool": "someone else"}')
    assert main(["report", str(tmp_path / "bad.json"), "--html", str(tmp_path / "x.html")]) == 2
    assert not (tmp_path / "x.html").exists()


def test_a_broken_record_is_unusable_input_naming_it(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "run-record.json").write_text('{"run_id": 3}')
    with pytest.raises(UnusableInput, match=r"run-record.json: not a run record"):
        load_run(run_dir)


def test_file_links_are_relative_and_nothing_points_at_the_network(invalid_run: RealRun, tmp_path: Path) -> None:
    html = _page(invalid_run.run_dir, link_dir=tmp_path)
    hrefs = re.findall(r' (?:href|src)="([^"]*)"', html)
    assert hrefs and all(h.startswith("#") or not re.match(r"^[a-z][a-z0-9+.-]*:|^//", h) for h in hrefs)
    assert "http://" not in html and "https://" not in html
    files = [h for h in hrefs if not h.startswith("#")]
    assert any(h.endswith("performance/mlperf_log_detail.txt") for h in files)
    for h in files:  # every link resolves from where the page is
        assert (tmp_path / h).exists(), h
    assert "<script" not in html


def test_run_refuses_a_bad_html_path_before_running(tmp_path: Path) -> None:
    conf = tmp_path / "trial.conf"
    conf.write_text("*.Server.target_qps = 200\n*.Server.min_duration = 2500\n", encoding="utf-8")
    args = ["run", "--engine", "simulated", "--benchmark", "llama3.1-8b", "--scenario", "Server", "--round", "v6.1",
            "--user-conf", str(conf), "--out", str(tmp_path / "out")]  # fmt: skip
    existing = tmp_path / "page.html"
    existing.write_text("mine")
    for html in ("-", str(existing), str(tmp_path), str(conf)):
        assert main([*args, "--html", html]) == 2
    assert not (tmp_path / "out").exists()  # refused before anything ran
    assert existing.read_text() == "mine"


def test_a_test_directory_that_is_a_symlink_loop_is_unusable_input_naming_it(
    invalid_run: RealRun, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = copy_run(invalid_run.run_dir, tmp_path / "run")
    shutil.rmtree(run_dir / "performance")
    (run_dir / "performance").symlink_to("performance")  # a link to itself
    assert main(["report", str(run_dir), "--html", "-"]) == 2
    err = capsys.readouterr().err
    assert f"{run_dir / 'performance'}: the directory of test performance cannot be resolved" in err
    assert "loop of symbolic links" in err


def _edited_record(invalid_run: RealRun, tmp_path: Path, edit: Callable[[str], str]) -> Path:
    run_dir = copy_run(invalid_run.run_dir, tmp_path / "run")
    record = run_dir / "run-record.json"
    record.write_text(edit(record.read_text(encoding="utf-8")), encoding="utf-8")
    return run_dir


def test_a_run_record_is_read_as_every_json_input(
    invalid_run: RealRun, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Through parse_json (docs/trust-and-safety.md, Bounds): a key given twice is refused, not read as its last
    value; a non-finite number, which the record's writer never writes (null), is refused too (matplotlib raised
    on an Infinity: exit 3)."""
    twice = _edited_record(invalid_run, tmp_path / "twice",
                           lambda t: t.replace('"simulated": true,', '"simulated": false, "simulated": true,', 1))
    assert main(["report", str(twice), "--html", "-"]) == 2
    err = capsys.readouterr().err
    assert f"{twice / 'run-record.json'}: the run record is not JSON (line " in err
    assert 'key "simulated" appears twice' in err

    def infinite(text: str) -> str:
        data = json.loads(text)
        client = data["tests"][0]["client"]
        client["machine_cpu_busy"] = [float("inf"), *client["machine_cpu_busy"][1:]]
        return json.dumps(data)

    run_dir = _edited_record(invalid_run, tmp_path / "inf", infinite)
    assert main(["report", str(run_dir), "--html", "-"]) == 2
    assert "tests/0/client/machine_cpu_busy/0 is not a finite number" in capsys.readouterr().err


def test_a_lag_without_a_value_is_shown_as_not_available(invalid_run: RealRun, tmp_path: Path) -> None:
    """A lag with a count but no p99 (the record writes a non-finite value as null): 'n/a', not a TypeError."""

    def no_p99(text: str) -> str:
        data = json.loads(text)
        lag = data["tests"][0]["client"]["loop_lag"]
        assert lag["count"] > 0
        lag["p99_ms"] = None
        return json.dumps(data)

    run_dir = _edited_record(invalid_run, tmp_path, no_p99)
    assert re.search(r"loop lag p50/p99/max [0-9.]+/n/a/[0-9.]+ ms", _page(run_dir))
