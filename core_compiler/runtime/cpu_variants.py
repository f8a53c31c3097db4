"""Differential check of the LLVM CPU backend: the SCoP's original order and hexplore's optimized
(tiled, OpenMP-parallel) order, both JIT-compiled by LLVM at O3 for this CPU, against the original
function compiled by the system C compiler, on the same inputs.

As for `differential.check_opencl`, the function must be one SCoP plus scalar declarations before
it; those are evaluated here and handed to the generated code as initial values of their buffers.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Generic, TypeVar

import islpy as isl
import numpy as np

from core_compiler.analysis import AnalysisOptions, ScopAnalysis, analyze_file
from core_compiler.codegen.ast_print import evaluate
from core_compiler.codegen.statements import array_layouts
from core_compiler.errors import HexploreError, LayoutError
from core_compiler.frontend import ParseOptions
from core_compiler.llvm.cpu_lowering import CpuModule, lower_cpu, optimized_ast, original_ast
from core_compiler.llvm.jit import JitFunction, jit_compile, max_threads, scalar_dtype, set_threads
from core_compiler.remarks import Remark, RemarkKind
from core_compiler.runtime.budget import TimeLimit
from core_compiler.runtime.capped import (
    NoVariantInTime,
    can_fork,
    capped_call,
    note_threads_started,
)
from core_compiler.runtime.compare import Comparison, compare_arrays
from core_compiler.runtime.differential import (
    ScopValues,
    reference_outputs,
    result_outputs,
    scop_values,
)
from core_compiler.runtime.footprint import fit_layout
from core_compiler.runtime.inputs import aligned_empty, make_inputs
from core_compiler.runtime.proxy import proxy_sizes
from core_compiler.runtime.reference import BuildOptions, build_reference, run_reference
from core_compiler.runtime.signature import Layout, compute_layout, macro_defines
from core_compiler.runtime.tuning import Tuned
from core_compiler.scop.affine import isl_name
from core_compiler.transform.cpu_schedule import CpuOptions
from core_compiler.transform.schedule import ScheduleOptions, compute_schedule


@dataclass(frozen=True, eq=False)
class CpuCase:
    """One function at one size: its SCoP, inputs and the values of its scalars."""

    path: str
    layout: Layout
    analysis: ScopAnalysis
    inputs: Mapping[str, np.ndarray] = field(repr=False)
    ints: Mapping[str, int]
    floats: Mapping[str, float]  # floating parameters and the scalars declared before the SCoP
    values: ScopValues  # the above, and what the function returns after the SCoP
    source: tuple[str, ...] = ()  # what the code depends on (file, text, macros): `compile_variant`'s cache key

    def outputs(self, arrays: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """What a run is checked on: the function's arrays, and its return value computed from
        the scalars the run wrote (`run_jit` returns both)."""
        mine = {s.name: arrays[s.name] for s in self.layout.arrays}
        return {**mine, **result_outputs(self.values, arrays, self.layout.return_dtype)}


@dataclass(frozen=True)
class LlvmCpuResult:
    function: str
    params: Mapping[str, int]
    variants: Mapping[str, Comparison]  # each variant run (`VARIANTS`) vs the C compiler's build
    choice: VariantChoice  # the variant that runs, and why
    reference_s: float
    optimized_s: float  # the chosen variant, timed once more (unless one call is `SLOW_CALL_S`)
    parallel_loops: int  # loops of the tiled code run through GOMP_parallel (none on one thread)

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.variants.values())

    @property
    def optimized(self) -> Comparison:
        """The comparison of the code that runs."""
        return self.variants[self.choice.runs]

    @property
    def original_s(self) -> float:
        """The source order's time; inf where the race did not get to it."""
        return self.choice.seconds.get("source order", math.inf)

    def report(self) -> str:
        return "\n".join(f"{v}:\n{c.report()}" for v, c in self.variants.items())


def prepare(path: str, function: str, params: Mapping[str, int], size_limits: Mapping[str, str | None] | None = None,
            parse: ParseOptions | None = None) -> CpuCase:  # fmt: skip
    """Parse and analyse once (the layout comes from the same parse as the SCoP); `parse` adds the
    user's ``-I``/``-D``."""
    base = parse or ParseOptions()
    defines = base.defines + macro_defines(params, size_limits or {})
    options = ParseOptions(base.include_dirs, defines, base.extra_args)
    fa = analyze_file(path, parse_options=options, options=AnalysisOptions(), only=function)
    if len(fa.functions) != 1:
        raise LayoutError(f"no function {function!r} in {path}")
    (fn,) = fa.functions
    layout = fit_layout(fn.function, fn.scops, compute_layout(fn.function, params, defines=defines, include_dirs=base.include_dirs))
    values = scop_values(fn.function, fn.scops, layout)
    source = (path, Path(path).read_text(encoding="utf-8"), function, *defines, "-I", *base.include_dirs)
    return CpuCase(path, layout, values.scop, make_inputs(layout), values.ints, values.floats, values, source)


def compile_original(case: CpuCase) -> JitFunction:
    """The SCoP in source order: what LLVM alone makes of the C code."""
    scop = case.analysis.scop
    name = f"{scop.function}_s{scop.index}_original"
    ast = original_ast(scop, case.analysis.deps.union())
    return _jit(case, lower_cpu(scop, ast, name, parallel=False, source_order=True))


def _jit(case: CpuCase, module: CpuModule) -> JitFunction:
    """`module` compiled; the functions its opaque calls call come from the original's build."""
    library = build_reference(case.path, case.layout, externals=module.externals).path if module.externals else None
    return jit_compile(module, library)


def compile_optimized(case: CpuCase, parallel: bool = True, schedule: ScheduleOptions | None = None,
                      options: CpuOptions | None = None) -> JitFunction:  # fmt: skip
    """hexplore's schedule, tiled (unless `options` say otherwise) and, with `parallel`, with
    OpenMP loops."""
    scop = case.analysis.scop
    options = options or CpuOptions(parallel=parallel)
    sched = compute_schedule(scop, case.analysis.deps, schedule or ScheduleOptions())
    ast = optimized_ast(scop, sched, options, case.analysis.deps)
    suffix = ("hexplore" if options.tile_size > 1 else "untiled") + (f"_jam{options.jam}" if options.jam > 1 else "")
    if schedule is not None and not schedule.outer_coincidence:
        suffix += "_tilable"
    if schedule is not None and schedule.fusion == "min":
        suffix += "_distributed"
    return _jit(case, lower_cpu(scop, ast, f"{scop.function}_s{scop.index}_{suffix}", parallel=parallel))


# ------------------------------------------------------------------------- choosing a variant

VARIANTS = (
    "tiled", "untiled", "tiled+jam", "untiled+jam", "tiled+jam2", "untiled+jam2", "tilable", "tilable+jam",
    "distributed", "distributed+jam", "source order",
)  # fmt: skip
TILED = ("tiled", "tiled+jam", "tiled+jam2", "tilable", "tilable+jam")
DEFAULT_VARIANT = "tiled"  # hexplore's schedule as `compile --target c` prints it
# "tilable": the schedule isl finds when it makes bands permutable before it looks for outer
# parallel loops (Pluto's order): stencils skewed across time, trisolv's ``j`` and ``i`` in one band.
TILABLE = ScheduleOptions(outer_coincidence=False)
# "distributed": no statements fused that need not be (Polly's default), untiled: 2mm's two
# products as two clean nests, floyd_warshall's copies of row and column ``k`` apart from the
# update, whose ``i`` loop then runs in parallel.
DISTRIBUTED = ScheduleOptions(fusion="min")
# The order the race builds them in, where its time budget may end it: the default first (what
# "1.4x over the default" is measured against), then the variants that won most often at
# PolyBench's LARGE sizes on two cores (2026-11: register tiles on the untiled loops for gemm,
# trmm, 2mm's products and heat-3d; the distributed nests for fdtd-2d; the untiled loops for
# jacobi-2d), the tilable ones late (isl takes seconds to build a skewed stencil's), the source
# order last (at large sizes the slowest to run, by far).
RACE_ORDER = (
    "tiled", "untiled+jam2", "distributed", "untiled", "tiled+jam2", "distributed+jam", "untiled+jam",
    "tiled+jam", "tilable", "tilable+jam", "source order",
)  # fmt: skip
SLOW_CALL_S = 0.2  # a variant whose first call takes this long is timed by it: no rounds


def case_variants(case: CpuCase, only: Collection[str] | None = None) -> tuple[str, ...]:
    """The `VARIANTS` (or those of them in `only`) that differ for this SCoP: the tilable and
    distributed ones only where their schedule is not the default one."""
    wanted = [v for v in VARIANTS if only is None or v in only]
    scop, deps = case.analysis.scop, case.analysis.deps
    default = compute_schedule(scop, deps).get_map()
    same = {
        prefix: default.is_equal(compute_schedule(scop, deps, options).get_map())
        for prefix, options in (("tilable", TILABLE), ("distributed", DISTRIBUTED))
        if any(v.partition("+")[0] == prefix for v in wanted)
    }
    return tuple(v for v in wanted if not same.get(v.partition("+")[0], False))


@dataclass(frozen=True)
class Search:
    """How the race went: what it tried, of how many, in how long, and whether it stopped early."""

    tried: tuple[str, ...]  # in the order tried, `unbuilt` included
    candidates: int  # the variants that differ for this SCoP (`case_variants`)
    seconds: float  # the race's wall time, builds and checks included
    budget_s: float  # math.inf: none
    stopped: bool = False  # the budget ended it before every candidate was tried
    unbuilt: tuple[str, ...] = ()  # isl could not build them within its operation limit
    one_thread_skipped: bool = False  # the budget ended it before the one-thread run
    proxied: tuple[str, ...] = ()  # timed only at proxy sizes (`_by_proxy`): slower there, or out of time
    proxy: tuple[tuple[str, int], ...] = ()  # the proxy sizes that differ from the run's
    dropped: tuple[str, ...] = ()  # stopped at their cap (`capped.py`): too slow to win, or past the budget

    def message(self) -> str:
        """``tried 3 of 9 schedule variants in 8.1 s; stopped at the time budget (40.0 s)``"""
        count = f"all {self.candidates}" if len(self.tried) == self.candidates else f"{len(self.tried)} of {self.candidates}"
        text = f"tried {count} schedule variants in {_duration(self.seconds)}"
        if self.unbuilt:
            text += f" ({', '.join(self.unbuilt)}: more than isl's operation limit to build)"
        if self.proxied:
            sizes = ", ".join(f"{k}={v}" for k, v in self.proxy)
            text += f", {len(self.proxied)} of them only at smaller sizes ({sizes})"
        if self.dropped:
            text += f" ({', '.join(self.dropped)} stopped: over {DROP_MARGIN:g}x the fastest or the original, or past the budget)"
        if self.stopped:
            text += f"; stopped at the time budget ({_duration(self.budget_s)})"
        elif self.one_thread_skipped:
            text += f"; the time budget ({_duration(self.budget_s)}) ended before the one-thread run"
        return text


@dataclass(frozen=True)
class VariantChoice:
    """Which of the CPU code variants runs, from timing each on the case's own inputs (or from the
    tuning cache, which a race filled)."""

    chosen: str  # one of VARIANTS
    seconds: Mapping[str, float]  # each variant's best time (`_race`)
    remark: Remark | None  # why the code that runs is not tiled, if it is not
    one_thread: Remark | None = None  # why it runs on one thread though more are available
    parallel_loops: Mapping[str, int] = field(default_factory=dict)  # each variant's, run through GOMP_parallel
    search: Search | None = None  # the race; None where the choice came from the tuning cache
    stopped: Remark | None = None  # the race did not try every variant (`RaceStopped`)
    tuned: Remark | None = None  # the choice came from the tuning cache (`TunedVariant`)
    runs_s: float = 0.0  # the best time of what runs, as the race or the cached run timed it

    @property
    def runs(self) -> str:
        """What runs: the variant, and whether on one thread."""
        return f"{self.chosen}, one thread" if self.one_thread is not None else self.chosen

    @property
    def remarks(self) -> tuple[Remark, ...]:
        return tuple(r for r in (self.tuned, self.stopped, self.remark, self.one_thread) if r is not None)


_COMPILED: OrderedDict[tuple[object, ...], JitFunction] = OrderedDict()
_COMPILED_KEPT = 64


def compile_variant(case: CpuCase, variant: str, parallel: bool = True, tiles: tuple[int, ...] = ()) -> JitFunction:
    """The variant's code, shared by cases of the same source at other sizes (the code takes
    the sizes as arguments; the last `_COMPILED_KEPT` are kept): in one process — a test, the
    benchmark — running again at other sizes builds nothing, where isl and LLVM take seconds
    for a skewed stencil's register tiles. (Editor runs each start a fresh worker.) `tiles`: the
    tiled variants' tile size per band member (the tuner's, `core_compiler/tune/`); () the default."""
    key = (case.source, variant, parallel, tiles)
    jit = _COMPILED.get(key) if case.source else None
    if jit is None:
        jit = _compile_variant(case, variant, parallel, tiles)
    if case.source:
        _COMPILED[key] = jit
        _COMPILED.move_to_end(key)
        while len(_COMPILED) > _COMPILED_KEPT:
            _COMPILED.popitem(last=False)
    return jit


def _compile_variant(case: CpuCase, variant: str, parallel: bool, tiles: tuple[int, ...] = ()) -> JitFunction:
    if variant == "source order":
        return compile_original(case)
    schedule = TILABLE if variant.startswith("tilable") else DISTRIBUTED if variant.startswith("distributed") else None
    tile = 0 if variant.startswith(("untiled", "distributed")) else CpuOptions.tile_size
    options = CpuOptions(tile_size=tile, tile_sizes=tiles if tile else (), parallel=parallel, privatize=True)
    if variant.endswith("+jam"):
        options = replace(options, jam=4)
    elif variant.endswith("+jam2"):  # 4x4 register tiles (4 on a band of two loops), whole strips unguarded
        options = replace(options, jam=4, jam_loops=2, isolate=True)
    return compile_optimized(case, parallel, schedule, options)



Arrays = dict[str, np.ndarray]
R = TypeVar("R")
DROP_MARGIN = 3.0  # a variant's first call is stopped past this many times the fastest first call
CAP_SLACK_S = 1.0  # ... and this: the child's start, its copies of the inputs and its check count too
FORK_HINT_S = 0.5  # where the original takes this long, calls run capped in a child (`capped.py`)


@dataclass(frozen=True)
class _Clock:
    """The race's time budget, from when it started, and the `deadline` (``time.time()``) by which
    it must have a variant to answer with (the run's time limit, less what comes after the race)."""

    budget_s: float
    deadline: float = math.inf
    start: float = field(default_factory=time.perf_counter)

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def left(self) -> float:
        return self.budget_s - self.elapsed()

    def affords(self, seconds: float) -> bool:
        return seconds <= self.left()

    def hard_left(self) -> float:
        return self.deadline - time.time()


@dataclass(frozen=True, eq=False)
class _Calls(Generic[R]):
    """How the race calls a variant: in this process, or — where the original takes long enough
    that a bad variant could eat the run's limit — in a forked child stopped at a cap
    (`capped.py`). `check` makes a call's arrays a verdict (where they are); `original_s` is the
    original's time (the source order's, about: a variant much slower cannot be the answer)."""

    check: Callable[[Arrays], R]
    forked: bool = False
    original_s: float = math.inf

    def checked(self, jit: JitFunction, case: CpuCase, cap_s: float = math.inf) -> tuple[float, R | None]:
        """A call's time and the check of its arrays; ``(inf, None)`` where it ran past `cap_s`."""
        if not self.forked:
            arrays, seconds = run_jit(jit, case)
            return seconds, self.check(arrays)
        return capped_call(lambda: _run_and_check(jit, case, self.check), max(cap_s, 0.0))

    def timed(self, jit: JitFunction, case: CpuCase, cap_s: float = math.inf) -> float:
        """A call's time; inf where it ran past `cap_s`."""
        if not self.forked:
            return run_jit(jit, case)[1]
        return capped_call(lambda: (run_jit(jit, case)[1], None), max(cap_s, 0.0))[0]


def _run_and_check(jit: JitFunction, case: CpuCase, check: Callable[[Arrays], R]) -> tuple[float, R]:
    arrays, seconds = run_jit(jit, case)
    return seconds, check(arrays)


@dataclass(frozen=True, eq=False)
class _Entry(Generic[R]):
    """A variant the race built and ran once: its code, what building it took, its first call's
    time and what `check` made of that call's arrays."""

    jit: JitFunction
    build_s: float
    first_s: float
    result: R


def choose_variant(
    case: CpuCase, parallel: bool = True, budget_s: float = math.inf
) -> tuple[JitFunction, VariantChoice, dict[str, Arrays]]:
    """Time the `VARIANTS` — the tiled schedule and the same schedule untiled, the tiled tilable
    schedule where it differs, each also with its second-innermost loops unrolled-and-jammed by
    4, the first two also with 4x4 register tiles, the distributed schedule where it differs,
    and the source order — on this machine (with the current OpenMP threads) and keep the
    fastest (`_runoff`: close contenders are raced again): tiling a memory-bound matrix-vector product
    or a stencil can lose to the loops as written, and then hexplore runs those, saying so. A
    variant isl cannot build within its operation limit is left out.

    The race is time-boxed (`budget_s`, its wall time, builds included): it builds the variants
    one at a time in `RACE_ORDER` and runs each once (the call that pages its code in and whose
    arrays are checked); it starts the next only while the budget affords the slowest build and
    call seen so far, so the run answers with the fastest found so far (`Search` says how many
    were tried). A first call of `SLOW_CALL_S` or more is the variant's time; faster ones are
    timed again in rounds, in turns, budget permitting.

    On several threads, the fastest variant with parallel loops is also timed on one thread,
    which wins when parallel loops nested in sequential ones start the threads more often than
    they gain (doitgen's ``p`` loop inside ``r`` and ``q``).
    On one thread, the variants are built without parallel loops: a loop that runs in parallel
    inside a sequential one (seidel's second loop inside its first) can keep that one from being jammed.
    Also returns each variant's arrays, for checking them all."""
    return race_variants(case, parallel, budget_s, _arrays, lambda _: True)


def _arrays(arrays: Arrays) -> Arrays:
    return arrays


def race_variants(
    case: CpuCase, parallel: bool, budget_s: float, check: Callable[[Arrays], R], counts: Callable[[R], bool],
    proxy: Callable[[float], CpuCase | None] | None = None, hint_s: float = 0.0, deadline: float = math.inf,
    only: Collection[str] | None = None,
) -> tuple[JitFunction, VariantChoice, dict[str, R]]:  # fmt: skip
    """`choose_variant`, with each variant's arrays made `check(arrays)` as soon as it has run
    (they are not kept: at large sizes each variant's would take as much memory as the inputs);
    a variant whose result `counts` not (it differs from the original) cannot win unless none counts.

    `hint_s` is the original's time. Where it is `FORK_HINT_S` or more, each call runs in a child
    stopped past a cap (`capped.py`): `DROP_MARGIN` times the fastest first call so far, and what
    is left of the budget; should none finish within it, the source order (as slow as the
    original) and then the others run with what is left before `deadline`, and where none
    finishes then, `NoVariantInTime`. Where the budget cannot afford a call of every variant at
    full size — judged from `hint_s` before the first, from the slowest so far after —
    `proxy(ratio)` (a case at sizes doing about `ratio` of the work, `proxy.proxy_sizes`) ranks
    them first (`_by_proxy`). With `only`, the race runs those of the variants alone."""
    threads = max_threads()
    parallel = parallel and threads > 1
    clock = _Clock(budget_s, deadline)
    calls = _Calls(check, hint_s >= FORK_HINT_S and can_fork(), hint_s or math.inf)
    differ = case_variants(case, only)
    candidates = [v for v in RACE_ORDER if v in differ]
    f = _field(case, candidates, parallel, clock, calls, proxy, hint_s)
    if not f.entries:
        f = _fallback(case, candidates, f, parallel, clock, calls, hint_s)
    entries = f.entries
    eligible = {v: e for v, e in entries.items() if counts(e.result)} or entries
    seconds = {v: e.first_s for v, e in entries.items()} | _timings(eligible, case, clock, calls)
    chosen = min(eligible, key=lambda v: seconds[v])
    results = {v: e.result for v, e in entries.items()}
    tried = tuple(v for v in candidates if v in entries or v in (*f.unbuilt, *f.proxied, *f.dropped))
    search = Search(tried, len(candidates), 0.0, budget_s, len(tried) < len(candidates), f.unbuilt,
                    proxied=f.proxied, proxy=f.proxy, dropped=f.dropped)  # fmt: skip
    choice = VariantChoice(chosen, seconds, _choice_remark(case, chosen, seconds),
                           parallel_loops={v: e.jit.module.parallel_loops for v, e in entries.items()},
                           search=search, runs_s=seconds[chosen])  # fmt: skip
    jit = entries[chosen].jit
    best = min((v for v in eligible if eligible[v].jit.module.parallel_loops), key=lambda v: seconds[v], default=None)
    if parallel and best is not None:
        jit, choice, alone = _one_thread(case, entries, best, choice, clock, calls, counts, threads)
        results |= alone
    return jit, _searched(case, choice, clock), results


@dataclass(frozen=True, eq=False)
class _Field(Generic[R]):
    """The variants the race ran at full size; those isl could not build; those it ran only at
    proxy sizes (`proxy`: the sizes that differ); those stopped at their cap."""

    entries: dict[str, _Entry[R]]
    unbuilt: tuple[str, ...] = ()
    proxied: tuple[str, ...] = ()
    proxy: tuple[tuple[str, int], ...] = ()
    dropped: tuple[str, ...] = ()

    def adding(self, variant: str, outcome: _Entry[R] | str) -> _Field[R]:
        """With `variant`'s outcome (`_build_and_run`): run, "unbuilt" or "dropped"."""
        if isinstance(outcome, _Entry):
            return replace(self, entries={**self.entries, variant: outcome},
                           dropped=tuple(d for d in self.dropped if d != variant))  # fmt: skip
        if outcome == "unbuilt":
            return replace(self, unbuilt=(*self.unbuilt, variant))
        return replace(self, dropped=(*(d for d in self.dropped if d != variant), variant))


PROXY_FLOOR_S = 0.05  # what a proxy call should take at least: shorter ones time noise
PROXY_MAX_RATIO = 0.5  # proxy sizes doing more of the work than this save too little
PROXY_MARGIN = 1.5  # variants this close to the fastest at proxy sizes are timed at full size


def _field(
    case: CpuCase, candidates: list[str], parallel: bool, clock: _Clock, calls: _Calls[R],
    proxy: Callable[[float], CpuCase | None] | None, hint_s: float,
) -> _Field[R]:  # fmt: skip
    """The candidates built and run once each, in order, while the clock affords the slowest
    build and call so far (the first always; with capped calls, the slowest build and the
    fastest call); where the clock cannot afford a call of each of the rest at full size, the
    rest ranked at `proxy` sizes first (`_by_proxy`)."""
    f: _Field[R] = _Field({})
    if proxy is not None and hint_s > 0 and not clock.affords(len(candidates) * hint_s):
        small = _proxy_case(hint_s, 0.0, len(candidates), clock, proxy)
        if small is not None:
            return _by_proxy(case, small, f, candidates, parallel, clock, calls)
    for k, v in enumerate(candidates):
        rest = candidates[k:]
        if f.entries and proxy is not None and not clock.affords(len(rest) * _next_cost(f.entries.values())):
            first, build = next(iter(f.entries.values())).first_s, max(e.build_s for e in f.entries.values())
            small = _proxy_case(first, build, len(rest) + 1, clock, proxy)
            if small is not None:
                return _by_proxy(case, small, f, rest, parallel, clock, calls)
            proxy = None
        out_of_time = clock.left() <= 0 and (calls.forked or bool(f.entries))  # capped: `_fallback` goes on
        if out_of_time or (f.entries and not clock.affords(_next_cost(f.entries.values(), calls.forked))):
            break
        f = f.adding(v, _build_and_run(case, v, parallel, calls, _cap(f.entries.values(), clock, calls)))
    return f


def _fallback(case: CpuCase, candidates: list[str], f: _Field[R], parallel: bool, clock: _Clock, calls: _Calls[R],
              hint_s: float) -> _Field[R]:  # fmt: skip
    """Where no variant finished within the budget: the source order first (it runs the loops
    as the original does, so about as long), then the others, each with what is left before the
    clock's deadline, until one finishes; `NoVariantInTime` where none does."""
    for v in sorted(candidates, key=lambda v: v != "source order"):
        if clock.hard_left() <= 0:
            break
        if v not in f.unbuilt:
            f = f.adding(v, _build_and_run(case, v, parallel, calls, clock.hard_left()))
        if f.entries:
            return f
    raise NoVariantInTime(
        f"no schedule variant finished within the time limit ({', '.join(f.dropped) or 'none'} stopped; the "
        f"original takes {_duration(hint_s)}): give a longer --timeout, or smaller sizes"
    )


def _cap(entries: Iterable[_Entry[R]], clock: _Clock, calls: _Calls[R]) -> float:
    """How long a variant's first call may take: `DROP_MARGIN` times the fastest so far, or the
    original if that is faster (it could not win: the source order runs about as fast as the
    original), `CAP_SLACK_S` more, and what is left of the budget."""
    fastest = min((e.first_s for e in entries), default=math.inf)
    return min(DROP_MARGIN * min(fastest, calls.original_s) + CAP_SLACK_S, clock.left())


def _build_and_run(case: CpuCase, variant: str, parallel: bool, calls: _Calls[R], cap_s: float) -> _Entry[R] | str:
    """The variant built and called once: its entry, or why not: "unbuilt" (isl could not build
    it within its limit) or "dropped" (its call ran past `cap_s`)."""
    start = time.perf_counter()
    try:
        jit = compile_variant(case, variant, parallel)
    except isl.Error:
        case.analysis.scop.ctx.reset_operations()
        return "unbuilt"
    built = time.perf_counter() - start
    first, result = calls.checked(jit, case, cap_s - built)
    if result is None:
        return "dropped"
    return _Entry(jit, built, first, result)


def _proxy_case(call_s: float, build_s: float, count: int, clock: _Clock,
                proxy: Callable[[float], CpuCase | None]) -> CpuCase | None:  # fmt: skip
    """A case at sizes where `count` variants, each built in `build_s` and called in `call_s` at
    full size, build and run once in a quarter of what is left of the budget; None where none
    saves enough, or the sizes cannot be prepared."""
    ratio = max(clock.left() / (4 * count) - build_s, PROXY_FLOOR_S) / call_s
    if ratio > PROXY_MAX_RATIO:
        return None
    try:
        return proxy(ratio)
    except (HexploreError, isl.Error):  # sizes the layout or isl refuse: no proxy
        return None


def _by_proxy(case: CpuCase, small: CpuCase, f: _Field[R], rest: list[str], parallel: bool, clock: _Clock,
              calls: _Calls[R]) -> _Field[R]:  # fmt: skip
    """`rest` and the variants `f` ran at full size run once each at the `small` case's sizes,
    while the clock affords it; then those within `PROXY_MARGIN` of the fastest there, fastest
    first, at full size (checked: only these can win; the first always where none ran there
    yet), while the clock affords their proxy time scaled as the first at both sizes'."""
    times, unbuilt, dropped = _proxy_times(small, [*f.entries, *rest], parallel, clock, calls,
                                           [e.build_s for e in f.entries.values()])  # fmt: skip
    f = replace(f, unbuilt=(*f.unbuilt, *unbuilt), dropped=(*f.dropped, *dropped))
    best = min(times.values(), default=0.0)
    for v in sorted(times, key=lambda v: times[v]):
        if v in f.entries or (f.entries and times[v] > PROXY_MARGIN * best):  # until one builds at full size
            continue
        if f.entries and not clock.affords(times[v] * _scale(f.entries, times)):
            break
        f = f.adding(v, _build_and_run(case, v, parallel, calls, _cap(f.entries.values(), clock, calls)))
    sizes = tuple((k, n) for k, n in small.ints.items() if case.ints.get(k) != n)
    return replace(f, proxied=tuple(v for v in times if v not in f.entries and v not in f.dropped), proxy=sizes)


def _proxy_times(small: CpuCase, variants: list[str], parallel: bool, clock: _Clock, calls: _Calls[R],
                 builds: list[float]) -> tuple[dict[str, float], list[str], list[str]]:  # fmt: skip
    """Each variant's time at the `small` case's sizes, one call each, in order, while the clock
    affords the slowest build and call so far; and those isl could not build, and those stopped
    (capped calls: past `DROP_MARGIN` times the fastest)."""
    times: dict[str, float] = {}
    unbuilt: list[str] = []
    dropped: list[str] = []
    builds = builds or [0.0]
    for v in variants:
        if times and not clock.affords(max(builds) + max(times.values())):
            break
        start = time.perf_counter()
        try:
            jit = compile_variant(small, v, parallel)
        except isl.Error:
            small.analysis.scop.ctx.reset_operations()
            unbuilt.append(v)
            continue
        builds.append(time.perf_counter() - start)
        cap = min(DROP_MARGIN * min(times.values(), default=math.inf) + CAP_SLACK_S, clock.left())
        seconds = calls.timed(jit, small, cap)
        if seconds < math.inf:
            times[v] = seconds
        else:
            dropped.append(v)
    return times, unbuilt, dropped


def _scale(full: Mapping[str, _Entry[R]], proxy_s: Mapping[str, float]) -> float:
    """How much longer a call takes at full size than at the proxy's, as the first variant timed
    at both says."""
    v = next((v for v in full if proxy_s.get(v)), None)
    return full[v].first_s / proxy_s[v] if v is not None else 1.0


def _next_cost(entries: Iterable[_Entry[R]], capped: bool = False) -> float:
    """What the next variant may cost, as far as the race can tell: the slowest build and the
    slowest call so far (a variant slower than that shows only by running it); with `capped`
    calls, the slowest build and the fastest call (a slower call is stopped)."""
    seen = list(entries)
    calls = [e.first_s for e in seen]
    return max(e.build_s for e in seen) + (min(calls) if capped else max(calls))


def _timings(entries: Mapping[str, _Entry[R]], case: CpuCase, clock: _Clock, calls: _Calls[R]) -> dict[str, float]:
    """Each variant's best time: its first call's where that took `SLOW_CALL_S` or more, else the
    best of rounds in turns (`_race`); then the close contenders raced again (`_runoff`)."""
    seconds = {v: e.first_s for v, e in entries.items()}
    fast = {v: e.jit for v, e in entries.items() if e.first_s < SLOW_CALL_S}
    seconds = _best(seconds, _race(fast, case, clock, seconds, calls=calls))
    return _runoff({v: e.jit for v, e in entries.items()}, case, seconds, clock, calls)


def _best(*times: Mapping[str, float]) -> dict[str, float]:
    """Per variant, the least of its times in any of `times` (the first names them all)."""
    return {v: min(t.get(v, math.inf) for t in times) for v in times[0]}


def _race(jits: Mapping[str, JitFunction], case: CpuCase, clock: _Clock, expected: Mapping[str, float],
          rounds: int = 3, calls: _Calls[Any] | None = None) -> dict[str, float]:  # fmt: skip
    """Each function's best time over `rounds` rounds in which every function runs once, in turn
    (a busy moment of a shared machine then slows all of them, not the one it fell on); a call is
    made only while the clock affords the function's `expected` time (inf: no call made)."""
    calls = calls or _Calls(_arrays)
    best = dict.fromkeys(jits, math.inf)
    for _ in range(rounds):
        for v, jit in jits.items():
            if clock.affords(min(best[v], expected[v])):
                best[v] = min(best[v], calls.timed(jit, case, clock.left()))
    return best


def _runoff(jits: Mapping[str, JitFunction], case: CpuCase, seconds: Mapping[str, float], clock: _Clock,
            calls: _Calls[R], margin: float = 1.25) -> dict[str, float]:  # fmt: skip
    """The race's times, with the variants within `margin` of the best raced again, in turns,
    for as many rounds (one where their calls are slow): a slow moment of the machine (or an
    array's pages) that fell on a close contender in every round does not decide."""
    best = min(seconds.values())
    close = {v: jit for v, jit in jits.items() if seconds[v] <= margin * best}
    if len(close) < 2:
        return dict(seconds)
    slow = max(seconds[v] for v in close) >= SLOW_CALL_S
    return _best(seconds, _race(close, case, clock, seconds, 1 if slow else 3, calls))


def _one_thread(
    case: CpuCase, entries: Mapping[str, _Entry[R]], best: str, choice: VariantChoice, clock: _Clock,
    calls: _Calls[R], counts: Callable[[R], bool], threads: int,
) -> tuple[JitFunction, VariantChoice, dict[str, R]]:  # fmt: skip
    """`best` (the fastest variant with parallel loops) built without them and raced against the
    chosen variant, where the clock affords it (a capped call is stopped where it could not
    win); what runs, why, and the one-thread run's result."""
    chosen, jit = choice.chosen, entries[choice.chosen].jit
    assert choice.search is not None
    cost = entries[best].build_s + (0.0 if calls.forked else 2 * choice.seconds[best]) + choice.seconds[chosen]
    if not clock.affords(cost):
        return jit, replace(choice, search=replace(choice.search, one_thread_skipped=True)), {}
    alone = f"{best}, one thread"  # the key `VariantChoice.runs` names
    try:
        alone_jit = compile_variant(case, best, parallel=False)
    except isl.Error:
        case.analysis.scop.ctx.reset_operations()
        return jit, choice, {}
    first, result = calls.checked(alone_jit, case, min(choice.seconds[chosen] + CAP_SLACK_S, clock.left()))
    if result is None:  # stopped: slower than the chosen variant already
        return jit, choice, {}
    if not counts(result):
        return jit, choice, {alone: result}
    expected = {chosen: choice.seconds[chosen], alone: first}
    slow = max(expected.values()) >= SLOW_CALL_S
    times = _best(expected, _race({chosen: jit, alone: alone_jit}, case, clock, expected, 1 if slow else 3, calls))
    if times[alone] >= times[chosen]:
        return jit, choice, {alone: result}
    remark = _one_thread_remark(case, threads, choice.seconds[best], times[alone])
    faster = replace(choice, chosen=best, remark=_choice_remark(case, best, choice.seconds), one_thread=remark,
                     runs_s=times[alone])  # fmt: skip
    return alone_jit, faster, {alone: result}


def _searched(case: CpuCase, choice: VariantChoice, clock: _Clock) -> VariantChoice:
    """`choice` with the race's wall time, and a `RaceStopped` remark where it stopped early."""
    assert choice.search is not None
    search = replace(choice.search, seconds=clock.elapsed())
    if not (search.stopped or search.one_thread_skipped):
        return replace(choice, search=search)
    scop = case.analysis.scop
    args = {"tried": len(search.tried), "candidates": search.candidates, "budget seconds": search.budget_s}
    stopped = Remark(RemarkKind.MISSED, "cpu-run", "RaceStopped", search.message(), scop.range, scop.function, args)
    return replace(choice, search=search, stopped=stopped)


def run_tuned(
    case: CpuCase, tuned: Tuned, parallel: bool, check: Callable[[Arrays], R], hint_s: float = 0.0,
    deadline: float = math.inf,
) -> tuple[JitFunction, VariantChoice, dict[str, R]] | None:  # fmt: skip
    """The variant a tuning record names (`tuning.Tuned`), built, run once, checked and timed: no
    race. None where it cannot run (not a variant of this SCoP, isl cannot build it, or — capped
    where the original's `hint_s` is long, `race_variants` — it ran past half of what is left
    before `deadline`): then the race runs."""
    v, threads = tuned.variant, max_threads()
    if v not in case_variants(case):
        return None
    try:
        jit = compile_variant(case, v, parallel and threads > 1 and not tuned.one_thread, tuned.tiles)
    except isl.Error:
        case.analysis.scop.ctx.reset_operations()
        return None
    clock = _Clock(math.inf, deadline)
    calls = _Calls(check, forked=hint_s >= FORK_HINT_S and can_fork())
    first, result = calls.checked(jit, case, clock.hard_left() / 2)
    if result is None:
        return None
    rounds = _race({v: jit}, case, clock, {v: first}, calls=calls) if first < SLOW_CALL_S else {}
    seconds = min(first, *rounds.values())
    one = _one_thread_remark(case, threads, tuned.parallel_s, tuned.seconds) if tuned.one_thread and tuned.parallel_s > 0 else None
    choice = VariantChoice(v, {v: seconds}, None, one, {v: jit.module.parallel_loops},
                           tuned=_tuned_remark(case, tuned), runs_s=seconds)  # fmt: skip
    return jit, choice, {choice.runs: result}


def tuned_record(choice: VariantChoice) -> Tuned | None:
    """What the tuning cache keeps of a race's choice (None: the choice came from it)."""
    if choice.search is None:
        return None
    alone = choice.one_thread is not None
    return Tuned(choice.chosen, alone, choice.runs_s, choice.seconds.get(DEFAULT_VARIANT, 0.0),
                 len(choice.search.tried), choice.search.candidates, choice.seconds[choice.chosen] if alone else 0.0)  # fmt: skip


def _tuned_remark(case: CpuCase, tuned: Tuned) -> Remark:
    """``tuned: untiled+jam2, 1.43x over the default (tiled), cached: the fastest of all 9 schedule
    variants an earlier run timed at these sizes on this machine``"""
    runs = tuned.variant + (f" {'x'.join(map(str, tuned.tiles))} tiles" if tuned.tiles and tuned.variant in TILED else "")
    runs += ", one thread" if tuned.one_thread else ""
    if runs == DEFAULT_VARIANT:
        gain = "the default"
    elif tuned.default_s > 0 and tuned.seconds > 0:
        gain = f"{tuned.default_s / tuned.seconds:.2f}x over the default ({DEFAULT_VARIANT})"
    else:
        gain = f"the default ({DEFAULT_VARIANT}) not timed"
    of = f"all {tuned.candidates}" if tuned.tried == tuned.candidates else f"{tuned.tried} of {tuned.candidates}"
    searched = "configurations `hexplore tune` timed" if tuned.tiles else "schedule variants an earlier run timed"
    message = f"tuned: {runs}, {gain}, cached: the fastest of {of} {searched} at these sizes on this machine"
    scop = case.analysis.scop
    args = {"variant": runs, "seconds": tuned.seconds, "default seconds": tuned.default_s, "tried": tuned.tried,
            "candidates": tuned.candidates}  # fmt: skip
    return Remark(RemarkKind.PASSED, "cpu-run", "TunedVariant", message, scop.range, scop.function, args)


_WHAT = {
    "untiled": "its loop order without tiles",
    "untiled+jam": "its loop order without tiles, with unroll-and-jam",
    "untiled+jam2": "its loop order without tiles, with register tiles",
    "distributed": "its statements in separate loop nests, without tiles",
    "distributed+jam": "its statements in separate loop nests, without tiles, with unroll-and-jam",
    "source order": "the loops as written",
}


def _choice_remark(case: CpuCase, chosen: str, seconds: Mapping[str, float]) -> Remark | None:
    """Why the code that runs is not tiled; None when it is (with or without unroll-and-jam)."""
    if chosen in TILED:
        return None
    scop = case.analysis.scop
    sizes = ", ".join(f"{k}={v}" for k, v in case.ints.items())
    unit = _unit(max(seconds.values()))
    times = ", ".join(f"{v} {_duration(t, unit)}" for v, t in seconds.items())
    message = (
        f"the tiled loops were not the fastest on this machine ({times}"
        f"{' at ' + sizes if sizes else ''}), so hexplore runs {_WHAT[chosen]}"
    )
    args = {"chosen": chosen, **{f"{v} seconds": t for v, t in seconds.items()}}
    return Remark(RemarkKind.MISSED, "cpu-run", "TilingNotFaster", message, scop.range, scop.function, args)


def _one_thread_remark(case: CpuCase, threads: int, parallel_s: float, alone_s: float) -> Remark:
    scop = case.analysis.scop
    unit = _unit(max(parallel_s, alone_s))
    message = (
        f"the parallel loops were slower on {threads} threads ({_duration(parallel_s, unit)}) than on one "
        f"({_duration(alone_s, unit)}): each runs too briefly to pay for waking the other threads, so "
        "hexplore runs them on one"
    )
    args = {"threads": threads, "parallel seconds": parallel_s, "one thread seconds": alone_s}
    return Remark(RemarkKind.MISSED, "cpu-run", "ParallelNotFaster", message, scop.range, scop.function, args)


_UNITS = (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6))


def _unit(seconds: float) -> tuple[str, float]:
    """The unit a time (the largest of a list, so that the list reads in one unit) is said in."""
    return next((u for u in _UNITS if seconds >= u[1]), _UNITS[-1])


def _duration(seconds: float, unit: tuple[str, float] | None = None) -> str:
    """``1.25 s``, ``47.1 ms``, ``0.168 ms`` (in `unit` where given), ``12 µs``: three digits."""
    name, scale = unit or _unit(seconds)
    value = seconds / scale
    return f"{value:.3g} {name}" if value < 1000 else f"{value:.0f} {name}"


def run_jit(jit: JitFunction, case: CpuCase) -> tuple[dict[str, np.ndarray], float]:
    """Call `jit` on fresh copies of the case's inputs; the function's arrays and the scalars the
    loop nest wrote (`CpuCase.outputs` picks what to check), and the call's time."""
    arrays = {s.name: aligned_copy(case.inputs[s.name]) for s in case.layout.arrays}
    scratch = _scratch(case)
    values: dict[str, object] = {**case.ints, **case.floats, **arrays, **scratch}
    for spec in jit.module.args:
        if spec.name not in values:
            raise KeyError(f"no value for `{spec.name}` of {jit.module.name}")
    if jit.module.parallel_loops:
        note_threads_started()  # libgomp's threads: no fork from this process after this
    elapsed = jit(values)
    written = {a.name for a in case.analysis.scop.arrays if a.kind != "array" and not a.extents}
    return {**arrays, **{n: b for n, b in scratch.items() if n in written}}, elapsed


def aligned_copy(a: np.ndarray) -> np.ndarray:
    """A C-ordered copy of `a` that starts a cache line (`inputs.aligned_empty`)."""
    out = aligned_empty(a.shape, a.dtype)
    out[...] = a
    return out


def _scratch(case: CpuCase) -> dict[str, np.ndarray]:
    """Buffers for scalars written in the nest and expanded local scalars, with initial values."""
    scop = case.analysis.scop
    env = {**case.ints, **{isl_name(k): v for k, v in case.ints.items()}}
    out = {}
    for name, lay in array_layouts(scop).items():
        if not lay.is_scalar:
            continue
        size = 1
        for e in lay.extent:
            size *= max(evaluate(e, env) if e is not None and not isinstance(e, str) else 1, 1)
        buf = np.zeros(size, dtype=scalar_dtype(lay.decl.elem_type))
        initial = case.floats.get(name, case.ints.get(name))
        if initial is not None:
            buf[...] = initial
        out[name] = buf
    return out


def check_llvm_cpu(
    path: str,
    function: str,
    params: Mapping[str, int],
    size_limits: Mapping[str, str | None] | None = None,
    parallel: bool = True,
    threads: int | None = None,
    reference: BuildOptions | None = None,
    parse: ParseOptions | None = None,
    *,
    limit: TimeLimit | None = None,
    tuned: Tuned | None = None,
    variants: Collection[str] | None = None,
) -> LlvmCpuResult:
    """Every JIT'd variant the race tries against the C compiler's build of the original, each as
    soon as it has run, and the fastest that matches (`race_variants`) timed again; `threads`
    sets OpenMP's. A `limit` (the run's) time-boxes the race (`TimeLimit.race_budget`); without
    one every variant is tried. With `tuned` (a tuning cache record) the variant it names runs
    alone, checked the same way (`run_tuned`), unless it cannot be built. `variants` narrows
    the race to those (the feature tests check the default schedule and a few others)."""
    case = prepare(path, function, params, size_limits, parse)
    expected = run_reference(path, case.layout, case.inputs, options=reference, rounds=4)  # as `_race` times
    if threads is not None:
        set_threads(threads)
    wanted = reference_outputs(expected)

    def check(arrays: Arrays) -> Comparison:
        return compare_arrays(wanted, case.outputs(arrays))

    deadline = limit.answer_by() if limit is not None else math.inf
    hint = expected.elapsed_s
    picked = run_tuned(case, tuned, parallel, check, hint, deadline) if tuned is not None else None
    if picked is None:
        budget = limit.race_budget(hint) if limit is not None else math.inf
        proxy = proxy_of(case, params, size_limits, parse)
        picked = race_variants(case, parallel, budget, check, _matches, proxy, hint, deadline, variants)
    jit, choice, results = picked
    if choice.runs_s >= SLOW_CALL_S:  # timed by one call already: another would cost as much
        seconds = choice.runs_s
    else:
        seconds = min(run_jit(jit, case)[1] for _ in range(3))  # warm: the race called it
    return LlvmCpuResult(function, dict(params), results, choice, expected.elapsed_s, seconds,
                         choice.parallel_loops.get("tiled", 0))  # fmt: skip


def proxy_of(case: CpuCase, params: Mapping[str, int], size_limits: Mapping[str, str | None] | None = None,
             parse: ParseOptions | None = None) -> Callable[[float], CpuCase | None]:  # fmt: skip
    """For `race_variants`: the case prepared again at `proxy.proxy_sizes` (None: no proxy)."""

    def proxy(ratio: float) -> CpuCase | None:
        sizes = proxy_sizes(case.analysis.scop, case.ints, ratio)
        if not sizes:
            return None
        return prepare(case.path, case.layout.function, {p: sizes.get(p, v) for p, v in params.items()}, size_limits, parse)

    return proxy


def _matches(c: Comparison) -> bool:
    return c.ok
