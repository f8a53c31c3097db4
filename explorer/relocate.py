"""Moving a cached analysis to where its function now is.

When lines are inserted or removed above a function, its text (and so its analysis) is unchanged
but every source range in it is off by the same number of lines. `relocate` rebuilds the result
tree (IR, SCoPs, dependences, remarks and their range arguments) with shifted ranges, sharing
everything that holds no range (isl objects, names, numbers).

A range of the same file that lies outside the function's old lines cannot be trusted to move with
it (a macro defined above, say); `relocate` then returns None and the caller re-analyses.
"""

from __future__ import annotations

import copy
import dataclasses
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


_FIELDS: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


class _Mover:
    def __init__(self, path: str, first: int, last: int, delta: int) -> None:
        self.path, self.first, self.last, self.delta = path, first, last, delta
        self.memo: dict[int, object] = {}

    def move(self, value: object) -> object:
        if isinstance(value, str | int | float | bool | type(None)):
            return value
        key = id(value)
        if key in self.memo:
            return self.memo[key]
        out = self._move(value)
        self.memo[key] = out
        return out

    def _move(self, value: object) -> object:
        if isinstance(value, SourceRange):
            return self.range(value)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return self.dataclass(value)
        if isinstance(value, tuple):
            items = tuple(self.move(v) for v in value)
            same = all(a is b for a, b in zip(items, value, strict=True))
            if same:
                return value
            return cast(Any, value)._make(items) if hasattr(value, "_fields") else items
        if isinstance(value, list):
            return [self.move(v) for v in value]
        if isinstance(value, Mapping):
            return self.mapping(value)
        if isinstance(value, frozenset | set):
            return type(value)(self.move(v) for v in value)
        return value  # isl objects, enums and other leaves hold no source ranges

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
        out = copy.copy(value)
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
