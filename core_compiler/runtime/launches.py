"""The kernel launches a mapped program's host code makes for concrete parameter values, in the
terms both device runtimes need: blocks per axis (``grid``), threads per axis (``block``), ``x``
first, and the arguments of `codegen.opencl.kernel_args`.

The axes follow `codegen/kernel_body.py`: the innermost mapped member is ``x``, so a kernel's
``block = (32, 16)`` (outermost member first) runs as ``block = (16, 32)`` reversed to x-first,
i.e. 32 threads along ``x``; block id ``b<d>`` reads axis ``n_thread_dims - 1 - d``, so a kernel
with fewer block than thread dimensions gets a grid of 1 along the remaining outer axes. CUDA
launches ``grid``/``block`` as they are; OpenCL's global size is ``grid * block`` per axis.

Example (gemm at ni=40, nj=50, tiles 32x32, blocks of 16x32 threads)::

    KernelLaunch("kernel0", grid=(2, 2, 1), block=(32, 16, 1), args=(BufferArg("A"), …))
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import islpy as isl
import numpy as np

from core_compiler.codegen.ast_print import call_parts, evaluate, walk_host
from core_compiler.codegen.layouts import BLOCK, Transposed
from core_compiler.codegen.opencl import DeviceProgram
from core_compiler.errors import UsageError
from core_compiler.scop.affine import isl_name
from core_compiler.transform.gpu_mapping import Kernel

_DTYPES = {"double": "float64", "float": "float32", "int": "int32", "long": "int64", "unsigned int": "uint32"}


def numpy_dtype(ctype: str) -> str:
    return _DTYPES.get(ctype, "float64")


@dataclass(frozen=True)
class BufferArg:
    name: str  # a key of the arrays handed to the runtime


@dataclass(frozen=True)
class ScalarArg:
    value: int | float
    dtype: str = "int32"  # a numpy dtype name matching the kernel's parameter type


@dataclass(frozen=True)
class KernelLaunch:
    kernel: str
    grid: tuple[int, int, int]  # blocks along x, y, z (0 somewhere: nothing to run)
    block: tuple[int, int, int]  # threads along x, y, z
    args: tuple[BufferArg | ScalarArg, ...]
    axes: int = 3  # how many of the axes the kernel maps threads to (0: a one-thread kernel)

    @property
    def empty(self) -> bool:
        return 0 in self.grid


def kernel_launches(program: DeviceProgram, ints: Mapping[str, int], floats: Mapping[str, float]) -> list[KernelLaunch]:
    """Walk the host AST with these parameter values: every launch, in order, after the kernels that
    make the transposed copies of arrays (`codegen/layouts.py`)."""
    out: list[KernelLaunch] = [_transpose_launch(program, t, ints, floats) for t in program.transposes]
    kernels = {k.name: k for k in program.gpu.kernels}

    def on_user(expr: isl.AstExpr, env: dict[str, int]) -> None:
        name, args = call_parts(expr)
        kernel = kernels[name]
        host = dict(zip(kernel.host_params, (evaluate(a, env) for a in args), strict=True))
        lo = [evaluate(e, {**env, **host}) for e in kernel.grid_min]
        hi = [evaluate(e, {**env, **host}) for e in kernel.grid_max]
        values: dict[str, int] = {**ints, **host, **dict(zip(program.gpu.names.seq("o", len(lo)), lo, strict=True))}
        grid, block = launch_geometry(kernel, lo, hi)
        kargs = _arguments(program, name, values, floats)
        out.append(KernelLaunch(name, grid, block, kargs, kernel.n_thread_dims))

    walk_host(program.gpu.host_ast, {**ints, **{isl_name(k): v for k, v in ints.items()}}, on_user)
    return out


def _transpose_launch(program: DeviceProgram, t: Transposed, ints: Mapping[str, int], floats: Mapping[str, float]) -> KernelLaunch:
    """One work-item per element, x along a row, in work-groups of `layouts.BLOCK` squared."""
    rows, cols = t.size(ints)
    grid = (-(-cols // BLOCK), -(-rows // BLOCK), 1)
    return KernelLaunch(t.kernel, grid, (BLOCK, BLOCK, 1), _arguments(program, t.kernel, ints, floats), 2)


def launch_geometry(kernel: Kernel, lo: list[int], hi: list[int]) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """Blocks and threads per axis, x first, for tile indices `lo`..`hi` per block dimension."""
    blocks = [max(h - low + 1, 0) for low, h in zip(lo, hi, strict=True)]
    if kernel.shape.grid:  # more tiles than blocks: each block takes every grid-th tile
        blocks = [min(n, cap) for n, cap in zip(blocks, kernel.shape.grid, strict=True)]
    outer_first = blocks + [1] * (len(kernel.block) - len(blocks))
    return _xyz(reversed(outer_first)), _xyz(reversed(kernel.block))


def _xyz(sizes: Iterable[int]) -> tuple[int, int, int]:
    values = [int(v) for v in sizes]
    if len(values) > 3:
        raise ValueError(f"a launch has at most 3 axes, not {len(values)}")
    x, y, z = [*values, 1, 1, 1][:3]
    return x, y, z


def _arguments(
    program: DeviceProgram, kernel: str, values: Mapping[str, int], floats: Mapping[str, float]
) -> tuple[BufferArg | ScalarArg, ...]:
    out: list[BufferArg | ScalarArg] = []
    for spec in program.args[kernel]:
        if spec.kind == "array":
            out.append(BufferArg(spec.name))
        elif spec.kind == "scalar":
            out.append(ScalarArg(float(floats[spec.name]), numpy_dtype(spec.ctype)))
        else:
            out.append(ScalarArg(int(values[spec.name]), "int32"))
    return tuple(out)


# ------------------------------------------------------------------------------- host arrays


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


def device_arrays(
    program: DeviceProgram,
    arrays: Mapping[str, np.ndarray],
    ints: Mapping[str, int],
    initial_scalars: Mapping[str, float] | None = None,
) -> dict[str, np.ndarray]:
    """Flat C-ordered copies of the arrays the kernels take: the caller's, and scratch buffers
    for scalars (set to `initial_scalars` where given). The caller's arrays are not written."""
    scratch = scratch_arrays(program, ints)
    for name, value in (initial_scalars or {}).items():
        if name in scratch:
            scratch[name][...] = value
    used = {spec.name for specs in program.args.values() for spec in specs if spec.kind == "array"}
    hosts = {n: np.array(a, copy=True, order="C").reshape(-1) for n, a in arrays.items() if n in used}
    hosts.update({n: a for n, a in scratch.items() if n in used})
    for t in program.transposes:  # made on the device by `make_transposed_<array>` from the array
        if t.array in hosts and math.prod(t.size(ints)) > hosts[t.array].size:
            raise UsageError(f"`{t.array}` holds {hosts[t.array].size} elements, fewer than its extents say; "
                             "its transposed copy would read past it")  # fmt: skip
        hosts[t.copy] = np.empty_like(hosts.get(t.array, np.zeros(0)))
    missing = sorted(used - set(hosts))
    if missing:
        raise UsageError(f"the kernels take the array `{missing[0]}`, but the run was not given one")
    return hosts
