"""Core positions (1-based lines, byte columns) <-> LSP positions in each encoding."""

from __future__ import annotations

import pytest
from lsprotocol import types

from core_compiler.source import SourceRange
from lsp.positions import LineIndex

TEXT = "int a;\r\n/* é */ x = 1;\n/* 😀 */ y = 2;\nz"


@pytest.mark.parametrize(
    "encoding,line,col,expected",
    [
        ("utf-16", 1, 5, (0, 4)),
        ("utf-16", 2, 10, (1, 8)),  # `é` is 2 bytes, 1 UTF-16 unit
        ("utf-16", 3, 12, (2, 9)),  # `😀` is 4 bytes, 2 UTF-16 units
        ("utf-32", 3, 12, (2, 8)),
        ("utf-8", 3, 12, (2, 11)),
        ("utf-16", 4, 9, (3, 1)),  # past the end of the line: clamped
        ("utf-16", 9, 1, (3, 1)),  # past the end of the text
        ("utf-16", 0, 0, (0, 0)),  # the core's "unknown" range
    ],
)
def test_core_to_lsp(encoding: str, line: int, col: int, expected: tuple[int, int]) -> None:
    pos = LineIndex(TEXT, encoding).position(line, col)
    assert (pos.line, pos.character) == expected


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
def test_round_trip(encoding: str) -> None:
    index = LineIndex(TEXT, encoding)
    for line, col in [(1, 1), (1, 5), (2, 10), (3, 12), (3, 13)]:
        pos = index.position(line, col)
        assert index.core_position(pos) == (line, col)


def test_an_inverted_range_is_repaired() -> None:
    rng = LineIndex(TEXT).range(SourceRange("f.c", 2, 3, 0, 0))
    assert rng == types.Range(types.Position(1, 2), types.Position(1, 3))
