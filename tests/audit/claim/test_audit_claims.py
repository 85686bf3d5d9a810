"""``inference-audit claim``: the issue's example, verdicts, citation text, --text claims and unusable input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from schemas import schema_errors

CLAIMS = Path(__file__).resolve().parents[1] / "fixtures" / "claims"

ISSUE_EXAMPLE = """\
text: "System A delivers 1.5x the tokens/s per GPU of System B on Llama 2 70B"
results:
  - {id: "5.1-0001", benchmark: llama2-70b-99, scenario: Offline}   # looked up in --table
  - {id: "own", benchmark: llama2-70b-99, scenario: Offline,        # a number not in the table
     result: 40000, units: Tokens/s, accelerators: 8}
metric: tokens/s per accelerator        # optional; read from the text when absent
source: mlcommons                       # or "own measurement" for numbers not from a submission
"""


def test_issue_example(audit, rows_table: Path, tmp_path: Path) -> None:
    path = tmp_path / "claim.yaml"
    path.write_text(ISSUE_EXAMPLE)
    run = audit("claim", str(path), "--table", str(rows_table))
    assert run.code == 1
    report = run.report
    assert not schema_errors(report, "claim-report")
    assert report["claim"]["metric"] == {
        "text": "tokens/s per accelerator",
        "base": "tokens/s",
        "derivations": ["per-accelerator"],
        "from_text": False,
    }
    r1, r2 = report["results"]
    assert (r1["origin"], r1["verified"], r1["result"], r1["accelerators"], r1["table_row"]) == (
        "table",
        True,
        27803.9,
        8,
        2,
    )
    assert (r2["origin"], r2["verified"], r2["mlperf"]) == ("given", False, True)
    assert report["verdict"] == "comparable-with-disclosures"
    missing = {r["rule"] for r in report["rules"] if r["satisfied"] is False}
    # own number not labelled unverified; derived figure not labelled; body lacks organization / version / system
    assert {"VER-02", "CMP-06", "DRV-01", "LBL-01"} <= missing
    # 1.5x: 40000/8 over 27803.9/8 is 1.44x, within 5 % of 1.5 — the factor itself is supported
    assert not any(r["rule"] == "VER-05" and r["satisfied"] is False for r in report["rules"])
    foot = report["footnote"]
    assert foot[0].startswith("[1] MLPerf® v5.1 Inference Closed llama2-70b-99 Offline. Retrieved from ")
    assert foot[0].endswith("entry 5.1-0001. Result verified by MLCommons Association.")
    assert foot[1].startswith("[2] MLPerf® v5.1 Inference llama2-70b-99 Offline, unverified result")
    assert foot[1].endswith("Result not verified by MLCommons Association.")
    assert any(line.startswith("Unverified results have not been through an MLPerf® review") for line in foot)
    assert any(line.startswith("Per-accelerator figures are the system result divided by") for line in foot)


def test_comparable_claim_prints_citation(audit, rows_table: Path, tmp_path: Path) -> None:
    src = (CLAIMS / "TM-01" / "honour.yaml").read_text()
    path = tmp_path / "c.yaml"
    path.write_text(
        src + "retrieved: 10 September 2025\nurl: https://mlcommons.org/benchmarks/inference-datacenter/\n"
    )
    run = audit("claim", str(path), "--table", str(rows_table))
    assert run.code == 0 and run.report["verdict"] == "comparable"
    assert run.report["footnote"][:2] == [
        "[1] MLPerf® v5.1 Inference Closed llama2-70b-99 Offline. Retrieved from "
        "https://mlcommons.org/benchmarks/inference-datacenter/ 10 September 2025, entry 5.1-0061. "
        "Result verified by MLCommons Association.",
        "[2] MLPerf® v5.1 Inference Closed llama2-70b-99 Offline. Retrieved from "
        "https://mlcommons.org/benchmarks/inference-datacenter/ 10 September 2025, entry 5.1-0001. "
        "Result verified by MLCommons Association.",
    ]
    # the claim carries no footnote: publishable with the one printed, not as written
    assert run.out.splitlines()[-1] == (
        "verdict: results COMPARABLE; the claim may be published with the citation and footnote above (it carries "
        "none) (0 errors, 0 warnings)"
    )
    # the same claim carrying the footnote the tool wrote: as written, and LBL-02 judged it complete
    with_footnote = tmp_path / "with-footnote.yaml"
    with_footnote.write_text(path.read_text() + yaml.safe_dump({"footnote": "\n".join(run.report["footnote"])}))
    again = audit("claim", str(with_footnote), "--table", str(rows_table))
    assert again.code == 0 and again.report["verdict"] == "comparable"
    assert any(i["rule"] == "LBL-02" and i["satisfied"] for i in again.report["rules"]), again.report["rules"]
    assert again.out.splitlines()[-1] == (
        "verdict: results COMPARABLE; the claim may be published as written (0 errors, 0 warnings)"
    )


def test_quoted_number_differs_from_table(audit, rows_table: Path, tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(
        (CLAIMS / "TM-01" / "honour.yaml")
        .read_text()
        .replace("- id: 5.1-0001", "- id: 5.1-0001\n  result: 30000")
    )
    run = audit("claim", str(path), "--table", str(rows_table))
    assert run.code == 1 and run.report["verdict"] == "not-comparable"
    hit = run.findings("VER-05", "error")
    assert hit and "the table says 27803.9 Tokens/s" in hit[0]["message"]
    assert run.out.splitlines()[-1].startswith(
        "verdict: results NOT COMPARABLE (VER-05); the claim may NOT be published as written: fix VER-05 (1 errors"
    )


def test_a_factor_the_numbers_do_not_support_is_no_publishable_claim(audit, rows_table: Path) -> None:
    """Issue 23: the results are comparable, the claim is not: the last line says both."""
    text = (
        "MLPerf® Inference v5.1 Closed, llama2-70b-99 Offline: Lenovo ThinkSystem SR680a V3 (8x B200-SXM-180GB, "
        "TensorRT) (5.1-0061) delivers 9.7x the tokens/s of AMD Supermicro AS-8125GS-TNMR2 (5.1-0001)"
    )
    run = audit("claim", "--text", text, "--table", str(rows_table))
    assert run.code == 1 and run.report["verdict"] == "comparable" and run.findings("VER-05", "error")
    lines = run.out.splitlines()
    assert lines[0].startswith("inference-audit claim: --text (round v5.1")
    assert lines[-1] == (
        "verdict: results COMPARABLE; the claim may NOT be published as written: fix VER-05 (1 errors, 0 warnings)"
    )


def test_text_claim(audit, rows_table: Path) -> None:
    text = (
        "MLPerf® Inference v5.1 Closed, Llama 2 70B (llama2-70b-99) Offline: Lenovo ThinkSystem SR680a V3 "
        "(5.1-0061) with 8 B200 GPUs delivered 102909 tokens/s, 3.7x the 27803.9 tokens/s of AMD's Supermicro "
        "AS-8125GS-TNMR2 (5.1-0001) with 8 MI300X GPUs."
    )
    run = audit("claim", "--text", text, "--table", str(rows_table))
    assert run.code == 0, run.out
    assert [r["label"] for r in run.report["results"]] == [
        "5.1-0061 llama2-70b-99 Offline",
        "5.1-0001 llama2-70b-99 Offline",
    ]
    assert run.report["claim"]["path"] is None and run.report["claim"]["metric"]["from_text"] is True


def test_text_claim_reads_derived_metric(audit, rows_table: Path) -> None:
    text = (
        "MLPerf® Inference v5.1 Closed Llama 2 70B (llama2-70b-99) Offline: Azure ND_GB200_v6 (5.1-0008) gives "
        "2x the tokens/s per GPU of AMD's Supermicro AS-8125GS-TNMR2 (5.1-0001)."
    )
    run = audit("claim", "--text", text, "--table", str(rows_table))
    assert run.report["claim"]["metric"]["derivations"] == ["per-accelerator"]
    rules = {r["rule"] for r in run.report["rules"] if r["satisfied"] is False}
    # counts 4 vs 8 not in the text; 13015.4 vs 3475.5 per GPU is 3.7x, not 2x; derived figure unlabelled
    assert {"CMP-06", "VER-05", "DRV-01"} <= rules
    assert run.code == 1


def test_retrieved_gives_the_footnote_its_date(audit, rows_table: Path, tmp_path: Path) -> None:
    text = (
        "MLPerf® Inference v5.1 Closed, llama2-70b-99 Offline: Lenovo ThinkSystem SR680a V3 (8x B200-SXM-180GB, "
        "TensorRT) (5.1-0061) delivers 3.7x the tokens/s of AMD Supermicro AS-8125GS-TNMR2 (5.1-0001)"
    )
    run = audit("claim", "--text", text, "--table", str(rows_table), "--retrieved", "2025-09-10")
    assert run.code == 0, run.out
    cited = [line for line in run.report["footnote"] if "Retrieved from" in line]
    assert len(cited) == 2 and all("/inference-datacenter/ 10 September 2025, entry 5.1-00" in c for c in cited)
    # a claim file that says another date: one of the two is wrong, so neither is taken
    path = tmp_path / "claim.yaml"
    path.write_text(
        f"text: {json.dumps(text)}\nretrieved: 9 September 2025\nresults:\n"
        "  - {id: 5.1-0061, benchmark: llama2-70b-99, scenario: Offline}\n"
        "  - {id: 5.1-0001, benchmark: llama2-70b-99, scenario: Offline}\n"
    )
    run = audit("claim", str(path), "--table", str(rows_table), "--retrieved", "2025-09-10", json_report=False)
    assert run.code == 2 and "differ: give one" in run.err


@pytest.mark.parametrize("bad", ["2025-13-01", "10 September 2025", "2025-9-1", "\x1b[31m2025-09-10"])
def test_retrieved_takes_only_a_date(bad: str) -> None:
    from loadgen_sut.cli import main

    with pytest.raises(SystemExit) as stop:  # argparse's usage error, before any work
        main(["claim", "--text", "x", "--retrieved", bad])
    assert stop.value.code == 2


@pytest.mark.parametrize(
    ("content", "argv", "message"),
    [
        ("text: [unclosed\n", (), "invalid YAML"),
        ("text: hi\nresults: [{id: 5.1-0001, speed: 3}]\n", ("--table", "T"), "speed"),
        ("- just\n- a list\n", (), "a claim is a mapping"),
        (
            "text: hi\nresults: [{id: 5.1-0001, benchmark: llama2-70b-99, scenario: Offline}]\n",
            (),
            "pass --table FILE",
        ),
        ("text: hi\nresults: [{id: 5.1-0001}]\n", ("--table", "T"), "matches 8 rows"),
        (
            "text: hi\nresults: [{id: 5.1-0777, benchmark: resnet, scenario: Offline}]\n",
            ("--table", "T"),
            "not in the table and the entry gives no result",
        ),
        ("text: hi\nresults: [{file: missing.json}]\n", (), "missing.json"),
        ("text: hi\n", (), "names no results"),
    ],
)
def test_unusable_claims_exit_2(
    audit, rows_table: Path, tmp_path: Path, content: str, argv: tuple[str, ...], message: str
) -> None:
    path = tmp_path / "claim.yaml"
    path.write_text(content)
    args = [str(rows_table) if a == "T" else a for a in argv]
    run = audit("claim", str(path), *args, json_report=False)
    assert run.code == 2, run.out
    assert message in run.err


def test_yaml_error_names_file_and_line(audit, tmp_path: Path) -> None:
    path = tmp_path / "claim.yaml"
    path.write_text("text: ok\nresults:\n  - {id: [unclosed\n")
    run = audit("claim", str(path), json_report=False)
    assert run.code == 2 and f"{path}:" in run.err


def test_nothing_to_audit(audit) -> None:
    run = audit("claim", json_report=False)
    assert run.code == 2 and "nothing to audit" in run.err


def test_json_report_is_written_and_valid(audit, rows_table: Path, tmp_path: Path) -> None:
    run = audit("claim", str(CLAIMS / "CMP-09" / "break.yaml"), "--table", str(rows_table))
    report = run.report
    assert report is not None and report["schema_version"] == "1" and report["kind"] == "claim-report"
    assert not schema_errors(report, "claim-report")
    assert json.loads(json.dumps(report)) == report


def test_rows_of_the_table(audit, rows_table: Path, tmp_path: Path) -> None:
    text = (CLAIMS / "TM-01" / "honour.yaml").read_text().split("results:")[0]
    path = tmp_path / "c.yaml"
    path.write_text(text + "results:\n- {row: 13}\n- {row: 2}\n")
    run = audit("claim", str(path), "--table", str(rows_table))
    assert run.code == 0 and [r["table_row"] for r in run.report["results"]] == [13, 2]


def test_server_figures_called_scheduled(audit, rows_table: Path, tmp_path: Path) -> None:
    """D-16: published Server figures are completed rates; calling them scheduled is caught."""
    src = (CLAIMS / "CMP-09" / "honour.yaml").read_text()
    path = tmp_path / "c.yaml"
    path.write_text(src.replace("completed tokens/s", "scheduled tokens/s"))
    run = audit("claim", str(path), "--table", str(rows_table))
    assert run.code == 1
    d16 = [r for r in run.report["rules"] if r["rule"] == "D-16" and r["satisfied"] is False]
    assert d16 and "completed rates but the text calls them scheduled" in d16[0]["reason"]


def test_own_server_figure_needs_its_basis(audit, rows_table: Path, tmp_path: Path) -> None:
    src = (CLAIMS / "D-16" / "honour.yaml").read_text()
    path = tmp_path / "c.yaml"
    path.write_text(src.replace("  server_metric: completed\n", ""))
    run = audit("claim", str(path), "--table", str(rows_table))
    assert run.code == 1
    assert any(
        r["rule"] == "D-16" and r["satisfied"] is False and "unstated basis" in r["reason"]
        for r in run.report["rules"]
    )


LEGEND = (
    "The MLPerf name and logo are registered and unregistered trademarks of MLCommons Association in the United "
    "States and other countries. All rights reserved. Unauthorized use strictly prohibited. See www.mlcommons.org for "
    "more information."
)


def _honour_with(tmp_path: Path, **extra: Any) -> Path:
    claim = yaml.safe_load((CLAIMS / "TM-01" / "honour.yaml").read_text())
    claim.update(extra)
    path = tmp_path / "claim.yaml"
    path.write_text(yaml.safe_dump(claim, allow_unicode=True))
    return path


def test_a_footnote_lacking_the_version_division_and_benchmark_is_no_footnote(audit, rows_table: Path, tmp_path: Path) -> None:
    """LBL-02's fields (MSG:50) are all asked for: IDs, scenario, 'Inference', 'Retrieved' and the legend alone are not
    enough (a red team's footnote that passed)."""
    path = _honour_with(tmp_path, footnote=f"Inference Offline 5.1-0061 5.1-0001 Retrieved {LEGEND}")
    run = audit("claim", str(path), "--table", str(rows_table))
    assert run.code == 1
    (hit,) = run.findings("LBL-02", "error")
    for part in ("version v5.1 of 5.1-0061", "division Closed of 5.1-0001", "benchmark llama2-70b-99 of 5.1-0061"):
        assert part in hit["message"], hit["message"]
    assert "the claim must carry a footnote that gives" in hit["message"]  # one verb phrase, not two
    assert run.out.splitlines()[-1].endswith("the claim may NOT be published as written: fix LBL-02 (1 errors, 0 warnings)")


@pytest.mark.parametrize("hidden", ["\u202e", "\x1b]8;;http://evil\x07", "\x00", "\u2066"])
def test_a_footnote_with_hidden_characters_is_refused(audit, rows_table: Path, tmp_path: Path, hidden: str) -> None:
    first = audit("claim", str(_honour_with(tmp_path)), "--table", str(rows_table))
    complete = "\n".join(first.report["footnote"])
    run = audit("claim", str(_honour_with(tmp_path, footnote=complete.replace("5.1-0001", f"{hidden}5.1-0001"))),
                "--table", str(rows_table))  # fmt: skip
    assert run.code == 1
    (hit,) = run.findings("LBL-02", "error")
    assert "control or bidi characters" in hit["message"], hit["message"]


def test_a_footnote_of_own_results_only_is_checked_too(audit, tmp_path: Path) -> None:
    """No verified result: the footnote still needs the trademark legend (it was not looked at)."""
    claim = {
        "text": "ExampleCo EX-8 with 8 GPUs: 30,000 tokens/s (unverified) on MLPerf® Inference v5.1 Llama 2 70B "
        "(llama2-70b-99) Offline. Result not verified by MLCommons Association.",
        "results": [{"id": "own", "benchmark": "llama2-70b-99", "scenario": "Offline", "result": 30000,
                     "units": "Tokens/s", "accelerators": 8, "submitter": "ExampleCo", "system": "EX-8",
                     "harness": "mlperf-loadgen", "source": "own measurement"}],
        "footnote": "hi",
    }  # fmt: skip
    path = tmp_path / "own.yaml"
    path.write_text(yaml.safe_dump(claim, allow_unicode=True))
    run = audit("claim", str(path))
    assert run.code == 1
    (hit,) = run.findings("LBL-02", "error")
    assert "trademark legend" in hit["message"], hit["message"]


def test_a_printed_footnote_with_a_placeholder_is_not_ready(audit, rows_table: Path, tmp_path: Path) -> None:
    src = yaml.safe_load((CLAIMS / "CMB-01" / "break.yaml").read_text())
    src["text"] = src["text"].rstrip(".") + " (geometric mean)."
    path = tmp_path / "composite.yaml"
    path.write_text(yaml.safe_dump(src, allow_unicode=True))
    run = audit("claim", str(path), "--table", str(rows_table))
    assert any("<describe the method of combination>" in line for line in run.report["footnote"])
    assert "once the claim file's combination: fills in their placeholder" in run.out.splitlines()[-1], run.out


def test_an_own_number_from_another_tool_is_cited_as_no_mlperf_result(audit, tmp_path: Path) -> None:
    claim = {
        "text": "ExampleCo EX-8: 30,000 tokens/s (unverified) on Llama 2 70B Offline. Result not verified by "
        "MLCommons Association.",
        "results": [{"id": "own", "result": 30000, "units": "Tokens/s", "source": "own measurement"}],
    }
    path = tmp_path / "own.yaml"
    path.write_text(yaml.safe_dump(claim))
    run = audit("claim", str(path))
    first = run.report["footnote"][0]
    assert "not an MLPerf® result" in first and "Inference ," not in first and "MLPerf® v" not in first, first
