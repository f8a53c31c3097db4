"""Test helpers: locate text in a source and analyse snippets."""

from __future__ import annotations

from core_compiler.analysis import FileAnalysis, ScopAnalysis, analyze_file
from core_compiler.remarks import Remark
from core_compiler.source import SourceRange


def range_of(src: str, needle: str, path: str = "t.c", nth: int = 0) -> SourceRange:
    """The SourceRange of the `nth` occurrence of `needle` (which must not span lines)."""
    start = -1
    for _ in range(nth + 1):
        start = src.index(needle, start + 1)
    line = src.count("\n", 0, start) + 1
    col = start - (src.rfind("\n", 0, start) + 1) + 1
    return SourceRange(path, line, col, line, col + len(needle))


def analyze(src: str, path: str = "t.c") -> FileAnalysis:
    return analyze_file(path, src)


def remarks(src: str, path: str = "t.c") -> list[Remark]:
    return analyze(src, path).all_remarks()


def named(rs: list[Remark], name: str) -> list[Remark]:
    return [r for r in rs if r.name == name]


def only_scop(path: str, function: str) -> ScopAnalysis:
    """The one modeled loop nest of `function` in the file at `path`."""
    (sa,) = analyze_file(path, only=function).functions[0].scops
    return sa
