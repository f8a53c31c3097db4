"""Source positions. Lines and columns are 1-based and the end column is exclusive, as in clang's
diagnostics; editors convert to their own convention at the edge (lsp/ does 0-based)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class SourceRange:
    file: str
    line: int
    col: int
    end_line: int
    end_col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"

    def contains(self, other: SourceRange) -> bool:
        return (self.line, self.col) <= (other.line, other.col) and (
            other.end_line,
            other.end_col,
        ) <= (self.end_line, self.end_col)

    def to_json(self) -> dict[str, object]:
        return {
            "file": self.file,
            "line": self.line,
            "col": self.col,
            "end_line": self.end_line,
            "end_col": self.end_col,
        }


UNKNOWN_RANGE = SourceRange("<unknown>", 0, 0, 0, 0)
