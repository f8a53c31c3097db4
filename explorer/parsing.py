"""One libclang translation unit per open document, reparsed in place on every edit.

The first parse builds a precompiled preamble (the ``#include`` block), so a reparse after an edit
costs a few milliseconds instead of a full parse. The parse also yields what the per-function
cache needs *before* lowering anything: each function definition's exact text and position, and a
digest of everything outside function bodies (macros, typedefs, globals, prototypes and the headers of
the other definitions) and of the one-``return`` helpers that calls are inlined from, which a
function's meaning can depend on even when its own text did not change.

Lowering is per function (`ParsedFile.lower`), so unchanged functions are never lowered again.
This reaches one level below `core_compiler.frontend.run_frontend`, whose whole-file parse and
lowering are too slow to run on every keystroke; the flags are the core's (`clang_args`).
"""

from __future__ import annotations

import hashlib
import re
import threading
from dataclasses import dataclass, field

import clang.cindex as ci

from core_compiler.frontend import ParseOptions, ir
from core_compiler.frontend.clang_parse import clang_args, diagnostics_as_remarks
from core_compiler.frontend.inline import returned_expression
from core_compiler.frontend.lower import Lowerer
from core_compiler.remarks import Remark

_K = ci.CursorKind
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
    cursor: ci.Cursor = field(repr=False)


@dataclass(frozen=True, eq=False)
class ParsedFile:
    path: str
    text: str
    functions: tuple[FunctionSource, ...]
    errors: tuple[Remark, ...]  # syntax errors of the whole file
    context: str  # digest of the text outside function bodies, and of inlinable helpers
    _lowerer: Lowerer | None = field(repr=False)  # None when the file could not be parsed at all
    cacheable: bool = True

    def lower(self, fn: FunctionSource) -> ir.Function:
        assert self._lowerer is not None, "a file that failed to parse has no functions"
        return self._lowerer.function(fn.cursor)


class DocumentParser:
    """Owns one translation unit. Not thread-safe by itself: callers hold `lock`."""

    _index: ci.Index | None = None
    _index_lock = threading.Lock()

    def __init__(self, path: str) -> None:
        self.path = path
        self.lock = threading.Lock()
        self._tu: ci.TranslationUnit | None = None
        self._args: tuple[str, ...] = ()

    @classmethod
    def index(cls) -> ci.Index:
        with cls._index_lock:
            if cls._index is None:
                cls._index = ci.Index.create()
            return cls._index

    def parse(self, text: str, options: ParseOptions) -> ParsedFile:
        args = tuple(clang_args(self.path, options))
        unsaved = [(self.path, text)]
        tu = self._tu if args == self._args else None
        if tu is not None:
            try:
                tu.reparse(unsaved_files=unsaved, options=0)
            except ci.TranslationUnitLoadError:
                tu = None
        if tu is None or _hit_error_limit(tu):
            tu = self.index().parse(self.path, args=list(args), unsaved_files=unsaved, options=_PARSE_FLAGS)
        # libclang keeps the "too many errors" diagnostic across reparses (and adds one per
        # reparse): a unit that hit clang's error limit is parsed afresh next time.
        self._tu, self._args = (None if _hit_error_limit(tu) else tu), args
        return _read(self.path, text, tu)

    def dispose(self) -> None:
        self._tu = None  # the binding frees the unit when the last reference goes


def _hit_error_limit(tu: ci.TranslationUnit) -> bool:
    return any(d.spelling.startswith("too many errors emitted") for d in tu.diagnostics)


def _read(path: str, text: str, tu: ci.TranslationUnit) -> ParsedFile:
    data = text.encode("utf-8")
    lowerer = Lowerer(path, text)
    functions: list[FunctionSource] = []
    spans: list[tuple[int, int]] = []
    for cur in tu.cursor.get_children():
        if cur.kind not in (_K.FUNCTION_DECL, _K.FUNCTION_TEMPLATE) or not cur.is_definition():
            continue
        loc = cur.location
        if not loc.file or loc.file.name != path:
            continue
        start, end = cur.extent.start, cur.extent.end
        body = data[start.offset : end.offset].decode("utf-8", errors="replace")
        functions.append(
            FunctionSource(cur.spelling, body, start.line, start.column, end.line, end.column, cur)
        )
        if returned_expression(cur) is None:  # a one-`return` helper stays whole: callers inline it
            spans.append((_body_start(cur, start.offset), end.offset))
    errors = tuple(diagnostics_as_remarks(tu, path))
    # After clang's error limit, what a function lowers to depends on where clang stopped: such a
    # parse is not cacheable (it is rare, and its functions mostly have errors anyway).
    cacheable = not _hit_error_limit(tu)
    return ParsedFile(path, text, tuple(functions), errors, _context_digest(data, spans), lowerer, cacheable)


def _body_start(cur: ci.Cursor, fallback: int) -> int:
    for child in cur.get_children():
        if child.kind == _K.COMPOUND_STMT:
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
