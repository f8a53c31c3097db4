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
from core_compiler.frontend.clang_parse import evaluate
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


def launches(
    tu: ci.TranslationUnit, path: str, range_of: Callable[[ci.Cursor], SourceRange]
) -> dict[str, tuple[ir.Launch, ...]]:
    """Every launch in the functions of `path`, by kernel name."""
    out: dict[str, list[ir.Launch]] = {}
    for fn in tu.cursor.get_children():
        if fn.location.file is None or fn.location.file.name != path or not fn.is_definition():
            continue
        for call in _calls(fn):
            launch = _launch(call, range_of)
            if launch is not None:
                out.setdefault(launch.kernel, []).append(launch)
    return {k: tuple(v) for k, v in out.items()}


def _calls(cur: ci.Cursor) -> Iterator[ci.Cursor]:
    for child in cur.get_children():
        if child.kind == K.CALL_EXPR:
            yield child
        yield from _calls(child)


def _launch(call: ci.Cursor, range_of: Callable[[ci.Cursor], SourceRange]) -> ir.Launch | None:
    children = list(call.get_children())
    config = next((c for c in children[1:2] if c.kind == K.CALL_EXPR and c.spelling in _CONFIGURE), None)
    if config is None:
        return None
    dims = [c for c in list(config.get_children())[1:3]]
    if len(dims) != 2:
        return None
    return ir.Launch(call.spelling, _dim3(dims[0]), _dim3(dims[1]), range_of(call))


def _dim3(cur: ci.Cursor) -> Dim3:
    """A ``dim3`` argument's three sizes (None where not a constant)."""
    cur = _unwrap(cur)
    if cur.kind == K.DECL_REF_EXPR and cur.referenced is not None:
        init = [c for c in cur.referenced.get_children() if c.kind == K.CALL_EXPR]
        return _dim3(init[0]) if init else (None, None, None)
    if cur.kind != K.CALL_EXPR or cur.spelling != "dim3":
        value = evaluate(cur)
        return (value if isinstance(value, int) else None, 1, 1)
    args = [c for c in cur.get_children() if c.kind != K.TYPE_REF]
    if len(args) == 1 and _unwrap(args[0]).kind in (K.DECL_REF_EXPR, K.CALL_EXPR):
        inner = _unwrap(args[0])
        if inner.spelling == "dim3" or (inner.referenced is not None and "dim3" in inner.type.spelling):
            return _dim3(inner)  # a copy of another dim3
    sizes: list[int | None] = []
    for arg in args[:3]:
        if arg.extent.start.line == 0:  # a default argument: the dimension was left out
            sizes.append(1)
            continue
        value = evaluate(arg)
        sizes.append(value if isinstance(value, int) else None)
    sizes += [1] * (3 - len(sizes))
    return (sizes[0], sizes[1], sizes[2])
