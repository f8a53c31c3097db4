"""Source maps: which lines of generated code execute which SCoP statement.

The printers say it themselves, so no later stage guesses from the text's shape. A printer tags
the line of a statement instance with `tag` (an invisible marker naming the SCoP and statement);
the lines are then indented, concatenated and spliced as plain text, and the last step, `untag`,
removes every marker and records where each stood. The line numbers are those of the final text,
whatever happened to it before, and the text is byte for byte what it would be without tags.

LLVM IR and PTX carry the same information as debug locations (`llvm/debug_info.py`): the
instructions of a statement instance point at the statement's line and column, which
`ir_source_map` and `ptx_source_map` read back through the table of locations the lowering made.

*Architecture Invariant*: no generated text leaves `core_compiler.codegen` with a marker in it:
every printer entry point (`generate_opencl`, `generate_cuda`, `generate_c`) untags what it returns.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core_compiler.source import SourceRange

if TYPE_CHECKING:
    from core_compiler.scop.model import Scop

_MARK = "\x1f"  # ASCII unit separator: never in generated code
_SEP = "\x1e"  # record separator, between the SCoP's and the statement's names
_TAG = re.compile(f"{_MARK}([^{_MARK}{_SEP}\n]*){_SEP}([^{_MARK}{_SEP}\n]*){_MARK}")


@dataclass(frozen=True, order=True)
class MappedLine:
    """Line `line` (1-based) of a generated text executes `statement` of `scop`."""

    line: int
    scop: str  # `Scop.name`: "kernel_gemm#scop0"
    statement: str  # "S1"
    range: SourceRange  # the statement in the source (`Scop.statement(name).range`)


@dataclass(frozen=True)
class SourceMap:
    entries: tuple[MappedLine, ...] = ()

    def lines_of(self, statement: str, scop: str | None = None) -> tuple[int, ...]:
        return tuple(e.line for e in self.entries if e.statement == statement and scop in (None, e.scop))

    def shifted(self, lines: int) -> SourceMap:
        """The map of the same text placed after `lines` other lines."""
        return SourceMap(tuple(MappedLine(e.line + lines, e.scop, e.statement, e.range) for e in self.entries))


def join_mapped(parts: Sequence[tuple[str, SourceMap]], sep: str = "") -> tuple[str, SourceMap]:
    """``sep.join(texts)`` and its map: each part's lines move down by the lines before it."""
    text, before = "", 0
    entries: list[MappedLine] = []
    for k, (part, smap) in enumerate(parts):
        if k:
            text += sep
            before += sep.count("\n")
        entries += smap.shifted(before).entries
        text += part
        before += part.count("\n")
    return text, SourceMap(tuple(entries))


# ------------------------------------------------------------------------------ tagged text


def tag(line: str, scop: str, statement: str) -> str:
    """`line` (each line of it) marked as executing `statement` of `scop`."""
    return "\n".join(f"{_MARK}{scop}{_SEP}{statement}{_MARK}{part}" for part in line.split("\n"))


def untag(text: str, ranges: Mapping[tuple[str, str], SourceRange]) -> tuple[str, SourceMap]:
    """`text` without its markers, and where they were. `ranges`: (SCoP, statement) -> its source
    range; a marker naming anything else is left in place (it was not one of ours)."""
    if _MARK not in text:
        return text, SourceMap()
    lines = text.split("\n")
    entries = []
    for number, line in enumerate(lines, start=1):
        if _MARK not in line:
            continue
        for m in _TAG.finditer(line):
            key = (m.group(1), m.group(2))
            if key in ranges:
                entries.append(MappedLine(number, key[0], key[1], ranges[key]))
        lines[number - 1] = _TAG.sub(lambda m: "" if (m.group(1), m.group(2)) in ranges else m.group(0), line)
    return "\n".join(lines), SourceMap(tuple(entries))


def statement_ranges(scops: Iterable[Scop]) -> dict[tuple[str, str], SourceRange]:
    """(SCoP name, statement name) -> the statement's range, for `untag`."""
    return {(s.name, st.name): st.range for s in scops for st in s.statements}


# ------------------------------------------------------------------------------ LLVM IR and PTX


@dataclass(frozen=True)
class StatementLocation:
    """A debug location the LLVM lowering attached to the instructions of a statement."""

    ref: str  # the DILocation's metadata reference in the IR text: "!12"
    scop: str
    statement: str
    range: SourceRange  # the location is its first line and column


_DBG = re.compile(r"!dbg (![0-9]+)\b")


def ir_source_map(text: str, locations: Iterable[StatementLocation]) -> SourceMap:
    """The lines of LLVM IR `text` whose instruction carries a statement's location."""
    by_ref = {loc.ref: loc for loc in locations}
    entries = []
    for number, line in enumerate(text.split("\n"), start=1):
        m = _DBG.search(line)
        loc = by_ref.get(m.group(1)) if m else None
        if loc is not None:
            entries.append(MappedLine(number, loc.scop, loc.statement, loc.range))
    return SourceMap(tuple(entries))


_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"')
_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)")


def ptx_source_map(text: str, locations: Iterable[StatementLocation]) -> SourceMap:
    """The instruction lines of PTX `text` under a ``.loc`` of a statement's location, up to the
    next ``.loc``, label or brace (LLVM emits a line-0 ``.loc`` where a block starts without one).
    The ``.file`` names the file as the SCoP's range does (`llvm/debug_info.py` makes it so)."""
    by_place = {(loc.range.file, loc.range.line, loc.range.col): loc for loc in locations}
    lines = text.split("\n")
    files = {m.group(1): m.group(2) for m in map(_FILE.match, lines) if m}
    entries, current = [], None
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        loc = _LOC.match(line)
        if loc:
            place = (files.get(loc.group(1), ""), int(loc.group(2)), int(loc.group(3)))
            current = by_place.get(place)
        elif stripped.endswith(":") or stripped.startswith(("{", "}")):
            current = None
        elif stripped and not stripped.startswith(("//", ".")) and current is not None:
            entries.append(MappedLine(number, current.scop, current.statement, current.range))
    return SourceMap(tuple(entries))

