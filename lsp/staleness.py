"""Answering from an older analysis: where a position of the current text was in the text an
analysis saw, and back.

The server keeps, per document, the edits (`didChange` content changes, in LSP positions) made
since its newest finished analysis. A position maps across an edit when it lies outside the
replaced range (before it: unchanged; after it: shifted by what the edit inserted and removed);
inside, it has no counterpart and the request gets ``ContentModified``. A whole-text replacement
maps nothing. So a hover on a loop header answers from the last good analysis while the user
types elsewhere in the file, and a hover on the text being typed says it is stale.

Example::

    log = EditLog()
    log.record(2, [((3, 4), (3, 4), " ")])   # revision 2 inserted a space at line 3, char 4
    log.to_old(Position(3, 9), 1, 2)          # Position(3, 8): where it was in revision 1
    log.to_new(Position(3, 8), 1, 2)          # Position(3, 9)
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass

from lsprotocol import types

from lsp.early import units

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
MAX_EDITS = 20_000  # kept per document; older revisions then map nothing

Pos = tuple[int, int]



@dataclass(frozen=True)
class Edit:
    revision: int  # the document's revision after this edit
    start: Pos
    end: Pos  # of the replaced range, in the text before the edit
    new_end: Pos  # of the inserted text, in the text after it; None-like (-1, -1): whole text

    @property
    def whole(self) -> bool:
        return self.new_end == (-1, -1)

    def forward(self, p: Pos) -> Pos | None:
        if self.whole:
            return None
        if p < self.start or (p == self.start and self.start != self.end):
            return p
        if p < self.end:
            return None
        if p[0] == self.end[0]:
            return (self.new_end[0], self.new_end[1] + p[1] - self.end[1])
        return (p[0] + self.new_end[0] - self.end[0], p[1])

    def backward(self, p: Pos) -> Pos | None:
        if self.whole:
            return None
        if p < self.start or (p == self.start and self.start != self.new_end):
            return p
        if p < self.new_end:
            return None
        if p[0] == self.new_end[0]:
            return (self.end[0], self.end[1] + p[1] - self.new_end[1])
        return (p[0] + self.end[0] - self.new_end[0], p[1])


def inserted_end(start: Pos, text: str, encoding: str) -> Pos:
    lines = _LINE_BREAK.split(text)
    if len(lines) == 1:
        return (start[0], start[1] + units(text, encoding))
    return (start[0] + len(lines) - 1, units(lines[-1], encoding))


class EditLog:
    """The edits of one document, oldest first (see the module's docstring)."""

    def __init__(self) -> None:
        self._edits: deque[Edit] = deque()
        self._floor = 0  # revisions at or below it cannot be mapped from (their edits are gone)

    def record(self, revision: int, changes: list[tuple[Pos, Pos, str] | str], encoding: str = "utf-16") -> None:
        """One `didChange`'s content changes, applied in order; a str is a whole-text change."""
        for change in changes:
            if isinstance(change, str):
                self._edits.append(Edit(revision, (0, 0), (0, 0), (-1, -1)))
                continue
            start, end, text = change
            start, end = min(start, end), max(start, end)
            self._edits.append(Edit(revision, start, end, inserted_end(start, text, encoding)))
        while len(self._edits) > MAX_EDITS:
            self._floor = self._edits.popleft().revision

    def forget(self, revision: int) -> None:
        """Drop the edits up to `revision` (no analysis older than it will be answered from)."""
        while self._edits and self._edits[0].revision <= revision:
            self._edits.popleft()
        self._floor = max(self._floor, revision)

    def between(self, old: int, new: int) -> Mapping:
        """The way from revision `old` to `new`, kept as it is now (a later `forget` leaves it)."""
        if old == new:
            return Mapping(())
        if old < self._floor:
            return Mapping(None)
        return Mapping(tuple(e for e in self._edits if old < e.revision <= new))

    def to_old(self, p: types.Position, old: int, new: int) -> types.Position | None:
        """Position `p` of revision `new` in the text of revision `old` (None: it has none)."""
        return self.between(old, new).to_old(p)

    def to_new(self, p: types.Position, old: int, new: int) -> types.Position | None:
        """Position `p` of revision `old` in the text of revision `new` (None: it has none)."""
        return self.between(old, new).to_new(p)

    def range_to_new(self, r: types.Range, old: int, new: int) -> types.Range | None:
        return self.between(old, new).range_to_new(r)

    def __len__(self) -> int:
        return len(self._edits)


@dataclass(frozen=True)
class Mapping:
    """The edits from one revision to a later one (None: unknown, nothing maps)."""

    edits: tuple[Edit, ...] | None

    def to_old(self, p: types.Position) -> types.Position | None:
        if self.edits is None:
            return None
        pos: Pos | None = (p.line, p.character)
        for e in reversed(self.edits):
            pos = e.backward(pos) if pos is not None else None
        return types.Position(*pos) if pos is not None else None

    def to_new(self, p: types.Position) -> types.Position | None:
        if self.edits is None:
            return None
        pos: Pos | None = (p.line, p.character)
        for e in self.edits:
            pos = e.forward(pos) if pos is not None else None
        return types.Position(*pos) if pos is not None else None

    def range_to_new(self, r: types.Range) -> types.Range | None:
        start, end = self.to_new(r.start), self.to_new(r.end)
        if start is None or end is None:
            return None
        return types.Range(start, end)
