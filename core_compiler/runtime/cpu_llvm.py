"""Differential check of the LLVM CPU backend: the SCoP's original order and hexplore's optimized
(tiled, OpenMP-parallel) order, both JIT-compiled by LLVM at O3 for this CPU, against the original
function compiled by the system C compiler, on the same inputs.

As for `differential.check_opencl`, the function must be one SCoP plus scalar declarations before
it; those are evaluated here and handed to the generated code as initial values of their buffers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from core_compiler.analysis import AnalysisOptions, ScopAnalysis, analyze_file
from core_compiler.codegen.ast_print import evaluate
from core_compiler.codegen.statements import array_layouts
from core_compiler.cpu import CpuOptions
from core_compiler.frontend import ParseOptions
from core_compiler.llvm.cpu import lower_cpu, optimized_ast, original_ast
from core_compiler.llvm.jit import JitFunction, jit_compile, scalar_dtype, set_threads
from core_compiler.runtime.compare import Comparison, compare_arrays
from core_compiler.runtime.differential import scop_values
from core_compiler.runtime.inputs import make_inputs
from core_compiler.runtime.reference import BuildOptions, run_reference
from core_compiler.runtime.signature import Layout, LayoutError, compute_layout, macro_defines
from core_compiler.schedule import ScheduleOptions, compute_schedule
from core_compiler.scop.affine import isl_name


@dataclass(frozen=True, eq=False)
class CpuCase:
    """One function at one size: its SCoP, inputs and the values of its scalars."""

    path: str
    layout: Layout
    analysis: ScopAnalysis
    inputs: Mapping[str, np.ndarray] = field(repr=False)
    ints: Mapping[str, int]
    floats: Mapping[str, float]  # floating parameters and the scalars declared before the SCoP


@dataclass(frozen=True)
class LlvmCpuResult:
    function: str
    params: Mapping[str, int]
    original: Comparison  # JIT'd original order vs the C compiler's build
    optimized: Comparison  # JIT'd optimized order vs the C compiler's build
    reference_s: float
    original_s: float
    optimized_s: float
    parallel_loops: int  # loops of the optimized code run through GOMP_parallel

    @property
    def ok(self) -> bool:
        return self.original.ok and self.optimized.ok

    def report(self) -> str:
        return f"original:\n{self.original.report()}\noptimized:\n{self.optimized.report()}"


def prepare(path: str, function: str, params: Mapping[str, int], size_limits: Mapping[str, str | None] | None = None) -> CpuCase:
    """Parse and analyse once (the layout comes from the same parse as the SCoP)."""
    defines = macro_defines(params, size_limits or {})
    fa = analyze_file(path, parse_options=ParseOptions(defines=defines), options=AnalysisOptions(), only=function)
    if len(fa.functions) != 1:
        raise LayoutError(f"no function {function!r} in {path}")
    (fn,) = fa.functions
    layout = compute_layout(fn.function, params, defines=defines)
    values = scop_values(fn.function, fn.scops, layout)
    return CpuCase(path, layout, values.scop, make_inputs(layout), values.ints, values.floats)


def compile_original(case: CpuCase) -> JitFunction:
    """The SCoP in source order: what LLVM alone makes of the C code."""
    scop = case.analysis.scop
    return jit_compile(lower_cpu(scop, original_ast(scop), f"{scop.function}_s{scop.index}_original", parallel=False))


def compile_optimized(case: CpuCase, parallel: bool = True, schedule: ScheduleOptions | None = None,
                      options: CpuOptions | None = None) -> JitFunction:  # fmt: skip
    """hexplore's schedule, tiled and (with `parallel`) with OpenMP loops."""
    scop = case.analysis.scop
    sched = compute_schedule(scop, case.analysis.deps, schedule or ScheduleOptions())
    ast = optimized_ast(scop, sched, options or CpuOptions(parallel=parallel))
    return jit_compile(lower_cpu(scop, ast, f"{scop.function}_s{scop.index}_hexplore", parallel=parallel))


def run_jit(jit: JitFunction, case: CpuCase) -> tuple[dict[str, np.ndarray], float]:
    """Call `jit` on fresh copies of the case's inputs; the function's arrays and the call's time."""
    arrays = {s.name: np.array(case.inputs[s.name], copy=True, order="C") for s in case.layout.arrays}
    values: dict[str, object] = {**case.ints, **case.floats, **arrays, **_scratch(case)}
    for spec in jit.module.args:
        if spec.name not in values:
            raise KeyError(f"no value for `{spec.name}` of {jit.module.name}")
    elapsed = jit(values)
    return arrays, elapsed


def _scratch(case: CpuCase) -> dict[str, np.ndarray]:
    """Buffers for scalars written in the nest and expanded local scalars, with initial values."""
    scop = case.analysis.scop
    env = {**case.ints, **{isl_name(k): v for k, v in case.ints.items()}}
    out = {}
    for name, lay in array_layouts(scop).items():
        if not lay.is_scalar:
            continue
        size = 1
        for e in lay.extent:
            size *= max(evaluate(e, env) if e is not None and not isinstance(e, str) else 1, 1)
        buf = np.zeros(size, dtype=scalar_dtype(lay.decl.elem_type))
        initial = case.floats.get(name, case.ints.get(name))
        if initial is not None:
            buf[...] = initial
        out[name] = buf
    return out


def check_llvm_cpu(
    path: str,
    function: str,
    params: Mapping[str, int],
    size_limits: Mapping[str, str | None] | None = None,
    parallel: bool = True,
    threads: int | None = None,
    reference: BuildOptions | None = None,
) -> LlvmCpuResult:
    """Both JIT'd orders against the C compiler's build of the original; `threads` sets OpenMP's."""
    case = prepare(path, function, params, size_limits)
    expected = run_reference(path, case.layout, case.inputs, options=reference)
    original, optimized = compile_original(case), compile_optimized(case, parallel)
    got_original, t_original = run_jit(original, case)
    if threads is not None:
        set_threads(threads)
    got_optimized, t_optimized = run_jit(optimized, case)
    return LlvmCpuResult(
        function,
        dict(params),
        compare_arrays(dict(expected.arrays), got_original),
        compare_arrays(dict(expected.arrays), got_optimized),
        expected.elapsed_s,
        t_original,
        t_optimized,
        optimized.module.parallel_loops,
    )
