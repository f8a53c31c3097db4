"""What the mapped GPU program costs, without a GPU: per kernel, launches per call, threads, what
runs on one thread, statement instances, global memory traffic and how much of it is coalesced,
shared memory, registers (from ``ptxas -v``, when asked) and occupancy; and an estimated time on
an NVIDIA H100 next to one CPU core's.

Every count is a `Count` (`counting.py`): exact where isl's sets allow, with the sizes as symbols,
evaluated at given sizes. They are counted on the mapping's own sets (`GpuProgram.host_values`,
`GpuProgram.kernel_schedules`):

- **launches** of a kernel: the host loops' values at which it has instances (one launch each);
- **threads**: per launch, the grid's box of tiles (``floor(x / tile)`` of the block-mapped band
  members, from their lowest to their highest) times the threads of a block; one for a kernel on
  one thread;
- **global bytes**: each read or write of an array kept in global memory, ``instances x element
  size``; an array in shared memory costs its tile box per tile executed, in registers its elements
  once per launch. An access is *coalesced* when ``threadIdx.x``'s loop (the innermost thread-mapped
  band member) moves it by 0 or ±1 elements in the array's last dimension and not at all in the
  others (``A[i][j]`` with ``j`` on ``threadIdx.x``, not ``A[j][i]``).

The time model (`DeviceRates`, `CpuRates`; each constant says where it comes from) is, per
kernel, ``max(launches x launch, compute, memory)`` (launches are queued while kernels run):
compute is the threads' work (operations,
global accesses, slower where uncoalesced, and copies) shared out among the threads of a launch up
to the GPU's width, so a kernel on one thread runs its whole work at one thread's speed; memory is
the distinct bytes at HBM speed. Add the copies between host and GPU. The CPU's is the operations
(`profitability.statement_ops` per instance) at one core's speed plus the arrays streamed once.
Both are `Estimate` formulas: evaluated at sizes, or printed as C for the host code's run-time
check (`faster_on_gpu_c`).
"""

from __future__ import annotations

import itertools
import math
import re
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import islpy as isl

from core_compiler.scop.affine import isl_name
from core_compiler.scop.model import Access, Scop, Statement
from core_compiler.transform.counting import Count, NotCountable, count, from_pw_aff, sum_over
from core_compiler.transform.gpu_mapping import GRID_OPERATIONS, GpuProgram, Kernel, when_parts
from core_compiler.transform.memory import ELEM_BYTES
from core_compiler.transform.profitability import (
    Profitability,
    ProfitabilityOptions,
    decide,
    format_count,
    statement_ops,
)

_SET: Any = isl.dim_type.set
_PARAM: Any = isl.dim_type.param
_IN: Any = isl.dim_type.in_

@dataclass(frozen=True)
class DeviceRates:
    """An NVIDIA H100 (SXM, 132 SMs) as hexplore's CUDA C uses it. The launch cost and the copies
    come from the H100 record (`../shared/gpu/H100-2026-11-25.md`, PolyBench LARGE, PolyBench's
    timer around the call); the costs per operation and per access were fitted to 15 PolyBench
    LARGE programs of hexplore's CUDA C timed on an H200 on 2026-11-26 (same SMs and clocks as the
    H100; launches counted and kernels timed one by one): the model is within 1.5x of 12 of them
    (`benchmarks/bench_gpu_model.py` has both records). A thread's work is its operations and its
    global accesses; the threads of a launch share it out up to the GPU's width."""

    name: str = "H100"
    launch_s: float = 5e-6
    """Per kernel launch: durbin (12,000 launches) took 0.074 s in the record, jacobi-1d (1,000)
    0.006 s, trisolv (4,000) 0.025 s; cholesky's 6,000 launches took 0.027 s on the H200."""
    thread_op_s: float = 2e-9
    """One operation (`statement_ops`) of one thread: about 4 cycles at 1.98 GHz, a thread
    waiting on each result. gemm's kernel (9.2e9 operations, no global access left after
    promotion) ran 0.67 ms: 28,000 threads' worth at this rate."""
    access_s: float = 40e-9
    """One global-memory access of one thread, coalesced (or on a kernel of one thread): the
    latency the other threads of a launch hide. Fitted to heat-3d, fdtd-2d, doitgen, adi."""
    uncoalesced_access_s: float = 100e-9
    """One uncoalesced global access (32 threads, 32 sectors): nussinov, seidel-2d, correlation."""
    copy_s: float = 20e-9
    """One element copied between global and shared memory or registers (coalesced, in bulk)."""
    saturation_threads: int = 30_000
    """Threads of a launch beyond which work no longer gets faster: gemm's kernel."""
    hbm_bytes_s: float = 3.35e12
    """HBM3 bandwidth, a floor for the distinct bytes a launch touches."""
    pcie_bytes_s: float = 10e9
    """Host-device copies of pageable memory with their cudaMalloc: 4-18 GB/s in the record and
    on the H200 (mvt: 128 MB in 7.3 ms; gemm: 38 MB in 4 ms; 2mm: 50 MB in 11.6 ms)."""
    alloc_s: float = 20e-6
    """cudaMalloc and cudaFree of one array."""
    sms: int = 132
    threads_per_sm: int = 2048
    blocks_per_sm: int = 32
    registers_per_sm: int = 65536
    shared_bytes_per_sm: int = 228 * 1024


@dataclass(frozen=True)
class CpuRates:
    """One core of the H100 machine's CPU running gcc -O3 code (the record's CPU column)."""

    name: str = "one CPU core"
    op_s: float = 0.12e-9
    """Per operation (`statement_ops`, counted exactly per instance): gcc -O3 vectorizes and
    overlaps loads, so an operation costs a fraction of a cycle. Over the record's 30 kernels
    (with the streaming below taken out) the time per operation spans 3.5e-11 (heat-3d) to
    1.8e-9 s (covariance), median 2.5e-10; this is the first quartile: a CPU on its better days,
    so that doubt keeps code on the CPU (`benchmarks/bench_gpu_model.py` prints the fit)."""
    bytes_s: float = 5e9
    """Streaming the arrays once (the distinct bytes they hold) at one core's bandwidth, added
    to the operations: the matrix-vector kernels (atax, bicg, mvt, trisolv) are memory-bound."""


H100 = DeviceRates()
ONE_CORE = CpuRates()


# ----------------------------------------------------------------------------- estimates


@dataclass(frozen=True, eq=False)
class Estimate:
    """A formula over counts: evaluated at sizes (`at`) or printed as C (`c`), from one definition.

    ``op`` is ``const``, ``count``, ``+``, ``*``, ``/``, ``min`` or ``max``.
    """

    op: str
    args: tuple[Estimate, ...] = ()
    value: float = 0.0
    count: Count | None = None

    @staticmethod
    def of(x: Count | float) -> Estimate:
        return Estimate("count", count=x) if isinstance(x, Count) else Estimate("const", value=float(x))

    def __add__(self, other: Estimate | float) -> Estimate:
        return Estimate("+", (self, _est(other)))

    def __mul__(self, other: Estimate | float) -> Estimate:
        return Estimate("*", (self, _est(other)))

    def __truediv__(self, other: Estimate | float) -> Estimate:
        return Estimate("/", (self, _est(other)))

    def at(self, values: Mapping[str, int]) -> float:
        if self.op == "const":
            return self.value
        if self.op == "count":
            assert self.count is not None
            return float(self.count.evaluate(values))
        a = [x.at(values) for x in self.args]
        return {"+": lambda: a[0] + a[1], "*": lambda: a[0] * a[1], "/": lambda: a[0] / a[1],
                "min": lambda: min(a), "max": lambda: max(a)}[self.op]()  # fmt: skip

    def c(self, names: Mapping[str, str], lets: Lets) -> str:
        """C of type ``double``; each count (and each operand of a min or max) is computed once,
        in a variable of `lets`, so the text grows with the formula, not with its nesting."""
        if self.op == "const":
            return repr(self.value)
        if self.op == "count":
            assert self.count is not None
            return lets.bind(self.count.c(names), key=id(self.count))
        a = [x.c(names, lets) for x in self.args]
        if self.op in ("min", "max"):
            x, y = (lets.bind(v) for v in a)
            return f"({x} {'<' if self.op == 'min' else '>'} {y} ? {x} : {y})"
        return f"({a[0]} {self.op} {a[1]})"


@dataclass
class Lets:
    """``double hx_cost0 = …;`` declarations, shared between the formulas of one condition."""

    decls: list[str] = field(default_factory=list)
    seen: dict[object, str] = field(default_factory=dict)

    def bind(self, text: str, key: object = None) -> str:
        if (text.startswith("hx_cost") and text[7:].isdigit()) or _is_number(text):
            return text
        key = text if key is None else key
        if key not in self.seen:
            self.seen[key] = f"hx_cost{len(self.decls)}"
            self.decls.append(f"double {self.seen[key]} = {text};")
        return self.seen[key]


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def faster_on_gpu_c(cost: GpuCost) -> str:
    """True when the estimated GPU time is below the CPU's, as one C expression (a GNU statement
    expression ``({ double hx_cost0 = …; … hx_gpu < hx_cpu; })``, which gcc and clang take)."""
    lets = Lets()
    gpu = cost.gpu_time().c(cost.params, lets)
    cpu = cost.cpu_time().c(cost.params, lets)
    return "({ " + " ".join(lets.decls) + f" {gpu} < {cpu}; }})"


def _est(x: Estimate | float) -> Estimate:
    return x if isinstance(x, Estimate) else Estimate.of(x)


def emin(a: Estimate | float, b: Estimate | float) -> Estimate:
    return Estimate("min", (_est(a), _est(b)))


def emax(a: Estimate | float, b: Estimate | float) -> Estimate:
    return Estimate("max", (_est(a), _est(b)))


# ----------------------------------------------------------------------------- the report


@dataclass(frozen=True, eq=False)
class AccessCost:
    """One read or write of a statement, as the kernel performs it."""

    statement: str
    array: str
    is_write: bool
    place: str  # "global" | "shared" | "register"
    coalesced: bool | None  # None: on one thread, or not a global access
    count: Count  # executions of this access in global memory (0 where promoted)
    bytes: Count  # requested from global memory by this access (0 where promoted)


@dataclass(frozen=True, eq=False)
class KernelCost:
    name: str
    parallel: bool
    statements: tuple[str, ...]
    host_loops: tuple[str, ...]  # the source loops (or schedule expressions) around the launch
    launches: Count
    threads: Count  # over all launches
    block_threads: int
    instances: dict[str, Count]  # per statement
    ops: Count
    accesses: tuple[AccessCost, ...]
    copies_read: Count  # bytes of shared/register copies in, all launches
    copies_written: Count
    copied_elements: Count  # elements of those copies, in and out
    distinct_bytes: Count  # distinct elements of global arrays per launch, summed
    shared_bytes: int  # per block
    registers: int | None = None  # per thread, from ptxas -v
    spill_bytes: int | None = None

    def global_bytes(self, write: bool) -> Count:
        out = self.copies_written if write else self.copies_read
        for a in self.accesses:
            if a.is_write == write:
                out = out + a.bytes
        return out

    def coalesced_bytes(self, write: bool) -> Count:
        out = Count(())
        for a in self.accesses:
            if a.is_write == write and a.coalesced:
                out = out + a.bytes
        return out

    def time(self, rates: DeviceRates) -> dict[str, Estimate]:
        """``launch``, ``compute`` (the threads' work shared out), ``memory`` (the distinct bytes
        at HBM speed, a floor) and ``total`` seconds, all launches. Launches are asynchronous: the
        host queues the next while the GPU runs the last, so the total is the larger of the
        launches and the work (doitgen's 42,000 launches and 0.18 s of work took 0.26 s)."""
        launches = Estimate.of(self.launches)
        work = Estimate.of(self.ops) * rates.thread_op_s + Estimate.of(self.copied_elements) * rates.copy_s
        for a in self.accesses:
            per = rates.uncoalesced_access_s if a.coalesced is False else rates.access_s
            work = work + Estimate.of(a.count) * per
        per_launch = emax(Estimate.of(self.threads) / emax(launches, 1.0), 1.0)
        compute = work / emin(per_launch, float(rates.saturation_threads))
        memory = Estimate.of(self.distinct_bytes + self.copies_read + self.copies_written) / rates.hbm_bytes_s
        launch = launches * rates.launch_s
        return {"launch": launch, "compute": compute, "memory": memory, "total": emax(launch, emax(compute, memory))}

    def occupancy(self, rates: DeviceRates) -> float | None:
        """Resident warps per SM over the most an SM holds (64), or None without registers."""
        if self.registers is None:
            return None
        warps = math.ceil(self.block_threads / 32)
        per_sm = min(rates.blocks_per_sm, rates.threads_per_sm // (warps * 32))
        if self.shared_bytes:
            per_sm = min(per_sm, rates.shared_bytes_per_sm // (self.shared_bytes + 1024))
        regs = math.ceil(max(self.registers, 1) * 32 / 256) * 256 * warps  # allocated per warp, 256 at a time
        per_sm = min(per_sm, rates.registers_per_sm // regs)
        return per_sm * warps / (rates.threads_per_sm // 32)


def _sum(counts: Any) -> Count:
    out = Count(())
    for c in counts:
        out = out + c
    return out


@dataclass(frozen=True, eq=False)
class GpuCost:
    """The cost report of one SCoP's GPU program."""

    scop: str
    params: dict[str, str]  # isl name -> C name
    kernels: tuple[KernelCost, ...]
    copied_in: Count  # bytes host -> device
    copied_out: Count
    n_arrays: int  # allocated on the device
    cpu_ops: Count
    device: DeviceRates = H100
    cpu: CpuRates = ONE_CORE

    @property
    def exact(self) -> bool:
        counts = [self.copied_in, self.copied_out, self.cpu_ops]
        for k in self.kernels:
            counts += [k.launches, k.threads, k.ops, *(a.bytes for a in k.accesses)]
        return all(c.exact for c in counts)

    def transfer_time(self) -> Estimate:
        return Estimate.of(self.copied_in + self.copied_out) / self.device.pcie_bytes_s + self.n_arrays * self.device.alloc_s

    def gpu_time(self) -> Estimate:
        out = self.transfer_time()
        for k in self.kernels:
            out = out + k.time(self.device)["total"]
        return out

    def cpu_time(self) -> Estimate:
        return Estimate.of(self.cpu_ops) * self.cpu.op_s + Estimate.of(self.copied_in) / self.cpu.bytes_s

    def values(self, sizes: Mapping[str, int]) -> dict[str, int]:
        """C names -> isl names, for `Count.evaluate`."""
        by_c = {c: i for i, c in self.params.items()}
        return {by_c.get(p, p): v for p, v in sizes.items()}


def gpu_cost(gpu: GpuProgram, device: DeviceRates = H100, cpu: CpuRates = ONE_CORE) -> GpuCost:
    """The cost report of `gpu` (no registers: `with_registers` adds them from ptxas)."""
    scop = gpu.scop
    scop.ctx.reset_operations()
    launched = launch_sets(gpu)
    kernels = tuple(_kernel_cost(gpu, k, launched) for k in gpu.kernels)
    copied_in, copied_out = _transfers(scop)
    cpu_ops = _sum(count(s.domain).scale(statement_ops(s.info.node)) for s in scop.statements)
    params = {isl_name(p): p for p in scop.params}
    return GpuCost(scop.name, params, kernels, copied_in, copied_out, len(scop.arrays), cpu_ops, device, cpu)


def _kernel_cost(gpu: GpuProgram, k: Kernel, launched: Mapping[str, list[isl.Set]]) -> KernelCost:
    scop = gpu.scop
    prefix = gpu.host_values.get(k.name)
    subtree = gpu.kernel_schedules.get(k.name)
    if prefix is None or subtree is None:
        raise ValueError(f"{k.name} of {scop.name} was mapped without its host values")
    launch_set = _named_range(prefix, k.host_params)
    launches = _sum(count(s) for s in launched.get(k.name, []))
    instances = {s: count(_one(prefix.domain(), s, scop)) for s in k.statements}
    ops = _sum(c.scale(statement_ops(scop.statement(s).info.node)) for s, c in instances.items())
    block_threads = math.prod(k.block) if k.parallel else 1
    threads = _threads(scop, k, prefix, subtree, launch_set) if k.parallel else launches
    places = {p.array: p.place for p in k.promotions}
    accesses = tuple(
        _access_cost(scop, k, subtree, a, instances[s], places.get(a.array, "global"))
        for s in k.statements
        for a in _distinct_accesses(scop.statement(s))
    )
    copies_read, copies_written, copied = _copies(scop, k, prefix, subtree)
    distinct = _distinct_bytes(scop, k, prefix, places)
    shared = k.buffers * sum(p.n_bytes for p in k.promotions if p.place == "shared")
    return KernelCost(
        k.name, k.parallel, k.statements, _host_loop_names(scop, k, prefix), launches, threads,
        block_threads, instances, ops, accesses, copies_read, copies_written, copied, distinct, shared,
    )  # fmt: skip


def _distinct_accesses(st: Statement) -> list[Access]:
    """The statement's reads, each element read once (``x > y ? x : y`` reads ``x`` once: the
    compiler keeps it in a register), and its writes."""
    reads: list[Access] = []
    for a in st.reads:
        if not any(r.array == a.array and r.relation.is_equal(a.relation) for r in reads):
            reads.append(a)
    return [*reads, *st.writes]


def _one(us: isl.UnionSet, name: str, scop: Scop) -> isl.Set:
    """The instances of statement `name` in `us`: none where the statement never runs (a loop
    from ``n - ii`` to ``n - i`` with ``ii >= n - i``: fuzzer seed 510, a StopIteration)."""
    sets: list[isl.Set] = []
    us.foreach_set(sets.append)
    found = next((s for s in sets if s.get_tuple_name() == name), None)
    return found if found is not None else isl.Set.empty(scop.statement(name).domain.get_space())


# ----------------------------------------------------------------------------- launches


def launch_sets(gpu: GpuProgram) -> dict[str, list[isl.Set]]:
    """Per kernel, the values of the host loops around each of its launches in the host code, as
    sets over the parameters, one per call site: what the host AST executes, including launches
    at host values where the kernel has nothing to do (the host loops run over all kernels'
    values; such a launch still costs one)."""
    params = _param_names(gpu.scop.context)
    out: dict[str, list[isl.Set]] = {}

    def user(e: isl.AstExpr, dims: list[str], conds: list[str]) -> None:
        name = e.op_get_arg(0).id_get_id().get_name()
        text = f"[{', '.join(params)}] -> {{ [{', '.join(dims)}] : {' and '.join(conds) or 'true'} }}"
        launched = isl.Set.read_from_str(gpu.scop.ctx, text).intersect_params(gpu.scop.context.params())
        out.setdefault(name, []).append(launched.coalesce())

    _walk_host(gpu.host_ast, [], [], user)
    return out


def _param_names(s: isl.Set) -> list[str]:
    return [str(s.get_dim_name(_PARAM, i)) for i in range(s.dim(_PARAM))]


_AST: Any = isl.ast_node_type


def _walk_host(node: isl.AstNode, dims: list[str], conds: list[str], user: Any) -> None:
    kind = node.get_type()
    if kind == _AST.block:
        children = node.block_get_children()
        for i in range(children.n_ast_node()):
            _walk_host(children.get_at(i), dims, conds, user)
    elif kind == _AST.for_:
        it = node.for_get_iterator().id_get_id().get_name()
        init, inc = _isl_pieces(node.for_get_init()), _isl_text(node.for_get_inc())
        loop = [_join([(g, f"{it} >= {v}") for g, v in init]), _isl_text(node.for_get_cond())]
        if inc != "1":
            loop.append(_join([(g, f"({it} - ({v})) mod {inc} = 0") for g, v in init]))
        _walk_host(node.for_get_body(), [*dims, it], [*conds, *loop], user)
    elif kind == _AST.if_:
        cond = _isl_text(node.if_get_cond())
        _walk_host(node.if_get_then_node(), dims, [*conds, cond], user)
        if node.if_has_else_node():
            _walk_host(node.if_get_else_node(), dims, [*conds, f"not ({cond})"], user)
    elif kind == _AST.user:
        guard, call = when_parts(node.user_get_expr())
        user(call, dims, conds if guard is None else [*conds, _isl_text(guard)])
    elif kind == _AST.mark:
        _walk_host(node.mark_get_node(), dims, conds, user)


_ISL_BINARY = {
    "add": "+", "sub": "-", "mul": "*", "le": "<=", "lt": "<", "ge": ">=", "gt": ">", "eq": "=",
    "and_": "and", "and_then": "and", "or_": "or", "or_else": "or",
}  # fmt: skip


def _isl_text(e: isl.AstExpr) -> str:
    """An isl AST expression in isl's own syntax (``floor(a/b)``, ``min(a, b)``, ``a mod b``): a
    condition, or a value without ``?:``. isl's syntax has no ``?:``, so a condition that compares
    one is split into its cases (`_isl_pieces`): ``c1 >= (c0 >= 24 ? 3 : c0 / 3)`` is
    ``(c0 >= 24 and c1 >= 3) or (not (c0 >= 24) and c1 >= floor(c0/3))``."""
    return _join(_isl_pieces(e))


Piece = tuple["str | None", str]  # (the condition where it holds, None: always; isl text)


def _join(pieces: list[Piece]) -> str:
    """Guarded conditions as one condition (their guards do not overlap)."""
    if len(pieces) == 1 and pieces[0][0] is None:
        return pieces[0][1]
    return "(" + " or ".join(v if g is None else f"({g} and {v})" for g, v in pieces) + ")"


def _isl_pieces(e: isl.AstExpr) -> list[Piece]:
    """`e` as guarded pieces without ``?:`` (one, unguarded, where it has none)."""
    kind = e.get_type()
    if kind == isl.ast_expr_type.int:
        return [(None, str(e.int_get_val().to_python()))]
    if kind == isl.ast_expr_type.id:
        return [(None, str(e.id_get_id().get_name()))]
    op = e.op_get_type()
    ops: Any = isl.ast_expr_op_type
    args = [_isl_pieces(e.op_get_arg(k)) for k in range(e.op_get_n_arg())]
    if op in (ops.cond, ops.select):
        c = _join(args[0])
        return [(_both(g, f"({c})"), v) for g, v in args[1]] + [(_both(g, f"not ({c})"), v) for g, v in args[2]]
    out: list[Piece] = []
    for combo in itertools.product(*args):
        guard: str | None = None
        for g, _ in combo:
            guard = _both(guard, g)
        out.append((guard, _isl_op(op, [v for _, v in combo])))
    return out


def _both(a: str | None, b: str | None) -> str | None:
    return b if a is None else a if b is None else f"({a} and {b})"


def _isl_op(op: Any, a: list[str]) -> str:
    ops: Any = isl.ast_expr_op_type
    for name, sym in _ISL_BINARY.items():
        if op == getattr(ops, name):
            return f"({a[0]} {sym} {a[1]})"
    if op == ops.minus:
        return f"(-({a[0]}))"
    if op in (ops.fdiv_q, ops.pdiv_q, ops.div):  # isl reads a divisor that is a bare number only
        return f"floor(({a[0]})/{a[1]})"
    if op in (ops.pdiv_r, ops.zdiv_r):
        return f"(({a[0]}) mod {a[1]})"
    if op in (ops.min, ops.max):
        return f"{'min' if op == ops.min else 'max'}({', '.join(a)})"
    raise NotCountable(f"isl AST operator {op} in a host loop")


def _named_range(prefix: isl.UnionMap, host: tuple[str, ...]) -> isl.Set:
    """The host values of the kernel's launches, as a set ``[h0, h1, …]`` with those names."""
    rng = isl.Set.from_union_set(prefix.range().coalesce()) if host else None
    if rng is None:
        return isl.Set.universe(isl.Space.set_alloc(prefix.get_ctx(), 0, 0))
    rng = rng.reset_tuple_id()
    for i, h in enumerate(host):
        rng = rng.set_dim_name(_SET, i, h)
    return rng


def _tiled(subtree: isl.UnionMap, tiles: tuple[int, ...]) -> isl.UnionMap:
    """Instances -> the tile index ``floor(x_k / tile_k)`` of the first ``len(tiles)`` dims."""
    maps: list[isl.Map] = []
    subtree.foreach_map(maps.append)
    d = maps[0].dim(isl.dim_type.out) if maps else 0
    xs = [f"x{i}" for i in range(d)]
    gs = [f"floor(x{i}/{t})" for i, t in enumerate(tiles)]
    tile_map = isl.Map.read_from_str(subtree.get_ctx(), f"{{ [{', '.join(xs)}] -> [{', '.join(gs)}] }}")
    out = isl.UnionMap.empty(subtree.get_space())
    for m in maps:
        out = out.union(isl.UnionMap.from_map(m.reset_tuple_id(isl.dim_type.out).apply_range(tile_map)))
    return out


def _with_host(prefix: isl.UnionMap, other: isl.UnionMap, host: tuple[str, ...], names: list[str]) -> isl.Set:
    """The set of ``[h…, y…]`` over the kernel's instances: host values and `other`'s values."""
    both = prefix.range_product(other).range()
    sets: list[isl.Set] = []
    both.foreach_set(sets.append)
    out = None
    for s in sets:
        flat = s.flatten().reset_tuple_id()
        out = flat if out is None else out.union(flat)
    assert out is not None
    for i, name in enumerate([*host, *names]):
        out = out.set_dim_name(_SET, i, name)
    return out.coalesce()


MAX_GRID_PIECES = 8
"""Pieces of a launch's grid size beyond which the threads are counted on the blocks with work
(those of a skewed band's grid box, summed piece by piece over the launches, took seconds)."""


def _threads(scop: Scop, k: Kernel, prefix: isl.UnionMap, subtree: isl.UnionMap, launches: isl.Set) -> Count:
    """Threads over all launches: per launch the box of block tiles times the block's threads."""
    n = len(k.tile)
    if n == 0:
        return count(launches).scale(math.prod(k.block))
    names = [f"_g{i}" for i in range(n)]
    grid = _with_host(prefix, _tiled(subtree, k.tile), k.host_params, names)
    per_launch = Count.const(scop.ctx, math.prod(k.block))
    flat = grid.move_dims(_PARAM, grid.dim(_PARAM), _SET, 0, len(k.host_params))
    for i, (lo, hi) in enumerate(_tile_ranges(flat, n)):
        one = isl.PwAff.val_on_domain(hi.domain(), isl.Val.one(scop.ctx))
        extent = hi.sub(lo).add(one)
        if k.shape.grid:
            cap = isl.PwAff.val_on_domain(hi.domain(), isl.Val.int_from_si(scop.ctx, k.shape.grid[i]))
            extent = extent.min(cap)
        per_launch = per_launch * from_pw_aff(extent.coalesce())
    if not k.host_params:
        return per_launch
    if len(per_launch.pieces) > MAX_GRID_PIECES:  # skewed bands: summing each piece took seconds
        tiles = count(grid).scale(math.prod(k.block))
        return Count(tiles.pieces, exact=False)
    return sum_over(launches, per_launch)


def _tile_ranges(flat: isl.Set, n: int) -> list[tuple[isl.PwAff, isl.PwAff]]:
    """The first and last tile of each of the `n` block dimensions of `flat`, as the grid has them
    (`gpu_mapping._grid`): exact within `GRID_OPERATIONS` of isl's work, else those of the box
    around `flat`."""
    ctx = flat.get_ctx()
    budget = ctx.get_max_operations()
    ctx.set_max_operations(min(budget, GRID_OPERATIONS) if budget else GRID_OPERATIONS)
    ctx.reset_operations()
    try:
        return [(flat.dim_min(i), flat.dim_max(i)) for i in range(n)]
    except isl.Error:
        ctx.reset_operations()
        ctx.set_max_operations(budget)
        box = isl.Set.from_basic_set(flat.simple_hull())
        return [(box.dim_min(i), box.dim_max(i)) for i in range(n)]
    finally:
        ctx.set_max_operations(budget)


def _thread_x_iterator(scop: Scop, k: Kernel, subtree: isl.UnionMap, statement: str) -> tuple[int, int] | None:
    """(position, sign) of the iterator that ``threadIdx.x``'s band member is, ±1 times, or None."""
    if not k.parallel or not k.block:
        return None
    m = _one_map(subtree, statement)
    if m is None:
        return None
    aff = _single_aff(m, len(k.block) - 1)
    if aff is None:
        return None
    coefficients = [_int(aff.get_coefficient_val(_IN, i)) for i in range(aff.dim(_IN))]
    nonzero = [(i, c) for i, c in enumerate(coefficients) if c]
    return nonzero[0] if len(nonzero) == 1 and abs(nonzero[0][1]) == 1 else None


def _one_map(um: isl.UnionMap, name: str) -> isl.Map | None:
    maps: list[isl.Map] = []
    um.foreach_map(maps.append)
    return next((m for m in maps if m.get_tuple_name(_IN) == name), None)


def _single_aff(m: isl.Map, dim: int) -> isl.Aff | None:
    if not m.is_single_valued():
        return None
    pieces = isl.PwMultiAff.from_map(m).get_pw_aff(dim).get_pieces()
    affs = [a for _, a in pieces]
    if not affs or any(not a.plain_is_equal(affs[0]) for a in affs) or affs[0].dim(isl.dim_type.div):
        return None
    return affs[0]  # type: ignore[no-any-return]


def _int(v: isl.Val) -> int:
    return int(v.to_python()) if v.is_int() else 0


def _coalesced(access: Access, thread_x: tuple[int, int] | None) -> bool | None:
    """Whether consecutive ``threadIdx.x`` touch the same or consecutive elements (None: unknown)."""
    if thread_x is None:
        return None
    pos, _ = thread_x
    m = access.relation
    rank = m.dim(isl.dim_type.out)
    if rank == 0:
        return True  # a scalar: every thread the same element
    for d in range(rank):
        aff = _single_aff(m, d)
        if aff is None:
            return False
        stride = _int(aff.get_coefficient_val(_IN, pos))
        if (d < rank - 1 and stride != 0) or abs(stride) > 1:
            return False
    return True


def _elem_bytes(scop: Scop, array: str) -> int:
    decl = next(a for a in scop.arrays if a.name == array)
    return ELEM_BYTES.get(decl.elem_type.split()[-1], 8)


def _access_cost(scop: Scop, k: Kernel, subtree: isl.UnionMap, a: Access, n: Count, place: str) -> AccessCost:
    size = _elem_bytes(scop, a.array)
    stmt = a.relation.get_tuple_name(_IN)
    if place != "global":
        zero = Count.const(scop.ctx, 0)
        return AccessCost(stmt, a.array, a.is_write, place, None, zero, zero)
    coalesced = _coalesced(a, _thread_x_iterator(scop, k, subtree, stmt)) if k.parallel else None
    return AccessCost(stmt, a.array, a.is_write, place, coalesced, n, n.scale(size))


def _copies(scop: Scop, k: Kernel, prefix: isl.UnionMap, subtree: isl.UnionMap) -> tuple[Count, Count, Count]:
    """Bytes of shared-memory copies (the tile box per tile executed) and register copies (each
    element once per launch), in and out; and their elements, in and out together."""
    zero = Count.const(scop.ctx, 0)
    read, written, elements = zero, zero, zero
    shared = [p for p in k.promotions if p.place == "shared"]
    if shared and k.shape.n_tiled:
        names = [f"_t{i}" for i in range(k.shape.n_tiled)]
        tiles = count(_with_host(prefix, _tiled(subtree, k.shape.tile), k.host_params, names))
        for p in shared:
            for footprint, is_write in ((p.read, False), (p.written, True)):
                if footprint.is_empty():
                    continue
                elements = elements + tiles.scale(math.prod(p.size))
                if is_write:
                    written = written + tiles.scale(p.n_bytes)
                else:
                    read = read + tiles.scale(p.n_bytes)
    for p in k.promotions:
        if p.place != "register":
            continue
        size = _elem_bytes(scop, p.array)
        for footprint, is_write in ((p.read, False), (p.written, True)):
            if footprint.is_empty():
                continue
            n = _footprint(scop, k, prefix, p.array, writes=is_write)
            elements = elements + n
            if is_write:
                written = written + n.scale(size)
            else:
                read = read + n.scale(size)
    return read, written, elements


def _footprint(scop: Scop, k: Kernel, prefix: isl.UnionMap, array: str, writes: bool | None) -> Count:
    """Distinct elements of `array` the kernel reads/writes (both: None), per launch, summed."""
    rel = isl.UnionMap.empty(prefix.get_space())
    for s in k.statements:
        st = scop.statement(s)
        for a in (*st.reads, *st.writes):
            if a.array == array and writes in (None, a.is_write):
                rel = rel.union(isl.UnionMap.from_map(a.relation))
    rel = rel.intersect_domain(prefix.domain())
    if rel.is_empty():
        return Count.const(scop.ctx, 0)
    maps: list[isl.Map] = []
    rel.foreach_map(maps.append)
    rank = maps[0].dim(isl.dim_type.out)
    elements = isl.UnionMap.empty(rel.get_space())
    for m in maps:
        elements = elements.union(isl.UnionMap.from_map(m.reset_tuple_id(isl.dim_type.out)))
    return count(_with_host(prefix, elements, k.host_params, [f"_a{i}" for i in range(rank)]))


def _distinct_bytes(scop: Scop, k: Kernel, prefix: isl.UnionMap, places: Mapping[str, str]) -> Count:
    arrays = sorted({a.array for s in k.statements for a in (*scop.statement(s).reads, *scop.statement(s).writes)})
    out = Count.const(scop.ctx, 0)
    for array in arrays:
        if places.get(array, "global") == "global":
            out = out + _footprint(scop, k, prefix, array, None).scale(_elem_bytes(scop, array))
    return out


def _transfers(scop: Scop) -> tuple[Count, Count]:
    """Bytes the host code copies in (every array) and out (the written ones)."""
    written = {w.array for s in scop.statements for w in s.writes}
    zero = Count.const(scop.ctx, 0)
    copied_in, copied_out = zero, zero
    for a in scop.arrays:
        if a.kind != "array":
            continue
        size = _array_elements(scop, a.name).scale(_elem_bytes(scop, a.name))
        copied_in = copied_in + size
        if a.name in written:
            copied_out = copied_out + size
    return copied_in, copied_out


def _array_elements(scop: Scop, array: str) -> Count:
    """The declared extent where it is known, else up to the last element accessed."""
    extent = scop.extents.get(array)
    if extent is not None and extent.is_bounded():
        return count(extent)
    accessed = scop.reads(array).union(scop.writes(array)).range()
    sets: list[isl.Set] = []
    accessed.foreach_set(sets.append)
    out = Count.const(scop.ctx, 1)
    for d in range(sets[0].dim(_SET) if sets else 0):
        hi = sets[0].dim_max(d)
        for s in sets[1:]:
            hi = hi.union_max(s.dim_max(d))
        one = isl.PwAff.val_on_domain(hi.domain(), isl.Val.one(scop.ctx))
        out = out * from_pw_aff(hi.add(one).coalesce())
    return out


def _host_loop_names(scop: Scop, k: Kernel, prefix: isl.UnionMap) -> tuple[str, ...]:
    """The source loop each host dimension runs (``k``), or its expression (``i + j``)."""
    if not k.host_params:
        return ()
    st = scop.statement(k.statements[0])
    m = _one_map(prefix, st.name)
    names = []
    for d in range(len(k.host_params)):
        aff = _single_aff(m, d) if m is not None else None
        if aff is None:
            names.append(k.host_params[d])
            continue
        terms: list[str] = []
        for i, it in enumerate(st.iterators):
            c = _int(aff.get_coefficient_val(_IN, i))
            if c:
                terms.append(it if abs(c) == 1 and not terms else f"-{it}" if c == -1 else f"{c}*{it}")
        text = " + ".join(terms).replace("+ -", "- ") or aff.get_constant_val().to_str()
        names.append(text)
    return tuple(names)


# ----------------------------------------------------------------------------- registers


@dataclass(frozen=True)
class Resources:
    registers: int
    spill_bytes: int  # spill stores + loads


def ptxas_resources(cuda_kernels: str, header: str, stem: str, arch: str = "sm_90") -> dict[str, Resources]:
    """Registers and spills per kernel from ``nvcc -Xptxas -v`` on the CUDA kernels file (slow:
    a second or more). Raises `FileNotFoundError` without nvcc, `RuntimeError` when it fails."""
    with tempfile.TemporaryDirectory(prefix="hexplore-ptxas-") as tmp:
        (Path(tmp) / f"{stem}_kernel.hu").write_text(header)
        src = Path(tmp) / f"{stem}_kernel.cu"
        src.write_text(cuda_kernels)
        cmd = ["nvcc", f"-arch={arch}", "-O3", "-c", "-Xptxas", "-v", "-o", str(Path(tmp) / "k.o"), str(src)]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"nvcc failed: {proc.stderr[-2000:]}")
    return parse_ptxas(proc.stderr)


_ENTRY = re.compile(r"(?:Compiling entry function|Function properties for) '?_?Z?\d*(kernel\d+)")
_USED = re.compile(r"Used (\d+) registers")
_SPILL = re.compile(r"(\d+) bytes spill stores, (\d+) bytes spill loads")


def parse_ptxas(text: str) -> dict[str, Resources]:
    """``ptxas info : Compiling entry function '_Z7kernel0Pdi'`` … ``Used 30 registers`` …"""
    out: dict[str, Resources] = {}
    current, spill = None, 0
    for line in text.splitlines():
        if (m := _ENTRY.search(line)) is not None:
            if m.group(1) != current:
                current, spill = m.group(1), 0
        elif (m := _SPILL.search(line)) is not None:
            spill = int(m.group(1)) + int(m.group(2))
        elif (m := _USED.search(line)) is not None and current is not None:
            out[current] = Resources(int(m.group(1)), spill)
    return out


def with_registers(cost: GpuCost, resources: Mapping[str, Resources]) -> GpuCost:
    kernels = tuple(
        _replace_regs(k, resources[k.name]) if k.name in resources else k for k in cost.kernels
    )
    return GpuCost(cost.scop, cost.params, kernels, cost.copied_in, cost.copied_out, cost.n_arrays, cost.cpu_ops, cost.device, cost.cpu)


def _replace_regs(k: KernelCost, r: Resources) -> KernelCost:
    return replace(k, registers=r.registers, spill_bytes=r.spill_bytes)


# ----------------------------------------------------------------------------- rendering


LARGE_POINT = 1000
"""Sizes at which a parametric count is read as a polynomial when none are given: the chamber
where every size is large (sizes 1000, 1001, … in parameter order)."""


def generic_sizes(cost: GpuCost) -> dict[str, int]:
    return {c: LARGE_POINT + k for k, c in enumerate(cost.params.values())}


def render_cost(cost: GpuCost, sizes: Mapping[str, int] | None = None) -> str:
    """The report as text: per kernel its counts (as polynomials in the sizes, and their values at
    `sizes` when every size is known), then the SCoP's transfers and estimated times."""
    known = dict(sizes or {})
    complete = all(p in known for p in cost.params.values())
    at = cost.values(known if complete else generic_sizes(cost))
    names = cost.params
    lines = [f"{cost.scop}: GPU cost ({cost.device.name}; counts {'exact' if cost.exact else 'approximate in places'})"]
    if complete and cost.params:
        lines.append("  at " + ", ".join(f"{p} = {known[p]}" for p in cost.params.values()))
    elif cost.params:
        lines.append("  formulas for large sizes; pass sizes (--param NAME=VALUE) for values and times")

    def row(label: str, c: Count, unit: str = "") -> str:
        text = c.at(at).text(names)
        value = f" = {_num(float(c.evaluate(at)))}{unit}" if complete else ""
        return f"    {label:<22}{text}{value}"

    for k in cost.kernels:
        kind = f"{k.block_threads}-thread blocks" if k.parallel else "ONE GPU thread (sequential)"
        lines.append(f"  {k.name} ({', '.join(k.statements)}): {kind}")
        where = f"once per iteration of {', '.join(k.host_loops)}" if k.host_loops else "once per call"
        lines.append(f"    launched              {where}")
        lines.append(row("launches per call", k.launches))
        lines.append(row("threads, all launches", k.threads))
        for s, n in k.instances.items():
            lines.append(row(f"instances of {s}", n))
        for write in (False, True):
            total = k.global_bytes(write)
            label = "global bytes written" if write else "global bytes read"
            line = row(label, total)
            if complete and k.parallel:
                b, c = float(total.evaluate(at)), float(k.coalesced_bytes(write).evaluate(at))
                moved = float(_sum(a.bytes for a in k.accesses if a.is_write == write).evaluate(at))
                if moved:
                    line += f" ({100 * c / moved:.0f}% of direct accesses coalesced)"
                elif b:
                    line += " (copies of promoted arrays)"
            lines.append(line)
        uncoalesced = sorted({f"{a.array} in {a.statement}" for a in k.accesses if a.coalesced is False})
        if uncoalesced:
            lines.append(f"    not coalesced         {', '.join(uncoalesced)}")
        lines.append(f"    shared memory         {k.shared_bytes} bytes per block")
        if k.registers is not None:
            occ = k.occupancy(cost.device)
            spill = f", {k.spill_bytes} bytes spilled" if k.spill_bytes else ", no spills"
            lines.append(f"    registers             {k.registers} per thread{spill}; occupancy {100 * (occ or 0):.0f}%")
        if complete:
            t = {n: e.at(at) for n, e in k.time(cost.device).items()}
            lines.append(
                f"    estimated time        {seconds_text(t['total'])} (launches {seconds_text(t['launch'])}, "
                f"compute {seconds_text(t['compute'])}, memory {seconds_text(t['memory'])})"
            )
    lines.append(f"  copied to the GPU       {cost.copied_in.at(at).text(names)} bytes" + (f" = {_num(float(cost.copied_in.evaluate(at)))}" if complete else ""))
    lines.append(f"  copied back             {cost.copied_out.at(at).text(names)} bytes" + (f" = {_num(float(cost.copied_out.evaluate(at)))}" if complete else ""))
    lines.append(f"  CPU operations          {cost.cpu_ops.at(at).text(names)}" + (f" = {_num(float(cost.cpu_ops.evaluate(at)))}" if complete else ""))
    if complete:
        gpu, cpu = cost.gpu_time().at(at), cost.cpu_time().at(at)
        lines.append(
            f"  estimated               GPU {seconds_text(gpu)} (transfers {seconds_text(cost.transfer_time().at(at))}) "
            f"against {seconds_text(cpu)} on {cost.cpu.name}: {'GPU' if gpu < cpu else 'CPU'} faster"
        )
    return "\n".join(lines) + "\n"


def _num(x: float) -> str:
    return format_count(x) if abs(x) >= 1000 else (str(int(x)) if x == int(x) else f"{x:.3g}")


def seconds_text(s: float) -> str:
    """``1.2 s``, ``40.1 ms``, ``50 µs``."""
    if s >= 1:
        return f"{s:.3g} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3g} ms"
    return f"{s * 1e6:.3g} µs"


# ----------------------------------------------------------------------------- said for people


def explain(cost: GpuCost, at: Mapping[str, int]) -> str:
    """Why the GPU loses, in the numbers that make most of its time: launches (and the loops
    they are inside), kernels on one thread, the busiest parallel kernel, the copies; then both
    totals. ``the GPU code would launch 6,000 kernels per call (kernel0 once per iteration of
    `i`, …) …; estimated 40 ms on the GPU against 1.2 ms on one CPU core``."""
    gpu = cost.gpu_time().at(at)
    parts = []
    times = {k.name: {n: e.at(at) for n, e in k.time(cost.device).items()} for k in cost.kernels}
    launch_s = sum(t["launch"] for t in times.values())
    launches = sum(int(k.launches.evaluate(at)) for k in cost.kernels)
    if launch_s >= 0.2 * gpu:
        groups: dict[tuple[str, ...], list[str]] = {}
        for k in cost.kernels:
            if k.host_loops:
                groups.setdefault(k.host_loops, []).append(k.name.removeprefix("kernel"))
        looped = [
            f"{'kernel' if len(ks) == 1 else 'kernels '}{', '.join(ks)} once per iteration of "
            + " and ".join(f"`{h}`" for h in loops)
            for loops, ks in groups.items()
        ]
        where = f" ({'; '.join(looped)})" if looped else ""
        parts.append(f"launch {launches:,} kernels per call{where}, {seconds_text(launch_s)} at {seconds_text(cost.device.launch_s)} each")
    sequential = [k for k in cost.kernels if not k.parallel]
    seq_s = sum(times[k.name]["compute"] for k in sequential)
    if sequential and seq_s >= 0.2 * gpu:
        ops = sum(float(k.ops.evaluate(at)) for k in sequential)
        names = ", ".join(f"{k.name} ({', '.join(k.statements)})" for k in sequential)
        parts.append(f"run {names} on one GPU thread: {format_count(ops)} operations, {seconds_text(seq_s)}")
    for k in cost.kernels:
        t = times[k.name]
        busy = max(t["compute"], t["memory"])
        if k.parallel and busy >= 0.2 * gpu:
            what = "compute" if t["compute"] >= t["memory"] else "memory traffic"
            parts.append(f"spend {seconds_text(busy)} in {k.name}'s {what}")
    copy_s = cost.transfer_time().at(at)
    if copy_s >= 0.2 * gpu:
        moved = float((cost.copied_in + cost.copied_out).evaluate(at))
        parts.append(f"copy {format_count(moved)} bytes between host and GPU, {seconds_text(copy_s)}")
    why = "the GPU code would " + "; ".join(parts) + "; " if parts else ""
    cpu = cost.cpu_time().at(at)
    return f"{why}estimated {seconds_text(gpu)} on the GPU ({cost.device.name}) against {seconds_text(cpu)} on {cost.cpu.name}"


def formula_summary(cost: GpuCost) -> str:
    """The run-time check's ingredients as polynomials for large sizes: ``GPU: 3*n - 3 launches,
    1/2*n*n operations on one thread, 16*n*n bytes copied; CPU: n*n*n operations``."""
    at = cost.values(generic_sizes(cost))
    names = cost.params
    launches = _sum(k.launches for k in cost.kernels).at(at).text(names)
    parts = [f"{launches} launch{'' if launches == '1' else 'es'}"]
    sequential = [k.ops for k in cost.kernels if not k.parallel]
    if sequential:
        parts.append(f"{_sum(sequential).at(at).text(names)} operations on one thread")
    parts.append(f"{(cost.copied_in + cost.copied_out).at(at).text(names)} bytes copied")
    return f"GPU: {', '.join(parts)}; CPU: {cost.cpu_ops.at(at).text(names)} operations"




# ----------------------------------------------------------------------------- the decision


def offload_decision(
    gpu: GpuProgram, options: ProfitabilityOptions | None = None, values: Mapping[str, int] | None = None
) -> Profitability:
    """`profitability.decide` for the SCoP of `gpu`, with its cost report where it can be counted
    (where isl's budget runs out, the work threshold alone decides, as before the cost model)."""
    scop = gpu.scop
    first = decide(scop, options, values)
    if first.decision == "cpu":
        return first
    try:
        cost = gpu_cost(gpu)
    except (isl.Error, NotCountable):
        return first
    finally:
        scop.ctx.reset_operations()
    return decide(scop, options, values, cost)


__all__ = [
    "H100",
    "ONE_CORE",
    "AccessCost",
    "CpuRates",
    "DeviceRates",
    "Estimate",
    "GpuCost",
    "KernelCost",
    "NotCountable",
    "Resources",
    "explain",
    "faster_on_gpu_c",
    "formula_summary",
    "gpu_cost",
    "offload_decision",
    "parse_ptxas",
    "ptxas_resources",
    "render_cost",
    "seconds_text",
    "with_registers",
]
