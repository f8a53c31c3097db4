"""Run a mapped program's OpenCL code on PoCL: walk the host AST for concrete parameter values,
launch each kernel, and return the arrays.

Arrays are passed as the original function's arguments (numpy arrays named like the C
parameters); scalars written inside the loop nest and expanded local scalars get buffers of their
own, sized from the program's layouts.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from core_compiler.codegen.ast_print import call_parts, evaluate, walk_host
from core_compiler.codegen.opencl import DeviceProgram
from core_compiler.runtime.opencl import BufferArg, Launch, OpenCLResult, ScalarArg, run_opencl
from core_compiler.scop.affine import isl_name

_DTYPES = {"double": "float64", "float": "float32", "int": "int32", "long": "int64", "unsigned int": "uint32"}


def numpy_dtype(ctype: str) -> str:
    return _DTYPES.get(ctype, "float64")


def launches_for(program: DeviceProgram, ints: Mapping[str, int], floats: Mapping[str, float]) -> list[Launch]:
    """The kernel launches the host code makes for these parameter values, in order."""
    out: list[Launch] = []
    kernels = {k.name: k for k in program.gpu.kernels}

    def on_user(expr, env: dict[str, int]) -> None:  # type: ignore[no-untyped-def]
        name, args = call_parts(expr)
        kernel = kernels[name]
        host_vals = [evaluate(a, env) for a in args]
        lo = [evaluate(e, {**env, **dict(zip(kernel.host_params, host_vals, strict=True))}) for e in kernel.grid_min]
        hi = [evaluate(e, {**env, **dict(zip(kernel.host_params, host_vals, strict=True))}) for e in kernel.grid_max]
        blocks = [max(h - lo_ + 1, 0) for lo_, h in zip(lo, hi, strict=True)]
        if kernel.shape.grid:  # more tiles than blocks: each block takes every grid-th tile
            blocks = [min(n, cap) for n, cap in zip(blocks, kernel.shape.grid, strict=True)]
        block = list(kernel.block)
        grid = blocks + [1] * (len(block) - len(blocks))
        global_size = tuple(g * b for g, b in zip(reversed(grid), reversed(block), strict=True)) or (1,)
        local_size = tuple(reversed(block)) or (1,)
        values: dict[str, int | float] = {**ints, **dict(zip(kernel.host_params, host_vals, strict=True))}
        values.update({f"o{k}": v for k, v in enumerate(lo)})
        kargs: list[BufferArg | ScalarArg] = []
        for spec in program.args[name]:
            if spec.kind == "array":
                kargs.append(BufferArg(spec.name))
            elif spec.kind == "scalar":
                kargs.append(ScalarArg(float(floats[spec.name]), numpy_dtype(spec.ctype)))
            else:
                kargs.append(ScalarArg(int(values[spec.name]), "int32"))
        out.append(Launch(name, global_size, local_size, tuple(kargs)))

    walk_host(program.gpu.host_ast, {**ints, **{isl_name(k): v for k, v in ints.items()}}, on_user)
    return out


def scratch_arrays(program: DeviceProgram, ints: Mapping[str, int]) -> dict[str, np.ndarray]:
    """Buffers for scalars written in the nest and expanded local scalars."""
    out = {}
    for name, lay in program.printer.arrays.items():
        if not lay.is_scalar:
            continue
        size = 1
        for e in lay.extent:
            size *= max(evaluate(e, dict(ints)) if e is not None and not isinstance(e, str) else 1, 1)
        out[name] = np.zeros(size, dtype=numpy_dtype(lay.decl.elem_type))
    return out


def run_program_opencl(
    program: DeviceProgram,
    arrays: Mapping[str, np.ndarray],
    ints: Mapping[str, int],
    floats: Mapping[str, float],
    initial_scalars: Mapping[str, float] | None = None,
) -> OpenCLResult:
    buffers = dict(arrays)
    scratch = scratch_arrays(program, ints)
    for name, value in (initial_scalars or {}).items():
        if name in scratch:
            scratch[name][...] = value
    buffers.update(scratch)
    used = {spec.name for specs in program.args.values() for spec in specs if spec.kind == "array"}
    buffers = {n: a for n, a in buffers.items() if n in used}
    launches = launches_for(program, ints, floats)
    return run_opencl(program.source, launches, buffers, build_options=pocl_build_options(program))


def pocl_build_options(program: DeviceProgram) -> tuple[str, ...]:
    """PoCL 3.0's optimizer (pocl-binary-distribution 3.0, the newest on PyPI) miscompiles some
    kernels with work-group barriers inside loops: gemm with register tiles and 2mm with a shared
    tile give wrong results, differing from run to run, and exact ones with `-cl-opt-disable`
    (reproduced outside hexplore with pyopencl alone). Kernels with barriers are built without
    optimization; the others keep PoCL's optimizer."""
    has_barriers = any(ph.ast is None for k in program.gpu.kernels for ph in k.phases.values())
    return ("-cl-opt-disable",) if has_barriers else ()
