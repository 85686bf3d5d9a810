"""Peak memory of ``inference-audit table`` on a large generated CSV (a benchmark, not a timed test).

Generates, in a temporary directory, a summary CSV in the checker's 28-column layout
(:data:`checker.results.SUMMARY_CSV_COLUMNS`) whose rows are the v5.1 ``summary_results.json`` rows
repeated (each copy under its own system name and location, so rows stay distinct), then for each size

- reads the CSV with the ``csv`` module into a list of rows in a child process (the baseline: what holding
  the table's cells costs at least), and
- runs ``inference-audit table FILE --round v5.1`` in a child process,

and prints each child's peak RSS (``resource.getrusage(RUSAGE_CHILDREN)`` after the child, alone, was
reaped) and the bytes per row above a bare interpreter.

    python3 bench/table_memory.py                   # 10^5 and 10^6 rows
    python3 bench/table_memory.py --rows 100000     # one size
    python3 bench/table_memory.py --json OUT.json   # also write the numbers

The issue's target: the 10^6-row table in < 1 GB. ``table`` streams the rows (each checked and let go; without
``--json`` / ``--verbose`` only the findings the summary prints are held), so what grows with the rows is the
duplicate-key hashes (~200 B a row); ``--table-arg`` adds arguments (e.g. ``--table-arg=--json=/tmp/r.json``).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from checker.results import SUMMARY_CSV_COLUMNS  # noqa: E402

DEFAULT_SOURCE = REPO.parent / "shared" / "data" / "mlperf-inference-v5.1" / "summary_results.json"
if not DEFAULT_SOURCE.exists():
    DEFAULT_SOURCE = Path("/work/shared/data/mlperf-inference-v5.1/summary_results.json")

# checker summary CSV column <- official summary_results.json key
FROM_JSON = {
    "Organization": "Submitter",
    "Availability": "Availability",
    "Division": "Category",
    "SystemType": "Suite",
    "SystemName": "System",
    "Platform": "Platform",
    "Model": "UsedModel",
    "MlperfModel": "Model",
    "Scenario": "Scenario",
    "Result": "Performance_Result",
    "Accuracy": "Accuracy",
    "number_of_nodes": "Nodes",
    "host_processor_model_name": "Processor",
    "host_processors_per_node": "host_processors_per_node",
    "host_processor_core_count": "host_processor_core_count",
    "accelerator_model_name": "Accelerator",
    "accelerators_per_node": "a#",
    "Location": "Location",
    "framework": "Software",
    "operating_system": "operating_system",
    "notes": "Notes",
    "compliance": "compliance",
    "errors": "errors",
    "version": "version",
    "inferred": "inferred",
    "has_power": "has_power",
    "Units": "Performance_Units",
    "weight_data_types": "weight_data_types",
}
assert tuple(FROM_JSON) == SUMMARY_CSV_COLUMNS


def generate(path: Path, rows: int, source: Path) -> None:
    records = [
        r for r in json.loads(source.read_text(encoding="utf-8")) if r.get("Performance_Result") is not None
    ]
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(SUMMARY_CSV_COLUMNS)
        for i in range(rows):
            rec = records[i % len(records)]
            copy = i // len(records)
            cells = []
            for col, key in FROM_JSON.items():
                value = rec.get(key, "")
                value = "" if value is None else str(value)
                if copy and col == "SystemName":
                    value = f"{value} #{copy}"
                elif copy and col in ("Platform", "Location"):
                    value = value.replace(rec["Platform"], f"{rec['Platform']}_{copy}")
                cells.append(value)
            writer.writerow(cells)


BASELINE = (
    "import csv, sys\n"
    "with open(sys.argv[1], newline='', encoding='utf-8') as fh:\n"
    "    rows = list(csv.reader(fh))\n"
    "print(len(rows))\n"
)
EMPTY = "pass\n"


def peak_rss_of(cmd: list[str]) -> tuple[int, float, int]:
    """(peak RSS in bytes, wall seconds, exit code) of one child; children run one at a time."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=REPO)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if proc.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)}: exit {proc.returncode}\n{proc.stderr[-2000:]}")
    # ru_maxrss of RUSAGE_CHILDREN is the largest child so far (KiB on Linux): run the smallest first.
    if after < before:
        after = before
    return after * 1024, wall, proc.returncode


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, action="append", help="table sizes (default 100000 and 1000000)")
    ap.add_argument("--source", type=Path, default=DEFAULT_SOURCE, help="summary_results.json to repeat")
    ap.add_argument("--json", type=Path, help="also write the numbers here")
    ap.add_argument(
        "--table-arg", action="append", default=[], help="extra argument for inference-audit table (repeatable)"
    )
    args = ap.parse_args(argv)
    sizes = sorted(args.rows or [100_000, 1_000_000])
    exe = [sys.executable, "-m", "loadgen_sut.cli", "table"]
    results = []
    # RUSAGE_CHILDREN reports the maximum over all reaped children, so every measurement runs in a fresh
    # grandchild: this process forks one runner per measurement and reads that runner's own children.
    with tempfile.TemporaryDirectory(prefix="table-memory-") as tmp:
        empty_rss, _, _ = _measure([sys.executable, "-c", EMPTY])
        print(f"bare interpreter: {empty_rss / 2**20:8.1f} MiB")
        for n in sizes:
            csv_path = Path(tmp) / f"table-{n}.csv"
            generate(csv_path, n, args.source)
            size = csv_path.stat().st_size
            base_rss, base_s, _ = _measure([sys.executable, "-c", BASELINE, str(csv_path)])
            table_rss, table_s, code = _measure([*exe, str(csv_path), "--round", "v5.1", *args.table_arg])
            row = {
                "rows": n,
                "csv_bytes": size,
                "baseline_peak_rss": base_rss,
                "table_peak_rss": table_rss,
                "baseline_bytes_per_row": (base_rss - empty_rss) / n,
                "table_bytes_per_row": (table_rss - empty_rss) / n,
                "baseline_s": round(base_s, 2),
                "table_s": round(table_s, 2),
                "table_exit": code,
            }
            results.append(row)
            print(
                f"{n:>9} rows ({size / 2**20:7.1f} MiB CSV): csv.reader list {base_rss / 2**20:8.1f} MiB "
                f"({row['baseline_bytes_per_row']:7.0f} B/row, {base_s:6.1f} s); "
                f"inference-audit table {table_rss / 2**20:8.1f} MiB "
                f"({row['table_bytes_per_row']:7.0f} B/row, {table_s:6.1f} s, exit {code})"
            )
            csv_path.unlink()
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


def _measure(cmd: list[str]) -> tuple[int, float, int]:
    """Run ``cmd`` under a fresh runner process, so its peak RSS is not hidden by an earlier, larger child."""
    runner = (
        "import json, sys\n"
        f"sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})\n"
        "from table_memory import peak_rss_of\n"
        "print(json.dumps(peak_rss_of(json.loads(sys.argv[1]))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", runner, json.dumps(cmd)],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=os.environ,
    )
    if out.returncode != 0:
        sys.exit(out.stderr or out.stdout)
    rss, wall, code = json.loads(out.stdout.strip().splitlines()[-1])
    return int(rss), float(wall), int(code)


if __name__ == "__main__":
    sys.exit(main())
