"""Differential checks: the original function (compiled by the system C compiler) against
hexplore's generated code, on the same deterministic inputs.

The generated kernels cover the function's SCoP; the statements before it may only declare
scalars from the parameters (``double float_n = n > 0 ? n : 1.0;``), which are evaluated here.
`check_device` runs them on any `device.DeviceRuntime` (OpenCL on PoCL: `check_opencl`; CUDA:
`gpu_cuda.CudaRuntime`), once or several times through the same runtime.

The generated C (`check_c`) is the whole file with the function's SCoPs replaced, built and called
exactly like the original, so any function hexplore finds SCoPs in can be checked.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core_compiler.analysis import AnalysisOptions, ScopAnalysis, analyze_file
from core_compiler.codegen.c import COptions, generate_c
from core_compiler.codegen.opencl import DeviceProgram, generate_opencl
from core_compiler.errors import NotCheckable, NotOneNest
from core_compiler.frontend import ParseOptions, ir
from core_compiler.pipeline import GpuOptions, gpu_program
from core_compiler.runtime.compare import Comparison, compare_arrays
from core_compiler.runtime.device import DeviceRun, DeviceRuntime
from core_compiler.runtime.footprint import check_footprint, fit_layout
from core_compiler.runtime.gpu_opencl import OpenCLRuntime
from core_compiler.runtime.inputs import make_inputs
from core_compiler.runtime.reference import (
    BuildOptions,
    ReferenceLibrary,
    ReferenceResult,
    build_reference,
    run_reference,
    timed_call,
)
from core_compiler.runtime.signature import Layout, layout_for_source
from core_compiler.transform.cpu_schedule import CpuOptions
from core_compiler.transform.gpu_mapping import MappingOptions
from core_compiler.transform.memory import MemoryOptions
from core_compiler.transform.schedule import ScheduleOptions


@dataclass(frozen=True)
class DiffResult:
    function: str
    params: Mapping[str, int]
    comparison: Comparison  # of the first run that differs, else of the last
    kernels: int
    reference_s: float = 0.0  # the original, compiled by the C compiler (the fastest call)
    device_s: float = 0.0  # the generated code: kernels plus transfers (device time, fastest run)
    bytes_transferred: int = 0  # host <-> device, by the first run
    bytes_transferred_repeat: int | None = None  # by each later run (None: one run)
    runs: int = 1
    failed_run: int = 0  # 1-based number of the first run that differs; 0: none

    @property
    def ok(self) -> bool:
        return self.comparison.ok


@dataclass(frozen=True, eq=False)
class DeviceCase:
    """A function mapped to the GPU at one size, ready to run on any device runtime."""

    path: str
    layout: Layout
    program: DeviceProgram
    values: ScopValues
    reference: ReferenceLibrary

    def inputs(self) -> dict[str, np.ndarray]:
        """The deterministic inputs, created afresh (identical every time)."""
        return make_inputs(self.layout)

    def run(self, runtime: DeviceRuntime, inputs: Mapping[str, np.ndarray]) -> tuple[DeviceRun, Comparison, float]:
        """`inputs` through the reference and through `runtime`: the device run, the comparison
        of every array, and the reference's time."""
        expected = timed_call(self.reference, self.layout, inputs, rounds=4)
        run, outputs = self.run_generated(runtime, inputs)
        return run, compare_arrays(reference_outputs(expected), outputs), expected.elapsed_s

    def run_generated(self, runtime: DeviceRuntime, inputs: Mapping[str, np.ndarray]) -> tuple[DeviceRun, dict[str, np.ndarray]]:
        """`inputs` through `runtime` only: the run and what it is checked on (the function's
        arrays and its return value)."""
        v = self.values
        arrays = {s.name: np.array(inputs[s.name], copy=True) for s in self.layout.arrays}
        if v.result is not None:  # the scalars it may read come back too
            arrays.update({a.name: np.zeros(1) for a in v.scop.scop.arrays if a.kind != "array" and not a.extents})
        run = runtime.run(self.program, arrays, v.ints, v.floats, initial_scalars=v.prologue)
        actual = {n: np.asarray(run.arrays[n]).reshape(np.shape(a)) if n in run.arrays else a for n, a in arrays.items()}
        outputs = {s.name: actual[s.name] for s in self.layout.arrays}
        outputs.update(result_outputs(v, actual, self.layout.return_dtype))
        return run, outputs


# The mapping of the runs on a device where none is given: one shared copy of each tile. On PoCL
# (the CPU's OpenCL) double-buffered ones (`gpu_mapping._buffers`) ran slower (benchmarks/
# bench_double_buffer.py: mvt 0.63x, atax 0.82x, gemm 0.87x, 2mm 0.95x, gesummv 0.97x): it has no
# asynchronous copy to overlap, and the tile's parity in every subscript costs its work-item loops.
# On a GPU the PTX path's double-buffered lowering has not run yet; its single-buffered code matched
# 30/30 on an H100. `compile` writes two copies (the CUDA C's with cp.async).
POCL = GpuOptions(mapping=MappingOptions(memory=MemoryOptions(double_buffer=False)))


def device_case(
    path: str,
    function: str,
    params: Mapping[str, int],
    size_limits: Mapping[str, str | None] | None = None,
    gpu: GpuOptions | None = None,
    parse: ParseOptions | None = None,
) -> DeviceCase:
    """Analyse `function`, map its SCoP to the GPU (`gpu`, else for PoCL) and build the
    reference; `NotCheckable` when the function is not one SCoP plus scalar set-up."""
    gpu = gpu or POCL
    layout = layout_for_source(path, function, params, size_limits=size_limits, options=parse)
    base = parse or ParseOptions()
    options = ParseOptions(base.include_dirs, layout.defines, base.extra_args)
    fa = analyze_file(path, parse_options=options, options=AnalysisOptions(), only=function)
    (fn,) = fa.functions
    layout = fit_layout(fn.function, fn.scops, layout)
    values = scop_values(fn.function, fn.scops, layout)
    sa = values.scop
    program = generate_opencl(gpu_program(sa, gpu), gpu.layout)
    return DeviceCase(path, layout, program, values, build_reference(path, layout))


def check_device(
    path: str,
    function: str,
    params: Mapping[str, int],
    runtime: DeviceRuntime,
    size_limits: Mapping[str, str | None] | None = None,
    gpu: GpuOptions | None = None,
    repeat: int = 1,
    parse: ParseOptions | None = None,
) -> DiffResult:
    """The generated kernels on `runtime` against the original, `repeat` times on the same
    (re-created) inputs through the same runtime, so later runs find read-only arrays resident."""
    case = device_case(path, function, params, size_limits, gpu, parse)
    results = [case.run(runtime, case.inputs()) for _ in range(max(repeat, 1))]
    failed = next((k for k, (_, cmp, _) in enumerate(results, 1) if not cmp.ok), 0)
    comparison = results[failed - 1 if failed else -1][1]
    runs = [r for r, _, _ in results]
    later = max((r.bytes_moved for r in runs[1:]), default=None)
    return DiffResult(
        function, dict(params), comparison, len(case.program.gpu.kernels),
        min(t for _, _, t in results), min(r.device_s for r in runs), runs[0].bytes_moved, later,
        len(runs), failed,
    )  # fmt: skip


def check_opencl(
    path: str,
    function: str,
    params: Mapping[str, int],
    size_limits: Mapping[str, str | None] | None = None,
    gpu: GpuOptions | None = None,
    parse: ParseOptions | None = None,
) -> DiffResult:
    """`check_device` on a fresh `OpenCLRuntime` (PoCL), once."""
    return check_device(path, function, params, OpenCLRuntime(), size_limits, gpu, parse=parse)


def check_c(
    path: str,
    function: str,
    params: Mapping[str, int],
    size_limits: Mapping[str, str | None] | None = None,
    openmp: bool = False,
    cpu: CpuOptions | None = None,
    schedule: ScheduleOptions | None = None,
) -> DiffResult:
    """The file with `function`'s SCoPs replaced by generated C, against the original.

    Both are built by the system C compiler (the generated one with ``-fopenmp`` when `openmp`;
    ``OMP_NUM_THREADS`` sets the threads) and called on the same inputs; the arrays and the return
    value must match. `DiffResult.kernels` counts the SCoPs replaced.
    """
    layout = layout_for_source(path, function, params, size_limits=size_limits)
    fa = analyze_file(path, parse_options=layout.parse_options, options=AnalysisOptions(), only=function)
    layout = fit_layout(fa.functions[0].function, fa.functions[0].scops, layout) if fa.functions else layout
    options = COptions(cpu or CpuOptions(), schedule or ScheduleOptions(), openmp)
    generated = generate_c(fa, Path(path).read_text(encoding="utf-8"), options)
    inputs = make_inputs(layout)
    expected = run_reference(path, layout, inputs)
    build = BuildOptions(extra_flags=("-fopenmp",) if openmp else ())
    actual = run_reference(path, layout, inputs, text=generated.source, options=build)
    comparison = compare_arrays(reference_outputs(expected), reference_outputs(actual))
    return DiffResult(function, dict(params), comparison, len(generated.scops))


def reference_outputs(result: ReferenceResult) -> dict[str, np.ndarray]:
    """Every array after the call, and the return value (as `return`) when there is one, of its
    C type: a `float` is compared at float tolerance, not as a double."""
    out = {name: np.asarray(a) for name, a in result.arrays.items()}
    if result.returned is not None:
        out["return"] = np.asarray(result.returned, dtype=result.return_dtype)
    return out


@dataclass(frozen=True, eq=False)
class ScopValues:
    scop: ScopAnalysis  # the function's one SCoP
    ints: dict[str, int]  # integer parameters
    floats: dict[str, float]  # floating parameters and the scalars declared before the SCoP
    prologue: dict[str, float | int]  # the scalars declared before the SCoP alone
    arrays: frozenset[str] = frozenset()  # the function's array parameters
    result: ir.Expr | None = None  # what the function returns after the SCoP


def scop_values(fn: ir.Function, scops: tuple[ScopAnalysis, ...], layout: Layout) -> ScopValues:
    """What running generated code for `fn` needs besides its arrays; `NotCheckable` when the
    body is not one SCoP plus scalar set-up."""
    sa, result, guards = _single_scop(fn, scops)
    floats = {s.name: float(s.value) for s in layout.scalars if s.name not in layout.ints}
    ints = layout.ints
    prologue = _prologue_values(fn, sa, {**ints, **floats})
    _check_guards(fn, guards, {**ints, **floats, **prologue, **{s.name: 1 for s in layout.arrays}})
    ints.update({k: v for k, v in prologue.items() if isinstance(v, int) and k in sa.scop.params})
    check_footprint(sa.scop, layout, ints)
    arrays = frozenset(s.name for s in layout.arrays)
    if result is not None:
        written = {a.name: 1.0 for a in sa.scop.arrays if a.kind != "array" and not a.extents}
        trial = {**ints, **floats, **prologue, **written, **{s.name: np.ones(s.shape) for s in layout.arrays}}
        if _eval(result, trial) is None:
            raise NotCheckable(f"cannot compute what `{fn.name}` returns (line {_line(fn)}) from its arrays and scalars")
    return ScopValues(sa, ints, {**floats, **prologue}, prologue, arrays, result)


def _line(fn: ir.Function) -> int:
    return fn.body[-1].range.line


def _single_scop(fn: ir.Function, scops: tuple[ScopAnalysis, ...]) -> tuple[ScopAnalysis, ir.Expr | None, list[ir.If]]:
    """The one SCoP, what the function returns after it (``return sqrt(s);``), if anything, and
    the ``if (n <= 0) return 0.0;`` guards before it."""
    if len(scops) != 1:
        raise (NotOneNest if scops else NotCheckable)(
            f"`{fn.name}` has {len(scops)} loop nests hexplore models; a run checks a function that is one "
            "such nest (plus scalar set-up and a return)"
        )
    sa = scops[0]
    inside = set(map(id, sa.scop.region.stmts))
    body, result = list(fn.body), None
    last = body[-1] if body else None
    if isinstance(last, ir.Jump) and last.kind == "return" and last.value is not None and id(last) not in inside:
        body, result = body[:-1], last.value
    first = sa.scop.region.stmts[0]
    before = body[: next((k for k, s in enumerate(body) if s is first), 0)]
    guards = [s for s in before if isinstance(s, ir.If) and _returns_early(s)]
    for s in body:
        if id(s) not in inside and not isinstance(s, ir.Decl) and s not in guards:
            raise NotOneNest(
                f"`{fn.name}` has code outside the loop nest hexplore models (line {s.range.line}); a run "
                "checks a function that is one such nest (plus scalar set-up and a return)"
            )
    return sa, result, guards


def _returns_early(s: ir.If) -> bool:
    """``if (cond) return value;``"""
    return not s.other and len(s.then) == 1 and isinstance(s.then[0], ir.Jump) and s.then[0].kind == "return"


def _check_guards(fn: ir.Function, guards: list[ir.If], env: Mapping[str, object]) -> None:
    """`NotCheckable` unless every early return is known not to happen at these sizes (array
    pointers are not NULL)."""
    for g in guards:
        taken = _eval(g.cond, env)
        if taken is None:
            raise NotCheckable(f"cannot tell whether `{fn.name}` returns early at line {g.range.line} at these sizes")
        if taken:
            raise NotCheckable(
                f"at these sizes `{fn.name}` returns at line {g.range.line}, before its loops run; "
                "choose sizes where they run"
            )


def result_outputs(values: ScopValues, arrays: Mapping[str, np.ndarray], dtype: np.dtype | None) -> dict[str, np.ndarray]:
    """``{"return": value}`` as `_outputs` has it for the reference: the function's return
    expression evaluated on what the run left in `arrays` (its arrays and the scalars the SCoP
    wrote); {} for a function that returns nothing."""
    if values.result is None or dtype is None:
        return {}
    env = {**values.ints, **values.floats, **{n: a.reshape(-1)[0] if a.size == 1 and n not in values.arrays else a for n, a in arrays.items()}}
    value = _eval(values.result, env)
    return {"return": np.asarray(dtype.type(np.nan if value is None else value))}  # C's rounding and type, as the reference


def _prologue_values(fn: ir.Function, sa: ScopAnalysis, env: dict[str, float | int]) -> dict[str, float | int]:
    """Scalars declared before the SCoP, evaluated from the parameters (integers with C's
    integer arithmetic: ``const int h = n / 2;`` is a size of the loops)."""
    values: dict[str, float | int] = {}
    first = sa.scop.region.stmts[0]
    for s in fn.body:
        if s is first:
            break
        if isinstance(s, ir.Decl) and fn.param(s.name) is not None:
            continue  # a `const` table: an input (`ir.Function.globals`)
        if isinstance(s, ir.Decl) and s.init is not None and isinstance(s.type, ir.Array):
            raise NotCheckable(
                f"`{s.name}` (line {s.range.line}) is a local array with initial values; a run cannot pass "
                "them to the generated code yet (hexplore still analyses and compiles the loops)"
            )
        if isinstance(s, ir.Decl) and s.init is not None:
            value = _eval(s.init, {**env, **values})
            if value is None:
                raise NotCheckable(f"cannot evaluate the initializer of `{s.name}` at line {s.range.line}")
            integer = isinstance(s.type, ir.Scalar) and s.type.is_integer
            values[s.name] = int(value) if integer else value
    return values


_MATH = {"sqrt": math.sqrt, "exp": math.exp, "log": math.log, "fabs": abs, "pow": math.pow, "fmax": max, "fmin": min}


def _eval(e: ir.Expr, env: Mapping[str, object]) -> float | None:
    """`e` on the scalars (and arrays, numpy) of `env`; None when it cannot be computed here."""
    try:
        return float(_value(e, env))
    except (KeyError, ValueError, ZeroDivisionError, TypeError, IndexError):
        return None


def _value(e: ir.Expr, env: Mapping[str, object]) -> float:
    """Python ints stand for C integers (``/`` truncates), floats for floating values."""
    if isinstance(e, ir.IntLit | ir.FloatLit):
        return e.value
    if isinstance(e, ir.Var):
        v = env[e.name]
        return v if isinstance(v, int) else float(v)  # type: ignore[arg-type]
    if isinstance(e, ir.Subscript):
        array = env[e.base]
        index = tuple(int(_value(i, env)) for i in e.indices)
        if not isinstance(array, np.ndarray) or min(index, default=0) < 0:
            raise IndexError(e.base)
        return float(array[index])
    if isinstance(e, ir.Cast):
        v = _value(e.operand, env)
        return int(v) if isinstance(e.type, ir.Scalar) and e.type.is_integer else float(v)
    if isinstance(e, ir.Unary) and e.op == "-":
        return -_value(e.operand, env)
    if isinstance(e, ir.Unary) and e.op == "!":
        return float(not _value(e.operand, env))
    if isinstance(e, ir.Ternary):
        return _value(e.then, env) if _value(e.cond, env) else _value(e.other, env)
    if isinstance(e, ir.Call) and e.name in _MATH:
        return float(_MATH[e.name](*(_value(a, env) for a in e.args)))  # type: ignore[operator]
    if isinstance(e, ir.Binary):
        a, b = _value(e.lhs, env), _value(e.rhs, env)
        ops = {
            "+": a + b, "-": a - b, "*": a * b, "<": a < b, "<=": a <= b, ">": a > b,
            ">=": a >= b, "==": a == b, "!=": a != b, "&&": bool(a) and bool(b), "||": bool(a) or bool(b),
        }
        integers = isinstance(a, int) and isinstance(b, int)
        if e.op == "/":
            return int(math.copysign(abs(a) // abs(b), a * b)) if integers else a / b  # C truncates
        if e.op == "%":
            return int(math.fmod(a, b)) if integers else math.fmod(a, b)  # C's sign: the dividend's
        return ops[e.op] if e.op in "+-*" else float(ops[e.op])
    raise ValueError(f"cannot evaluate `{e}`")
