"""Code lenses above functions that have SCoPs: "show schedule tree", "show passes", "run".

The commands are *client-side* (see PROTOCOL.md): each takes one argument ``{uri, function}`` and
maps to the custom request of the same purpose, so the editor decides where to show the result.
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


def code_lenses(analysis: DocumentAnalysis, index: LineIndex) -> list[types.CodeLens]:
    out = []
    for fr in analysis.functions:
        fn = fr.analysis.function
        if not fr.scops or fn.name_range.file != analysis.document.path:
            continue
        rng = index.range(fn.name_range)
        args = [{"uri": analysis.document.uri, "function": fn.name}]
        out += [types.CodeLens(rng, types.Command(title=t, command=c, arguments=args)) for t, c in COMMANDS]
    return out
