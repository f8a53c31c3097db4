"""Run a mapped program on an NVIDIA GPU through pycuda (the ``[gpu]`` extra): the kernels are
LLVM's PTX (`llvm/nvptx.py`, the Polly-ACC route, the same kernel parameters as the OpenCL),
loaded with ``module_from_buffer``, launched with the grid and blocks of the host AST
(`launches.kernel_launches`), timed with CUDA events.

`CudaRuntime` is a `device.DeviceRuntime`: its device buffers stay allocated between runs and an
array the device already holds is not copied again (`device.Residency`). pycuda is imported when
a runtime is created, so this module imports without it; ``run.cuda_unavailable`` says why a
machine cannot run CUDA.

The PTX targets ``sm_90`` (H100/H200) on Hopper and newer GPUs, whose driver compiles it for the
device at load time, and the device's own ``sm_XY`` on older ones.
"""

from __future__ import annotations

import atexit
import functools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from core_compiler.codegen.opencl import DeviceProgram
from core_compiler.errors import CudaError
from core_compiler.llvm.nvptx import lower_gpu
from core_compiler.llvm.target import DEFAULT_SM
from core_compiler.runtime.device import DeviceRun, LaunchTiming, Residency, run_resident
from core_compiler.runtime.launches import BufferArg, KernelLaunch, ScalarArg, kernel_launches


@functools.cache
def _driver() -> Any:
    """pycuda's driver module with the primary context of device 0 current (popped at exit)."""
    try:
        import pycuda.driver as cuda  # type: ignore[import-not-found]
    except ImportError as e:
        raise CudaError("pycuda is not installed (pip install 'hexplore[gpu]')") from e
    cuda.init()
    if cuda.Device.count() == 0:
        raise CudaError("no NVIDIA GPU is visible to the CUDA driver")
    context = cuda.Device(0).retain_primary_context()
    context.push()
    atexit.register(context.pop)
    return cuda


def ptx_target(capability: tuple[int, int]) -> str:
    """The ``sm`` to emit PTX for on a device of compute `capability`."""
    major, minor = capability
    return DEFAULT_SM if (major, minor) >= (9, 0) else f"sm_{major}{minor}"


class CudaMemory:
    """`device.DeviceMemory` on the current CUDA context: blocking copies timed by events."""

    def __init__(self, cuda: Any) -> None:
        self.cuda = cuda

    def alloc(self, nbytes: int) -> Any:
        return self.cuda.mem_alloc(nbytes)

    def copy_in(self, buffer: Any, host: np.ndarray) -> float:
        return self._timed(lambda: self.cuda.memcpy_htod(buffer, host))

    def copy_out(self, host: np.ndarray, buffer: Any) -> float:
        return self._timed(lambda: self.cuda.memcpy_dtoh(host, buffer))

    def _timed(self, copy: Any) -> float:
        start, end = self.cuda.Event(), self.cuda.Event()
        start.record()
        copy()
        end.record()
        end.synchronize()
        return float(start.time_till(end)) * 1e-3


class CudaRuntime:
    """Generated kernels, as PTX, on CUDA device 0; buffers stay resident between runs."""

    name = "cuda"

    def __init__(self) -> None:
        self.cuda = _driver()
        device = self.cuda.Device(0)
        self.device_name = str(device.name())
        self.sm = ptx_target(tuple(device.compute_capability()))
        self.residency: Residency[Any] = Residency(CudaMemory(self.cuda))
        self._modules: dict[int, tuple[DeviceProgram, Any]] = {}  # id(program) -> (program, module)

    def run(
        self,
        program: DeviceProgram,
        arrays: Mapping[str, np.ndarray],
        ints: Mapping[str, int],
        floats: Mapping[str, float],
        initial_scalars: Mapping[str, float] | None = None,
    ) -> DeviceRun:
        module = self.module(program)
        launches = kernel_launches(program, ints, floats)

        def launch(buffers: Mapping[str, Any]) -> tuple[LaunchTiming, ...]:
            return self._launch_all(module, launches, buffers)

        return run_resident(self.residency, program, arrays, ints, initial_scalars, launch, self.device_name)

    def module(self, program: DeviceProgram) -> Any:
        """The program's kernels lowered to PTX and loaded (once per program)."""
        cached = self._modules.get(id(program))
        if cached is not None and cached[0] is program:
            return cached[1]
        ptx = lower_gpu(program.gpu, self.sm).ptx
        try:
            module = self.cuda.module_from_buffer(ptx.encode() + b"\0")  # the driver reads PTX up to a NUL
        except self.cuda.Error as e:
            raise CudaError(f"the CUDA driver does not load the PTX for {self.sm}: {e}") from e
        self._modules[id(program)] = (program, module)
        return module

    def _launch_all(self, module: Any, launches: Sequence[KernelLaunch], buffers: Mapping[str, Any]) -> tuple[LaunchTiming, ...]:
        events = [self._launch(module, k, buffers) for k in launches]
        self.cuda.Context.synchronize()  # a failed launch raises here, with the driver's reason
        return tuple(
            LaunchTiming(k.kernel, 0.0, skipped=True) if ev is None else LaunchTiming(k.kernel, float(ev[0].time_till(ev[1])) * 1e-3)
            for k, ev in zip(launches, events, strict=True)
        )  # fmt: skip

    def _launch(self, module: Any, k: KernelLaunch, buffers: Mapping[str, Any]) -> tuple[Any, Any] | None:
        if k.empty:
            return None
        fn = module.get_function(k.kernel)
        start, end = self.cuda.Event(), self.cuda.Event()
        start.record()
        fn(*[_argument(a, buffers) for a in k.args], block=k.block, grid=k.grid)
        end.record()
        return start, end

    def close(self) -> None:
        """Free the device buffers now (else when the runtime is collected)."""
        self.residency.clear()


def _argument(arg: BufferArg | ScalarArg, buffers: Mapping[str, Any]) -> object:
    """A device pointer, or a numpy scalar of the parameter's type (pycuda packs it by dtype)."""
    if isinstance(arg, BufferArg):
        return buffers[arg.name]
    return np.dtype(arg.dtype).type(arg.value)
