"""Kernel bodies for OpenCL and CUDA: statements, shared/register copies and barriers.

A parallel kernel's AST calls statements with their extended instance
``S0(i…, T…, X…)`` (iterators, tile origins, thread-mapped schedule values), the copies
``load_shared_A(T…, a…)``, ``store_private_C(T_block…, X…, a…)`` and barriers ``sync99(T…)``.
Accesses to a promoted array go to its local copy: ``shared_A[a0 - off0(T)][a1 - off1(T)]`` or
``private_C[(X0 - T0 - t0) / 16][(X1 - T1 - t1) / 32]`` (the thread's iteration number in its share of
the tile).
A statement's line is tagged with it (`core_compiler/source_map.py`): `body` returns tagged text,
which `opencl.py` and `cuda.py` untag once the file is whole.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import islpy as isl

from core_compiler.codegen.ast_print import CPrinter, call_parts, expr_c
from core_compiler.codegen.statements import OPENCL_MATH, StatementPrinter, affine_c
from core_compiler.codegen.vectors import (
    VECTOR_TYPES,
    NotVectorizable,
    ScalarRun,
    VectorRun,
    access_kind,
    check_body,
    check_expression,
    index_steps,
    lane_coefficient,
    mentions,
    run_text,
)
from core_compiler.scop.affine import isl_name
from core_compiler.scop.dependences import reduction_op
from core_compiler.scop.model import Scop, Statement
from core_compiler.scop.region import AccessInfo
from core_compiler.source_map import tag
from core_compiler.transform.gpu_mapping import Kernel, Phase
from core_compiler.transform.memory import Promotion


@dataclass(frozen=True)
class Dialect:
    barrier: str
    shared: str  # qualifier of a block-local array
    atomic_add: str  # format with `ctype`: the function adding to a global element atomically
    block_id: str  # format with `dim` (0 = x) and `axis` ("x", "y", "z")
    thread_id: str
    calls: Mapping[str, str] | None = None  # math functions by another name
    vectors: bool = False  # `vloadN`/`vstoreN` along a thread's run of points (`codegen/vectors.py`)
    async_copies: bool = False  # double-buffered shared loads as `HX_ASYNC_COPY` (`ASYNC_COPIES`)


OPENCL = Dialect("barrier(CLK_LOCAL_MEM_FENCE);", "__local", "hx_atomic_add_{ctype}", "get_group_id({dim})",
                 "get_local_id({dim})", OPENCL_MATH, vectors=True)  # fmt: skip
CUDA = Dialect("__syncthreads();", "__shared__", "atomicAdd", "blockIdx.{axis}", "threadIdx.{axis}", async_copies=True)

# A double-buffered kernel's loads of the next tile (`gpu_mapping._buffers`) on CUDA: from sm_80
# on, `cp.async` copies global to shared memory without going through registers, so the copy
# lands while the thread computes the current tile; the barrier ending the step waits for it.
# Elsewhere a plain assignment. `HX_EMULATE_ASYNC`: the CPU shim of the tests, which lands each
# copy only at the wait.
ASYNC_COPIES = """#ifdef __CUDACC__
#include <cuda_pipeline.h>
#endif
#ifndef HX_ASYNC_COPY
#if (defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800) || defined(HX_EMULATE_ASYNC)
#define HX_ASYNC_COPY(dst, src) __pipeline_memcpy_async(&(dst), &(src), sizeof(dst))
#define HX_ASYNC_WAIT() (__pipeline_commit(), __pipeline_wait_prior(0))
#else
#define HX_ASYNC_COPY(dst, src) ((dst) = (src))
#define HX_ASYNC_WAIT()
#endif
#endif
"""
ASYNC_SIZES = (4, 8, 16)  # the bytes `cp.async` copies at once

# OpenCL has no floating-point atomic addition: compare-and-swap on the bits (64-bit atomics are
# the cl_khr_int64_base_atomics extension, which PoCL and every GPU driver provide).
OPENCL_ATOMICS = """#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
inline void hx_atomic_add_double(__global double *p, double v) {
  __global volatile long *q = (__global volatile long *)p;
  long old = *q, seen;
  while ((seen = atom_cmpxchg(q, old, as_long(as_double(old) + v))) != old) old = seen;
}
inline void hx_atomic_add_float(__global float *p, float v) {
  __global volatile int *q = (__global volatile int *)p;
  int old = *q, seen;
  while ((seen = atomic_cmpxchg(q, old, as_int(as_float(old) + v))) != old) old = seen;
}
inline void hx_atomic_add_int(__global int *p, int v) { atomic_add(p, v); }
"""


class KernelPrinter(StatementPrinter):
    def __init__(self, scop: Scop, kernel: Kernel, dialect: Dialect) -> None:
        super().__init__(scop, "flat", calls=dialect.calls)
        self.kernel = kernel
        self.dialect = dialect
        self.promoted = {p.array: p for p in kernel.promotions}
        self._tiles: list[str] = []
        self._threads: list[str] = []
        self.vector_runs: list[VectorRun] = []  # what `vector_for` vectorized, and what it left scalar
        self.scalar_runs: list[ScalarRun] = []
        self._lane: _Lane | None = None  # while a vector run's body prints

    def body(self, signature: str) -> str:
        """The kernel: ids (the innermost mapped member is x), local copies, then its AST."""
        k, d, nm = self.kernel, self.dialect, self.kernel.shape.names
        lines = [signature, "{"]
        for b in range(k.n_block_dims):
            dim = k.n_thread_dims - 1 - b
            lines.append(f"  int {nm('b', b)} = {d.block_id.format(dim=dim, axis='xyz'[dim])} + {nm('o', b)};")
        for t in range(k.n_thread_dims):
            dim = k.n_thread_dims - 1 - t
            lines.append(f"  int {nm('t', t)} = {d.thread_id.format(dim=dim, axis='xyz'[dim])};")
        lines += [f"  {decl}" for decl in self.declarations()]
        lines += self.printer().print(k.ast, 1)
        return "\n".join([*lines, "}"]) + "\n"

    def printer(self) -> CPrinter:
        return _KernelAst(self)

    def declarations(self) -> list[str]:
        out = isl_aliases(self.scop)
        for p in self.kernel.promotions:
            dims = "".join(f"[{s}]" for s in p.size)
            qual = f"{self.dialect.shared} " if p.place == "shared" else ""
            buffers = f"[{self.kernel.buffers}]" if p.place == "shared" and self.kernel.buffers > 1 else ""
            out.append(f"{qual}{p.elem_type} {p.local}{buffers}{dims};")
        return out

    def user(self, expr: isl.AstExpr) -> list[str]:
        name, args = call_parts(expr)
        texts = [f"({expr_c(a)})" for a in args]
        if name in self.kernel.phases:
            return self.phase(self.kernel.phases[name], texts)
        if name.startswith(("load_", "store_")):
            return [self.copy(name, texts)]
        stmt = self.scop.statement(name)
        if self._lane is not None:
            self._lane.enter(stmt, args[: len(stmt.iterators)])
        n = len(stmt.iterators)
        sh = self.kernel.shape
        self._tiles = texts[n : n + sh.n_tiled]
        self._threads = texts[n + sh.n_tiled :]
        subst = dict(zip(stmt.iterators, texts[:n], strict=True))
        return [tag(self.assign(stmt, subst), self.scop.name, stmt.name)]

    def assign(self, stmt: Statement, subst: dict[str, str]) -> str:
        if self._lane is not None:
            return self.vector_assign(stmt, subst, self._lane)
        if stmt.name not in self.kernel.atomic:
            return super().assign(stmt, subst)
        node = stmt.info.assignment
        found = reduction_op(node)
        assert found is not None and found[0] == "+", f"{stmt.name} is not an addition"
        acc = self._accesses[stmt.name]
        value = self.expr(found[1], subst, acc)
        if node.op == "-=":
            value = f"-({value})"
        ctype = self.arrays[stmt.writes[0].array].decl.elem_type.split()[-1]
        return f"{self.dialect.atomic_add.format(ctype=ctype)}(&{self.expr(node.target, subst, acc)}, {value});"

    def phase(self, phase: Phase, args: list[str]) -> list[str]:
        if phase.ast is None:
            return [*(["HX_ASYNC_WAIT();"] if self._async() else []), self.dialect.barrier]
        tiles = [f"  int {self.kernel.shape.names('T', k)} = {args[pos]};" for k, pos in enumerate(phase.tiles)]
        body = self.printer().print(phase.ast, 1)
        if phase.full is not None and phase.full_when is not None:
            full = self.printer().print(phase.full, 2)
            body = [f"  if ({expr_c(phase.full_when)}) {{", *full, "  } else {", *["  " + line for line in body], "  }"]
        return ["{", *tiles, *body, "}"]

    def access(self, info: AccessInfo, subst: dict[str, str]) -> str:
        text = self.scalar_access(info, subst)
        if self._lane is None:
            return text
        return self._lane.read(info, text, self.element_type(info.array))

    def scalar_access(self, info: AccessInfo, subst: dict[str, str]) -> str:
        p = self.promoted.get(info.array)
        if p is None:
            return super().access(info, subst)
        idx = [affine_c(a, subst) for a in info.indices]
        return self.local(p, idx, self._tiles, self._threads)

    def element_type(self, array: str) -> str:
        return self.arrays[array].decl.elem_type.split()[-1]

    # ------------------------------------------------------------------ vector runs

    def vector_for(self, node: isl.AstNode, depth: int) -> list[str] | None:
        """A thread's run of contiguous points as a vector loop and a scalar remainder
        (`codegen/vectors.py`); None: print it as it is."""
        k, sh = self.kernel, self.kernel.shape
        if not self.dialect.vectors or sh.run_length <= 1 or self._lane is not None:
            return None
        lane_thread = sh.names("t", sh.n_thread - 1)
        if expr_c(node.for_get_inc()) != "1" or not mentions(node.for_get_init(), lane_thread):
            return None
        it, width, body = node.for_get_iterator().id_get_id().get_name(), sh.vector, node.for_get_body()
        try:
            if any(p.place == "register" for p in k.promotions):
                raise NotVectorizable("its sums are in registers")
            if k.atomic:
                raise NotVectorizable("it adds atomically")
            check_body(body, it)
            self._lane = _Lane(it, width, self.scalar_types)
            vector = self.printer().print(body, depth + 2)
            lane = self._lane
        except NotVectorizable as e:
            self.scalar_runs.append(ScalarRun(k.name, width, str(e)))
            return None
        finally:
            self._lane = None
        self.vector_runs.append(lane.run(k.name))
        scalar = self.printer().print(body, depth + 2)
        pad, cond = "  " * depth, expr_c(node.for_get_cond())
        last = re.sub(rf"\b{re.escape(it)}\b", f"({it} + {width - 1})", cond)
        return [f"{pad}{{", f"{pad}  int {it} = {expr_c(node.for_get_init())};",
                f"{pad}  for (; {last}; {it} += {width}) {{", *vector, f"{pad}  }}",
                f"{pad}  for (; {cond}; {it}++) {{", *scalar, f"{pad}  }}", f"{pad}}}"]  # fmt: skip

    @property
    def scalar_types(self) -> dict[str, str]:
        return {n: t.split()[-1] for n, t in self.scop.region.readonly_scalars}

    def vector_assign(self, stmt: Statement, subst: dict[str, str], lane: _Lane) -> str:
        node = stmt.info.assignment
        acc = self._accesses[stmt.name]
        info = acc.get(node.target)
        if info is None or node.op not in ("=", "+=", "-=", "*=", "/="):
            raise NotVectorizable(f"`{node.target} {node.op}` is not an array update")
        lane.vector_type = self.element_type(info.array)
        if lane.vector_type not in VECTOR_TYPES:
            raise NotVectorizable(f"{info.array} holds {lane.vector_type}, not double or float")
        check_expression(node.value, lane.moving(), lane.vector_type, self.scalar_types)
        target = self.scalar_access(info, subst)
        lane.write(info, node.op != "=")
        value = self.expr(node.value, subst, acc)
        w = lane.width
        if node.op != "=":
            value = f"vload{w}(0, &{target}) {node.op[0]} ({value})"
        return f"vstore{w}({value}, 0, &{target});"

    def local(self, p: Promotion, idx: list[str], tiles: list[str], threads: list[str]) -> str:
        if p.place == "shared":
            offs = [_substitute(expr_c(o), tiles, self.kernel.shape.names.prefixes["T"]) for o in p.offset]
            return p.local + self._buffer(tiles) + "".join(f"[{i} - ({o})]" for i, o in zip(idx, offs, strict=True))
        return p.local + "".join(self._register_index(k, x, t) for k, (x, t) in enumerate(zip(threads, tiles, strict=False)))

    def _register_index(self, k: int, x: str, tile_origin: str) -> str:
        """The thread's point `x` along band member `k`: ``(x - T - t) / b``, which is a constant
        once the loop over its points is unrolled (`gpu_mapping._unrolled`), when the tile is a
        multiple of the block; else ``(x - T) / b``."""
        sh = self.kernel.shape
        b = sh.block[k]
        if sh.tile[k] % b == 0:
            return f"[(({x}) - ({tile_origin}) - {sh.names('t', k)}) / {b}]"
        return f"[(({x}) - ({tile_origin})) / {b}]"

    def _buffer(self, tiles: list[str]) -> str:
        """A double-buffered copy's buffer for the tile at `tiles`: the parity of its step."""
        k = self.kernel
        if k.buffers == 1:
            return ""
        last = k.shape.n_tiled - 1
        return f"[(({tiles[last]}) / {k.shape.tile[last]}) & 1]"

    def _async(self) -> bool:
        return self.dialect.async_copies and self.kernel.buffers > 1

    def copy(self, name: str, args: list[str]) -> str:
        direction, _, local = name.partition("_")
        p = next(q for q in self.kernel.promotions if q.local == local)
        sh = self.kernel.shape
        rank = p.read.dim(isl.dim_type.out)
        elems = args[len(args) - rank :]
        if p.place == "shared":
            here = self.local(p, elems, args[: sh.n_tiled], [])
        else:
            here = self.local(p, elems, args[: sh.n_block], args[sh.n_block : sh.n_block + sh.n_thread])
        there = self.element(p.array, elems)
        if direction == "load" and p.place == "shared" and self._async() and p.elem_bytes in ASYNC_SIZES:
            return f"HX_ASYNC_COPY({here}, {there});"
        return f"{here} = {there};" if direction == "load" else f"{there} = {here};"


class _KernelAst(CPrinter):
    """The kernel's AST printer, which asks its `KernelPrinter` for vector runs first."""

    def __init__(self, owner: KernelPrinter) -> None:
        super().__init__(owner.user)
        self.owner = owner

    def _for(self, node: isl.AstNode, depth: int) -> list[str]:
        lines = self.owner.vector_for(node, depth)
        return lines if lines is not None else super()._for(node, depth)


class _Lane:
    """A vector run being printed: its loop counter, width, and what each statement's accesses do
    along it; raises `NotVectorizable` at the first access that is neither contiguous nor uniform."""

    def __init__(self, counter: str, width: int, scalar_types: dict[str, str]) -> None:
        self.counter, self.width, self.scalar_types = counter, width, scalar_types
        self.vector_type = ""
        self.steps: dict[str, int] = {}
        self.loop = ""
        self.statement = ""
        self.reads: dict[str, None] = {}
        self.writes: dict[str, None] = {}

    def enter(self, stmt: Statement, args: list[isl.AstExpr]) -> None:
        steps = {it: lane_coefficient(a, self.counter) for it, a in zip(stmt.iterators, args, strict=True)}
        if any(s is None for s in steps.values()):
            raise NotVectorizable(f"{stmt.name}'s loop counters are not affine in the point")
        self.steps = {it: s for it, s in steps.items() if s is not None}
        self.statement = self.statement or stmt.name
        self.loop = self.loop or next((it for it, s in self.steps.items() if s == 1), self.counter)

    def moving(self) -> set[str]:
        return {it for it, s in self.steps.items() if s}

    def kind(self, info: AccessInfo) -> str:
        return access_kind(index_steps(info.indices, self.steps))

    def read(self, info: AccessInfo, text: str, elem_type: str) -> str:
        kind = self.kind(info)
        if kind == "uniform":
            if self.vector_type == "float" and elem_type == "double":
                raise NotVectorizable(f"{info.array} holds double, the run float")
            return text
        if kind != "contiguous":
            raise NotVectorizable(f"the reads of {info.array} are not contiguous along the run")
        if elem_type != self.vector_type:
            raise NotVectorizable(f"{info.array} holds {elem_type}, the run {self.vector_type}")
        self.reads[run_text(info.node, info.indices[-1], self.loop, self.width)] = None
        return f"vload{self.width}(0, &{text})"

    def write(self, info: AccessInfo, updated: bool) -> None:
        """The target of ``=`` (or of ``+=``…, `updated`: read too)."""
        if self.kind(info) != "contiguous":
            raise NotVectorizable(f"the writes of {info.array} are not contiguous along the run")
        if updated:
            self.reads[run_text(info.node, info.indices[-1], self.loop, self.width)] = None
        self.writes[run_text(info.node, info.indices[-1], self.loop, self.width)] = None

    def run(self, kernel: str) -> VectorRun:
        return VectorRun(kernel, self.width, self.loop, tuple(self.reads), tuple(self.writes), self.statement)


def isl_aliases(scop: Scop) -> list[str]:
    """isl renames parameters that are isl keywords (`min` -> `min_`); its expressions use that name."""
    return [f"int {isl_name(p)} = {p};" for p in scop.params if isl_name(p) != p]


def _substitute(text: str, tiles: list[str], prefix: str) -> str:
    """`text` with the tile origins ``T0, T1, …`` (spelled with `prefix`) replaced by `tiles`."""
    return re.sub(rf"\b{re.escape(prefix)}(\d+)\b", lambda m: tiles[int(m.group(1))], text)
