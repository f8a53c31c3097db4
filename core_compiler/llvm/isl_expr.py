"""isl AST expressions as LLVM integer arithmetic in one index type (``i64`` on the CPU).

isl's AST expressions are integer-valued (``floord``, ``min``, ``max``, ``pdiv_q``, ``fdiv_q``,
``pdiv_r``, ``zdiv_r``, ``select``/``cond``) or boolean (comparisons, ``and``/``or``); booleans
come out as ``i1`` and are widened when used as numbers. Additions and products are ``nsw``:
isl's expressions range over loop bounds, and saying so lets SCEV reason about the loops.

Example: ``floord(n - 1, 32)`` with ``n`` an ``i64`` becomes a signed division rounded toward
minus infinity (`floor_div`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import islpy as isl
import llvmlite.ir as ir

from core_compiler.errors import UnknownName

_OP: Any = isl.ast_expr_op_type
_BOOL_OPS = {_OP.and_, _OP.and_then, _OP.or_, _OP.or_else, _OP.le, _OP.lt, _OP.ge, _OP.gt, _OP.eq}
_CMP = {_OP.le: "<=", _OP.lt: "<", _OP.ge: ">=", _OP.gt: ">", _OP.eq: "=="}


def lower_expr(b: ir.IRBuilder, e: isl.AstExpr, names: Mapping[str, ir.Value], ity: ir.IntType) -> ir.Value:
    """The value of `e` as `ity` (booleans are widened to 0/1)."""
    v = _lower(b, e, names, ity)
    return b.zext(v, ity) if v.type == ir.IntType(1) else v


def lower_cond(b: ir.IRBuilder, e: isl.AstExpr, names: Mapping[str, ir.Value], ity: ir.IntType) -> ir.Value:
    """The value of `e` as an ``i1`` condition."""
    v = _lower(b, e, names, ity)
    return v if v.type == ir.IntType(1) else b.icmp_signed("!=", v, ir.Constant(ity, 0))


def _lower(b: ir.IRBuilder, e: isl.AstExpr, names: Mapping[str, ir.Value], ity: ir.IntType) -> ir.Value:
    kind = e.get_type()
    if kind == isl.ast_expr_type.int:
        return ir.Constant(ity, int(e.int_get_val().to_python()))
    if kind == isl.ast_expr_type.id:
        name = e.id_get_id().get_name()
        if name not in names:
            raise UnknownName(name)
        return names[name]
    op = e.op_get_type()
    args = [e.op_get_arg(k) for k in range(e.op_get_n_arg())]
    if op in _BOOL_OPS:
        return _boolean(b, op, args, names, ity)
    if op in (_OP.select, _OP.cond):
        c = lower_cond(b, args[0], names, ity)
        return b.select(c, lower_expr(b, args[1], names, ity), lower_expr(b, args[2], names, ity))
    vals = [lower_expr(b, a, names, ity) for a in args]
    return _arith(b, op, vals)


def _boolean(b: ir.IRBuilder, op: object, args: list[isl.AstExpr], names: Mapping[str, ir.Value], ity: ir.IntType) -> ir.Value:
    if op in _CMP:
        x, y = (lower_expr(b, a, names, ity) for a in args)
        return b.icmp_signed(_CMP[op], x, y)
    conds = [lower_cond(b, a, names, ity) for a in args]  # side-effect free: no short circuit
    join = b.and_ if op in (_OP.and_, _OP.and_then) else b.or_
    out = conds[0]
    for c in conds[1:]:
        out = join(out, c)
    return out


def _arith(b: ir.IRBuilder, op: object, v: list[ir.Value]) -> ir.Value:
    table: dict[object, Callable[[], ir.Value]] = {
        _OP.add: lambda: b.add(v[0], v[1], flags=["nsw"]),
        _OP.sub: lambda: b.sub(v[0], v[1], flags=["nsw"]),
        _OP.mul: lambda: b.mul(v[0], v[1], flags=["nsw"]),
        _OP.minus: lambda: b.neg(v[0]),
        _OP.div: lambda: b.sdiv(v[0], v[1]),
        _OP.pdiv_q: lambda: b.sdiv(v[0], v[1]),  # isl: the dividend is known non-negative
        _OP.fdiv_q: lambda: floor_div(b, v[0], v[1]),
        _OP.pdiv_r: lambda: b.srem(v[0], v[1]),
        _OP.zdiv_r: lambda: b.srem(v[0], v[1]),  # only ever compared with zero
        _OP.min: lambda: _fold(b, "<", v),
        _OP.max: lambda: _fold(b, ">", v),
    }
    if op not in table:
        raise NotImplementedError(f"isl AST operation {op}")
    return table[op]()


def floor_div(b: ir.IRBuilder, n: ir.Value, d: ir.Value) -> ir.Value:
    """``floor(n / d)`` for a positive `d` (isl's ``fdiv_q``, C's ``floord``)."""
    q = b.sdiv(n, d)
    r = b.srem(n, d)
    zero = ir.Constant(n.type, 0)
    adjust = b.and_(b.icmp_signed("!=", r, zero), b.icmp_signed("<", n, zero))
    return b.sub(q, b.zext(adjust, n.type))


def _fold(b: ir.IRBuilder, cmp: str, v: list[ir.Value]) -> ir.Value:
    out = v[0]
    for x in v[1:]:
        out = b.select(b.icmp_signed(cmp, out, x), out, x)
    return out
