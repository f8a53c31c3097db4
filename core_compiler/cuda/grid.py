"""A `__global__` kernel as a loop nest over its grid, modeled like C loops.

A kernel is its body run by every thread of every block. Written as loops::

    __global__ void saxpy(int n, float a, float *x, float *y) {     for (blockIdx.x < gridDim.x)
      int i = blockIdx.x * blockDim.x + threadIdx.x;                  for (threadIdx.x < 256)
      if (i < n) y[i] = a * x[i] + y[i];                                int i = ...; if (i < n) ...
    }

its statements, domains and accesses are those of a modeled loop nest (`scop/region.py`, `scop/
model.py`), over the block ids then the thread ids (x innermost). The loop order is not CUDA's
(threads run at once, not one after another), so only the model is used, never its dependences:
`races.py` judges pairs of threads itself. What the rewrite changes:

- ``blockDim`` is the block size of the kernel's launches in the file (all constant dimensions),
  else a size taken as an assumption (`AssumedBlockSize`); ``gridDim`` dimensions are sizes
  (parameters), so the checks hold for every grid;
- a ``__shared__`` array is declared inside the block loops: one per block;
- ``__syncthreads()`` is a statement of its own (`BARRIER`), ``atomicAdd(&a[i], v)`` the update
  ``a[i] += v`` marked atomic;
- a loop over a block size becomes canonical once the size is known: ``k += blockDim.x`` is a
  constant step, and a counter that halves or doubles from a constant (``s >>= 1``) is unrolled.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import islpy as isl

from core_compiler.cuda.rows import rows
from core_compiler.frontend import induction, ir
from core_compiler.remarks import Remark, analysis, missed
from core_compiler.scop.affine import hoist_choice
from core_compiler.scop.detect import assumption_remarks, detect_scops
from core_compiler.scop.model import Scop, build_model
from core_compiler.scop.region import RegionInfo
from core_compiler.source import SourceRange

PASS = "cuda-kernel"
AXES = ("z", "y", "x")  # outermost first
BARRIER = "hx_sync"  # the variable a `__syncthreads()` statement sets in the model
MAX_UNROLL = 64
_INT = ir.Scalar("int")


@dataclass(frozen=True)
class GridShape:
    block: dict[str, int]  # threads per block along x, y, z
    block_axes: tuple[str, ...]  # the axes of blockIdx modeled, outermost first
    thread_axes: tuple[str, ...]  # the axes of threadIdx modeled, outermost first
    launch: ir.Launch | None  # the launch that gave the block size; None where it is assumed
    grid: dict[str, int] = field(default_factory=dict)  # gridDim fixed by the launches (grid-stride loops); else any
    # a grid-stride loop `i < n` over a run-time grid: the axis's blocks are those that cover `n`
    covered: dict[str, ir.Expr] = field(default_factory=dict)
    uncovered: str = ""  # why a grid-stride loop over a run-time grid is not modeled so

    def grid_dim(self, axis: str, rng: SourceRange) -> ir.Expr:
        """``gridDim.<axis>``: the constant of the launches, or the size it is."""
        if axis in self.grid:
            return ir.IntLit(self.grid[axis], rng)
        return ir.Var(f"gridDim.{axis}", rng, _INT)

    def block_loop(self, axis: str, body: tuple[ir.Stmt, ...], rng: SourceRange) -> ir.For:
        """``for (blockIdx.<axis> = 0; blockIdx.<axis> < gridDim.<axis>; ...)``; over a covered
        axis the blocks whose first thread is below the grid-stride loop's bound."""
        var = f"blockIdx.{axis}"
        if axis not in self.covered:
            return _loop(var, self.grid_dim(axis, rng), body, rng)
        first = ir.Binary("*", ir.Var(var, rng, _INT), ir.IntLit(self.block[axis], rng), rng)
        return ir.For(var, ir.IntLit(0, rng), ir.Binary("<", first, self.covered[axis], rng), 1, body, rng, rng, True)

    @property
    def iterators(self) -> tuple[str, ...]:
        return (*(f"blockIdx.{a}" for a in self.block_axes), *(f"threadIdx.{a}" for a in self.thread_axes))

    @property
    def size_text(self) -> str:
        used = [a for a in ("x", "y", "z") if self.block[a] > 1 or a in self.thread_axes]
        return " x ".join(str(self.block[a]) for a in used) or "1"


@dataclass(frozen=True, eq=False)
class KernelModel:
    function: ir.Function  # the kernel as written
    nest: ir.Function  # the kernel as loops over its grid
    shape: GridShape
    scop: Scop
    atomic: frozenset[SourceRange]  # the ranges of the statements that are atomic updates
    shared: frozenset[str]  # the `__shared__` arrays

    @property
    def n_block(self) -> int:
        return len(self.shape.block_axes)

    @property
    def n_grid(self) -> int:
        return len(self.shape.iterators)

    def thread_private(self, array: str) -> bool:
        """Whether `array` is a local of the kernel's body (not `__shared__`): declared inside the
        thread loops, expanded over them, so no two threads ever touch one element of it."""
        decl = next((d for d in self.scop.arrays if d.name == array), None)
        return decl is not None and decl.kind.startswith("local") and array not in self.shared

    def is_barrier(self, stmt_name: str) -> bool:
        st = self.scop.statement(stmt_name)
        return st.info.call is None and isinstance(st.info.assignment.target, ir.Var) and st.info.assignment.target.name == BARRIER


def model_kernel(fn: ir.Function, max_operations: int) -> tuple[KernelModel | None, list[Remark]]:
    """The kernel's model, or None with the remarks that say why it is not modeled."""
    shape, remarks = grid_shape(fn)
    nest, atomic, notes = kernel_nest(fn, shape)
    # `int i = blockIdx.x * blockDim.x + threadIdx.x;` is every kernel's first line: no remark for it
    remarks += [analysis(PASS, n.name, n.message, n.range, fn.name) for n in notes if n.name != "InductionVariable"]
    detection = detect_scops(nest)
    region = _whole(detection.regions, nest)
    if region is None or not region.statements:
        problems = [r for r in detection.remarks if r.kind.name == "MISSED"]
        why = problems[0].message if problems else "its body is not a loop nest hexplore models"
        if region is not None:  # clang drops a statement it cannot read (a type from a missing header)
            why = "no statement of its body reads or writes memory as hexplore reads it"
        if not fn.body:  # not one where clang dropped what it could not read, leaving declarations
            why = "its body is empty: it does nothing to check"
        remarks += problems
        remarks.append(missed(PASS, "CudaKernelNotModeled",
                              f"the kernel `{fn.name}` is not modeled, so it is not checked for races: {why}",
                              fn.name_range, fn.name))  # fmt: skip
        return None, remarks
    ctx = isl.Context()
    ctx.set_max_operations(max_operations)
    scop = build_model(fn.name, 0, region, ctx)
    remarks += assumption_remarks(region, fn.name)
    shared = frozenset(s.name for s in _all_statements(fn.body) if isinstance(s, ir.Decl) and s.shared)
    return KernelModel(fn, nest, shape, scop, atomic, shared), remarks


def _whole(regions: tuple[RegionInfo, ...], nest: ir.Function) -> RegionInfo | None:
    """The region that is the whole grid nest, if detection found it."""
    outer = nest.body[-1]
    return next((r for r in regions if any(s is outer for s in r.stmts)), None)


# ------------------------------------------------------------------------------ the block size

_DEFAULT_BLOCK = {1: {"x": 256, "y": 1, "z": 1}, 2: {"x": 16, "y": 16, "z": 1}, 3: {"x": 8, "y": 8, "z": 4}}


def grid_shape(fn: ir.Function) -> tuple[GridShape, list[Remark]]:
    """The block size from the kernel's launches (the first whose block is all constants), else
    a typical one for the thread axes it uses, said in a remark."""
    used = _builtins(fn.body)
    known = [la for la in fn.launches if all(d is not None for d in la.block)]
    remarks: list[Remark] = []
    if known:
        launch: ir.Launch | None = known[0]
        block = {a: d or 1 for a, d in zip(("x", "y", "z"), known[0].block, strict=True)}
        others = sorted({la.block for la in known} - {known[0].block})
        if others:
            remarks.append(analysis(PASS, "AssumedBlockSize",
                f"`{fn.name}` is launched with several block sizes; hexplore checks it for "
                f"{_dims(known[0].block)} threads (the launch on line {known[0].range.line}), not for "
                + ", ".join(_dims(o) for o in others), fn.name_range, fn.name))  # fmt: skip
    else:
        launch = None
        block, how = _assumed_block(fn, used)
        remarks.append(analysis(PASS, "AssumedBlockSize",
            f"no launch of `{fn.name}` in this file gives its block size as constants, so hexplore "
            f"checks it for blocks of {_dims(tuple(block.values()))} threads ({how}); launch it with "
            "constant sizes in this file (`kernel<<<grid, 256>>>`) to check the size you use",
            fn.name_range, fn.name, block=[block["x"], block["y"], block["z"]]))  # fmt: skip
    grid = dict(zip(("x", "y", "z"), launch.grid if launch else (None, None, None), strict=True))
    threads = tuple(a for a in AXES if f"threadIdx.{a}" in used or block[a] > 1)
    blocks = tuple(a for a in AXES if {f"blockIdx.{a}", f"gridDim.{a}"} & used or (grid[a] or 1) > 1)
    fixed = _stride_grid(fn)
    covered, why = _covered(fn, fixed, block)
    return GridShape(block, blocks, threads or ("x",), launch, fixed, covered, why), remarks


def _stride_grid(fn: ir.Function) -> dict[str, int]:
    """The grid sizes a grid-stride loop (``i += blockDim.x * gridDim.x``) reads, where every
    launch of the kernel in the file gives the same constant: its step is then a constant, and the
    kernel is modeled for that grid. (Over any grid the step is a size times a loop count: not
    affine.)"""
    values = _top_level_values(fn.body)
    steps = [_through(s.header.value, values) for s in _all_statements(fn.body) if isinstance(s, ir.OtherLoop) and s.header]
    read = {e.name[-1] for v in steps for e in ir.walk_expr(v) if isinstance(e, ir.Var) and e.name.startswith("gridDim.")}
    out = {}
    for axis in read:
        sizes = {la.grid["xyz".index(axis)] for la in fn.launches}
        if len(sizes) == 1 and None not in sizes:
            out[axis] = sizes.pop()
    return out  # type: ignore[return-value]


def _covered(fn: ir.Function, fixed: dict[str, int], block: dict[str, int]) -> tuple[dict[str, ir.Expr], str]:
    """The axes and bounds of the grid-stride loops over a run-time grid, where the kernel is
    made of them, sequential loops around them and declarations::

        int idx = blockIdx.x * blockDim.x + threadIdx.x;
        for (int z = 0; z < nz; z++)                               (any loop around it)
          for (int x = K + idx; x < n; x += blockDim.x * gridDim.x)
            body                                                   (no `__syncthreads()`)

    For any positive grid each `x` in [K, n) is one thread's, once (the thread `x - K` modulo the
    number of threads); so the loop is modeled as one iteration per thread over the blocks that
    cover [K, n) (`blockIdx.x * blockDim.x < n - K`). That is the kernel on a grid that large,
    where each thread runs the loop at most once: a race found between two `x` is one on that
    grid; on a smaller grid one thread may run both, one after the other, which orders them; and
    none found means none for any grid, since two threads of any grid run two different `x`. It
    holds where, per axis, one grid-stride loop reads the thread's index (nothing else does:
    `if (idx == 0)` would be a thread the model does not have), its start and bound are the same
    for every thread, and every store and call is inside the grid-stride loops of every such
    axis (a store outside them is run by every thread of the real grid, which the model does not
    have). Else {} and why not (or "" where the kernel has no such loop)."""
    values = _top_level_values(fn.body)
    if _calls(fn.body, "__syncthreads") or any(isinstance(s, ir.Decl) and s.shared for s in _all_statements(fn.body)):
        return {}, "the kernel also synchronises its threads or shares memory between them"
    loops = [s for s in _all_statements(fn.body) if _stride_axis(s, values) is not None]
    by_axis = {_stride_axis(s, values): s for s in loops}
    if not loops or set(by_axis) & set(fixed):
        return {}, ""
    if len(by_axis) != len(loops):
        return {}, "more than one grid-stride loop runs along one axis"
    out: dict[str, ir.Expr] = {}
    for axis, loop in by_axis.items():
        assert axis is not None and isinstance(loop, ir.OtherLoop) and loop.header is not None
        covered = _covered_bound(loop.header, axis, values, block, _invariant_names(fn))
        if covered is None:
            return {}, f"the loop over `{loop.header.var}` does not start at the thread's index (plus the same value for every thread) or its bound changes"
        out[axis] = covered
    if not _ids_only_in(fn.body, values, loops, set(out)):
        return {}, "the kernel reads the thread's index outside the grid-stride loop too"
    if not _stores_inside(fn.body, loops, len(out)):
        return {}, "the kernel stores to memory or calls a function outside the grid-stride loop too"
    return out, ""


def _covered_bound(h: ir.LoopHeader, axis: str, values: dict[str, ir.Expr], block: dict[str, int],
                   invariant: set[str]) -> ir.Expr | None:  # fmt: skip
    """`n - K` of ``for (x = K + idx; x < n; ...)``, where `K` and `n` are the same for every
    thread, else None."""
    bound = _upper_bound(h.cond, h.var)
    offset = _thread_offset(_through(h.init, values), axis)
    if bound is None or offset is None:
        return None
    sizes = lambda e: ir.map_expr(e, lambda x: _block_size(x, block))  # noqa: E731
    bound, offset = sizes(_through(bound, values)), sizes(offset)
    if not _reads_only(bound, invariant) or not _reads_only(offset, invariant):
        return None
    return ir.Binary("-", bound, offset, h.cond.range)


def _block_size(e: ir.Expr, block: dict[str, int]) -> ir.Expr:
    """``blockDim.x`` as the block size."""
    return ir.IntLit(block[e.name[-1]], e.range) if isinstance(e, ir.Var) and e.name.startswith("blockDim.") else e


def _stride_axis(s: ir.Stmt, values: dict[str, ir.Expr]) -> str | None:
    """The axis of a grid-stride loop ``i += blockDim.x * gridDim.x`` (through `values`)."""
    if not isinstance(s, ir.OtherLoop) or s.header is None or s.header.op != "+=":
        return None
    step = _through(s.header.value, values)
    axes = {e.name[-1] for e in ir.walk_expr(step) if isinstance(e, ir.Var) and e.name.startswith("gridDim.")}
    return axes.pop() if len(axes) == 1 and _is_grid_stride(step, next(iter(axes))) else None


def _thread_offset(init: ir.Expr, axis: str) -> ir.Expr | None:
    """`K` of a start ``K + blockIdx.x * blockDim.x + threadIdx.x`` (in any order; `K` reads no
    thread or block id), else None."""
    ids = (f"blockIdx.{axis}", f"threadIdx.{axis}")
    offset = ir.map_expr(init, lambda x: ir.IntLit(0, x.range) if isinstance(x, ir.Var) and x.name in ids else x)
    if any(isinstance(x, ir.Var) and x.name.startswith(("threadIdx.", "blockIdx.")) for x in ir.walk_expr(offset)):
        return None
    names = [x.name for x in ir.walk_expr(init) if isinstance(x, ir.Var) and "." not in x.name]
    for scale in (1, 3):  # two values of the other names: `K * idx` is no index whatever K is
        others = {name: 11 + scale * k for k, name in enumerate(names)}
        at = lambda b, t: _value_at(init, {**others, ids[0]: b, ids[1]: t, f"blockDim.{axis}": 7})  # noqa: E731, B023
        base = at(0, 0)
        if base is None or not all(at(b, t) == base + 7 * b + t for b, t in ((0, 1), (1, 0), (2, 3), (5, 2))):
            return None
    return offset


def _invariant_names(fn: ir.Function) -> set[str]:
    """The names that have one value in every thread for the whole kernel: its parameters that
    nothing assigns (a top-level declaration is read through its value)."""
    assigned = {s.target.name for s in _all_statements(fn.body) if isinstance(s, ir.Assign) and isinstance(s.target, ir.Var)}
    return {p.name for p in fn.params if p.name not in assigned}


def _reads_only(e: ir.Expr, names: set[str]) -> bool:
    """Whether `e` reads only `names` and constants."""
    return all(x.name in names for x in ir.walk_expr(e) if isinstance(x, ir.Var))


def _ids_only_in(body: tuple[ir.Stmt, ...], values: dict[str, ir.Expr], loops: list[ir.Stmt], axes: set[str]) -> bool:
    """Whether the covered axes' thread and block ids (also through `values`) are read only by the
    grid-stride loops' starts and steps."""
    ids = {f"{k}.{a}" for a in axes for k in ("threadIdx", "blockIdx")}

    def reads_ids(e: ir.Expr) -> bool:
        return any(isinstance(x, ir.Var) and x.name in ids for x in ir.walk_expr(_through(e, values)))

    for s in _all_statements(body):
        if any(s is loop for loop in loops):
            assert isinstance(s, ir.OtherLoop) and s.header is not None
            exprs = [s.header.cond]
        elif isinstance(s, ir.Decl) and s in body and s.name in values:
            continue  # read through `values` where it is used
        else:
            exprs = ir.stmt_exprs(s)
        if any(reads_ids(e) for e in exprs):
            return False
    return True


def _stores_inside(body: tuple[ir.Stmt, ...], loops: list[ir.Stmt], depth: int, inside: int = 0) -> bool:
    """Whether every store to memory and every call is inside `depth` of the grid-stride `loops`
    (a local scalar may be set anywhere: each thread has its own)."""
    for s in body:
        here = inside + any(s is loop for loop in loops)
        if isinstance(s, ir.Assign) and not isinstance(s.target, ir.Var) and here < depth:
            return False
        if not isinstance(s, ir.Decl) and any(isinstance(e, ir.Call) for t in ir.stmt_exprs(s) for e in ir.walk_expr(t)) and here < depth:
            return False
        if not _stores_inside(ir.sub_statements(s), loops, depth, here):
            return False
    return True


def _calls(body: tuple[ir.Stmt, ...], name: str) -> bool:
    return any(isinstance(e, ir.Call) and e.name == name for e in ir.all_exprs(body))


def _upper_bound(cond: ir.Expr, var: str) -> ir.Expr | None:
    """`n` of ``var < n`` (or ``n > var``), where `n` reads neither `var` nor a thread or block id."""
    cond = _uncast(cond)
    if not isinstance(cond, ir.Binary) or cond.op not in ("<", ">"):
        return None
    v, n = (cond.lhs, cond.rhs) if cond.op == "<" else (cond.rhs, cond.lhs)
    names = {x.name for x in ir.walk_expr(n) if isinstance(x, ir.Var)}
    if not (isinstance(_uncast(v), ir.Var) and _uncast(v).name == var) or var in names:  # type: ignore[union-attr]
        return None
    return None if any(x.startswith(("threadIdx.", "blockIdx.", "blockDim.", "gridDim.")) for x in names) else n


def _is_grid_stride(e: ir.Expr, axis: str) -> bool:
    """``blockDim.x * gridDim.x``: the number of threads in the grid."""
    at = lambda g: _value_at(e, {f"blockDim.{axis}": 7, f"gridDim.{axis}": g})  # noqa: E731
    return all(at(g) == 7 * g for g in (1, 2, 5))


def _value_at(e: ir.Expr, env: dict[str, int]) -> int | None:
    """`e` (sums and products of `env`'s names and constants) at `env`, else None."""
    e = _uncast(e)
    if isinstance(e, ir.IntLit):
        return e.value
    if isinstance(e, ir.Var):
        return env.get(e.name)
    if isinstance(e, ir.Binary) and e.op in ("+", "-", "*"):
        a, b = _value_at(e.lhs, env), _value_at(e.rhs, env)
        if a is None or b is None:
            return None
        return a + b if e.op == "+" else a - b if e.op == "-" else a * b
    return None


def _uncast(e: ir.Expr) -> ir.Expr:
    while isinstance(e, ir.Cast):
        e = e.operand
    return e


def _top_level_values(body: tuple[ir.Stmt, ...]) -> dict[str, ir.Expr]:
    """``int stride = blockDim.x * gridDim.x;`` at the kernel's top level, set nowhere else."""
    assigned = {s.target.name for s in _all_statements(body) if isinstance(s, ir.Assign) and isinstance(s.target, ir.Var)}
    return {s.name: s.init for s in body if isinstance(s, ir.Decl) and s.init is not None and s.name not in assigned}


def _through(e: ir.Expr, values: dict[str, ir.Expr]) -> ir.Expr:
    return ir.map_expr(e, lambda x: values.get(x.name, x) if isinstance(x, ir.Var) else x)


_LAUNCH_BOUNDS = re.compile(r"__launch_bounds__\s*\(\s*(\d+)")


def _assumed_block(fn: ir.Function, used: set[str]) -> tuple[dict[str, int], str]:
    """A block size for a kernel no launch in the file sizes, and where it comes from: one thread
    where the kernel never reads `threadIdx`; else `__launch_bounds__(N)` (N threads, 32 wide
    when it reads `threadIdx.y`); else a typical size for the axes it reads."""
    rank = 3 if "threadIdx.z" in used else 2 if "threadIdx.y" in used else 1 if "threadIdx.x" in used else 0
    if rank == 0:
        return {"x": 1, "y": 1, "z": 1}, "it never reads `threadIdx`"
    bound = _LAUNCH_BOUNDS.search(fn.text)
    n = int(bound.group(1)) if bound else 0
    if n and (rank == 1 or (rank == 2 and n % 32 == 0)):
        x = n if rank == 1 else min(32, n)
        return {"x": x, "y": n // x, "z": 1}, f"its `__launch_bounds__({n})`"
    return dict(_DEFAULT_BLOCK[rank]), "a typical size for the thread ids it reads"


def _dims(sizes: tuple[int | None, ...]) -> str:
    kept = list(sizes)
    while len(kept) > 1 and kept[-1] == 1:
        kept.pop()
    return " x ".join(str(s) for s in kept)


def _builtins(stmts: tuple[ir.Stmt, ...]) -> set[str]:
    return {e.name for e in ir.all_exprs(stmts) if isinstance(e, ir.Var) and "." in e.name}


# ------------------------------------------------------------------------------ the rewrite


def kernel_nest(fn: ir.Function, shape: GridShape) -> tuple[ir.Function, frozenset[SourceRange], list[ir.Note]]:
    """The kernel as loops over blocks and threads (module docstring), the ranges of its atomic
    updates, and notes on what was read differently."""
    rewrite = _Rewrite(shape, _template_values(fn), _top_level_values(fn.body))
    rest, shared = _hoisted(rewrite.block(fn.body))
    inner: tuple[ir.Stmt, ...] = rest
    for axis in reversed(shape.thread_axes):
        inner = (_loop(f"threadIdx.{axis}", ir.IntLit(shape.block[axis], fn.range), inner, fn.range),)
    params = tuple(ir.Param(f"gridDim.{a}", _INT, fn.range) for a in shape.block_axes if a not in {**shape.grid, **shape.covered})
    inner, flat, row_notes = rows(inner, fn.params, _top_level_values(fn.body))  # before `row` is replaced by what it is set to
    inner, notes = induction.substituted(inner, flat + params)
    inner = _without_dead_locals(inner)
    outer: tuple[ir.Stmt, ...] = (*shared, ir.Decl(BARRIER, _INT, None, fn.range), *inner)
    for axis in reversed(shape.block_axes):
        outer = (shape.block_loop(axis, outer, fn.range),)
    names = {d.name for d in shared}  # `extern __shared__ float s[];` is no global of the file
    globals_ = tuple(g for g in fn.globals if g.name not in names)
    nest = replace(fn, body=outer, params=flat + params, is_cuda_kernel=False, globals=globals_)
    return nest, frozenset(rewrite.atomic), [*rewrite.notes, *notes, *row_notes]


def _without_dead_locals(body: tuple[ir.Stmt, ...]) -> tuple[ir.Stmt, ...]:
    """`int i = blockIdx.x * blockDim.x + threadIdx.x;` once every use of `i` reads the expression
    (`induction`): the declaration without its (dead) value, which the model would store per thread."""
    read = {e.name for e in ir.all_exprs(body) if isinstance(e, ir.Var)}
    assigned = {s.target.name for s in _all_statements(body) if isinstance(s, ir.Assign) and isinstance(s.target, ir.Var)}

    def keep(s: ir.Stmt) -> ir.Stmt:
        if isinstance(s, ir.Decl) and s.init is not None and isinstance(s.type, ir.Scalar) and s.name not in read | assigned:
            return replace(s, init=None)
        return s

    return _map_statements(body, keep)


def _all_statements(stmts: tuple[ir.Stmt, ...]) -> list[ir.Stmt]:
    return [x for s in stmts for x in (s, *_all_statements(ir.sub_statements(s)))]


def _map_statements(stmts: tuple[ir.Stmt, ...], f: Callable[[ir.Stmt], ir.Stmt]) -> tuple[ir.Stmt, ...]:
    out = []
    for s in stmts:
        if isinstance(s, ir.For | ir.OtherLoop | ir.OpaqueStmt):
            s = replace(s, body=_map_statements(s.body, f))
        elif isinstance(s, ir.If):
            s = replace(s, then=_map_statements(s.then, f), other=_map_statements(s.other, f))
        out.append(f(s))
    return tuple(out)


DYNAMIC_SHARED = 1 << 14  # the elements of an `extern __shared__ float s[];` (its size is the launch's)


def _hoisted(body: tuple[ir.Stmt, ...]) -> tuple[tuple[ir.Stmt, ...], tuple[ir.Decl, ...]]:
    """The `__shared__` declarations, wherever they are in the kernel (one array per block
    whatever their scope), out of `body`; ``extern __shared__ s[]`` sized `DYNAMIC_SHARED`."""
    shared: list[ir.Decl] = []

    def strip(stmts: tuple[ir.Stmt, ...]) -> tuple[ir.Stmt, ...]:
        out: list[ir.Stmt] = []
        for s in stmts:
            if isinstance(s, ir.Decl) and s.shared:
                shared.append(_sized(s))
            elif isinstance(s, ir.For | ir.OtherLoop | ir.OpaqueStmt):
                out.append(replace(s, body=strip(s.body)))
            elif isinstance(s, ir.If):
                out.append(replace(s, then=strip(s.then), other=strip(s.other)))
            else:
                out.append(s)
        return tuple(out)

    rest = strip(body)
    return rest, tuple(shared)


def _sized(d: ir.Decl) -> ir.Decl:
    typ = d.type
    if isinstance(typ, ir.Array) and typ.dims and typ.dims[0] is None:
        return replace(d, type=replace(typ, dims=(ir.IntLit(DYNAMIC_SHARED, d.range), *typ.dims[1:])))
    if isinstance(typ, ir.Pointer):
        return replace(d, type=ir.Array(typ.pointee, (ir.IntLit(DYNAMIC_SHARED, d.range),)))
    return d


def _template_values(fn: ir.Function) -> dict[str, int]:
    """A template kernel's integer parameters as its first launch instantiates them."""
    if not fn.template_params or not fn.launches:
        return {}
    args = [a for a in fn.launches[0].template_args]
    return {name: value for name, value in zip(fn.template_params, args, strict=False) if value is not None}


def _loop(var: str, bound: ir.Expr, body: tuple[ir.Stmt, ...], rng: SourceRange) -> ir.For:
    cond = ir.Binary("<", ir.Var(var, rng, _INT), bound, rng)
    return ir.For(var, ir.IntLit(0, rng), cond, 1, body, rng, rng, True)


@dataclass
class _Rewrite:
    shape: GridShape
    constants: dict[str, int]  # template parameters, by their value in the launch
    values: dict[str, ir.Expr] = None  # type: ignore[assignment]  # `int stride = ...;` at the top level
    atomic: set[SourceRange] = None  # type: ignore[assignment]
    notes: list[ir.Note] = None  # type: ignore[assignment]

    declared: set[str] = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        self.atomic, self.notes, self.declared = set(), [], set()

    def block(self, stmts: tuple[ir.Stmt, ...]) -> tuple[ir.Stmt, ...]:
        """The statements rewritten; a name declared again (``int T0`` in both branches of an
        `if`, as generated code does) is renamed from there on: the model has one variable per name."""
        renames: dict[str, str] = {}  # from this statement on: a name as written -> its latest name
        out = list[ir.Stmt]()
        for written in stmts:
            s = _renamed(written, renames)
            if isinstance(written, ir.Decl) and isinstance(s, ir.Decl) and s.name in self.declared:
                renames[written.name] = next(f"{s.name}_{k}" for k in itertools.count(1) if f"{s.name}_{k}" not in self.declared)
                s = _renamed(written, renames)
            if isinstance(s, ir.Decl):
                self.declared.add(s.name)
            out += self.stmt(s)
        return tuple(out)

    def stmt(self, s: ir.Stmt) -> tuple[ir.Stmt, ...]:
        e = self.expr
        if isinstance(s, ir.ExprStmt) and isinstance(s.expr, ir.Call):
            return (self.call(s.expr, s),)
        if isinstance(s, ir.Assign):
            return (_assignment(s, e(s.target), e(s.value)),)
        if isinstance(s, ir.Decl):
            return (replace(s, init=None if s.init is None else e(s.init)),)
        if isinstance(s, ir.If):
            return (replace(s, cond=e(s.cond), then=self.block(s.then), other=self.block(s.other)),)
        if isinstance(s, ir.For):
            return (replace(s, init=e(s.init), cond=e(s.cond), body=self.block(s.body)),)
        if isinstance(s, ir.OtherLoop) and s.header is not None:
            return self.other_loop(s, s.header)
        if isinstance(s, ir.OtherLoop | ir.OpaqueStmt):
            return (replace(s, body=self.block(s.body)),)
        return (s,)

    def call(self, call: ir.Call, s: ir.ExprStmt) -> ir.Stmt:
        if call.name == "__syncthreads" and not call.args:
            return ir.Assign(ir.Var(BARRIER, call.range, _INT), "=", ir.IntLit(0, call.range), s.range)
        first = call.args[0] if call.args else None
        if call.name.startswith("atomic") and isinstance(first, ir.Unary) and first.op == "&":
            target = self.expr(first.operand)
            assert isinstance(target, ir.Var | ir.Subscript)
            value = self.expr(call.args[-1]) if len(call.args) > 1 else ir.IntLit(1, call.range)
            self.atomic.add(s.range)
            return ir.Assign(target, "+=", value, s.range)
        return replace(s, expr=self.expr(call))

    def other_loop(self, s: ir.OtherLoop, h: ir.LoopHeader) -> tuple[ir.Stmt, ...]:
        if any(isinstance(x, ir.Var) and x.name[-1:] in self.shape.covered and x.name.startswith("gridDim.")
               for x in ir.walk_expr(_through(h.value, self.values))):  # fmt: skip
            return self.covering_loop(s, h)
        increment = _through(h.value, self.values)  # `i += stride`, `z += stepz` (`int stepz = 1;`)
        init, cond, value = self.expr(h.init), self.expr(h.cond), constant(self.expr(increment))
        body = self.block(s.body)
        if value is not None and value != 0 and h.op in ("+=", "-="):
            step = value if h.op == "+=" else -value
            return (ir.For(h.var, init, cond, step, body, s.range, s.header_range, h.declares_var),)
        values = _unrolled(h, init, cond, value)
        if values is None and any(isinstance(x, ir.Var) and x.name.startswith("gridDim.") for x in ir.walk_expr(_through(h.value, self.values))):
            why = f" ({self.shape.uncovered})" if self.shape.uncovered else ""
            return (replace(s, body=body, message=f"the grid-stride loop over `{h.var}` runs on a grid known only at run "
                            f"time{why}: hexplore models such a loop for the grid of its launches when they all give "
                            "the same constant one (`kernel<<<128, 256>>>`) in this file"),)  # fmt: skip
        if values is None:
            return (replace(s, body=body),)
        self.notes.append(ir.Note("UnrolledBlockLoop",
            f"the loop over `{h.var}` takes the values {', '.join(map(str, values))} for this block "
            "size; hexplore reads it as that many copies of its body", s.header_range))  # fmt: skip
        copies = [_substitute_stmts(body, h.var, v) for v in values]
        return tuple(itertools.chain.from_iterable(copies))

    def covering_loop(self, s: ir.OtherLoop, h: ir.LoopHeader) -> tuple[ir.Stmt, ...]:
        """The grid-stride loop of `_covered` as its first iteration, each thread's one:
        ``int i = i0; if (i < n) body``."""
        axis = _stride_axis(s, self.values)
        assert axis is not None
        self.notes.append(ir.Note("GridStrideLoop",
            f"the grid-stride loop over `{h.var}` gives each value below its bound to one thread, whatever the "
            f"grid; hexplore models it over the blocks that cover the bound, one value per thread "
            f"(`gridDim.{axis} * blockDim.{axis}` threads or more): a race it finds happens on a grid that large "
            "(on a smaller one a thread may run both values in turn), and none found means none on any grid",
            s.header_range))  # fmt: skip
        init = self.expr(h.init)
        start: ir.Stmt = ir.Decl(h.var, _INT, init, s.range) if h.declares_var else ir.Assign(ir.Var(h.var, s.range, _INT), "=", init, s.range)
        return (start, ir.If(self.expr(h.cond), self.block(s.body), (), s.range))

    def expr(self, e: ir.Expr) -> ir.Expr:
        return ir.map_expr(e, lambda x: _chosen_element(self._builtin(x)))

    def _builtin(self, e: ir.Expr) -> ir.Expr:
        if isinstance(e, ir.Var) and e.name in self.constants:
            return ir.IntLit(self.constants[e.name], e.range)
        if not isinstance(e, ir.Var) or "." not in e.name:
            return e
        if e.name.startswith("blockDim."):
            return ir.IntLit(self.shape.block[e.name[-1]], e.range)
        if e.name.startswith("gridDim.") and e.name[-1] in self.shape.grid:
            return ir.IntLit(self.shape.grid[e.name[-1]], e.range)
        return replace(e, type=_INT)


def _chosen_element(e: ir.Expr) -> ir.Expr:
    """``A[i - (c ? x : y)]`` as ``c ? A[i - x] : A[i - y]``: generated kernels index a shared
    tile from a MAX (``shared_R[c0 - max(h0 + 1, T0)]``), a subscript that is affine on each side
    of its condition, each read then guarded by its side (`if_conversion`'s guarded reads)."""
    if not isinstance(e, ir.Subscript):
        return e
    for k, index in enumerate(e.indices):
        choice = hoist_choice(index) if any(isinstance(x, ir.Ternary) for x in ir.walk_expr(index)) else index
        if isinstance(choice, ir.Ternary):
            sides = [_chosen_element(replace(e, indices=(*e.indices[:k], side, *e.indices[k + 1 :]))) for side in (choice.then, choice.other)]
            return ir.Ternary(choice.cond, sides[0], sides[1], e.range)
    return e


def _assignment(s: ir.Assign, target: ir.Expr, value: ir.Expr) -> ir.Stmt:
    """``A[c ? i : j] = v`` (a target `_chosen_element` made a choice) as ``if (c) A[i] = v;
    else A[j] = v;``."""
    if isinstance(target, ir.Ternary):
        then, other = _assignment(s, target.then, value), _assignment(s, target.other, value)
        return ir.If(target.cond, (then,), (other,), s.range)
    assert isinstance(target, ir.Var | ir.Subscript)
    return replace(s, target=target, value=value)


def _unrolled(h: ir.LoopHeader, init: ir.Expr, cond: ir.Expr, factor: int | None) -> list[int] | None:
    """The counter's values of a loop ``for (s = c; cond; s op= f)`` that multiplies or divides
    by a constant from a constant, while `cond` holds (at most `MAX_UNROLL`), else None."""
    start = constant(init)
    step: dict[str, Callable[[int, int], int]] = {
        "*=": lambda v, f: v * f, "/=": lambda v, f: int(v / f), "<<=": lambda v, f: v << f,
        ">>=": lambda v, f: v >> f,
    }  # fmt: skip
    if start is None or factor is None or h.op not in step:
        return None
    values: list[int] = []
    v = start
    while len(values) <= MAX_UNROLL:
        holds = constant(_substitute(cond, h.var, v))
        if holds is None:
            return None
        if not holds:
            return values
        values.append(v)
        nxt = step[h.op](v, factor)
        if nxt == v:
            return None
        v = nxt
    return None


def _substitute(e: ir.Expr, var: str, value: int) -> ir.Expr:
    return ir.map_expr(e, lambda x: ir.IntLit(value, x.range) if isinstance(x, ir.Var) and x.name == var else x)


def _substitute_stmts(stmts: tuple[ir.Stmt, ...], var: str, value: int) -> tuple[ir.Stmt, ...]:
    return ir.map_stmts(stmts, lambda e: _substitute(e, var, value))


def _renamed(s: ir.Stmt, names: dict[str, str]) -> ir.Stmt:
    """`s` with each variable or array `old` of `names` called `names[old]`."""
    if not names:
        return s

    def rename(e: ir.Expr) -> ir.Expr:
        if isinstance(e, ir.Var) and e.name in names:
            return replace(e, name=names[e.name])
        if isinstance(e, ir.Subscript) and e.base in names:
            return replace(e, base=names[e.base])
        return e

    (out,) = ir.map_stmts((s,), lambda e: ir.map_expr(e, rename), names)
    return out


_BINARY: dict[str, Callable[[int, int], int]] = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "/": lambda a, b: int(a / b), "%": lambda a, b: a - b * int(a / b), "<<": lambda a, b: a << b,
    ">>": lambda a, b: a >> b, "<": lambda a, b: int(a < b), "<=": lambda a, b: int(a <= b),
    ">": lambda a, b: int(a > b), ">=": lambda a, b: int(a >= b), "==": lambda a, b: int(a == b),
    "!=": lambda a, b: int(a != b), "&&": lambda a, b: int(bool(a and b)), "||": lambda a, b: int(bool(a or b)),
}  # fmt: skip


def constant(e: ir.Expr, env: dict[str, int] | None = None) -> int | None:
    """The value of an integer expression of constants and the variables in `env` (C's
    truncating division), else None."""
    if isinstance(e, ir.IntLit):
        return e.value
    if isinstance(e, ir.Var):
        return (env or {}).get(e.name)
    if isinstance(e, ir.Cast):
        return constant(e.operand, env)
    if isinstance(e, ir.Unary) and e.op in ("-", "+", "!"):
        v = constant(e.operand, env)
        return None if v is None else {"-": -v, "+": v, "!": int(not v)}[e.op]
    if isinstance(e, ir.Binary) and e.op in _BINARY:
        a, b = constant(e.lhs, env), constant(e.rhs, env)
        if a is None or b is None or (e.op in ("/", "%") and b == 0) or (e.op in ("<<", ">>") and not 0 <= b < 63):
            return None
        return _BINARY[e.op](a, b)
    return None
