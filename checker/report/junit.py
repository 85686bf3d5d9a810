"""The ``--junit`` report: JUnit XML, one testcase per result directory.

A result with errors gets one ``<failure>`` listing them; warnings and notes go to
``<system-out>``. Tree-, submitter- and system-level findings form one extra testcase
(``tree``). CI systems (GitLab, Jenkins, GitHub test reporters) read this format.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence

from checker.findings import Finding, Severity
from checker.report.outcome import counts
from checker.report.terminal import finding_line
from checker.results import CheckReport

# Characters XML 1.0 cannot hold (messages may quote bytes from broken files).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _clean(text: str) -> str:
    return _NOT_XML.sub("\N{REPLACEMENT CHARACTER}", text)


def _testcase(parent: ET.Element, classname: str, name: str, findings: Sequence[Finding]) -> bool:
    case = ET.SubElement(parent, "testcase", classname=_clean(classname), name=_clean(name), time="0")
    errors = [f for f in findings if f.severity is Severity.ERROR]
    others = [f for f in findings if f.severity is not Severity.ERROR]
    if errors:
        first = errors[0]
        failure = ET.SubElement(
            case,
            "failure",
            message=_clean(f"{len(errors)} error(s): [{first.rule}] {first.message}"),
            type=_clean(first.rule),
        )
        failure.text = _clean("\n".join(finding_line(f) for f in errors))
    if others:
        out = ET.SubElement(case, "system-out")
        out.text = _clean("\n".join(finding_line(f) for f in others))
    return bool(errors)


def render_junit(report: CheckReport) -> bytes:
    c = counts(report)
    suites = ET.Element("testsuites", name="check-submission")
    suite = ET.SubElement(
        suites,
        "testsuite",
        name=_clean(f"check-submission {report.round} {report.root}"),
    )
    failures = 0
    tests = 0
    if report.findings:
        tests += 1
        failures += _testcase(suite, "tree", "tree, submitter and system checks", report.findings)
    for r in report.results:
        tests += 1
        classname = f"{r.division}.{r.submitter}.{r.system}"
        failures += _testcase(suite, classname, f"{r.benchmark}/{r.scenario}", r.findings)
    for el in (suites, suite):
        el.set("tests", str(tests))
        el.set("failures", str(failures))
        el.set("errors", "0")
    suite.set("skipped", "0")
    props = ET.Element("properties")
    for key, value in (
        ("round", report.round),
        ("tool_version", report.tool_version),
        ("root", report.root),
        ("valid_results", str(c.valid)),
        ("invalid_results", str(c.invalid)),
    ):
        ET.SubElement(props, "property", name=key, value=_clean(value))
    suite.insert(0, props)
    ET.indent(suites)
    return bytes(ET.tostring(suites, encoding="utf-8", xml_declaration=True)) + b"\n"
