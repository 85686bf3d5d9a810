"""One CLI package: every command's flags and handler are in ``loadgen_sut/cli/<command>.py``, and nothing else parses
arguments (docs/architecture.md "Where things are": from a command or flag to its handler in one hop)."""

from __future__ import annotations

import argparse
import ast
import importlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from loadgen_sut.cli import SUBCOMMANDS, build_parser

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("checker", "rules", "loadgen_sut", "schemas")
# developer generators of committed data files (rules/data/*.yaml, rules/data/messaging.yaml): not user commands
GENERATORS = {"rules/build_data.py", "rules/build_messaging.py"}


def test_each_subcommand_is_a_module_of_the_cli_package() -> None:
    for name, (_help, module_name) in SUBCOMMANDS.items():
        assert module_name == f"loadgen_sut.cli.{name}", name
        module = importlib.import_module(module_name)
        assert callable(module.add_arguments) and callable(module.run), module_name


def _imports_argparse(path: Path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name == "argparse" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.module == "argparse":
            return True
    return False


def test_no_argument_parsing_outside_the_cli_package() -> None:
    stray = []
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            if rel.startswith("loadgen_sut/cli/") or rel in GENERATORS:
                continue
            if _imports_argparse(path):
                stray.append(rel)
    assert not stray, f"argument parsing outside loadgen_sut/cli/: {stray}"


def test_architecture_doc_names_each_command_module() -> None:
    readme = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = readme[readme.index("**From a command or flag to its handler:**") : readme.index("## Layout")]
    for name in SUBCOMMANDS:
        assert f"`{name}`" in section and f"`loadgen_sut/cli/{name}.py`" in section, name


def test_help_and_the_bare_command_list_the_commands_without_importing_them() -> None:
    """``inference-audit --help`` and ``inference-audit`` alone are quick: no subcommand module is imported (the
    harness's take seconds), and both list every command."""
    code = (
        "import sys\n"
        "from loadgen_sut.cli import SUBCOMMANDS, main\n"
        "try:\n"
        "    main(['--help'])\n"
        "except SystemExit as exc:\n"
        "    assert exc.code == 0, exc.code\n"
        "assert main([]) == 2\n"
        "print('imported:', sorted(m for _, m in SUBCOMMANDS.values() if m in sys.modules))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert proc.stdout.splitlines()[-1] == "imported: []"
    for name in SUBCOMMANDS:
        assert f"    {name} " in proc.stdout and f"    {name} " in proc.stderr, name  # --help, and the bare command
    assert "exit codes:" in proc.stdout


def _options(parser: argparse.ArgumentParser, label: str) -> Iterator[tuple[str, argparse.Action]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _options(sub, f"{label} {name}")
        elif action.option_strings:
            yield label, action


def test_every_option_has_help_and_shows_its_default() -> None:
    missing = []
    for name in SUBCOMMANDS:
        parser = build_parser(only=name)
        for label, action in _options(parser, "inference-audit"):
            if action.help is None:
                missing.append(f"{label} {action.option_strings[0]}")
    assert not missing, f"options without help: {missing}"
    commands = next(a for a in build_parser(only="run")._actions if isinstance(a, argparse._SubParsersAction))
    run_help = commands.choices["run"].format_help()
    assert "(default: 1024)" in run_help and "(default: completions)" in run_help  # --max-concurrency, --api
    assert "(default: None)" not in run_help
