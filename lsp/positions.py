"""Converting between the core's positions and LSP's.

The core (libclang) counts 1-based lines and 1-based *byte* columns with an exclusive end; LSP
counts 0-based lines and 0-based columns in the negotiated encoding (UTF-16 code units unless the
client offers UTF-8 or UTF-32), also with an exclusive end. Lines are split as LSP splits them
(``\\r\\n``, ``\\n``, ``\\r``). Positions past the end of a line or of the document are clamped.
"""

from __future__ import annotations

from lsprotocol import types

from explorer.api import SourceRange
from lsp.early import lsp_position, split_lines
from lsp.early import units as _units


class LineIndex:
    def __init__(self, text: str, encoding: str = "utf-16") -> None:
        self.lines = split_lines(text)
        self.encoding = str(encoding)

    def position(self, line: int, col: int) -> types.Position:
        """The LSP position of the core's (line, byte column)."""
        return types.Position(*lsp_position(self.lines, self.encoding, line, col))

    def range(self, r: SourceRange) -> types.Range:
        start, end = self.position(r.line, r.col), self.position(r.end_line, r.end_col)
        if (end.line, end.character) < (start.line, start.character):  # e.g. an end of 0:0
            end = self.position(r.line, r.col + 1)
        return types.Range(start, end)

    def core_position(self, pos: types.Position) -> tuple[int, int]:
        """The core's (line, byte column) of an LSP position."""
        if pos.line >= len(self.lines):
            return (len(self.lines), len(self.lines[-1].encode("utf-8")) + 1)
        text = self.lines[pos.line]
        if text.isascii() or self.encoding == "utf-8":
            return (pos.line + 1, pos.character + 1)
        chars = 0
        units = 0
        while chars < len(text) and units < pos.character:
            units += _units(text[chars], self.encoding)
            chars += 1
        return (pos.line + 1, len(text[:chars].encode("utf-8")) + 1)
