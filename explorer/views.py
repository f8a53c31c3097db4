"""A function's back-end views as text: what the editor's code-lens commands show when the server
executes them (``workspace/executeCommand``; `lsp/commands.py`), so that a client with no code of
its own for them (Neovim) still sees the generated code, the passes or the schedule tree.

Example::

    view = function_view(ws, "file:///src/gemm.c", "gemm", "cuda")
    view.title     # "CUDA of gemm"
    view.language  # "cuda-cpp"
    view.text      # the kernels and host code of each loop nest, titled when there are several

Views are computed on the caller's thread from the workspace's back end of the function (the
editor pipeline, `Workspace.backend`), which reads the function's isl contexts: the LSP calls this
on its request thread.
"""

from __future__ import annotations

from dataclasses import dataclass

from explorer import api  # its names load when a view is made (issue 29)
from explorer.errors import UnknownPass
from explorer.schedule_tree import ScheduleNode, schedule_tree
from explorer.workspace import Workspace

# view -> (title, the back-end pass whose artifacts it joins; "" where it is no pass's)
VIEWS = {
    "scheduleTree": ("schedule tree", ""),
    "passes": ("passes", ""),
    "cuda": ("CUDA", "codegen-cuda"),
    "opencl": ("OpenCL", "codegen-opencl"),
    "c": ("C", ""),
    "ptx": ("PTX", "ptx"),
    "llvm": ("LLVM IR", "llvm-ir"),
}


@dataclass(frozen=True)
class View:
    title: str  # "CUDA of gemm"
    language: str  # an editor language id: cuda-cpp, opencl, c, llvm, ptx, plaintext
    text: str


def function_view(ws: Workspace, uri: str, function: str, view: str) -> View:
    """The view `view` (a key of `VIEWS`) of `function`; UnknownDocument / UnknownFunction /
    UnknownPass (a `UsageError`) where there is no such document, function or view."""
    if view not in VIEWS:
        raise UnknownPass(f"no view `{view}` (views: {', '.join(VIEWS)})")
    what, pass_name = VIEWS[view]
    title = f"{what} of {function}"
    fr = ws.function(uri, function)
    if view == "passes":
        return View(title, "plaintext", passes_text(ws.trace(uri, function)))
    if not fr.scops:
        return View(title, "plaintext", f"`{function}` has no loop nest hexplore models: nothing was generated\n")
    if view == "scheduleTree":
        tree = schedule_tree(fr.analysis, ws.backend(uri, function).units)
        return View(title, "plaintext", tree_text(tree))
    if view == "c":
        doc = ws.document(uri)
        text, _ = api.function_c(doc.path, doc.text, fr.analysis)
        return View(title, "c", text)
    records = ws.backend(uri, function).records
    chosen = [p for p in records if p.name == pass_name]
    if not chosen:
        errors = "".join(p.text for p in records if p.name == "backend-error")
        return View(title, "plaintext", errors or "no code was generated\n")
    if len(chosen) == 1:
        return View(title, api.artifact_language(pass_name), chosen[0].text)
    text = "\n".join(f"// ===== {p.label}\n{p.text}" for p in chosen)
    return View(title, api.artifact_language(pass_name), text)


def passes_text(trace: tuple[api.PassRecord, ...]) -> str:
    """Every pass's artifact under a title line with its time and remark count."""
    parts = []
    for p in trace:
        head = f"===== {p.label} ({p.elapsed_s * 1000:.1f} ms, {len(p.remarks)} remark(s))"
        parts.append(f"{head}\n{p.text.rstrip()}\n")
    return "\n".join(parts)


def tree_text(node: ScheduleNode, depth: int = 0) -> str:
    """The tree as indented lines: ``band i (parallel)``, ``leaf S1: C[i][j] += ...``."""
    line = f"{'  ' * depth}{node.kind}" + (f" {node.detail}" if node.detail else "")
    return "".join([line + "\n", *(tree_text(c, depth + 1) for c in node.children)])
