"""Lay out a submission run as the official results tree of its round.

Where each file goes is the round's :class:`rules.models.Layout` (``Round.structure.layout``), the same data the
checker reads: v5.x keeps ``measurements/<system>/<benchmark>/<scenario>/`` and ``compliance/…``; v6.x puts
``user.conf``, ``mlperf.conf``, ``README.md`` and ``measurements.json`` and the TESTxx directories inside
``results/<system>/<benchmark>/<scenario>/`` and the code under ``src/``.

Everything a package needs (names, system and implementation descriptions) is validated by :func:`plan_package`
before the first query. A package is assembled in a staging directory beside the tree and moved into place only
when complete; a failure (a missing file, a full disk, Ctrl-C) removes what was staged and undoes what was moved, so
a rerun starts clean. Nothing the user already has is overwritten: an existing result refuses the package, an
existing system description must be identical, existing calibration/code READMEs are kept. The accuracy log is
truncated the way ``tools/submission/truncate_accuracy_log.py`` does (first and last 4096 bytes) when it exceeds the
round's size limit; its hash is already in accuracy.txt. The file handling (reading a run's files, truncation,
staging) is :mod:`loadgen_sut.package_files`, the documents written for a run :mod:`loadgen_sut.package_docs`.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checker.findings import UnusableInput
from checker.safe_io import read_input_json
from loadgen_sut.interrupts import sigterm_as_interrupt
from loadgen_sut.mlperf_conf import MLPERF_CONF_FILE, compiled_mlperf_conf
from loadgen_sut.package_docs import (
    SIMULATED_NOTE,
    calibration_text,
    code_readme,
    measurement_readme,
    mlperf_conf_text,
    simulated_system_description,
)
from loadgen_sut.package_files import (
    Staging,
    refuse_symlinks_inside,
    truncate_accuracy_log,
)
from loadgen_sut.record import RunRecord
from loadgen_sut.settings import TestSettingsModel, installed_loadgen_version
from rules.models import ResultLocation, Round, Scenario
from schemas import schema_errors

SYSTEM_SCHEMA = "system-description"
MEASUREMENTS_SCHEMA = "measurements"


@dataclass(frozen=True)
class PackageRequest:
    tree: Path
    division: str
    submitter: str
    system_json: Path | None  # None only for the simulated engine (a simulated description is written)
    system_name: str | None = None  # directory name; default: the system JSON's file stem
    implementation: dict[str, Any] | None = None  # the implementation JSON's fields the user gave
    implementation_source: Path | None = None  # the file they came from (named in errors)


@dataclass
class PackageResult:
    tree: Path
    result_dir: Path
    written: list[Path] = field(default_factory=list)


def _load_system(req: PackageRequest, rnd: Round, simulated: bool) -> tuple[str, dict[str, Any]]:
    if req.system_json is None:
        if not simulated:
            raise UnusableInput(
                "--mode submission needs --system systems/<name>.json (your system description)"
            )
        name = req.system_name or "simulated_system"
        return name, simulated_system_description(req.division, req.submitter, rnd.system.required_fields)
    path = req.system_json
    desc = read_input_json(path, "system description")
    if not isinstance(desc, dict):
        raise UnusableInput("a system description is a JSON object", path=str(path))
    errors = schema_errors(desc, SYSTEM_SCHEMA)
    missing = [f for f in rnd.system.required_fields if f not in desc]
    errors += [
        f"(top level): '{m}' is a required property of round {rnd.name}"
        for m in missing
        if m not in str(errors)
    ]
    if errors:
        raise UnusableInput("invalid system description:\n  " + "\n  ".join(errors), path=str(path))
    if str(desc.get("division", "")).lower() != req.division.lower():
        raise UnusableInput(
            f"division is {desc.get('division')!r} but the package is for {req.division!r}", path=str(path)
        )
    if str(desc.get("submitter", "")).lower() != req.submitter.lower():
        raise UnusableInput(
            f"submitter is {desc.get('submitter')!r} but --submitter is {req.submitter!r}", path=str(path)
        )
    notes = str(desc.get("sw_notes", ""))
    if simulated and not notes.startswith(SIMULATED_NOTE):
        desc = {**desc, "sw_notes": f"{SIMULATED_NOTE} {notes}".strip()}
    return req.system_name or path.stem, desc


_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+=@,()-]*$")
MAX_NAME_CHARS = 120  # a v5.x file name is <system>_<scenario>.json: it must stay under NAME_MAX (255 bytes)


def _safe_name(name: str, what: str) -> str:
    """A submitter or system directory name as published trees spell them: ASCII letters, digits and ._+=@,()-."""
    if not _NAME.match(name) or len(name) > MAX_NAME_CHARS:
        raise UnusableInput(
            f"{what} {name!r} cannot be a directory name of a submission: use ASCII letters, digits and . _ + = @ , ( ) -"
            f" (starting with a letter or digit, at most {MAX_NAME_CHARS} characters)"
        )
    return name


IMPLEMENTATION_FIELDS = (
    "input_data_types",
    "retraining",
    "starting_weights_filename",
    "weight_data_types",
    "weight_transformations",
)


def implementation_base(
    simulated: bool, model: str | None, precision: str | None, given: dict[str, Any] | None
) -> dict[str, Any]:
    """The implementation fields as the run knows them, then the user's fields on top (not judged here).

    ``precision`` is what the engine spec says before the run (``--dtype`` of the transformers engine) or what the
    engine reported after it; an OpenAI-compatible server does not say, so its weight data types must be given.
    """
    if simulated:
        base: dict[str, Any] = {
            "input_data_types": "int32 (token ids)",
            "retraining": "no",
            "starting_weights_filename": "SIMULATED: no weights (inference-audit simulated engine)",
            "weight_data_types": "SIMULATED",
            "weight_transformations": "none (simulated)",
        }
    else:
        base = {
            "input_data_types": "int32 (token ids)",
            "retraining": "no",
            "starting_weights_filename": model or "",
            "weight_data_types": precision if precision and precision != "auto" else "",
            "weight_transformations": "none",
        }
    base.update(given or {})
    return base


def implementation_description(
    simulated: bool,
    model: str | None,
    precision: str | None,
    given: dict[str, Any] | None,
    source: str | None = None,
) -> dict[str, Any]:
    """The implementation JSON (measurements): :func:`implementation_base`, refused when incomplete or invalid."""
    base = implementation_base(simulated, model, precision, given)
    missing = [k for k in IMPLEMENTATION_FIELDS if not str(base.get(k, "")).strip()]
    if missing:
        raise UnusableInput(
            f"the implementation description needs {', '.join(missing)}: write them in a JSON file "
            "(`inference-audit init implementation --out impl.json` writes a template) and pass "
            "--implementation-json FILE",
            path=source,
        )
    errs = schema_errors(base, MEASUREMENTS_SCHEMA)
    if errs:
        raise UnusableInput("invalid implementation description:\n  " + "\n  ".join(errs), path=source)
    return base


@dataclass(frozen=True)
class PackagePlan:
    """A package validated before the first query: where it goes and the descriptions it writes."""

    location: ResultLocation
    system_description: dict[str, Any]
    implementation: dict[str, Any]


def plan_package(
    req: PackageRequest,
    rnd: Round,
    benchmark: str,
    scenario: str,
    simulated: bool,
    *,
    model: str | None = None,
    precision: str | None = None,
) -> PackagePlan:
    """Refuse a package before a long run: bad names, descriptions, tree path, or a result that already exists."""
    bench = rnd.benchmark(benchmark)
    if bench is None:
        raise UnusableInput(f"round {rnd.name} has no benchmark {benchmark!r}")
    scen = Scenario.parse(scenario)
    if scen is None:
        raise UnusableInput(f"unknown scenario {scenario!r} (Offline, Server, Interactive, SingleStream)")
    division = req.division.lower()
    if division not in rnd.structure.divisions:
        raise UnusableInput(f"division must be one of {', '.join(rnd.structure.divisions)}")
    submitter = _safe_name(req.submitter, "submitter")
    system, desc = _load_system(req, rnd, simulated)
    system = _safe_name(system, "system name")
    loc = ResultLocation(division, submitter, system, bench.name, scen.value)
    impl = implementation_description(
        simulated,
        model,
        precision,
        req.implementation,
        str(req.implementation_source) if req.implementation_source else None,
    )
    plan = PackagePlan(location=loc, system_description=desc, implementation=impl)
    _check_tree_path(req.tree)
    _refuse_other_round(req.tree, rnd)
    _refuse_existing(req.tree, rnd, plan)
    return plan


def _check_tree_path(tree: Path) -> None:
    """The tree is an existing directory or a new name under one; nothing on the way is a file, FIFO or device."""
    cur = Path(os.path.abspath(tree))
    while not os.path.lexists(cur):
        if cur == cur.parent:
            break
        cur = cur.parent
    try:
        st = os.stat(cur)
    except OSError as exc:
        raise UnusableInput(f"cannot use it as the tree: {exc.strerror or exc}", path=str(cur)) from exc
    if not stat.S_ISDIR(st.st_mode):
        raise UnusableInput(
            "not a directory: the tree (or a directory above it) must be a directory", path=str(cur)
        )
    if not os.access(cur, os.W_OK | os.X_OK):
        raise UnusableInput("not writable: cannot create the tree there", path=str(cur))


def _refuse_other_round(tree: Path, rnd: Round) -> None:
    """A tree holds one round: results laid out for another round (found as check-submission finds the round)."""
    if not tree.is_dir():
        return
    from checker.round_detection import detect_round  # the checker's own detection (one home)

    found = detect_round(tree)
    if found.loadgen_versions and found.clear and found.round.name != rnd.name:
        raise UnusableInput(
            f"the tree already holds results of round {found.round.name} ({found.note}); a tree is one round: "
            "use another --tree",
            path=str(tree),
        )


def _new_dirs(rnd: Round, loc: ResultLocation, compliance: bool) -> list[str]:
    """The directories a package creates whole (never merged into an existing one), in install order."""
    lay = rnd.structure.layout
    dirs = [lay.result_path(loc)]
    if not lay.measurements_in_result_dir:
        dirs.append(lay.measurements_path(loc))
    if compliance and not lay.compliance_in_result_dir:
        dirs.append(lay.compliance_path(loc))
    return dirs


def _refuse_existing(tree: Path, rnd: Round, plan: PackagePlan) -> None:
    lay = rnd.structure.layout
    for rel in [*_new_dirs(rnd, plan.location, compliance=True), lay.system_path(plan.location)]:
        refuse_symlinks_inside(tree, rel)
    for rel in _new_dirs(rnd, plan.location, compliance=True):
        if os.path.lexists(tree / rel):
            raise UnusableInput(
                "already exists: not overwriting results; use another --tree or remove it yourself",
                path=str(tree / rel),
            )
    sys_path = tree / lay.system_path(plan.location)
    if os.path.lexists(sys_path):
        try:
            same = read_input_json(sys_path, "system description") == plan.system_description
        except UnusableInput:
            same = False
        if not same:
            raise UnusableInput(
                "a different system description already exists there; not overwriting", path=str(sys_path)
            )


def _mlperf_conf(run_dir: Path, record: RunRecord, settings: TestSettingsModel) -> str:
    """The mlperf.conf the run's LoadGen applied: the copy the run kept, else the one compiled into that release."""
    kept = run_dir / MLPERF_CONF_FILE
    if kept.is_file():
        try:
            return kept.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UnusableInput(f"the run's mlperf.conf is unreadable: {exc}", path=str(kept)) from exc
    compiled = compiled_mlperf_conf() if installed_loadgen_version() == record.loadgen_version else None
    return compiled if compiled is not None else mlperf_conf_text(settings, record.loadgen_version)


def _test_dir(run_dir: Path, directory: str) -> Path:
    """A test's directory as the record names it: a plain name inside the run directory, never a link out of it."""
    if not directory or Path(directory).is_absolute() or ".." in Path(directory).parts:
        raise UnusableInput(
            f"the run record names test directory {directory!r} outside the run", path=str(run_dir)
        )
    path = run_dir / directory
    if path.is_symlink() or not path.is_dir():
        raise UnusableInput("a test directory of the run is missing (or a symbolic link)", path=str(path))
    return path


def _cross_check(record: RunRecord, run_dir: Path, rnd: Round) -> None:
    """What the record says against what LoadGen logged: a relabelled record is refused."""
    from checker.parsers.mllog import parse_detail_file

    perf = _test_dir(run_dir, next(t.directory for t in record.tests if t.name == "performance"))
    detail = perf / "mlperf_log_detail.txt"
    if not detail.is_file() or detail.is_symlink():
        raise UnusableInput("expected LoadGen output is missing", path=str(detail))
    log = parse_detail_file(detail)
    scen = Scenario.parse(record.scenario)
    logged_scenario = log.effective_scenario
    if scen is not None and logged_scenario and Scenario.parse(logged_scenario) is not scen.loadgen_scenario:
        raise UnusableInput(
            f"the record says {record.scenario} but LoadGen ran {logged_scenario}", path=str(detail)
        )
    version = log.str_value("loadgen_version")
    if version and record.loadgen_version and not version.startswith(record.loadgen_version):
        raise UnusableInput(
            f"the record says LoadGen {record.loadgen_version} but the log says {version}",
            path=str(detail),
        )
    bench = rnd.benchmark(record.benchmark)
    settings = next((t.loadgen_settings for t in record.tests if t.name == "performance"), None)
    if bench is not None and settings is not None and scen is not None:
        want = (
            bench.mlperf_conf_interactive_model if scen is Scenario.INTERACTIVE else bench.mlperf_conf_model
        )
        if want and settings.conf_model != want:
            raise UnusableInput(
                f"the record says {bench.name} {scen.value} but LoadGen read the settings of {settings.conf_model!r}",
                path=str(run_dir / "run-record.json"),
            )
    runs = rnd.loadgen_runs
    version_ok = runs is None or record.loadgen_version is None or runs.accepts(record.loadgen_version)
    if record.mode == "submission" and not version_ok:
        raise UnusableInput(
            f"LoadGen {record.loadgen_version} is not a {rnd.name} release (its seeds are another round's)",
            path=str(run_dir / "run-record.json"),
        )


def _stage_run(
    stage: Staging, record: RunRecord, run_dir: Path, rnd: Round, plan: PackagePlan
) -> tuple[list[str], list[str]]:
    """Write one run's part of the tree into the staging directory; returns (new directories, shared files)."""
    tests = {t.name: t for t in record.tests}
    bench = rnd.benchmark(record.benchmark)
    if bench is None:  # pragma: no cover - the plan resolved it
        raise UnusableInput(f"unknown benchmark {record.benchmark}")
    lay = rnd.structure.layout
    loc = plan.location
    result = lay.result_path(loc)
    perf = _test_dir(run_dir, tests["performance"].directory)
    for f in rnd.structure.performance_run_files:
        stage.copy(perf / f, f"{result}/performance/run_1/{f}", run_dir)
    acc = _test_dir(run_dir, tests["accuracy"].directory)
    for f in ("mlperf_log_summary.txt", "mlperf_log_detail.txt", "accuracy.txt"):
        stage.copy(acc / f, f"{result}/accuracy/{f}", run_dir)
    acc_log = f"{result}/accuracy/mlperf_log_accuracy.json"
    (stage.root / acc_log).parent.mkdir(parents=True, exist_ok=True)
    truncate_accuracy_log(
        acc / "mlperf_log_accuracy.json", stage.root / acc_log, rnd.structure.max_accuracy_log_bytes, run_dir
    )
    stage.files.append(acc_log)
    has_compliance = False
    for test in bench.compliance_tests:
        t = tests.get(test)
        if t is None or t.status != "finished":
            continue  # the checker reports the missing test
        has_compliance = True
        src = _test_dir(run_dir, t.directory)
        sources = {
            "verify_accuracy.txt": src / "verification" / "verify_accuracy.txt",
            "accuracy/mlperf_log_accuracy.json": src / "mlperf_log_accuracy.json",
        }
        for rel in lay.compliance_files.get(test, ()):
            stage.copy(
                sources.get(rel, src / rel.removeprefix("performance/run_1/")),
                f"{lay.compliance_path(loc)}/{test}/{rel}",
                run_dir,
            )
    meas = lay.measurements_path(loc)
    settings = tests["performance"].loadgen_settings or record.settings
    stage.write(f"{meas}/user.conf", record.user_conf or "# no user.conf settings\n")
    stage.write(f"{meas}/mlperf.conf", _mlperf_conf(run_dir, record, settings))
    stage.write(f"{meas}/README.md", measurement_readme(record, loc.system, plan.implementation))
    stage.write(lay.measurements_json_path(loc), json.dumps(plan.implementation, indent=2) + "\n")
    system_file = lay.system_path(loc)
    shared = [system_file]
    if system_file not in stage.files:
        stage.write(system_file, json.dumps(plan.system_description, indent=2) + "\n")
    sub = f"{loc.division}/{loc.submitter}"
    calib = lay.calibration_path(loc)
    if not any((stage.tree / sub / p).exists() for p in rnd.structure.calibration_paths):
        if calib not in stage.files:
            stage.write(calib, calibration_text(record, plan.implementation))
        shared.append(calib)
    code_readme_file = f"{lay.code_path(loc)}/README.md"
    if code_readme_file not in stage.files:
        stage.write(code_readme_file, code_readme(record))
    shared.append(code_readme_file)
    return _new_dirs(rnd, loc, has_compliance), shared


def _check_run(record: RunRecord, run_dir: Path) -> None:
    tests = {t.name: t for t in record.tests}
    for needed in ("performance", "accuracy"):
        if needed not in tests or tests[needed].status != "finished":
            raise UnusableInput(
                f"the run has no finished {needed} test; package a --mode submission run", path=str(run_dir)
            )
    failed = sum(t.sut.failed for t in record.tests)
    if failed:
        raise UnusableInput(
            f"{failed} sample(s) failed in the engine during the run: not packaging it (LoadGen's logs would hide them)",
            path=str(run_dir),
        )


def package_runs(
    runs: Sequence[tuple[RunRecord, Path, PackagePlan]], rnd: Round, req: PackageRequest
) -> list[PackageResult]:
    """Copy finished submission runs of one round into its official tree, all or nothing (never overwrites)."""
    tree = Path(os.path.abspath(req.tree))
    for record, run_dir, plan in runs:
        _check_run(record, run_dir)
        _cross_check(record, run_dir, rnd)
        rd = Path(os.path.realpath(run_dir))
        if Path(os.path.realpath(tree)).is_relative_to(rd) or rd.is_relative_to(Path(os.path.realpath(tree))):
            raise UnusableInput(
                "the tree and a run directory are inside each other: use another --tree", path=str(tree)
            )
        _refuse_existing(tree, rnd, plan)
    with sigterm_as_interrupt():
        try:
            stage = Staging(tree)
        except OSError as exc:
            raise UnusableInput(f"cannot create the tree: {exc.strerror or exc}", path=str(tree)) from exc
        try:
            new_dirs: list[str] = []
            shared: list[str] = []
            for record, run_dir, plan in runs:
                dirs, files = _stage_run(stage, record, run_dir, rnd, plan)
                new_dirs += dirs
                shared += [f for f in files if f not in shared]
            written = stage.install(new_dirs, shared)
        except OSError as exc:
            raise UnusableInput(
                f"packaging failed, nothing was written to the tree: {exc.strerror or exc}"
                + (f" ({exc.filename})" if exc.filename else ""),
                path=str(tree),
            ) from exc
        finally:
            stage.remove()
    results = []
    for _record, _run_dir, plan in runs:
        result = tree / rnd.structure.layout.result_path(plan.location)
        results.append(
            PackageResult(tree=tree, result_dir=result, written=[w for w in written if _under(w, stage.tree)])
        )
    return results


def _under(path: Path, root: Path) -> bool:
    return path.is_relative_to(root)


def package_run(
    record: RunRecord, run_dir: Path, rnd: Round, req: PackageRequest, plan: PackagePlan | None = None
) -> PackageResult:
    """Copy one finished submission run into the official tree of its round (atomically; never overwrites)."""
    if plan is None:
        _check_run(record, run_dir)
        plan = plan_for_record(req, rnd, record)
    return package_runs([(record, run_dir, plan)], rnd, req)[0]


def plan_for_record(req: PackageRequest, rnd: Round, record: RunRecord) -> PackagePlan:
    """:func:`plan_package` for a finished run: what its record says about the benchmark, scenario and engine."""
    eng = record.engine
    return plan_package(
        req,
        rnd,
        record.benchmark,
        record.scenario,
        record.simulated,
        model=eng.model if eng else None,
        precision=eng.precision if eng else None,
    )


def read_implementation_json(path: Path) -> dict[str, Any]:
    """The user's implementation description file (an object of field -> value), read with bounded size."""
    value = read_input_json(path, "implementation description")
    if not isinstance(value, dict):
        raise UnusableInput("an implementation description is a JSON object", path=str(path))
    return value
