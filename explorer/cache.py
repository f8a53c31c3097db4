"""The per-function analysis cache: a function whose text, surroundings and flags did not change
is not analysed again.

The key is everything `analyze_function` depends on: the function's exact text and start column,
a digest of the file outside function bodies (macros and typedefs change what the text means),
the parse flags and settings, and the syntax errors inside the function (relative to its first
line). The start *line* is deliberately not in the key: an entry remembers the line it was computed
at, and a hit at another line is relocated (`relocate.py`) instead of recomputed.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

from core_compiler.analysis import FunctionAnalysis
from core_compiler.frontend import ParseOptions
from explorer.settings import Settings

RelativeError = tuple[int, int, int, int, str]  # line offset, col, end line offset, end col, message


@dataclass(frozen=True)
class FunctionKey:
    path: str
    text: str
    col: int
    context: str
    parse: ParseOptions
    settings: Settings
    errors: tuple[RelativeError, ...] = ()


@dataclass(frozen=True, eq=False)
class CachedFunction:
    analysis: FunctionAnalysis
    line: int  # the function's first line when `analysis` was made (or last relocated)
    end_line: int
    trace_line: int  # the first line the pass trace's texts were rendered at


@dataclass(frozen=True)
class CacheStats:
    hits: int
    misses: int
    relocations: int
    entries: int


class FunctionCache:
    """A bounded LRU map from `FunctionKey` to `CachedFunction`; safe to share between threads."""

    def __init__(self, max_entries: int = 512) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[FunctionKey, CachedFunction] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = self.relocations = 0

    def get(self, key: FunctionKey) -> CachedFunction | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                self.misses += 1
                return None
            self.hits += 1
            self._entries.move_to_end(key)
            return entry

    def put(self, key: FunctionKey, entry: CachedFunction, relocated: bool = False) -> None:
        with self._lock:
            self._entries[key] = entry
            self._entries.move_to_end(key)
            self.relocations += relocated
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)

    def stats(self) -> CacheStats:
        with self._lock:
            return CacheStats(self.hits, self.misses, self.relocations, len(self._entries))

    def __len__(self) -> int:
        return len(self._entries)
