"""One libclang translation unit per open document, reparsed in place on every edit — in the
front end's worker process (`core_compiler/frontend/worker.py`), never in the editor's.

The first parse builds a precompiled preamble (the ``#include`` block), so a reparse after an edit
costs a few milliseconds instead of a full parse. The parse also yields what the per-function
cache needs *before* lowering anything: each function definition's exact text and position, and a
digest of everything outside function bodies (macros, typedefs, globals, prototypes and the headers of
the other definitions) and of the one-``return`` helpers that calls are inlined from, which a
function's meaning can depend on even when its own text did not change.

The translation units live in the worker (`_UNITS`, by document); the editor's side holds plain
data. Lowering is per function (`ParsedFile.lower`: one request, the `ir.Function` back), so
unchanged functions are never lowered again. A crash or an exhausted budget in the worker raises
`FrontendFailure` (the workspace makes it a remark on the file or the function); the worker is
restarted and the document parsed again on its next request. Includes that are not files
(``/dev/stdin``) are refused first (`core_compiler/frontend/includes.py`). This reaches one level
below `core_compiler.frontend.run_frontend`, whose whole-file parse and lowering are too slow to
run on every keystroke; the flags are the core's (`clang_args`).
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import re
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from core_compiler.errors import HexploreError
from core_compiler.frontend import ParseOptions, ir
from core_compiler.frontend.flags import clang_args
from core_compiler.frontend.worker import FrontendWorker, shared_worker
from core_compiler.remarks import Remark

if TYPE_CHECKING:
    import clang.cindex as ci

    from core_compiler.frontend.lower import Lowerer

# CXTranslationUnit_PrecompiledPreamble | CreatePreambleOnFirstParse | KeepGoing (parse on after a
# missing header, as clangd does, so the rest of the file still gets analysed).
_PARSE_FLAGS = 0x04 | 0x100 | 0x200


@dataclass(frozen=True, eq=False)
class FunctionSource:
    """A function definition of the main file, as it appears in this version of the text."""

    name: str
    text: str
    line: int  # 1-based, of the first character of the definition
    col: int
    end_line: int
    end_col: int
    name_line: int  # where its name is
    name_col: int
    result_type: str  # as C spells it
    index: int = field(default=0, repr=False)  # among the definitions of the worker's unit


@dataclass(frozen=True, eq=False)
class ParsedFile:
    path: str
    text: str
    functions: tuple[FunctionSource, ...]
    errors: tuple[Remark, ...]  # syntax errors and refused includes of the whole file
    context: str  # digest of the text outside function bodies, and of inlinable helpers
    _parser: DocumentParser | None = field(repr=False)  # None when the file could not be parsed at all
    cacheable: bool = True
    _unit: int = field(default=0, repr=False)  # which parse of the worker's this is

    def lower(self, fn: FunctionSource) -> ir.Function:
        """The function's IR, lowered in the worker (raises `FrontendFailure` when the worker
        crashes or runs out of budget on it)."""
        assert self._parser is not None, "a file that failed to parse has no functions"
        return self._parser.lower(self, fn)


class DocumentParser:
    """Owns one translation unit (in the worker). Not thread-safe by itself: callers hold `lock`."""

    _ids = itertools.count(1)

    def __init__(self, path: str, worker: FrontendWorker | None = None) -> None:
        self.path = path
        self.lock = threading.Lock()
        self._worker = worker
        self._key = f"doc{next(self._ids)}"
        self._last: tuple[str, tuple[str, ...]] | None = None  # the text and flags the worker has
        self._generation = -1  # of the worker that holds the unit

    @property
    def worker(self) -> FrontendWorker:
        return self._worker or shared_worker()

    def parse(self, text: str, options: ParseOptions) -> ParsedFile:
        args = tuple(clang_args(self.path, options))
        worker = self.worker
        data = worker.call(_parse_in_worker, self._key, self.path, text, args)
        self._last, self._generation = (text, args), worker.generation
        return ParsedFile(self.path, text, data.functions, data.errors, data.context, self, data.cacheable, data.unit)

    def lower(self, parsed: ParsedFile, fn: FunctionSource) -> ir.Function:
        worker = self.worker
        if worker.generation == self._generation:
            found = worker.call(_lower_in_worker, self._key, parsed._unit, fn.index)
            if found is not None:
                return found
        # the worker was restarted since (another document crashed it): parse this text again there
        assert self._last is not None
        data = worker.call(_parse_in_worker, self._key, self.path, parsed.text, self._last[1])
        self._generation = worker.generation
        found = worker.call(_lower_in_worker, self._key, data.unit, fn.index)
        assert found is not None, "a unit just parsed is there"
        return found

    def dispose(self) -> None:
        if self._generation >= 0 and self._generation == self.worker.generation:
            with contextlib.suppress(HexploreError):  # the worker died meanwhile: its units are gone
                self.worker.call(_dispose_in_worker, self._key)
        self._last, self._generation = None, -1


def warm_up() -> None:
    """Start the front end's worker in the background and have it load libclang and the lowering
    (tenths of a second, on another core), so that a document's first parse does not wait for
    that: the editor's server calls it at start-up. Once per process."""
    global _warming
    with _warm_lock:
        if _warming is not None:
            return

        def warm() -> None:
            with contextlib.suppress(HexploreError):  # the first parse says what went wrong
                shared_worker().call(_warm_in_worker)

        _warming = threading.Thread(target=warm, name="hexplore-frontend-warm-up", daemon=True)
        _warming.start()


_warming: threading.Thread | None = None
_warm_lock = threading.Lock()


# ------------------------------------------------------------------------------ the worker's side


@dataclass(frozen=True)
class _ParseData:
    functions: tuple[FunctionSource, ...]
    errors: tuple[Remark, ...]
    context: str
    cacheable: bool
    unit: int


@dataclass
class _Unit:
    tu: ci.TranslationUnit
    args: tuple[str, ...]  # as libclang got them (refused includes dropped)
    cursors: list[ci.Cursor]
    lowerer: Lowerer
    number: int
    reusable: bool  # reparsed in place next time (not after clang's error limit)


_UNITS: dict[str, _Unit] = {}
_numbers = itertools.count(1)
_index: ci.Index | None = None


# The worker's side imports clang's bindings and the lowering where it runs: the editor's process,
# which imports this module too, never loads them (0.2-0.3 s of its start-up, issue 29.3).


def _warm_in_worker() -> None:
    _clang_index()
    import core_compiler.frontend.lower  # noqa: F401  (the lowering's modules, before the first parse)


def _clang_index() -> ci.Index:
    import clang.cindex as ci

    global _index
    if _index is None:
        _index = ci.Index.create()
    return _index


def _parse_in_worker(key: str, path: str, text: str, flags: tuple[str, ...]) -> _ParseData:
    import clang.cindex as ci

    from core_compiler.frontend.includes import screen
    from core_compiler.frontend.lower import Lowerer

    index = _clang_index()
    screened = screen(path, text, list(flags))
    unsaved = [(path, screened.text), *screened.unsaved]
    old = _UNITS.pop(key, None)
    tu = old.tu if old is not None and old.reusable and old.args == screened.args else None
    if tu is not None:
        try:
            tu.reparse(unsaved_files=unsaved, options=0)
        except ci.TranslationUnitLoadError:
            tu = None
    if tu is None or _hit_error_limit(tu):
        tu = index.parse(path, args=list(screened.args), unsaved_files=unsaved, options=_PARSE_FLAGS)
    data, cursors = _read(path, text, tu, screened.remarks)
    # libclang keeps the "too many errors" diagnostic across reparses (and adds one per
    # reparse): a unit that hit clang's error limit is parsed afresh next time.
    number = next(_numbers)
    _UNITS[key] = _Unit(tu, screened.args, cursors, Lowerer(path, text), number, not _hit_error_limit(tu))
    return _ParseData(*data, number)


def _lower_in_worker(key: str, number: int, index: int) -> ir.Function | None:
    """The function's IR; None when this worker does not hold that parse (it was restarted)."""
    unit = _UNITS.get(key)
    if unit is None or unit.number != number:
        return None
    return unit.lowerer.function(unit.cursors[index])


def _dispose_in_worker(key: str) -> None:
    _UNITS.pop(key, None)  # the binding frees the unit when the last reference goes


def _hit_error_limit(tu: ci.TranslationUnit) -> bool:
    return any(d.spelling.startswith("too many errors emitted") for d in tu.diagnostics)


def _read(
    path: str, text: str, tu: ci.TranslationUnit, refused: tuple[Remark, ...]
) -> tuple[tuple[tuple[FunctionSource, ...], tuple[Remark, ...], str, bool], list[ci.Cursor]]:
    from core_compiler.frontend.clang_parse import definitions, diagnostics_as_remarks
    from core_compiler.frontend.inline import returned_expression

    data = text.encode("utf-8")
    functions: list[FunctionSource] = []
    spans: list[tuple[int, int]] = []
    cursors = definitions(tu, path)
    for index, cur in enumerate(cursors):
        loc = cur.location
        start, end = cur.extent.start, cur.extent.end
        body = data[start.offset : end.offset].decode("utf-8", errors="replace")
        where = (start.line, start.column, end.line, end.column, loc.line, loc.column)
        functions.append(FunctionSource(cur.spelling, body, *where, cur.result_type.spelling, index))
        if returned_expression(cur) is None:  # a one-`return` helper stays whole: callers inline it
            spans.append((_body_start(cur, start.offset), end.offset))
    errors = refused + tuple(diagnostics_as_remarks(tu, path))
    # After clang's error limit, what a function lowers to depends on where clang stopped: such a
    # parse is not cacheable (it is rare, and its functions mostly have errors anyway).
    cacheable = not _hit_error_limit(tu)
    return (tuple(functions), errors, _context_digest(data, spans), cacheable), cursors


def _body_start(cur: ci.Cursor, fallback: int) -> int:
    import clang.cindex as ci

    for child in cur.get_children():
        if child.kind == ci.CursorKind.COMPOUND_STMT:
            return int(child.extent.start.offset)
    return fallback


def _context_digest(data: bytes, spans: list[tuple[int, int]]) -> str:
    """A digest of the text outside function *bodies* that ignores comments, blank lines and
    indentation, so that moving a function (or typing inside one, or in a comment between two)
    leaves every other function's key intact.

    Function headers are part of it: a call's lowering depends on the callee's declaration. So are
    the whole definitions that `spans` leaves out, the ``{ return <expr>; }`` helpers the front end
    inlines into their callers: editing one reanalyses the file."""
    digest = hashlib.blake2b(digest_size=16)
    pos = 0
    for start, end in sorted(spans):
        digest.update(_normalized(data[pos:start]))
        digest.update(b"\0<function>\0")
        pos = max(pos, end)
    digest.update(_normalized(data[pos:]))
    return digest.hexdigest()


# String and character literals (kept: a "/*" inside one is not a comment) and comments.
_LITERAL_OR_COMMENT = re.compile(rb'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|/\*.*?\*/|//[^\n]*', re.S)


def _normalized(chunk: bytes) -> bytes:
    """Comments become a space (as in C's translation phase 3); blank lines and indentation go:
    editing a comment between functions leaves every function's key intact."""
    chunk = _LITERAL_OR_COMMENT.sub(lambda m: b" " if m[0][:1] == b"/" else m[0], chunk)
    return b"\n".join(line.strip() for line in chunk.splitlines() if line.strip())
