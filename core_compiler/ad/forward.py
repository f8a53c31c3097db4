"""Forward (tangent) mode: a tangent statement in front of each primal statement.

``C[i][j] += alpha * A[i][k] * B[k][j]`` with `A` active becomes::

    d_C[i][j] += alpha * d_A[i][k] * B[k][j];   (the tangent, before the primal overwrites)
    C[i][j] += alpha * A[i][k] * B[k][j];

The tangent comes first because it reads the primal values before the statement changes them
(``A[i] = A[i] * A[i]`` needs the old ``A[i]``); one C assignment reads its whole right-hand side
before storing, so ``d_A[i][j] = (d_A[i-1][j] + d_A[i][j]) / 2.0`` is right in place too.
"""

from __future__ import annotations

from core_compiler.ad.cprint import ZERO, add, is_const, mul, select
from core_compiler.ad.emit import (
    Context,
    Leaf,
    block_lines,
    name_of,
    param_text,
    shadow_param_text,
    shadow_params,
)
from core_compiler.ad.rules import partials
from core_compiler.frontend import ir
from core_compiler.remarks import analysis


def tangent_function(ctx: Context, name: str) -> str:
    params = [param_text(ctx, p) for p in ctx.fn.params]
    params += [shadow_param_text(ctx, p) for p in shadow_params(ctx)]
    body = block_lines(ctx, ctx.fn.body, 1, lambda s: _with_tangent(ctx, s))
    head = f"void {name}({', '.join(params)})"
    return "\n".join([head, "{", *body, "}"]) + "\n"


def _with_tangent(ctx: Context, node: ir.Assign | ir.Decl) -> list[str]:
    return [*tangent_lines(ctx, node), ctx.primal_line(node)]


def tangent_lines(ctx: Context, node: ir.Assign | ir.Decl) -> list[str]:
    target, op, value = ctx.parts(node)
    if not ctx.is_active(target):
        return []
    d_target = ctx.c(ctx.shadow(target))
    same = any(name_of(leaf) == name_of(target) for leaf in _leaves(value))
    if op in ("+=", "-=") and not same:
        total = _tangent(ctx, value, node)
        return [] if is_const(total, 0) else [f"{d_target} {op} {ctx.c(total)};"]
    full = value if op == "=" else ir.Binary(op[0], target, value, node.range)
    total = _tangent(ctx, full, node)
    if isinstance(node, ir.Decl):
        return [f"{node.type} {d_target} = {ctx.c(total)};"]
    return [f"{d_target} = {ctx.c(total)};"]


def _tangent(ctx: Context, e: ir.Expr, node: ir.Assign | ir.Decl) -> ir.Expr:
    pairs, notes = partials(e, ctx.is_active)
    for n in notes:
        ctx.remarks.append(
            analysis("ad", "NonDifferentiable", f"{n.reason}: its derivative is taken as zero "
                     f"(on the path from `--wrt` to the outputs)", n.range, ctx.fn.name)
        )
    total: ir.Expr = ZERO
    for leaf, p in pairs:
        total = add(total, _guarded(mul(p, ctx.shadow(leaf))))
    return total


def _guarded(e: ir.Expr) -> ir.Expr:
    """`e` with each product by a `?:` one side of which is zero made a `?:` of the product:
    ``(i > 0 ? 1.0 : 0.0) * x[i] * d_x[i - 1]`` read ``d_x[-1]`` at i = 0, and zero times what
    lies there is NaN where that is NaN; C evaluates only the side a `?:` selects."""
    if not (isinstance(e, ir.Binary) and e.op == "*"):
        return e
    a, b = _guarded(e.lhs), _guarded(e.rhs)
    for t, other in ((a, b), (b, a)):
        if isinstance(t, ir.Ternary) and (is_const(t.then, 0) or is_const(t.other, 0)):
            return select(t.cond, _guarded(mul(t.then, other)), _guarded(mul(t.other, other)))
    return mul(a, b)


def _leaves(e: ir.Expr) -> list[Leaf]:
    if isinstance(e, ir.Var | ir.Subscript):
        return [e]
    return [leaf for sub in ir.sub_expressions(e) for leaf in _leaves(sub)]
