"""C/CUDA front end: libclang translation units lowered to hexplore's immutable loop IR.

libclang runs in the front end's worker process (`worker.py`), never in the caller's: the parse
and the lowering happen there and the IR comes back as plain data, one function at a time
(`iter_frontend`), so that a crash, a hang or an exhausted memory limit is a remark
(``FrontendCrashed``, ``FrontendBudgetExceeded``) on the file or on the one function being read.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core_compiler.frontend.flags import ParseOptions
from core_compiler.frontend.ir import Function, OtherType
from core_compiler.frontend.worker import FrontendFailure, describe, shared_worker
from core_compiler.remarks import Remark, missed
from core_compiler.source import SourceRange

if TYPE_CHECKING:  # clang's bindings and the lowering load in the worker only (`lower_in_worker`)
    import clang.cindex as ci

    from core_compiler.frontend.lower import Lowerer

__all__ = ["FileRemarks", "FrontendResult", "ParseOptions", "iter_frontend", "run_frontend"]

_MAX_RESTARTS = 4  # worker deaths in one file before the remaining functions are given up


@dataclass(frozen=True)
class FrontendResult:
    path: str
    text: str
    functions: tuple[Function, ...]
    remarks: tuple[Remark, ...]  # syntax errors, refused includes, front-end failures: with ranges


@dataclass(frozen=True)
class FileRemarks:
    """The first item of `iter_frontend`: the file's remarks (syntax errors, …)."""

    remarks: tuple[Remark, ...]


@dataclass(frozen=True)
class UnreadFunction:
    """A function the front end failed on: what its source says of it, and why."""

    function: Function  # name, ranges and text; no body
    remark: Remark


def run_frontend(path: str, text: str | None = None, options: ParseOptions | None = None) -> FrontendResult:
    """Parse and lower every function defined in `path` (from `text` when given); the functions
    the front end failed on are left out, their remarks are the file's.

    Raises OSError only when `text` is None and the file cannot be read.
    """
    if text is None:
        text = _read(path)
    remarks: list[Remark] = []
    functions: list[Function] = []
    for item in iter_frontend(path, text, options):
        if isinstance(item, FileRemarks):
            remarks += item.remarks
        elif isinstance(item, UnreadFunction):
            remarks.append(item.remark)
        else:
            functions.append(item)
    return FrontendResult(path, text, tuple(functions), tuple(remarks))


def iter_frontend(
    path: str, text: str | None = None, options: ParseOptions | None = None
) -> Iterator[FileRemarks | Function | UnreadFunction]:
    """`FileRemarks`, then each function defined in `path` in source order, as soon as the
    worker has lowered it: its `Function`, or an `UnreadFunction` where the worker failed."""
    if text is None:
        text = _read(path)
    options = options or ParseOptions()
    headers: tuple[Function, ...] | None = None
    done = restarts = 0
    while True:
        try:
            for item in shared_worker().stream(lower_in_worker, path, text, options, done):
                if isinstance(item, FileRemarks):
                    if headers is None:
                        yield item
                    continue
                if isinstance(item, tuple):
                    headers = item
                    continue
                done += 1
                yield item
            return
        except FrontendFailure as e:
            if headers is None:  # the parse itself
                yield FileRemarks((parse_failure(path, text, e),))
                return
            if done >= len(headers):
                return
            restarts += 1
            yield UnreadFunction(headers[done], function_failure(headers[done], e, "reading"))
            done += 1
            if restarts >= _MAX_RESTARTS:
                for fn in headers[done:]:
                    yield UnreadFunction(fn, function_failure(fn, e, "reading", given_up=True))
                return


def lower_in_worker(
    path: str, text: str, options: ParseOptions, skip: int
) -> Iterator[FileRemarks | tuple[Function, ...] | Function | UnreadFunction]:
    """The worker's side of `iter_frontend`: parse, the file's remarks, the functions' headers
    (so that the caller can name a function the worker dies on), then each function lowered."""
    from core_compiler.frontend.clang_parse import definitions, diagnostics_as_remarks, parse
    from core_compiler.frontend.lower import Lowerer

    tu, refused = parse(path, text, options)
    yield FileRemarks(refused + tuple(diagnostics_as_remarks(tu, path)))
    lowerer = Lowerer(path, text)
    cursors = definitions(tu, path)
    headers = tuple(header(lowerer, c) for c in cursors)
    yield headers
    for fn, cur in list(zip(headers, cursors, strict=True))[skip:]:
        try:
            yield lowerer.function(cur)
        except RecursionError:
            yield UnreadFunction(fn, function_failure(fn, FrontendFailure("budget", "nested too deeply"), "reading"))


def header(lowerer: Lowerer, cur: ci.Cursor) -> Function:
    """A function as far as its definition's extent says: name, ranges, text; no body."""
    rng = lowerer.range(cur)
    return Function(cur.spelling, OtherType(cur.result_type.spelling), (), (), rng, lowerer.name_range(cur), text=lowerer.slice(rng))


def _read(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


# ------------------------------------------------------------------------------ failures in words

_CRASH_HINT = (
    "clang's parser does this on extremely deep code: an expression of thousands of terms (a "
    "generated sum, a macro expanding to one) or statements nested thousands deep; split it "
    "into several statements"
)
_BUDGET_HINT = (
    "a macro that expands to an enormous expression (each level doubling it), a huge generated "
    "file or an endless include do this; simplify it, or raise the limit "
    "(HEXPLORE_FRONTEND_TIMEOUT_S, HEXPLORE_FRONTEND_MEMORY_MB)"
)


def parse_failure(path: str, text: str, e: FrontendFailure) -> Remark:
    """``FrontendCrashed``/``FrontendBudgetExceeded`` for a file libclang could not parse, on the
    longest statement when one is suspiciously long (the likely culprit), else on line 1."""
    hint = _CRASH_HINT if e.kind == "crashed" else _BUDGET_HINT
    message = f"{describe(e, 'parsing this file')}, so it was not analysed: {hint}"
    return _failure(e, message, _suspect(path, text))


def function_failure(fn: Function, e: FrontendFailure, doing: str, given_up: bool = False) -> Remark:
    if given_up:
        message = (
            f"`{fn.name}` was not read: the C front end failed on {_MAX_RESTARTS} functions of this "
            "file before it, so hexplore stopped reading it"
        )
    else:
        hint = _CRASH_HINT if e.kind == "crashed" else _BUDGET_HINT
        message = f"{describe(e, f'{doing} `{fn.name}`')}, so it was not analysed: {hint}"
    return _failure(e, message, fn.name_range, fn.name)


def _failure(e: FrontendFailure, message: str, rng: SourceRange, function: str = "") -> Remark:
    if e.kind == "crashed":
        return missed("frontend", "FrontendCrashed", message, rng, function)
    return missed("frontend", "FrontendBudgetExceeded", message, rng, function)


_LONG_STATEMENT = 20_000  # characters


def _suspect(path: str, text: str) -> SourceRange:
    start = end = 0
    pos = 0
    for i, ch in enumerate(text):
        if ch in ";{}":
            if i - pos > end - start:
                start, end = pos, i
            pos = i + 1
    if end - start < _LONG_STATEMENT:
        return SourceRange(path, 1, 1, 1, 1)
    lines = text[start:end].split("\n")  # from its longest line (not a `for` header before it)
    longest = max(range(len(lines)), key=lambda k: len(lines[k]))
    start += sum(len(x) + 1 for x in lines[:longest])
    while start < end and text[start].isspace():
        start += 1
    line = text.count("\n", 0, start) + 1
    col = start - (text.rfind("\n", 0, start) + 1) + 1
    end_line = text.count("\n", 0, end) + 1
    end_col = end - (text.rfind("\n", 0, end) + 1) + 1
    return SourceRange(path, line, col, end_line, end_col)
