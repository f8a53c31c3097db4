"""CUDA launches in host code: ``kernel<<<grid, block>>>(args)`` and the sizes they give.

clang (host-side) shows a launch as a call of the kernel whose first child after the callee is
the call ``__cudaPushCallConfiguration(dim3 grid, dim3 block, ...)``. Each ``dim3`` is a
constructor call (``dim3(16, 16)``, or the implicit one around ``256``) or a named variable
declared with one (``dim3 block(16, 16); k<<<g, block>>>``). A dimension is kept where it is a
constant, else None; the dimensions a ``dim3`` leaves out are 1::

    saxpy<<<(n + 255) / 256, 256>>>(n, a, x, y);   grid (None, 1, 1), block (256, 1, 1)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import clang.cindex as ci

from core_compiler.frontend import ir
from core_compiler.frontend.clang_parse import definitions, evaluate
from core_compiler.frontend.clang_parse import unwrap as _unwrap
from core_compiler.source import SourceRange

K = ci.CursorKind

_CONFIGURE = ("__cudaPushCallConfiguration", "cudaConfigureCall")
# The atomic read-modify-write functions of CUDA: an update of the element their first argument
# points to, made by one thread at a time.
ATOMICS = frozenset(
    {"atomicAdd", "atomicSub", "atomicMax", "atomicMin", "atomicExch", "atomicAnd", "atomicOr",
     "atomicXor", "atomicInc", "atomicDec", "atomicCAS"}
)

Dim3 = tuple[int | None, int | None, int | None]


ExprOf = Callable[[ci.Cursor], ir.Expr]


def launches(
    tu: ci.TranslationUnit, path: str, range_of: Callable[[ci.Cursor], SourceRange], expr_of: ExprOf
) -> dict[str, tuple[ir.Launch, ...]]:
    """Every launch in the functions of `path`, by kernel name."""
    out: dict[str, list[ir.Launch]] = {}
    for fn in definitions(tu, path):
        for call in _calls(fn):
            launch = _launch(call, fn, range_of, expr_of)
            if launch is not None:
                out.setdefault(launch.kernel, []).append(launch)
    return {k: tuple(v) for k, v in out.items()}


def _calls(cur: ci.Cursor) -> Iterator[ci.Cursor]:
    for child in cur.get_children():
        if child.kind == K.CALL_EXPR:
            yield child
        yield from _calls(child)


def _launch(call: ci.Cursor, fn: ci.Cursor, range_of: Callable[[ci.Cursor], SourceRange], expr_of: ExprOf) -> ir.Launch | None:
    children = list(call.get_children())
    config = next((c for c in children[1:2] if c.kind == K.CALL_EXPR and c.spelling in _CONFIGURE), None)
    if config is None:
        return None
    dims = [c for c in list(config.get_children())[1:3]]
    if len(dims) != 2:
        return None
    grid, block = _dim3(dims[0]), _dim3(dims[1])
    return ir.Launch(
        call.spelling, _constants(grid, fn), _constants(block, fn), range_of(call),
        _exprs(grid, call, range_of, expr_of), _exprs(block, call, range_of, expr_of), _template_args(children[0]),
    )  # fmt: skip


def _template_args(callee: ci.Cursor) -> tuple[int | None, ...]:
    """`kernel<32, 8>` launched: its template arguments, the integers as values (others None)."""
    while callee.kind == K.UNEXPOSED_EXPR and list(callee.get_children()):
        callee = next(iter(callee.get_children()))
    spec = callee.referenced if callee.kind == K.DECL_REF_EXPR else None
    if spec is None or spec.get_num_template_arguments() <= 0:
        return ()
    return tuple(
        spec.get_template_argument_value(i) if spec.get_template_argument_kind(i) == ci.TemplateArgumentKind.INTEGRAL else None
        for i in range(spec.get_num_template_arguments())
    )


def _constants(dims: list[ci.Cursor | int], fn: ci.Cursor) -> Dim3:
    values = [d if isinstance(d, int) else evaluate(d) for d in dims]
    out = [v if isinstance(v, int) else _local_constant(d, fn) for v, d in zip(values, dims, strict=True)]
    return (out[0], out[1], out[2])


_WRITES = frozenset({"=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^=", "++", "--"})


def _local_constant(dim: ci.Cursor | int, fn: ci.Cursor) -> int | None:
    """`128` of a launch's ``nblocks`` where `fn` declares ``unsigned nblocks = 128;`` and
    changes it nowhere (no assignment, ``++``/``--`` or ``&nblocks`` of that name): StarPU's
    host code sizes its grids so. Else None."""
    if isinstance(dim, int):
        return dim
    ref = _unwrap(dim)
    decl = ref.referenced if ref.kind == K.DECL_REF_EXPR else None
    if decl is None or decl.kind != K.VAR_DECL or decl.semantic_parent != fn:
        return None
    inits = [c for c in decl.get_children() if c.kind.is_expression()]
    value = evaluate(inits[-1]) if inits else None
    if not isinstance(value, int):
        return None
    tokens = list(fn.get_tokens())
    for k, t in enumerate(tokens[1:-1], start=1):
        if t.spelling != decl.spelling or t.kind != ci.TokenKind.IDENTIFIER or t.location.offset == decl.location.offset:
            continue
        if tokens[k + 1].spelling in _WRITES or tokens[k - 1].spelling in ("++", "--", "&"):
            return None
    return value


def _exprs(dims: list[ci.Cursor | int], at: ci.Cursor, range_of: Callable[[ci.Cursor], SourceRange],
           expr_of: ExprOf) -> tuple[ir.Expr, ...]:  # fmt: skip
    rng = range_of(at)
    return tuple(ir.IntLit(d, rng) if isinstance(d, int) else expr_of(d) for d in dims)


def _dim3(cur: ci.Cursor) -> list[ci.Cursor | int]:
    """A ``dim3`` argument's three sizes: the expression of each, 1 where it is left out."""
    cur = _unwrap(cur)
    if cur.kind == K.DECL_REF_EXPR and cur.referenced is not None and "dim3" not in cur.referenced.type.spelling:
        return [cur, 1, 1]  # `unsigned nblocks = 128; k<<<nblocks, ...>>>`: a size along x
    if cur.kind == K.DECL_REF_EXPR and cur.referenced is not None:
        init = [c for c in cur.referenced.get_children() if c.kind == K.CALL_EXPR]
        return _dim3(init[0]) if init else [cur, cur, cur]
    if cur.kind != K.CALL_EXPR or cur.spelling != "dim3":
        return [cur, 1, 1]
    args = [c for c in cur.get_children() if c.kind != K.TYPE_REF]
    if len(args) == 1 and _unwrap(args[0]).kind in (K.DECL_REF_EXPR, K.CALL_EXPR):
        inner = _unwrap(args[0])
        if inner.spelling == "dim3" or (inner.referenced is not None and "dim3" in inner.type.spelling):
            return _dim3(inner)  # a copy of another dim3
    sizes: list[ci.Cursor | int] = [1 if a.extent.start.line == 0 else a for a in args[:3]]  # line 0: a default
    return sizes + [1] * (3 - len(sizes))
