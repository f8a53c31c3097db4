"""Statement instances as C text: the original assignment with loop counters replaced by the
generated code's expressions and array accesses laid out for the target.

Layouts: ``"c"`` keeps the source's multi-dimensional subscripts (``A[i][j]``, for code spliced back
into the original function); ``"flat"`` linearizes every array into a 1-D buffer (OpenCL, CUDA).
Scalars written inside a loop nest are device buffers (``s[0]``); local scalars declared inside
the nest are expanded over the loops around their declaration (``s[(i) - lo]``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import islpy as isl

from core_compiler.codegen.ast_print import call_parts, expr_c
from core_compiler.frontend import ir
from core_compiler.scop.affine import Affine, FloorDiv, Mod, Term, product_text, signed_sum
from core_compiler.scop.model import Scop, Statement
from core_compiler.scop.region import AccessInfo, ArrayDecl


@dataclass(frozen=True, eq=False)
class ArrayLayout:
    decl: ArrayDecl
    lower: tuple[isl.AstExpr | None, ...]  # per dim: subtract this (expanded scalars), or None
    extent: tuple[isl.AstExpr | str | None, ...]  # per dim: number of elements (None: unknown)

    @property
    def name(self) -> str:
        return self.decl.name

    @property
    def is_scalar(self) -> bool:
        return self.decl.kind != "array"

    def size_exprs(self) -> tuple[isl.AstExpr | str | None, ...]:
        return self.extent


def array_layouts(scop: Scop, own: frozenset[str] = frozenset()) -> dict[str, ArrayLayout]:
    """How each array of `scop` is stored; the local arrays in `own` are the user's arrays, laid
    out as declared (`own_local_arrays`), the other local arrays and scalars are buffers."""
    build = isl.AstBuild.from_context(scop.context.params())
    out = {}
    for a in scop.arrays:
        if a.kind == "array" or a.name in own:
            a = replace(a, kind="array")
            known = tuple(None if e is None else _aff_c(e) for e in a.extents)
            out[a.name] = ArrayLayout(a, (None,) * len(a.extents), known)
            continue
        box = scop.reads(a.name).union(scop.writes(a.name)).range()
        lo: list[isl.AstExpr | None] = []
        ext: list[isl.AstExpr | str | None] = []
        if len(a.extents) and box.is_empty():  # nothing touches it at these sizes: one element
            lo, ext = [None] * len(a.extents), ["1"] * len(a.extents)
        elif len(a.extents):
            lo, ext = _local_bounds(build, isl.Set.from_union_set(box))
        out[a.name] = ArrayLayout(a, tuple(lo), tuple(ext))
    return out


LAYOUT_OPERATIONS = 1_000_000
"""isl operations the exact bounds of one expanded local may take before those of the hull of
what it touches are used. gramschmidt's register-tiled CUDA (PolyBench MINI) translated for the
CPU touches kernel6's `shared_R` in 8 pieces, whose exact last bound is a piecewise form of
535,402 characters (50 s of isl's, over the 4e7 the whole layout may take); the hull's take
0.24 s."""


def _local_bounds(build: isl.AstBuild, touched: isl.Set) -> tuple[list[isl.AstExpr | None], list[isl.AstExpr | str | None]]:
    """Per dimension of an expanded local touched at `touched`: its lowest index and its extent,
    exact within `LAYOUT_OPERATIONS` of isl's, else those of the hull (a superset: a safe layout)."""
    ctx = touched.get_ctx()
    budget = ctx.get_max_operations()
    ctx.set_max_operations(min(budget, LAYOUT_OPERATIONS) if budget else LAYOUT_OPERATIONS)
    ctx.reset_operations()
    try:
        return _bounds(build, _touched(touched))
    except isl.Error:
        ctx.reset_operations()
        ctx.set_max_operations(budget)
        return _bounds(build, isl.Set.from_basic_set(touched.simple_hull()))
    finally:
        ctx.set_max_operations(budget)


def _bounds(build: isl.AstBuild, whole: isl.Set) -> tuple[list[isl.AstExpr | None], list[isl.AstExpr | str | None]]:
    lo: list[isl.AstExpr | None] = []
    ext: list[isl.AstExpr | str | None] = []
    for d in range(whole.dim(isl.dim_type.set)):
        mn, mx = whole.dim_min(d).coalesce(), whole.dim_max(d).coalesce()
        lo.append(build.expr_from_pw_aff(mn))
        ext.append(build.expr_from_pw_aff(mx.sub(mn).add_constant_val(isl.Val.one(whole.get_ctx()))))
    return lo, ext


HULL_PIECES = 64  # a local touched in more pieces is bounded by their hull


def _touched(whole: isl.Set) -> isl.Set:
    """The elements of an expanded local to lay out: the bounds of each piece, not a hull (a
    scalar private to `i` in one nest and to `j` in another touches [0, w) and [0, h)), except
    where there are more than `HULL_PIECES` pieces: their simple hull, a superset, so a safe
    layout (syrk's register-tiled CUDA translated for the CPU: 187 pieces, whose exact bounds ran
    out of 4e7 of isl's operations after 29 s; the hull's take 0.06 s)."""
    if whole.n_basic_set() > HULL_PIECES:
        return isl.Set.from_basic_set(whole.simple_hull())
    return whole.coalesce()


def own_local_arrays(scop: Scop) -> frozenset[str]:
    """The local arrays of `scop` declared outside its loops (at its top, in an `if` of it, or
    before it): in code spliced into the function they are the user's arrays, one per call as in
    the source (code after the nest reads them), not buffers. Those declared inside a loop are
    expanded over the loops around them (`t[i][j]`), a buffer only the nest sees."""
    in_loops: set[str] = set()

    def walk(stmts: tuple[ir.Stmt, ...], in_loop: bool) -> None:
        for s in stmts:
            if isinstance(s, ir.Decl) and in_loop:
                in_loops.add(s.name)
            walk(ir.sub_statements(s), in_loop or isinstance(s, ir.For | ir.OtherLoop))

    walk(scop.region.stmts, False)
    return frozenset(a.name for a in scop.arrays if a.kind == "local-array" and a.name not in in_loops)


def outer_declarations(scop: Scop) -> list[str]:
    """Scalars declared at the SCoP's top level (outside its loops), now declared before it."""
    seen: dict[str, str] = {}
    buffers = {a.name for a in scop.arrays if a.per_iteration}
    for s in scop.region.stmts:
        if isinstance(s, ir.Decl) and not isinstance(s.type, ir.Array) and s.name not in buffers:
            seen.setdefault(s.name, str(s.type))
    for a in scop.arrays:
        if a.kind == "local-scalar" and not a.extents:
            seen.setdefault(a.name, a.elem_type)
    return [f"{ctype} {name};" for name, ctype in seen.items()]


def local_buffers(printer: StatementPrinter) -> tuple[list[str], list[str]]:
    """C that allocates the nest's expanded local scalars and its local arrays on the heap (sized
    by what the nest touches), and C that frees them."""
    local = [lay for lay in printer.arrays.values() if lay.decl.kind in ("local-scalar", "local-array") and lay.extent]
    allocations = []
    for lay in local:
        elem = lay.decl.elem_type
        count = " * ".join(f"(size_t)hx_max(1, {extent_c(e)})" for e in lay.extent)
        allocations.append(f"{elem} *{lay.name} = ({elem} *)malloc(sizeof({elem}) * {count});")
    return allocations, [f"free({lay.name});" for lay in local]


def _aff_c(a: Affine) -> str:
    return f"({_sum_c(a, {}, '*')})"


def extent_c(e: isl.AstExpr | str | None) -> str:
    if e is None:
        return "?"
    return e if isinstance(e, str) else f"({expr_c(e)})"


# C's float versions of the math functions; OpenCL C overloads the plain names on the argument type
OPENCL_MATH = {
    name: name[:-1]
    for name in ("sqrtf", "expf", "logf", "powf", "fabsf", "sinf", "cosf", "tanf", "tanhf", "floorf", "ceilf",
                 "fmaxf", "fminf", "fmodf")
}  # fmt: skip


class StatementPrinter:
    def __init__(self, scop: Scop, layout: str, scalars_by_pointer: bool = True,
                 calls: Mapping[str, str] | None = None) -> None:  # fmt: skip
        self.scop = scop
        self.layout = layout  # "c" | "flat"
        self.arrays = array_layouts(scop, own_local_arrays(scop) if layout == "c" else frozenset())
        self.scalars_by_pointer = scalars_by_pointer
        self.calls = calls or {}  # math functions by another name (`OPENCL_MATH`)
        self._accesses: dict[str, dict[object, AccessInfo]] = {}
        for s in scop.statements:
            self._accesses[s.name] = {a.info.node: a.info for a in (*s.reads, *s.writes)}

    def user(self, expr: isl.AstExpr) -> list[str]:
        name, args = call_parts(expr)
        stmt = self.scop.statement(name)
        subst = {it: f"({expr_c(a)})" for it, a in zip(stmt.iterators, args, strict=True)}
        return [self.assign(stmt, subst)]

    def assign(self, stmt: Statement, subst: dict[str, str]) -> str:
        node = stmt.info.node
        acc = self._accesses[stmt.name]
        if isinstance(node, ir.ExprStmt):  # an opaque call: arrays passed whole, as in the source
            return f"{self.expr(node.expr, subst, acc)};"
        target = self.expr(node.target, subst, acc)
        return f"{target} {node.op} {self.expr(node.value, subst, acc)};"

    def expr(self, e: ir.Expr, subst: dict[str, str], acc: dict[object, AccessInfo]) -> str:
        info = acc.get(e) if isinstance(e, ir.Unary | ir.Binary | ir.Cast) else None
        if info is not None and info.at is not None:
            return self.address(e, info, subst, acc)
        if isinstance(e, ir.IntLit):
            return str(e.value)
        if isinstance(e, ir.FloatLit | ir.StrLit):
            return e.text
        if isinstance(e, ir.Var):
            if e.name in subst:
                return subst[e.name]
            info = acc.get(e)
            return self.access(info, subst) if info is not None else e.name.replace(".", "_")
        if isinstance(e, ir.Subscript):
            return self.access(acc[e], subst)
        if isinstance(e, ir.Unary):
            return f"({e.op}{self.expr(e.operand, subst, acc)})"
        if isinstance(e, ir.Binary):
            return f"({self.expr(e.lhs, subst, acc)} {e.op} {self.expr(e.rhs, subst, acc)})"
        if isinstance(e, ir.Ternary):
            c, t, o = (self.expr(x, subst, acc) for x in (e.cond, e.then, e.other))
            return f"({c} ? {t} : {o})"
        if isinstance(e, ir.Call):
            args = [self.expr(a, subst, acc) for a in e.args]
            if e.name in self.calls or e.name in self.calls.values():
                # OpenCL overloads math on the argument types, C's prototype decides: `pow(2.0, x)`
                # with a float `x` is ambiguous there, `pow((double)(2.0), (double)(x))` is not
                ctype = "float" if e.name in self.calls else "double"
                args = [f"({ctype})({a})" for a in args]
            return f"{self.calls.get(e.name, e.name)}({', '.join(args)})"
        if isinstance(e, ir.Cast):
            return f"(({e.type})({self.expr(e.operand, subst, acc)}))"
        raise ValueError(f"cannot generate code for `{e}`")

    def address(self, e: ir.Expr, info: AccessInfo, subst: dict[str, str], acc: dict[object, AccessInfo]) -> str:
        """An address passed to an opaque call, as written (``&a[i]``, ``a + i``, ``(float *)a``),
        its element in this layout: ``&x`` of an expanded scalar is ``&x[(c0) - 1]``."""
        if isinstance(e, ir.Cast):
            return f"(({e.type})({self.address(e.operand, info, subst, acc)}))"
        if isinstance(e, ir.Unary) and isinstance(e.operand, ir.Subscript):
            sub = e.operand
            return f"(&{self.element(sub.base, [self.expr(i, subst, acc) for i in sub.indices])})"
        if isinstance(e, ir.Unary):
            assert info.at is not None
            return f"(&{self.element(info.array, [affine_c(a, subst) for a in info.at])})"
        if isinstance(e, ir.Binary):  # `a + i`, `A[i] + k`: the row as a source subscript
            lhs, rhs = (self.row_or_expr(x, subst) for x in (e.lhs, e.rhs))
            return f"({lhs} {e.op} {rhs})"
        return self.expr(e, subst, {})  # `a`: its name

    def row_or_expr(self, e: ir.Expr, subst: dict[str, str]) -> str:
        """A part of an address as written: a row ``A[(c0)]`` (source subscripts), a sum of them."""
        if isinstance(e, ir.Subscript):
            return e.base + "".join(f"[{self.expr(i, subst, {})}]" for i in e.indices)
        if isinstance(e, ir.Binary):
            return f"({self.row_or_expr(e.lhs, subst)} {e.op} {self.row_or_expr(e.rhs, subst)})"
        return self.expr(e, subst, {})

    def access(self, info: AccessInfo, subst: dict[str, str]) -> str:
        if info.whole:  # an array (or a row `A[i]`) passed to an opaque call: its address, as in the source
            if info.indices and (self.layout != "c" or self.arrays[info.array].decl.delinearized):
                raise ValueError(f"cannot pass the row `{info.text}` in the {self.layout} layout")
            return info.array + "".join(f"[{affine_c(a, subst)}]" for a in info.indices)
        return self.element(info.array, [affine_c(a, subst) for a in info.indices])

    def element(self, array: str, idx: list[str]) -> str:
        """Element `idx` (C texts, source subscripts) of `array` in this layout."""
        lay = self.arrays[array]
        if lay.is_scalar:
            idx = [i if lo is None else f"({i} - ({expr_c(lo)}))" for i, lo in zip(idx, lay.lower, strict=True)]
            if not idx:
                return f"{array}[0]" if self.scalars_by_pointer else array
        if self.layout == "c" and lay.decl.fields:  # an array of structs: `bodies[i].vx`
            return array + "".join(f"[{i}]" for i in idx[:-1]) + "." + _field(lay.decl, idx[-1])
        if self.layout == "c" and not lay.decl.delinearized and not lay.is_scalar:
            return array + "".join(f"[{i}]" for i in idx)
        return f"{array}[{_linear(idx, lay.extent)}]"


def _field(decl: ArrayDecl, column: str) -> str:
    """The field at `column` (C text of a constant) of an array of structs read as rows."""
    name = decl.fields[int(column)] if column.isdigit() and int(column) < len(decl.fields) else ""
    if not name:
        raise ValueError(f"no field of `{decl.name}` at column {column}")
    return name


def affine_c(a: Affine, subst: Mapping[str, str]) -> str:
    """C text of the subscript `a`, each variable in `subst` (the statement's iterators) replaced
    by its C expression there (parenthesized): ``2 * (c0) + ((c1 + 1)/2)`` for ``2*i + (j + 1)/2``.

    The model's ``floor``/``mod`` are printed as C's ``/`` and ``%``, which round toward zero:
    the same value, since `core_compiler.scop.model.negative_division` keeps out every division
    whose numerator can be negative. The one printer of affine forms in C, OpenCL and CUDA."""
    return _sum_c(a, subst, " * ")


def _sum_c(a: Affine, subst: Mapping[str, str], times: str) -> str:
    """`a` in C; `times` spells products (``2 * x`` in subscripts, ``2*x`` inside atoms and extents,
    as isl writes them)."""
    parts = [product_text(coeff, _term_c(term, subst), times) for term, coeff in a.coeffs]
    if a.const or not parts:
        parts.append(str(a.const))
    return signed_sum(parts)


def _term_c(term: Term, subst: Mapping[str, str]) -> str:
    """A variable (its C name, or its value in `subst`) or an atom, parenthesized whole."""
    if isinstance(term, str):
        return subst.get(term, term)
    num = _sum_c(term.num, subst, "*")
    if isinstance(term, FloorDiv):
        return f"(({num})/{term.den})"
    if isinstance(term, Mod):
        return f"(({num}) % {term.den})"
    return f"(({num}) % ({_sum_c(term.den, subst, '*')}))"


def _linear(idx: list[str], extent: tuple[isl.AstExpr | str | None, ...]) -> str:
    text = idx[0] if idx else "0"
    for i, e in zip(idx[1:], extent[1:], strict=True):
        text = f"({text}) * {extent_c(e)} + {i}"
    return text
