"""Is a math answer equal to the ground truth? The rule of the deepseek-r1 reference for MATH-500.

The reference (``language/deepseek-r1/eval_accuracy.py``, ``evaluate_math500``) calls OpenAI's
PRM800K grader (``prm800k/grading/grader.py``, ``grade_answer(given_answer, ground_truth)``). Its
rule, reimplemented here:

1. Both strings normalised the Hendrycks MATH way (``math_normalize.normalize_answer``): strip, drop
   an enclosing ``\\text{...}``, then the ``_strip_string`` steps (line breaks, ``\\!``, ``\\\\``,
   ``tfrac``/``dfrac`` -> ``frac``, ``\\left``/``\\right``, degrees, ``\\$``, units after ``\\text{ ``,
   percent, ``.5`` -> ``0.5``, a short ``k = `` prefix, ``\\sqrt3`` -> ``\\sqrt{3}``, spaces,
   ``\\frac12`` -> ``\\frac{1}{2}``, ``0.5`` -> ``\\frac{1}{2}``, ``a/b`` -> ``\\frac{a}{b}``). Equal -> correct.
2. Else both normalised the PRM800K way (units and words dropped, LaTeX turned into text by
   ``pylatexenc``, spaces and braces dropped, lower case, integers canonical). Equal -> correct.
3. Else tuples/intervals are split into elements (same brackets required), and each pair must match:
   two plain fractions must be written identically (no credit for an unreduced fraction), an
   integer must meet an integer, and otherwise ``sympy.simplify(truth - given) == 0`` decides —
   only for expressions with at most two distinct letters and no ``^{``/``^(``/long exponents
   (sympy could hang on those), exactly as the reference guards it.

``parse_expr`` evaluates the (guarded) expression as Python, as the reference does; the letter
limit keeps model text from reaching it as code.
"""

from __future__ import annotations

import contextlib
import logging
import re

import sympy
from pylatexenc.latex2text import LatexNodes2Text
from sympy.parsing import sympy_parser

# ----------------------------------------------------------------------------------------------
# Step 1: the Hendrycks MATH normalisation (PRM800K math_normalize.normalize_answer)


class _Unnormalizable(Exception):
    """A malformed answer the Hendrycks steps give up on (the answer is then compared as stripped)."""


_TEXT_WRAPPED = re.compile(r"^\\text\{(?P<text>.+?)\}$")


def _braced_fracs(s: str) -> str:
    """``\\frac12`` -> ``\\frac{1}{2}``, ``\\frac1{7}`` -> ``\\frac{1}{7}``; malformed input is returned as is."""
    head, *parts = s.split("\\frac")
    out = [head]
    for part in parts:
        out.append("\\frac")
        if not part:
            raise _Unnormalizable("\\frac at the end")
        if part[0] == "{":
            out.append(part)
            continue
        if len(part) < 2:
            return s
        num, den, rest = part[0], part[1], part[2:]
        out.append("{" + num + "}" + (den + rest if den == "{" else "{" + den + "}" + rest))
    return "".join(out)


def _slash_to_frac(s: str) -> str:
    """``3/4`` (two plain integers) -> ``\\frac{3}{4}``."""
    pieces = s.split("/")
    if len(pieces) != 2:
        return s
    try:
        num, den = int(pieces[0]), int(pieces[1])
    except ValueError:
        return s
    if s != f"{num}/{den}":
        return s
    return "\\frac{" + str(num) + "}{" + str(den) + "}"


def _drop_right_units(s: str) -> str:
    if "\\text{ " not in s:
        return s
    pieces = s.split("\\text{ ")
    if len(pieces) != 2:
        raise _Unnormalizable("more than one unit text")
    return pieces[0]


def _braced_sqrt(s: str) -> str:
    """``\\sqrt3`` -> ``\\sqrt{3}``."""
    if "\\sqrt" not in s:
        return s
    head, *parts = s.split("\\sqrt")
    out = [head]
    for part in parts:
        if not part:
            raise _Unnormalizable("\\sqrt at the end")
        out.append("\\sqrt" + part if part[0] == "{" else "\\sqrt{" + part[0] + "}" + part[1:])
    return "".join(out)


_HENDRYCKS_REPLACEMENTS_1 = (
    ("\n", ""),
    ("\\!", ""),
    ("\\\\", "\\"),
    ("tfrac", "frac"),
    ("dfrac", "frac"),
    ("\\left", ""),
    ("\\right", ""),
    ("^{\\circ}", ""),
    ("^\\circ", ""),
    ("\\$", ""),
)
_HENDRYCKS_REPLACEMENTS_2 = (("\\%", ""), (" .", " 0."), ("{.", "{0."))


def _hendrycks_strip(s: str) -> str:
    for old, new in _HENDRYCKS_REPLACEMENTS_1:
        s = s.replace(old, new)
    s = _drop_right_units(s)
    for old, new in _HENDRYCKS_REPLACEMENTS_2:
        s = s.replace(old, new)
    if not s:
        return s
    if s[0] == ".":
        s = "0" + s
    sides = s.split("=")
    if len(sides) == 2 and len(sides[0]) <= 2:  # "k = 3" -> "3"
        s = sides[1]
    s = _braced_sqrt(s)
    s = s.replace(" ", "")
    s = _braced_fracs(s)
    if s == "0.5":
        s = "\\frac{1}{2}"
    return _slash_to_frac(s)


def mathd_normalize(answer: str) -> str:
    """The Hendrycks MATH normalisation as PRM800K's ``normalize_answer`` applies it."""
    answer = answer.strip()
    m = _TEXT_WRAPPED.search(answer)
    if m is not None:
        answer = m.group("text").strip()
    try:
        return _hendrycks_strip(answer)
    except _Unnormalizable:
        return answer


# ----------------------------------------------------------------------------------------------
# Step 2: the PRM800K normalisation (grader._normalize)

_UNITS = (
    "degree",
    "cm",
    "centimeter",
    "meter",
    "mile",
    "second",
    "minute",
    "hour",
    "day",
    "week",
    "month",
    "year",
    "foot",
    "feet",
    "inch",
    "yard",
)
_UNIT_RES = tuple(re.compile(unit + r"(es)?(s)? *(\^[0-9]+)?") for unit in _UNITS)
_LATEX_SYMBOLS = (("√", "sqrt"), ("π", "pi"), ("∞", "inf"), ("∪", "U"), ("·", "*"), ("×", "*"))
_WORD_REPLACEMENTS = (
    ("\\%", "%"),
    ("\\$", "$"),
    ("$", ""),
    ("%", ""),
    (" or ", " , "),
    (" and ", " , "),
    ("million", "*10^6"),
    ("billion", "*10^9"),
    ("trillion", "*10^12"),
)
_THOUSANDS_COMMA = re.compile(r"(\d)(,)(\d\d\d)($|\D)")
_MIXED_NUMBER = re.compile(r"([0-9]) +([0-9])")
_LATEX_TO_TEXT = LatexNodes2Text()
# pylatexenc warns on every malformed macro (a lone "\\frac"); the text it returns is what counts
logging.getLogger("pylatexenc").setLevel(logging.ERROR)


def _float_or_none(s: str) -> float | None:
    try:
        return float(s)
    except ValueError:
        return None


def _near_int(x: float) -> bool:
    try:
        return abs(x - round(x)) <= 1e-7
    except (OverflowError, ValueError):  # inf, nan
        return False


def strip_thousands_commas(s: str) -> str:
    """``1,234,567`` -> ``1234567``; commas between tuple elements stay."""
    while True:
        nxt = _THOUSANDS_COMMA.sub(r"\1\3\4", s)
        if nxt == s:
            return s
        s = nxt


def _str_is_int(s: str) -> bool:
    x = _float_or_none(strip_thousands_commas(s))
    return x is not None and _near_int(x)


def _latex_to_text(s: str) -> str:
    s = s.replace("\\tfrac", "\\frac").replace("\\dfrac", "\\frac").replace("\\frac", " \\frac")
    s = _LATEX_TO_TEXT.latex_to_text(s)
    for old, new in _LATEX_SYMBOLS:
        s = s.replace(old, new)
    return s.strip()


def prm_normalize(expr: str) -> str:
    """PRM800K's own normalisation of an answer expression."""
    m = _TEXT_WRAPPED.search(expr)
    if m is not None:
        expr = m.group("text")
    for old, new in _WORD_REPLACEMENTS:
        expr = expr.replace(old, new)
    for unit_re in _UNIT_RES:
        expr = unit_re.sub("", expr)
    expr = re.sub(r"\^ *\\circ", "", expr)
    if expr and expr[0] == "{" and expr[-1] == "}":
        expr = expr[1:-1]
    expr = re.sub(r",\\! *", "", expr)
    value = _float_or_none(expr)
    if value is not None and _near_int(value):
        expr = str(round(value))
    if "\\" in expr:
        with contextlib.suppress(Exception):  # pylatexenc on malformed LaTeX: keep the text, as the reference
            expr = _latex_to_text(expr)
    expr = re.sub("- *", "-", expr)
    expr = _MIXED_NUMBER.sub(r"\1+\2", expr)  # "7 3/4" -> "7+3/4"
    expr = expr.replace(" ", "").replace("{", "").replace("}", "").lower()
    if _str_is_int(expr):
        expr = str(int(float(expr.replace(",", ""))))
    return expr


# ----------------------------------------------------------------------------------------------
# Step 3: element-wise comparison, sympy where safe

_TUPLE_CHARS = "()[]"
_FRACTION = re.compile(r"^-?[0-9]+.?/0*[1-9][0-9]*.?$")
_RISKY_SUBSTRINGS = ("^{", "^(")
_RISKY_EXPONENTS = (re.compile(r"\^[0-9]+\^"), re.compile(r"\^[0-9][0-9]+"))
_SYMPY_TRANSFORMS = (*sympy_parser.standard_transformations, sympy_parser.implicit_multiplication_application)


def split_elements(expr: str) -> list[str]:
    """The elements of a tuple or interval ``(a,b)`` / ``[a,b)``; a single element otherwise."""
    expr = strip_thousands_commas(expr)
    if not expr:
        return []
    inner = expr[1:-1]
    if (
        len(expr) > 2
        and expr[0] in _TUPLE_CHARS
        and expr[-1] in _TUPLE_CHARS
        and not any(ch in inner for ch in _TUPLE_CHARS)
    ):
        return [e.strip() for e in inner.split(",")]
    return [expr]


def _sympy_allowed(expr: str) -> bool:
    letters = {ch for ch in expr.replace("sqrt", "").replace("frac", "") if ch.isalpha()}
    if len(letters) > 2:
        return False
    if any(bad in expr for bad in _RISKY_SUBSTRINGS):
        return False
    return not any(r.search(expr) for r in _RISKY_EXPONENTS)


def sympy_equal(truth: str, given: str) -> bool:
    """``simplify(truth - given) == 0`` for guarded expressions; any failure is "not equal"."""
    expr = f"({truth})-({given})"
    if not _sympy_allowed(expr):
        return False
    try:
        diff = sympy_parser.parse_expr(expr.replace("^", "**"), transformations=_SYMPY_TRANSFORMS)
        return bool(sympy.simplify(diff) == 0)
    except Exception:  # parse errors, sympy errors on odd input: the reference counts them wrong too
        return False


def _elements_equal(truth: str, given: str) -> bool:
    if _FRACTION.search(truth) and _FRACTION.search(given):
        return truth == given  # unreduced fractions get no credit
    if _str_is_int(truth) != _str_is_int(given):
        return False
    return sympy_equal(truth, given)


def grade_math_answer(given: str, truth: str) -> bool:
    """PRM800K ``grade_answer(given_answer=given, ground_truth=truth)``."""
    if mathd_normalize(truth) == mathd_normalize(given):
        return True
    truth_n = prm_normalize(truth)
    given_n = prm_normalize(given)
    if truth_n == given_n:
        return True
    if not given_n:
        return False
    truth_elems = split_elements(truth_n)
    given_elems = split_elements(given_n)
    if len(truth_elems) > 1 and (truth_n[0] != given_n[0] or truth_n[-1] != given_n[-1]):
        return False  # different brackets: (a,b) vs [a,b)
    if len(truth_elems) != len(given_elems):
        return False
    return all(_elements_equal(t, g) for t, g in zip(truth_elems, given_elems, strict=True))
