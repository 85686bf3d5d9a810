"""What a claim's wording says: labels, counts, version and name mentions (small regex readers).

Kept apart from the rules so each rule reads as "the guideline requires X; the text says / lacks X".
"""

from __future__ import annotations

import re

_CHIP_WORDS = (
    r"gpus?|accelerators?|chips?|cards?|devices?|xpus?|npus?|tpus?|hpus?|gaudi\w*|h100\w*|h200\w*|h20\w*|b200\w*|"
    r"b300\w*|gb200\w*|gb300\w*|mi\d{3}\w*|l40s?\w*|a100\w*|l4\b|sockets?|cpus?|processors?|nodes?"
)


def norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def mentions(text: str, phrase: str) -> bool:
    """Case-insensitive whole-phrase mention."""
    return re.search(rf"(?<![A-Za-z0-9]){re.escape(phrase)}(?![A-Za-z0-9])", text, re.I) is not None


def mentions_count(text: str, count: int) -> bool:
    """True when the text names ``count`` compute devices ("8 GPUs", "8x H100", "8-GPU", "eight accelerators")."""
    words = {
        1: "one|single",
        2: "two|dual",
        4: "four",
        8: "eight",
        16: "sixteen",
        32: "thirty-two",
        64: "sixty-four",
        72: "seventy-two",
    }
    num = rf"(?<![\d.,]){count}(?![\d.,])"
    if count in words:
        num = rf"(?:{num}|\b(?:{words[count]})\b)"
    pattern = rf"{num}\s*(?:[x×-]|\s)\s*(?:[\w.+-]+\s+){{0,2}}?(?:{_CHIP_WORDS})|{num}[x×]"
    return re.search(pattern, text, re.I) is not None


def mentions_version(text: str, version: str, *, not_in_ids: bool = False) -> bool:
    """ "v5.1", "5.1", "MLPerf Inference 5.1" (not "5.10" or "15.1"); ``not_in_ids``: nor the start of a result ID
    ("5.1-0061")."""
    after = r"(?![\d-])" if not_in_ids else r"(?![\d])"
    return re.search(rf"(?<![\d.])v?{re.escape(version)}{after}", text, re.I) is not None


def mentions_benchmark(text: str, benchmark: str) -> bool:
    """The benchmark or its model family ("llama2-70b-99" matches "Llama 2 70B")."""
    family = re.sub(r"-(99|99\.9)$", "", benchmark.lower())
    return norm(family) in norm(text) or norm(benchmark) in norm(text)


def has_unverified_near(text: str, value: float | None, window: int = 80) -> bool:
    """'unverified' next to the score when the score is written in the text, else anywhere in it."""
    if not re.search(r"\bunverified\b", text, re.I):
        return False
    if value is None:
        return True
    spots = []
    for form in _number_forms(value):
        spots += [m.start() for m in re.finditer(rf"(?<![\d.,]){re.escape(form)}(?![\d])", text)]
    if not spots:
        return True
    marks = [m.start() for m in re.finditer(r"\bunverified\b", text, re.I)]
    return all(any(abs(s - m) <= window for m in marks) for s in spots)


def _number_forms(value: float) -> list[str]:
    forms = {f"{value:g}", f"{value:,.0f}", f"{value:.0f}", f"{value:,.1f}", f"{value:.1f}", f"{value:.2f}"}
    if value >= 1000:
        forms.add(f"{value / 1000:g}k")
        forms.add(f"{value / 1000:g}K")
    return sorted(forms, key=len, reverse=True)


OFFICIAL_WORDING = re.compile(
    r"\b(official(ly)?|verified|certified|mlcommons[- ](approved|validated|endorsed))\b", re.I
)


def official_wording(text: str, exempt_values: tuple[float, ...] = (), window: int = 40) -> list[str]:
    """Words presenting a number as official / verified (not 'unverified' / 'not verified').

    Words within ``window`` characters of an ``exempt_values`` number (a verified result written in the text)
    do not count: that result may be called verified.
    """
    spots: list[int] = []
    for value in exempt_values:
        for form in _number_forms(value):
            spots += [m.start() for m in re.finditer(rf"(?<![\d.,]){re.escape(form)}(?![\d])", text)]
    found = []
    for m in OFFICIAL_WORDING.finditer(text):
        before = text[max(0, m.start() - 4) : m.start()].lower()
        if m.group(0).lower() == "verified" and (before.endswith("un") or before.endswith("not ")):
            continue
        if any(abs(m.start() - s) <= window for s in spots):
            continue
        found.append(m.group(0))
    return found


def trademark_problems(text: str, quoted: tuple[str, ...] = ()) -> list[str]:
    """TM-01: MLPerf without ®, possessive or plural forms, altered spellings (the guideline's own sentences, which
    say 'MLPerf name' and 'MLPerf specification' without ®, are left out)."""
    for sentence in quoted:
        text = text.replace(sentence, " ")
    out = []
    if re.search(r"MLPerf(?!\s*®|\s*\(R\))", text):
        out.append("'MLPerf' without ®")
    if re.search(r"MLPerf®?'s\b|MLPerf®?s\b", text):
        out.append("'MLPerf' in possessive or plural form")
    if re.search(r"\bML[- ]Perf\b", text):
        out.append("an altered spelling of 'MLPerf'")
    return out


# A count next to a system or accelerator name, not a factor: '8x H100', '(72x VR-288GB)', '4x MI355X',
# '72x GB300-288GB_aarch64', '8x GPUs', '(8x NVIDIA B300-SXM-270GB)', '(8x RTX Pro 6000)': a name with a digit
# (possibly hyphenated), a chip word, or a vendor / product name in capitals.
_COUNTED = rf"\s*(?:[A-Za-z][\w-]*\d|(?:{_CHIP_WORDS})(?![A-Za-z])|(?-i:[A-Z]{{2,}})(?![a-z]))"
_FACTOR = re.compile(
    r"(?<![\w.])(\d+(?:\.\d+)?)\s*(?:[x×]\s+(?:the|faster|more|higher|better|lower|as|that|of|over|vs\.?|versus)\b"
    rf"|[x×](?=[)\s.,;]|$)(?!{_COUNTED})|\s+times\b)",
    re.I,
)


def stated_factor(text: str) -> float | None:
    """The factor a comparison states ("1.5x the ...", "3.7x faster", "(1.08x)", "2 times"); counts next to a
    system or accelerator name ("8x H100", "NVIDIA Vera Rubin NVL72 (72x VR-288GB)") are not factors."""
    m = _FACTOR.search(text)
    return float(m.group(1)) if m else None
