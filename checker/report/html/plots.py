"""Static SVG plots drawn with matplotlib, inlined into the page.

Why matplotlib: a long-maintained, widely packaged plotting library whose SVG backend needs no browser, no
script and no network, so a page is offline by construction (an interactive bundle would be a large script to
embed and keep up to date; a page that loads its UI from a site breaks when the site goes). Only its
object-oriented API is used (``Figure`` + the SVG canvas: no pyplot, no GUI backend, no global state), inside
``rc_context`` so the caller's settings are untouched.

Deterministic output: ``svg.hashsalt`` is fixed per plot, the date and creator metadata are dropped, and every
``id`` in a plot is prefixed with the plot's key (several plots on one page never share an id). Text stays
text (``svg.fonttype: none``), so the numbers on the axes are in the page's DOM; mathtext is off
(``text.parse_math: False``), so a ``$`` in a name from a file is a dollar sign.

Every text of a plot (title, axis labels, categories, tick and legend labels) is made printable
(:func:`checker.printable.printable`) before matplotlib sees it: a name from a file can hold an escape sequence or
a bidi control, which would otherwise be written raw into the SVG and into matplotlib's "Glyph missing" warning
on the terminal.
"""

from __future__ import annotations

import dataclasses
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, cast

from checker.printable import printable
from checker.report.html.markup import Child, Markup, el

# colours that stay apart for colour-blind readers (Okabe-Ito)
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
LIMIT_COLOR = "#B3261E"
BOUND_COLOR = "#6A3D9A"

_RC: dict[str, Any] = {
    "svg.fonttype": "none",
    "text.parse_math": False,
    "font.family": "DejaVu Sans",
    "font.size": 9.0,
    "axes.grid": True,
    "grid.color": "#e3e6ea",
    "grid.linewidth": 0.6,
    "axes.edgecolor": "#8c959f",
    "axes.titlesize": 10.0,
    "axes.titleweight": "bold",
    "legend.fontsize": 8.0,
    "legend.framealpha": 0.9,
    "path.simplify": True,
    "figure.dpi": 72.0,
}


@dataclass(frozen=True)
class Series:
    """One line / set of points. ``kind``: ``line``, ``step`` (a CDF), ``points`` (markers joined by a thin
    line), ``markers`` (markers only), ``scatter`` (many small dots)."""

    label: str
    x: Sequence[float]
    y: Sequence[float]
    kind: Literal["line", "step", "points", "markers", "scatter"] = "line"
    color: str | None = None
    marker: str = "o"  # the matplotlib marker of ``points`` and ``markers`` ("D" diamond, "^" triangle, "s" square)


@dataclass(frozen=True)
class RefLine:
    """A reference line across the plot at ``value`` on ``axis`` (a limit, a bound, a knee)."""

    value: float
    label: str
    axis: Literal["x", "y"] = "x"
    color: str = LIMIT_COLOR
    style: str = "--"


@dataclass(frozen=True)
class Mark:
    """One labelled point (the knee of a sweep, a run's position against a bound)."""

    x: float
    y: float
    label: str
    color: str = BOUND_COLOR


@dataclass(frozen=True)
class Plot:
    """An x/y plot. ``key`` names it in the page (``data-plot``) and salts its ids."""

    key: str
    title: str
    x_label: str
    y_label: str
    series: tuple[Series, ...]
    lines: tuple[RefLine, ...] = ()
    marks: tuple[Mark, ...] = ()
    log_x: bool = False
    log_y: bool = False
    y_min: float | None = None
    y_max: float | None = None
    x_min: float | None = None
    x_max: float | None = None
    integer_y: bool = False
    integer_x: bool = False
    legend_loc: str = "outside"  # "outside": below the plot; else a matplotlib loc inside it
    zoom_y: tuple[float, float] | None = None  # a second panel over this y range
    zoom_x: tuple[float, float] | None = None
    zoom_title: str = "tail (zoomed)"
    width_in: float = 9.0
    height_in: float = 3.4
    y_ticks: tuple[tuple[float, str], ...] = ()  # named rows (a dot plot): (y, label), the first on top


@dataclass(frozen=True)
class Bars:
    """Stacked horizontal bars: ``stacks`` maps a stack label to one value per category."""

    key: str
    title: str
    x_label: str
    categories: tuple[str, ...]
    stacks: tuple[tuple[str, tuple[float, ...], str], ...]  # (label, values, colour)
    width_in: float = 7.6
    lines: tuple[RefLine, ...] = ()  # thresholds across the bars (``axis`` "x")
    integer_x: bool = True  # integer ticks (counts); False for shares and other fractions
    x_max: float | None = None


_T = TypeVar("_T")


def _printable_texts(value: _T) -> _T:
    """``value`` (a :class:`Plot`, :class:`Bars` or a part of one) with every string in it made printable, at any
    depth (a category, a series' or line's label, a tick label): the one place a plot's texts are sanitised.
    Colours, markers and the key are printable already and stay as they are."""
    if isinstance(value, str):
        return cast(_T, printable(value, None))
    if isinstance(value, tuple):
        return cast(_T, tuple(_printable_texts(v) for v in value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: _printable_texts(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return dataclasses.replace(value, **changes)
    return value


def _svg(fig: Any, key: str) -> Markup:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    text = buf.getvalue()
    text = text[text.find("<svg") :]
    text = re.sub(r"\s*<metadata>.*?</metadata>", "", text, flags=re.S)
    text = re.sub(r' xmlns(:xlink)?="[^"]*"', "", text)
    prefix = re.sub(r"[^A-Za-z0-9_-]", "_", key)
    text = re.sub(r' id="', f' id="{prefix}-', text)
    text = text.replace("url(#", f"url(#{prefix}-").replace('xlink:href="#', f'xlink:href="#{prefix}-')
    text = text.replace("<svg ", f'<svg role="img" aria-label="{_attr(key)}" data-plot-svg="{_attr(key)}" ', 1)
    return Markup(text.strip())


def _attr(text: str) -> str:
    return text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")


def _render(key: str, draw: Any, width_in: float, height_in: float, panels: int = 1) -> Markup:
    import matplotlib
    from matplotlib.figure import Figure

    rc: Any = {**_RC, "svg.hashsalt": f"inference-audit:{key}"}  # a fixed salt: the same ids every time
    with matplotlib.rc_context(rc):
        fig = Figure(figsize=(width_in, height_in), layout="constrained")
        axes = fig.subplots(1, panels, width_ratios=[3, 2] if panels == 2 else None, squeeze=False)[0]
        draw(*axes)
        return _svg(fig, key)


def _draw(ax: Any, p: Plot, *, legend: bool, title: str) -> None:
    from matplotlib.ticker import FuncFormatter, MaxNLocator, NullFormatter

    for i, s in enumerate(p.series):
        color = s.color or PALETTE[i % len(PALETTE)]
        if s.kind == "step":
            ax.step(s.x, s.y, where="post", color=color, label=s.label, linewidth=1.4)
        elif s.kind == "points":
            ax.plot(s.x, s.y, linestyle="-", linewidth=0.8, marker=s.marker, markersize=4.5, color=color, label=s.label)
        elif s.kind == "markers":
            ax.plot(s.x, s.y, linestyle="none", marker=s.marker, markersize=5, color=color, label=s.label)
        elif s.kind == "scatter":
            ax.scatter(s.x, s.y, s=5, color=color, label=s.label, alpha=0.55, linewidths=0)
        else:
            ax.plot(s.x, s.y, color=color, label=s.label, linewidth=1.4,
                    marker="o" if len(s.x) <= 40 else None, markersize=3.5)
    for line in p.lines:
        draw_line = ax.axvline if line.axis == "x" else ax.axhline
        draw_line(line.value, color=line.color, linestyle=line.style, linewidth=1.3, label=line.label)
    for m in p.marks:
        ax.plot([m.x], [m.y], marker="D", markersize=8, color=m.color, linestyle="none", label=m.label)
    # log axes: plain numbers (matplotlib's log labels are mathtext, which is off so names from files stay text)
    plain = FuncFormatter(lambda v, _pos: f"{v:,.0f}" if v >= 1 else f"{v:g}")
    if p.log_x:
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(plain)
        ax.xaxis.set_minor_formatter(NullFormatter())
    if p.log_y:
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(plain)
        ax.yaxis.set_minor_formatter(NullFormatter())
    if p.integer_y:
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    if p.integer_x:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    if p.y_min is not None or p.y_max is not None:
        ax.set_ylim(bottom=p.y_min, top=p.y_max)
    if p.x_min is not None or p.x_max is not None:
        ax.set_xlim(left=p.x_min, right=p.x_max)
    if p.y_ticks:
        ax.set_yticks([y for y, _ in p.y_ticks], labels=[label for _, label in p.y_ticks])
        ax.set_ylim(max(y for y, _ in p.y_ticks) + 0.5, min(y for y, _ in p.y_ticks) - 0.5)  # the first row on top
        ax.grid(axis="y", visible=False)
    ax.set_title(title, loc="left")
    ax.set_xlabel(p.x_label)
    ax.set_ylabel(p.y_label)
    if legend and (p.series or p.lines or p.marks):
        if p.legend_loc == "outside":
            handles, labels = ax.get_legend_handles_labels()
            ax.figure.legend(handles, labels, loc="outside lower center", ncols=min(3, len(labels)), frameon=False)
        else:
            ax.legend(loc=p.legend_loc)


def render_plot(p: Plot) -> Markup:
    """The plot as an inline ``<svg>``; with ``zoom_y`` a second panel shows the same data over that y range
    (the tail of a CDF, where p99 is decided)."""
    p = _printable_texts(p)
    if p.zoom_y is None:
        return _render(p.key, lambda ax: _draw(ax, p, legend=True, title=p.title), p.width_in, p.height_in)

    def draw(ax: Any, zoom: Any) -> None:
        _draw(ax, p, legend=True, title=p.title)
        _draw(zoom, p, legend=False, title=p.zoom_title)
        assert p.zoom_y is not None
        zoom.set_ylim(*p.zoom_y)
        if p.zoom_x is not None:
            zoom.set_xlim(*p.zoom_x)

    return _render(p.key, draw, p.width_in, p.height_in, panels=2)


def render_bars(b: Bars) -> Markup:
    b = _printable_texts(b)
    height = max(1.6, 0.32 * len(b.categories) + 1.0)

    def draw(ax: Any) -> None:
        from matplotlib.ticker import MaxNLocator

        left = [0.0] * len(b.categories)
        ypos = list(range(len(b.categories)))
        for label, values, color in b.stacks:
            ax.barh(ypos, values, left=left, color=color, label=label, height=0.6)
            left = [a + v for a, v in zip(left, values, strict=True)]
        for line in b.lines:
            ax.axvline(line.value, color=line.color, linestyle=line.style, linewidth=1.3, label=line.label)
        ax.set_yticks(ypos, labels=list(b.categories))
        ax.invert_yaxis()
        ax.set_title(b.title, loc="left")
        ax.set_xlabel(b.x_label)
        ax.grid(axis="y", visible=False)
        if b.integer_x:
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        if b.x_max is not None:
            ax.set_xlim(left=0.0, right=b.x_max)
        if b.stacks:
            ax.legend(loc="lower right")

    return Markup(_render(b.key, draw, b.width_in, height).replace("<svg ", "<svg data-bars=\"1\" ", 1))


def figure(key: str, svg: Markup, caption: Child, data: Markup | None = None, *, wide: bool | None = None) -> Markup:
    """``<figure class="plot" data-plot=key>`` with the SVG, its caption and (folded) the numbers it shows.
    ``wide`` plots fill the page's width (default: x/y plots do, bar charts keep their size)."""
    folded = el("details", el("summary", "the numbers in this plot"), data) if data is not None else None
    if wide is None:
        wide = "data-bars" not in svg[:400]
    return el("figure", svg, el("figcaption", caption), folded, class_="plot wide" if wide else "plot", data_plot=key)


def downsample(n: int, limit: int) -> list[int]:
    """Indices of at most ``limit`` of ``n`` items, evenly spread, first and last kept (deterministic)."""
    if n <= limit:
        return list(range(n))
    step = (n - 1) / (limit - 1)
    return sorted({round(i * step) for i in range(limit)})


def cdf_points(sorted_values: Sequence[float], limit: int = 1500, tail: float = 0.02) -> tuple[list[float], list[float]]:
    """An empirical CDF (x = value, y = fraction of samples at or below it) of at most about ``limit`` + the tail
    points: the top ``tail`` fraction (where p99 lives) is kept whole up to ``limit`` points, the rest thinned."""
    n = len(sorted_values)
    if n == 0:
        return [], []
    cut = max(0, n - max(1, int(n * tail)))
    head = downsample(cut, limit) if cut else []
    tail_idx = list(range(cut, n))
    if len(tail_idx) > limit:
        tail_idx = [cut + i for i in downsample(n - cut, limit)]
    idx = head + tail_idx
    return [float(sorted_values[i]) for i in idx], [(i + 1) / n for i in idx]
