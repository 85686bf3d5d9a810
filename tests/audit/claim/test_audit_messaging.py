"""The messaging rules, claim checklist and compatibility table as data (``rules/data/messaging.yaml``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from rules.build_messaging import main as build_main
from rules.messaging import Compatibility, load_messaging

REPO = Path(__file__).resolve().parents[3]


def test_rules_and_checklist_loaded() -> None:
    md = load_messaging()
    ids = {r.id for r in md.messaging_rules}
    assert {
        "CMP-01",
        "CMP-05",
        "CMP-06",
        "CMP-07",
        "CMP-08",
        "DRV-01",
        "DRV-02",
        "PWR-01",
        "CMB-01",
        "VER-02",
        "AVL-02",
        "AVL-03",
        "LBL-02",
        "TM-01",
    } <= ids
    # every checklist step points at known rules, every rule carries its quoted source
    assert all(set(step.rules) <= ids for step in md.claim_checklist)
    assert all(
        r.quotes and r.cite.startswith(("MSG:", "COMPAT:", "SUBRULES:", "RULES_HEAD:", "POWER:"))
        for r in md.messaging_rules
    )
    assert md.sentence("unverified_statement") == "Result not verified by MLCommons Association."


@pytest.mark.parametrize(
    ("bench", "suite", "a", "b", "expected"),
    [
        ("llama2-70b-99", "datacenter", "4.0", "5.1", Compatibility.COMPATIBLE),
        ("llama2-70b-99.9", "datacenter", "v6.0", "5.1", Compatibility.COMPATIBLE),
        ("mixtral-8x7b", "datacenter", "4.0", "5.1", Compatibility.INCOMPATIBLE),
        ("resnet", "datacenter", "5.0", "5.1", Compatibility.INCOMPATIBLE),  # no datacenter ResNet in 5.1
        ("resnet", "edge", "5.0", "5.1", Compatibility.COMPATIBLE),
        ("llama3.1-8b", "datacenter", "5.1", "6.1", Compatibility.UNKNOWN),  # the table has no 6.1 column
        ("not-a-benchmark", "datacenter", "5.0", "5.1", Compatibility.UNKNOWN),
        ("whisper", "edge", "5.1", "5.1", Compatibility.COMPATIBLE),
    ],
)
def test_compatibility_table(bench: str, suite: str, a: str, b: str, expected: Compatibility) -> None:
    assert load_messaging().compatibility_of(bench, suite, a, b) is expected


@pytest.mark.shared
def test_generated_file_is_up_to_date(shared_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "messaging.yaml"
    assert build_main(["--facts", str(shared_dir / "reference/mlperf-facts.yaml"), "--out", str(out)]) == 0
    assert out.read_text() == (REPO / "rules/data/messaging.yaml").read_text()


def test_dispatcher_end_to_end(tmp_path: Path) -> None:
    """The real ``inference-audit`` entry point (exit codes 1 and 2; each start costs seconds, so only two)."""
    fixtures = Path(__file__).resolve().parents[1] / "fixtures"
    table = fixtures / "v51-rows.json"

    def cli(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "loadgen_sut.cli", *argv],
            capture_output=True,
            text=True,
            cwd=REPO,
            timeout=120,
            check=False,
        )

    broken = cli("claim", str(fixtures / "claims/CMP-05/break.yaml"), "--table", str(table))
    assert broken.returncode == 1 and "NOT COMPARABLE" in broken.stdout
    missing = cli("claim", str(tmp_path / "nope.yaml"))
    assert missing.returncode == 2 and "nope.yaml" in missing.stderr and "Traceback" not in missing.stderr
