"""``inference-audit dataset qwen3-vl SRC OUT.parquet``: prepare a data set once, before the runs that read it.

``qwen3-vl``: the Shopify product catalogue (a ``.parquet`` file or the Hugging Face snapshot directory) written
in the endpoints layout, its images re-saved by Pillow as the references send them
(:func:`loadgen_sut.datasets_vl.write_endpoints_layout`): loading that file skips the minutes of re-saving
48,289 images on every run. ``OUT`` must be a new file (it is never replaced). Exit status: 0 written,
2 unusable input.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from checker.findings import EXIT_OK
from loadgen_sut.datasets_vl import write_endpoints_layout


def add_arguments(parser: argparse.ArgumentParser) -> None:
    kinds = parser.add_subparsers(dest="dataset_kind", metavar="DATASET")
    kinds.required = True
    vl = kinds.add_parser(
        "qwen3-vl", help="the Shopify catalogue in the endpoints layout (images re-saved once)"
    )
    vl.add_argument("source", type=Path, metavar="SRC", help="the catalogue: a .parquet file or snapshot directory")
    vl.add_argument("out", type=Path, metavar="OUT", help="the .parquet file to write (a new file)")


def run(args: argparse.Namespace) -> int:
    n = write_endpoints_layout(args.source, args.out)
    print(f"{args.out}: {n} samples (endpoints layout, images re-saved by Pillow)")
    return EXIT_OK
