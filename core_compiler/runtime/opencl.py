"""Run OpenCL C on PoCL's CPU device: work-groups, ``__local`` memory and barriers run for real.

`run_opencl` builds the program, creates one buffer per named host array, copies them all in,
enqueues the launches in order on one in-order profiling queue, copies every buffer back and
returns the arrays with the device-side timing of each launch. The host arrays are not written.

- A launch with a zero global size is skipped (OpenCL rejects it); its timing says so.
- Zero-sized arrays get a one-element device buffer, so that a valid buffer is always passed.
- Given a local size, each global size must be a multiple of it (OpenCL 1.2 semantics, which
  generated code is expected to follow); violations raise `OpenCLError` before anything runs.
- ``__local`` arrays declared inside kernels need nothing from the host; a ``__local`` *pointer*
  argument takes `LocalArg(nbytes)`.

`build_program`, `enqueue_launches` and `OpenCLMemory` are the pieces `gpu_opencl.OpenCLRuntime`
runs generated programs with, its buffers kept between runs (`device.Residency`).
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pyopencl as cl

from core_compiler.errors import OpenCLError
from core_compiler.runtime.device import LaunchTiming
from core_compiler.runtime.launches import BufferArg, ScalarArg

__all__ = [
    "BufferArg", "Launch", "LaunchTiming", "LocalArg", "OpenCLMemory",
    "OpenCLResult", "ScalarArg", "build_program", "enqueue_launches", "pocl_device", "run_opencl",
]  # fmt: skip

POCL_PLATFORM = "Portable Computing Language"


@dataclass(frozen=True)
class LocalArg:
    nbytes: int  # a dynamically sized ``__local`` pointer argument


KernelArg = BufferArg | ScalarArg | LocalArg


@dataclass(frozen=True)
class Launch:
    kernel: str
    global_size: tuple[int, ...]
    local_size: tuple[int, ...] | None = None  # None: the runtime chooses
    args: tuple[KernelArg, ...] = ()


@dataclass(frozen=True)
class OpenCLResult:
    arrays: Mapping[str, np.ndarray] = field(repr=False)  # every buffer after the last launch
    launches: tuple[LaunchTiming, ...]
    build_s: float  # wall time of the program build (near 0 when cached in this process)
    copy_in_s: float  # device time
    copy_out_s: float
    device: str


# ------------------------------------------------------------------------------------ device


def pocl_device() -> cl.Device:
    """The PoCL CPU device; OpenCLError when there is none."""
    return _context()[0].devices[0]


@functools.cache
def _context() -> tuple[cl.Context, cl.CommandQueue]:
    device = _find_pocl_cpu()
    ctx = cl.Context([device])
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    return ctx, queue


def _find_pocl_cpu() -> cl.Device:
    try:
        platforms = cl.get_platforms()
    except cl.Error as e:
        raise OpenCLError(
            f"no OpenCL platform found ({e}); install pocl-binary-distribution"
        ) from e
    for platform in platforms:
        if POCL_PLATFORM in platform.name:
            cpus = platform.get_devices(device_type=cl.device_type.CPU)
            if cpus:
                return cpus[0]
    names = ", ".join(p.name for p in platforms) or "none"
    raise OpenCLError(f"no PoCL CPU device among the OpenCL platforms ({names})")


@functools.lru_cache(maxsize=64)
def _program(source: str, options: tuple[str, ...]) -> cl.Program:
    ctx = _context()[0]
    try:
        return cl.Program(ctx, source).build(options=list(options))
    except cl.Error as e:
        raise OpenCLError(f"the OpenCL program does not build:\n{e}") from e


# --------------------------------------------------------------------------------------- run


def run_opencl(
    source: str,
    launches: Sequence[Launch],
    arrays: Mapping[str, np.ndarray],
    *,
    build_options: Sequence[str] = (),
) -> OpenCLResult:
    """Build `source`, copy `arrays` in, run `launches` in order, copy every array out."""
    ctx, queue = _context()
    start = time.perf_counter()
    program = build_program(source, build_options, launches, arrays)
    build_s = time.perf_counter() - start
    hosts = {name: _host_copy(a) for name, a in arrays.items()}
    buffers = {name: cl.Buffer(ctx, cl.mem_flags.READ_WRITE, h.nbytes) for name, h in hosts.items()}
    copy_in = [cl.enqueue_copy(queue, buffers[n], h) for n, h in hosts.items()]
    timings = enqueue_launches(program, launches, buffers)
    copy_out = [cl.enqueue_copy(queue, h, buffers[n]) for n, h in hosts.items()]
    queue.finish()
    out = {n: h[: _size(arrays[n])].reshape(np.shape(arrays[n])) for n, h in hosts.items()}
    return OpenCLResult(
        out, timings, build_s, _seconds(copy_in), _seconds(copy_out), pocl_device().name
    )


def build_program(
    source: str, options: Sequence[str], launches: Sequence[Launch], arrays: Iterable[str]
) -> cl.Program:
    """The built program (cached per source and options), once the launches are checked
    against it and against the names of the arrays they will get."""
    names = set(arrays)
    for launch in launches:
        _check_launch(launch, names)
    program = _program(source, tuple(options))
    _check_kernels(program, launches)
    return program


def enqueue_launches(
    program: cl.Program, launches: Sequence[Launch], buffers: Mapping[str, cl.Buffer]
) -> tuple[LaunchTiming, ...]:
    """Run `launches` in order on the profiling queue; their device times once all finished."""
    queue = _context()[1]
    events = [_enqueue(queue, program, launch, buffers) for launch in launches]
    queue.finish()
    return tuple(_timing(launch, ev) for launch, ev in zip(launches, events, strict=True))


class OpenCLMemory:
    """`device.DeviceMemory` on the PoCL device: buffers and blocking, profiled copies."""

    def alloc(self, nbytes: int) -> cl.Buffer:
        return cl.Buffer(_context()[0], cl.mem_flags.READ_WRITE, nbytes)

    def copy_in(self, buffer: cl.Buffer, host: np.ndarray) -> float:
        return _blocking_copy(buffer, host)

    def copy_out(self, host: np.ndarray, buffer: cl.Buffer) -> float:
        return _blocking_copy(host, buffer)


def _blocking_copy(dest: cl.Buffer | np.ndarray, src: cl.Buffer | np.ndarray) -> float:
    event = cl.enqueue_copy(_context()[1], dest, src)
    event.wait()
    return _seconds([event])


def _check_launch(launch: Launch, arrays: set[str]) -> None:
    for arg in launch.args:
        if isinstance(arg, BufferArg) and arg.name not in arrays:
            raise OpenCLError(f"launch of {launch.kernel}: no array named {arg.name!r}")
    local = launch.local_size
    if local is None:
        return
    if len(local) != len(launch.global_size):
        raise OpenCLError(f"launch of {launch.kernel}: global and local sizes differ in rank")
    for g, loc in zip(launch.global_size, local, strict=True):
        if loc <= 0 or g % loc:
            raise OpenCLError(
                f"launch of {launch.kernel}: global size {launch.global_size} is not a "
                f"multiple of local size {local}"
            )


def _check_kernels(program: cl.Program, launches: Sequence[Launch]) -> None:
    names = set(str(program.get_info(cl.program_info.KERNEL_NAMES)).split(";"))
    for launch in launches:
        if launch.kernel not in names:
            raise OpenCLError(
                f"no kernel {launch.kernel!r} in the program ({', '.join(sorted(names))})"
            )


def _size(a: np.ndarray) -> int:
    return math.prod(np.shape(a))


def _host_copy(a: np.ndarray) -> np.ndarray:
    """A flat C-ordered copy with at least one element (device buffers cannot be empty)."""
    a = np.asarray(a)
    flat = np.zeros(max(1, a.size), dtype=a.dtype)
    flat[: a.size] = a.reshape(-1)
    return flat




def _kernel(program: cl.Program, name: str) -> cl.Kernel:
    """One kernel object per program and name (pyopencl warns when they are re-created), kept on
    the program: a table keyed by ``id(program)`` would hand a new program that reuses the id of
    a collected one the old program's kernel, with the wrong arguments."""
    kernels: dict[str, cl.Kernel] = program.__dict__.setdefault("_hx_kernels", {})
    if name not in kernels:
        kernels[name] = cl.Kernel(program, name)
    return kernels[name]


def _enqueue(
    queue: cl.CommandQueue, program: cl.Program, launch: Launch, buffers: Mapping[str, cl.Buffer]
) -> cl.Event | None:
    if 0 in launch.global_size:
        return None
    kernel = _kernel(program, launch.kernel)
    kernel.set_args(*[_kernel_arg(a, buffers) for a in launch.args])  # type: ignore[arg-type]
    return cl.enqueue_nd_range_kernel(queue, kernel, launch.global_size, launch.local_size)


def _kernel_arg(arg: KernelArg, buffers: Mapping[str, cl.Buffer]) -> object:
    if isinstance(arg, BufferArg):
        return buffers[arg.name]
    if isinstance(arg, LocalArg):
        return cl.LocalMemory(max(1, arg.nbytes))
    return np.dtype(arg.dtype).type(arg.value)


def _timing(launch: Launch, event: cl.Event | None) -> LaunchTiming:
    if event is None:
        return LaunchTiming(launch.kernel, 0.0, skipped=True)
    return LaunchTiming(launch.kernel, _seconds([event]))


def _seconds(events: Sequence[cl.Event]) -> float:
    return sum((e.profile.end - e.profile.start) * 1e-9 for e in events)
