"""The checker's and the auditors' commands: ``check`` (``check-submission``), ``table`` and ``claim``.

Each module defines its command's flags (``add_arguments(parser)``) and handles them (``run(args) -> int``);
:mod:`checker.cli.options` holds the flags they share. ``inference-audit`` (:mod:`loadgen_sut.cli`) dispatches to
them; ``check-submission`` is :func:`checker.cli.check.main`. A command lives with the package it drives: these
drive the checker, so they are here and import neither the harness nor its CLI.
"""
