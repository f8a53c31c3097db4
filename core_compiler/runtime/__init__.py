"""The execution harness: run the original C function and generated code on the same
deterministic inputs, and compare.

- `signature`: argument layouts (scalar values, array dtypes and shapes, ``-D`` size macros);
- `inputs`: deterministic input arrays for a layout;
- `reference`: compile a C source with the system compiler and call a function via ctypes;
- `opencl`: run OpenCL C on PoCL's CPU device;
- `device`: the interface of the device runtimes (`gpu_opencl.OpenCLRuntime`,
  `gpu_cuda.CudaRuntime`) and the transfer cache they share; `launches`: grid and block per launch;
- `compare`: exact / tolerance comparison of result arrays;
- `worker`: any of the above in a separate process with a time limit.
"""

from __future__ import annotations

from core_compiler.errors import BuildError, LayoutError, OpenCLError, WorkerFailed
from core_compiler.runtime.compare import ArrayComparison, Comparison, compare_arrays
from core_compiler.runtime.inputs import make_inputs
from core_compiler.runtime.opencl import (
    BufferArg,
    Launch,
    LaunchTiming,
    LocalArg,
    OpenCLResult,
    ScalarArg,
    run_opencl,
)
from core_compiler.runtime.reference import (
    BuildOptions,
    ReferenceLibrary,
    ReferenceResult,
    build_reference,
    call_reference,
    run_reference,
)
from core_compiler.runtime.signature import (
    ArraySlot,
    Layout,
    ScalarSlot,
    compute_layout,
    layout_for_source,
    macro_defines,
)
from core_compiler.runtime.worker import (
    WorkerError,
    WorkerResult,
    opencl_in_worker,
    reference_in_worker,
    run_in_worker,
)

__all__ = [
    "ArrayComparison",
    "ArraySlot",
    "BufferArg",
    "BuildError",
    "BuildOptions",
    "Comparison",
    "Launch",
    "LaunchTiming",
    "Layout",
    "LayoutError",
    "LocalArg",
    "OpenCLError",
    "OpenCLResult",
    "ReferenceLibrary",
    "ReferenceResult",
    "ScalarArg",
    "ScalarSlot",
    "WorkerError",
    "WorkerFailed",
    "WorkerResult",
    "build_reference",
    "call_reference",
    "compare_arrays",
    "compute_layout",
    "layout_for_source",
    "macro_defines",
    "make_inputs",
    "opencl_in_worker",
    "reference_in_worker",
    "run_in_worker",
    "run_opencl",
    "run_reference",
]
