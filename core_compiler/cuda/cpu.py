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

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import islpy as isl
import numpy as np

from core_compiler.codegen.ast_print import evaluate
from core_compiler.codegen.statements import array_layouts
from core_compiler.cuda import races
from core_compiler.cuda.grid import KernelModel, constant, model_kernel
from core_compiler.errors import UsageError
from core_compiler.frontend import ir
from core_compiler.llvm.cpu_lowering import lower_cpu
from core_compiler.llvm.jit import JitFunction, jit_compile, scalar_dtype
from core_compiler.scop.affine import Affine, isl_name
from core_compiler.scop.model import Statement
from core_compiler.source import SourceRange
from core_compiler.transform.cpu_schedule import PARALLEL_MARK, build_ast


class NotTranslatable(UsageError):
    """A kernel or host function the CPU translation does not run, said for people."""


def lockstep_schedule(km: KernelModel) -> isl.Schedule:
    """Blocks (one band, marked parallel), then each thread's time down to its innermost loop that
    holds a barrier, then the threads, then the rest of its time: a thread runs a loop without a
    barrier (`for k: sum += ...`) through before the next thread starts it."""
    timing = races.Timing(km)
    depth = timing.project.dim(isl.dim_type.in_)
    names = [f"t{k}" for k in range(depth)]
    blocks = [names[2 * k + 1] for k in range(km.n_block)]
    threads = [names[2 * k + 1] for k in range(km.n_block, km.n_grid)]
    synced = {loop.id for b in timing.barriers for loop in b.info.loops}

    def order(st: Statement) -> isl.Map:
        local = names[2 * km.n_grid :]
        k = sum(1 for loop in st.info.loops[km.n_grid :] if loop.id in synced)
        cut = 2 * k + 1 if timing.barriers else 0  # without barriers each thread runs through
        out = local[:cut] + threads + local[cut:]
        return isl.Map.read_from_str(km.scop.ctx, f"{{ [{', '.join(names)}] -> [{', '.join(out)}] }}")

    inner = _union(km, lambda st: st.schedule.apply_range(order(st)))
    schedule = isl.Schedule.from_domain(km.scop.domains()).insert_partial_schedule(
        isl.MultiUnionPwAff.from_union_map(inner)
    )
    if not blocks:
        return schedule
    outer = isl.Map.read_from_str(km.scop.ctx, f"{{ [{', '.join(names)}] -> [{', '.join(blocks)}] }}")
    schedule = schedule.insert_partial_schedule(
        isl.MultiUnionPwAff.from_union_map(_union(km, lambda st: st.schedule.apply_range(outer)))
    )
    band = schedule.get_root().child(0)
    return band.insert_mark(isl.Id(PARALLEL_MARK, context=km.scop.ctx)).get_schedule()


def _union(km: KernelModel, f: object) -> isl.UnionMap:
    out = isl.UnionMap.empty(km.scop.domains().get_space())
    for st in km.scop.statements:
        out = out.union(isl.UnionMap.from_map(f(st)))  # type: ignore[operator]
    return out


class CpuKernel:
    """A kernel's CPU translation, JIT-compiled for all cores, and for one thread when first asked."""

    def __init__(self, model: KernelModel, ast: isl.AstNode, name: str) -> None:
        self.model, self._ast, self._name = model, ast, name
        self.jit = jit_compile(lower_cpu(model.scop, ast, name, parallel=True))

    @functools.cached_property
    def sequential(self) -> JitFunction:
        return jit_compile(lower_cpu(self.model.scop, self._ast, self._name + "_seq", parallel=False))

    def __call__(self, values: Mapping[str, object], grid: Mapping[str, int], parallel: bool = True) -> float:
        """Run on `values` (the kernel's arguments by name: arrays written in place) over `grid`
        (blocks along x, y, z); seconds."""
        ints = {f"gridDim.{a}": grid.get(a, 1) for a in self.model.shape.block_axes}
        env = {**{k: v for k, v in values.items() if isinstance(v, int)}, **ints}
        jit = self.jit if parallel else self.sequential
        scratch = _scratch(self.model, {**env, **{isl_name(k): v for k, v in env.items()}})
        args = {**values, **ints, **scratch}
        return jit(args)


def compile_kernel(fn: ir.Function) -> CpuKernel:
    """The kernel's CPU translation, or `NotTranslatable` saying why not."""
    km, _ = model_kernel(fn, 4_000_000)
    if km is None:
        raise NotTranslatable(f"the kernel `{fn.name}` is not modeled, so it has no CPU translation")
    timing = races.Timing(km)
    if races.races(km, timing) or races.divergent_barriers(km, timing):
        raise NotTranslatable(f"the kernel `{fn.name}` has a data race or a divergent barrier: its result "
                              "depends on how its threads interleave, so no CPU translation reproduces it")  # fmt: skip
    return CpuKernel(km, build_ast(km.scop, lockstep_schedule(km)), f"hx_cuda_{fn.name}")


def _scratch(km: KernelModel, env: Mapping[str, int]) -> dict[str, np.ndarray]:
    """Zeroed buffers for the model's expanded locals (`__shared__` arrays, per-thread values)."""
    out = {}
    for name, lay in array_layouts(km.scop).items():
        if lay.decl.kind == "array":
            continue
        size = 1
        for e in lay.extent:
            size *= max(evaluate(e, dict(env)) if e is not None and not isinstance(e, str) else 1, 1)
        out[name] = np.zeros(size, dtype=scalar_dtype(lay.decl.elem_type))
    return out


def footprint(km: KernelModel, ints: Mapping[str, int], grid: Mapping[str, int]) -> dict[str, int]:
    """Per array parameter, the elements a launch touches from its start (its last index + 1)."""
    values = {**ints, **{f"gridDim.{a}": grid.get(a, 1) for a in km.shape.block_axes}}
    fixed = " and ".join(f"{isl_name(p)} = {values[p]}" for p in km.scop.params if p in values)
    params = "[" + ", ".join(isl_name(p) for p in km.scop.params) + "]"
    at = isl.Set.read_from_str(km.scop.ctx, f"{params} -> {{ : {fixed or 'true'} }}")
    out: dict[str, int] = {}
    for decl in km.scop.arrays:
        if decl.kind != "array":
            continue
        touched = km.scop.reads(decl.name).union(km.scop.writes(decl.name)).range()
        box = isl.Set.from_union_set(touched).intersect_params(at)
        if box.is_empty():
            out[decl.name] = 0
            continue
        last, stride = 0, 1
        for d in reversed(range(box.dim(isl.dim_type.set))):
            last += stride * int(box.dim_max_val(d).to_python())
            extent = decl.extents[d]
            stride *= extent_value(extent, values) if extent is not None and d > 0 else 1
        out[decl.name] = last + 1
    return out


def extent_value(extent: Affine, values: Mapping[str, int]) -> int:
    """An array extent (a constant or an affine form of sizes) at `values`."""
    return extent.const + sum(c * values[str(t)] for t, c in extent.coeffs)


# ------------------------------------------------------------------------------ host functions


@dataclass
class HostRun:
    """A host function run on the CPU: its arrays after the run, and each launch's seconds; with
    `dry`, nothing runs and `needs` gets the elements each array must have."""

    arrays: dict[str, np.ndarray]
    launches: list[tuple[str, float]] = field(default_factory=list)
    dry: bool = False
    needs: dict[str, int] = field(default_factory=dict)
    launcher: Launcher | None = None  # how a launch runs (`devices.Devices` splits it); None: at once


Launcher = Callable[[ir.Function, "CpuKernel", dict[str, object], dict[str, int], bool], float]


def run_host(functions: Mapping[str, ir.Function], host: str, arrays: Mapping[str, np.ndarray],
             scalars: Mapping[str, int | float], parallel: bool = True, launcher: Launcher | None = None) -> HostRun:  # fmt: skip
    """Run `host`, whose body is kernel launches (in `for` loops, with `int` declarations),
    with its array parameters bound to `arrays` (written in place) and its scalars to `scalars`;
    `launcher` runs each launch (default: the whole grid at once)."""
    return _run(functions, host, HostRun(dict(arrays), launcher=launcher), scalars, parallel)


def host_needs(functions: Mapping[str, ir.Function], host: str, arrays: tuple[str, ...],
               scalars: Mapping[str, int | float]) -> dict[str, int]:  # fmt: skip
    """The elements each array parameter of `host` must have for a run at `scalars`."""
    empty = {a: np.zeros(0) for a in arrays}
    return _run(functions, host, HostRun(empty, dry=True), scalars, False).needs


def _run(functions: Mapping[str, ir.Function], host: str, run: HostRun, scalars: Mapping[str, int | float],
         parallel: bool) -> HostRun:  # fmt: skip
    if host not in functions:
        raise NotTranslatable(f"no function `{host}` in this file")
    launches = {la.range: la for k in functions.values() for la in k.launches}
    _block(functions[host].body, functions, launches, dict(scalars), run, parallel)
    return run


def _block(stmts: tuple[ir.Stmt, ...], functions: Mapping[str, ir.Function], launches: Mapping[SourceRange, ir.Launch],
           env: dict[str, int | float], run: HostRun, parallel: bool) -> None:  # fmt: skip
    for s in stmts:
        if isinstance(s, ir.Decl) and isinstance(s.type, ir.OtherType):
            continue  # `dim3 block(16, 16);`: read by the launch
        if isinstance(s, ir.Decl) and s.init is not None:
            env[s.name] = _int(s.init, env)
        elif isinstance(s, ir.For):
            env[s.var] = _int(s.init, env)
            while _int(s.cond, env):
                _block(s.body, functions, launches, env, run, parallel)
                env[s.var] = int(env[s.var]) + s.step
        elif isinstance(s, ir.ExprStmt) and isinstance(s.expr, ir.Call) and s.range in launches:
            _launch(s.expr, launches[s.range], functions, env, run, parallel)
        else:
            raise NotTranslatable(f"line {s.range.line}: the CPU translation runs host code made of kernel "
                                  "launches, `for` loops and `int` declarations only")  # fmt: skip


def bind(kernel: ir.Function, call: ir.Call, launch: ir.Launch, env: Mapping[str, int | float],
         arrays: Mapping[str, np.ndarray]) -> tuple[dict[str, object], dict[str, int]]:  # fmt: skip
    """A launch's arguments by the kernel's parameter names (the caller's arrays, numbers computed
    from `env`) and its grid."""
    values: dict[str, object] = {}
    for param, arg in zip(kernel.params, call.args, strict=True):
        if isinstance(param.type, ir.Pointer | ir.Array):  # None where the caller's array is not given
            values[param.name] = arrays.get(arg.name) if isinstance(arg, ir.Var) else None
        else:
            values[param.name] = _number(arg, env, param.type)
    return values, {a: _int(e, env) for a, e in zip("xyz", launch.grid_exprs, strict=False)}


def _launch(call: ir.Call, launch: ir.Launch, functions: Mapping[str, ir.Function], env: dict[str, int | float],
            run: HostRun, parallel: bool) -> None:  # fmt: skip
    kernel = functions[call.name]
    cpu = compiled(kernel)
    values, grid = bind(kernel, call, launch, env, run.arrays)
    if any(v is None for v in values.values()):
        raise NotTranslatable(f"line {launch.range.line}: `{call.name}` is given an array that is not a parameter of the host function")
    need = footprint(cpu.model, {k: v for k, v in values.items() if isinstance(v, int)}, grid)
    if run.dry:
        for param, arg in zip(kernel.params, call.args, strict=True):
            if param.name in need and isinstance(arg, ir.Var):
                run.needs[arg.name] = max(run.needs.get(arg.name, 0), need[param.name])
        return
    for name, count in need.items():
        have = values[name]
        assert isinstance(have, np.ndarray)
        if have.size < count:
            raise NotTranslatable(f"`{call.name}` at line {launch.range.line} touches {count} elements of "
                                  f"`{name}`, which has {have.size}")  # fmt: skip
    seconds = run.launcher(kernel, cpu, values, grid, parallel) if run.launcher else cpu(values, grid, parallel)
    run.launches.append((call.name, seconds))


@functools.lru_cache(maxsize=64)
def compiled(kernel: ir.Function) -> CpuKernel:
    """`compile_kernel`, once per kernel and process."""
    return compile_kernel(kernel)


def _int(e: ir.Expr, env: Mapping[str, int | float]) -> int:
    value = constant(e, {k: int(v) for k, v in env.items()})
    if value is None:
        raise NotTranslatable(f"line {e.range.line}: `{e}` is not an integer the host code computes from its sizes")
    return value


def _number(e: ir.Expr, env: Mapping[str, int | float], typ: ir.CType) -> int | float:
    if isinstance(typ, ir.Scalar) and not typ.is_integer:
        if isinstance(e, ir.Var) and e.name in env:
            return float(env[e.name])
        if isinstance(e, ir.FloatLit):
            return float(e.value)
    return _int(e, env)


# ------------------------------------------------------------------------------ `hexplore run` on CUDA


@dataclass(frozen=True)
class CudaRunReport:
    """`hexplore run FILE.cu --function HOST`: the host function run through the CPU translation on
    all cores, checked against the same translation on one thread (blocks in order)."""

    function: str
    sizes: dict[str, int]
    launches: tuple[tuple[str, float, float], ...]  # kernel, seconds in parallel, seconds on one thread
    mismatched: tuple[str, ...]  # arrays that differ between the two runs

    @property
    def match(self) -> bool:
        return not self.mismatched

    def text(self) -> str:
        sizes = ", ".join(f"{k}={v}" for k, v in self.sizes.items())
        lines = [f"CUDA on the CPU: {self.function}({sizes}), {len(self.launches)} launch(es), each kernel "
                 "translated from its model (blocks in parallel with OpenMP, threads as loops between barriers)"]  # fmt: skip
        width = max((len(k) for k, _, _ in self.launches), default=0)
        for kernel, par, seq in self.launches:
            lines.append(f"  {kernel:<{width}}  all cores {_ms(par)}  one thread {_ms(seq)}")
        verdict = "match" if self.match else f"DIFFER: {', '.join(self.mismatched)}"
        lines.append(f"arrays on all cores vs one thread: {verdict}")
        return "\n".join(lines)


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:8.3f} ms"


def check_host(path: str, text: str | None, host: str, sizes: Mapping[str, int]) -> CudaRunReport:
    """Run `host` of `path` on deterministic inputs twice: in parallel and on one thread."""
    from core_compiler.frontend import run_frontend

    functions = {f.name: f for f in run_frontend(path, text).functions}
    if host not in functions:
        raise NotTranslatable(f"no function `{host}` in {path}")
    fn = functions[host]
    pointers = [p for p in fn.params if isinstance(p.type, ir.Pointer)]
    scalars: dict[str, int | float] = {p.name: sizes.get(p.name, 64) for p in fn.params if p not in pointers}
    needs = host_needs(functions, host, tuple(p.name for p in pointers), scalars)
    rng = np.random.default_rng(0)
    inputs = {p.name: _random(p.type, needs.get(p.name, 0), rng) for p in pointers}
    runs = []
    for parallel in (True, False):
        arrays = {k: v.copy() for k, v in inputs.items()}
        runs.append((arrays, run_host(functions, host, arrays, scalars, parallel)))
    (par, par_run), (seq, seq_run) = runs
    differ = tuple(k for k in inputs if not np.allclose(par[k], seq[k], rtol=1e-5, atol=1e-6, equal_nan=True))
    timed = tuple((k, a, b) for (k, a), (_, b) in zip(par_run.launches, seq_run.launches, strict=True))
    return CudaRunReport(host, {k: int(v) for k, v in scalars.items()}, timed, differ)


def _random(typ: ir.CType, count: int, rng: np.random.Generator) -> np.ndarray:
    assert isinstance(typ, ir.Pointer)
    elem = typ.pointee
    dtype = scalar_dtype(str(elem).replace("const ", "")) if isinstance(elem, ir.Scalar) else np.dtype(np.float64)
    size = max(count, 1)
    if dtype.kind == "f":
        return rng.random(size).astype(dtype)
    return rng.integers(0, 10, size).astype(dtype)
