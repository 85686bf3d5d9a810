"""How a fact becomes a value of the generated rules data: citations validated, threshold expressions evaluated."""

from __future__ import annotations

import ast
import operator
import re

_CITE_PART = re.compile(r"^[A-Za-z][A-Za-z0-9_.]*(:[0-9][0-9,\- ]*|#[A-Za-z0-9_][A-Za-z0-9_.\-]*)$")

_BINOPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}


def check_cite(cite: str) -> str:
    """Validate ``SOURCE_ID:line[-line][,line]`` (``;``-separated) or ``SOURCE_ID#SYMBOL``."""
    for part in cite.split(";"):
        if not is_cite_part(part):
            raise ValueError(f"malformed citation {cite!r}")
    return cite


def is_cite_part(part: str) -> bool:
    """Whether one ``;``-separated part is a citation (and not prose)."""
    return bool(_CITE_PART.match(part.strip()))


def join_cites(*cites: str | None) -> str | None:
    """The given citations (None skipped) as one, validated; None when there are none."""
    parts = [c for c in cites if c]
    return check_cite("; ".join(parts)) if parts else None


def arith(expr: str | float | int) -> float:
    """Evaluate a checker threshold expression (``44.4312 * 0.99``) with Python float semantics."""
    if isinstance(expr, (int, float)):
        return float(expr)

    def ev(node: ast.AST) -> float:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return node.value
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            combined: float = _BINOPS[type(node.op)](ev(node.left), ev(node.right))
            return combined
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -ev(node.operand)
        raise ValueError(f"unsupported threshold expression {expr!r}")

    return float(ev(ast.parse(str(expr), mode="eval")))
