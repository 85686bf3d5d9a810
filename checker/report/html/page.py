"""One self-contained HTML document: inline CSS, inline SVG plots, no script, nothing fetched.

The page carries a Content-Security-Policy of ``default-src 'none'`` (inline styles only), so even a browser
with the network on loads nothing when it opens it. Nothing in it depends on the time it was written: the same
inputs give the same bytes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from checker.findings import Finding, Severity
from checker.report.html.markup import Child, Markup, el, join
from checker.version import tool_version

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

CSS = """
:root { --ok: #1b7f3b; --bad: #b3261e; --warn: #9a6700; --info: #3d5a80; --muted: #5f6368; --line: #d0d7de; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; color: #1f2328;
       margin: 0 auto; padding: 16px 24px 48px; max-width: 1180px; background: #fff; }
h1 { font-size: 22px; margin: 8px 0 4px; } h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid
var(--line); padding-bottom: 4px; } h3 { font-size: 15px; margin: 18px 0 6px; }
.sub { color: var(--muted); margin: 0 0 12px; }
code, .mono { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12.5px; word-break: break-all; }
table { border-collapse: collapse; margin: 6px 0 12px; width: 100%; }
th, td { border: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.kv { width: auto; } table.kv th { width: 16em; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-weight: 700; font-size: 12px;
         color: #fff; background: var(--muted); letter-spacing: .02em; }
.badge.ok { background: var(--ok); } .badge.bad { background: var(--bad); } .badge.warn { background: var(--warn); }
.badge.info { background: var(--info); }
.box { border: 1px solid var(--line); border-left: 5px solid var(--info); padding: 8px 12px; margin: 10px 0;
       background: #f8fafc; }
.box.bad { border-left-color: var(--bad); background: #fdf3f2; } .box.warn { border-left-color: var(--warn);
background: #fff8e6; } .box.ok { border-left-color: var(--ok); background: #f0f9f2; }
.box p { margin: 4px 0; } .box ul { margin: 4px 0; padding-left: 20px; }
.explain h3 { margin-top: 10px; } .explain-item { margin-bottom: 10px; }
figure.plot { margin: 10px 0 18px; } figure.plot svg { max-width: 100%; height: auto; display: block; }
figure.plot.wide svg { width: 100%; }
figcaption { color: var(--muted); font-size: 12.5px; margin-top: 2px; }
ul.findings { list-style: none; padding-left: 0; margin: 4px 0; }
ul.findings li { border-bottom: 1px solid #eef0f2; padding: 4px 0; }
.sev-error { color: var(--bad); font-weight: 700; } .sev-warning { color: var(--warn); font-weight: 700; }
.sev-info { color: var(--info); font-weight: 700; }
.fix { color: #0b5394; } .src { color: var(--muted); font-size: 12.5px; }
details { margin: 4px 0 8px; } summary { cursor: pointer; color: #0b5394; }
footer { margin-top: 36px; color: var(--muted); font-size: 12px; border-top: 1px solid var(--line); padding-top: 6px; }
nav.toc a { margin-right: 14px; }
"""

STATUS_CLASS = {
    "VALID": "ok",
    "INVALID": "bad",
    "NOT_SUBMITTABLE": "warn",
    "INCOMPLETE": "bad",
    "CLIENT_BOUND": "bad",
    "comparable": "ok",
    "comparable-with-disclosures": "warn",
    "not-comparable": "bad",
}


def badge(text: str, kind: str | None = None) -> Markup:
    return el("span", text, class_=f"badge {kind or STATUS_CLASS.get(text, 'info')}", data_status=text)


def box(kind: str, *children: Child, **attrs: str) -> Markup:
    return el("div", *children, class_=f"box {kind}", **attrs)


def kv_table(rows: Iterable[tuple[str, Child]], **attrs: str) -> Markup:
    """A two-column table of ``(label, value)``; a row whose value is None is left out."""
    body = [el("tr", el("th", k), el("td", v)) for k, v in rows if v is not None]
    return el("table", el("tbody", body), class_="kv", **attrs)


@dataclass(frozen=True)
class Cell:
    """A table cell with options: ``num`` right-aligns it."""

    value: Child
    num: bool = False
    attrs: tuple[tuple[str, str], ...] = ()


def _cell_child(c: object) -> Child:
    if c is None or isinstance(c, str | int | float | list | tuple):
        return c  # a list / tuple of children, as el() takes them
    return str(c)


def table(headers: Sequence[object], rows: Iterable[Sequence[object]], **attrs: str) -> Markup:
    """A table; a cell is a :class:`Cell` or anything :func:`el` takes as a child."""

    def cell(tag: str, c: object) -> Markup:
        if isinstance(c, Cell):
            return el(tag, c.value, class_="num" if c.num else None, **dict(c.attrs))
        return el(tag, _cell_child(c))

    head = el("thead", el("tr", [cell("th", h) for h in headers]))
    body = el("tbody", [el("tr", [cell("td", c) for c in row]) for row in rows])
    return el("table", head, body, **attrs)


def section(title: str, *children: Child, id: str | None = None) -> Markup:
    return el("section", el("h2", title), *children, id=id)


def fmt_num(value: float | int | None, digits: int = 4, unit: str = "") -> str:
    """A number for people: ``None`` is "not measured", integers with thousands separators, values of
    ``10**digits`` and more with one decimal (27,803.9), others with ``digits`` significant digits."""
    if value is None:
        return "not measured"
    if isinstance(value, bool):
        return str(value)
    if math.isnan(value) or math.isinf(value):
        text = str(value)
    elif isinstance(value, int) or (value.is_integer() and abs(value) < 1e15):
        text = f"{int(value):,}"
    elif 10**digits <= abs(value) < 1e15:
        text = f"{value:,.1f}"
    else:
        text = f"{value:,.{digits}g}"
    return f"{text} {unit}".rstrip() if unit else text


SEVERITY_WORD = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def finding_item(f: Finding, location: Child = None, *, show_rule: bool = True, show_source: bool = True) -> Markup:
    """One finding as a list item: location, severity, [RULE], message, fix, source (``show_source`` False: the
    list's heading cites it already)."""
    loc = location if location is not None else (el("code", f.location()) if f.path or f.scope or f.result else None)
    return el(
        "li",
        loc,
        " " if loc is not None else None,
        el("span", SEVERITY_WORD[f.severity], class_=f"sev-{f.severity.value}"),
        " ",
        el("code", f"[{f.rule}]") if show_rule else None,
        " " if show_rule else None,
        el("span", f.message, class_="msg"),
        [" — ", el("span", "fix: ", f.fix, class_="fix")] if f.fix else None,
        [" ", el("span", "(", f.source, ")", class_="src")] if f.source and show_source else None,
        [" ", el("span", "[beyond the official checker]", class_="src")] if f.beyond_official else None,
        class_=f"finding sev-row-{f.severity.value}",
        data_rule=f.rule,
    )


def document(title: str, subtitle: Child, body: Iterable[Child], *, kind: str) -> bytes:
    """The whole page as UTF-8 bytes; ``kind`` (run, check, sweep, table, claim) is written on ``<body>``."""
    head = join(
        Markup('<meta charset="utf-8">'),
        el("meta", http_equiv="Content-Security-Policy", content=CSP),
        el("meta", name="viewport", content="width=device-width, initial-scale=1"),
        el("meta", name="generator", content=f"inference-audit {tool_version()}"),
        el("title", title),
        el("style", Markup(CSS)),
    )
    footer = el(
        "footer",
        f"inference-audit {tool_version()} — a self-contained page: no script, nothing loaded from the network; "
        "plots are SVG drawn by matplotlib when the page was written.",
    )
    page = join(
        Markup("<!DOCTYPE html>\n"),
        el(
            "html",
            el("head", head),
            el("body", el("h1", title), el("p", subtitle, class_="sub"), *body, footer, data_report=kind),
            lang="en",
        ),
        Markup("\n"),
    )
    return page.encode("utf-8")
