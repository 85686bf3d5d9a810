"""qwen3-vl's responses to LoadGen are the answer's UTF-8 text, as the reference SUT hands them over.

mlcommons/inference ``multimodal/qwen3-vl/src/mlperf_inf_mm_q3vl/task.py`` (b66003e1) lines 329-344: the chat
completion's ``content`` encoded as UTF-8 goes to ``QuerySamplesComplete`` with ``n_tokens =
usage.completion_tokens``; ``evaluation.py`` line 216 reads each entry back as ``bytes.fromhex(data).decode("utf-8")``.
Here: real runs (the simulated engine, and the OpenAI engine over real HTTP to the test SSE server, which streams
" w0 w1 ..." with a usage count) write genuine LoadGen accuracy logs, read back as the reference reads them.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sse_server import SSEServer
from sut_helpers import http_engine, sim_engine

from loadgen_sut.datasets import load_dataset
from loadgen_sut.engines.factory import EngineSpec
from loadgen_sut.run.plan import RunRequest
from loadgen_sut.runner import RunOutcome, run
from loadgen_sut.settings import RunMode
from loadgen_sut.sut import BadOutput, LoadGenSUT, LoopThread, text_response
from rules.registry import load_round

BENCH = "qwen3-vl-235b-a22b"
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "qwen3_vl" / "make_fixture.py"
OFFLINE = "*.Offline.min_duration = 0\n*.Offline.min_query_count = 6\n"
SERVER_TOKENS = (
    "*.Server.target_qps = 200\n*.Server.min_duration = 0\n*.Server.min_query_count = 6\n"
    "*.Server.use_token_latencies = 1\n"
)


def _catalogue(root: Path) -> str:
    spec = importlib.util.spec_from_file_location("qwen3_vl_fixture", FIXTURE)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return f"shopify:{mod.write_hf(root / 'shopify')}"


def _run(root: Path, engine: EngineSpec, scenario: str, conf: str, dataset: str) -> RunOutcome:
    root.mkdir(parents=True, exist_ok=True)
    conf_path = root / f"{scenario}.conf"
    conf_path.write_text(conf, encoding="utf-8")
    request = RunRequest(
        round_name="v6.1", benchmark=BENCH, scenario=scenario, mode=RunMode.ACCURACY, engine=engine,
        out=root / "out", user_conf=conf_path, dataset=dataset, progress_interval_s=0,
    )  # fmt: skip
    return run(request, say=lambda _line: None)


def _entries(outcome: RunOutcome) -> list[dict[str, object]]:
    (log,) = outcome.run_dir.glob("accuracy/mlperf_log_accuracy.json")
    entries: list[dict[str, object]] = json.loads(log.read_text(encoding="utf-8"))
    return entries


def _text(hex_data: object) -> str:
    assert isinstance(hex_data, str)
    return bytes.fromhex(hex_data).decode("utf-8")  # evaluation.py line 216


def test_rules_data_says_what_the_reference_logs() -> None:
    for round_name in ("v6.0", "v6.1"):
        bench = load_round(round_name).benchmark(BENCH)
        assert bench is not None and bench.accuracy_log_format == "utf8_text"
        assert bench.cites["accuracy_log_format"].startswith("REF_Q3VL_TASK:329-344")
    llama = load_round("v6.1").benchmark("llama3.1-8b")
    assert llama is not None and llama.accuracy_log_format == "token_ids"  # the default: output ids


def test_text_response_bytes() -> None:
    arr = text_response('{"brand": "Café"}')
    assert arr.dtype == np.uint8 and arr.tobytes() == '{"brand": "Café"}'.encode()
    assert text_response("").nbytes == 0
    with pytest.raises(BadOutput, match="no UTF-8 form"):
        text_response("\ud800")  # a lone surrogate, as a JSON "\ud800" escape in the stream decodes
    with pytest.raises(BadOutput, match="not a string"):
        text_response(b"x")  # type: ignore[arg-type]
    lt = LoopThread()
    try:
        with pytest.raises(ValueError, match="response format 'int8'"):
            LoadGenSUT(None, lambda _i: None, report_first_token=False, loop_thread=lt, response_format="int8")  # type: ignore[arg-type, return-value]
    finally:
        lt.stop()


def test_simulated_run_logs_the_answers_as_text(tmp_path: Path) -> None:
    data = _catalogue(tmp_path)
    outcome = _run(tmp_path / "sim", sim_engine(model=BENCH), "Offline", OFFLINE, data)
    answers = {s.index: s.answer for s in load_dataset(data).samples}
    entries = _entries(outcome)
    assert sorted(int(str(e["qsl_idx"])) for e in entries) == list(range(6))
    for e in entries:
        assert _text(e["data"]) == answers[int(str(e["qsl_idx"]))]  # the JSON object, byte for byte
        assert "token_count" not in e  # qwen3-vl's mlperf.conf: use_token_latencies 0
    acc = outcome.record.accuracy
    assert acc is not None and acc["f1_hierarchical"] == 1.0 and acc["accuracy_log_format"] == "utf8_text"
    assert outcome.record.generation["response_format"] == "utf8_text"


def test_http_chat_run_logs_the_streamed_content(tmp_path: Path, sse_server: SSEServer) -> None:
    # text-only chat answers, no --tokenizer: an accuracy run of token ids would be refused; a text log needs none
    data = _catalogue(tmp_path)
    engine = http_engine(sse_server.url, api="chat", flavor="generic")
    streamed = "".join(f" w{k}" for k in range(12))  # what the server streams (12 tokens, usage 12)
    offline = _run(tmp_path / "offline", engine, "Offline", OFFLINE, data)
    assert [_text(e["data"]) for e in _entries(offline)] == [streamed] * 6
    acc = offline.record.accuracy
    assert acc is not None and acc["unparsable_responses"] == 6 and acc["f1_hierarchical"] == 0.0
    # with token latencies, LoadGen logs each n_tokens: the engine's usage count (what TPOT divides by)
    server = _run(tmp_path / "server", engine, "Server", SERVER_TOKENS, data)
    entries = _entries(server)
    assert [(_text(e["data"]), e["token_count"]) for e in entries] == [(streamed, 12)] * 6
    assert all(e["token_data"] == "" for e in entries)  # no tokenizer: the first token's text is not known
    acc = server.record.accuracy
    assert acc is not None and acc["tokens_per_sample"] == 12.0


# A text-response SUT under real LoadGen (accuracy mode, token latencies on) with an in-process engine that answers
# each sample one way: the SUT's text, an output it must decode, outputs it cannot hand over, a failure.
DRIVER = r"""
import json, sys
import mlperf_loadgen as lg
from loadgen_sut.engines.base import (Engine, EngineError, EngineInfo, ErrorKind, Failed, Finished, FirstToken,
    GenerationRequest)
from loadgen_sut.sut import LoadGenSUT, LoopThread

KINDS = ["text", "decoded", "no_text", "surrogate", "failed"]

class Answers(Engine):
    async def start(self): pass
    async def close(self): pass
    def info(self): return EngineInfo(kind="test", name="answers", model="m")
    def detokenize(self, ids):  # ids >= 65 read as characters; anything else: no tokenizer for them
        if ids and min(ids) >= 65:
            return "".join(chr(i) for i in ids)
        raise NotImplementedError("no tokenizer")
    async def generate(self, request, on_first_token=None):
        kind = KINDS[request.sample_index]
        if kind == "text":
            yield FirstToken(token_ids=(7000,))
            yield Finished(token_ids=(7000, 7001), n_tokens=7, text='{"brand": "Café"}')
        elif kind == "decoded":
            yield FirstToken(token_ids=(79,))
            yield Finished(token_ids=(79, 75), n_tokens=2)
        elif kind == "no_text":
            yield FirstToken(token_ids=(1,))
            yield Finished(token_ids=(1, 2), n_tokens=2)
        elif kind == "surrogate":
            yield FirstToken(token_ids=(7000,))
            yield Finished(token_ids=(7000,), n_tokens=1, text="\ud800")
        else:
            yield FirstToken(token_ids=(70,))
            yield Failed(error=EngineError(kind=ErrorKind.RESET, message="dropped"), partial_token_ids=(70, 71))

scenario, outdir = sys.argv[1], sys.argv[2]
ts = lg.TestSettings()
ts.scenario = getattr(lg.TestScenario, scenario)
ts.mode = lg.TestMode.AccuracyOnly
ts.use_token_latencies = True
ts.server_target_qps = 200
lt = LoopThread()
make = lambda i: GenerationRequest(sample_index=i, input_ids=(1,), max_new_tokens=8)
sut = LoadGenSUT(Answers(), make, report_first_token=scenario == "Server", loop_thread=lt, response_format="utf8_text")
handle = sut.construct()
qsl = lg.ConstructQSL(len(KINDS), len(KINDS), lambda s: None, lambda s: None)
lo = lg.LogOutputSettings(); lo.outdir = outdir; ls = lg.LogSettings(); ls.log_output = lo
lg.StartTestWithLogSettings(handle, qsl, ts, ls, "")
lt.stop()
print(json.dumps(sut.stats.as_dict()))
"""


@pytest.mark.parametrize("scenario", ["Offline", "Server"])
def test_text_responses_under_loadgen(tmp_path: Path, scenario: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER, scenario, str(tmp_path)], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    stats = json.loads(proc.stdout.strip().splitlines()[-1])
    assert stats["completed"] == 5 and stats["failures_by_kind"] == {"bad_output": 2, "reset": 1}
    log = json.loads((tmp_path / "mlperf_log_accuracy.json").read_text(encoding="utf-8"))
    by_kind = {["text", "decoded", "no_text", "surrogate", "failed"][e["qsl_idx"]]: e for e in log}
    got = {k: (bytes.fromhex(e["data"]).decode("utf-8"), e["token_count"]) for k, e in by_kind.items()}
    assert got == {
        "text": ('{"brand": "Café"}', 7),  # the engine's text; n_tokens its own count, not the 18 bytes
        "decoded": ("OK", 2),  # no text of its own: its ids decoded with its tokenizer
        "no_text": ("", 0),  # neither: bad_output, completed empty
        "surrogate": ("", 0),  # no UTF-8 form: bad_output, completed empty
        "failed": ("", 0),  # a failure completes empty with 0 tokens, as the reference's error path
    }
    if scenario == "Server":  # the first token's bytes: its ids decoded where the engine can
        first = {k: bytes.fromhex(e["token_data"]).decode("utf-8") for k, e in by_kind.items()}
        assert first == {"text": chr(7000), "decoded": "O", "no_text": "", "surrogate": chr(7000), "failed": "F"}
