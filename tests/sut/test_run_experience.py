"""What ``inference-audit run`` tells a newcomer before and while it runs (issue 23): enumerated options in any case,
every option's default in ``--help``, the planned duration, rate and query count before each test with an ETA while
it runs (clean lines off a terminal), no PyTorch advice from the tokenizer's processes, TEST06's LoadGen validity
explained, a stand-in engine's ROUGE marked meaningless, and an engine that is not there refused with exit 2 before
anything is written."""

from __future__ import annotations

import argparse
import importlib.util
import io
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sse_server import ServerThread, Timing, TokenServer
from sut_helpers import BENCH, ROUND, http_engine, sim_engine

from checker.findings import UnusableInput
from loadgen_sut.cli import build_parser, main
from loadgen_sut.engines.factory import EngineSpec
from loadgen_sut.progress import Progress, audit_overrides, eta_s, planned_load, progress_line
from loadgen_sut.record import LoadGenResult, TestRecord
from loadgen_sut.run.child import say_test_summary
from loadgen_sut.run.engine_probe import probe_engine
from loadgen_sut.run.plan import RunRequest
from loadgen_sut.runner import run
from loadgen_sut.settings import RunMode, TestMode, TestSettingsModel, official_settings
from loadgen_sut.sut import SutStats
from rules import load_round
from rules.models import Scenario

REPO = Path(__file__).resolve().parents[2]


def _subparser(command: str) -> argparse.ArgumentParser:
    sub = next(a for a in build_parser(only=command)._actions if isinstance(a, argparse._SubParsersAction))
    parser: argparse.ArgumentParser = sub.choices[command]
    return parser


def _parse(command: str, *argv: str) -> argparse.Namespace:
    return _subparser(command).parse_args(list(argv))


RUN_ARGS = ("--engine", "simulated", "--benchmark", BENCH, "--out", "out")


def test_enumerated_options_take_any_case_and_come_out_as_spelled_in_help() -> None:
    args = _parse(
        "run", *RUN_ARGS[:1], "SIMULATED", *RUN_ARGS[2:], "--scenario", "server", "--mode", "Submission-Trial",
        "--api", "CHAT", "--engine-flavor", "VLLM", "--division", "Open",
    )  # fmt: skip
    assert (args.engine, args.scenario, args.mode, args.api, args.engine_flavor, args.division) == (
        "simulated", "Server", "submission-trial", "chat", "vllm", "open",
    )  # fmt: skip
    assert _parse("run", *RUN_ARGS, "--scenario", "singlestream").scenario == "SingleStream"
    sweep = _parse(
        "sweep", *RUN_ARGS[:4], "--out", "s.json", "--scenario", "interactive", "--spacing", "GEOMETRIC"
    )
    assert (sweep.scenario, sweep.spacing) == ("Interactive", "geometric")


@pytest.mark.parametrize(
    ("command", "argv", "named"),
    [
        ("run", ("--scenario", "srv"), "'Offline', 'Server', 'Interactive', 'SingleStream'"),
        ("run", ("--scenario", "Server", "--mode", "trial"), "'performance', 'accuracy', 'submission'"),
        ("sweep", ("--scenario", "Offline"), "'Server', 'Interactive'"),
    ],
)
def test_a_misspelt_choice_is_refused_naming_the_valid_spellings(
    command: str, argv: tuple[str, ...], named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        _parse(command, *RUN_ARGS, *argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice" in err and named in err


@pytest.mark.parametrize("command", ["run", "sweep"])
def test_every_run_and_sweep_option_shows_its_default_and_has_help(command: str) -> None:
    parser = _subparser(command)
    formatter = parser._get_formatter()
    missing = []
    for action in parser._actions:
        if not action.option_strings or action.dest == "help":
            continue
        text = formatter._expand_help(action) if action.help else ""
        if not re.search(r"\bdefault\b|\brequired\b", text, re.IGNORECASE):
            missing.append(action.option_strings[0])
    assert missing == []
    text = parser.format_help()
    assert "(default: None)" not in text and "(default: False)" not in text
    assert re.search(r"--api \{completions,chat\}\s+the OpenAI API streamed", text)
    if command == "run":
        assert re.search(r"--sim-seed N\s+seed of the simulated draws", text)


def _official(scenario: Scenario, mode: TestMode = TestMode.PERFORMANCE_ONLY) -> TestSettingsModel:
    rnd = load_round(ROUND)
    bench = rnd.benchmark(BENCH)
    assert bench is not None
    return official_settings(rnd, bench, scenario).model_copy(update={"mode": mode})


def test_the_plan_of_a_test_without_user_conf_is_the_rounds_600_s_at_1_query_per_second() -> None:
    plan = planned_load(_official(Scenario.SERVER), 32, test="performance")
    assert (plan.rate_qps, plan.min_duration_s, plan.min_query_count, plan.samples) == (1.0, 600.0, 100, 600)
    assert plan.duration_s == pytest.approx(600.0)
    text = plan.describe()
    assert "Server at 1 query/s" in text and "min_duration 600 s, min_query_count 100" in text
    assert "~600 queries, about 10 min" in text

    # TEST06: its audit.config's 100 queries and no minimum duration, not the user.conf's
    audit = audit_overrides("# TEST06\n*.*.mode = 2\n*.*.min_query_count = 100\n*.*.min_duration = 0\n")
    t06 = planned_load(_official(Scenario.SERVER), 32, audit, test="TEST06")
    assert (t06.samples, t06.duration_s, t06.audit) == (100, pytest.approx(100.0), True)
    assert "(its audit.config)" in t06.describe()

    acc = planned_load(_official(Scenario.SERVER, TestMode.ACCURACY_ONLY), 32, test="accuracy")
    assert (acc.samples, acc.duration_s) == (32, pytest.approx(32.0))
    offline = planned_load(_official(Scenario.OFFLINE), 32, test="performance")
    assert offline.samples == 13368 and "one query of 13368 samples" in offline.describe()
    interactive = planned_load(_official(Scenario.INTERACTIVE), 32, test="performance")
    assert interactive.describe().startswith("Interactive (LoadGen Server) at 1 query/s")


def test_eta_is_the_longer_of_the_schedule_left_and_the_samples_left_at_the_rate_so_far() -> None:
    plan = planned_load(_official(Scenario.SERVER), 32)
    assert eta_s(plan, 0, 0.0) == pytest.approx(600.0)  # nothing done yet: the schedule
    assert eta_s(plan, 100, 100.0) == pytest.approx(500.0)
    assert eta_s(plan, 100, 200.0) == pytest.approx(1000.0)  # half the planned rate: twice as long
    offline = planned_load(_official(Scenario.OFFLINE), 32)
    assert eta_s(offline, 0, 5.0) is None  # all issued at once: unknown until samples complete
    assert eta_s(offline, 13368, 9.0) == 0.0


def test_progress_off_a_terminal_is_plain_lines_and_on_one_rewrites_in_place() -> None:
    stats = SutStats()
    stats.issued, stats.completed = 12, 10
    plan = planned_load(_official(Scenario.SERVER), 32, test="performance")
    line = progress_line("performance", stats, stats.started_ns + 10_000_000_000, (0, stats.started_ns), plan)
    assert "completed 10 of ~600 (2%), ETA 9 min 50 s" in line

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    log, tty = io.StringIO(), Terminal()
    for stream in (log, tty):
        progress = Progress("performance", stats, 0.02, stream=stream, plan=plan)
        progress.start()
        time.sleep(0.15)
        progress.stop()
    lines = log.getvalue().splitlines()
    assert len(lines) >= 3 and all(ln.startswith("[performance]") for ln in lines)
    assert "\r" not in log.getvalue() and "\x1b" not in log.getvalue()  # a log or CI output stays clean
    assert "ETA" in lines[0]
    assert tty.getvalue().startswith("\r") and tty.getvalue().endswith("\x1b[K\n")


def test_a_run_without_user_conf_says_how_long_it_will_take_before_its_first_test(tmp_path: Path) -> None:
    """The round's own settings: 600 s at 1 query/s, printed (with how to make a short trial) before LoadGen
    starts. Stopped (Ctrl-C) there, nothing is left under --out."""
    lines: list[str] = []

    def say(line: str) -> None:
        lines.append(line)
        if line.startswith("-- performance"):
            raise KeyboardInterrupt  # Ctrl-C before the first test process starts

    out = tmp_path / "out"
    request = RunRequest(
        round_name=ROUND,
        benchmark=BENCH,
        scenario="Server",
        mode=RunMode.PERFORMANCE,
        engine=sim_engine(),
        out=out,
    )
    with pytest.raises(KeyboardInterrupt):
        run(request, say=say)
    text = "\n".join(lines)
    assert "planned: performance 10 min: about 10 min in all" in text
    assert "no --user-conf: the round's official minimums, so this run takes about 10 min" in text
    assert "--target-qps N" in text and "*.Server.min_duration = 10000" in text
    assert not out.exists()  # the run directory, runs/ and out/ it created are gone


def _stand_in_server() -> ServerThread:
    """bench/token_server.py as it runs from the command line: it says it is the token server."""
    return ServerThread(TokenServer(Timing(ttft_ms=2.0, tpot_ms=0.5, tokens=8))).start()


@pytest.fixture(scope="module")
def tokenizer_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("transformers")
    out = tmp_path_factory.mktemp("tok")
    subprocess.run(
        [sys.executable, str(REPO / "bench" / "peers" / "make_tokenizer.py"), str(out)], check=True
    )
    return out


@pytest.mark.slow
def test_a_submission_flow_on_the_token_server(
    tmp_path: Path, tokenizer_dir: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """Performance, accuracy and TEST06 against the local token server with a tokenizer: each test's plan before it;
    no PyTorch advice from any of the processes that load the tokenizer; the ROUGE of its one-word answers marked as
    a stand-in engine's; TEST06's LoadGen INVALID (100 queries cannot meet early stopping) explained, and TEST06
    passes by its verification."""
    conf = tmp_path / "trial.conf"
    conf.write_text(
        "*.Server.target_qps = 100\n*.Server.min_duration = 1000\n*.Server.min_query_count = 100\n"
    )
    server = _stand_in_server()
    lines: list[str] = []
    try:
        out = run(
            RunRequest(
                round_name=ROUND,
                benchmark=BENCH,
                scenario="Server",
                mode=RunMode.SUBMISSION_TRIAL,
                engine=EngineSpec(
                    kind="openai",
                    model="token-server",
                    endpoints=(server.url,),
                    tokenizer_dir=str(tokenizer_dir),
                ),
                out=tmp_path / "out",
                user_conf=conf,
                progress_interval_s=0,
            ),
            say=lines.append,
        )
    finally:
        server.stop()
    text = "\n".join(lines)
    captured = capfd.readouterr()
    assert "PyTorch was not found" not in captured.out + captured.err + text
    assert re.search(r"planned: performance [^,]+, accuracy [^,]+, TEST06 [^:]+: (about|under) ", text)
    assert (
        "plan: Server at 100 queries/s (target_qps), min_duration 1 s, min_query_count 100: ~100 queries"
        in text
    )
    assert "min_duration 0 s, min_query_count 100 (its audit.config): ~100 queries" in text
    assert re.search(r"accuracy: ROUGE1 0(\.\d+)?, ", text)
    assert (
        "STAND-IN ENGINE (bench/token_server.py answers the same word to every prompt): these scores are meaningless"
        in text
    )
    t06 = next(t for t in out.record.tests if t.name == "TEST06")
    assert t06.loadgen is not None and t06.loadgen.result_validity == "INVALID"
    assert "LoadGen INVALID (not TEST06's verdict" in text and "TEST06 verification: PASS" in text
    assert "RUN-TEST06-FAILED" not in {f.rule for f in out.record.verdict.findings}


def test_a_real_engines_accuracy_is_not_marked_and_the_simulated_one_is(tmp_path: Path) -> None:
    lines: list[str] = []
    conf = tmp_path / "acc.conf"
    conf.write_text("*.Offline.min_duration = 0\n*.Offline.min_query_count = 32\n")
    run(
        RunRequest(
            round_name=ROUND, benchmark=BENCH, scenario="Offline", mode=RunMode.ACCURACY, engine=sim_engine(),
            out=tmp_path / "out", user_conf=conf, progress_interval_s=0,
        ),
        say=lines.append,
    )  # fmt: skip
    assert any(
        "STAND-IN ENGINE (the simulated engine copies the words of the reference answers)" in ln
        for ln in lines
    )
    assert any(ln.startswith("  accuracy: ROUGE1 100,") for ln in lines)


def test_loadgen_validity_of_a_compliance_test_is_explained_not_of_the_performance_test() -> None:
    lines: list[str] = []
    for name in ("performance", "TEST06"):
        rec = TestRecord(
            name=name, directory=name, status="finished", loadgen=LoadGenResult(result_validity="INVALID")
        )
        say_test_summary(rec, lines.append)
    perf, t06 = (ln for ln in lines if "LoadGen INVALID" in ln)
    assert "verdict" not in perf
    assert "not TEST06's verdict" in t06 and "min_duration 0" in t06 and "verification below" in t06


def _stopped_server_url() -> str:
    server = _stand_in_server()
    server.stop()  # nothing listens there any more
    return server.url


def test_an_engine_that_is_not_there_is_refused_with_exit_2_and_nothing_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = _stopped_server_url()
    out = tmp_path / "out"
    argv = ["run", "--engine", "openai", "--endpoint", url, "--model", "m", "--benchmark", BENCH]
    assert main([*argv, "--scenario", "Server", "--round", ROUND, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{url}: cannot reach the engine" in err and "fix: start the engine first" in err
    assert "Traceback" not in err
    assert not out.exists()


def test_a_model_the_engine_does_not_serve_is_refused_naming_what_it_serves(tmp_path: Path) -> None:
    server = _stand_in_server()
    try:
        with pytest.raises(UnusableInput, match=r"does not serve model 'other' \(it serves: token-server\)"):
            run(
                RunRequest(
                    round_name=ROUND, benchmark=BENCH, scenario="Server", mode=RunMode.PERFORMANCE,
                    engine=http_engine(server.url, model="other"), out=tmp_path / "out",
                ),
                say=lambda _line: None,
            )  # fmt: skip
    finally:
        server.stop()
    assert not (tmp_path / "out").exists()


def test_the_transformers_engine_without_pytorch_is_refused_before_the_run(tmp_path: Path) -> None:
    spec = EngineSpec(kind="transformers", model=str(tmp_path))
    if importlib.util.find_spec("torch") is None:
        with pytest.raises(
            UnusableInput, match="--engine transformers generates with PyTorch, which is not installed"
        ):
            probe_engine(spec)
    else:
        probe_engine(spec)  # PyTorch is there: the engine's own start judges the model directory


def test_a_submission_flow_names_every_missing_input_in_one_refusal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A newcomer fixed --submitter, then --system, then the implementation's weight data types, one run each: the
    run refuses once, naming all three and the command that writes each file, and writes nothing."""
    out = tmp_path / "out"
    code = main(
        ["run", "--engine", "openai", "--endpoint", "http://127.0.0.1:9", "--model", "m", "--benchmark", BENCH,
         "--scenario", "Server", "--mode", "submission-trial", "--out", str(out)]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert "--submitter NAME" in err and "--system FILE" in err and "weight_data_types" in err
    assert "init system --trial" in err and "init implementation --trial" in err
    assert not out.exists()
    # given the three, none is named again (the run goes on to the next check: the engine that is not there)
    system = tmp_path / "sys.json"
    impl = tmp_path / "impl.json"
    assert main(["init", "system", "--trial", "--submitter", "MyOrg", "--system-name", "box", "--no-gpu-probe",
                 "--out", str(system)]) == 0  # fmt: skip
    assert main(["init", "implementation", "--trial", "--out", str(impl)]) == 0
    capsys.readouterr()
    code = main(
        ["run", "--engine", "openai", "--endpoint", "http://127.0.0.1:9", "--model", "m", "--benchmark", BENCH,
         "--scenario", "Server", "--mode", "submission-trial", "--submitter", "MyOrg", "--system", str(system),
         "--implementation-json", str(impl), "--tokenizer", str(REPO / "examples" / "token-server-tokenizer"),
         "--out", str(out)]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "needs, before the first query" not in err and "127.0.0.1:9" in err
    assert not out.exists()
