"""GPU kernel bodies beyond plain statements: promoted copies in shared memory and registers,
barriers and atomics — the LLVM side of `codegen/kernel_body.py`, with the same conventions.

A parallel kernel's AST runs *phases* ``phase<k>(…)`` inside its tile loops: a barrier, or an
inner AST over the tile origins ``T0, T1, …``, which calls statements with their extended instance
``S0(i…, T…, X…)`` (iterators, tile origins, thread-mapped schedule values) and copies
``load_shared_A(T…, a…)`` / ``store_private_C(T_block…, X…, a…)``; plain ``sync<k>(T…)`` barriers
are accepted too. An access to a promoted array
goes to its copy: ``shared_A[a0 - off0(T)][a1 - off1(T)]`` (an ``addrspace(3)`` global) or
``private_C[(X0 - T0) / b0]…`` (an ``alloca``, which LLVM keeps in registers).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import islpy as isl
import llvmlite.ir as ir

from core_compiler.llvm import c_types as ct
from core_compiler.llvm.ast_lower import AstLowering, UserHandler
from core_compiler.llvm.isl_expr import lower_cond, lower_expr
from core_compiler.llvm.math_calls import declare
from core_compiler.llvm.statements import Redirect, Scope, linearize
from core_compiler.transform.gpu_mapping import Kernel
from core_compiler.transform.memory import Promotion

SHARED = 3  # NVPTX address spaces: 1 global, 3 shared, 4 constant, 5 local


# ------------------------------------------------------------------------------ primitives


def barrier(b: ir.IRBuilder) -> None:
    """``__syncthreads()``: every thread of the block waits here."""
    b.call(declare(b.module, "llvm.nvvm.barrier0", ir.VoidType(), []), [])


def shared_array(module: ir.Module, name: str, ctype: str, count: int) -> ir.Value:
    """A ``__shared__ T name[count]`` buffer: an ``addrspace(3)`` global, one per block."""
    ty = ir.ArrayType(ct.llvm_type(ctype), max(count, 1))
    g = ir.GlobalVariable(module, ty, name=name, addrspace=SHARED)
    g.linkage = "internal"
    g.initializer = ir.Constant(ty, ir.Undefined)
    g.align = 16
    return ct.opaque(g, SHARED)


def atomic_add(b: ir.IRBuilder, ptr: ir.Value, value: ct.CValue) -> ir.Value:
    """``atomicAdd(ptr, value)``: ``atomicrmw fadd`` for floating values, ``add`` for integers."""
    op = "fadd" if ct.is_float(value.ctype) else "add"
    return b.atomic_rmw(op, ptr, value.value, "monotonic")


# ------------------------------------------------------------------------------ promotions


@dataclass(frozen=True)
class LocalCopy:
    promotion: Promotion
    base: ir.Value  # the first element: addrspace(3) for shared, an alloca for registers


def local_copies(b: ir.IRBuilder, kernel: Kernel) -> dict[str, LocalCopy]:
    """The kernel's shared buffers and register arrays, by local name (``shared_A``)."""
    out = {}
    for p in kernel.promotions:
        count = math.prod(p.size)
        if p.place == "shared":
            base = shared_array(b.module, f"{kernel.name}.{p.local}", p.elem_type, count * kernel.buffers)
        else:
            with b.goto_entry_block():
                size = ir.Constant(ir.IntType(32), max(count, 1))
                base = ct.opaque(b.alloca(ct.llvm_type(p.elem_type), size=size, name=p.local))
        out[p.local] = LocalCopy(p, base)
    return out


@dataclass(frozen=True)
class KernelBody:
    """User-node handlers of one kernel; `handlers()` is the table `AstLowering` dispatches on."""

    kernel: Kernel
    copies: Mapping[str, LocalCopy]

    def handlers(self) -> dict[str, UserHandler]:
        table: dict[str, UserHandler] = {"sync*": self.sync, "load_*": self.copy, "store_*": self.copy}
        table.update(dict.fromkeys(self.kernel.statements, self.statement))
        return {**table, **dict.fromkeys(self.kernel.phases, self.phase)}

    def sync(self, low: AstLowering, name: str, args: list[isl.AstExpr], scope: Scope) -> None:
        barrier(low.builder)

    def phase(self, low: AstLowering, name: str, args: list[isl.AstExpr], scope: Scope) -> None:
        """``phase<k>(…)``: a barrier, or the phase's own AST with the tile origins ``T0, T1, …``
        taken from the call's arguments."""
        phase = self.kernel.phases[name]
        if phase.ast is None:
            barrier(low.builder)
            return
        tiles = {self.kernel.shape.names("T", k): low.expr(args[pos], scope) for k, pos in enumerate(phase.tiles)}
        inner = Scope({**scope.ints, **tiles}, scope.scalars, scope.arrays, scope.redirect)
        if phase.full is None or phase.full_when is None:
            low.lower(phase.ast, inner)
            return
        with low.builder.if_else(lower_cond(low.builder, phase.full_when, inner.ints, low.ity)) as (full, other):
            with full:
                low.lower(phase.full, inner)
            with other:
                low.lower(phase.ast, inner)

    def statement(self, low: AstLowering, name: str, args: list[isl.AstExpr], scope: Scope) -> None:
        stmt = low.statements.scop.statement(name)
        values = [low.expr(a, scope) for a in args]
        n, n_tiled = len(stmt.iterators), self.kernel.shape.n_tiled
        tiles, threads = values[n : n + n_tiled], values[n + n_tiled :]
        redirect = {c.promotion.array: self._redirect(low, c, tiles, threads, scope) for c in self.copies.values()}
        inner = Scope(scope.ints, scope.scalars, scope.arrays, {**scope.redirect, **redirect})
        if name in self.kernel.atomic:
            ptr, value = low.statements.reduction_update(low.builder, stmt, dict(zip(stmt.iterators, values[:n], strict=True)), inner)
            atomic_add(low.builder, ptr, value)
            return
        low.statements.assign(low.builder, stmt, dict(zip(stmt.iterators, values[:n], strict=True)), inner)

    def copy(self, low: AstLowering, name: str, args: list[isl.AstExpr], scope: Scope) -> None:
        direction, _, local = name.partition("_")
        c = self.copies[local]
        p, sh = c.promotion, self.kernel.shape
        values = [low.expr(a, scope) for a in args]
        rank = p.read.dim(isl.dim_type.out)
        elems = values[len(values) - rank :]
        if p.place == "shared":
            here = self._redirect(low, c, values[: sh.n_tiled], [], scope)(low.builder, elems)
        else:
            tiles, threads = values[: sh.n_block], values[sh.n_block : sh.n_block + sh.n_thread]
            here = self._redirect(low, c, tiles, threads, scope)(low.builder, elems)
        there = low.statements.element_at(low.builder, p.array, elems, scope)
        src, dst = (there, here) if direction == "load" else (here, there)
        ty = ct.llvm_type(p.elem_type)
        low.builder.store(low.builder.load(src, typ=ty), dst)

    def _redirect(self, low: AstLowering, c: LocalCopy, tiles: list[ir.Value], threads: list[ir.Value],
                  scope: Scope) -> Redirect:  # fmt: skip
        p, ity = c.promotion, low.ity
        sizes = [ir.Constant(ity, s) for s in p.size[1:]]
        ty = ct.llvm_type(p.elem_type)
        if p.place == "shared":
            names = {**scope.ints, **dict(zip(self.kernel.shape.names.seq("T", len(tiles)), tiles, strict=True))}

            def shared(b: ir.IRBuilder, idx: list[ir.Value]) -> ir.Value:
                local = [b.sub(i, lower_expr(b, o, names, ity)) for i, o in zip(idx, p.offset, strict=True)]
                extents = sizes
                if self.kernel.buffers > 1:  # a double-buffered copy: the buffer of its step's parity
                    last = self.kernel.shape.n_tiled - 1
                    step = b.sdiv(tiles[last], ir.Constant(ity, self.kernel.shape.tile[last]))
                    local, extents = [b.and_(step, ir.Constant(ity, 1)), *local], [ir.Constant(ity, p.size[0]), *sizes]
                return b.gep(c.base, [linearize(b, local, extents, ity)], inbounds=True, source_etype=ty)

            return shared
        blocks = [ir.Constant(ity, s) for s in self.kernel.shape.block]

        def private(b: ir.IRBuilder, idx: list[ir.Value]) -> ir.Value:
            local = [b.sdiv(b.sub(x, t), k) for x, t, k in zip(threads, tiles, blocks, strict=False)]
            return b.gep(c.base, [linearize(b, local, sizes, ity)], inbounds=True, source_etype=ty)

        return private
