"""Claims on the published v6.1 summary, which has no result-ID column: a result is cited by organisation +
system + model + scenario (in ``--text`` and in a claim file's ``results``), and an accelerator count in
parentheses next to a system name ('(72x VR-288GB)') is not a claimed factor."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from checker.audit.claim.model import Claim, ClaimResultSpec
from checker.audit.claim.resolve import resolve, specs_from_text
from checker.audit.claim.text import stated_factor
from checker.audit.table.model import ResultTable
from checker.audit.table.parse import load_table
from checker.findings import UnusableInput
from rules import load_round


@pytest.fixture(scope="module")
def v61() -> ResultTable:
    from tests.conftest import find_shared

    shared = find_shared()
    path = shared / "data" / "mlperf-inference-v6.1" / "summary.json" if shared else None
    if path is None or not path.is_file():
        pytest.skip("shared/data/mlperf-inference-v6.1/summary.json is not present")
    return load_table(path)


RND = load_round("v6.1")


def _resolved(table: ResultTable, text: str) -> list[Any]:
    specs, _ = specs_from_text(text, table, RND)
    return resolve(Claim(text=text, results=tuple(specs)), None, table, RND).results


@pytest.mark.parametrize(
    "text",
    [
        "NVIDIA VR-NVL72_VR-288GB_aarch64x72_TRT qwen3-vl-235b-a22b Offline: 2,392.7 samples/s",
        "NVIDIA Vera Rubin NVL72 (72x VR-288GB_aarch64), VLM, Offline: 2,392.7 samples/s",
        "NVIDIA Vera Rubin NVL72 (72x VR-288GB) runs VLM Offline at 2392.7 samples/s",  # the wording
    ],
)
def test_text_cites_a_v61_row_by_identity(v61: ResultTable, text: str) -> None:
    (r,) = _resolved(v61, text)
    row = r.row
    assert row.platform == "VR-NVL72_VR-288GB_aarch64x72_TRT" and row.used_model == "qwen3-vl-235b-a22b"
    assert row.scenario == "Offline" and r.verified and r.id is None
    assert r.result == pytest.approx(2392.6979194588) and r.accelerators == 72
    assert r.label == "NVIDIA / NVIDIA Vera Rubin NVL72 (72x VR-288GB_aarch64) / VLM / Offline"


def test_two_rows_and_the_longer_name_wins(v61: ResultTable) -> None:
    text = (
        "NVIDIA VR-NVL72_VR-288GB_aarch64x72_TRT deepseek-r1 Offline vs NVIDIA "
        "GB300-NVL72_GB300-288GB_aarch64x72_TRT deepseek-r1 Offline"
    )
    rs = _resolved(v61, text)
    assert [r.row.platform for r in rs] == [
        "GB300-NVL72_GB300-288GB_aarch64x72_TRT",
        "VR-NVL72_VR-288GB_aarch64x72_TRT",
    ]
    assert all(r.benchmark == "deepseek-r1" and r.scenario.value == "Offline" for r in rs)
    # a system whose name is part of another's: the one the text names exactly
    names = sorted({r.platform for r in v61.rows if r.platform})
    pairs = [(a, b) for a in names for b in names if a != b and b.startswith(a)]
    for _short, long in pairs:
        row = next(r for r in v61.rows if r.platform == long)
        text = f"{row.submitter} {long} {row.used_model} {row.scenario}"
        assert {r.row.platform for r in _resolved(v61, text)} == {long}, text


def test_claim_file_cites_by_identity(v61: ResultTable, tmp_path: Path) -> None:
    spec = ClaimResultSpec(
        submitter="NVIDIA", system="VR-NVL72_VR-288GB_aarch64x72_TRT", benchmark="qwen3-vl-235b-a22b", scenario="Server"
    )
    out = resolve(Claim(text="x", results=(spec,)), None, v61, RND)
    (r,) = out.results
    assert r.row.scenario == "Server" and r.result == pytest.approx(2323.2698417825) and not out.findings
    # the published display name and the benchmark display name work too; a quoted number that differs is VER-05
    spec = ClaimResultSpec(
        submitter="nvidia", system="NVIDIA Vera Rubin NVL72", benchmark="VLM", scenario="server", result=2400.0
    )
    out = resolve(Claim(text="x", results=(spec,)), None, v61, RND)
    assert out.results[0].row is r.row and [f.rule for f in out.findings] == ["VER-05"]
    # the claim file schema takes submitter / system / benchmark / scenario as they are
    path = tmp_path / "claim.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "text": "NVIDIA Vera Rubin NVL72 (72x VR-288GB) qwen3-vl-235b-a22b Server",
                "results": [{"submitter": "NVIDIA", "system": "VR-NVL72_VR-288GB_aarch64x72_TRT",
                             "benchmark": "qwen3-vl-235b-a22b", "scenario": "Server"}],
            }
        )
    )  # fmt: skip
    from checker.audit.claim.parse import load_claim_file

    claim = load_claim_file(path)
    assert resolve(claim, path, v61, RND).results[0].row is r.row


def test_unresolvable_identities_say_why(v61: ResultTable) -> None:
    spec = ClaimResultSpec(submitter="NVIDIA", system="VR-NVL72", benchmark="deepseek-r1", scenario="SingleStream")
    with pytest.raises(UnusableInput, match=r"resolves to no row of the table .*no result-ID column.*organisation"):
        resolve(Claim(text="x", results=(spec,)), None, v61, RND)
    with pytest.raises(UnusableInput, match="pass --table"):
        resolve(Claim(text="x", results=(spec,)), None, None, RND)
    with pytest.raises(UnusableInput, match=r"no result-ID column.*NVIDIA VR-NVL72_VR-288GB_aarch64x72_TRT"):
        specs_from_text("6.1-0326 is the best", v61, RND)
    with pytest.raises(UnusableInput, match=r"names no results .*organisation, system, model and scenario"):
        _resolved(v61, "NVIDIA is fast")
    # an own number that names a system is still the claim's own
    own = ClaimResultSpec(system="VR-NVL72", benchmark="deepseek-r1", scenario="Offline", result=1.0, source="own")
    assert not resolve(Claim(text="x", results=(own,)), None, v61, RND).results[0].verified


def test_footnote_names_what_it_cites(v61: ResultTable, audit: Any) -> None:
    text = "NVIDIA VR-NVL72_VR-288GB_aarch64x72_TRT qwen3-vl-235b-a22b Offline: 2,392.7 samples/s"
    run = audit("claim", "--text", text, "--table", v61.path)
    assert run.report is not None, run.err
    foot = " ".join(run.report["footnote"])
    assert "entry None" not in foot
    assert "row NVIDIA / NVIDIA Vera Rubin NVL72 (72x VR-288GB_aarch64) / VLM / Offline (the table has no result ID)" in foot


@pytest.mark.parametrize(
    ("text", "factor"),
    [
        ("NVIDIA Vera Rubin NVL72 (72x VR-288GB) vs NVIDIA GB300 NVL72 (72x GB300-288GB)", None),
        ("NVIDIA Vera Rubin NVL72 (72x VR-288GB) is 1.8x faster than GB300 NVL72", 1.8),
        ("(72x GB300-288GB_aarch64) and (8x MI355X) and 8x H100 and 8x GPUs", None),
        ("VR200 (1.08x) over GB300", 1.08),
        ("3.7x the throughput", 3.7),
        ("2 times more", 2.0),
    ],
)
def test_an_accelerator_count_is_not_a_factor(text: str, factor: float | None) -> None:
    assert stated_factor(text) == factor


def test_real_system_names_hold_no_factor(v61: ResultTable) -> None:
    names = {r.system for r in v61.rows if r.system}
    assert any("(72x VR-288GB" in n for n in names)
    assert {n: stated_factor(n) for n in names if stated_factor(n) is not None} == {}
