"""A command lives with the package it drives: the checker's and the auditors' in ``checker/cli/<command>.py``, the
rules data's in ``rules/cli.py``, the harness's in ``loadgen_sut/cli/<command>.py``; each defines its flags and
handles them, one dispatcher (``loadgen_sut/cli/__init__.py``) imports them lazily, and nothing outside those CLI
modules parses arguments (docs/architecture.md "Where things are": from a command or flag to its handler in one hop)."""

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
# the CLI modules of each package: the only places that parse arguments
CLI_HOMES = {"checker": "checker/cli/", "rules": "rules/cli.py", "loadgen_sut": "loadgen_sut/cli/"}
# the commands that drive the checker (its submission checker and its table and claim auditors) and the rules data;
# every other command drives the harness
CHECKER_COMMANDS = {"check", "table", "claim"}
RULES_COMMANDS = {"rules"}


def _home(name: str) -> str:
    """The module ``inference-audit NAME`` must be: in the package it drives."""
    if name in CHECKER_COMMANDS:
        return f"checker.cli.{name}"
    if name in RULES_COMMANDS:
        return "rules.cli"
    return f"loadgen_sut.cli.{name}"


def _imported_packages(module_name: str) -> set[str]:
    """The top-level project packages a module imports (anywhere in it, function bodies included), the CLI modules of
    other packages left out."""
    path = REPO / (module_name.replace(".", "/") + ".py")
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        for name in names:
            top = name.split(".", 1)[0]
            if top in PACKAGES and not (name == f"{top}.cli" or name.startswith(f"{top}.cli.")):
                found.add(top)
    return found


def test_each_subcommand_is_a_module_of_the_package_it_drives() -> None:
    for name, (_help, module_name) in SUBCOMMANDS.items():
        assert module_name == _home(name), name
        module = importlib.import_module(module_name)
        assert callable(module.add_arguments) and callable(module.run), module_name
        package = module_name.split(".", 1)[0]
        imported = _imported_packages(module_name)
        # it drives its own package's library, and imports nothing above it (loadgen_sut -> checker -> rules)
        assert package in imported, f"{module_name} imports nothing of {package}: it belongs with what it drives"
        above = {"rules": {"checker", "loadgen_sut"}, "checker": {"loadgen_sut"}, "loadgen_sut": set()}[package]
        assert not imported & above, f"{module_name} imports {sorted(imported & above)}"


def test_check_submission_is_the_check_module() -> None:
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert 'check-submission = "checker.cli.check:main"' in text
    assert 'inference-audit = "loadgen_sut.cli:main"' in text


def _imports_argparse(path: Path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name == "argparse" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.module == "argparse":
            return True
    return False


def test_no_argument_parsing_outside_the_cli_modules() -> None:
    stray = []
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            if any(rel.startswith(home) for home in CLI_HOMES.values()) or rel in GENERATORS:
                continue
            if _imports_argparse(path):
                stray.append(rel)
    assert not stray, f"argument parsing outside the CLI modules {sorted(CLI_HOMES.values())}: {stray}"


def test_architecture_doc_names_each_command_module() -> None:
    readme = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = readme[readme.index("**From a command or flag to its handler:**") : readme.index("## Layout")]
    for name in SUBCOMMANDS:
        path = _home(name).replace(".", "/") + ".py"
        assert f"| `{name}` | `{path}` |" in section, name


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
        "print('heavy:', sorted(m for m in ('pydantic', 'checker.findings', 'rules.registry') if m in sys.modules))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert proc.stdout.splitlines()[-2:] == ["imported: []", "heavy: []"]
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


def test_the_rules_package_imports_neither_the_checker_nor_the_harness() -> None:
    """rules/cli.py lists the checker's and the harness's rule ids, yet rules/ imports neither (by statement or by
    import_module): the families come from the entry points each package declares."""
    offenders = []
    for path in sorted((REPO / "rules").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            elif (
                isinstance(node, ast.Call)
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and ast.unparse(node.func).endswith(("import_module", "__import__"))
            ):
                names = [str(node.args[0].value)]
            if any(n.split(".", 1)[0] in ("checker", "loadgen_sut") for n in names):
                offenders.append(f"{path.relative_to(REPO)}:{getattr(node, 'lineno', 0)}")
    assert not offenders


def test_rules_ids_finds_each_family_through_its_entry_point() -> None:
    """The installed entry points (pyproject.toml) are the registry's three families, in their order; a stale install
    (``pip install -e .`` not rerun) fails here rather than listing fewer rules."""
    from checker.checks.rule_registry import all_rules, audit_rules
    from loadgen_sut.run_rules import run_rules
    from rules.cli import rule_families

    families = rule_families()
    assert list(families) == ["check", "audit", "run"]
    assert families["check"].rules() == all_rules()
    assert families["audit"].rules() == audit_rules()
    assert families["run"].rules() == run_rules()


def test_no_command_reaches_into_argparse_internals() -> None:
    """A command shares flags by calling the function that adds them (``sweep`` calls ``run``'s
    ``add_run_target`` and ``add_engine_options``), never by copying actions through argparse's private attributes."""
    private = ("_add_action", "_group_actions", "_action_groups", "_actions", "_option_string_actions")
    found = []
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
                if isinstance(node, ast.Attribute) and node.attr in private:
                    found.append(f"{path.relative_to(REPO)}:{node.lineno} .{node.attr}")
    assert not found


def _subcommand(name: str) -> argparse.ArgumentParser:
    commands = next(a for a in build_parser(only=name)._actions if isinstance(a, argparse._SubParsersAction))
    parser: argparse.ArgumentParser = commands.choices[name]
    return parser


def test_sweep_takes_runs_engine_and_target_flags_as_run_defines_them() -> None:
    def described(parser: argparse.ArgumentParser) -> dict[str, tuple[object, ...]]:
        return {
            a.dest: (tuple(a.option_strings), a.default, a.type, a.choices, a.help, a.required)
            for a in parser._actions
            if a.option_strings
        }

    run, sweep = described(_subcommand("run")), described(_subcommand("sweep"))
    shared = {d for d in run if d in sweep and d not in ("help", "verbose", "out", "html", "force")}
    # the engine kind, benchmark, data set and every engine and simulated-engine option; the scenario is Server's
    assert {"engine", "benchmark", "round", "dataset", "deadline_s", "endpoint", "client_workers", "sim_seed"} <= shared
    assert {d for d in shared if run[d] != sweep[d]} == {"scenario"}
    assert sweep["scenario"][1] == "Server" and run["scenario"][-1] is True
