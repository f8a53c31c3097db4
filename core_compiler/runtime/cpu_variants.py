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
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Generic, TypeVar

import islpy as isl
import numpy as np

from core_compiler.analysis import AnalysisOptions, ScopAnalysis, analyze_file
from core_compiler.codegen.ast_print import evaluate
from core_compiler.codegen.statements import array_layouts
from core_compiler.errors import HexploreError, LayoutError
from core_compiler.frontend import ParseOptions
from core_compiler.llvm.cpu_lowering import lower_cpu, optimized_ast, original_ast
from core_compiler.llvm.jit import JitFunction, jit_compile, max_threads, scalar_dtype, set_threads
from core_compiler.remarks import Remark, RemarkKind
from core_compiler.runtime.budget import TimeLimit
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
from core_compiler.runtime.reference import BuildOptions, run_reference
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
    return jit_compile(lower_cpu(scop, ast, name, parallel=False, source_order=True))


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
    return jit_compile(lower_cpu(scop, ast, f"{scop.function}_s{scop.index}_{suffix}", parallel=parallel))


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
# PolyBench's LARGE sizes on two cores (2026-12: register tiles on the untiled loops for gemm,
# trmm, 2mm's products and heat-3d; the distributed nests for fdtd-2d; the untiled loops for
# jacobi-2d), the tilable ones late (isl takes seconds to build a skewed stencil's), the source
# order last (at large sizes the slowest to run, by far).
RACE_ORDER = (
    "tiled", "untiled+jam2", "distributed", "untiled", "tiled+jam2", "distributed+jam", "untiled+jam",
    "tiled+jam", "tilable", "tilable+jam", "source order",
)  # fmt: skip
SLOW_CALL_S = 0.2  # a variant whose first call takes this long is timed by it: no rounds


def case_variants(case: CpuCase) -> tuple[str, ...]:
    """The `VARIANTS` that differ for this SCoP: the tilable and distributed ones only where
    their schedule is not the default one."""
    scop, deps = case.analysis.scop, case.analysis.deps
    default = compute_schedule(scop, deps).get_map()
    same = {
        prefix: default.is_equal(compute_schedule(scop, deps, options).get_map())
        for prefix, options in (("tilable", TILABLE), ("distributed", DISTRIBUTED))
    }
    return tuple(v for v in VARIANTS if not same.get(v.partition("+")[0], False))


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
    proxied: tuple[str, ...] = ()  # timed only at proxy sizes (`_by_proxy`): they were slower there
    proxy: tuple[tuple[str, int], ...] = ()  # the proxy sizes that differ from the run's

    def message(self) -> str:
        """``tried 3 of 9 schedule variants in 8.1 s; stopped at the time budget (40.0 s)``"""
        count = f"all {self.candidates}" if len(self.tried) == self.candidates else f"{len(self.tried)} of {self.candidates}"
        text = f"tried {count} schedule variants in {_duration(self.seconds)}"
        if self.unbuilt:
            text += f" ({', '.join(self.unbuilt)}: more than isl's operation limit to build)"
        if self.proxied:
            sizes = ", ".join(f"{k}={v}" for k, v in self.proxy)
            text += f", {len(self.proxied)} of them only at smaller sizes ({sizes})"
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


def compile_variant(case: CpuCase, variant: str, parallel: bool = True) -> JitFunction:
    """The variant's code, shared by cases of the same source at other sizes (the code takes
    the sizes as arguments; the last `_COMPILED_KEPT` are kept): in one process — a test, the
    benchmark — running again at other sizes builds nothing, where isl and LLVM take seconds
    for a skewed stencil's register tiles. (Editor runs each start a fresh worker.)"""
    key = (case.source, variant, parallel)
    jit = _COMPILED.get(key) if case.source else None
    if jit is None:
        jit = _compile_variant(case, variant, parallel)
    if case.source:
        _COMPILED[key] = jit
        _COMPILED.move_to_end(key)
        while len(_COMPILED) > _COMPILED_KEPT:
            _COMPILED.popitem(last=False)
    return jit


def _compile_variant(case: CpuCase, variant: str, parallel: bool) -> JitFunction:
    if variant == "source order":
        return compile_original(case)
    schedule = TILABLE if variant.startswith("tilable") else DISTRIBUTED if variant.startswith("distributed") else None
    tile = 0 if variant.startswith(("untiled", "distributed")) else CpuOptions.tile_size
    options = CpuOptions(tile_size=tile, parallel=parallel, privatize=True)
    if variant.endswith("+jam"):
        options = replace(options, jam=4)
    elif variant.endswith("+jam2"):  # 4x4 register tiles (4 on a band of two loops), whole strips unguarded
        options = replace(options, jam=4, jam_loops=2, isolate=True)
    return compile_optimized(case, parallel, schedule, options)



Arrays = dict[str, np.ndarray]
R = TypeVar("R")


@dataclass(frozen=True)
class _Clock:
    """The race's time budget, from when it started."""

    budget_s: float
    start: float = field(default_factory=time.perf_counter)

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def affords(self, seconds: float) -> bool:
        return self.elapsed() + seconds <= self.budget_s


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
    proxy: Callable[[float], CpuCase | None] | None = None, hint_s: float = 0.0,
) -> tuple[JitFunction, VariantChoice, dict[str, R]]:  # fmt: skip
    """`choose_variant`, with each variant's arrays made `check(arrays)` as soon as it has run
    (they are not kept: at large sizes each variant's would take as much memory as the inputs);
    a variant whose result `counts` not (it differs from the original) cannot win unless none counts.
    Where the budget cannot afford a call of every variant at full size — judged from `hint_s`
    (the original's time) before the first, from the slowest so far after — `proxy(ratio)` (a
    case at sizes doing about `ratio` of the work, `proxy.proxy_sizes`) ranks them first
    (`_by_proxy`)."""
    threads = max_threads()
    parallel = parallel and threads > 1
    clock = _Clock(budget_s)
    candidates = [v for v in RACE_ORDER if v in case_variants(case)]
    f = _field(case, candidates, parallel, clock, check, proxy, hint_s)
    entries = f.entries
    eligible = {v: e for v, e in entries.items() if counts(e.result)} or entries
    seconds = {v: e.first_s for v, e in entries.items()} | _timings(eligible, case, clock)
    chosen = min(eligible, key=lambda v: seconds[v])
    results = {v: e.result for v, e in entries.items()}
    tried = tuple(v for v in candidates if v in entries or v in f.unbuilt or v in f.proxied)
    search = Search(tried, len(candidates), 0.0, budget_s, len(tried) < len(candidates), f.unbuilt,
                    proxied=f.proxied, proxy=f.proxy)  # fmt: skip
    choice = VariantChoice(chosen, seconds, _choice_remark(case, chosen, seconds),
                           parallel_loops={v: e.jit.module.parallel_loops for v, e in entries.items()},
                           search=search, runs_s=seconds[chosen])  # fmt: skip
    jit = entries[chosen].jit
    best = min((v for v in eligible if eligible[v].jit.module.parallel_loops), key=lambda v: seconds[v], default=None)
    if parallel and best is not None:
        jit, choice, alone = _one_thread(case, entries, best, choice, clock, check, counts, threads)
        results |= alone
    return jit, _searched(case, choice, clock), results


@dataclass(frozen=True, eq=False)
class _Field(Generic[R]):
    """The variants the race ran at full size, those isl could not build, and those it ran only at
    proxy sizes (`proxy`: the sizes that differ)."""

    entries: dict[str, _Entry[R]]
    unbuilt: tuple[str, ...]
    proxied: tuple[str, ...] = ()
    proxy: tuple[tuple[str, int], ...] = ()


PROXY_FLOOR_S = 0.05  # what a proxy call should take at least: shorter ones time noise
PROXY_MAX_RATIO = 0.5  # proxy sizes doing more of the work than this save too little
PROXY_MARGIN = 1.5  # variants this close to the fastest at proxy sizes are timed at full size


def _field(
    case: CpuCase, candidates: list[str], parallel: bool, clock: _Clock, check: Callable[[Arrays], R],
    proxy: Callable[[float], CpuCase | None] | None, hint_s: float,
) -> _Field[R]:  # fmt: skip
    """The candidates built and run once each, in order, while the clock affords the slowest
    build and call so far (the first always), and those isl could not build (a skewed stencil's
    register tiles may not be); where the clock cannot afford a call of each of the rest at full
    size, the rest ranked at `proxy` sizes first (`_by_proxy`)."""
    entries: dict[str, _Entry[R]] = {}
    unbuilt: list[str] = []
    if proxy is not None and hint_s > 0 and not clock.affords(len(candidates) * hint_s):
        small = _proxy_case(hint_s, 0.0, len(candidates), clock, proxy)
        if small is not None:
            return _by_proxy(case, small, _Field(entries, ()), candidates, parallel, clock, check)
    for k, v in enumerate(candidates):
        rest = candidates[k:]
        if entries and proxy is not None and not clock.affords(len(rest) * _next_cost(entries.values())):
            first, build = next(iter(entries.values())).first_s, max(e.build_s for e in entries.values())
            small = _proxy_case(first, build, len(rest) + 1, clock, proxy)
            if small is not None:
                return _by_proxy(case, small, _Field(entries, tuple(unbuilt)), rest, parallel, clock, check)
            proxy = None
        if entries and not clock.affords(_next_cost(entries.values())):
            break
        entry = _build_and_run(case, v, parallel, check)
        if entry is None:
            unbuilt.append(v)
        else:
            entries[v] = entry
    return _Field(entries, tuple(unbuilt))


def _build_and_run(case: CpuCase, variant: str, parallel: bool, check: Callable[[Arrays], R]) -> _Entry[R] | None:
    """The variant built and called once (None: isl could not build it within its limit)."""
    start = time.perf_counter()
    try:
        jit = compile_variant(case, variant, parallel)
    except isl.Error:
        case.analysis.scop.ctx.reset_operations()
        return None
    built = time.perf_counter() - start
    arrays, first = run_jit(jit, case)
    return _Entry(jit, built, first, check(arrays))


def _proxy_case(call_s: float, build_s: float, count: int, clock: _Clock,
                proxy: Callable[[float], CpuCase | None]) -> CpuCase | None:  # fmt: skip
    """A case at sizes where `count` variants, each built in `build_s` and called in `call_s` at
    full size, build and run once in a quarter of what is left of the budget; None where none
    saves enough, or the sizes cannot be prepared."""
    left = clock.budget_s - clock.elapsed()
    ratio = max(left / (4 * count) - build_s, PROXY_FLOOR_S) / call_s
    if ratio > PROXY_MAX_RATIO:
        return None
    try:
        return proxy(ratio)
    except (HexploreError, isl.Error):  # sizes the layout or isl refuse: no proxy
        return None


def _by_proxy(case: CpuCase, small: CpuCase, field: _Field[R], rest: list[str], parallel: bool, clock: _Clock,
              check: Callable[[Arrays], R]) -> _Field[R]:  # fmt: skip
    """`rest` and the variants `field` ran at full size run once each at the `small` case's
    sizes, while the clock affords it; then those within `PROXY_MARGIN` of the fastest there,
    fastest first, at full size (checked: only these can win; the first always where none ran
    there yet), while the clock affords their proxy time scaled as the first at both sizes'."""
    times: dict[str, float] = {}
    builds = [e.build_s for e in field.entries.values()] or [0.0]
    unbuilt = list(field.unbuilt)
    for v in (*field.entries, *rest):
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
        times[v] = run_jit(jit, small)[1]
    full = dict(field.entries)
    best = min(times.values(), default=0.0)
    for v in sorted(times, key=lambda v: times[v]):
        if v in full or times[v] > PROXY_MARGIN * best:
            continue
        if full and not clock.affords(times[v] * _scale(full, times)):
            break
        entry = _build_and_run(case, v, parallel, check)
        if entry is not None:
            full[v] = entry
    sizes = tuple((k, n) for k, n in small.ints.items() if case.ints.get(k) != n)
    return _Field(full, tuple(unbuilt), tuple(v for v in times if v not in full), sizes)


def _scale(full: Mapping[str, _Entry[R]], proxy_s: Mapping[str, float]) -> float:
    """How much longer a call takes at full size than at the proxy's, as the first variant timed
    at both says."""
    v = next((v for v in full if proxy_s.get(v)), None)
    return full[v].first_s / proxy_s[v] if v is not None else 1.0


def _next_cost(entries: Iterable[_Entry[R]]) -> float:
    """What the next variant may cost, as far as the race can tell: the slowest build and the
    slowest call so far (a variant slower than that shows only by running it)."""
    seen = list(entries)
    return max(e.build_s for e in seen) + max(e.first_s for e in seen)


def _timings(entries: Mapping[str, _Entry[R]], case: CpuCase, clock: _Clock) -> dict[str, float]:
    """Each variant's best time: its first call's where that took `SLOW_CALL_S` or more, else the
    best of rounds in turns (`_race`); then the close contenders raced again (`_runoff`)."""
    seconds = {v: e.first_s for v, e in entries.items()}
    fast = {v: e.jit for v, e in entries.items() if e.first_s < SLOW_CALL_S}
    seconds = _best(seconds, _race(fast, case, clock, seconds))
    return _runoff({v: e.jit for v, e in entries.items()}, case, seconds, clock)


def _best(*times: Mapping[str, float]) -> dict[str, float]:
    """Per variant, the least of its times in any of `times` (the first names them all)."""
    return {v: min(t.get(v, math.inf) for t in times) for v in times[0]}


def _race(jits: Mapping[str, JitFunction], case: CpuCase, clock: _Clock, expected: Mapping[str, float],
          rounds: int = 3) -> dict[str, float]:  # fmt: skip
    """Each function's best time over `rounds` rounds in which every function runs once, in turn
    (a busy moment of a shared machine then slows all of them, not the one it fell on); a call is
    made only while the clock affords the function's `expected` time (inf: no call made)."""
    best = dict.fromkeys(jits, math.inf)
    for _ in range(rounds):
        for v, jit in jits.items():
            if clock.affords(min(best[v], expected[v])):
                best[v] = min(best[v], run_jit(jit, case)[1])
    return best


def _runoff(jits: Mapping[str, JitFunction], case: CpuCase, seconds: Mapping[str, float], clock: _Clock,
            margin: float = 1.25) -> dict[str, float]:  # fmt: skip
    """The race's times, with the variants within `margin` of the best raced again, in turns,
    for as many rounds (one where their calls are slow): a slow moment of the machine (or an
    array's pages) that fell on a close contender in every round does not decide."""
    best = min(seconds.values())
    close = {v: jit for v, jit in jits.items() if seconds[v] <= margin * best}
    if len(close) < 2:
        return dict(seconds)
    slow = max(seconds[v] for v in close) >= SLOW_CALL_S
    return _best(seconds, _race(close, case, clock, seconds, 1 if slow else 3))


def _one_thread(
    case: CpuCase, entries: Mapping[str, _Entry[R]], best: str, choice: VariantChoice, clock: _Clock,
    check: Callable[[Arrays], R], counts: Callable[[R], bool], threads: int,
) -> tuple[JitFunction, VariantChoice, dict[str, R]]:
    """`best` (the fastest variant with parallel loops) built without them and raced against the
    chosen variant, where the clock affords it; what runs, why, and the one-thread run's result."""
    chosen, jit = choice.chosen, entries[choice.chosen].jit
    if not clock.affords(entries[best].build_s + 2 * choice.seconds[best] + choice.seconds[chosen]):
        assert choice.search is not None
        return jit, replace(choice, search=replace(choice.search, one_thread_skipped=True)), {}
    alone = f"{best}, one thread"  # the key `VariantChoice.runs` names
    try:
        alone_jit = compile_variant(case, best, parallel=False)
    except isl.Error:
        case.analysis.scop.ctx.reset_operations()
        return jit, choice, {}
    arrays, first = run_jit(alone_jit, case)
    result = check(arrays)
    if not counts(result):
        return jit, choice, {alone: result}
    expected = {chosen: choice.seconds[chosen], alone: first}
    slow = max(expected.values()) >= SLOW_CALL_S
    times = _best(expected, _race({chosen: jit, alone: alone_jit}, case, clock, expected, 1 if slow else 3))
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
    case: CpuCase, tuned: Tuned, parallel: bool, check: Callable[[Arrays], R]
) -> tuple[JitFunction, VariantChoice, dict[str, R]] | None:
    """The variant a tuning record names (`tuning.Tuned`), built, run once, checked and timed: no
    race. None where it cannot run (not a variant of this SCoP, or isl cannot build it): then
    the race runs."""
    v, threads = tuned.variant, max_threads()
    if v not in case_variants(case):
        return None
    try:
        jit = compile_variant(case, v, parallel and threads > 1 and not tuned.one_thread)
    except isl.Error:
        case.analysis.scop.ctx.reset_operations()
        return None
    arrays, first = run_jit(jit, case)
    result = check(arrays)
    rounds = _race({v: jit}, case, _Clock(math.inf), {v: first}) if first < SLOW_CALL_S else {}
    seconds = min(first, *rounds.values())
    one = _one_thread_remark(case, threads, tuned.parallel_s, tuned.seconds) if tuned.one_thread else None
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
    runs = f"{tuned.variant}, one thread" if tuned.one_thread else tuned.variant
    if runs == DEFAULT_VARIANT:
        gain = "the default"
    elif tuned.default_s > 0 and tuned.seconds > 0:
        gain = f"{tuned.default_s / tuned.seconds:.2f}x over the default ({DEFAULT_VARIANT})"
    else:
        gain = f"the default ({DEFAULT_VARIANT}) not timed"
    of = f"all {tuned.candidates}" if tuned.tried == tuned.candidates else f"{tuned.tried} of {tuned.candidates}"
    message = f"tuned: {runs}, {gain}, cached: the fastest of {of} schedule variants an earlier run timed at these sizes on this machine"
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
    times = ", ".join(f"{v} {_duration(t)}" for v, t in seconds.items())
    message = (
        f"the tiled loops were not the fastest on this machine ({times}"
        f"{' at ' + sizes if sizes else ''}), so hexplore runs {_WHAT[chosen]}"
    )
    args = {"chosen": chosen, **{f"{v} seconds": t for v, t in seconds.items()}}
    return Remark(RemarkKind.MISSED, "cpu-run", "TilingNotFaster", message, scop.range, scop.function, args)


def _one_thread_remark(case: CpuCase, threads: int, parallel_s: float, alone_s: float) -> Remark:
    scop = case.analysis.scop
    message = (
        f"the parallel loops were slower on {threads} threads ({_duration(parallel_s)}) than on one "
        f"({_duration(alone_s)}): each runs too briefly to pay for waking the other threads, so "
        "hexplore runs them on one"
    )
    args = {"threads": threads, "parallel seconds": parallel_s, "one thread seconds": alone_s}
    return Remark(RemarkKind.MISSED, "cpu-run", "ParallelNotFaster", message, scop.range, scop.function, args)


def _duration(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} µs"
    return f"{seconds * 1e3:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def run_jit(jit: JitFunction, case: CpuCase) -> tuple[dict[str, np.ndarray], float]:
    """Call `jit` on fresh copies of the case's inputs; the function's arrays and the scalars the
    loop nest wrote (`CpuCase.outputs` picks what to check), and the call's time."""
    arrays = {s.name: aligned_copy(case.inputs[s.name]) for s in case.layout.arrays}
    scratch = _scratch(case)
    values: dict[str, object] = {**case.ints, **case.floats, **arrays, **scratch}
    for spec in jit.module.args:
        if spec.name not in values:
            raise KeyError(f"no value for `{spec.name}` of {jit.module.name}")
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
) -> LlvmCpuResult:
    """Every JIT'd variant the race tries against the C compiler's build of the original, each as
    soon as it has run, and the fastest that matches (`race_variants`) timed again; `threads`
    sets OpenMP's. A `limit` (the run's) time-boxes the race (`TimeLimit.race_budget`); without
    one every variant is tried. With `tuned` (a tuning cache record) the variant it names runs
    alone, checked the same way (`run_tuned`), unless it cannot be built."""
    case = prepare(path, function, params, size_limits, parse)
    expected = run_reference(path, case.layout, case.inputs, options=reference, rounds=4)  # as `_race` times
    if threads is not None:
        set_threads(threads)
    wanted = reference_outputs(expected)

    def check(arrays: Arrays) -> Comparison:
        return compare_arrays(wanted, case.outputs(arrays))

    picked = run_tuned(case, tuned, parallel, check) if tuned is not None else None
    if picked is None:
        budget = limit.race_budget() if limit is not None else math.inf
        proxy = proxy_of(case, params, size_limits, parse)
        picked = race_variants(case, parallel, budget, check, _matches, proxy, expected.elapsed_s)
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
