"""The one door from the faces (`tui/`, `lsp/`) into the compiler: the plain data they show and
the operations they call. A face imports `explorer` modules only, never `core_compiler`
(`tests/test_layering.py` checks it); what it needs of the compiler is named here.

Data (frozen dataclasses with source ranges; positions are 1-based lines and byte columns):

- `Remark`, `RemarkKind`, `SourceRange`: what every decision is said as, and where.
- `FileAnalysis`, `FunctionAnalysis`: one file's analysis, per function (`analyze_file`).
- `ParseOptions`: include directories and macros (`-I`, `-D`).
- `PassRecord`: one pass of a trace (name, SCoP, options, artifact text, remarks, time).
- `SourceMap`, `MappedLine`: which lines of generated code execute which statement (the printers'
  own account; `join_mapped` concatenates texts with their maps).
- `Backend`, `ScopUnit`: the back-end pipeline's records and, per SCoP, what its passes built.
- `UsageError` (the request was wrong), `HexploreError` (the root of the compiler's errors).

Operations:

- `analyze_file(path, text, options, only=None)`: the analysis pipeline; user input never raises.
- `render_report(fa, fmt)` in `FORMATS` (text, json, yaml, sarif); `remark_text(r)`, one line.
- `backend(fn, options=None, source=None, on_pass=None)`: the editor pipeline of a function
  (schedule, GPU mapping, CUDA, OpenCL, LLVM IR, PTX per SCoP; `ad` when `source` is given);
  `tree_json(node)`: a schedule tree as plain data; `artifact_language(pass_name)`;
  `artifact_source_map(pass_name, unit)`: a code pass's artifact and its `SourceMap`.
- `compile_file(fa, target, ...)` for `TARGETS` (files and their source maps); `function_c(path,
  text, fn)`: the tiled C of one function's file and its source map.
- `interchange(scop, deps, outer_id, text)`: may a loop swap with the one perfectly nested in it
  (`Interchange`: legal, or why not in C terms); `header_edits`, the rewrite that swaps them;
  `source_text(text, range)`.
- `run_function(path, function, device, params, ...)`: the original against hexplore's code on
  one of `DEVICES`, in a worker process with a time limit (`RunReport`; `NOT_CHECKABLE` begins
  the message of a run that could not be checked); `cuda_unavailable()`; `default_sizes(...)`.

Files of the user's own (`core_compiler/user_dirs.py`): `cache_root()`, `private_dir(path)` (made
0700 and checked), `check_private(path)`; `UnsafeDirectory` when a directory others could write is
refused (SECURITY.md).

The `hexplore` subcommands' drivers are in `explorer/commands.py`.

The names load on first use (PEP 562 `__getattr__`): a face that shows analyses never loads the
run-time modules (numpy, pyopencl, llvmlite) or the code generators until it runs or generates
something (issue 29: the editor's first diagnostics wait for no import they do not need).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core_compiler.analysis import FileAnalysis, FunctionAnalysis, analyze_file
    from core_compiler.choices import (
        DEFAULT_SIZE,
        DEVICES,
        TARGETS,
    )
    from core_compiler.compile import compile_file
    from core_compiler.errors import HexploreError, UsageError
    from core_compiler.frontend import ParseOptions
    from core_compiler.passes import PassRecord
    from core_compiler.pipeline import (
        Backend,
        ScopUnit,
        artifact_language,
        artifact_source_map,
        backend,
    )
    from core_compiler.remarks import Remark, RemarkKind
    from core_compiler.report import FORMATS, remark_text, render_report
    from core_compiler.runtime.footprint import default_sizes
    from core_compiler.runtime.run import (
        NOT_CHECKABLE,
        cuda_unavailable,
        run_function,
    )
    from core_compiler.source import SourceRange
    from core_compiler.source_map import MappedLine, SourceMap, join_mapped
    from core_compiler.transform.gpu_cost import seconds_text
    from core_compiler.transform.interchange import (
        Interchange,
        header_edits,
        interchange,
        source_text,
    )
    from core_compiler.transform.schedule import tree_json
    from core_compiler.user_dirs import UnsafeDirectory, cache_root, check_private, private_dir

# Each name and the module it comes from.
_HOMES = {
    "core_compiler.analysis": ("FileAnalysis", "FunctionAnalysis", "analyze_file"),
    "core_compiler.choices": ("DEFAULT_MAX_SHARED_BYTES", "DEFAULT_SIZE", "DEVICES", "REPORT_FORMATS", "TARGETS", "TUNE_TARGETS"),
    "core_compiler.compile": ("compile_file",),
    "core_compiler.errors": ("HexploreError", "UsageError"),
    "core_compiler.frontend": ("ParseOptions",),
    "core_compiler.passes": ("PassRecord",),
    "core_compiler.pipeline": ("Backend", "ScopUnit", "artifact_language", "artifact_source_map", "backend"),
    "core_compiler.remarks": ("Remark", "RemarkKind"),
    "core_compiler.report": ("FORMATS", "remark_text", "render_report"),
    "core_compiler.runtime.footprint": ("default_sizes",),
    "core_compiler.runtime.run": ("NOT_CHECKABLE", "cuda_unavailable", "run_function"),
    "core_compiler.source": ("SourceRange",),
    "core_compiler.source_map": ("MappedLine", "SourceMap", "join_mapped"),
    "core_compiler.transform.interchange": ("Interchange", "header_edits", "interchange", "source_text"),
    "core_compiler.transform.gpu_cost": ("seconds_text",),
    "core_compiler.transform.schedule": ("tree_json",),
    "core_compiler.user_dirs": ("UnsafeDirectory", "cache_root", "check_private", "private_dir"),
}
_HOME = {name: module for module, names in _HOMES.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def function_c(path: str, text: str, fn: FunctionAnalysis) -> tuple[str, SourceMap]:
    """`hexplore compile --target c` of the file `text` with only `fn`'s loop nests replaced, and
    which of its lines execute which statement."""
    from core_compiler.analysis import FileAnalysis
    from core_compiler.compile import compile_file
    result = compile_file(FileAnalysis(path, (fn,), ()), "c", text=text)
    ((name, source),) = result.files.items()
    return source, result.source_maps[name]


__all__ = [
    "DEFAULT_SIZE",
    "DEVICES",
    "FORMATS",
    "NOT_CHECKABLE",
    "TARGETS",
    "Backend",
    "FileAnalysis",
    "FunctionAnalysis",
    "HexploreError",
    "Interchange",
    "MappedLine",
    "ParseOptions",
    "PassRecord",
    "Remark",
    "RemarkKind",
    "ScopUnit",
    "SourceMap",
    "SourceRange",
    "UnsafeDirectory",
    "UsageError",
    "analyze_file",
    "artifact_language",
    "artifact_source_map",
    "backend",
    "cache_root",
    "check_private",
    "compile_file",
    "cuda_unavailable",
    "default_sizes",
    "function_c",
    "header_edits",
    "interchange",
    "join_mapped",
    "private_dir",
    "remark_text",
    "render_report",
    "run_function",
    "seconds_text",
    "source_text",
    "tree_json",
]
