"""The argument parser every command uses (``inference-audit`` and its subcommands, ``check-submission``): each
option's help shows its default. Light on purpose (argparse only): ``inference-audit --help`` imports it."""

from __future__ import annotations

import argparse
from typing import Any


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions and epilogs as written; an option's help ends with its default where it has one that its text
    does not already give (``None``, ``False``, ``[]`` and suppressed defaults are not shown)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help
        if text is None or not action.option_strings or "default" in text.lower():
            return text
        default = action.default
        if default is None or default is False or default is argparse.SUPPRESS or default == []:
            return text
        return f"{text} (default: %(default)s)"


class Parser(argparse.ArgumentParser):
    """An argument parser with :class:`HelpFormatter`; the sub-parsers of its subcommands are of this class too."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)
