"""Linearized subscripts with constant row lengths read as rows, in kernels.

CUDA code indexes flat pointers: ``A[row * 80 + col]``, ``u[(c0 + 1) * 30 + t1 - 1]``. As one
affine subscript that is exact, but it lets ``col`` run past the end of its row into the next, so a
kernel whose sizes could exceed the row (``col < m`` with any `m`) shows races between rows that the
program never makes. As C loop nests over `A[i * n + j]` are (`Delinearized`), such a pointer is
read as rows of that length when every access of it splits the same way, assuming each inner
subscript stays in its row (`DelinearizedRows`)::

    A[row * 80 + col]   ->   A[row][col]        (A: double (*)[80])
    B[c0 * 400 + c1 * 20 + c2]   ->   B[c0][c1][c2]     (B: double (*)[20][20])

A constant folds into the row when it is a multiple of the length, else stays in the column.
"""

from __future__ import annotations

import itertools
from dataclasses import replace

from core_compiler.frontend import ir
from core_compiler.source import SourceRange

Terms = list[tuple[int, ir.Expr | None]]  # sign (or the constant's value), term (None: a constant)


def rows(body: tuple[ir.Stmt, ...], params: tuple[ir.Param, ...], values: dict[str, ir.Expr] | None = None,
         ) -> tuple[tuple[ir.Stmt, ...], tuple[ir.Param, ...], list[ir.Note]]:  # fmt: skip
    """`body` with the flat pointers in `params` that split consistently indexed by rows; `values`:
    the kernel's top-level ``int b0 = blockIdx.x + o0;`` (a block's offset ``32 * b0`` is no row)."""
    blocky = frozenset(n for n, v in (values or {}).items() if _block_only(v))
    subs = [e for e in ir.all_exprs(body) if isinstance(e, ir.Subscript) and len(e.indices) == 1]
    flat = {p.name: p for p in params if isinstance(p.type, ir.Pointer) and isinstance(p.type.pointee, ir.Scalar)}
    widths: dict[str, tuple[int, ...] | None] = {}
    first: dict[str, ir.Subscript] = {}
    for s in subs:
        if s.base not in flat:
            continue
        terms = _terms(s.indices[0])
        split = _split(terms, blocky)
        w = tuple(split[1]) if split else () if _row_zero(s.indices[0], terms) else None  # (): fits any rows
        widths[s.base] = _common(widths[s.base], w) if s.base in widths else w
        first.setdefault(s.base, s)
    lengths = {name: _one_length(name, subs, blocky) for name in widths if widths[name] is None}
    forced = {name: n for name, n in lengths.items() if n is not None}
    chosen = {name: w for name, w in widths.items() if w} | {name: (n,) for name, n in forced.items()}
    if not chosen:
        return sized_rows(body, params)

    def reindex(e: ir.Expr) -> ir.Expr:
        if not isinstance(e, ir.Subscript) or e.base not in chosen or len(e.indices) != 1:
            return e
        if e.base in forced:
            outer, inner = _at_length(_terms(e.indices[0]), forced[e.base])
            return replace(e, indices=(_expr(outer, e.range), _expr(inner, e.range)))
        split = _split(_terms(e.indices[0]), blocky)
        if split is None:  # `ey[(0) * (30) + c]`: row 0
            return replace(e, indices=(*(ir.IntLit(0, e.range) for _ in chosen[e.base]), e.indices[0]))
        return replace(e, indices=_merged([_expr(t, e.range) for t in split[0]], split[1], chosen[e.base], e.range))

    new_params = tuple(
        replace(p, type=ir.Pointer(ir.Array(p.type.pointee, tuple(ir.IntLit(w, p.range) for w in chosen[p.name]))))  # type: ignore[union-attr]
        if p.name in chosen else p
        for p in params
    )  # fmt: skip
    notes = [
        ir.Note("DelinearizedRows",
                f"`{name}` is indexed as rows of {' x '.join(map(str, w))} elements; "
                "hexplore assumes every inner subscript stays within its row", first[name].range)
        for name, w in chosen.items()
    ]
    body, new_params, more = sized_rows(ir.map_stmts(body, lambda e: ir.map_expr(e, reindex)), new_params)
    return body, new_params, notes + more


def sized_rows(body: tuple[ir.Stmt, ...], params: tuple[ir.Param, ...]) -> tuple[tuple[ir.Stmt, ...], tuple[ir.Param, ...], list[ir.Note]]:
    """Flat pointers indexed by rows of a size, ``ey[(c0 + 1) * (ny) + x]``, where some access
    names a constant row, ``ey[(0) * (ny) + x]``: that one is affine (`0 + x`), so the model would
    read it as a plain subscript and refuse the rows of the others (`Delinearized` needs every
    access a product). Where every access of the pointer is ``row * n + col`` with one size `n`
    (an `int` parameter) and `col` free of products, the pointer is read as ``double (*)[n]``.
    (Pointers whose rows are all products are left to `Delinearized`.)"""
    sizes = {p.name for p in params if isinstance(p.type, ir.Scalar) and p.type.is_integer}
    flat = {p.name for p in params if isinstance(p.type, ir.Pointer) and isinstance(p.type.pointee, ir.Scalar)}
    subs = [e for e in ir.all_exprs(body) if isinstance(e, ir.Subscript) and e.base in flat]
    found: dict[str, set[str | None]] = {}
    constant_row: set[str] = set()
    for e in subs:
        cut = _sized_cut(e, sizes)
        found.setdefault(e.base, set()).add(cut[0] if cut else None)
        if cut and _value(cut[1]) is not None:
            constant_row.add(e.base)
    chosen = {name: n for name, ns in found.items() if name in constant_row and len(ns) == 1 and (n := next(iter(ns)))}
    if not chosen:
        return body, params, []

    def reindex(e: ir.Expr) -> ir.Expr:
        if not isinstance(e, ir.Subscript) or e.base not in chosen:
            return e
        _, row, col = _sized_cut(e, sizes)  # type: ignore[misc]
        return replace(e, indices=(row, col))

    new_params = tuple(
        replace(p, type=ir.Pointer(ir.Array(p.type.pointee, (ir.Var(chosen[p.name], p.range, ir.Scalar("int")),))))  # type: ignore[union-attr]
        if p.name in chosen else p
        for p in params
    )  # fmt: skip
    first = {e.base: e for e in reversed(subs)}
    notes = [ir.Note("DelinearizedRows", f"`{name}` is indexed as rows of `{n}` elements; hexplore assumes every "
                     "inner subscript stays within its row", first[name].range) for name, n in chosen.items()]  # fmt: skip
    return ir.map_stmts(body, lambda e: ir.map_expr(e, reindex)), new_params, notes


def _sized_cut(e: ir.Subscript, sizes: set[str]) -> tuple[str, ir.Expr, ir.Expr] | None:
    """``row * n + col`` (`n` one of `sizes`, one such product, `col` without products): (n, row, col)."""
    if len(e.indices) != 1:
        return None
    rows_: list[tuple[int, str, ir.Expr]] = []
    cols: Terms = []
    for c, t in _terms(e.indices[0]):
        factor = _size_factor(t, sizes) if t is not None else None
        if factor is not None:
            rows_.append((c, *factor))
        elif t is not None and (_product(t) or any(isinstance(x, ir.Var) and x.name in sizes for x in ir.walk_expr(t))):
            return None  # `col` that spans rows by itself
        else:
            cols.append((c, t))
    if len(rows_) != 1 or rows_[0][0] != 1:
        return None
    _, n, row = rows_[0]
    return n, row, _expr(cols, e.range)


def _size_factor(t: ir.Expr, sizes: set[str]) -> tuple[str, ir.Expr] | None:
    """``row * n`` or ``n * row`` with `n` one of `sizes` and `row` free of it: (n, row)."""
    t = _bare(t)
    if not (isinstance(t, ir.Binary) and t.op == "*"):
        return None
    for k, other in ((t.rhs, t.lhs), (t.lhs, t.rhs)):
        k = _bare(k)
        if isinstance(k, ir.Var) and k.name in sizes and not any(isinstance(x, ir.Var) and x.name == k.name for x in ir.walk_expr(other)):
            return k.name, other
    return None


def _one_length(name: str, subs: list[ir.Subscript], blocky: frozenset[str]) -> int | None:
    """Where the accesses of `name` split differently (``(n - c) * 20 + T0 + t`` and, with ``T0``
    substituted, ``(n - c) * 20 + 32 * b + t``): the shortest row length some access is scaled by
    that every access can be cut at (its terms scaled by a multiple of it are the row, the rest
    the column), else None."""
    mine = [_terms(s.indices[0]) for s in subs if s.base == name]

    def row_scale(x: ir.Expr | None) -> int | None:  # a term's constant factor, unless it scales a block id
        sc = _scaled(x) if x is not None else None
        return None if sc is None or _block_id(sc[1], blocky) else sc[0]

    lengths = sorted({s for terms in mine for _, x in terms if (s := row_scale(x)) is not None})
    for length in lengths:
        cuts = [_at_length(terms, length) for terms in mine]
        if all(not any(_product(x) or row_scale(x) is not None for _, x in inner) for _, inner in cuts) and any(o for o, _ in cuts):
            return length
    return None


def _at_length(terms: Terms, length: int) -> tuple[Terms, Terms]:
    """`terms` cut at rows of `length`: (the row's terms, the column's)."""
    outer: Terms = []
    inner: Terms = []
    for c, x in terms:
        sc = _scaled(x) if x is not None else None
        if x is None and c % length == 0:
            outer.append((c // length, None))
        elif sc is not None and sc[0] % length == 0:
            outer += [(c * (sc[0] // length) * k, y) for k, y in _terms(sc[1])] if sc[0] != length else [(c, sc[1])]
        else:
            inner.append((c, x))
    return outer, inner


def _common(a: tuple[int, ...] | None, b: tuple[int, ...] | None) -> tuple[int, ...] | None:
    """The row lengths two accesses agree on: the row boundaries they share. ``(32 * b + t) * 64 + c``
    splits as rows of 64, ``r * 64 + 32 * b + t`` as rows of 2 x 32 (a row of 64 is 2 of 32):
    both are rows of 64."""
    if a == () or b == ():  # a plain subscript fits any rows
        return b if a == () else a
    if not a or not b:
        return None
    shared = sorted(set(_bounds(a)) & set(_bounds(b)))
    if not shared:
        return None
    inner_first = [shared[0], *(y // x for x, y in itertools.pairwise(shared))]
    return tuple(reversed(inner_first))


def _bounds(widths: tuple[int, ...] | list[int]) -> tuple[int, ...]:
    """How many elements a step of each level but the innermost spans, outermost first (rows of
    2 x 32: 64, 32)."""
    out, acc = [], 1
    for w in reversed(widths):
        acc *= w
        out.append(acc)
    return tuple(reversed(out))


def _merged(levels: list[ir.Expr], widths: list[int], target: tuple[int, ...], rng: SourceRange) -> tuple[ir.Expr, ...]:
    """The subscripts `levels` of rows of `widths` as subscripts of rows of `target` (whose
    boundaries are some of theirs): each level joins the target level of the largest span not
    above its own, scaled by the ratio (``[r][b][t]`` of 2 x 32 as ``[r][b * 32 + t]`` of 64)."""
    spans, wanted = [*_bounds(widths), 1], [*_bounds(target), 1]
    out: dict[int, ir.Expr] = {}
    for level, span in zip(levels, spans, strict=True):
        owner = max(w for w in wanted if w <= span)
        term = level if span == owner else ir.Binary("*", level, ir.IntLit(span // owner, rng), rng)
        out[owner] = ir.Binary("+", out[owner], term, rng) if owner in out else term
    return tuple(out.get(w, ir.IntLit(0, rng)) for w in wanted)


def _terms(e: ir.Expr, sign: int = 1) -> Terms:
    """The top-level terms of the sum `e` as (sign or constant, term): ``(c0 + 1) * 30 + t1 - 1``
    is ``[(1, (c0 + 1) * 30), (1, t1), (-1, None)]`` (products are not expanded)."""
    while isinstance(e, ir.Cast):
        e = e.operand
    if isinstance(e, ir.IntLit):
        return [(sign * e.value, None)]
    if isinstance(e, ir.Binary) and e.op == "*":  # row 0: `(0) * (30) + c`
        a, b = _value(e.lhs), _value(e.rhs)
        if a is not None and b is not None:
            return [(sign * a * b, None)]
    if isinstance(e, ir.Binary) and e.op in ("+", "-"):
        return _terms(e.lhs, sign) + _terms(e.rhs, sign if e.op == "+" else -sign)
    return [(sign, e)]


def _row_zero(e: ir.Expr, terms: Terms) -> bool:
    """``(0) * (30) + c``, as generated code writes row 0: no other product, and a zero row
    written out (a plain ``a[i]`` beside ``a[r * 30 + c]`` may span rows: it is not read as row 0)."""
    zero = any(isinstance(x, ir.Binary) and x.op == "*" and 0 in (_value(x.lhs), _value(x.rhs)) for x in ir.walk_expr(e))
    return zero and all(t is None or (_scaled(t) is None and not _product(t)) for _, t in terms)


def _value(e: ir.Expr) -> int | None:
    e = _bare(e)
    if isinstance(e, ir.Unary) and e.op == "-":
        inner = _value(e.operand)
        return None if inner is None else -inner
    return e.value if isinstance(e, ir.IntLit) else None


def _block_only(e: ir.Expr) -> bool:
    """``blockIdx.x + o0``: a block's id (offset), no thread's (``row = blockIdx.y * 16 +
    threadIdx.y`` is a row)."""
    names = {x.name for x in ir.walk_expr(e) if isinstance(x, ir.Var)}
    return any(n.startswith("blockIdx.") for n in names) and not any(n.startswith("threadIdx.") for n in names)


def _block_id(e: ir.Expr, blocky: frozenset[str] = frozenset()) -> bool:
    return isinstance(e, ir.Var) and (e.name.startswith("blockIdx.") or e.name in blocky)


def _bare(e: ir.Expr) -> ir.Expr:
    while isinstance(e, ir.Cast):
        e = e.operand
    return e


def _scaled(e: ir.Expr) -> tuple[int, ir.Expr] | None:
    """``X * W`` or ``W * X`` with a constant ``W > 1``: (W, X)."""
    if isinstance(e, ir.Binary) and e.op == "*":
        for k, other in ((e.rhs, e.lhs), (e.lhs, e.rhs)):
            while isinstance(k, ir.Cast):
                k = k.operand
            if isinstance(k, ir.IntLit) and k.value > 1 and not isinstance(other, ir.IntLit):
                return k.value, other
    return None


def _split(terms: Terms, blocky: frozenset[str] = frozenset()) -> tuple[list[Terms], list[int]] | None:
    """The terms as rows, outermost first, and the row lengths; None for a plain subscript or one
    that does not split. The row length is the largest constant factor of a term (`row * 80`)."""
    scaled = [_scaled(t) for _, t in terms if t is not None]
    if any(sc is None and _product(t) for sc, (_, t) in zip(scaled, [x for x in terms if x[1] is not None], strict=True)):
        return None  # `row * n + t * 16 + tx`: rows of `n` (`Delinearized`), not of 16
    if any(sc is not None and _block_id(sc[1], blocky) for sc in scaled):
        return None  # `blockIdx.x * blockDim.x + threadIdx.x`, `32 * b0`: a thread's index, not a row
    width = max((sc[0] for sc in scaled if sc is not None), default=0)
    if not width:
        return None
    outer: Terms = []
    inner: Terms = []
    for c, t in terms:
        sc = _scaled(t) if t is not None else None
        if sc is not None and sc[0] == width:
            outer.append((c, sc[1]))
        elif t is None and c % width == 0:
            outer.append((c // width, None))
        elif sc is not None and sc[0] > width:
            return None
        else:
            inner.append((c, t))
    above = _split([(c * k, x) for c, t in outer for k, x in (_terms(t) if t is not None else [(1, None)])], blocky)
    if above is not None:  # `(c0 * 20 + c1) * 20 + c2`: the row is itself rows
        return [*above[0], inner], [*above[1], width]
    deeper = _split(inner, blocky)
    if deeper is not None:  # `c0 * 400 + c1 * 20 + c2`
        below = 1
        for w in deeper[1]:
            below *= w
        if width % below == 0 and width > below:
            return [outer, *deeper[0]], [width // below, *deeper[1]]
    return [outer, inner], [width]


def _product(e: ir.Expr | None) -> bool:
    """Whether `e` multiplies two non-constants somewhere (``row * n``)."""
    if isinstance(e, ir.Binary) and e.op == "*" and _scaled(e) is None and _value(e.lhs) is None and _value(e.rhs) is None:
        return True  # (`-2 * t1`, a constant's multiple, is none)
    return e is not None and any(_product(x) for x in ir.sub_expressions(e))


def _expr(terms: Terms, rng: SourceRange) -> ir.Expr:
    out: ir.Expr | None = None
    for c, t in terms:
        term: ir.Expr = ir.IntLit(abs(c), rng) if t is None else t
        if out is None:
            out = term if c >= 0 else ir.Unary("-", term, rng)
        else:
            out = ir.Binary("+" if c >= 0 else "-", out, term, rng)
    return out if out is not None else ir.IntLit(0, rng)
