"""The one interface of the device runtimes (OpenCL on PoCL, CUDA through pycuda), and the
transfer cache they share: Polly-ACC's *transfer caching*, so arrays the kernels only read stay on
the device from one run to the next.

A `DeviceRuntime` runs a `DeviceProgram` on host arrays and returns a `DeviceRun`: the arrays
afterwards, kernel and copy times (device time) and the bytes moved each way. The runtime object
owns its device buffers; running the same program again on the same inputs moves only what the
kernels write::

    runtime = OpenCLRuntime()
    first = runtime.run(program, arrays, ints, floats)   # gemm: A, B, C in; C out
    again = runtime.run(program, arrays, ints, floats)   # C in (read and written), C out

Which arrays move (`transfer_plan`, from the SCoP's access relations, which are exact: a SCoP has
no data-dependent control flow):

- *in*: every array the kernels take, except one no statement reads and the statements overwrite
  entirely at these sizes (its old contents cannot reach the results) and the transposed copies
  the first kernels make (`codegen/layouts.py`); and only when the device copy differs from the
  host data (`Residency`);
- *out*: every array a statement writes, except the buffers of scalars written in the nest (no
  statement after the SCoP reads them). After the copy the device copy equals the returned data,
  so a later run that passes the returned arrays back moves nothing in.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

import islpy as isl
import numpy as np

from core_compiler.codegen.opencl import DeviceProgram
from core_compiler.runtime.launches import device_arrays
from core_compiler.scop.affine import isl_name
from core_compiler.scop.model import Scop

B = TypeVar("B")


@dataclass(frozen=True)
class LaunchTiming:
    kernel: str
    seconds: float  # device time (0 when skipped)
    skipped: bool = False  # True for an empty launch (no blocks)


@dataclass(frozen=True)
class DeviceRun:
    arrays: Mapping[str, np.ndarray] = field(repr=False)  # every array after the run, its shape kept
    kernel_s: float  # device time of the launches
    copy_in_s: float
    copy_out_s: float
    bytes_in: int  # exactly what was copied, host to device
    bytes_out: int
    device: str  # the device's name, e.g. "NVIDIA H100 80GB HBM3"
    launches: tuple[LaunchTiming, ...] = ()
    copied_in: tuple[str, ...] = ()  # the arrays copied in, by name
    copied_out: tuple[str, ...] = ()

    @property
    def device_s(self) -> float:
        """Kernels plus transfers."""
        return self.kernel_s + self.copy_in_s + self.copy_out_s

    @property
    def bytes_moved(self) -> int:
        return self.bytes_in + self.bytes_out


class DeviceRuntime(Protocol):
    """Runs generated kernels; keeps device buffers between runs (see `Residency`)."""

    name: str  # "opencl" | "cuda"

    def run(
        self,
        program: DeviceProgram,
        arrays: Mapping[str, np.ndarray],
        ints: Mapping[str, int],
        floats: Mapping[str, float],
        initial_scalars: Mapping[str, float] | None = None,
    ) -> DeviceRun: ...

    def close(self) -> None: ...  # free the device buffers now


class DeviceMemory(Protocol[B]):
    """What a runtime gives `Residency`: buffers and blocking copies timed on the device."""

    def alloc(self, nbytes: int) -> B: ...

    def copy_in(self, buffer: B, host: np.ndarray) -> float: ...  # device seconds

    def copy_out(self, host: np.ndarray, buffer: B) -> float: ...


# ----------------------------------------------------------------------------------- plan


@dataclass(frozen=True)
class TransferPlan:
    copy_in: frozenset[str]  # arrays whose contents the kernels may see
    copy_out: frozenset[str]  # arrays the kernels write that the caller gets back
    written: frozenset[str]  # every array the kernels write (scalar buffers included)


def transfer_plan(
    program: DeviceProgram, hosts: Mapping[str, np.ndarray], ints: Mapping[str, int], returned: Iterable[str]
) -> TransferPlan:
    """What must move for `hosts` (the flat arrays the kernels take) at parameters `ints`, when
    the caller gets back the arrays named in `returned` (not the buffers of scalars written in
    the nest: nothing after the SCoP reads them)."""
    scop = program.gpu.scop
    read = {a.array for s in scop.statements for a in s.reads}
    written = frozenset(hosts) & {a.array for s in scop.statements for a in s.writes}
    kinds = {a.name: a.kind for a in scop.arrays}
    overwritten = {
        n for n in written
        if n not in read and kinds.get(n) == "array" and fully_written(scop, n, ints, hosts[n].size)
    }  # fmt: skip
    copies = {t.copy for t in program.transposes}  # made on the device from their arrays
    return TransferPlan(frozenset(hosts) - overwritten - copies, written & set(returned), written)


def fully_written(scop: Scop, array: str, ints: Mapping[str, int], size: int) -> bool:
    """Whether the statements write `size` distinct elements of `array` at these parameters —
    all of a host array of `size` elements, as every access lies inside the array (what C
    promises). False whenever isl cannot say (accesses of different ranks, unknown values)."""
    values = {isl_name(k): v for k, v in ints.items()}
    try:
        elements = isl.Set.from_union_set(scop.writes(array).range())
        for k in range(elements.dim(isl.dim_type.param)):
            value = values[str(elements.get_dim_name(isl.dim_type.param, k))]
            elements = elements.fix_val(isl.dim_type.param, k, isl.Val.int_from_si(scop.ctx, value))
        count = elements.count_val()
    except (isl.Error, KeyError):
        return False
    return bool(count.is_int()) and int(count.to_python()) == size


# ------------------------------------------------------------------------------ residency


@dataclass(frozen=True)
class Transfer:
    arrays: tuple[str, ...]  # what moved, in order
    nbytes: int
    seconds: float  # device time


@dataclass(frozen=True)
class _Resident(Generic[B]):
    buffer: B
    dtype: np.dtype
    size: int
    contents: np.ndarray | None  # the host data the device copy equals; None: unknown


class Residency(Generic[B]):
    """Device buffers by array name, each with the host data its device copy equals.

    The equality is known by keeping a host copy of what was last copied in or out and comparing
    it byte for byte with the new host data (`_same_bytes`). A hash would save the copy's memory
    but not the pass over the data, and would be exact only up to collisions; the comparison is
    exact (NaNs and signed zeros included) and costs one pass over host memory, about what the
    host side of a copy from pageable memory costs before the bus transfer even starts. An array
    whose shape or dtype changes gets a new buffer.
    """

    def __init__(self, memory: DeviceMemory[B]) -> None:
        self.memory = memory
        self._resident: dict[str, _Resident[B]] = {}

    def buffers(self, hosts: Mapping[str, np.ndarray]) -> dict[str, B]:
        """A device buffer for every host array (at least one byte, so always a valid one)."""
        for name, host in hosts.items():
            r = self._resident.get(name)
            if r is None or r.dtype != host.dtype or r.size != host.size:
                buffer = self.memory.alloc(max(1, host.nbytes))
                self._resident[name] = _Resident(buffer, host.dtype, host.size, None)
        return {name: self._resident[name].buffer for name in hosts}

    def copy_in(self, hosts: Mapping[str, np.ndarray], names: Iterable[str]) -> Transfer:
        """Copy in those of `names` whose device copy differs from the host data."""
        moved, seconds = [], 0.0
        for name in sorted(names):
            r, host = self._resident[name], hosts[name]
            if r.contents is not None and _same_bytes(r.contents, host):
                continue
            if host.size:
                seconds += self.memory.copy_in(r.buffer, host)
            self._resident[name] = dataclasses.replace(r, contents=host.copy())
            moved.append(name)
        return Transfer(tuple(moved), sum(hosts[n].nbytes for n in moved), seconds)

    def forget(self, names: Iterable[str]) -> None:
        """The device copies of `names` are about to change (kernels write them)."""
        for name in names:
            self._resident[name] = dataclasses.replace(self._resident[name], contents=None)

    def copy_out(self, hosts: Mapping[str, np.ndarray], names: Iterable[str]) -> Transfer:
        """Copy `names` out into `hosts` (in place); the device copies now equal them."""
        moved, seconds = tuple(sorted(names)), 0.0
        for name in moved:
            r, host = self._resident[name], hosts[name]
            if host.size:
                seconds += self.memory.copy_out(host, r.buffer)
            self._resident[name] = dataclasses.replace(r, contents=host.copy())
        return Transfer(moved, sum(hosts[n].nbytes for n in moved), seconds)

    def clear(self) -> None:
        """Drop every buffer (the runtime frees device memory with them)."""
        self._resident.clear()


def _same_bytes(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a.view(np.uint8), b.view(np.uint8))


# ------------------------------------------------------------------------------------ run

Launcher = Callable[[Mapping[str, B]], tuple[LaunchTiming, ...]]


def run_resident(
    residency: Residency[B],
    program: DeviceProgram,
    arrays: Mapping[str, np.ndarray],
    ints: Mapping[str, int],
    initial_scalars: Mapping[str, float] | None,
    launch: Launcher[B],
    device: str,
) -> DeviceRun:
    """The run both runtimes share: buffers, copies in, `launch` (every kernel, finished when
    it returns), copies out of what the kernels write."""
    hosts = device_arrays(program, arrays, ints, initial_scalars)
    plan = transfer_plan(program, hosts, ints, arrays)
    buffers = residency.buffers(hosts)
    copied_in = residency.copy_in(hosts, plan.copy_in)
    residency.forget(plan.written)
    timings = launch(buffers)
    copied_out = residency.copy_out(hosts, plan.copy_out)
    after = {n: hosts[n].reshape(np.shape(a)) if n in hosts else np.array(a, copy=True) for n, a in arrays.items()}
    return DeviceRun(
        after, sum(t.seconds for t in timings), copied_in.seconds, copied_out.seconds,
        copied_in.nbytes, copied_out.nbytes, device, timings, copied_in.arrays, copied_out.arrays,
    )  # fmt: skip
