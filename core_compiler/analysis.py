"""The analysis pipeline of `hexplore analyze`: front end, SCoP detection, model, dependences.

Analyses never raise on user input: every function gets a `FunctionAnalysis` with its SCoPs and
remarks, whatever state the file is in.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import ClassVar

import islpy as isl

from core_compiler import render
from core_compiler.frontend import FileRemarks, ParseOptions, UnreadFunction, ir, iter_frontend
from core_compiler.passes import PassRecord, Trace
from core_compiler.remarks import Remark, analysis, missed
from core_compiler.scop.affine import WRAPS
from core_compiler.scop.dependences import Dependences, compute_dependences, reuse_dependences
from core_compiler.scop.detect import Detection, assumption_remarks, detect_scops
from core_compiler.scop.model import Scop, build_model, modulo_out_of_range, negative_division
from core_compiler.scop.region import RegionInfo
from core_compiler.source import SourceRange
from core_compiler.transform.directives import unplaced


@dataclass(frozen=True)
class AnalysisOptions:
    max_isl_operations: int = 4_000_000  # isl's compute-out per SCoP


@dataclass(frozen=True, eq=False)
class ScopAnalysis:
    scop: Scop
    deps: Dependences


@dataclass(frozen=True, eq=False)
class FunctionAnalysis:
    function: ir.Function
    scops: tuple[ScopAnalysis, ...]
    remarks: tuple[Remark, ...]
    trace: tuple[PassRecord, ...] = field(default=())


@dataclass(frozen=True, eq=False)
class FileAnalysis:
    path: str
    functions: tuple[FunctionAnalysis, ...]
    remarks: tuple[Remark, ...]  # file-level: syntax errors

    def function(self, name: str) -> FunctionAnalysis | None:
        return next((f for f in self.functions if f.function.name == name), None)

    def all_remarks(self) -> list[Remark]:
        return [*self.remarks, *(r for f in self.functions for r in f.remarks)]


def analyze_file(
    path: str,
    text: str | None = None,
    parse_options: ParseOptions | None = None,
    options: AnalysisOptions | None = None,
    only: str | None = None,
) -> FileAnalysis:
    """Analyse every function defined in `path` (or only the one named `only`)."""
    errors: tuple[Remark, ...] = ()
    results = []
    for item in iter_analyze_file(path, text, parse_options, options, only):
        if isinstance(item, FunctionAnalysis):
            results.append(item)
        else:
            errors = item
    return FileAnalysis(path, tuple(results), errors)


def iter_analyze_file(
    path: str,
    text: str | None = None,
    parse_options: ParseOptions | None = None,
    options: AnalysisOptions | None = None,
    only: str | None = None,
) -> Iterator[tuple[Remark, ...] | FunctionAnalysis]:
    """`analyze_file` as it goes: the file's remarks first, then each function's analysis as soon
    as it is done (the front end's worker reads the next function meanwhile), so that a file of
    thousands of functions shows its first results within seconds."""
    errors: tuple[Remark, ...] = ()
    for item in iter_frontend(path, text, parse_options):
        if isinstance(item, FileRemarks):
            errors = item.remarks
            yield errors
            continue
        fn = item.function if isinstance(item, UnreadFunction) else item
        if only is not None and fn.name != only:
            continue
        if isinstance(item, UnreadFunction):
            yield FunctionAnalysis(fn, (), (item.remark,))
        else:
            yield analyze_function(fn, options or AnalysisOptions(), errors)


def analyze_function(
    fn: ir.Function,
    options: AnalysisOptions,
    file_errors: tuple[Remark, ...] = (),
    previous: FunctionAnalysis | None = None,
) -> FunctionAnalysis:
    """`fn`'s analysis. `previous`, the last analysis of the function before an edit (the editor's),
    lends its isl context to each loop nest's model, and its dependences where the nest's model did
    not change (`reuse_dependences`): the result is the same as without it."""
    broken = [e for e in file_errors if e.name == "SyntaxError" and fn.range.contains(e.range)]
    if broken:
        note = missed(
            "frontend",
            "FunctionHasErrors",
            f"`{fn.name}` was not analysed: it has {len(broken)} syntax error(s); fix them first",
            fn.name_range,
            fn.name,
        )
        return FunctionAnalysis(fn, (), (note,))
    trace = Trace()
    trace.run(Frontend(), fn)
    if fn.is_cuda_kernel:  # a kernel has no loop nest of its own: its grid is the nest
        # loaded here, for CUDA only: the editor's start-up imports this module (issue 29.3)
        from core_compiler.cuda.check import CheckKernel

        _, found = trace.run(CheckKernel(options.max_isl_operations), fn)
        found.sort(key=lambda r: (r.range.line, r.range.col, r.name))
        return FunctionAnalysis(fn, (), tuple(found), trace.freeze())
    detection, remarks = trace.run(DetectScops(), fn)
    scops: list[ScopAnalysis] = []
    earlier = _earlier_scops(fn, previous)
    for index, region in enumerate(detection.regions):
        remarks += assumption_remarks(region, fn.name)
        result = _model_and_deps(RegionUnit(fn, index, region, earlier.get(index)), options, trace)
        if isinstance(result, Remark):
            remarks.append(result)
            continue
        scops.append(result)
        remarks += scop_remarks(result)
    remarks.sort(key=lambda r: (r.range.line, r.range.col, r.name))
    return FunctionAnalysis(fn, tuple(scops), tuple(remarks), trace.freeze())


def _earlier_scops(fn: ir.Function, previous: FunctionAnalysis | None) -> dict[int, ScopAnalysis]:
    if previous is None or previous.function.name != fn.name:
        return {}
    return {sa.scop.index: sa for sa in previous.scops}


# The analysis passes; `core_compiler.pipeline` registers them and declares their order.


@dataclass(frozen=True)
class Frontend:
    name: ClassVar[str] = "frontend"

    def run(self, fn: ir.Function) -> tuple[ir.Function, list[Remark]]:
        return fn, []

    def render(self, fn: ir.Function) -> str:
        return render.function_ir(fn)


@dataclass(frozen=True)
class DetectScops:
    """Maximal modeled regions, a remark per problem, and the front end's notes on what it
    assumed (a counting `while` read as a `for`, ...)."""

    name: ClassVar[str] = "scop-detect"

    def run(self, fn: ir.Function) -> tuple[Detection, list[Remark]]:
        detection = detect_scops(fn)
        notes = [analysis("frontend", n.name, n.message, n.range, fn.name) for n in fn.notes]
        bad = [missed("frontend", "MalformedDirective", p.message, p.range, fn.name) for p in fn.bad_directives]
        unused = unplaced(fn, [r.loops for r in detection.regions]) if fn.directives else []
        return detection, [*detection.remarks, *notes, *bad, *unused]

    def render(self, detection: Detection) -> str:
        return render.regions(detection.regions)


@dataclass(frozen=True)
class RegionUnit:
    function: ir.Function
    index: int
    region: RegionInfo
    # the same nest's analysis before an edit: its isl context is reused (so that the models
    # compare with `is_equal`), and its dependences where the model is the same
    previous: ScopAnalysis | None = None


@dataclass(frozen=True)
class BuildModel:
    """The region's isl model, in a context of its own (the previous analysis' of the same nest, in
    the editor) whose work is bounded (isl's compute-out)."""

    name: ClassVar[str] = "polyhedral-model"
    max_isl_operations: int = AnalysisOptions.max_isl_operations

    def run(self, r: RegionUnit) -> tuple[Scop, list[Remark]]:
        ctx = isl.Context() if r.previous is None else r.previous.scop.ctx
        ctx.set_max_operations(self.max_isl_operations)
        ctx.reset_operations()
        return build_model(r.function.name, r.index, r.region, ctx), []

    def render(self, scop: Scop) -> str:
        return render.scop_model(scop)


@dataclass(frozen=True)
class ComputeDependences:
    """The dependences; those of `previous` (the same nest before an edit) where the model is the
    same (`reuse_dependences`), computed otherwise."""

    name: ClassVar[str] = "dependences"
    previous: Dependences | None = field(default=None, repr=False, compare=False)

    def run(self, scop: Scop) -> tuple[Dependences, list[Remark]]:
        reused = None if self.previous is None else reuse_dependences(scop, self.previous)
        return (compute_dependences(scop) if reused is None else reused), []

    def render(self, deps: Dependences) -> str:
        return render.dependences(deps)


def _model_and_deps(r: RegionUnit, options: AnalysisOptions, trace: Trace) -> ScopAnalysis | Remark:
    """The nest's model and dependences. In the context of `r.previous` first, where there is one:
    the editor's request thread may use that context meanwhile (a hover's GPU mapping sets its
    budget, isl counts both threads' work against it), so where that attempt runs out of budget
    it is made again in a context of its own, as without `previous`."""
    if r.previous is None:
        return _model_and_deps_in(r, options, trace)
    attempt = Trace()
    result = _model_and_deps_in(r, options, attempt)
    if isinstance(result, Remark) and result.name == "AnalysisBudgetExceeded":
        return _model_and_deps_in(replace(r, previous=None), options, trace)
    for record in attempt.records:
        trace.add(record)
    return result


def _model_and_deps_in(r: RegionUnit, options: AnalysisOptions, trace: Trace) -> ScopAnalysis | Remark:
    fn = r.function
    try:
        scop, _ = trace.run(BuildModel(options.max_isl_operations), r, r.index)
        wraps = modulo_out_of_range(scop)  # isl work too: inside the budget's try
        if wraps is not None:
            return _modulo_out_of_range(fn, *wraps)
        negative = negative_division(scop)
        if negative is not None:
            return _negative_division(fn, *negative)
        previous = None if r.previous is None else r.previous.deps
        deps, _ = trace.run(ComputeDependences(previous), scop, r.index)
    except isl.Error as e:
        return isl_error_remark(e, r, options)
    return ScopAnalysis(scop, deps)


def isl_error_remark(e: isl.Error, r: RegionUnit, options: AnalysisOptions) -> Remark:
    """The remark for an error of isl's while modeling `r`: its compute-out (the operation budget:
    ``AnalysisBudgetExceeded``), a name isl cannot read (``NonAsciiName``: isl's parser takes
    ASCII identifiers only), or any other failure (``PolyhedralLibraryError``). islpy keeps no
    error code, so the message says which: ``maximal number of operations exceeded``."""
    fn, detail = r.function.name, str(e)
    if "maximal number of operations exceeded" in detail:
        return missed(
            "polyhedral-model",
            "AnalysisBudgetExceeded",
            "hexplore gave up modeling this loop nest: the polyhedral library exceeded its budget "
            f"of {options.max_isl_operations:,} operations (too many parameters, too deep a nest "
            "or too large coefficients)",
            r.region.range,
            fn,
            detail=detail,
        )
    odd = sorted({n for n in re.findall(r"[^\W\d]\w*", r.function.text) if not n.isascii()})
    if odd:
        names = ", ".join(f"`{n}`" for n in odd)
        return missed(
            "polyhedral-model",
            "NonAsciiName",
            f"this loop nest is not modeled: hexplore's polyhedral library reads only ASCII names, "
            f"and {names} {'is' if len(odd) == 1 else 'are'} not; rename "
            f"{'it' if len(odd) == 1 else 'them'} with letters a-z, A-Z, digits and `_`",
            r.region.range,
            fn,
            names=odd,
            detail=detail,
        )
    return missed(
        "polyhedral-model",
        "PolyhedralLibraryError",
        "this loop nest is not modeled: the polyhedral library (isl) failed on it "
        f"({detail.removeprefix('call to ')}); this is hexplore's limitation, not an error in your "
        "code — please report it",
        r.region.range,
        fn,
        detail=detail,
    )


def _modulo_out_of_range(fn: ir.Function, subscript: str, rng: SourceRange) -> Remark:
    return missed(
        "polyhedral-model",
        "ModuloOutOfRange",
        f"in `{subscript}`, hexplore models `x % n` by a size only where `x` stays between 0 and "
        f"{WRAPS}n - 1 (as in `(i + 1) % n`), which it cannot show here, so this loop nest is not "
        "modeled",
        rng,
        fn.name,
    )


def _negative_division(fn: ir.Function, what: str, rng: SourceRange) -> Remark:
    return missed(
        "polyhedral-model",
        "NegativeDivision",
        f"{what} divides a value that can be negative here: C rounds such a quotient toward zero "
        "(-3 / 2 is -1) where hexplore's model rounds down (-2), so this loop nest is not modeled",
        rng,
        fn.name,
    )


def _privatize_hint(scop: Scop, loop: str, arrays: set[str]) -> str:
    """When only local variables declared outside `loop` carry its dependences: how to give each
    iteration its own (``double t[8];`` or ``double s;`` moved inside the loop)."""
    kinds = {a.name: a.kind for a in scop.arrays}
    if any(kinds.get(a) not in ("local-array", "scalar") for a in arrays):
        return ""
    names = ", ".join(f"`{a}`" for a in sorted(arrays))
    return f"; if every iteration sets {names} before using it, declare it inside loop `{loop}` to give each its own"


def scop_remarks(sa: ScopAnalysis) -> list[Remark]:
    scop, deps = sa.scop, sa.deps
    fn = scop.function
    params = ", ".join(f"`{p}`" for p in scop.params) or "none"
    out = [
        analysis(
            "scop-detect",
            "ScopDetected",
            f"modeled loop nest: {len(scop.statements)} statement(s), {len(scop.loops)} loop(s); "
            f"sizes (parameters): {params}",
            scop.region.code_range,
            fn,
            statements=len(scop.statements),
            loops=len(scop.loops),
            parameters=list(scop.params),
        )
    ]
    for lp in deps.loops:
        loop = lp.loop
        if lp.parallel:
            out.append(
                analysis(
                    "dependences",
                    "ParallelLoop",
                    f"loop `{loop.var}` is parallel: no iteration depends on another",
                    loop.header_range,
                    fn,
                    loop=loop.var,
                )
            )
            continue
        first = lp.carried[0]
        src, snk = scop.statement(first.source), scop.statement(first.sink)
        more = f" and {len(lp.carried) - 1} more" if len(lp.carried) > 1 else ""
        if lp.reduction:
            msg = (
                f"loop `{loop.var}` carries only the reduction into `{first.array}`: it can run "
                "in parallel as a reduction"
            )
            name = "ReductionLoop"
        else:
            msg = f"loop `{loop.var}` is not parallel: it carries the {first.describe()}{more}"
            msg += _privatize_hint(scop, loop.var, {d.array for d in lp.carried})
            name = "LoopCarriedDependence"
        out.append(
            analysis(
                "dependences",
                name,
                msg,
                loop.header_range,
                fn,
                loop=loop.var,
                dependence=first.kind,
                array=first.array,
                source=first.source,
                sink=first.sink,
                distance=list(first.distance),
                source_range=src.range.to_json(),
                sink_range=snk.range.to_json(),
            )
        )
    for red in deps.reductions:
        stmt = scop.statement(red.statement)
        loops = ", ".join(f"`{lp.var}`" for lp in scop.loops if lp.id in red.loops)
        out.append(
            analysis(
                "dependences",
                "Reduction",
                f"`{stmt.info.assignment.target}` is a `{red.op}` reduction over loop(s) {loops}",
                stmt.range,
                fn,
                statement=red.statement,
                op=red.op,
                array=red.array,
            )
        )
    return out
