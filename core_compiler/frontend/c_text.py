"""Expressions as a C programmer writes them: parentheses only where C's precedence needs them
(and where GCC's ``-Wparentheses`` would ask for them), for the text remarks and views show.

``str(expr)`` stays fully parenthesised: the code generators and the keys comparing expressions
use it. This is the reading form::

    c_text(Binary("+", Binary("*", alpha, A[i][k]), B[k][j - 1]))  # "alpha * A[i][k] + B[k][j - 1]"
"""

from __future__ import annotations

from core_compiler.frontend import ir

_BINARY = {
    "*": 13, "/": 13, "%": 13, "+": 12, "-": 12, "<<": 11, ">>": 11, "<": 10, "<=": 10, ">": 10, ">=": 10,
    "==": 9, "!=": 9, "&": 8, "^": 7, "|": 6, "&&": 5, "||": 4,
}  # fmt: skip
_UNARY, _TERNARY, _ATOM = 14, 3, 16
_LOGICAL, _BITWISE = frozenset({"&&", "||"}), frozenset({"&", "^", "|"})
_COMPARISON = frozenset({"<", "<=", ">", ">=", "==", "!="})


def c_text(e: ir.Expr) -> str:
    """`e` in C with the fewest parentheses that keep its meaning."""
    match e:
        case ir.Subscript(base=base, indices=indices, field=field) if field:
            return base + "".join(f"[{c_text(i)}]" for i in indices[:-1]) + "." + field
        case ir.Subscript(base=base, indices=indices):
            return base + "".join(f"[{c_text(i)}]" for i in indices)
        case ir.Call(name=name, args=args):
            return f"{name}({', '.join(map(c_text, args))})"
        case ir.Unary(op=op, operand=operand):
            inner = _operand(operand, _UNARY)
            return f"{op}({inner})" if inner.startswith(op) else f"{op}{inner}"
        case ir.Cast(type=t, operand=operand):
            return f"({t}){_operand(operand, _UNARY)}"
        case ir.Binary(op=op, lhs=lhs, rhs=rhs):
            return f"{_side(lhs, op, left=True)} {op} {_side(rhs, op, left=False)}"
        case ir.Ternary(cond=cond, then=then, other=other):
            return f"{_operand(cond, _TERNARY + 1)} ? {_operand(then, _TERNARY + 1)} : {_operand(other, _TERNARY)}"
        case _:
            return str(e)


def _precedence(e: ir.Expr) -> int:
    match e:
        case ir.Binary(op=op):
            return _BINARY[op]
        case ir.Ternary():
            return _TERNARY
        case ir.Unary() | ir.Cast():
            return _UNARY
        case ir.IntLit(value=v) if v < 0:
            return _UNARY
        case _:
            return _ATOM


def _operand(e: ir.Expr, least: int) -> str:
    """`e` where an operand binding at least as tightly as `least` needs no parentheses."""
    text = c_text(e)
    return text if _precedence(e) >= least else f"({text})"


def _side(e: ir.Expr, op: str, left: bool) -> str:
    """An operand of the binary `op`: C's operators group left to right, so the right operand of
    `a - (b - c)` keeps its parentheses, and so does `a + (b + c)` (floating point is not associative)."""
    if _clarified(op, e):
        return f"({c_text(e)})"
    return _operand(e, _BINARY[op] + (0 if left else 1))


def _clarified(op: str, e: ir.Expr) -> bool:
    """Parentheses GCC's ``-Wparentheses`` asks for though C does not: `(a && b) || c`,
    `a | (b + c)`, `a << (b + c)`, `(a < b) == c`, `(!a) & b`."""
    if isinstance(e, ir.Unary):
        return e.op == "!" and op in _BITWISE
    if not isinstance(e, ir.Binary):
        return False
    inner = e.op
    if op in _COMPARISON:
        return inner in _COMPARISON
    if inner == op:
        return False
    if op in _LOGICAL:
        return inner in _LOGICAL
    if op in _BITWISE:
        return inner not in _LOGICAL
    return op in ("<<", ">>") and inner in ("+", "-")
