"""The `cuda-kernel` pass: a `__global__` kernel's model and everything it shows, as remarks.

Instead of loop nests (a kernel has none of its own), a kernel gets `CudaKernelModeled` (or
`CudaKernelNotModeled` with the reasons), then one remark per finding: `DataRace`,
`BarrierDivergence`, `RedundantBarrier`, `UncoalescedAccess`, `SharedBankConflict`. Ranges are
the accesses' and barriers' own; the witness values are in the remark's args.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import islpy as isl

from core_compiler import render as core_render
from core_compiler.cuda import coalescing
from core_compiler.cuda import races as rc
from core_compiler.cuda.grid import PASS, KernelModel, model_kernel
from core_compiler.frontend import ir
from core_compiler.remarks import Remark, analysis, missed
from core_compiler.scop.model import Access, Statement


@dataclass(frozen=True, eq=False)
class KernelCheck:
    model: KernelModel | None
    races: tuple[rc.Race, ...] = ()
    divergent: tuple[rc.Divergence, ...] = ()
    redundant: tuple[object, ...] = ()  # the ranges of removable `__syncthreads()` calls
    uncoalesced: tuple[coalescing.Uncoalesced, ...] = ()
    conflicts: tuple[coalescing.BankConflict, ...] = ()
    notes: tuple[str, ...] = field(default=())


@dataclass(frozen=True)
class CheckKernel:
    """Model a CUDA kernel over its grid and check it (module docstring)."""

    name: ClassVar[str] = PASS
    max_isl_operations: int = 4_000_000

    def run(self, fn: ir.Function) -> tuple[KernelCheck, list[Remark]]:
        try:
            return check_kernel(fn, self.max_isl_operations)
        except isl.Error as e:
            why = "gave up: the polyhedral library exceeded its budget" if "operations" in str(e) else f"isl failed ({e})"
            return KernelCheck(None), [missed(PASS, "CudaKernelNotModeled",
                f"the kernel `{fn.name}` is not checked for races: hexplore {why}", fn.name_range, fn.name)]  # fmt: skip

    def render(self, check: KernelCheck) -> str:
        return render(check)


def check_kernel(fn: ir.Function, max_operations: int) -> tuple[KernelCheck, list[Remark]]:
    km, remarks = model_kernel(fn, max_operations)
    if km is None:
        return KernelCheck(None), remarks
    timing = rc.Timing(km)
    found = rc.races(km, timing)
    divergent = rc.divergent_barriers(km, timing)
    redundant = rc.redundant_barriers(km, timing, found) if not divergent else []
    check = KernelCheck(
        km, tuple(found), tuple(divergent), tuple(redundant),
        tuple(coalescing.uncoalesced(km)), tuple(coalescing.bank_conflicts(km)),
    )  # fmt: skip
    remarks.append(_modeled(km, check))
    remarks += [_race(km, r) for r in _one_per_pair(found)]
    remarks += [_divergence(km, d) for d in divergent]
    remarks += [_redundant(km, rng) for rng in redundant]
    remarks += [_uncoalesced(km, u) for u in check.uncoalesced]
    remarks += [_conflict(km, c) for c in check.conflicts]
    return check, remarks


def _one_per_pair(found: list[rc.Race]) -> list[rc.Race]:
    """One race per pair of source accesses (unrolled copies of a loop repeat them)."""
    seen, out = set(), []
    for r in found:
        key = frozenset((r.first.info.range, r.second.info.range))
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


# ------------------------------------------------------------------------------ words


def _modeled(km: KernelModel, check: KernelCheck) -> Remark:
    fn = km.function
    origin = f"the launch on line {km.shape.launch.range.line}" if km.shape.launch else "assumed"
    found = len(_one_per_pair(list(check.races))) + len(check.divergent)
    verdict = f"{found} synchronisation problem(s) found" if found else "no data race between its threads"
    return analysis(PASS, "CudaKernelModeled",
        f"modeled CUDA kernel: {len(km.scop.statements)} statement(s) run by every thread of blocks of "
        f"{km.shape.size_text} threads (block size: {origin}), {_over(km)}; {verdict}",
        fn.name_range, fn.name, block=[km.shape.block[a] for a in ("x", "y", "z")],
        races=len(check.races), barriers=len(rc.Timing(km).barriers))  # fmt: skip


def _over(km: KernelModel) -> str:
    grid = km.shape.grid
    if not grid:
        return "over any grid"
    sizes = " x ".join(str(grid[a]) for a in ("x", "y", "z") if a in grid)
    return (f"over the grid of its launches ({sizes} blocks: the step of its grid-stride loop, "
            "blockDim times gridDim, is a constant for that grid only)")  # fmt: skip


def thread_text(km: KernelModel, witness: dict[str, int], side: str, st: Statement) -> str:
    """``thread (3, 0) of block (1, 0)``, x first, then the loop values (``at t = 2``)."""
    grid = km.shape
    blocks = [witness[f"{side}{k}"] for k in range(km.n_block)]
    threads = [witness[f"{side}{km.n_block + k}"] for k in range(len(grid.thread_axes))]
    text = f"thread {_coords(threads[::-1])}"
    if blocks:
        text += f" of block {_coords(blocks[::-1])}"
    loops = [f"{v} = {witness[f'{side}{k}']}" for k, v in enumerate(st.iterators) if k >= km.n_grid]
    return text + (f" (at {', '.join(loops)})" if loops else "")


def source_text(fn: ir.Function, a: Access) -> str:
    """The access as written (``y[i + 1]``), where its range is one line of the function's text;
    else as modeled."""
    rng, lines = a.info.range, fn.text.splitlines()
    row = rng.line - fn.range.line
    if rng.end_line != rng.line or not 0 <= row < len(lines):
        return a.info.text
    shift = fn.range.col - 1 if row == 0 else 0
    return lines[row][rng.col - 1 - shift : rng.end_col - 1 - shift] or a.info.text


def _coords(values: list[int]) -> str:
    return str(values[0]) if len(values) == 1 else "(" + ", ".join(map(str, values)) + ")"


def _sizes(km: KernelModel, witness: dict[str, int]) -> str:
    sizes = [f"{p} = {witness[p]}" for p in km.scop.params if not p.startswith("gridDim.")]
    grid = [f"{witness[p]}" for p in km.scop.params if p.startswith("gridDim.")]
    parts = ([f"{' x '.join(reversed(grid))} block(s)"] if grid else []) + sizes
    return f" (for example with {', '.join(parts)})" if parts else ""


def _race(km: KernelModel, r: rc.Race) -> Remark:
    fn = km.function
    a = thread_text(km, r.witness, "a", r.first_stmt)
    b = thread_text(km, r.witness, "b", r.second_stmt)
    atomic = km.atomic
    verb = ("atomically updates" if r.second_stmt.info.node.range in atomic else "writes") if r.second.is_write else "reads"
    first_verb = "atomically updates" if r.first_stmt.info.node.range in atomic else "writes"
    why = (
        "with no `__syncthreads()` between them"
        if r.same_block
        else "and threads of different blocks are never ordered within a launch"
    )
    return missed(PASS, "DataRace",
        f"data race on `{r.first.array}`: {a} {first_verb} `{source_text(fn, r.first)}` while {b} {verb} "
        f"`{source_text(fn, r.second)}` (line {r.second.info.range.line}), the same element, {why}"
        f"{_sizes(km, r.witness)}; the result depends on which thread runs first",
        r.first.info.range, fn.name, array=r.first.array, other=r.second.info.range.to_json(),
        witness={k: v for k, v in r.witness.items() if not k.startswith("_")})  # fmt: skip


def _divergence(km: KernelModel, d: rc.Divergence) -> Remark:
    who = thread_text(km, d.witness, "a", d.barrier)
    return missed(PASS, "BarrierDivergence",
        f"not every thread of a block reaches this `__syncthreads()`: {who} does not, while other "
        f"threads of its block do{_sizes(km, d.witness)}; a barrier must be reached by all threads "
        "of the block or by none, otherwise the kernel can hang or compute garbage; move it out of "
        "the condition that depends on the thread", d.barrier.info.node.range, km.function.name,
        witness={k: v for k, v in d.witness.items() if not k.startswith("_")})  # fmt: skip


def _redundant(km: KernelModel, rng: object) -> Remark:
    return missed(PASS, "RedundantBarrier",
        "this `__syncthreads()` orders no conflicting accesses of different threads: without it "
        "the kernel has no more data races, so it only costs time", rng, km.function.name)  # type: ignore[arg-type]  # fmt: skip


def _uncoalesced(km: KernelModel, u: coalescing.Uncoalesced) -> Remark:
    return missed(PASS, "UncoalescedAccess",
        f"uncoalesced access: adjacent threads of a warp use elements of `{u.access.array}` "
        f"{u.stride} apart in `{source_text(km.function, u.access)}`, so one access of a warp "
        f"moves {u.segments} separate 32-byte segments where {u.ideal} would do; let "
        "`threadIdx.x` index the last subscript, or stage the data through `__shared__` memory",
        u.access.info.range, km.function.name, segments=u.segments, ideal=u.ideal)  # fmt: skip


def _conflict(km: KernelModel, c: coalescing.BankConflict) -> Remark:
    return missed(PASS, "SharedBankConflict",
        f"{c.ways}-way shared-memory bank conflict: threads {c.lanes[0]} and {c.lanes[1]} of a warp "
        f"read different words of the same bank in `{source_text(km.function, c.access)}`, so the access is served "
        f"in {c.ways} steps; {_padding(c)}or change which thread uses which element", c.access.info.range, km.function.name, ways=c.ways)  # fmt: skip


def _padding(c: coalescing.BankConflict) -> str:
    sizes = c.extents
    if len(sizes) < 2 or any(s is None for s in sizes):
        return "pad the array's last dimension by one element "
    padded = "".join(f"[{s}]" for s in sizes[:-1]) + f"[{sizes[-1] + 1}]"  # type: ignore[operator]
    return f"pad the array's last dimension by one element (`{c.access.array}{padded}`) "


def render(check: KernelCheck) -> str:
    if check.model is None:
        return "not modeled\n"
    lines = [core_render.scop_model(check.model.scop).rstrip()]
    lines.append(f"block: {check.model.shape.size_text} threads; barriers: {len(rc.Timing(check.model).barriers)}")
    for r in check.races:
        lines.append(f"race: {r.first.info.text} (write) / {r.second.info.text} witness {r.witness}")
    for d in check.divergent:
        lines.append(f"divergent barrier at line {d.barrier.range.line}: {d.witness}")
    return "\n".join(lines) + "\n"
