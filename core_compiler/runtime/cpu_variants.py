"""Differential check of the LLVM CPU backend: the SCoP's original order and hexplore's optimized
(tiled, OpenMP-parallel) order, both JIT-compiled by LLVM at O3 for this CPU, against the original
function compiled by the system C compiler, on the same inputs.

As for `differential.check_opencl`, the function must be one SCoP plus scalar declarations before
it; those are evaluated here and handed to the generated code as initial values of their buffers.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import islpy as isl
import numpy as np

from core_compiler.analysis import AnalysisOptions, ScopAnalysis, analyze_file
from core_compiler.codegen.ast_print import evaluate
from core_compiler.codegen.statements import array_layouts
from core_compiler.errors import LayoutError
from core_compiler.frontend import ParseOptions
from core_compiler.llvm.cpu_lowering import lower_cpu, optimized_ast, original_ast
from core_compiler.llvm.jit import JitFunction, jit_compile, max_threads, scalar_dtype, set_threads
from core_compiler.remarks import Remark, RemarkKind
from core_compiler.runtime.compare import Comparison, compare_arrays
from core_compiler.runtime.differential import (
    ScopValues,
    reference_outputs,
    result_outputs,
    scop_values,
)
from core_compiler.runtime.footprint import fit_layout
from core_compiler.runtime.inputs import aligned_empty, make_inputs
from core_compiler.runtime.reference import BuildOptions, run_reference
from core_compiler.runtime.signature import Layout, compute_layout, macro_defines
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
    variants: Mapping[str, Comparison]  # each JIT'd variant (`VARIANTS`) vs the C compiler's build
    choice: VariantChoice  # the variant that runs, and why
    reference_s: float
    optimized_s: float  # the chosen variant, timed once more
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
        return self.choice.seconds["source order"]

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
# "tilable": the schedule isl finds when it makes bands permutable before it looks for outer
# parallel loops (Pluto's order): stencils skewed across time, trisolv's ``j`` and ``i`` in one band.
TILABLE = ScheduleOptions(outer_coincidence=False)
# "distributed": no statements fused that need not be (Polly's default), untiled: 2mm's two
# products as two clean nests, floyd_warshall's copies of row and column ``k`` apart from the
# update, whose ``i`` loop then runs in parallel.
DISTRIBUTED = ScheduleOptions(fusion="min")


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
class VariantChoice:
    """Which of the CPU code variants runs, from timing each on the case's own inputs."""

    chosen: str  # one of VARIANTS
    seconds: Mapping[str, float]  # each variant's best time (`_race`)
    remark: Remark | None  # why the code that runs is not tiled, if it is not
    one_thread: Remark | None = None  # why it runs on one thread though more are available
    parallel_loops: Mapping[str, int] = field(default_factory=dict)  # each variant's, run through GOMP_parallel

    @property
    def runs(self) -> str:
        """What runs: the variant, and whether on one thread."""
        return f"{self.chosen}, one thread" if self.one_thread is not None else self.chosen

    @property
    def remarks(self) -> tuple[Remark, ...]:
        return tuple(r for r in (self.remark, self.one_thread) if r is not None)


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


def choose_variant(
    case: CpuCase, parallel: bool = True
) -> tuple[JitFunction, VariantChoice, dict[str, dict[str, np.ndarray]]]:
    """Time the `VARIANTS` — the tiled schedule and the same schedule untiled, the tiled tilable
    schedule where it differs, each also with its second-innermost loops unrolled-and-jammed by
    4, the first two also with 4x4 register tiles, the distributed schedule where it differs,
    and the source order — on this machine (with the current OpenMP threads) and keep the
    fastest (`_runoff`: close contenders are raced again): tiling a memory-bound matrix-vector product
    or a stencil can lose to the loops as written, and then hexplore runs those, saying so. A
    variant isl cannot build within its operation limit is left out.
    On several threads, the fastest variant with parallel loops is also timed on one thread,
    which wins when parallel loops nested in sequential ones start the threads more often than
    they gain (doitgen's ``p`` loop inside ``r`` and ``q``).
    On one thread, the variants are built without parallel loops: a loop that runs in parallel
    inside a sequential one (seidel's second loop inside its first) can keep that one from being jammed.
    Also returns each variant's arrays, for checking them all."""
    threads = max_threads()
    parallel = parallel and threads > 1
    jits = _compile_all(case, parallel)
    results, seconds = _race(jits, case)
    seconds = _runoff(jits, case, seconds)
    chosen = min(jits, key=lambda v: seconds[v])
    loops = {v: jit.module.parallel_loops for v, jit in jits.items()}
    choice = VariantChoice(chosen, seconds, _choice_remark(case, chosen, seconds), parallel_loops=loops)
    best = min((v for v in jits if jits[v].module.parallel_loops), key=lambda v: seconds[v], default=None)
    if not parallel or best is None:
        return jits[chosen], choice, results
    alone = f"{best}, one thread"  # the key `VariantChoice.runs` names
    pair = {chosen: jits[chosen], alone: compile_variant(case, best, parallel=False)}
    arrays, times = _race(pair, case)
    results[alone] = arrays[alone]
    if times[alone] >= times[chosen]:
        return jits[chosen], choice, results
    remark = _one_thread_remark(case, threads, seconds[best], times[alone])
    return pair[alone], replace(choice, chosen=best, remark=_choice_remark(case, best, seconds), one_thread=remark), results


def _compile_all(case: CpuCase, parallel: bool) -> dict[str, JitFunction]:
    """The variants that isl can build within its operation limit (a skewed stencil's register
    tiles may not be)."""
    jits = {}
    for v in case_variants(case):
        try:
            jits[v] = compile_variant(case, v, parallel)
        except isl.Error:
            case.analysis.scop.ctx.reset_operations()
    return jits


def _race(jits: Mapping[str, JitFunction], case: CpuCase, rounds: int = 3, warm: bool = True) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, float]]:  # fmt: skip
    """Each function's arrays from a first, untimed call (it pages the code in and starts
    libgomp's threads; not made unless `warm`) and its best time over `rounds` rounds in which
    every function runs once, in turn: a busy moment of a shared machine then slows all of them,
    not the one it fell on."""
    arrays = {v: run_jit(jit, case)[0] for v, jit in jits.items()} if warm else {}
    best = dict.fromkeys(jits, float("inf"))
    for _ in range(rounds):
        for v, jit in jits.items():
            best[v] = min(best[v], run_jit(jit, case)[1])
    return arrays, best


def _runoff(jits: Mapping[str, JitFunction], case: CpuCase, seconds: Mapping[str, float], margin: float = 1.25) -> dict[str, float]:  # fmt: skip
    """The race's times, with the variants within `margin` of the best raced again, in turns,
    for as many rounds: a slow moment of the machine (or an array's pages) that fell on a close
    contender in every round does not decide."""
    best = min(seconds.values())
    close = {v: jit for v, jit in jits.items() if seconds[v] <= margin * best}
    if len(close) < 2:
        return dict(seconds)
    _, again = _race(close, case, warm=False)
    return {v: min(t, again.get(v, t)) for v, t in seconds.items()}


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
) -> LlvmCpuResult:
    """Every JIT'd variant against the C compiler's build of the original, and the fastest
    (`choose_variant`) timed again; `threads` sets OpenMP's."""
    case = prepare(path, function, params, size_limits, parse)
    expected = run_reference(path, case.layout, case.inputs, options=reference, rounds=4)  # as `_race` times
    if threads is not None:
        set_threads(threads)
    jit, choice, results = choose_variant(case, parallel)
    seconds = min(run_jit(jit, case)[1] for _ in range(3))  # warm: the race called it
    return LlvmCpuResult(
        function,
        dict(params),
        {v: compare_arrays(reference_outputs(expected), case.outputs(got)) for v, got in results.items()},
        choice,
        expected.elapsed_s,
        seconds,
        choice.parallel_loops.get("tiled", 0),
    )
