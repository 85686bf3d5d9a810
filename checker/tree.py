"""Walk a results tree into typed records, plus the repository-hygiene checks (catalogue A1-A10).

Accepted roots: a whole results repository (``closed/``, ``open/``, ``network/`` below it), one division directory,
or one submitter directory (``closed/<Submitter>``). Paths in the records are always
``<division>/<submitter>/...`` relative to :attr:`TreeLayout.base` (the repository root), as the official checker
prints them; reads stay confined to the directory the user pointed at.

The walk never follows a directory symlink (a symlink is recorded, and reported when broken or leading outside
the checked root) and reads no file content: sizes come from ``lstat``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from checker.findings import Finding, Severity
from checker.safe_io import SafeTree, join
from rules.models import ResultLocation

IGNORED_TOP_LEVEL = (".git", ".github", "assets")
MB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class ResultDir:
    """One ``<division>/<submitter>/results/<system>/<benchmark>/<scenario>`` directory."""

    division: str
    submitter: str
    system: str
    benchmark: str  # directory name
    scenario: str  # directory name (may be lower case)

    @property
    def submitter_path(self) -> str:
        return f"{self.division}/{self.submitter}"

    @property
    def path(self) -> str:
        return f"{self.submitter_path}/results/{self.system}/{self.benchmark}/{self.scenario}"

    @property
    def benchmark_path(self) -> str:
        return f"{self.submitter_path}/results/{self.system}/{self.benchmark}"

    @property
    def performance_dir(self) -> str:
        return f"{self.path}/performance/run_1"

    @property
    def accuracy_dir(self) -> str:
        return f"{self.path}/accuracy"

    @property
    def power_dir(self) -> str:
        return f"{self.path}/performance/power"

    @property
    def ranging_dir(self) -> str:
        return f"{self.path}/performance/ranging"

    @property
    def location(self) -> ResultLocation:
        """The names the round's :class:`rules.models.Layout` places this result's other parts by."""
        return ResultLocation(self.division, self.submitter, self.system, self.benchmark, self.scenario)


@dataclass(frozen=True, slots=True)
class SymlinkInfo:
    path: str
    target: str
    broken: bool
    outside: bool


@dataclass(frozen=True)
class SubmitterTree:
    """Everything the walk learned about one submitter, without reading file contents."""

    division: str
    name: str
    has_results_dir: bool
    files: dict[str, int]  # path -> size in bytes (regular files; symlinks to files are in ``symlinks``)
    dirs: frozenset[str]
    empty_dirs: tuple[str, ...]
    symlinks: tuple[SymlinkInfo, ...]
    systems: tuple[str, ...]  # names of systems/<name>.json
    result_systems: tuple[str, ...]  # dirs under results/
    measurement_systems: tuple[str, ...]  # dirs under measurements/
    results: tuple[ResultDir, ...]
    # dirs under results/<sys>/ per system: benchmark -> scenario dirs (sorted)
    benchmarks: dict[str, dict[str, tuple[str, ...]]] = field(default_factory=dict)
    file_children: dict[str, tuple[str, ...]] = field(default_factory=dict)  # dir -> sorted file/link names
    dir_children: dict[str, tuple[str, ...]] = field(default_factory=dict)  # dir -> sorted subdir names

    @property
    def path(self) -> str:
        return f"{self.division}/{self.name}"

    def is_file(self, rel: str) -> bool:
        return rel in self.files

    def is_dir(self, rel: str) -> bool:
        return rel in self.dirs

    def list_files(self, rel_dir: str) -> list[str]:
        """Names of the regular files (and symlinks) directly in ``rel_dir``, sorted."""
        return list(self.file_children.get(rel_dir, ()))

    def list_dirs(self, rel_dir: str) -> list[str]:
        """Names of the (real) subdirectories of ``rel_dir``, sorted."""
        return list(self.dir_children.get(rel_dir, ()))


@dataclass(frozen=True)
class TreeLayout:
    """The checked tree: where it is, which submitters it holds, and tree-level findings (A1-A3)."""

    base: Path  # repository root: paths are relative to it
    checked: Path  # what the user pointed at (reads are confined to it)
    divisions: tuple[str, ...]
    submitters: tuple[tuple[str, str], ...]  # (division, submitter)
    findings: tuple[Finding, ...] = ()


def _is_division_dir(p: Path, divisions: tuple[str, ...]) -> bool:
    return p.name in divisions and p.is_dir()


def discover(root: Path, divisions: tuple[str, ...], submitter: str | None = None) -> TreeLayout:
    """Find the submitters below ``root`` (a repository, a division dir or a submitter dir)."""
    root = Path(root)
    tree = SafeTree(root)
    findings: list[Finding] = []
    if _is_division_dir(root, divisions):
        base, divs = root.parent, [root.name]
    elif root.parent.name in divisions and ((root / "results").is_dir() or (root / "systems").is_dir()):
        base = root.parent.parent
        only = ((root.parent.name, root.name),)
        return TreeLayout(base, root, (root.parent.name,), only if submitter in (None, root.name) else ())
    else:
        base, divs = root, []
        for name in tree.list_dir(""):
            p = root / name
            if name in divisions and p.is_dir():
                divs.append(name)
            elif p.is_dir() or p.is_symlink():
                if name not in IGNORED_TOP_LEVEL:
                    findings.append(
                        Finding(
                            rule="TREE-DIVISION",
                            severity=Severity.WARNING,
                            message=f"'{name}' is not a division ({', '.join(divisions)}); ignored",
                            scope=".",
                            path=name,
                            source="official checker: check_results_dir L2231 (logged, not failed)",
                            fix="keep only division folders at the top of a results repository",
                        )
                    )
            elif not (name.endswith(".md") or name.endswith(".pdf")):
                findings.append(
                    Finding(
                        rule="TREE-ROOT-FILES",
                        severity=Severity.WARNING,
                        message=f"file '{name}' at the repository root (only *.md / *.pdf expected); it is not part of any submission",
                        scope=".",
                        path=name,
                        source="official checker: check_results_dir L2237-2248 (aborts unless --skip-extra-files-in-root-check)",
                        fix="move it out of the submission tree",
                    )
                )
    subs: list[tuple[str, str]] = []
    div_tree = SafeTree(base)
    for div in divs:
        for name in div_tree.list_dir(div):
            rel = f"{div}/{name}"
            p = base / rel
            if p.is_dir() and not p.is_symlink():
                if submitter is None or name == submitter:
                    subs.append((div, name))
            else:
                findings.append(
                    Finding(
                        rule="TREE-DIVISION-FILES",
                        severity=Severity.ERROR,
                        message=f"'{rel}' is not a submitter directory; a division holds only submitter directories",
                        scope=div,
                        path=rel,
                        source="official checker: check_results_dir L2250-2258 (fails the division)",
                        fix=f"remove '{rel}' or move it into a submitter directory",
                    )
                )
    if not divs:
        findings.append(
            Finding(
                rule="TREE-NO-DIVISION",
                severity=Severity.ERROR,
                message=f"no division directory ({', '.join(divisions)}) found in {root}",
                scope=".",
                source="MLPerf submission layout: <division>/<submitter>/...",
                fix="point the checker at a results repository, a division or a submitter directory",
            )
        )
    return TreeLayout(base, root, tuple(divs), tuple(subs), tuple(findings))


def walk_submitter(base: Path, checked: Path, division: str, name: str) -> SubmitterTree:
    """Walk ``<division>/<name>`` with ``lstat`` only (no symlinked directory is entered)."""
    real_checked = os.path.realpath(checked)
    files: dict[str, int] = {}
    dirs: set[str] = set()
    empty: list[str] = []
    links: list[SymlinkInfo] = []
    fchildren: dict[str, list[str]] = {}
    dchildren: dict[str, list[str]] = {}
    base_s = str(base)
    start = f"{division}/{name}"
    stack = [start]
    while stack:
        rel = stack.pop()
        try:
            entries = list(os.scandir(os.path.join(base_s, rel)))
        except OSError:
            continue
        if not entries:
            empty.append(rel)
        fnames: list[str] = []
        dnames: list[str] = []
        fchildren[rel] = fnames
        dchildren[rel] = dnames
        for e in entries:
            child = f"{rel}/{e.name}"
            try:  # the entry type comes with scandir (no system call); only files need their size
                is_link = e.is_symlink()
                is_dir = not is_link and e.is_dir(follow_symlinks=False)
                size = 0 if is_link or is_dir else e.stat(follow_symlinks=False).st_size
            except OSError:
                continue
            if is_link:
                target = os.readlink(e.path)
                real = os.path.realpath(e.path)
                broken = not os.path.exists(real)
                outside = not (real == real_checked or real.startswith(real_checked + os.sep))
                links.append(SymlinkInfo(child, target, broken, outside))
                fnames.append(e.name)
            elif is_dir:
                dirs.add(child)
                stack.append(child)
                dnames.append(e.name)
            else:
                files[child] = size
                fnames.append(e.name)
    file_children = {k: tuple(sorted(v)) for k, v in fchildren.items()}
    dir_children = {k: tuple(sorted(v)) for k, v in dchildren.items()}
    results_rel = f"{start}/results"
    result_systems = dir_children.get(results_rel, ())
    benchmarks: dict[str, dict[str, tuple[str, ...]]] = {}
    results: list[ResultDir] = []
    for system in result_systems:
        sys_rel = f"{results_rel}/{system}"
        bms: dict[str, tuple[str, ...]] = {}
        for bm in dir_children.get(sys_rel, ()):
            scens = dir_children.get(f"{sys_rel}/{bm}", ())
            bms[bm] = scens
            results.extend(ResultDir(division, name, system, bm, sc) for sc in scens)
        benchmarks[system] = bms
    systems = tuple(
        n[: -len(".json")] for n in file_children.get(f"{start}/systems", ()) if n.endswith(".json")
    )
    return SubmitterTree(
        division=division,
        name=name,
        has_results_dir=results_rel in dirs,
        files=files,
        dirs=frozenset(dirs),
        empty_dirs=tuple(sorted(empty)),
        symlinks=tuple(links),
        systems=systems,
        result_systems=result_systems,
        measurement_systems=dir_children.get(f"{start}/measurements", ()),
        results=tuple(results),
        benchmarks=benchmarks,
        file_children=file_children,
        dir_children=dir_children,
    )


def hygiene_findings(sub: SubmitterTree, file_size_limit_mb: int) -> list[Finding]:
    """Catalogue A5-A10: the official checker fails the whole submitter on each of these."""
    out: list[Finding] = []
    scope = sub.path

    def add(rule: str, message: str, path: str, source: str, fix: str, beyond: bool = False) -> None:
        out.append(
            Finding(
                rule=rule,
                severity=Severity.ERROR,
                message=message,
                scope=scope,
                path=path,
                source=source,
                fix=fix,
                beyond_official=beyond,
            )
        )

    for link in sub.symlinks:
        if link.broken:
            add(
                "TREE-BROKEN-SYMLINK",
                f"broken symbolic link -> {link.target}",
                link.path,
                "official checker: check_results_dir L2279-2292 (fails the submitter)",
                "replace the link by the file it should point to",
            )
        elif link.outside:
            add(
                "TREE-SYMLINK-OUTSIDE",
                f"symbolic link leads outside the checked tree (-> {link.target}); not followed. The official checker "
                "would read it; a submission must be self-contained",
                link.path,
                "official checker A5 checks only broken links; this tool never reads outside the checked root",
                "copy the file into the submission instead of linking to it",
                beyond=True,
            )
    limit = file_size_limit_mb * MB
    for path, size in sorted(sub.files.items()):
        if size > limit:
            add(
                "TREE-FILE-SIZE",
                f"file is {size / MB:.1f} MB, above the {file_size_limit_mb} MB limit",
                path,
                "official checker: FILE_SIZE_LIMIT_MB, check_results_dir L2294-2307",
                "truncate accuracy logs with truncate_accuracy_log.py; keep large artefacts out of the submission",
            )
    all_paths = sorted(list(sub.files) + list(sub.dirs) + [s.path for s in sub.symlinks])
    for path in all_paths:
        base = path.rsplit("/", 1)[1]
        if base.startswith("."):
            add(
                "TREE-HIDDEN-NAME",
                f"name '{base}' starts with '.' (git unfriendly)",
                path,
                "official checker: check_results_dir L2309-2323",
                "rename or remove it",
            )
        if " " in base:
            add(
                "TREE-SPACE-NAME",
                f"name '{base}' contains a space",
                path,
                "official checker: check_results_dir L2325-2337",
                "rename it without spaces",
            )
        if base == "__pycache__" and path in sub.dirs:
            add(
                "TREE-PYCACHE",
                "__pycache__ directory in the submission",
                path,
                "official checker: check_results_dir L2339-2349",
                "delete __pycache__ directories",
            )
    for path in sub.empty_dirs:
        add(
            "TREE-EMPTY-DIR",
            "empty directory",
            path,
            "official checker: check_results_dir L2351-2361",
            "remove empty directories (git does not keep them)",
        )
    return out


def join_path(*parts: str) -> str:
    return "/".join(p for p in parts if p)


__all__ = [
    "ResultDir",
    "SubmitterTree",
    "SymlinkInfo",
    "TreeLayout",
    "discover",
    "hygiene_findings",
    "join",
    "join_path",
    "walk_submitter",
]
