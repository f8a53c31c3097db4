"""The offload decision a ``#pragma hexplore`` line makes (`frontend/directives.py` reads them).

A directive belongs to the modeled loop nest whose outermost loop starts on the line below it
(`nest_directive`; SCoP detection makes that loop a nest of its own, `scop/detect.py`); one
elsewhere is said and ignored (``DirectiveNotOnLoopNest``). ``cpu`` keeps
the nest on the CPU (``KeptOnCpuByDirective``); ``gpu`` offloads it without asking the
profitability model (``OffloadedByDirective``), with its block and tile sizes for every kernel of
the nest (`directed_sizes`), where that is legal: GPU code can call no function of the program, a
block has at most `MAX_THREADS` threads, and a nest whose mapping has no parallel loop (no source
loop is parallel and isl's scheduler finds none) has nothing to share among threads. Otherwise ``DirectiveRefused`` says why and the
profitability model decides, as without the directive.

Example::

    d = nest_directive(fa.function, sa.scop.loops)     # `#pragma hexplore gpu block(32, 8)`
    gpu_refusal(sa.scop, d)                             # None: legal (before the mapping)
    directed_sizes(d)                                   # {None: {"block": (32, 8)}}
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from core_compiler.frontend import ir
from core_compiler.remarks import Remark, missed, passed
from core_compiler.scop.dependences import Dependences
from core_compiler.scop.model import Scop
from core_compiler.scop.region import LoopInfo
from core_compiler.transform.profitability import Profitability, host_call
from core_compiler.transform.sizes import Sizes

PASS = "profitability"
MAX_THREADS = 1024  # CUDA's and most OpenCL devices' limit on the threads of one block


def nest_directive(fn: ir.Function, loops: Sequence[LoopInfo]) -> ir.Directive | None:
    """The first directive of `fn` above one of the outermost loops `loops` of a nest."""
    outer = _outer_lines(loops)
    return next((d for d in fn.directives if d.loop_line in outer), None)


def unplaced(fn: ir.Function, nests: Sequence[Sequence[LoopInfo]]) -> list[Remark]:
    """``DirectiveNotOnLoopNest`` for each directive of `fn` that is not the one of a nest."""
    chosen = [nest_directive(fn, loops) for loops in nests]
    out = []
    for d in fn.directives:
        if any(d is c for c in chosen):
            continue
        nest = next((k for k, loops in enumerate(nests) if d.loop_line in _outer_lines(loops)), None)
        taken = chosen[nest] if nest is not None else None
        why = (
            f"hexplore models the loops from line {_outer_lines(nests[nest])[0]} as one nest, "
            f"and the directive at line {taken.range.line} already decides it"
            if nest is not None and taken is not None
            else "the code below it is not the outermost loop of a loop nest hexplore models"
        )
        out.append(missed("scop-detect", "DirectiveNotOnLoopNest", f"`{d.text}` is ignored: {why}", d.range, fn.name))
    return out


def _outer_lines(loops: Sequence[LoopInfo]) -> list[int]:
    return sorted(lp.header_range.line for lp in loops if lp.depth == 0)


def has_parallel_loop(deps: Dependences) -> bool:
    """Whether a source loop of the nest runs its iterations in parallel (a `+=` reduction counts:
    GPU code adds atomically); where none does, the scheduler may still find one by skewing."""
    adds = {lp for r in deps.reductions if r.op == "+" for lp in r.loops}
    return any(lp.parallel or (lp.reduction and lp.loop.id in adds) for lp in deps.loops)


def threads(d: ir.Directive) -> int:
    return math.prod(d.block)


def gpu_refusal(scop: Scop, d: ir.Directive) -> Remark | None:
    """``DirectiveRefused`` where `d` (a ``gpu`` directive) cannot be followed on this nest
    whatever its mapping; whether the mapping finds a parallel loop is seen once it is made
    (`no_parallel_loop`: isl's scheduler may find one by skewing where no source loop is)."""
    why = refusal_reason(scop, d)
    return None if why is None else _refused(scop, d, why)


def refusal_reason(scop: Scop, d: ir.Directive) -> str | None:
    """Why `d` (a ``gpu`` directive) cannot be followed on this nest whatever its mapping, or None."""
    call = host_call(scop)
    if call is not None:
        return f"the loops call `{call.args.get('callee', '')}`, a function of your program that GPU code cannot call"
    if threads(d) > MAX_THREADS:
        size = "x".join(map(str, d.block))
        return f"a block of {size} is {threads(d):,} threads, more than the {MAX_THREADS:,} a GPU block can have"
    return None


NO_PARALLEL_LOOP = (
    "no loop of this nest can run its iterations in parallel (each depends on an earlier one), "
    "so GPU threads would have nothing to share"
)


def no_parallel_loop(scop: Scop, d: ir.Directive) -> Remark:
    return _refused(scop, d, NO_PARALLEL_LOOP)


def _refused(scop: Scop, d: ir.Directive, why: str) -> Remark:
    message = f"`{d.text}` at line {d.range.line} is not followed: {why}; the profitability model decides instead"
    return missed(PASS, "DirectiveRefused", message, d.range, scop.function, directive=d.text)


def directed_sizes(d: ir.Directive, given: Sizes | None = None) -> Sizes:
    """PPCG's ``--sizes`` for every kernel of the nest: `given` (the user's options) with the
    directive's clauses over them."""
    given = given or {}
    sizes = {kind: v for kind, v in (("block", d.block), ("tile", d.tile)) if v}
    return {**given, None: {**given.get(None, {}), **sizes}} if sizes else dict(given)


def kept_by(worth: Profitability, d: ir.Directive) -> Profitability:
    """`worth` (the model's decision) overridden by a ``cpu`` directive."""
    model = "; the profitability model would keep it there too" if worth.decision == "cpu" else ""
    message = f"kept on the CPU by `{d.text}` at line {d.range.line}{model}"
    remark = missed(PASS, "KeptOnCpuByDirective", message, d.range, worth.remark.function, directive=d.text)
    return replace(worth, decision="cpu", condition_c=None, remark=remark)


def offloaded_by(worth: Profitability, d: ir.Directive, kernels: Sequence[tuple[str, tuple[int, ...]]]) -> Profitability:
    """`worth` (the model's decision) overridden by a ``gpu`` directive, the nest mapped to
    `kernels`: each kernel's name and its threads per block, x first (() for a one-thread one)."""
    model = {
        "cpu": "; the profitability model alone would keep it on the CPU",
        "runtime": "; without it the host code would decide at run time, from the sizes",
    }.get(worth.decision, "")
    names = ", ".join(name for name, _ in kernels) or "GPU code"
    message = f"offloaded to the GPU as {names} because of `{d.text}` at line {d.range.line}{model}{_narrowed(d, kernels)}"
    remark = passed(PASS, "OffloadedByDirective", message, d.range, worth.remark.function, directive=d.text)
    return replace(worth, decision="offload", condition_c=None, remark=remark)


def _narrowed(d: ir.Directive, kernels: Sequence[tuple[str, tuple[int, ...]]]) -> str:
    """Where a kernel's block is not the directive's, why: one thread dimension per parallel
    loop mapped, and at most one thread per point of a tile."""
    other = [(name, block) for name, block in kernels if d.block and block and block != d.block]
    if not other:
        return ""
    said = ", ".join(f"{name} has {'x'.join(map(str, block))}" for name, block in other)
    return (
        f"; {said} threads per block: a block has one dimension per parallel loop it is mapped to, "
        "and is no wider than its tile"
    )
