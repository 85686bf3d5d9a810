"""Every rule id the checker emits, with the official-checker catalogue entry it implements.

``catalogue`` refers to ``official-checker-catalogue.md`` (sections A-H); ``official`` says what the official v5.1.1
checker does where it differs (``None``: same verdict); ``beyond`` marks checks the official checker lacks.
Compliance TEST01/TEST04 performance logs are checked with the PERF-/LAT- rules under a ``COMPL-`` prefix
(e.g. ``COMPL-PERF-SEEDS``).
"""

from __future__ import annotations

from dataclasses import dataclass

from checker.findings import Severity


@dataclass(frozen=True, slots=True)
class RuleInfo:
    rule: str
    catalogue: str
    title: str
    severity: Severity = Severity.ERROR
    official: str | None = None  # official behaviour where this tool's verdict differs
    beyond: bool = False


WARN, INFO = Severity.WARNING, Severity.INFO

_RULES = (
    # A. tree
    RuleInfo("TREE-DIVISION", "A1", "top-level directory that is not a division", WARN),
    RuleInfo(
        "TREE-ROOT-FILES",
        "A2",
        "file other than *.md/*.pdf at the repository root",
        WARN,
        official="aborts the whole run unless --skip-extra-files-in-root-check (the official verdicts use the flag)",
    ),
    RuleInfo("TREE-DIVISION-FILES", "A3", "a division directory holds a file"),
    RuleInfo("TREE-NO-DIVISION", "A1", "no closed/open/network directory found"),
    RuleInfo("TREE-NO-RESULTS", "A4", "submitter without results/ is skipped", INFO),
    RuleInfo("TREE-BROKEN-SYMLINK", "A5", "broken symbolic link"),
    RuleInfo("TREE-SYMLINK-OUTSIDE", "A5", "symbolic link leading outside the checked tree", beyond=True),
    RuleInfo("TREE-FILE-SIZE", "A6", "file above the size limit"),
    RuleInfo("TREE-HIDDEN-NAME", "A7", "file or directory name starting with '.'"),
    RuleInfo("TREE-SPACE-NAME", "A8", "space in a file or directory name"),
    RuleInfo("TREE-PYCACHE", "A9", "__pycache__ directory"),
    RuleInfo("TREE-EMPTY-DIR", "A10", "empty directory"),
    RuleInfo(
        "TREE-MODEL-MAPPING",
        "A11",
        "open-division model_mapping.json unreadable or malformed",
        official="crashes on a malformed file",
    ),
    RuleInfo("TREE-ORPHAN-SYSTEM", "A12", "measurements/ or systems/ entry without results"),
    RuleInfo("TREE-CALIBRATION", "A13", "closed/network submission without calibration.md"),
    RuleInfo("TREE-UNKNOWN-BENCHMARK", "A15/A16", "benchmark directory that is not a benchmark of the round"),
    RuleInfo("TREE-NO-SCENARIO-TABLE", "A16", "benchmark has no scenarios for the system type"),
    RuleInfo("TREE-SCENARIO", "A17", "scenario neither required nor optional (or not a scenario)"),
    RuleInfo("TREE-REQUIRED-SCENARIOS", "A18", "a required scenario has no valid result"),
    RuleInfo("TREE-SERVER-OR-INTERACTIVE", "A19", "neither Server nor Interactive has a valid result"),
    RuleInfo("TREE-UNKNOWN-ENTRY", "-", "entry of a result directory no rule expects", WARN, beyond=True),
    RuleInfo(
        "TREE-OTHER-LAYOUT", "-", "measurements/ or compliance/ tree of the v5.x layout in a v6.x round", WARN, beyond=True
    ),
    RuleInfo(
        "TREE-UNREADABLE",
        "-",
        "directory or entry that cannot be read (permissions, I/O error, path longer than PATH_MAX)",
        beyond=True,
    ),
    RuleInfo(
        "TREE-NOT-DIR",
        "-",
        "division or results/ that is a symbolic link, a file or another non-directory",
        beyond=True,
    ),
    RuleInfo("TREE-SPECIAL-FILE", "-", "FIFO, socket or device in the submission", beyond=True),
    RuleInfo("TREE-NAME-ENCODING", "-", "file or directory name that is not UTF-8", beyond=True),
    RuleInfo("TREE-NOTHING-CHECKED", "-", "no result directory could be checked", beyond=True),
    # B. system description
    RuleInfo("SYS-MISSING", "A14", "result system without systems/<system>.json"),
    RuleInfo("SYS-JSON", "B", "system description unreadable or not a JSON object"),
    RuleInfo("SYS-STATUS", "B1", "status not available/preview/rdi"),
    RuleInfo("SYS-TYPE", "B2", "invalid system_type"),
    RuleInfo("SYS-NETWORK", "B3", "is_network does not match the division"),
    RuleInfo("SYS-FIELDS", "B4/B6", "required field missing"),
    RuleInfo("SYS-EMPTY-FIELDS", "B5", "field that needs a value is empty"),
    RuleInfo("SYS-UNKNOWN-FIELD", "B7", "unknown field", WARN),
    RuleInfo(
        "SYS-PLACEHOLDER", "-", "placeholder value (TBD, TODO, N/A) in a required field", WARN, beyond=True
    ),
    RuleInfo("SYS-SUBMITTER", "B8", "submitter field differs from the directory"),
    RuleInfo("SYS-DIVISION", "B9", "division field differs from the directory"),
    RuleInfo(
        "SYS-FIELD-TYPE",
        "-",
        "value the official checkers crash on or misread while writing the summary CSV",
        official="v5.1.1/HEAD raise TypeError/ValueError and stop the run",
        beyond=True,
    ),
    # C. measurements
    RuleInfo("MEAS-DIR", "C1", "measurement directory missing"),
    RuleInfo("MEAS-FILES", "C2", "user.conf / README.md missing or empty"),
    RuleInfo(
        "MEAS-POWER-FILES",
        "C3",
        "power result without analyzer_table / power_settings",
        official="HEAD accepts the flag but does not check",
    ),
    RuleInfo("MEAS-JSON", "C4", "measurement JSON missing or unreadable"),
    RuleInfo("MEAS-JSON-FIELDS", "C5", "measurement JSON field missing or empty"),
    RuleInfo("MEAS-CODE", "C6", "no code/<benchmark>"),
    RuleInfo("MEAS-MLPERF-CONF", "-", "the measurements mlperf.conf is not the round's (seeds, min duration)", WARN, beyond=True),
    # D. performance
    RuleInfo("PERF-RUN-DIR", "D1", "performance/run_1 missing"),
    RuleInfo("PERF-FILES", "D2", "run_1 file list mismatch"),
    RuleInfo("PERF-LOG", "D19/P", "detail log missing, unreadable or with malformed :::MLLOG lines"),
    RuleInfo("PERF-VALIDITY", "D3", "result_validity is not VALID"),
    RuleInfo(
        "PERF-LOADGEN-ERRORS",
        "D4",
        "LoadGen logged errors",
        official="trusts num_errors only; is_error records with num_errors 0 are missed (beyond)",
    ),
    RuleInfo("PERF-EQUAL-ISSUE", "D5", "equal-issue mode off where required"),
    RuleInfo("PERF-SAMPLE-COUNT", "D6", "performance sample count below the benchmark's"),
    RuleInfo("PERF-SEEDS", "D7", "RNG seeds differ from the round's"),
    RuleInfo("PERF-SCENARIO", "D8", "effective_scenario unreadable"),
    RuleInfo("PERF-RESULT", "D8", "the result key is missing"),
    RuleInfo(
        "PERF-MIN-QUERIES", "D12", "min query count below the benchmark's (non early-stopping scenarios)"
    ),
    RuleInfo("PERF-OFFLINE-SPQ", "D13", "Offline samples per query below the minimum"),
    RuleInfo("PERF-MIN-DURATION", "D14", "min duration below 600 s"),
    RuleInfo("PERF-NETWORK-SUT", "D18", "network division SUT name lacks 'Network SUT'"),
    RuleInfo("PERF-LOADGEN-VERSION", "-", "LoadGen version not accepted for the round", WARN, beyond=True),
    RuleInfo(
        "PERF-SETTINGS-OVERRIDDEN", "-", "requested setting differs from the effective one", INFO, beyond=True
    ),
    RuleInfo("PERF-SUMMARY-MISMATCH", "-", "summary log disagrees with the detail log", beyond=True),
    RuleInfo("PERF-SUMMARY-LOG", "-", "summary log unreadable or not a file", WARN, beyond=True),
    RuleInfo(
        "PERF-CONSTRAINT-FLAGS", "-", "result_validity VALID while a LoadGen constraint flag is false", beyond=True
    ),
    RuleInfo("PERF-TOKENS-RATE", "-", "tokens/s above samples/s x the benchmark's max_new_tokens", beyond=True),
    RuleInfo(
        "PERF-TOKENS-PER-SAMPLE",
        "-",
        "performance tokens per sample more than 2x from the accuracy run's (accuracy.txt tokens_per_sample)",
        beyond=True,
    ),
    RuleInfo("PERF-AUDIT-CONFIG", "-", "performance run made under an audit.config", WARN, beyond=True),
    RuleInfo("PERF-ENDPOINTS-FILES", "D20", "endpoints result without config.yaml or performance/result_summary.json"),
    RuleInfo("PERF-ENDPOINTS-LOG", "D20", "endpoints config.yaml / result_summary.json unreadable or malformed"),
    RuleInfo("PERF-ENDPOINTS-MODEL", "D21", "benchmark not allowed as an endpoints result"),
    RuleInfo("PERF-ENDPOINTS-RULES-DATA", "-", "endpoints rule data missing from the round's rules data; not checked", WARN, beyond=True),
    RuleInfo("PERF-ENDPOINTS-INCOMPLETE", "-", "endpoints performance run not complete", beyond=True),
    RuleInfo("PERF-ENDPOINTS-DURATION", "-", "endpoints performance run shorter than the round's minimum", beyond=True),
    RuleInfo("PERF-ENDPOINTS-SAMPLES", "-", "endpoints Offline run issued fewer samples than the minimum", beyond=True),
    RuleInfo("PERF-ENDPOINTS-CONFIG", "-", "endpoints config.yaml disagrees with the scenario or the round", beyond=True),
    RuleInfo("PERF-ENDPOINTS-UNITS", "-", "endpoints result reported in the round's unit, not queries/s", INFO, beyond=True),
    RuleInfo("PERF-EXTRA-RUN", "-", "performance/ holds run_N besides run_1", WARN, beyond=True),
    RuleInfo(
        "PERF-VALUE",
        "-",
        "result, latency or num_errors that no real run can log (NaN, infinite, negative, implausibly large)",
        beyond=True,
    ),
    # D latency
    RuleInfo(
        "LAT-EARLY-STOPPING",
        "D9",
        "early stopping not met",
        official="v5.1.1 only logs it (HEAD fails)",
        beyond=True,
    ),
    RuleInfo(
        "LAT-E2E", "D10", "endpoints p99 end-to-end latency above the scenario's bound",
        official="compares Interactive with the Server bound",
    ),
    RuleInfo("LAT-SERVER-TARGET", "D10", "Server target latency above the benchmark's bound"),
    RuleInfo("LAT-TOKEN-LATENCIES", "D15", "use_token_latencies off for an LLM"),
    RuleInfo("LAT-TOKEN-LIMITS", "D16", "no TTFT/TPOT limits for this scenario"),
    RuleInfo("LAT-TTFT", "D16", "p99 TTFT not below the limit"),
    RuleInfo("LAT-TPOT", "D16", "p99 TPOT not below the limit"),
    RuleInfo(
        "LAT-TOKEN-TARGETS",
        "-",
        "configured TTFT/TPOT target looser than the scenario's limit (LoadGen judged against the wrong bound)",
        beyond=True,
    ),
    # D17 inferred
    RuleInfo("INFER-SCENARIO", "D17", "the directory holds a run of a scenario that cannot stand for it"),
    RuleInfo("INFER-INTERACTIVE", "D17", "Interactive result not from a Server run"),
    RuleInfo("INFER-ZERO", "D17", "inferred result is 0"),
    RuleInfo(
        "INFER-DATACENTER",
        "D17",
        "inferred result on a datacenter system",
        official="v5.1.1 allows it; HEAD and the rules restrict inference to edge",
        beyond=True,
    ),
    # E. accuracy
    RuleInfo("ACC-TXT", "E1", "accuracy.txt missing or unreadable"),
    RuleInfo("ACC-FILES", "E2", "accuracy/ file list mismatch"),
    RuleInfo("ACC-METRIC", "E3/E5/E11", "metric missing or below target (warning in open)"),
    RuleInfo("ACC-UPPER", "E4", "metric above the upper limit"),
    RuleInfo("ACC-HASH", "E6", "no hash= line in accuracy.txt"),
    RuleInfo("ACC-LOG", "E7", "mlperf_log_accuracy.json missing"),
    RuleInfo("ACC-LOG-SIZE", "E7", "mlperf_log_accuracy.json not truncated"),
    RuleInfo("ACC-HASH-MISMATCH", "-", "hash= does not match an untruncated accuracy log", beyond=True),
    RuleInfo("ACC-HASH-FORMAT", "-", "hash= value is not a SHA-256 (e.g. hash=TODO)", beyond=True),
    RuleInfo(
        "ACC-MODE", "-", "accuracy/ holds a run that is not AccuracyOnly (a performance or compliance run)", beyond=True
    ),
    RuleInfo("ACC-AUDIT-CONFIG", "-", "LoadGen found an audit.config in the accuracy run", beyond=True),
    RuleInfo(
        "ACC-SAMPLES",
        "-",
        "samples issued in the accuracy run, or scored in accuracy.txt (gen_num), differ from the data set size",
        beyond=True,
    ),
    RuleInfo("ACC-LOG-DETAIL", "E8/P", "accuracy detail log unreadable or malformed"),
    RuleInfo(
        "ACC-LOADGEN-ERRORS",
        "E8",
        "LoadGen errors in the accuracy run",
        official="v5.1.1 crashes (UnboundLocalError)",
        beyond=True,
    ),
    RuleInfo(
        "ACC-DATASET",
        "E9",
        "accuracy run does not cover the whole data set",
        official="v5.1.1 only logs it (HEAD fails)",
        beyond=True,
    ),
    RuleInfo("ACC-ENDPOINTS-RESULTS", "E12", "endpoints accuracy_results.json missing, unreadable, without a score or incomplete"),
    RuleInfo("ACC-EXTRA-FILES", "E10", "SDXL accuracy/images/ missing or incomplete"),
    # F. compliance
    RuleInfo("COMPL-DIR", "F1", "compliance directory missing"),
    RuleInfo("COMPL-TEST-DIR", "F2", "required TESTxx directory missing"),
    RuleInfo("COMPL-VERIFY-PERF", "F4", "verify_performance.txt without TEST PASS"),
    RuleInfo("COMPL-PERF-FILES", "F5", "TESTxx/performance/run_1 file list mismatch"),
    RuleInfo("COMPL-PERF-LOG", "F3", "TESTxx performance log missing or malformed"),
    RuleInfo("COMPL-TEST01-ACC", "F6/F7", "TEST01 accuracy not passed"),
    RuleInfo("COMPL-TEST06", "F8", "TEST06 verify_accuracy.txt does not pass"),
    RuleInfo("COMPL-VERIFY", "F10", "TEST07/TEST08/TEST09 verification file without TEST PASS (v6.x)"),
    RuleInfo("COMPL-ENDPOINTS-AUDIT", "F11", "endpoints audit/audit_<test>.json missing (TEST04), unreadable, wrong test or not passed"),
    RuleInfo(
        "COMPL-ENDPOINTS-AUDIT-MISSING", "-", "endpoints result without the audit of a required test", WARN,
        official="skips a missing endpoints audit except TEST04", beyond=True,
    ),
    RuleInfo("COMPL-RULES-DATA", "-", "compliance threshold not in the rules data; not re-verified", WARN, beyond=True),
    RuleInfo("COMPL-TEST07-REVERIFY", "-", "TEST07 verify_accuracy.txt inconsistent with its score, the round's threshold or its PASS line", beyond=True),
    RuleInfo("COMPL-TEST07-LOG", "-", "TEST07 accuracy log missing or with fewer samples than the test logs", beyond=True),
    RuleInfo("COMPL-TEST09-REVERIFY", "F12", "TEST09 mean output length (re-computed) outside the round's bounds"),
    RuleInfo("COMPL-TEST09-LOG", "-", "TEST09 accuracy log missing, unparseable or with fewer samples than the test logs", beyond=True),
    RuleInfo("COMPL-TEST06-LOG", "-", "TEST06 accuracy log missing or unparseable", beyond=True),
    RuleInfo("COMPL-TEST06-REVERIFY", "-", "TEST06 re-run on the accuracy log fails", beyond=True),
    RuleInfo(
        "COMPL-TEST06-SKIPPED", "-", "TEST06 first-token check 'Skipped' outside Offline", WARN, beyond=True
    ),
    RuleInfo(
        "COMPL-TEST06-TRUNCATED",
        "-",
        "TEST06 accuracy log truncated: re-verification covers only the visible entries",
        WARN,
        beyond=True,
    ),
    # G. power
    RuleInfo("POWER-FILES", "G1", "power / ranging file list incomplete"),
    RuleInfo("POWER-RANGING", "G2", "ranging run log unreadable"),
    RuleInfo("POWER-METRIC", "G3", "no power samples inside the run"),
    RuleInfo("POWER-WG", "G4", "Power WG checks (subset): client/server JSON fields, uuid, session name"),
)

RULES: dict[str, RuleInfo] = {r.rule: r for r in _RULES}


def rule_info(rule: str) -> RuleInfo | None:
    """Look a rule up; ``COMPL-PERF-*`` / ``COMPL-LAT-*`` resolve to their PERF-/LAT- entry."""
    if rule in RULES:
        return RULES[rule]
    if rule.startswith("COMPL-") and rule[len("COMPL-") :] in RULES:
        return RULES[rule[len("COMPL-") :]]
    return None
