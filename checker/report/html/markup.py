"""HTML built from code, text from files escaped: :class:`Markup` and :func:`el`.

Every string that is not :class:`Markup` is escaped (``&``, ``<``, ``>``, both quotes) where it is placed, so a
finding message holding ``<script>`` shows as text. ``href`` / ``src`` values must be fragments (``#rule-X``) or
relative paths (no scheme, no ``//host``): a report never points at the network (:func:`safe_url` refuses
anything else, a bug of the caller).
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import quote

_NAME = re.compile(r"^[a-z][a-z0-9-]*$")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_URL_ATTRS = frozenset({"href", "src", "action", "formaction", "xlink:href", "poster", "srcset"})
# characters that may not appear in HTML text at all (C0 controls but tab / line feed / carriage return, C1
# controls), and the bidirectional controls (U+061C, U+200E-200F, U+202A-202E, U+2066-2069), which reorder the text
# around them (an RLO in a file name can make "fdp.exe" read "exe.pdf"): each is shown as its escape, \xNN / \uNNNN
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _shown(m: re.Match[str]) -> str:
    c = ord(m.group(0))
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


class Markup(str):
    """Text that is HTML already (made by this package): placed as is, never escaped again."""

    __slots__ = ()


Child = str | Markup | int | float | None | Iterable["Child"]
AttrValue = str | int | float | bool | None


def esc(value: object) -> Markup:
    """``value`` as HTML text: Markup unchanged, anything else ``str()``-ed, control and bidirectional characters
    shown as ``\\xNN`` / ``\\uNNNN``, lone surrogates (undecodable file names) replaced."""
    if isinstance(value, Markup):
        return value
    text = str(value)
    text = _CONTROL.sub(_shown, text)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: bytes of an undecodable name (surrogateescape) or stray ones
        try:
            text = text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        except UnicodeEncodeError:
            text = text.encode("utf-8", "replace").decode("utf-8")
    return Markup(html.escape(text, quote=True))


def safe_url(url: str) -> str:
    """``url`` when it is a fragment or a relative path; ValueError otherwise (no scheme, no network path)."""
    if url.startswith("#"):
        return url
    if url.startswith(("//", "\\\\")) or _SCHEME.match(url) or any(c in url for c in "\x00\r\n\t"):
        raise ValueError(f"not a relative link: {url!r}")
    return url


def _attr_name(name: str) -> str:
    name = name.rstrip("_").replace("_", "-")
    if name == "xlink-href":
        name = "xlink:href"
    if name != "xlink:href" and not _NAME.match(name):
        raise ValueError(f"bad attribute name {name!r}")
    return name


def _children(children: Iterable[Child]) -> Iterable[Markup]:
    for c in children:
        if c is None:
            continue
        if isinstance(c, str | int | float):
            yield esc(c)
        else:
            yield from _children(c)


def join(*children: Child) -> Markup:
    """The children, escaped where they are not Markup, concatenated."""
    return Markup("".join(_children(children)))


def el(tag: str, *children: Child, **attrs: AttrValue) -> Markup:
    """``<tag attrs>children</tag>``; ``class_="x"`` is ``class``, ``data_plot`` is ``data-plot``; an attribute
    that is None or False is left out, True is written bare."""
    if not _NAME.match(tag):
        raise ValueError(f"bad tag {tag!r}")
    parts = [f"<{tag}"]
    for key, value in attrs.items():
        if value is None or value is False:
            continue
        name = _attr_name(key)
        if value is True:
            parts.append(f" {name}")
            continue
        text = str(value)
        if name in _URL_ATTRS:
            text = safe_url(text)
        parts.append(f' {name}="{esc(text)}"')
    parts.append(">")
    if tag in ("br", "hr", "meta", "img", "col", "wbr"):
        return Markup("".join(parts))
    return Markup("".join(parts) + join(*children) + f"</{tag}>")


def anchor_id(*parts: str) -> str:
    """A stable element id from ``parts`` (``rule-PERF-SEEDS``): letters, digits, ``-`` and ``_`` only."""
    raw = "-".join(parts)
    return re.sub(r"[^A-Za-z0-9_-]", "_", raw)


def relative_href(target: Path | str, base_dir: Path | str) -> str:
    """A relative link from a page in ``base_dir`` to the file ``target`` (percent-encoded, ``/`` separators)."""
    rel = os.path.relpath(os.path.abspath(target), os.path.abspath(base_dir))
    return safe_url(quote(rel.replace(os.sep, "/"), safe="/._-~+@,=") or ".")
