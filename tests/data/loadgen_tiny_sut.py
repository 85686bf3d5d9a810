"""Produce genuine LoadGen logs with a tiny in-process SUT (one process per run: LoadGen's config
loading is process-global).

The SUT answers each sample with token ids. By default the ids are the UTF-8 bytes of a text + 3
(the byte tokenizer of ``tests/data/byte_tokenizer.py``: ids 0-2 are PAD/BOS/EOS), followed by one
EOS; the text is the sample's ``reference`` from ``--texts`` (JSONL) or ``"sample <index>"``.
With ``--ids`` (JSONL, one ``{"ids": [...]}`` per sample, e.g. made by a real tokenizer) the SUT
answers with exactly those ids (include the EOS you want).
``--fault`` injects one of the mistakes TEST06 is meant to catch:

- ``first-token``: ``FirstTokenComplete`` reports a token that is not the start of the output;
- ``double-eos``: the output ends with two EOS tokens;
- ``count``: ``n_tokens`` is one more than the ids returned;
- ``skip-first``: the final output leaves out the first token (the llama2-70b reference Server SUT bug).

Usage: python loadgen_tiny_sut.py OUTDIR --scenario Server|Offline [--mode accuracy|performance]
       [--samples N] [--texts FILE.jsonl | --ids FILE.jsonl] [--audit-config FILE] [--fault KIND] [--dtype int32|int64]
       [--eos ID]  (the EOS id the outputs end with: 2 by default, e.g. 128009 for Llama-3 instruct models)
"""

from __future__ import annotations

import argparse
import array
import json
import os
import shutil
import sys
from pathlib import Path

import mlperf_loadgen as lg

EOS = 2
OFFSET = 3


def encode(text: str) -> list[int]:
    return [b + OFFSET for b in text.encode("utf-8")]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir", type=Path)
    ap.add_argument("--scenario", choices=["Server", "Offline"], required=True)
    ap.add_argument("--mode", choices=["accuracy", "performance"], default="accuracy")
    ap.add_argument("--samples", type=int, default=16)
    ap.add_argument("--texts", type=Path)
    ap.add_argument("--ids", type=Path)
    ap.add_argument("--audit-config", type=Path)
    ap.add_argument(
        "--fault", choices=["none", "first-token", "double-eos", "count", "skip-first"], default="none"
    )
    ap.add_argument("--dtype", choices=["int32", "int64"], default="int32")
    ap.add_argument("--eos", type=int, default=EOS)
    args = ap.parse_args(argv)

    texts = [f"sample {i}" for i in range(args.samples)]
    if args.texts:
        rows = [
            json.loads(line) for line in args.texts.read_text(encoding="utf-8").splitlines() if line.strip()
        ]
        texts = [str(r["reference"]) for r in rows][: args.samples]
    given_ids: list[list[int]] | None = None
    if args.ids:
        rows = [json.loads(line) for line in args.ids.read_text(encoding="utf-8").splitlines() if line.strip()]
        given_ids = [[int(i) for i in r["ids"]] for r in rows][: args.samples]
        texts = [""] * len(given_ids)
    n = len(texts)
    args.outdir.mkdir(parents=True, exist_ok=True)
    if args.audit_config:
        # LoadGen reads audit.config from the current directory only.
        shutil.copy(args.audit_config, args.outdir / "audit.config")
    typecode = "i" if args.dtype == "int32" else "q"
    itemsize = 4 if args.dtype == "int32" else 8
    keep: list[array.array[int]] = []  # buffers must outlive the LoadGen calls

    def respond(sample_id: int, index: int) -> None:
        ids = list(given_ids[index]) if given_ids is not None else [*encode(texts[index]), args.eos]
        if args.fault == "double-eos":
            ids.append(args.eos)
        first = ids[:1]
        if args.fault == "first-token":
            first = [ids[0] + 1]
        out = ids[1:] if args.fault == "skip-first" else ids
        n_tokens = len(out) + (1 if args.fault == "count" else 0)
        if args.scenario == "Server":
            fbuf = array.array(typecode, first)
            keep.append(fbuf)
            lg.FirstTokenComplete(
                [lg.QuerySampleResponse(sample_id, fbuf.buffer_info()[0], len(first) * itemsize)]
            )
        buf = array.array(typecode, out)
        keep.append(buf)
        lg.QuerySamplesComplete(
            [lg.QuerySampleResponse(sample_id, buf.buffer_info()[0], len(out) * itemsize, n_tokens)]
        )

    def issue(queries: list[lg.QuerySample]) -> None:
        for q in queries:
            respond(q.id, q.index)

    sut = lg.ConstructSUT(issue, lambda: None)
    qsl = lg.ConstructQSL(n, n, lambda s: None, lambda s: None)
    s = lg.TestSettings()
    s.scenario = lg.TestScenario.Server if args.scenario == "Server" else lg.TestScenario.Offline
    s.mode = lg.TestMode.AccuracyOnly if args.mode == "accuracy" else lg.TestMode.PerformanceOnly
    s.use_token_latencies = True
    s.server_target_qps = 2000
    s.offline_expected_qps = 2000
    s.min_duration_ms = 0
    s.min_query_count = n
    log = lg.LogSettings()
    log.log_output.outdir = str(args.outdir)
    log.enable_trace = False
    os.chdir(args.outdir)
    lg.StartTestWithLogSettings(sut, qsl, s, log)
    lg.DestroyQSL(qsl)
    lg.DestroySUT(sut)
    return 0


if __name__ == "__main__":
    sys.exit(main())
