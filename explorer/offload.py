"""The back end's offload decision for each modeled loop nest, as the editor shows it: the remarks
`hexplore compile` gives (`core_compiler/compile.py`), moved onto the nest's outer loop header.

Per nest, as `compile` decides: the work estimate first (``KeptOnCpu`` / ``TooLittleWork`` when
too little, with the numbers); otherwise the GPU mapping and its cost against one CPU core
(``KeptOnCpu`` with both times, ``OffloadProfitable``, or ``RuntimeOffloadCheck`` when the sizes
are known only at run time), and for a nest that goes to the GPU what each kernel is
(``Offloaded``: "offloaded to the GPU as kernel0: …", ``SequentialKernel``,
``ReductionParallelized``). For the CUDA target, a nest the code around it reads from stays on
the CPU (``KeptOnCpuForCaller``).

The GPU mapping costs tenths of a second to seconds per nest, all of it inside isl calls that
hold the GIL: the editor's server has the decisions made in the back-end worker, a process of its
own (`decide_in_worker`, through `backend_worker()`: the front end's kind of persistent worker,
with its time and memory limit), which analyses the function again from its IR and answers plain
data (`Decided`: the remarks, and where each nest's mapping puts each array, for hovers). So
neither the server's analyses nor its hovers wait behind a mapping. Example::

    remarks = nest_decisions(fa, sa, lambda: gpu_program(sa), text, "cuda")
    [r.name for r in remarks]    # ["RuntimeOffloadCheck", "Offloaded"]
    decided = backend_worker().call(decide_in_worker, fa.function, AnalysisOptions(), (), text, "cuda")
    decided.placements[(0, "S1", "A")]   # "shared memory in kernel0: a 32x16 tile per block (...)"
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import logging
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from core_compiler.frontend.worker import FrontendLimits, FrontendWorker
from core_compiler.remarks import Remark
from explorer.placement import placements

if TYPE_CHECKING:  # the back end loads when a decision is made, not with the editor (issue 29)
    from core_compiler.analysis import AnalysisOptions, FunctionAnalysis, ScopAnalysis
    from core_compiler.frontend import ir
    from core_compiler.pipeline import GpuOptions
    from core_compiler.transform.gpu_mapping import GpuProgram
    from core_compiler.transform.profitability import Profitability

log = logging.getLogger("hexplore.explorer")
# Per function, in the back-end worker: its analysis again and the GPU mapping of each nest.
DECISION_TIMEOUT_S = 120.0
BACKGROUND_NICENESS = 10
Placements = Mapping[tuple[int, str, str], str]  # (nest index, statement, array) -> placement

# The passes whose remarks are decisions about a whole nest (the editor shows them as
# Information at most: a decision, not a problem in the code).
DECISION_PASSES = ("profitability", "gpu-mapping", "codegen-cuda")


def nest_decisions(
    fa: FunctionAnalysis,
    sa: ScopAnalysis,
    gpu: Callable[[], GpuProgram | None],
    text: str | None = None,
    target: str = "cuda",
) -> tuple[Remark, ...]:
    """The decision remarks of the nest `sa` of `fa`, on its outer loop's header. `gpu` maps the
    nest when the decision needs it (None: the mapping failed, and nothing is said); `text` is
    the whole file's, for the CUDA target's check of the code around the nest."""
    from core_compiler.codegen.host_calls import split_problem, takes_whole
    from core_compiler.transform.gpu_cost import offload_decision
    from core_compiler.transform.gpu_remarks import mapping_remarks
    from core_compiler.transform.profitability import decide

    if target == "cuda" and text is not None and not takes_whole(fa):
        problem = split_problem(fa, sa, fa.function.range.file, text)
        if problem is not None:  # compile keeps it on the CPU before weighing anything
            return _on_outer_loop(sa, [problem])
    worth = decide(sa.scop)
    directed, refused = _directed(fa, sa, gpu, worth)
    if directed:
        return _on_outer_loop(sa, directed)
    if worth.decision == "cpu":
        return _on_outer_loop(sa, [*refused, worth.remark])
    program = gpu()
    if program is None:
        return ()
    worth = offload_decision(program)
    out = [*refused, worth.remark]
    if worth.decision != "cpu":
        out += mapping_remarks(program)
    return _on_outer_loop(sa, out)


def _directed(
    fa: FunctionAnalysis, sa: ScopAnalysis, gpu: Callable[[], GpuProgram | None], worth: Profitability
) -> tuple[list[Remark], list[Remark]]:
    """The decision of a ``#pragma hexplore`` line above the nest, as `compile` makes it
    (`transform/directives.py`), or nothing; and the directive's refusal, where it is refused."""
    from core_compiler.transform import directives
    from core_compiler.transform.gpu_remarks import mapping_remarks

    d = directives.nest_directive(fa.function, sa.scop.loops)
    if d is None:
        return [], []
    if d.kind == "cpu":
        return [directives.kept_by(worth, d).remark], []
    refusal = directives.gpu_refusal(sa.scop, d)
    if refusal is not None:
        return [], [refusal]
    program = gpu()
    if program is None:
        return [], []
    if not any(k.parallel for k in program.kernels):
        return [], [directives.no_parallel_loop(sa.scop, d)]
    kernels = [(k.name, k.block[::-1] if k.parallel else ()) for k in program.kernels]
    return [directives.offloaded_by(worth, d, kernels).remark, *mapping_remarks(program)], []


@dataclass(frozen=True, eq=False)
class Decided:
    """A function's offload decisions (on its nests' outer loops, as `nest_decisions` gives them)
    and where the GPU mapping of each nest puts each array a statement accesses (`placement.py`'s
    words; absent where a nest has no mapping)."""

    remarks: tuple[Remark, ...]
    placements: Placements = field(default_factory=dict)


Mapper = Callable[[int, "ScopAnalysis"], Callable[[], "GpuProgram | None"]]


def function_decisions(fa: FunctionAnalysis, text: str | None, target: str, mapper: Mapper) -> Decided:
    """The decisions and placements of every nest of `fa`; `mapper(k, sa)` gets the mapping of
    nest `k` (raising where it fails). A nest whose decision fails is left out (logged)."""
    remarks: list[Remark] = []
    where: dict[tuple[int, str, str], str] = {}
    for k, sa in enumerate(fa.scops):
        gpu = functools.cache(mapper(k, sa))  # mapped once, for the decision and the placements
        try:
            remarks += nest_decisions(fa, sa, gpu, text, target)
            where.update(((k, *key), p) for key, p in placements(sa, gpu()).items())
        except Exception as e:  # isl's budget, a bug in a back end: the nest's passes say it
            log.warning("offload decision of %s failed: %s: %s", sa.scop.name, type(e).__name__, e)
    return Decided(tuple(remarks), where)


def decide_in_worker(
    fn: ir.Function, options: AnalysisOptions, tile_sizes: Sequence[int], text: str, target: str
) -> Decided:
    """In the back-end worker: `fn` analysed again (as the workspace did: a function with syntax
    errors has no nests to decide), then `function_decisions` with mappings made with the tile
    sizes of the editor's settings."""
    from core_compiler.analysis import analyze_function
    from core_compiler.pipeline import gpu_program

    _in_the_background()
    fa = analyze_function(fn, options)
    gpu = gpu_options(tile_sizes)
    return function_decisions(fa, text, target, lambda k, sa: lambda: gpu_program(sa, directed_options(fa, sa, gpu)))


def directed_options(fa: FunctionAnalysis, sa: ScopAnalysis, gpu: GpuOptions) -> GpuOptions:
    """`gpu` with the block and tile sizes of a ``#pragma hexplore gpu`` line above the nest."""
    from core_compiler.transform.directives import directed_sizes, nest_directive

    d = nest_directive(fa.function, sa.scop.loops)
    if d is None or d.kind != "gpu":
        return gpu
    return replace(gpu, mapping=replace(gpu.mapping, sizes=directed_sizes(d, gpu.mapping.sizes)))


def _in_the_background() -> None:
    """The back-end worker yields the CPU to the editor's process (niceness 10): its decisions
    are background work, the analysis of what the user just typed is not."""
    global _niced
    if not _niced:
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, 0, max(os.getpriority(os.PRIO_PROCESS, 0), BACKGROUND_NICENESS))
        _niced = True


_niced = False


def gpu_options(tile_sizes: Sequence[int]) -> GpuOptions:
    """The editor's `tileSizes` setting: one size for every member, or one per member."""
    from core_compiler.pipeline import GpuOptions
    from core_compiler.transform.gpu_mapping import MappingOptions

    if not tile_sizes:
        return GpuOptions()
    sizes = tuple(tile_sizes)
    mapping = MappingOptions(tile_size=sizes[0], sizes={None: {"tile": sizes}} if len(sizes) > 1 else {})
    return GpuOptions(mapping=mapping)


_worker: FrontendWorker | None = None
_worker_lock = threading.Lock()


def backend_worker() -> FrontendWorker:
    """The process's one back-end worker (started on its first request, closed at exit)."""
    global _worker
    with _worker_lock:
        if _worker is None:
            limits = FrontendLimits.from_environment()
            _worker = FrontendWorker(FrontendLimits(DECISION_TIMEOUT_S, limits.memory_bytes))
            atexit.register(_worker.close)
        return _worker


def _on_outer_loop(sa: ScopAnalysis, remarks: list[Remark]) -> tuple[Remark, ...]:
    loops = sa.scop.loops
    if not loops:
        return tuple(remarks)
    header = loops[0].header_range
    return tuple(replace(r, range=header) for r in remarks)


def shifted(remarks: tuple[Remark, ...], lines: int) -> tuple[Remark, ...]:
    """`remarks` `lines` lines further down (a function that moved since they were made)."""
    if not lines:
        return remarks
    return tuple(replace(r, range=replace(r.range, line=r.range.line + lines, end_line=r.range.end_line + lines)) for r in remarks)
