"""One kernel over several devices (Matz, Doerfert and Fröning's partitioning), simulated on the CPU.

A launch's grid is cut along its outermost block axis into one contiguous range of blocks per
device. From the kernel's model, with the range as two more sizes (`FIRST`, `END`), each device's
*footprint* is exact: the rows (first subscript) of each array its blocks may read, and those they
write. A buffer tracker keeps, per device and array, which rows hold the current values: before a
launch a device receives only the rows it reads and lacks; after it, the rows it wrote go back to
the host and become stale on the other devices. A launch whose devices would write the same row
(an atomic sum into `out[0]`) is not split.

Each device is a full-size copy of the arrays in this process (a CUDA device would allocate only
its rows); what it measures is the partition's correctness and the bytes it moves.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace

import islpy as isl
import numpy as np

from core_compiler.cuda.cpu import (
    CpuKernel,
    NotTranslatable,
    compiled,
    extent_value,
    lockstep_schedule,
)
from core_compiler.cuda.grid import KernelModel
from core_compiler.frontend import ir
from core_compiler.scop.affine import isl_name
from core_compiler.scop.model import Scop, Statement
from core_compiler.transform.cpu_schedule import build_ast

FIRST, END = "hx_first_block", "hx_end_block"  # a device's blocks along the outermost axis


def restricted(scop: Scop) -> Scop:
    """`scop` with its instances limited to ``FIRST <= first block id < END`` (two more sizes)."""
    params = (*scop.params, FIRST, END)
    head = "[" + ", ".join(isl_name(p) for p in params) + "]"

    def cut(st: Statement) -> Statement:
        iters = ", ".join(f"i{k}" for k in range(len(st.iterators)))
        box = isl.Set.read_from_str(scop.ctx, f"{head} -> {{ {st.name}[{iters}] : {FIRST} <= i0 < {END} }}")
        domain = st.domain.intersect(box)
        return replace(
            st, domain=domain, schedule=st.schedule.intersect_domain(domain),
            reads=tuple(replace(a, relation=a.relation.intersect_domain(domain)) for a in st.reads),
            writes=tuple(replace(a, relation=a.relation.intersect_domain(domain)) for a in st.writes),
        )  # fmt: skip

    return replace(scop, region=replace(scop.region, params=params), statements=tuple(map(cut, scop.statements)))


@functools.lru_cache(maxsize=64)
def partitioned(kernel: ir.Function) -> CpuKernel:
    """The kernel's CPU translation for a range of its blocks (`FIRST`, `END` among its ints)."""
    whole = compiled(kernel)
    km = replace(whole.model, scop=restricted(whole.model.scop))
    return CpuKernel(km, build_ast(km.scop, lockstep_schedule(km)), f"hx_cuda_{kernel.name}_part")


def rows(km: KernelModel, array: str, values: dict[str, int], writes: bool) -> tuple[int, int] | None:
    """The rows ``[first, end)`` of `array` the instances at `values` (sizes, grid, block range)
    read (or write), or None; computed once per kernel, array and values (a time loop launches
    the same kernel at the same sizes again and again)."""
    key = tuple(values[p] for p in km.scop.params)
    return _rows(km, array, key, writes)


@functools.lru_cache(maxsize=4096)
def _rows(km: KernelModel, array: str, key: tuple[int, ...], writes: bool) -> tuple[int, int] | None:
    values = dict(zip(km.scop.params, key, strict=True))
    scop = km.scop
    touched = scop.writes(array) if writes else scop.reads(array).union(scop.writes(array))
    fixed = " and ".join(f"{isl_name(p)} = {values[p]}" for p in scop.params)
    head = "[" + ", ".join(isl_name(p) for p in scop.params) + "]"
    at = isl.Set.read_from_str(scop.ctx, f"{head} -> {{ : {fixed} }}")
    box = isl.Set.from_union_set(touched.range()).intersect_params(at) if not touched.is_empty() else None
    if box is None or box.is_empty():
        return None
    return int(box.dim_min_val(0).to_python()), int(box.dim_max_val(0).to_python()) + 1


def row_size(km: KernelModel, array: str, values: dict[str, int]) -> int:
    """The elements of one row (the first subscript) of `array` at `values`."""
    decl = next(a for a in km.scop.arrays if a.name == array)
    size = 1
    for extent in decl.extents[1:]:
        assert extent is not None
        size *= extent_value(extent, values)
    return size


@dataclass
class Device:
    copies: dict[int, np.ndarray] = field(default_factory=dict)  # host array id -> this device's copy
    valid: dict[tuple[int, int], np.ndarray] = field(default_factory=dict)  # (host array id, row size) -> rows current here
    bytes_in: int = 0
    bytes_out: int = 0


@dataclass
class Devices:
    """A `cpu.Launcher` that splits each launch over `count` devices (module docstring)."""

    count: int
    devices: list[Device] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.devices = [Device() for _ in range(self.count)]

    def __call__(self, kernel: ir.Function, whole: CpuKernel, values: dict[str, object], grid: dict[str, int],
                 parallel: bool) -> float:  # fmt: skip
        split = bool(whole.model.shape.block_axes)  # a one-block kernel runs whole on the first device
        cpu = partitioned(kernel) if split else whole
        km = cpu.model
        blocks = grid.get(km.shape.block_axes[0], 1) if split else 1
        cuts = [blocks * k // self.count for k in range(self.count + 1)] if split else [0, 1]
        arrays = {n: v for n, v in values.items() if isinstance(v, np.ndarray)}
        ints = {n: v for n, v in values.items() if isinstance(v, int)}
        ints |= {f"gridDim.{a}": grid.get(a, 1) for a in km.shape.block_axes}
        plans = [(d, lo, hi) for d, lo, hi in zip(self.devices, cuts, cuts[1:], strict=False) if hi > lo]
        written = {n: np.zeros(a.size, dtype=bool) for n, a in arrays.items()}
        seconds = 0.0
        for device, lo, hi in plans:
            at = {**ints, FIRST: lo, END: hi} if split else ints
            mine = {n: self._fetch(device, km, n, a, at) for n, a in arrays.items()}
            spans = {n: self._span(km, n, a, at) for n, a in arrays.items()}
            before = {n: mine[n][lo:hi].copy() for n, (lo, hi) in spans.items()}
            seconds += cpu({**values, **mine, **(at if split else {})}, grid, parallel)
            for name, host in arrays.items():
                lo, hi = spans[name]
                changed = np.zeros(host.size, dtype=bool)
                changed[lo:hi] = mine[name][lo:hi] != before[name]
                if (changed[lo:hi] & written[name][lo:hi]).any():
                    raise NotTranslatable(f"`{kernel.name}`: the blocks of two devices write the same "
                                          f"elements of `{name}`, so the launch is not split")  # fmt: skip
                written[name][lo:hi] |= changed[lo:hi]
                self._write_back(device, km, name, host, changed, at)
        return seconds

    @staticmethod
    def _span(km: KernelModel, name: str, host: np.ndarray, at: dict[str, int]) -> tuple[int, int]:
        """The elements of the rows the device may write, as a slice of the flat array."""
        span = rows(km, name, at, writes=True)
        if span is None:
            return 0, 0
        step = row_size(km, name, at)
        return max(span[0], 0) * step, min(span[1] * step, host.size)

    def _fetch(self, device: Device, km: KernelModel, name: str, host: np.ndarray, at: dict[str, int]) -> np.ndarray:
        key = id(host)
        if key not in device.copies:
            device.copies[key] = np.zeros_like(host)
        step = row_size(km, name, at)
        valid = device.valid.setdefault((key, step), np.zeros(-(-host.size // step), dtype=bool))
        span = rows(km, name, at, writes=False)  # the rows it writes too: a row goes back whole
        if span is not None:
            lo, hi = max(span[0], 0), min(span[1], valid.size)
            for r in np.flatnonzero(~valid[lo:hi]) + lo:
                device.copies[key][r * step : (r + 1) * step] = host[r * step : (r + 1) * step]
                device.bytes_in += host[r * step : (r + 1) * step].nbytes
            valid[lo:hi] = True
        return device.copies[key]

    def _write_back(self, device: Device, km: KernelModel, name: str, host: np.ndarray, changed: np.ndarray,
                    at: dict[str, int]) -> None:  # fmt: skip
        """The elements the device changed go to the host (an element written with the value it
        had needs no copy); the bytes counted are its written rows', as a row-range tracker moves."""
        span = rows(km, name, at, writes=True)
        if span is None:
            return
        key, step = id(host), row_size(km, name, at)
        host[changed] = device.copies[key][changed]
        lo, hi = max(span[0], 0) * step, min(span[1] * step, host.size)
        device.bytes_out += host[lo:hi].nbytes
        for other in self.devices:
            for (k, s), valid in other.valid.items():
                if k == key and other is not device:
                    valid[span[0] : span[1]] = False if s == step else valid[:] & False

    def moved(self) -> list[tuple[int, int]]:
        """Per device, the bytes copied to it and back."""
        return [(d.bytes_in, d.bytes_out) for d in self.devices]
