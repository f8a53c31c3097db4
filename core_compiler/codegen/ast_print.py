"""Printing isl ASTs as C-family code, and evaluating host ASTs.

`CPrinter` walks an `isl.AstNode` and prints ``for``/``if``/blocks itself; user nodes (statement
instances ``S0(c0, c1)`` or kernel launches ``kernel0(c0)``) go to a callback that returns their
lines, and mark nodes to another. Expressions are isl's own C rendering, which uses ``floord``,
``min`` and ``max`` (see `PREAMBLE`). `tagged_statements` wraps a callback so that the lines of a
statement instance carry their statement (`core_compiler/source_map.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import islpy as isl

from core_compiler.scop.model import Scop
from core_compiler.source_map import tag
from core_compiler.transform.gpu_mapping import when_parts

_T: Any = isl.ast_node_type
_OP: Any = isl.ast_expr_op_type

C_PREAMBLE = """#define floord(n, d) (((n) < 0) ? -((-(n) + (d) - 1) / (d)) : (n) / (d))
#define hx_min(x, y) ((x) < (y) ? (x) : (y))
#define hx_max(x, y) ((x) > (y) ? (x) : (y))
"""

UserHook = Callable[[isl.AstExpr], list[str]]
MarkHook = Callable[[str, isl.AstNode, int], list[str] | None]


def expr_c(e: isl.AstExpr) -> str:
    """isl's C text, with min/max renamed to the preamble's macros."""
    text = e.to_C_str()
    return text.replace("min(", "hx_min(").replace("max(", "hx_max(")


def tagged_statements(user: UserHook, scop: Scop) -> UserHook:
    """`user`, with the lines it prints for a statement of `scop` tagged as that statement's."""
    names = {s.name for s in scop.statements}

    def hook(e: isl.AstExpr) -> list[str]:
        lines = user(e)
        name = call_parts(e)[0]
        return [tag(ln, scop.name, name) for ln in lines] if name in names else lines

    return hook


class CPrinter:
    def __init__(
        self,
        user: UserHook,
        mark: MarkHook | None = None,
        pragma_for: Callable[[isl.AstNode], str | None] | None = None,
    ) -> None:
        self.user = user
        self.mark = mark
        self.pragma_for = pragma_for

    def print(self, node: isl.AstNode, depth: int = 1) -> list[str]:
        kind = node.get_type()
        pad = "  " * depth
        if kind == _T.block:
            return [ln for child in _children(node.block_get_children()) for ln in self.print(child, depth)]
        if kind == _T.for_:
            return self._for(node, depth)
        if kind == _T.if_:
            out = [f"{pad}if ({expr_c(node.if_get_cond())}) {{"]
            out += self.print(node.if_get_then_node(), depth + 1)
            if node.if_has_else_node():
                out.append(f"{pad}}} else {{")
                out += self.print(node.if_get_else_node(), depth + 1)
            return [*out, f"{pad}}}"]
        if kind == _T.user:
            cond, call = when_parts(node.user_get_expr())
            if cond is not None:
                return [f"{pad}if ({expr_c(cond)}) {{", *[pad + "  " + ln for ln in self.user(call)], f"{pad}}}"]
            return [pad + ln for ln in self.user(call)]
        if kind == _T.mark:
            name = node.mark_get_id().get_name()
            if self.mark is not None:
                lines = self.mark(name, node, depth)
                if lines is not None:
                    return lines
            return self.print(node.mark_get_node(), depth)
        raise NotImplementedError(f"isl AST node type {kind}")

    def _for(self, node: isl.AstNode, depth: int) -> list[str]:
        pad = "  " * depth
        it = expr_c(node.for_get_iterator())
        init, cond, inc = (expr_c(node.for_get_init()), expr_c(node.for_get_cond()), expr_c(node.for_get_inc()))
        step = f"{it} += {inc}" if inc != "1" else f"{it}++"
        out = []
        pragma = self.pragma_for(node) if self.pragma_for else None
        if pragma:
            out.append(f"{pad}{pragma}")
        out.append(f"{pad}for (int {it} = {init}; {cond}; {step}) {{")
        out += self.print(node.for_get_body(), depth + 1)
        return [*out, f"{pad}}}"]


def _children(lst: isl.AstNodeList) -> Iterator[isl.AstNode]:
    for k in range(lst.n_ast_node()):
        yield lst.get_at(k)


def call_parts(e: isl.AstExpr) -> tuple[str, list[isl.AstExpr]]:
    """``S0(c0, c1 + 1)`` as ``("S0", [c0, c1 + 1])``."""
    n = e.op_get_n_arg()
    name = e.op_get_arg(0).id_get_id().get_name()
    return name, [e.op_get_arg(k) for k in range(1, n)]


# ------------------------------------------------------------------------------ evaluation


def evaluate(e: isl.AstExpr, env: dict[str, int]) -> int:
    """The integer value of an isl AST expression under `env` (host loops, parameters)."""
    kind = e.get_type()
    if kind == isl.ast_expr_type.int:
        return _integer(e.int_get_val())
    if kind == isl.ast_expr_type.id:
        return env[e.id_get_id().get_name()]
    op = e.op_get_type()
    args = [evaluate(e.op_get_arg(k), env) for k in range(e.op_get_n_arg())]
    return _apply(op, args)


def _integer(v: isl.Val) -> int:
    """`v` as a Python int without printing it where it fits 32 bits: islpy's `to_python` prints,
    and isl counts a printer's work against the context's operation limit, which the passes
    before the run may have spent (fuzzer seed 775: None for the grid's first tile, a TypeError
    out of the OpenCL run). A larger value is printed with the limit lifted (`get_num_si` gives 0,
    not an error, for a value that does not fit)."""
    if v.n_abs_num_chunks(4) <= 1:  # |v| < 2**32
        return int(v.get_num_si())
    ctx = v.get_ctx()
    budget = ctx.get_max_operations()
    ctx.set_max_operations(0)
    try:
        return int(v.to_python())
    finally:
        ctx.set_max_operations(budget)


def _apply(op: object, a: list[int]) -> int:
    table: dict[object, Callable[[list[int]], int]] = {
        _OP.add: lambda a: a[0] + a[1],
        _OP.sub: lambda a: a[0] - a[1],
        _OP.mul: lambda a: a[0] * a[1],
        _OP.minus: lambda a: -a[0],
        _OP.fdiv_q: lambda a: a[0] // a[1],
        _OP.pdiv_q: lambda a: a[0] // a[1],
        _OP.div: lambda a: int(a[0] / a[1]),
        _OP.pdiv_r: lambda a: a[0] % a[1],
        _OP.zdiv_r: lambda a: a[0] - a[1] * int(a[0] / a[1]),
        _OP.min: min,
        _OP.max: max,
        _OP.and_: lambda a: int(all(a)),
        _OP.and_then: lambda a: int(all(a)),
        _OP.or_: lambda a: int(any(a)),
        _OP.or_else: lambda a: int(any(a)),
        _OP.le: lambda a: int(a[0] <= a[1]),
        _OP.lt: lambda a: int(a[0] < a[1]),
        _OP.ge: lambda a: int(a[0] >= a[1]),
        _OP.gt: lambda a: int(a[0] > a[1]),
        _OP.eq: lambda a: int(a[0] == a[1]),
        _OP.select: lambda a: a[1] if a[0] else a[2],
        _OP.cond: lambda a: a[1] if a[0] else a[2],
    }
    return table[op](a)


def walk_host(node: isl.AstNode, env: dict[str, int], on_user: Callable[[isl.AstExpr, dict[str, int]], None]) -> None:
    """Execute a host AST: loops and conditions evaluated, user nodes passed to `on_user`."""
    kind = node.get_type()
    if kind == _T.block:
        for child in _children(node.block_get_children()):
            walk_host(child, env, on_user)
    elif kind == _T.for_:
        it = node.for_get_iterator().id_get_id().get_name()
        value = evaluate(node.for_get_init(), env)
        inc = evaluate(node.for_get_inc(), env)
        while True:
            scope = {**env, it: value}
            if not evaluate(node.for_get_cond(), scope):
                break
            walk_host(node.for_get_body(), scope, on_user)
            value += inc
    elif kind == _T.if_:
        if evaluate(node.if_get_cond(), env):
            walk_host(node.if_get_then_node(), env, on_user)
        elif node.if_has_else_node():
            walk_host(node.if_get_else_node(), env, on_user)
    elif kind == _T.user:
        cond, call = when_parts(node.user_get_expr())
        if cond is None or evaluate(cond, env):
            on_user(call, env)
    elif kind == _T.mark:
        walk_host(node.mark_get_node(), env, on_user)
