"""Walk a results tree into typed records, plus the repository-hygiene checks (catalogue A1-A10).

Accepted roots: a whole results repository (``closed/``, ``open/``, ``network/`` below it), one division directory,
or one submitter directory (``closed/<Submitter>``). Paths in the records are always
``<division>/<submitter>/...`` relative to :attr:`TreeLayout.base` (the repository root), as the official checker
prints them; reads stay confined to the directory the user pointed at.

The walk never follows a directory symlink (a symlink is recorded, and reported when broken or leading outside
the checked root) and reads no file content: sizes (and device/inode, which reads verify) come from ``lstat``.
Nothing is skipped silently: a directory that cannot be listed (permissions, I/O error, a path longer than
PATH_MAX), a name that is not UTF-8, a FIFO, socket or device, a division that is a symbolic link and a
``results`` that is not a directory are each recorded and reported as an error (TREE-UNREADABLE,
TREE-NAME-ENCODING, TREE-SPECIAL-FILE, TREE-NOT-DIR). Names that are not UTF-8 are never used as paths: they
are reported with :func:`checker.safe_io.display_name` and not entered.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from checker.checks.rule_registry import WARN, RuleInfo, register, registered_finding
from checker.findings import Finding
from checker.safe_io import display_name, file_kind, is_utf8_name, join
from rules.models import Layout, ResultLocation

# the submitter's directories the walk lists, before any round applies: the names every round's layout shares
# (results/, systems/, measurements/ in v5.x; tests/checker/test_layout.py pins them to each round's)
WALK_LAYOUT = Layout()

# the rules this module emits (the registry: checker/checks/rule_registry.py)
RULES = register(
    __name__,
    RuleInfo(
        "TREE-DIVISION",
        "A1",
        "top-level directory that is not a division",
        WARN,
        source="official checker: check_results_dir L2231 (logged, not failed)",
        fix="keep only division folders at the top of a results repository",
    ),
    RuleInfo(
        "TREE-ROOT-FILES",
        "A2",
        "file other than *.md/*.pdf at the repository root",
        WARN,
        official="aborts the whole run unless --skip-extra-files-in-root-check (the official verdicts use the flag)",
        source="official checker: check_results_dir L2237-2248 (aborts unless --skip-extra-files-in-root-check)",
        fix="move it out of the submission tree",
    ),
    RuleInfo(
        "TREE-DIVISION-FILES",
        "A3",
        "a division directory holds a file",
        source="official checker: check_results_dir L2250-2258 (fails the division)",
    ),
    RuleInfo(
        "TREE-NO-DIVISION",
        "A1",
        "no closed/open/network directory found",
        source="MLPerf submission layout: <division>/<submitter>/...",
        fix="point the checker at a results repository, a division or a submitter directory",
    ),
    RuleInfo(
        "TREE-BROKEN-SYMLINK",
        "A5",
        "broken symbolic link",
        source="official checker: check_results_dir L2279-2292 (fails the submitter)",
        fix="replace the link by the file it should point to",
    ),
    RuleInfo(
        "TREE-SYMLINK-OUTSIDE",
        "A5",
        "symbolic link leading outside the checked tree",
        beyond=True,
        source="official checker A5 checks only broken links; this tool never reads outside the checked root",
        fix="copy the file into the submission instead of linking to it",
    ),
    RuleInfo(
        "TREE-FILE-SIZE",
        "A6",
        "file above the size limit",
        source="official checker: FILE_SIZE_LIMIT_MB, check_results_dir L2294-2307",
        fix="truncate accuracy logs with truncate_accuracy_log.py; keep large artefacts out of the submission",
    ),
    RuleInfo(
        "TREE-HIDDEN-NAME",
        "A7",
        "file or directory name starting with '.'",
        source="official checker: check_results_dir L2309-2323",
        fix="rename or remove it",
    ),
    RuleInfo(
        "TREE-SPACE-NAME",
        "A8",
        "space in a file or directory name",
        source="official checker: check_results_dir L2325-2337",
        fix="rename it without spaces",
    ),
    RuleInfo(
        "TREE-PYCACHE",
        "A9",
        "__pycache__ directory",
        source="official checker: check_results_dir L2339-2349",
        fix="delete __pycache__ directories",
    ),
    RuleInfo(
        "TREE-EMPTY-DIR",
        "A10",
        "empty directory",
        source="official checker: check_results_dir L2351-2361",
        fix="remove empty directories (git does not keep them)",
    ),
    RuleInfo(
        "TREE-UNREADABLE",
        "-",
        "directory or entry that cannot be read (permissions, I/O error, path longer than PATH_MAX)",
        beyond=True,
        source="beyond the official checker: a part of the submission that cannot be read cannot be verified",
        fix="make every file and directory of the submission readable (and paths shorter than PATH_MAX)",
    ),
    RuleInfo(
        "TREE-NOT-DIR",
        "-",
        "division or results/ that is a symbolic link, a file or another non-directory",
        beyond=True,
        source="MLPerf submission layout: <division>/<submitter>/results/... are directories; this tool never follows "
        "a symbolic link to a directory",
    ),
    RuleInfo(
        "TREE-SPECIAL-FILE",
        "-",
        "FIFO, socket or device in the submission",
        beyond=True,
        source="beyond the official checker (which would block reading a FIFO): a submission holds regular files and "
        "directories only",
        fix="replace it by a regular file or remove it",
    ),
    RuleInfo(
        "TREE-NAME-ENCODING",
        "-",
        "file or directory name that is not UTF-8",
        beyond=True,
        source="beyond the official checker (which fails on it); git and the results site need UTF-8 names",
        fix="rename it with UTF-8 (ASCII) characters",
    ),
)

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
        return WALK_LAYOUT.result_path(self.location)

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
    file_ids: dict[str, tuple[int, int]] = field(default_factory=dict)  # regular file -> (st_dev, st_ino)
    unreadable: tuple[tuple[str, str], ...] = ()  # (path, why) of entries the walk could not list or stat
    special_files: tuple[tuple[str, str], ...] = ()  # (path, kind) of FIFOs, sockets, devices
    bad_names: tuple[str, ...] = ()  # paths (display_name) whose last name is not UTF-8; not entered
    results_kind: str | None = None  # what ``results`` is when it exists but is not a directory

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


def _name_finding(rel_shown: str, scope: str) -> Finding:
    return registered_finding(
        "TREE-NAME-ENCODING",
        f"name '{rel_shown.rsplit('/', 1)[-1]}' is not UTF-8 (bytes shown as \\xNN); it is not entered or checked",
        scope=scope,
        path=rel_shown,
    )


def _unreadable_finding(rel: str, why: str, scope: str) -> Finding:
    return registered_finding(
        "TREE-UNREADABLE", f"cannot be read ({why}); nothing below it is checked", scope=scope, path=rel
    )


def _not_dir_finding(rel: str, kind: str, scope: str, what: str) -> Finding:
    return registered_finding(
        "TREE-NOT-DIR",
        f"{what} is {kind}, not a directory; not followed, nothing below it is checked",
        scope=scope,
        path=rel,
        fix=f"make '{rel}' a real directory holding the submission",
    )


def _why(exc: OSError) -> str:
    if exc.errno == errno.ENAMETOOLONG:
        return "path longer than PATH_MAX"
    return exc.strerror or str(exc)


def _list(path: Path) -> tuple[list[str], OSError | None]:
    try:
        return sorted(os.listdir(path)), None
    except OSError as exc:
        return [], exc


def _lkind(p: Path) -> str | None:
    """None for a real directory, else what ``p`` is ("a symbolic link", "a file", ...)."""
    try:
        mode = os.lstat(p).st_mode
    except OSError:
        return "missing"
    if stat.S_ISDIR(mode):
        return None
    return "a file" if stat.S_ISREG(mode) else file_kind(mode)


def discover(root: Path, divisions: tuple[str, ...], submitter: str | None = None) -> TreeLayout:
    """Find the submitters below ``root`` (a repository, a division dir or a submitter dir)."""
    root = Path(root)
    findings: list[Finding] = []
    if _is_division_dir(root, divisions):
        base, divs = root.parent, [root.name]
    elif root.parent.name in divisions and ((root / "results").is_dir() or (root / "systems").is_dir()):
        base = root.parent.parent
        only = ((root.parent.name, root.name),)
        return TreeLayout(base, root, (root.parent.name,), only if submitter in (None, root.name) else ())
    else:
        base, divs = root, []
        names, err = _list(root)
        if err is not None:
            findings.append(_unreadable_finding(".", _why(err), "."))
        for name in names:
            p = root / name
            if not is_utf8_name(name):
                findings.append(_name_finding(display_name(name), "."))
                continue
            if name in divisions and p.is_dir():
                kind = _lkind(p)
                if kind is None:
                    divs.append(name)
                else:
                    findings.append(_not_dir_finding(name, kind, name, f"division '{name}'"))
            elif p.is_dir() or p.is_symlink():
                if name not in IGNORED_TOP_LEVEL:
                    findings.append(
                        registered_finding(
                            "TREE-DIVISION",
                            f"'{name}' is not a division ({', '.join(divisions)}); ignored",
                            scope=".",
                            path=name,
                        )
                    )
            elif not (name.endswith(".md") or name.endswith(".pdf")):
                findings.append(
                    registered_finding(
                        "TREE-ROOT-FILES",
                        f"file '{name}' at the repository root (only *.md / *.pdf expected); it is not part of any "
                        "submission",
                        scope=".",
                        path=name,
                    )
                )
    subs: list[tuple[str, str]] = []
    for div in divs:
        names, err = _list(base / div)
        if err is not None:
            findings.append(_unreadable_finding(div, _why(err), div))
        for name in names:
            rel = f"{div}/{name}"
            p = base / rel
            if not is_utf8_name(name):
                findings.append(_name_finding(display_name(rel), div))
                continue
            if p.is_dir() and not p.is_symlink():
                if submitter is None or name == submitter:
                    subs.append((div, name))
            else:
                findings.append(
                    registered_finding(
                        "TREE-DIVISION-FILES",
                        f"'{rel}' is not a submitter directory; a division holds only submitter directories",
                        scope=div,
                        path=rel,
                        fix=f"remove '{rel}' or move it into a submitter directory",
                    )
                )
    if not divs and not any(f.rule == "TREE-NOT-DIR" for f in findings):
        findings.append(
            registered_finding(
                "TREE-NO-DIVISION",
                f"no division directory ({', '.join(divisions)}) found in {display_name(str(root))}",
                scope=".",
            )
        )
    return TreeLayout(base, root, tuple(divs), tuple(subs), tuple(findings))


def walk_submitter(base: Path, checked: Path, division: str, name: str) -> SubmitterTree:
    """Walk ``<division>/<name>`` with ``lstat`` only (no symlinked directory is entered)."""
    real_checked = os.path.realpath(checked)
    files: dict[str, int] = {}
    ids: dict[str, tuple[int, int]] = {}
    dirs: set[str] = set()
    empty: list[str] = []
    links: list[SymlinkInfo] = []
    unreadable: list[tuple[str, str]] = []
    special: list[tuple[str, str]] = []
    bad_names: list[str] = []
    fchildren: dict[str, list[str]] = {}
    dchildren: dict[str, list[str]] = {}
    base_s = str(base)
    start = f"{division}/{name}"
    stack = [start]
    while stack:
        rel = stack.pop()
        try:
            with os.scandir(os.path.join(base_s, rel)) as it:
                entries = list(it)
        except OSError as exc:
            unreadable.append((rel, _why(exc)))
            continue
        if not entries:
            empty.append(rel)
        fnames: list[str] = []
        dnames: list[str] = []
        fchildren[rel] = fnames
        dchildren[rel] = dnames
        for e in entries:
            if not is_utf8_name(e.name):
                bad_names.append(display_name(f"{rel}/{e.name}"))
                continue
            child = f"{rel}/{e.name}"
            try:  # the entry type comes with scandir (no system call); only files need their size
                is_link = e.is_symlink()
                is_dir = not is_link and e.is_dir(follow_symlinks=False)
                st = None if is_link or is_dir else e.stat(follow_symlinks=False)
                target = os.readlink(e.path) if is_link else ""
            except OSError as exc:
                unreadable.append((child, _why(exc)))
                continue
            if is_link:
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
                assert st is not None
                files[child] = st.st_size
                fnames.append(e.name)
                if stat.S_ISREG(st.st_mode):
                    ids[child] = (st.st_dev, st.st_ino)
                else:
                    special.append((child, file_kind(st.st_mode)))
    file_children = {k: tuple(sorted(v)) for k, v in fchildren.items()}
    dir_children = {k: tuple(sorted(v)) for k, v in dchildren.items()}
    results_rel = WALK_LAYOUT.results_root(division, name)
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
        n[: -len(".json")]
        for n in file_children.get(WALK_LAYOUT.systems_root(division, name), ())
        if n.endswith(".json")
    )
    results_kind: str | None = None
    if results_rel not in dirs:
        if any(link.path == results_rel for link in links):
            results_kind = "a symbolic link"
        elif results_rel in files:
            results_kind = dict(special).get(results_rel, "a file")
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
        measurement_systems=dir_children.get(WALK_LAYOUT.measurements_root(division, name), ()),
        results=tuple(results),
        benchmarks=benchmarks,
        file_children=file_children,
        dir_children=dir_children,
        file_ids=ids,
        unreadable=tuple(sorted(unreadable)),
        special_files=tuple(sorted(special)),
        bad_names=tuple(sorted(bad_names)),
        results_kind=results_kind,
    )


def walk_findings(sub: SubmitterTree) -> list[Finding]:
    """What the walk could not look at (errors, whether or not the submitter has results)."""
    scope = sub.path
    out = [_unreadable_finding(path, why, scope) for path, why in sub.unreadable]
    out += [_name_finding(path, scope) for path in sub.bad_names]
    if sub.results_kind is not None:
        out.append(
            _not_dir_finding(
                WALK_LAYOUT.results_root(sub.division, sub.name), sub.results_kind, scope, "results"
            )
        )
    for path, kind in sub.special_files:
        out.append(
            registered_finding(
                "TREE-SPECIAL-FILE", f"{kind} in the submission; never opened or read", scope=scope, path=path
            )
        )
    return out


def hygiene_findings(sub: SubmitterTree, file_size_limit_mb: int) -> list[Finding]:
    """Catalogue A5-A10: the official checker fails the whole submitter on each of these."""
    out: list[Finding] = []
    scope = sub.path
    for link in sub.symlinks:
        if link.broken:
            out.append(
                registered_finding(
                    "TREE-BROKEN-SYMLINK",
                    f"broken symbolic link -> {link.target}",
                    scope=scope,
                    path=link.path,
                )
            )
        elif link.outside:
            message = (
                f"symbolic link leads outside the checked tree (-> {link.target}); not followed. The official checker "
                "would read it; a submission must be self-contained"
            )
            out.append(registered_finding("TREE-SYMLINK-OUTSIDE", message, scope=scope, path=link.path))
    limit = file_size_limit_mb * MB
    for path, size in sorted(sub.files.items()):
        if size > limit:
            message = f"file is {size / MB:.1f} MB, above the {file_size_limit_mb} MB limit"
            out.append(registered_finding("TREE-FILE-SIZE", message, scope=scope, path=path))
    all_paths = sorted(list(sub.files) + list(sub.dirs) + [s.path for s in sub.symlinks])
    for path in all_paths:
        base = path.rsplit("/", 1)[1]
        if base.startswith("."):
            message = f"name '{base}' starts with '.' (git unfriendly)"
            out.append(registered_finding("TREE-HIDDEN-NAME", message, scope=scope, path=path))
        if " " in base:
            out.append(
                registered_finding(
                    "TREE-SPACE-NAME", f"name '{base}' contains a space", scope=scope, path=path
                )
            )
        if base == "__pycache__" and path in sub.dirs:
            message = "__pycache__ directory in the submission"
            out.append(registered_finding("TREE-PYCACHE", message, scope=scope, path=path))
    out += [
        registered_finding("TREE-EMPTY-DIR", "empty directory", scope=scope, path=path)
        for path in sub.empty_dirs
    ]
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
    "walk_findings",
    "walk_submitter",
]
