"""The one terminal sanitiser: text that came from an input is printed through :func:`printable`.

A claim file, an engine's error text, a run record or a table cell can hold terminal escape sequences (ESC and
CSI, OSC 8 links, a title change, a screen clear, a fake coloured "ALL VALID"), bidirectional controls that
reorder what is shown, line breaks that fake a line of output, or megabytes of text. :func:`printable` makes one
printable, bounded line of it: every character that ``str.isprintable`` refuses (C0 and C1 controls, ESC and
CSI included; format characters such as U+202E and zero-width spaces; line and paragraph separators;
unassigned code points; lone surrogates) becomes a space, and a line longer than ``max_chars`` is cut, saying
how much was left out. check-submission's finding lines are made the same way.
"""

from __future__ import annotations

MAX_SHOWN_CHARS = 4000  # a finding or error line is a few hundred characters; a quoted value longer than this is cut


def printable(text: str, max_chars: int | None = MAX_SHOWN_CHARS, *, lines: bool = False) -> str:
    """``text`` as one printable line of at most ``max_chars`` characters (None: no cut); see the module.
    ``lines``: keep line feeds (a message of several lines the tool itself composed)."""
    if max_chars is not None and len(text) > max_chars:
        more = len(text) - max_chars
        text = f"{text[:max_chars]}… ({more:,} more characters)"
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() or (lines and ch == "\n") else " " for ch in text)
