"""Run a mapped program's OpenCL code on PoCL: `OpenCLRuntime`, the `device.DeviceRuntime` that
keeps its buffers between runs, launching what the host AST launches (`launches.kernel_launches`).

Arrays are passed as the original function's arguments (numpy arrays named like the C
parameters); scalars written inside the loop nest and expanded local scalars get buffers of their
own, sized from the program's layouts.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pyopencl as cl

from core_compiler.codegen.opencl import DeviceProgram
from core_compiler.runtime.device import DeviceRun, LaunchTiming, Residency, run_resident
from core_compiler.runtime.launches import (
    KernelLaunch,
    kernel_launches,
    numpy_dtype,
    scratch_arrays,
)
from core_compiler.runtime.opencl import (
    Launch,
    OpenCLMemory,
    build_program,
    enqueue_launches,
    pocl_device,
)

__all__ = [
    "OpenCLRuntime", "launches_for", "numpy_dtype", "opencl_launch", "pocl_build_options",
    "run_program_opencl", "scratch_arrays",
]  # fmt: skip


class OpenCLRuntime:
    """Generated OpenCL on the PoCL CPU device; buffers stay resident between runs."""

    name = "opencl"

    def __init__(self) -> None:
        self.residency: Residency[cl.Buffer] = Residency(OpenCLMemory())

    def run(
        self,
        program: DeviceProgram,
        arrays: Mapping[str, np.ndarray],
        ints: Mapping[str, int],
        floats: Mapping[str, float],
        initial_scalars: Mapping[str, float] | None = None,
    ) -> DeviceRun:
        launches = launches_for(program, ints, floats)
        names = {s.name for specs in program.args.values() for s in specs if s.kind == "array"}
        built = build_program(program.source, pocl_build_options(program), launches, names)

        def launch(buffers: Mapping[str, cl.Buffer]) -> tuple[LaunchTiming, ...]:
            return enqueue_launches(built, launches, buffers)

        return run_resident(self.residency, program, arrays, ints, initial_scalars, launch, pocl_device().name)

    def close(self) -> None:
        self.residency.clear()


def launches_for(program: DeviceProgram, ints: Mapping[str, int], floats: Mapping[str, float]) -> list[Launch]:
    """The kernel launches the host code makes for these parameter values, in order."""
    return [opencl_launch(k) for k in kernel_launches(program, ints, floats)]


def opencl_launch(k: KernelLaunch) -> Launch:
    """OpenCL's convention: global size = blocks * threads per axis, local size = threads, in
    as many dimensions as the kernel maps (at least one)."""
    rank = max(k.axes, 1)
    global_size = tuple(g * b for g, b in zip(k.grid[:rank], k.block[:rank], strict=True))
    return Launch(k.kernel, global_size, k.block[:rank], k.args)


def run_program_opencl(
    program: DeviceProgram,
    arrays: Mapping[str, np.ndarray],
    ints: Mapping[str, int],
    floats: Mapping[str, float],
    initial_scalars: Mapping[str, float] | None = None,
) -> DeviceRun:
    """One run on a fresh `OpenCLRuntime` (nothing resident from earlier runs)."""
    return OpenCLRuntime().run(program, arrays, ints, floats, initial_scalars)


def pocl_build_options(program: DeviceProgram) -> tuple[str, ...]:
    """PoCL 3.0's optimizer (pocl-binary-distribution 3.0, the newest on PyPI) miscompiles some
    kernels with work-group barriers inside loops: gemm with register tiles and 2mm with a shared
    tile give wrong results, differing from run to run, and exact ones with `-cl-opt-disable`
    (reproduced outside hexplore with pyopencl alone). Kernels with barriers are built without
    optimization; the others keep PoCL's optimizer."""
    has_barriers = any(ph.ast is None for k in program.gpu.kernels for ph in k.phases.values())
    return ("-cl-opt-disable",) if has_barriers else ()
