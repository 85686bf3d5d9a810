"""Building blocks of the pages: escaping, links, SVG plots, LoadGen's early-stopping rule, timeline numbers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from checker.report.html.markup import Markup, el, esc, relative_href, safe_url
from checker.report.html.page import document, fmt_num
from checker.report.html.plots import Bars, Mark, Plot, RefLine, Series, cdf_points, render_bars, render_plot
from loadgen_sut.report import early_stopping
from loadgen_sut.report.timeline_stats import over_time, percentile, ttft_trend
from loadgen_sut.timeline import SampleTiming


def test_text_from_files_is_escaped_everywhere() -> None:
    evil = '<script>alert("x")</script> & \x00\x1b'
    out = el("p", evil, title=evil)
    assert "<script" not in out
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; \\x00\\x1b" in out
    assert el("p", Markup("<b>ok</b>")) == "<p><b>ok</b></p>"  # built HTML is placed as is
    assert esc("\udcff name") == "\ufffd name"  # an undecodable file name (surrogate escape)
    with pytest.raises(ValueError):
        el("p", **{"onclick x": "1"})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "url", ["http://example.org/x", "https://cdn/x.js", "//host/x", "javascript:alert(1)", "file:///etc/passwd", "a\nb"]
)
def test_links_are_never_to_the_network(url: str) -> None:
    with pytest.raises(ValueError):
        safe_url(url)
    with pytest.raises(ValueError):
        el("a", "x", href=url)


def test_relative_links(tmp_path: Path) -> None:
    (tmp_path / "tree" / "a:b").mkdir(parents=True)
    href = relative_href(tmp_path / "tree" / "a:b" / "my file.txt", tmp_path / "out")
    assert href == "../tree/a%3Ab/my%20file.txt"  # ':' encoded: never read as a scheme
    assert safe_url("#rule-X") == "#rule-X"


def test_document_is_self_contained_and_deterministic() -> None:
    p = Plot(key="k", title="t <b>", x_label="x $1", y_label="y", series=(Series("s", [1, 2, 3], [1, 4, 9]),),
             lines=(RefLine(2.0, "limit 2", "x"),))
    a = document("T", "sub", [render_plot(p)], kind="test")
    b = document("T", "sub", [render_plot(p)], kind="test")
    assert a == b
    text = a.decode()
    assert "http:" not in text and "https:" not in text  # no namespace URL, no DTD, no metadata link
    assert "Content-Security-Policy" in text and "default-src &#x27;none&#x27;" in text
    assert "<script" not in text
    assert "t &lt;b&gt;" in text and "x $1" in text  # escaped by matplotlib's SVG writer; no mathtext
    assert ">limit 2<" in text  # text stays text in the SVG (svg.fonttype none)
    ids = re.findall(r' id="([^"]+)"', text)
    assert ids and all(i.startswith("k-") for i in ids)  # every id of the plot carries its key


CONTROLS = "\x1b\u202e\u2066\x07\x9b"  # ESC, bidi overrides, BEL, a C1 control (CSI)


def test_no_control_or_bidi_character_reaches_a_plot_or_a_warning(recwarn: pytest.WarningsRecorder) -> None:
    """Names from a tree (a submitter's directory, a rule id, a system) are a plot's categories and labels: none of
    their control or bidi characters is written into the SVG, nor into matplotlib's "Glyph missing" warning (which
    the terminal shows)."""
    name = f"Red\x1b[31m{CONTROLS}Hat"
    bars = Bars(key="b", title=name, x_label=name, categories=(name, "other"),
                stacks=((name, (1.0, 2.0), "#000000"),), lines=(RefLine(1.5, name),))
    plot = Plot(key="p", title=name, x_label=name, y_label=name, series=(Series(name, [1, 2], [1, 2]),),
                lines=(RefLine(1.0, name, "y"),), marks=(Mark(1.0, 1.0, name),), y_ticks=((1.0, name),),
                zoom_y=(0.0, 1.0), zoom_title=name)
    for svg in (render_bars(bars), render_plot(plot)):
        assert "Red" in svg and not any(c in svg for c in CONTROLS)
    for w in recwarn.list:
        assert not any(c in str(w.message) for c in CONTROLS)


def test_numbers_for_people() -> None:
    assert fmt_num(None) == "not measured"
    assert fmt_num(12409) == "12,409"
    assert fmt_num(27803.9) == "27,803.9"
    assert fmt_num(457.437) == "457.4"
    assert fmt_num(3431.22, 6) == "3,431.22"


def test_early_stopping_matches_loadgen() -> None:
    # 459 queries with none over the limit pass at p99 (ceil(log 0.01 / log 0.99)); 458 do not
    assert early_stopping.min_queries_to_pass(0) == 459
    assert early_stopping.max_over_limit(459) == 0
    assert early_stopping.max_over_limit(458) == -1
    # LoadGen 6.0.17 said "Processed 608 queries. Would need to run at least 12409 more" (a run with TTFT median
    # 1.5 s): 608 + 12409 = 13017 is the rule's answer for 104 queries over the limit
    assert early_stopping.min_queries_to_pass(104) == 608 + 12409
    assert early_stopping.max_over_limit(13017) == 104
    assert early_stopping.max_over_limit(13016) == 103
    assert early_stopping.passes(13017, 104) and not early_stopping.passes(13016, 104)
    curve = early_stopping.bound_curve([459, 1000, 5000, 20000])
    assert curve == sorted(curve) and curve[0] == 0


def _s(i: int, issued_s: float, ttft_s: float, dur_s: float, tokens: int) -> SampleTiming:
    issued = int(issued_s * 1e9)
    first = issued + int(ttft_s * 1e9)
    return SampleTiming(qsl_idx=i, issued_ns=issued, first_token_ns=first, completed_ns=first + int(dur_s * 1e9),
                        output_tokens=tokens, ok=True)


def test_rates_over_time_keep_every_token() -> None:
    samples = [_s(i, i * 0.01, 0.05, 0.5, 11) for i in range(200)]  # 100 per second for 2 s
    ot = over_time(samples)
    assert ot is not None
    assert sum(ot.issued_per_s) * ot.bin_s == pytest.approx(200)
    assert sum(ot.completed_per_s) * ot.bin_s == pytest.approx(200)
    assert sum(ot.tokens_per_s) * ot.bin_s == pytest.approx(200 * 11)
    assert max(ot.issued_per_s) == pytest.approx(100, rel=0.2)
    assert ttft_trend(samples) is not None


def test_percentile_as_loadgen_takes_it() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 99.0) == 100.0  # index floor(100 * 0.99) = 99
    assert percentile(values, 50.0) == 51.0
    assert percentile([], 99.0) is None
    xs, ys = cdf_points(sorted(float(v) for v in range(100_000)), limit=500)
    assert len(xs) <= 500 + 2000 and ys[-1] == 1.0 and xs[-1] == 99_999.0
