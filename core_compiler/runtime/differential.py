"""Differential checks: the original function (compiled by the system C compiler) against
hexplore's generated code, on the same deterministic inputs.

The generated OpenCL covers the function's SCoP; the statements before it may only declare
scalars from the parameters (``double float_n = n > 0 ? n : 1.0;``), which are evaluated here.

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
from core_compiler.codegen.opencl import generate_opencl
from core_compiler.cpu import CpuOptions
from core_compiler.frontend import ParseOptions, ir
from core_compiler.gpu import MappingOptions, map_to_gpu
from core_compiler.runtime.compare import Comparison, compare_arrays
from core_compiler.runtime.gpu_opencl import run_program_opencl
from core_compiler.runtime.inputs import make_inputs
from core_compiler.runtime.reference import BuildOptions, ReferenceResult, run_reference
from core_compiler.runtime.signature import Layout, layout_for_source
from core_compiler.schedule import ScheduleOptions, compute_gpu_schedule


class NotCheckable(Exception):
    """The function is not a single SCoP plus scalar set-up, so the check cannot run."""


@dataclass(frozen=True)
class DiffResult:
    function: str
    params: Mapping[str, int]
    comparison: Comparison
    kernels: int
    reference_s: float = 0.0  # the original, compiled by the C compiler
    device_s: float = 0.0  # the generated code: kernels plus transfers (device time)
    bytes_transferred: int = 0  # host <-> device

    @property
    def ok(self) -> bool:
        return self.comparison.ok


def check_opencl(
    path: str,
    function: str,
    params: Mapping[str, int],
    size_limits: Mapping[str, str | None] | None = None,
    mapping: MappingOptions | None = None,
    schedule: ScheduleOptions | None = None,
) -> DiffResult:
    layout = layout_for_source(path, function, params, size_limits=size_limits)
    fa = analyze_file(path, parse_options=ParseOptions(defines=layout.defines), options=AnalysisOptions(), only=function)
    (fn,) = fa.functions
    values = scop_values(fn.function, fn.scops, layout)
    sa, ints, floats, prologue = values.scop, values.ints, values.floats, values.prologue
    inputs = make_inputs(layout)
    reference = run_reference(path, layout, inputs)
    expected = reference.arrays
    schedule = schedule or ScheduleOptions(parallel_reductions=True)
    gpu = map_to_gpu(sa.scop, compute_gpu_schedule(sa.scop, sa.deps, schedule), mapping or MappingOptions(), sa.deps)
    program = generate_opencl(gpu)
    arrays = {s.name: np.array(inputs[s.name], copy=True) for s in layout.arrays}
    result = run_program_opencl(program, arrays, ints, floats, initial_scalars=prologue)
    actual = {name: np.asarray(result.arrays[name]).reshape(np.shape(arrays[name])) for name in arrays if name in result.arrays}
    actual.update({n: arrays[n] for n in arrays if n not in actual})
    comparison = compare_arrays(dict(expected), actual)
    device_s = sum(t.seconds for t in result.launches) + result.copy_in_s + result.copy_out_s
    moved = 2 * sum(int(np.asarray(a).nbytes) for a in arrays.values())  # every buffer in and out
    return DiffResult(function, dict(params), comparison, len(gpu.kernels), reference.elapsed_s, device_s, moved)


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
    fa = analyze_file(path, parse_options=ParseOptions(defines=layout.defines), options=AnalysisOptions(), only=function)
    options = COptions(cpu or CpuOptions(), schedule or ScheduleOptions(), openmp)
    generated = generate_c(fa, Path(path).read_text(encoding="utf-8"), options)
    inputs = make_inputs(layout)
    expected = run_reference(path, layout, inputs)
    build = BuildOptions(extra_flags=("-fopenmp",) if openmp else ())
    actual = run_reference(path, layout, inputs, text=generated.source, options=build)
    comparison = compare_arrays(_outputs(expected), _outputs(actual))
    return DiffResult(function, dict(params), comparison, len(generated.scops))


def _outputs(result: ReferenceResult) -> dict[str, np.ndarray]:
    """Every array after the call, and the return value (as `return`) when there is one."""
    out = {name: np.asarray(a) for name, a in result.arrays.items()}
    if result.returned is not None:
        out["return"] = np.asarray(result.returned)
    return out


@dataclass(frozen=True, eq=False)
class ScopValues:
    scop: ScopAnalysis  # the function's one SCoP
    ints: dict[str, int]  # integer parameters
    floats: dict[str, float]  # floating parameters and the scalars declared before the SCoP
    prologue: dict[str, float]  # the scalars declared before the SCoP alone


def scop_values(fn: ir.Function, scops: tuple[ScopAnalysis, ...], layout: Layout) -> ScopValues:
    """What running generated code for `fn` needs besides its arrays; `NotCheckable` when the
    body is not one SCoP plus scalar set-up."""
    sa = _single_scop(fn, scops)
    floats = {s.name: float(s.value) for s in layout.scalars if not _is_int(s.c_type)}
    ints = {s.name: int(s.value) for s in layout.scalars if _is_int(s.c_type)}
    prologue = _prologue_values(fn, sa, {**ints, **floats})
    return ScopValues(sa, ints, {**floats, **prologue}, prologue)


def _is_int(ctype: str) -> bool:
    return ctype not in ("float", "double", "long double")


def _single_scop(fn: ir.Function, scops: tuple[ScopAnalysis, ...]) -> ScopAnalysis:
    if len(scops) != 1:
        raise NotCheckable(f"`{fn.name}` has {len(scops)} SCoPs; the check needs exactly one")
    sa = scops[0]
    inside = set(map(id, sa.scop.region.stmts))
    for s in fn.body:
        if id(s) not in inside and not isinstance(s, ir.Decl):
            raise NotCheckable(f"`{fn.name}` has a statement outside its SCoP at line {s.range.line}")
    return sa


def _prologue_values(fn: ir.Function, sa: ScopAnalysis, env: dict[str, float | int]) -> dict[str, float]:
    """Scalars declared before the SCoP, evaluated from the parameters."""
    values: dict[str, float] = {}
    first = sa.scop.region.stmts[0]
    for s in fn.body:
        if s is first:
            break
        if isinstance(s, ir.Decl) and s.init is not None:
            value = _eval(s.init, {**env, **values})
            if value is None:
                raise NotCheckable(f"cannot evaluate the initializer of `{s.name}` at line {s.range.line}")
            values[s.name] = value
    return values


_MATH = {"sqrt": math.sqrt, "exp": math.exp, "log": math.log, "fabs": abs, "pow": math.pow, "fmax": max, "fmin": min}


def _eval(e: ir.Expr, env: Mapping[str, float | int]) -> float | None:
    try:
        return float(_value(e, env))
    except (KeyError, ValueError, ZeroDivisionError, TypeError):
        return None


def _value(e: ir.Expr, env: Mapping[str, float | int]) -> float:
    if isinstance(e, ir.IntLit | ir.FloatLit):
        return e.value
    if isinstance(e, ir.Var):
        return env[e.name]
    if isinstance(e, ir.Cast):
        v = _value(e.operand, env)
        return float(int(v)) if isinstance(e.type, ir.Scalar) and e.type.is_integer else v
    if isinstance(e, ir.Unary) and e.op == "-":
        return -_value(e.operand, env)
    if isinstance(e, ir.Ternary):
        return _value(e.then, env) if _value(e.cond, env) else _value(e.other, env)
    if isinstance(e, ir.Call) and e.name in _MATH:
        return float(_MATH[e.name](*(_value(a, env) for a in e.args)))  # type: ignore[operator]
    if isinstance(e, ir.Binary):
        a, b = _value(e.lhs, env), _value(e.rhs, env)
        ops = {
            "+": a + b, "-": a - b, "*": a * b, "<": a < b, "<=": a <= b, ">": a > b,
            ">=": a >= b, "==": a == b, "!=": a != b,
        }
        if e.op == "/":
            return a / b
        return float(ops[e.op])
    raise ValueError(f"cannot evaluate `{e}`")
