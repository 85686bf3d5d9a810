"""One CLI package: every command's flags and handler are in ``loadgen_sut/cli/<command>.py``, and nothing else parses
arguments (docs/architecture.md "Where things are": from a command or flag to its handler in one hop)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

from loadgen_sut.cli import SUBCOMMANDS

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
