"""Running a whole function against its original: for a function the one-nest runs refuse
(`errors.NotOneNest`: several modeled loop nests, split by an opaque call, a ``#pragma hexplore``
line or code hexplore does not model, or one nest with such code around it).

The C target (`codegen/c.py`, ``hexplore compile --target c``) writes the function with each
modeled nest replaced by its tiled, OpenMP-parallel loops and the code between them kept as
written. That text and the original are built by the system C compiler the same way
(`reference.build_reference`: the same flags, plus ``-fopenmp`` for the generated one), called
on the same inputs (`inputs.make_inputs` over the function's `Layout`), and every array argument
and the return value compared; both are timed as the reference is (`reference.timed_call`)::

    w = check_whole_c("pr.c", "scale", {"n": 37})
    w.comparison.ok, w.reference_s, w.generated_s
    w.note()   # "built with -fopenmp ...; nest 0 (line 3) scheduled and tiled, 1 loop parallel; ..."

`run.run_function` calls it in its worker on ``--device cpu`` (its report's variant
`run.WHOLE_FUNCTION`); on a device the refusal stays.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core_compiler.analysis import AnalysisOptions, FileAnalysis, ScopAnalysis, analyze_file
from core_compiler.codegen.c import CFile, COptions, generate_c
from core_compiler.frontend import ParseOptions, ir
from core_compiler.runtime.compare import Comparison, compare_arrays
from core_compiler.runtime.differential import reference_outputs
from core_compiler.runtime.footprint import check_footprint, fit_layout
from core_compiler.runtime.inputs import make_inputs
from core_compiler.runtime.reference import BuildOptions, ReferenceResult, run_reference
from core_compiler.runtime.signature import Layout, layout_for_source
from core_compiler.transform.directives import nest_directive

TIMING_ROUNDS = 4  # as the one-nest runs time the original


@dataclass(frozen=True)
class NestCode:
    """What ran for one modeled nest of the function."""

    scop: str  # "scale#scop0"
    line: int  # of its first loop
    how: str  # "2 loops in parallel", "on one thread", "kept as written: ..."
    directive: str = ""  # what its ``#pragma hexplore`` line meant for this run, if it has one


@dataclass(frozen=True)
class WholeResult:
    function: str
    params: Mapping[str, int]
    comparison: Comparison  # every array argument, and "return": of the first build that differs, else the one timed
    reference_s: float  # the original (cc -O2), the fastest call
    generated_s: float  # the C target's function, the fastest call of its faster build
    nests: tuple[NestCode, ...]
    openmp: bool = True  # the faster build was the one with OpenMP
    differs: str = ""  # the build whose results differ ("OpenMP", "one-thread"), "" when both match

    @property
    def ok(self) -> bool:
        return self.comparison.ok

    def note(self) -> str:
        """For a C programmer: which code ran, nest by nest."""
        parts = [f"nest {k} (line {n.line}) {n.how}" + (f" ({n.directive})" if n.directive else "")
                 for k, n in enumerate(self.nests)]  # fmt: skip
        built = "built with -fopenmp (faster than on one thread)" if self.openmp else "built without OpenMP (faster than with it)"
        return f"{built}; " + "; ".join(parts) + "; the code between the nests as written"


def check_whole_c(
    path: str,
    function: str,
    params: Mapping[str, int],
    parse: ParseOptions | None = None,
    rounds: int = TIMING_ROUNDS,
) -> WholeResult:
    """`function` as the C target writes it, with and without OpenMP, each against the
    original on the same inputs; the faster build's time counts, and a build that differs makes
    the whole run differ (as every variant the one-nest race tries is checked)."""
    layout, fa = whole_layout(path, function, params, parse)
    (fn,) = fa.functions
    text = Path(path).read_text(encoding="utf-8")
    inputs = make_inputs(layout)
    expected = run_reference(path, layout, inputs, rounds=rounds)
    builds = {omp: generate_c(fa, text, COptions(openmp=omp)) for omp in (True, False)}
    runs = {omp: compare_build(path, layout, inputs, expected, c.source, omp, rounds) for omp, c in builds.items()}
    fastest = min(runs, key=lambda omp: runs[omp][1])
    differs = next((omp for omp, (cmp, _) in runs.items() if not cmp.ok), None)
    shown = fastest if differs is None else differs
    nests = tuple(_nest_code(fn.function, sa, builds[fastest]) for sa in fn.scops)
    words = "" if differs is None else ("OpenMP" if differs else "one-thread")
    return WholeResult(function, dict(params), runs[shown][0], expected.elapsed_s, runs[fastest][1], nests, fastest, words)


def whole_layout(
    path: str, function: str, params: Mapping[str, int], parse: ParseOptions | None
) -> tuple[Layout, FileAnalysis]:
    """The call's layout, arrays of unknown extent sized for what every nest touches; the loops
    of a nest whose sizes are all known here must stay inside the arrays (`check_footprint`)."""
    layout = layout_for_source(path, function, params, options=parse)
    fa = analyze_file(path, parse_options=layout.parse_options, options=AnalysisOptions(), only=function)
    (fn,) = fa.functions
    layout = fit_layout(fn.function, fn.scops, layout)
    for sa in fn.scops:
        if set(sa.scop.params) <= layout.ints.keys():  # else set between the nests: not known here
            check_footprint(sa.scop, layout)
    return layout, fa


def compare_build(
    path: str,
    layout: Layout,
    inputs: Mapping[str, np.ndarray],
    expected: ReferenceResult,
    generated: str,
    openmp: bool = True,
    rounds: int = TIMING_ROUNDS,
) -> tuple[Comparison, float]:
    """The `generated` text of the file at `path`, built (with ``-fopenmp`` when `openmp`) and
    called on `inputs`: the comparison of every array and the return value with `expected` (the
    original's call on them), and the generated code's time."""
    build = BuildOptions(extra_flags=("-fopenmp",) if openmp else ())
    actual = run_reference(path, layout, inputs, text=generated, options=build, rounds=rounds)
    return compare_arrays(reference_outputs(expected), reference_outputs(actual)), actual.elapsed_s


def _nest_code(fn: ir.Function, sa: ScopAnalysis, generated: CFile) -> NestCode:
    name, line = sa.scop.name, sa.scop.range.line
    code = next((c for c in generated.scops if c.scop == name), None)
    kept = next((k for k in generated.kept if k.scop == name), None)
    if code is not None:
        loops = code.parallel_loops
        how = "scheduled and tiled" + (f", {loops} loop{'s' if loops != 1 else ''} parallel" if loops else "")
    elif kept is not None:
        how = "kept as written (isl ran out of its operation budget scheduling it)"
    else:
        how = "kept as written"
    return NestCode(name, line, how, _directive_words(fn, sa))


def _directive_words(fn: ir.Function, sa: ScopAnalysis) -> str:
    d = nest_directive(fn, sa.scop.loops)
    if d is None:
        return ""
    where = f"`{d.text}` (line {d.range.line})"
    if d.kind == "cpu":
        return f"on the CPU as {where} asks"
    return f"{where} applies to `--device opencl|cuda` and `compile`"
