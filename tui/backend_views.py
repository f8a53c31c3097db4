"""The back-end views of one function, computed together off the UI thread.

`compute_backend_views` runs `explorer.api.backend` (schedule, GPU mapping, CUDA,
OpenCL, LLVM IR, PTX per SCoP), the generated C of the function (`compile --target c`), the
schedule tree with its kernels, and the source-to-generated-code line map of each target. No
textual here: the app calls it from a worker thread and shows the result.

isl contexts are not thread-safe, so every computation on a session's SCoPs holds `ISL_LOCK`.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from explorer.api import (
    Backend,
    FunctionAnalysis,
    PassRecord,
    ScopUnit,
    artifact_source_map,
    backend,
    join_mapped,
)
from explorer.configuration import CodeOptions, CompiledFunction, compile_function
from explorer.schedule_tree import ScheduleNode, schedule_tree
from tui.codemap import StatementSpan, generated_lines, statement_spans

ISL_LOCK = threading.Lock()
DEFAULT_OPTIONS = CodeOptions()


@dataclass(frozen=True)
class Target:
    key: str  # tab id suffix
    title: str
    pass_name: str  # the back-end pass whose artifact this is ("" for C)
    lexer: str  # pygments lexer name


TARGETS = (
    Target("cuda", "CUDA", "codegen-cuda", "cuda"),
    Target("opencl", "OpenCL", "codegen-opencl", "c"),
    Target("c", "C", "", "c"),
    Target("llvm", "LLVM IR", "llvm-ir", "llvm"),
    Target("ptx", "PTX", "ptx", "ptx"),
)


@dataclass(frozen=True)
class CodeView:
    target: Target
    text: str
    lines: Mapping[str, tuple[int, ...]] = field(default_factory=dict)  # statement -> code lines
    is_code: bool = True  # False: `text` says why there is no code


@dataclass(frozen=True)
class KernelInfo:
    scop: int
    label: str
    details: tuple[str, ...]


@dataclass(frozen=True)
class BackendViews:
    passes: tuple[PassRecord, ...]
    trees: tuple[ScheduleNode, ...]  # the scheduler's tree of each SCoP (`explorer.schedule_tree`, as the editor's)
    kernels: tuple[KernelInfo, ...]
    code: Mapping[str, CodeView]
    spans: tuple[StatementSpan, ...]
    problems: tuple[str, ...] = ()  # views that failed, for the schedule pane
    options: CodeOptions = DEFAULT_OPTIONS  # the configuration they were generated with


_VIEWS: OrderedDict[tuple[Hashable, ...], BackendViews] = OrderedDict()
VIEWS_KEPT = 16  # the last configurations' views, so that going back to one (A/B) builds nothing


def compute_backend_views(path: str, text: str, fa: FunctionAnalysis, options: CodeOptions = DEFAULT_OPTIONS,
                          parse: Hashable = None) -> BackendViews:  # fmt: skip
    """Every view of `fa` under `options` (tile and block sizes, shared memory; the target and
    always-offload only change what `compile` generates, `compiled_code`). They depend on the
    file's text, how it was parsed (`parse`), the function and those options only, so the last
    `VIEWS_KEPT` are kept and shared."""
    key = (path, text, parse, fa.function.name, options.tiles, options.blocks, options.shared_memory)
    with ISL_LOCK:  # the workers' threads share the kept views too
        if key not in _VIEWS:
            _VIEWS[key] = _backend_views(path, text, fa, options)
        _VIEWS.move_to_end(key)
        while len(_VIEWS) > VIEWS_KEPT:
            _VIEWS.popitem(last=False)
        return replace(_VIEWS[key], options=options)


def _backend_views(path: str, text: str, fa: FunctionAnalysis, options: CodeOptions) -> BackendViews:
    """The views, computed (the caller holds `ISL_LOCK`)."""
    result = backend(fa, options.gpu_options())
    trees, kernels, problems = _trees_and_kernels(fa, result.units)
    code = {t.key: _code_view(t, result, fa) for t in TARGETS if t.key != "c"}
    code["c"] = _c_view(path, text, fa, options)
    passes, spans = result.records, statement_spans(fa)
    return BackendViews(passes, tuple(trees), tuple(kernels), code, spans, tuple(problems), options)


def compiled_code(path: str, text: str, fa: FunctionAnalysis, options: CodeOptions) -> CompiledFunction:
    """What `hexplore compile --target T` generates for `fa` under `options`; a codegen bug is
    said in the text, not raised into the UI."""
    with ISL_LOCK:
        try:
            return compile_function(path, text, fa, options)
        except Exception as e:
            return CompiledFunction(options, "", nothing=f"compile failed: {type(e).__name__}: {e}")


def _code_view(target: Target, result: Backend, fa: FunctionAnalysis) -> CodeView:
    """The artifacts of the target's pass, one per SCoP (titled when there are several), with
    the source map each came with."""
    if not fa.scops:
        return CodeView(target, f"`{fa.function.name}` has no modeled loop nest: nothing was generated", is_code=False)
    chosen = [p for p in result.records if p.name == target.pass_name]
    errors = [p.text for p in result.records if p.name == "backend-error"]
    if not chosen:
        return CodeView(target, "".join(errors) or "no code was generated", is_code=False)
    units: dict[int | None, ScopUnit] = {u.analysis.scop.index: u for u in result.units}
    parts = [artifact_source_map(target.pass_name, units[p.scop]) for p in chosen]
    if len(parts) == 1:
        body, smap = parts[0]
    else:
        titled = [(f"// ===== {p.label}\n{text}", m.shifted(1)) for p, (text, m) in zip(chosen, parts, strict=True)]
        body, smap = join_mapped(titled, "\n")
    return CodeView(target, body, generated_lines(smap, fa))


def _c_view(path: str, text: str, fa: FunctionAnalysis, options: CodeOptions) -> CodeView:
    target = TARGETS[2]
    if not fa.scops:
        return CodeView(target, f"`{fa.function.name}` has no modeled loop nest: nothing was generated", is_code=False)
    try:
        c = compile_function(path, text, fa, replace(options, target="cpu"))
    except Exception as e:  # a codegen bug is shown in the tab, not raised into the UI
        return CodeView(target, f"C generation failed: {type(e).__name__}: {e}", is_code=False)
    return CodeView(target, c.text, generated_lines(c.source_map, fa))


def _trees_and_kernels(
    fa: FunctionAnalysis, units: tuple[ScopUnit, ...]
) -> tuple[list[ScheduleNode], list[KernelInfo], list[str]]:
    """The GPU schedule tree of each SCoP (the one `hexplore/scheduleTree` sends the editor) and
    the kernels cut from it, as the pipeline computed them; a SCoP whose passes failed before
    says so where its tree would be."""
    kernels: list[KernelInfo] = []
    problems: list[str] = []
    done: list[ScopUnit] = []
    for u in units:
        if u.schedule is None or u.gpu is None:
            problems.append(f"loop nest {u.analysis.scop.index + 1}: the schedule or the GPU mapping failed (see its pass)")
            continue
        done.append(u)
        kernels.extend(_kernel_info(u.analysis.scop.index, k) for k in u.gpu.kernels)
    indices = {u.analysis.scop.index for u in done}
    domains = schedule_tree(fa, done).children
    trees = [d for sa, d in zip(fa.scops, domains, strict=True) if sa.scop.index in indices]
    return trees, kernels, problems


def _kernel_info(scop: int, k: Any) -> KernelInfo:
    statements = ", ".join(k.statements)
    if not k.parallel:
        return KernelInfo(scop, f"{k.name}: {statements} (one thread)", ())
    details = [
        f"tiles {'x'.join(map(str, k.shape.tile))}",
        f"block {'x'.join(map(str, reversed(k.block)))} threads over {k.n_block_dims} grid dim(s)",
        *(f"{p.array}: {p.place} memory" for p in k.promotions),
        *(f"{g.array}: global memory" for g in k.global_accesses),
        *(f"{s}: atomic reduction" for s in sorted(k.atomic)),
    ]
    return KernelInfo(scop, f"{k.name}: {statements}", tuple(details))
