"""Fixtures for the table and claim audit tests.

``audit`` runs a subcommand (``table`` or ``claim``) exactly as the ``inference-audit`` dispatcher does — the
module's ``add_arguments`` / ``run`` with :class:`UnusableInput` mapped to exit 2 — and captures its output.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from checker.cli import claim as claim_cli
from checker.cli import table as table_cli
from checker.findings import EXIT_UNUSABLE, UnusableInput
from schemas import schema_errors

FIXTURES = Path(__file__).resolve().parent / "fixtures"


@dataclass
class AuditRun:
    code: int
    out: str
    err: str
    report: dict[str, Any] | None

    def findings(self, rule: str | None = None, severity: str | None = None) -> list[dict[str, Any]]:
        assert self.report is not None, self.out + self.err
        return [
            f
            for f in self.report["findings"]
            if (rule is None or f["rule"] == rule) and (severity is None or f["severity"] == severity)
        ]


RunAudit = Callable[..., AuditRun]


@pytest.fixture
def audit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> RunAudit:
    def run(command: str, *argv: str, json_report: bool = True) -> AuditRun:
        module = {"table": table_cli, "claim": claim_cli}[command]
        parser = argparse.ArgumentParser(prog=f"inference-audit {command}")
        module.add_arguments(parser)
        out_json = tmp_path / f"report-{command}.json"
        if out_json.exists():
            out_json.unlink()
        args = [*argv, "--json", str(out_json)] if json_report else list(argv)
        try:
            code = module.run(parser.parse_args(args))
        except UnusableInput as exc:
            print(f"inference-audit: error: {exc}", file=sys.stderr)
            code = EXIT_UNUSABLE
        captured = capsys.readouterr()
        report = json.loads(out_json.read_text()) if out_json.exists() else None
        # every report must match its schema (the 1,448-row official table is validated by its own test)
        if report is not None and (report["kind"] == "claim-report" or report["table"]["rows"] <= 100):
            assert schema_errors(report, report["kind"]) == []
        return AuditRun(code, captured.out, captured.err, report)

    return run


@pytest.fixture
def rows_table() -> Path:
    """20 rows copied unchanged from the official v5.1 results table."""
    return FIXTURES / "v51-rows.json"


@pytest.fixture
def peers_dir() -> Path:
    return FIXTURES / "peers"
