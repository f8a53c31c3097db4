"""The back-end views of one function, computed together off the UI thread.

`compute_backend_views` runs `core_compiler.backend.backend_trace` (schedule, GPU mapping, CUDA,
OpenCL, LLVM IR, PTX per SCoP), the generated C of the function (`compile_file(..., "c")`), the
schedule tree with its kernels, and the source-to-generated-code line map of each target. No
textual here: the app calls it from a worker thread and shows the result.

isl contexts are not thread-safe, so every computation on a session's SCoPs holds `ISL_LOCK`.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from core_compiler.analysis import FileAnalysis, FunctionAnalysis, ScopAnalysis
from core_compiler.backend import BackendOptions, backend_trace
from core_compiler.passes import PassRecord
from tui.codemap import StatementSpan, generated_lines, statement_spans

ISL_LOCK = threading.Lock()


@dataclass(frozen=True)
class Target:
    key: str  # tab id suffix
    title: str
    pass_prefix: str  # the back-end pass whose artifact this is ("" for C)
    lexer: str  # pygments lexer name
    mapped: bool  # whether statement text survives into this code


TARGETS = (
    Target("cuda", "CUDA", "codegen-cuda", "cuda", True),
    Target("opencl", "OpenCL", "codegen-opencl", "c", True),
    Target("c", "C", "", "c", True),
    Target("llvm", "LLVM IR", "llvm-ir", "llvm", False),
    Target("ptx", "PTX", "ptx", "ptx", False),
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
    trees: tuple[dict[str, Any], ...]  # one schedule tree (tree_json) per SCoP
    kernels: tuple[KernelInfo, ...]
    code: Mapping[str, CodeView]
    spans: tuple[StatementSpan, ...]
    problems: tuple[str, ...] = ()  # views that failed, for the schedule pane


def compute_backend_views(path: str, text: str, fa: FunctionAnalysis) -> BackendViews:
    with ISL_LOCK:
        passes = backend_trace(fa, BackendOptions())
        spans = statement_spans(fa, text)
        trees, kernels, problems = _trees_and_kernels(fa)
        code = {t.key: _code_view(t, passes, fa, spans) for t in TARGETS if t.key != "c"}
        code["c"] = _c_view(path, text, fa, spans)
    return BackendViews(passes, tuple(trees), tuple(kernels), code, spans, tuple(problems))


def _code_view(
    target: Target, passes: tuple[PassRecord, ...], fa: FunctionAnalysis, spans: tuple[StatementSpan, ...]
) -> CodeView:
    if not fa.scops:
        return CodeView(target, f"`{fa.function.name}` has no SCoP: nothing was generated", is_code=False)
    chosen = [p for p in passes if p.name.startswith(target.pass_prefix + "[")]
    errors = [p.text for p in passes if p.name.startswith("backend-error")]
    if not chosen:
        return CodeView(target, "".join(errors) or "no code was generated", is_code=False)
    if len(chosen) == 1:
        body = chosen[0].text
    else:
        body = "\n".join(f"// ===== {p.name}\n{p.text}" for p in chosen)
    return CodeView(target, body, generated_lines(body, spans) if target.mapped else {})


def _c_view(path: str, text: str, fa: FunctionAnalysis, spans: tuple[StatementSpan, ...]) -> CodeView:
    from core_compiler.compile import compile_file

    target = TARGETS[2]
    if not fa.scops:
        return CodeView(target, f"`{fa.function.name}` has no SCoP: nothing was generated", is_code=False)
    try:
        files = compile_file(FileAnalysis(path, (fa,), ()), "c", text=text).files
    except Exception as e:  # a codegen bug is shown in the tab, not raised into the UI
        return CodeView(target, f"C generation failed: {type(e).__name__}: {e}", is_code=False)
    body = next(iter(files.values()))
    return CodeView(target, body, generated_lines(body, spans))


def _trees_and_kernels(fa: FunctionAnalysis) -> tuple[list[dict[str, Any]], list[KernelInfo], list[str]]:
    trees: list[dict[str, Any]] = []
    kernels: list[KernelInfo] = []
    problems: list[str] = []
    for sa in fa.scops:
        try:
            tree, found = _scop_tree(sa)
        except Exception as e:  # same: say it where the tree would be
            problems.append(f"SCoP {sa.scop.index}: {type(e).__name__}: {e}")
            continue
        trees.append(tree)
        kernels.extend(found)
    return trees, kernels, problems


def _scop_tree(sa: ScopAnalysis) -> tuple[dict[str, Any], list[KernelInfo]]:
    """The GPU schedule (as the `schedule[k]` pass computes it) and the kernels cut from it."""
    from core_compiler.gpu import map_to_gpu
    from core_compiler.schedule import compute_gpu_schedule, tree_json

    options = BackendOptions()
    schedule = compute_gpu_schedule(sa.scop, sa.deps, options.schedule)
    gpu = map_to_gpu(sa.scop, schedule, options.mapping, sa.deps)
    kernels = [_kernel_info(sa.scop.index, k) for k in gpu.kernels]
    return tree_json(schedule.get_root()), kernels


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
