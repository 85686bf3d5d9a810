"""Generate ``rules/data/messaging.yaml`` from the normative facts file.

Usage::

    python3 -m rules.build_messaging [--facts ../shared/reference/mlperf-facts.yaml] [--out rules/data/messaging.yaml]

What is copied (ids, quotes and citations unchanged): ``messaging_rules``, ``claim_auditor_checklist``,
``compatibility_table`` and the ``discrepancies`` the claim auditor relies on. What is added, and is this
package's own reading (marked ``derived`` in the output): the map from round benchmark ids to compatibility-table
rows, and the exact required sentences extracted from the quoted guideline text.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

import yaml

# Discrepancies the claim auditor reads (by id). D-16: the Server metric (scheduled vs completed).
DISCREPANCIES_USED = ("D-16",)

# Round benchmark id (as in rules/data/v*.yaml and the results tables) -> Compatibility Table row.
# The table names benchmarks, not ids (COMPAT:56-102); this map is this package's reading of those names.
COMPAT_ROW_OF_BENCHMARK: dict[str, str] = {
    "resnet": "ResNet-50 v1.5",
    "retinanet": "RetinaNet-ResNeXt50",
    "bert-99": "BERT",
    "bert-99.9": "BERT",
    "dlrm-v2-99": "DLRM-v2",
    "dlrm-v2-99.9": "DLRM-v2",
    "dlrm-v3": "DLRM-v3",
    "3d-unet-99": "3D U-Net",
    "3d-unet-99.9": "3D U-Net",
    "gptj-99": "GPT-J",
    "gptj-99.9": "GPT-J",
    "llama2-70b-99": "Llama2-70b",
    "llama2-70b-99.9": "Llama2-70b",
    "llama2-70b-interactive-99": "Llama2-70b",
    "llama2-70b-interactive-99.9": "Llama2-70b",
    "stable-diffusion-xl": "Stable-diffusion-xl",
    "mixtral-8x7b": "Mixtral-8x7b",
    "llama3.1-405b": "Llama 3.1 405B",
    "rgat": "RGAT",
    "llama3.1-8b": "Llama 3.1 8B",
    "llama3.1-8b-edge": "Llama 3.1 8B",
    "whisper": "Whisper",
    "deepseek-r1": "DeepSeek R1",
    "pointpainting": "Automotive PointPainting",
    "gpt-oss-120b": "GPT-OSS-20B",  # COMPAT:77 labels the row GPT-OSS-20B (see compatibility notes)
    "wan-2.2-t2v-a14b": "WAN2.2",
    "qwen3-vl-235b-a22b": "Qwen3",
    "yolo11": "Yolo11",
}

# (sentence key, rule id, regex over that rule's quote text) -> exact sentence required by the guidelines
_SENTENCES: tuple[tuple[str, str, str], ...] = (
    ("unverified_statement", "VER-02", r"“_(Result not verified by MLCommons Association\.)_”"),
    ("unverified_comparison_footnote", "CMP-08", r"“_(Unverified results have not been through .*?)_”"),
    ("verified_statement", "LBL-03", r"(Result verified by MLCommons Association\.)"),
    ("trademark_legend", "TM-01", r"^(The MLPerf name and logo are registered .*)$"),
)


def _quotes(rule: dict[str, Any]) -> list[dict[str, Any]]:
    quotes = rule.get("quotes") or []
    return [q for q in quotes if isinstance(q, dict)]


def build(facts: dict[str, Any], facts_path: str) -> dict[str, Any]:
    rules = facts["messaging_rules"]
    by_id = {r["id"]: r for r in rules}
    sentences: dict[str, dict[str, str]] = {}
    for key, rule_id, pattern in _SENTENCES:
        found = None
        for q in _quotes(by_id[rule_id]):
            m = re.search(pattern, " ".join(str(q["text"]).split()))
            if m:
                found = {"text": m.group(1), "rule": rule_id, "cite": f"{q['src']}:{q['lines'][0]}"}
                break
        if found is None:
            raise SystemExit(f"{facts_path}: no quote of {rule_id} matches {pattern!r}")
        sentences[key] = found
    discrepancies = [d for d in facts["discrepancies"] if d["id"] in DISCREPANCIES_USED]
    missing = set(DISCREPANCIES_USED) - {d["id"] for d in discrepancies}
    if missing:
        raise SystemExit(f"{facts_path}: discrepancies not found: {sorted(missing)}")
    table = facts["compatibility_table"]
    rows = set(table["inference"]["datacenter"]["rows"]) | set(table["inference"]["edge"]["rows"])
    unknown = {b: r for b, r in COMPAT_ROW_OF_BENCHMARK.items() if r not in rows}
    if unknown:
        raise SystemExit(f"{facts_path}: compatibility rows not in the table: {unknown}")
    srcs = facts["meta"]["sources"]
    used_srcs = {"MSG", "COMPAT", "SUBRULES", "RULES_HEAD", "POWER", "CHK_HEAD", "CHK_HEAD_compl", "RES_v5.1"}
    return {
        "generated_by": "python3 -m rules.build_messaging (do not edit by hand)",
        "generated_from": facts_path,
        "citation_format": facts["meta"]["citation_format"],
        "sources": {k: v for k, v in srcs.items() if k in used_srcs},
        "messaging_rules": rules,
        "claim_checklist": facts["claim_auditor_checklist"],
        "compatibility": {
            "legend": table["legend"],
            "notes": table.get("notes", []),
            "suites": {
                suite: {
                    "columns": [str(c) for c in spec["columns"]],
                    "rows": {
                        name: {
                            "groups": [[str(v) for v in g] for g in row.get("compatible_groups", [])],
                            "cite": row.get("cite"),
                        }
                        for name, row in spec["rows"].items()
                    },
                }
                for suite, spec in table["inference"].items()
            },
        },
        "derived": {
            "benchmark_rows": COMPAT_ROW_OF_BENCHMARK,
            "sentences": sentences,
        },
        "discrepancies": discrepancies,
    }


def main(argv: list[str] | None = None) -> int:
    here = Path(__file__).resolve().parent
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--facts", type=Path, default=here.parent.parent / "shared/reference/mlperf-facts.yaml"
    )
    parser.add_argument("--out", type=Path, default=here / "data" / "messaging.yaml")
    args = parser.parse_args(argv)
    try:
        facts = yaml.safe_load(args.facts.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        print(f"build_messaging: {args.facts}: {exc}", file=sys.stderr)
        return 2
    data = build(facts, "shared/reference/mlperf-facts.yaml")
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=110)
    args.out.write_text(
        "# GENERATED by rules/build_messaging.py from mlperf-facts.yaml; do not edit.\n" + text,
        encoding="utf-8",
    )
    print(
        f"wrote {args.out}: {len(data['messaging_rules'])} messaging rules, "
        f"{len(data['claim_checklist'])} checklist steps"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
