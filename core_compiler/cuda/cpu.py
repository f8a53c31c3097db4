"""CUDA on the CPU: a kernel's model run as loops, through the LLVM/OpenMP CPU path.

A race-free kernel gives the same result however its threads interleave, as long as each thread
runs its statements in order and no thread passes a barrier before every thread of its block
reached it. *Lockstep* is one such interleaving: every instance is scheduled at its block, then
its time within the thread (`races.Timing`) down to the innermost loop around it that holds a
barrier, then its thread, then the rest of its time::

    for (blockIdx.y, blockIdx.x)        parallel (OpenMP): blocks never synchronise
      for t:                            a loop of the kernel that holds barriers
        for (threadIdx.y, threadIdx.x)  the block's threads, one phase (barrier to barrier) each
          As[ty][tx] = ...
        for (threadIdx.y, threadIdx.x)
          for k: sum += As[ty][k] * Bs[k][tx]    a loop without barriers, whole per thread

(Polygeist's fission at barriers, with the loops around barriers interchanged outward.) Values
that cross a barrier are the model's expanded locals: one element per thread (``acc``), one
array per block (``__shared__``). A kernel with a data race or a divergent barrier is refused:
its result depends on an interleaving.

`run_host` runs a host function of the file whose body is launches (in `for` loops over sizes
too): each launch's grid from its expressions, each kernel JIT-compiled once.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterable, Iterator, Mapping

import islpy as isl
import numpy as np

from core_compiler.codegen.ast_print import evaluate
from core_compiler.codegen.statements import ArrayLayout, array_layouts
from core_compiler.cuda import races
from core_compiler.cuda.grid import KernelModel, model_kernel
from core_compiler.errors import UsageError
from core_compiler.frontend import ir
from core_compiler.llvm.cpu_lowering import CpuModule, lower_cpu
from core_compiler.llvm.jit import JitFunction, jit_compile, scalar_dtype
from core_compiler.scop.affine import Affine, isl_name
from core_compiler.scop.model import Statement
from core_compiler.transform.cpu_schedule import PARALLEL_MARK, build_ast, loop_of_mark


class NotTranslatable(UsageError):
    """A kernel or host function the CPU translation does not run, said for people."""


def lockstep_ast(km: KernelModel) -> isl.AstNode:
    """The kernel's instances in lockstep order, as an isl AST: loops over the blocks (marked
    parallel) and, in a kernel without barriers, over the threads, each over its whole range
    (``0 <= blockIdx.x < gridDim.x``); inside them the AST of `lockstep_schedule`'s rest, built
    with those ids as sizes (``hx_g0``, ...), the names of the outer loops' counters.

    isl builds the inner AST for one block and thread at a time: its guards are conditions on the
    ids, not loop bounds split at every piece of every statement's domain. (The suite's seidel_2d
    kernel: a statement whose domain is 33 pieces, the partial tiles of a skewed wavefront, whose
    block loops alone exceeded 4e7 operations; with the ids as sizes its AST takes seconds.)"""
    timing = races.Timing(km)
    outer = km.n_block if timing.barriers else km.n_grid
    if outer == 0 or km.shape.covered:  # a grid-stride loop's covering blocks: the whole schedule's AST
        return build_ast(km.scop, lockstep_schedule(km, timing))
    ids = [f"{GRID_ID}{k}" for k in range(outer)]
    build = isl.AstBuild.from_context(_grid_box(km, ids).params())
    if timing.barriers:  # threads are loops inside the loops that hold barriers: a tree (gemm's 268 statements)
        inner = build.node_from_schedule(lockstep_schedule(km, timing, outer))
    else:  # one thread's statements: a flat map (seidel_2d's tree took over 4e7 operations, the map 4.7 s)
        inner = build.node_from_schedule_map(_union_of(lockstep_times(km, timing, outer).values()))
    box = _grid_box(km, ids).move_dims(isl.dim_type.set, 0, isl.dim_type.param, km.scop.context.dim(isl.dim_type.param), outer)
    node = isl.Schedule.from_domain(isl.UnionSet.from_set(box.set_tuple_name(GRID_ID))).get_root().child(0)
    node = _box_bands(node, box.set_tuple_name(GRID_ID), km.n_block, outer)
    build = isl.AstBuild.from_context(km.scop.context.params()).set_iterators(_id_list(km.scop.ctx, ids))
    build, keep_mark = build.set_after_each_mark(loop_of_mark)
    build, keep_leaf = build.set_create_leaf(lambda _b: inner.copy())
    ast = build.node_from_schedule(node.get_schedule())
    del keep_mark, keep_leaf
    return ast


GRID_ID = "hx_g"  # the block and thread ids as sizes of the inner AST, and the outer loops' counters


def _grid_box(km: KernelModel, ids: list[str]) -> isl.Set:
    """The range of the first ``len(ids)`` grid ids (blocks, then threads), as sizes named `ids`
    beside the kernel's: ``0 <= hx_g0 < gridDim_y`` (or the launches' constant grid; over an axis
    a grid-stride loop covers, the blocks some instance runs in), ``0 <= hx_g2 < 16``."""
    ctx, shape = km.scop.ctx, km.shape
    axes = [*shape.block_axes, *shape.thread_axes][: len(ids)]
    extents = [*(shape.grid.get(a, isl_name(f"gridDim.{a}")) for a in shape.block_axes), *(shape.block[a] for a in shape.thread_axes)]
    bounds = [f"0 <= {g} < {e}" for k, (g, e) in enumerate(zip(ids, extents[: len(ids)], strict=True))
              if k >= km.n_block or axes[k] not in shape.covered]  # fmt: skip
    params = [*(isl_name(p) for p in km.scop.params), *ids]
    box = isl.Set.read_from_str(ctx, f"[{', '.join(params)}] -> {{ : {' and '.join(bounds) or '0 = 0'} }}")
    for k, a in enumerate(axes[: km.n_block]):
        if a in shape.covered:
            box = box.intersect_params(_covered_blocks(km, k, ids[k]))
    return box.intersect_params(km.scop.context.params())


def _covered_blocks(km: KernelModel, k: int, name: str) -> isl.Set:
    """The values of block id `k` that some instance runs at, as the size `name`."""
    blocks = isl.Set.from_union_set(km.scop.domains().apply(_union(km, lambda st: _project_on(st.domain, k))))
    n = blocks.dim(isl.dim_type.param)
    return blocks.move_dims(isl.dim_type.param, n, isl.dim_type.set, 0, 1).set_dim_name(isl.dim_type.param, n, name).params()


def _project_on(domain: isl.Set, k: int) -> isl.Map:
    """``S[i0, ..., in] -> [ik]``."""
    return isl.Map.from_domain(domain).add_dims(isl.dim_type.out, 1).equate(isl.dim_type.in_, k, isl.dim_type.out, 0)


def _box_bands(node: isl.ScheduleNode, box: isl.Set, n_block: int, outer: int) -> isl.ScheduleNode:
    """Below `node` (the box's leaf), a band of the block ids marked parallel, then one of the
    thread ids (those among the `outer` first ids); returns the leaf below them."""
    def band(lo: int, hi: int) -> isl.MultiUnionPwAff:
        names = ", ".join(f"i{k}" for k in range(outer))
        m = isl.Map.read_from_str(box.get_ctx(), f"{{ {GRID_ID}[{names}] -> [{', '.join(f'i{k}' for k in range(lo, hi))}] }}")
        return isl.MultiUnionPwAff.from_union_map(isl.UnionMap.from_map(m.align_params(box.get_space()).intersect_domain(box)))

    if n_block:
        node = node.insert_partial_schedule(band(0, n_block))
        node = node.insert_mark(isl.Id(PARALLEL_MARK, context=box.get_ctx())).child(0).child(0)
    if outer > n_block:
        node = node.insert_partial_schedule(band(n_block, outer)).child(0)
    return node


def _id_list(ctx: isl.Context, names: list[str]) -> isl.IdList:
    out = isl.IdList.alloc(ctx, len(names))
    for name in names:
        out = out.add(isl.Id(name, context=ctx))
    return out


def lockstep_schedule(km: KernelModel, timing: races.Timing | None = None, outer: int = 0) -> isl.Schedule:
    """Blocks (one band, marked parallel), then each thread's time down to its innermost loop that
    holds a barrier, then the threads, then the rest of its time: a thread runs a loop without a
    barrier (`for k: sum += ...`) through before the next thread starts it. With `outer`, the first
    `outer` grid ids are sizes instead (``hx_g0``, ...: `lockstep_ast` loops over them) and the
    schedule is the rest.

    The thread's time is a tree, not one band: where statements sit at different positions of a
    body, a sequence node with one child per position. isl then builds each position's loops over
    its own statements only; over one band it splits the block and thread loops by every
    statement's conditions at once (gemm's register tiles, 268 statements in full and partial
    tiles, exceeded 4e7 operations; as a tree its AST takes about a minute)."""
    timing = timing or races.Timing(km)
    times = lockstep_times(km, timing, outer)
    node = isl.Schedule.from_domain(_union_of(times.values()).domain()).get_root().child(0)
    if km.n_block and not outer:
        names = ", ".join(f"t{k}" for k in range(timing.project.dim(isl.dim_type.in_)))
        to_blocks = isl.Map.read_from_str(km.scop.ctx, f"{{ [{names}] -> [{', '.join(f't{2 * k + 1}' for k in range(km.n_block))}] }}")
        node = node.insert_partial_schedule(
            isl.MultiUnionPwAff.from_union_map(_union(km, lambda st: st.schedule.apply_range(to_blocks)))
        )
        node = node.insert_mark(isl.Id(PARALLEL_MARK, context=km.scop.ctx)).child(0).child(0)
    return _time_tree(node, times, list(times), 0).get_schedule()


def lockstep_times(km: KernelModel, timing: races.Timing, outer: int = 0) -> dict[str, isl.Map]:
    """Each statement's instances to their lockstep time after the blocks (`lockstep_schedule`),
    without its first `outer` grid ids, which are sizes (``hx_g0``, ...)."""
    depth = timing.project.dim(isl.dim_type.in_)
    names = [f"t{k}" for k in range(depth)]
    threads = [names[2 * k + 1] for k in range(km.n_block, km.n_grid)]
    synced = {loop.id for b in timing.barriers for loop in b.info.loops}
    fixed = {names[2 * k + 1] for k in range(outer)}

    def order(st: Statement) -> isl.Map:
        local = names[2 * km.n_grid :]
        k = sum(1 for loop in st.info.loops[km.n_grid :] if loop.id in synced)
        cut = 2 * k + 1 if timing.barriers else 0  # without barriers each thread runs through
        out = [n for n in local[:cut] + threads + local[cut:] if n not in fixed]
        return isl.Map.read_from_str(km.scop.ctx, f"{{ [{', '.join(names)}] -> [{', '.join(out)}] }}")

    times = {st.name: _on(st.schedule.apply_range(order(st)), _as_sizes(st.domain, outer)) for st in km.scop.statements}
    return {name: m for name, m in times.items() if not m.is_empty()}


def _as_sizes(domain: isl.Set, outer: int) -> isl.Set:
    """`domain` with its first `outer` ids equal to the sizes ``hx_g0``, ...: one block's and
    thread's instances."""
    n = domain.dim(isl.dim_type.param)
    out = domain.add_dims(isl.dim_type.param, outer)
    for k in range(outer):
        out = out.set_dim_name(isl.dim_type.param, n + k, f"{GRID_ID}{k}")
        c = isl.Constraint.equality_alloc(out.get_space()).set_coefficient_val(isl.dim_type.set, k, 1)
        out = out.add_constraint(c.set_coefficient_val(isl.dim_type.param, n + k, -1))
    return out


def _on(m: isl.Map, domain: isl.Set) -> isl.Map:
    """`m` restricted to `domain`, whose sizes may be more than `m`'s."""
    return m.align_params(domain.get_space()).intersect_domain(domain)


def _time_tree(node: isl.ScheduleNode, times: Mapping[str, isl.Map], stmts: list[str], d: int) -> isl.ScheduleNode:
    """Below the leaf `node`, `stmts` ordered by their `times` from dimension `d` on: a
    dimension that is a constant of each statement (a position in a body) is a sequence where
    the constants differ, nothing where they agree; any other (a loop) is a band of one member.
    Returns the node at `node`'s place."""
    width = times[stmts[0]].dim(isl.dim_type.out) if stmts else 0
    for k in range(d, width):
        values = [_fixed(times[s], k) for s in stmts]
        if any(v is None for v in values):
            band = _union_of(times[s].project_out(isl.dim_type.out, k + 1, width - k - 1)
                             .project_out(isl.dim_type.out, 0, k) for s in stmts)  # fmt: skip
            node = node.insert_partial_schedule(isl.MultiUnionPwAff.from_union_map(band))
            return _time_tree(node.child(0), times, stmts, k + 1).parent()
        groups: dict[int, list[str]] = {}
        for s, v in zip(stmts, values, strict=True):
            groups.setdefault(v, []).append(s)  # type: ignore[arg-type]
        if len(groups) > 1:
            parts = [groups[v] for v in sorted(groups)]
            filters = isl.UnionSetList.alloc(node.get_ctx(), len(parts))
            for part in parts:
                filters = filters.add(_union_of(times[s] for s in part).domain())
            node = node.insert_sequence(filters)
            for i, part in enumerate(parts):
                node = _time_tree(node.child(i).child(0), times, part, k + 1).parent().parent()
            return node
    return node


def _fixed(m: isl.Map, d: int) -> int | None:
    v = m.plain_get_val_if_fixed(isl.dim_type.out, d)
    return None if v.is_nan() else int(v.to_python())


def _union_of(maps: Iterable[isl.Map]) -> isl.UnionMap:
    out: isl.UnionMap | None = None
    for m in maps:
        out = isl.UnionMap.from_map(m) if out is None else out.union(isl.UnionMap.from_map(m))
    assert out is not None
    return out


def _union_of_sets(sets: Iterable[isl.Set]) -> isl.UnionSet:
    out: isl.UnionSet | None = None
    for s in sets:
        out = isl.UnionSet.from_set(s) if out is None else out.union(isl.UnionSet.from_set(s))
    assert out is not None
    return out


def _union(km: KernelModel, f: object) -> isl.UnionMap:
    out = isl.UnionMap.empty(km.scop.domains().get_space())
    for st in km.scop.statements:
        out = out.union(isl.UnionMap.from_map(f(st)))  # type: ignore[operator]
    return out


class CpuKernel:
    """A kernel's CPU translation, JIT-compiled for all cores, and for one thread when first asked."""

    def __init__(self, model: KernelModel, ast: isl.AstNode, name: str) -> None:
        self.model, self._ast, self._name = model, ast, name
        self._sizes: dict[tuple[int | None, ...], dict[str, int]] = {}
        self._checked_rows: set[tuple[int | None, ...]] = set()  # sizes launched at, within rows
        self._assumed: dict[str, bool] = {}  # per array in rows: did the race check assume its rows?
        self.jit = _jit(lower_cpu(model.scop, ast, name, parallel=True))

    @functools.cached_property
    def locals(self) -> dict[str, ArrayLayout]:
        """The model's expanded locals (`__shared__` arrays, per-thread values), by name. (Their
        extents are laid out again at the first launch: isl's count from the compile is reset, or
        a big kernel's budget, spent on its AST, fails here: PolyBench gemm.)"""
        self.model.scop.ctx.reset_operations()
        return {name: lay for name, lay in array_layouts(self.model.scop).items() if lay.decl.kind != "array"}

    def _scratch(self, env: Mapping[str, int]) -> dict[str, np.ndarray]:
        """Zeroed buffers for the model's expanded locals; their sizes computed once per values of
        the sizes they read (a time loop launches a kernel at the same sizes again and again)."""
        key = tuple(env.get(name) for name in self._extent_names)
        if key not in self._sizes:
            self._sizes[key] = _sizes(self.locals, env)
        return {name: np.zeros(size, dtype=scalar_dtype(self.locals[name].decl.elem_type))
                for name, size in self._sizes[key].items()}  # fmt: skip

    @functools.cached_property
    def _extent_names(self) -> tuple[str, ...]:
        names: set[str] = set()
        for lay in self.locals.values():
            for e in lay.extent:
                if e is not None and not isinstance(e, str):
                    names |= _ids(e)
        return tuple(sorted(names))

    def _within_rows(self, env: Mapping[str, int]) -> None:
        """Refuse a launch at sizes where a column of an array in rows runs past its row: its
        races were judged only where none does (`races.sizes_leaving_rows`). Each launch's own
        check, at its sizes (`races.rows_left_at`); whether the race check assumed the array's
        rows is asked only of an array that leaves them there."""
        key = tuple(env.get(p) for p in self.model.scop.params)
        if key in self._checked_rows:
            return
        at = launch_sizes(self.model, env)
        left = [d for d in races.arrays_in_rows(self.model) if races.rows_left_at(self.model, d, at)]
        if any(self._rows_assumed(d.name) for d in left):
            sizes = ", ".join(f"{p} = {v}" for p, v in zip(self.model.scop.params, key, strict=True) if v is not None)
            raise NotTranslatable(f"the kernel `{self.model.function.name}` is launched at {sizes}, where a column of an "
                                  "array it indexes as rows runs past its row: it was checked for races only at sizes "
                                  "where every column stays within its row")  # fmt: skip
        self._checked_rows.add(key)

    def _rows_assumed(self, array: str) -> bool:
        if array not in self._assumed:
            self.model.scop.ctx.reset_operations()
            decl = next(d for d in self.model.scop.arrays if d.name == array)
            self._assumed[array] = races.rows_assumed(self.model, decl)
        return self._assumed[array]

    @functools.cached_property
    def sequential(self) -> JitFunction:
        self.model.scop.ctx.reset_operations()  # lowering lays out the expanded locals again
        return _jit(lower_cpu(self.model.scop, self._ast, self._name + "_seq", parallel=False))

    def __call__(self, values: Mapping[str, object], grid: Mapping[str, int], parallel: bool = True) -> float:
        """Run on `values` (the kernel's arguments by name: arrays written in place) over `grid`
        (blocks along x, y, z); seconds."""
        ints = {f"gridDim.{a}": grid.get(a, 1) for a in self.model.shape.block_axes}
        env = {**{k: v for k, v in values.items() if isinstance(v, int)}, **ints}
        with launch_checks(self.model):
            self._within_rows(env)
        jit = self.jit if parallel else self.sequential
        scratch = self._scratch({**env, **{isl_name(k): v for k, v in env.items()}})
        args = {**values, **ints, **scratch}
        return jit(args)


LIGHT_IR_LINES = 10_000  # a translation with more lines of IR is optimized lightly


def _jit(module: CpuModule) -> JitFunction:
    """`module` JIT-compiled; at O1 where it is big (hexplore's own register-tiled kernels, 27,000
    lines for gemm's: O3 took minutes, and their speed on the CPU is not what they are run for)."""
    return jit_compile(module, light=module.ir.count("\n") > LIGHT_IR_LINES)


RUN_OPERATIONS = 40_000_000  # isl's budget for a kernel that is to run (the checks' is 4e6)


def compile_kernel(fn: ir.Function, max_operations: int = RUN_OPERATIONS) -> CpuKernel:
    """The kernel's CPU translation, or `NotTranslatable` saying why not. Each stage (the model,
    the race check, the lockstep AST) has `max_operations` of isl's."""
    stage = "modeled"
    try:
        km, remarks = model_kernel(fn, max_operations)
        if km is None:
            why = next((r.message for r in remarks if r.name == "CudaKernelNotModeled"), "")
            raise NotTranslatable(why or f"the kernel `{fn.name}` is not modeled, so it has no CPU translation")
        stage = "checked for races"
        km.scop.ctx.reset_operations()
        timing = races.Timing(km)
        if races.races(km, timing) or races.divergent_barriers(km, timing):
            raise NotTranslatable(f"the kernel `{fn.name}` has a data race or a divergent barrier: its result depends "
                                  "on how its threads interleave, so no CPU translation reproduces it")  # fmt: skip
        stage = "scheduled in lockstep"
        km.scop.ctx.reset_operations()
        ast = lockstep_ast(km)
        stage = "laid out"  # its expanded locals' extents, for the LLVM lowering
        km.scop.ctx.reset_operations()
        return CpuKernel(km, ast, f"hx_cuda_{fn.name}")
    except isl.Error as e:
        raise NotTranslatable(f"the kernel `{fn.name}` is not {stage} within isl's budget of {max_operations} "
                              f"operations, so it has no CPU translation ({e})") from e  # fmt: skip


def _sizes(layouts: Mapping[str, ArrayLayout], env: Mapping[str, int]) -> dict[str, int]:
    """The elements of each of `layouts` at `env`."""
    out = {}
    for name, lay in layouts.items():
        size = 1
        for e in lay.extent:
            size *= max(evaluate(e, dict(env)) if e is not None and not isinstance(e, str) else 1, 1)
        out[name] = size
    return out


def _ids(e: isl.AstExpr) -> set[str]:
    """The names an isl AST expression reads."""
    kind = e.get_type()
    if kind == isl.ast_expr_type.id:
        return {e.id_get_id().get_name()}
    if kind == isl.ast_expr_type.int:
        return set()
    return set().union(*(_ids(e.op_get_arg(k)) for k in range(e.op_get_n_arg())))


def launch_sizes(km: KernelModel, values: Mapping[str, int]) -> isl.Set:
    """The kernel's sizes fixed at a launch's `values` (those it has)."""
    fixed = " and ".join(f"{isl_name(p)} = {values[p]}" for p in km.scop.params if p in values)
    params = "[" + ", ".join(isl_name(p) for p in km.scop.params) + "]"
    return isl.Set.read_from_str(km.scop.ctx, f"{params} -> {{ : {fixed or 'true'} }}")


@contextlib.contextmanager
def launch_checks(km: KernelModel) -> Iterator[None]:
    """A launch's checks, each launch with isl's whole budget (a time loop launches a kernel
    hundreds of times: seidel_2d's 231 at n = 37), and a budget run out is a refusal."""
    km.scop.ctx.reset_operations()
    try:
        yield
    except isl.Error as e:
        raise NotTranslatable(f"the launch of the kernel `{km.function.name}` is not checked within isl's budget "
                              f"(which elements it touches, whether its columns stay within their rows), so the "
                              f"CPU translation does not run it ({e})") from e  # fmt: skip


def footprint(km: KernelModel, ints: Mapping[str, int], grid: Mapping[str, int]) -> dict[str, int]:
    """Per array parameter, the elements a launch touches from its start (its last index + 1).
    Access by access, the launch's sizes fixed first (`races.touched_at`): the union of
    seidel_2d's 20 accesses (a statement of 33 pieces) over the free sizes ran past isl's budget."""
    values = {**ints, **{f"gridDim.{a}": grid.get(a, 1) for a in km.shape.block_axes}}
    out = {decl.name: 0 for decl in km.scop.arrays if decl.kind == "array"}
    with launch_checks(km):
        at = launch_sizes(km, values)
        linear = {d.name: _linear(km, d.name, d.extents, values) for d in km.scop.arrays if d.name in out}
        for array, touched in races.touched_at(km, at):
            if array in out and not touched.is_empty():
                out[array] = max(out[array], int(touched.apply(linear[array]).dim_max_val(0).to_python()) + 1)
    return out


def _linear(km: KernelModel, array: str, extents: tuple[Affine | None, ...], values: Mapping[str, int]) -> isl.Map:
    """``{ [i, j] -> [i * m + j] }``: an element's offset from the array's start (the maximum
    offset, not each index's: rows of 32 read up to (1, 4) reach 37 elements, not 64)."""
    names = [f"i{d}" for d in range(len(extents))]
    offset, stride = [], 1
    for d in reversed(range(len(extents))):
        offset.append(f"{stride} * {names[d]}")
        extent = extents[d]
        stride *= extent_value(extent, values) if extent is not None and d > 0 else 1
    return isl.Map.read_from_str(km.scop.ctx, f"{{ {array}[{', '.join(names)}] -> [{' + '.join(offset) or '0'}] }}")


def extent_value(extent: Affine, values: Mapping[str, int]) -> int:
    """An array extent (a constant or an affine form of sizes) at `values`."""
    return extent.const + sum(c * values[str(t)] for t, c in extent.coeffs)


@functools.lru_cache(maxsize=64)
def compiled(kernel: ir.Function) -> CpuKernel:
    """`compile_kernel`, once per kernel and process."""
    return compile_kernel(kernel)
