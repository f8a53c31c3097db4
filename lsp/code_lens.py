"""Code lenses above functions that have SCoPs: "show schedule tree", "show passes", "show CUDA"
(the `target` setting picks which generated code), "run".

Each command takes one argument ``{uri, function}``. The server executes them
(``workspace/executeCommand``, `lsp/commands.py`) unless the client implements them itself (the
VS Code extension, mapping each to the custom request of the same purpose; PROTOCOL.md).
"""

from __future__ import annotations

from lsprotocol import types

from explorer.workspace import DocumentAnalysis
from lsp.positions import LineIndex

COMMANDS = (
    ("show schedule tree", "hexplore.showScheduleTree"),
    ("show passes", "hexplore.showPasses"),
    ("run", "hexplore.run"),
)
CODE_COMMANDS = {
    "cuda": ("show CUDA", "hexplore.showCuda"),
    "opencl": ("show OpenCL", "hexplore.showOpenCL"),
    "c": ("show C", "hexplore.showC"),
    "ptx": ("show PTX", "hexplore.showPtx"),
    "llvm": ("show LLVM IR", "hexplore.showLlvmIr"),
}


def code_lenses(analysis: DocumentAnalysis, index: LineIndex, target: str = "cuda") -> list[types.CodeLens]:
    out = []
    for fr in analysis.functions:
        fn = fr.analysis.function
        if not fr.scops or fn.name_range.file != analysis.document.path:
            continue
        rng = index.range(fn.name_range)
        args = [{"uri": analysis.document.uri, "function": fn.name}]
        commands = [*COMMANDS[:2], CODE_COMMANDS.get(target, CODE_COMMANDS["cuda"]), *COMMANDS[2:]]
        out += [types.CodeLens(rng, types.Command(title=t, command=c, arguments=args)) for t, c in commands]
    return out
