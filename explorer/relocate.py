"""Moving a cached analysis to where its function now is.

When lines are inserted or removed above a function, its text (and so its analysis) is unchanged
but every source range in it is off by the same number of lines. `relocate` rebuilds the result
tree (IR, SCoPs, dependences, remarks and their range arguments) with shifted ranges, sharing
everything that holds no range (isl objects, names, numbers).

A range of the same file that lies outside the function's old lines cannot be trusted to move with
it (a macro defined above, say); `relocate` then returns None and the caller re-analyses.

`Remap` moves ranges through one edit inside a function's text instead (a space, a comment, a
line break): a range before the edited span stays, one after it moves with the text, one that
touches it cannot be moved (None). Whether the moved analysis still holds is the caller's
question (the workspace compares the moved IR with the new text's).
"""

from __future__ import annotations

import bisect
import copy
import dataclasses
import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, TypeVar, cast

from core_compiler.source import SourceRange

T = TypeVar("T")

_RANGE_KEYS = frozenset(("file", "line", "col", "end_line", "end_col"))


class _Unmovable(Exception):
    pass


def relocate(value: T, path: str, first_line: int, last_line: int, delta: int) -> T | None:
    """`value` with every range of `path` moved by `delta` lines (None if one is outside
    `first_line`..`last_line`, the lines the function occupied when `value` was computed)."""
    if delta == 0:
        return value
    mover = _Mover(path, first_line, last_line, delta)
    try:
        return cast(T, mover.move(value))
    except _Unmovable:
        return None


class Remap:
    """Moves values computed from the function text `old` to where the same characters are in
    `new`: every range of `path` (`move` gives None where one touches the edited span or lies
    outside the old text). The edit is the span between the texts' common prefix and suffix.
    Values moved by one `Remap` share what they share (one memo)."""

    def __init__(self, path: str, old: TextAt, new: TextAt) -> None:
        self._mover = _TextMover(path, old, new)

    def move(self, value: T) -> T | None:
        try:
            return cast(T, self._mover.move(value))
        except _Unmovable:
            return None

    def unseen(self) -> bool:
        """Whether the edit changed only blanks and whole comments, or only text inside one comment:
        what lowering cannot see (the caller still compares the IR). Other edits are not worth
        moving anything for."""
        m = self._mover
        old, new = (m.old.data, m.prefix, m.old_tail), (m.new.data, m.prefix, m.old_tail + m.shift)
        return all(_blank(data[a:b]) for data, a, b in (old, new)) or all(_in_comment(*t) for t in (old, new))


def _blank(text: bytes) -> bool:
    """Whether `text` is blanks and whole comments only."""
    return not _LITERAL_OR_COMMENT.sub(lambda m: b"" if m[0][:1] == b"/" else m[0], text).strip()


def _in_comment(data: bytes, start: int, end: int) -> bool:
    """Whether `data[start:end]` lies inside one comment's text (its delimiters excluded)."""
    for m in _LITERAL_OR_COMMENT.finditer(data):
        if m.start() >= start:
            return False
        if m[0][:1] == b"/":
            opener, closer = 2, 2 if m[0][:2] == b"/*" else 0
            if m.start() + opener <= start and end <= m.end() - closer:
                return True
    return False


# String and character literals (a "/*" inside one is no comment) and comments.
_LITERAL_OR_COMMENT = re.compile(rb'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|/\*.*?\*/|//[^\n]*', re.S)


@dataclasses.dataclass(frozen=True)
class TextAt:
    """A function's text and where it starts (1-based line, 1-based byte column: clang's)."""

    text: str
    line: int
    col: int


_FIELDS: dict[type, tuple[str, ...]] = {}
_LEAF, _RANGE, _DATACLASS, _TUPLE, _LIST, _MAPPING, _SET = range(7)
# What to do with a value, by its type: decided once per type (the walk visits ~30,000 values
# of a 400-line file's analysis).
_KINDS: dict[type, int] = {str: _LEAF, int: _LEAF, float: _LEAF, bool: _LEAF, type(None): _LEAF}


def _kind(cls: type) -> int:
    if issubclass(cls, str | int | float | bool):  # enums of these too
        kind = _LEAF
    elif issubclass(cls, SourceRange):
        kind = _RANGE
    elif dataclasses.is_dataclass(cls):
        kind = _DATACLASS
    elif issubclass(cls, tuple):
        kind = _TUPLE
    elif issubclass(cls, list):
        kind = _LIST
    elif issubclass(cls, Mapping):
        kind = _MAPPING
    elif issubclass(cls, frozenset | set):
        kind = _SET
    else:
        kind = _LEAF  # isl objects, enums and other leaves hold no source ranges
    _KINDS[cls] = kind
    return kind


def _field_names(cls: type) -> tuple[str, ...]:
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


class _Mover:
    def __init__(self, path: str, first: int, last: int, delta: int) -> None:
        self.path, self.first, self.last, self.delta = path, first, last, delta
        self.memo: dict[int, tuple[object, object]] = {}

    def move(self, value: object) -> object:
        kind = _KINDS.get(type(value))
        if kind is None:
            kind = _kind(type(value))
        if kind == _LEAF:
            return value
        key = id(value)
        found = self.memo.get(key)
        if found is not None:
            return found[1]
        out = self._move(value, kind)
        self.memo[key] = (value, out)  # the value kept alive: its id is not reused while memoized
        return out

    def _move(self, value: Any, kind: int) -> object:
        if kind == _RANGE:
            return self.range(value)
        if kind == _DATACLASS:
            return self.dataclass(value)
        if kind == _TUPLE:
            items = tuple(self.move(v) for v in value)
            same = all(a is b for a, b in zip(items, value, strict=True))
            if same:
                return value
            return cast(Any, value)._make(items) if hasattr(value, "_fields") else items
        if kind == _LIST:
            return [self.move(v) for v in value]
        if kind == _MAPPING:
            return self.mapping(value)
        return type(value)(self.move(v) for v in value)  # a set

    def range(self, r: SourceRange) -> SourceRange:
        if r.file != self.path:
            return r
        if r.line < self.first or r.end_line > self.last:
            raise _Unmovable(r)
        return SourceRange(r.file, r.line + self.delta, r.col, r.end_line + self.delta, r.end_col)

    def dataclass(self, value: Any) -> object:
        changed = {}
        for name in _field_names(type(value)):
            old = getattr(value, name)
            new = self.move(old)
            if new is not old:
                changed[name] = new
        if not changed:
            return value
        state = getattr(value, "__dict__", None)
        if state is None:  # slots
            out = copy.copy(value)
        else:  # what copy.copy does for a plain instance, without its generic machinery
            out = object.__new__(type(value))
            out.__dict__.update(state)
        for name, new in changed.items():
            object.__setattr__(out, name, new)  # frozen dataclasses: build the copy in place
        return out

    def mapping(self, value: Mapping[object, object]) -> object:
        if set(value.keys()) == _RANGE_KEYS and value.get("file") == self.path:
            r = SourceRange(**value)  # type: ignore[arg-type]
            return self.range(r).to_json()
        moved = {k: self.move(v) for k, v in value.items()}
        if all(moved[k] is v for k, v in value.items()):
            return value
        return MappingProxyType(moved) if isinstance(value, MappingProxyType) else moved


class _TextMover(_Mover):
    def __init__(self, path: str, old: TextAt, new: TextAt) -> None:
        super().__init__(path, 0, 0, 0)
        self.old, self.new = _Lines(old), _Lines(new)
        a, b = self.old.data, self.new.data
        prefix = 0
        limit = min(len(a), len(b))
        while prefix < limit and a[prefix] == b[prefix]:
            prefix += 1
        suffix = 0
        while suffix < limit - prefix and a[-1 - suffix] == b[-1 - suffix]:
            suffix += 1
        self.prefix, self.old_tail, self.shift = prefix, len(a) - suffix, len(b) - len(a)

    def range(self, r: SourceRange) -> SourceRange:
        if r.file != self.path:
            return r
        start, end = self.start(self.offset(r.line, r.col)), self.end(self.offset(r.end_line, r.end_col))
        if start > end:  # an empty range where text was inserted: before it or after it?
            raise _Unmovable(r)
        return SourceRange(r.file, *self.new.position(start), *self.new.position(end))

    def offset(self, line: int, col: int) -> int:
        offset = self.old.offset(line, col)
        if offset is None:
            raise _Unmovable((line, col))
        return offset

    def start(self, offset: int) -> int:
        """Where a range starting at `offset` starts now: text inserted there goes before it."""
        if offset < self.prefix:
            return offset
        if offset >= self.old_tail:
            return offset + self.shift
        raise _Unmovable(offset)  # it starts with edited text

    def end(self, offset: int) -> int:
        """Where a range ending at `offset` (exclusive) ends now: text inserted there goes after it."""
        if offset <= self.prefix:
            return offset
        if offset > self.old_tail:
            return offset + self.shift
        raise _Unmovable(offset)  # it ends with edited text


class _Lines:
    """Byte offsets in a function's text and (line, column) positions of the file, both ways."""

    def __init__(self, at: TextAt) -> None:
        self.at, self.data = at, at.text.encode("utf-8")
        self.starts = [0]
        end = self.data.find(b"\n")
        while end >= 0:
            self.starts.append(end + 1)
            end = self.data.find(b"\n", end + 1)

    def offset(self, line: int, col: int) -> int | None:
        k = line - self.at.line
        if not 0 <= k < len(self.starts):
            return None
        offset = self.starts[k] + col - (self.at.col if k == 0 else 1)
        end = self.starts[k + 1] - 1 if k + 1 < len(self.starts) else len(self.data)
        return offset if self.starts[k] <= offset <= end else None

    def position(self, offset: int) -> tuple[int, int]:
        k = bisect.bisect_right(self.starts, offset) - 1
        return self.at.line + k, offset - self.starts[k] + (self.at.col if k == 0 else 1)
