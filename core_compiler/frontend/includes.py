"""Includes that are not files: refused before libclang opens them.

``#include "/dev/stdin"`` makes clang read its standard input (in the language server: the
editor's JSON-RPC pipe, forever), ``/dev/zero`` never ends, a FIFO blocks until someone writes.
libclang cannot be told to refuse them, so hexplore resolves the includes itself before parsing,
as clang would (the including file's directory for ``"…"``, then ``-iquote``, ``-I``, ``-isystem``,
``-idirafter``; an absolute name as it is), and refuses every one whose file is not a regular file
(a device, a FIFO, a socket, a directory):

- in the main file, the directive is blanked (spaces, so every position stays where it was);
- in a header of the user's (a ``"…"`` include that is a regular file, followed a few levels), the
  header is handed to libclang as an unsaved file with the directive blanked;
- ``-include``/``-imacros`` flags (a ``compile_commands.json``'s) and ``@file`` response files
  naming one are dropped.

Each refusal is an ``IncludeRefused`` remark on the directive (on line 1 for a flag). ``#include``
of a macro's expansion is not resolved here; the worker that runs libclang
(`frontend/worker.py`: ``stdin`` is ``/dev/null``, a time and a memory limit) is the backstop.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass

from core_compiler.remarks import Remark, missed
from core_compiler.source import SourceRange

_DIRECTIVE = re.compile(r'^[ \t]*#[ \t]*(include_next|include|import)[ \t]*(?:"([^"\n]*)"|<([^>\n]*)>)', re.M)
_FILE_FLAGS = ("-include", "-imacros", "-include-pch", "--include")
_DIR_FLAGS = ("-iquote", "-I", "-isystem", "-idirafter")
_MAX_HEADERS = 200  # user headers followed per parse
_MAX_DEPTH = 8


@dataclass(frozen=True)
class Screened:
    text: str  # the main file as libclang gets it
    args: tuple[str, ...]  # the flags, without refused ones
    unsaved: tuple[tuple[str, str], ...]  # headers with refused directives blanked
    remarks: tuple[Remark, ...]  # IncludeRefused


def special(path: str) -> str | None:
    """What `path` is when it exists and is not a regular file ("a device", "a FIFO", …)."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return None  # clang skips directories on its search path itself
    return "not a regular file"


def screen(path: str, text: str, args: list[str]) -> Screened:
    """The text, flags and unsaved headers libclang may safely be given for `path`."""
    remarks: list[Remark] = []
    kept, dirs = _screen_flags(path, args, remarks)
    unsaved: dict[str, str] = {}
    seen: set[str] = set()
    main = _screen_file(path, text, dirs, remarks, unsaved, seen, 0)
    unsaved.pop(path, None)
    return Screened(main, tuple(kept), tuple(unsaved.items()), tuple(remarks))


def _screen_flags(path: str, args: list[str], remarks: list[Remark]) -> tuple[list[str], list[str]]:
    kept: list[str] = []
    quote: list[str] = []
    dirs: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        flag, value, width = _flag_value(args, i)
        if flag in _FILE_FLAGS or flag == "@":
            what = special(value)
            if what is not None:
                shown = f"@{value}" if flag == "@" else f"{flag} {value}"
                remarks.append(_refused(SourceRange(path, 1, 1, 1, 1), shown, value, what, "flag"))
                i += width
                continue
        elif flag in _DIR_FLAGS:
            (quote if flag == "-iquote" else dirs).append(value)
        kept += args[i : i + width] if flag else [arg]
        i += width if flag else 1
    return kept, quote + dirs


def _flag_value(args: list[str], i: int) -> tuple[str, str, int]:
    """(flag, value, arguments it spans) for a flag naming a file or a directory, else ("", "", 1)."""
    arg = args[i]
    if arg.startswith("@"):
        return "@", arg[1:], 1
    if arg.startswith("--include="):
        return "--include", arg[len("--include=") :], 1
    for flag in (*_FILE_FLAGS, *_DIR_FLAGS):
        if arg == flag:
            return (flag, args[i + 1], 2) if i + 1 < len(args) else ("", "", 1)
        if arg.startswith(flag) and flag in ("-include", "-I", "-isystem", "-iquote", "-idirafter"):
            rest = arg[len(flag) :]
            if flag == "-include" and rest.startswith("-pch"):
                continue
            return flag, rest, 1
    return "", "", 1


def _screen_file(
    path: str, text: str, dirs: list[str], remarks: list[Remark], unsaved: dict[str, str], seen: set[str], depth: int
) -> str:
    seen.add(path)
    out = text
    here = os.path.dirname(path)
    for m in _DIRECTIVE.finditer(text):
        quoted, name = m[2] is not None, m[2] if m[2] is not None else m[3]
        if not name:
            continue
        candidates = [name] if os.path.isabs(name) else [os.path.join(d, name) for d in ([here] if quoted else []) + dirs]
        found = next((c for c in candidates if os.path.exists(c) and not os.path.isdir(c)), None)
        if found is None:
            continue
        what = special(found)
        if what is not None:
            line = text.count("\n", 0, m.start()) + 1
            col = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
            rng = SourceRange(path, line, col, line, col + (m.end() - m.start()))
            remarks.append(_refused(rng, m[0].strip(), found, what, "directive"))
            out = out[: m.start()] + " " * (m.end() - m.start()) + out[m.end() :]
            continue
        real = os.path.normpath(found)
        if quoted and depth < _MAX_DEPTH and real not in seen and len(seen) < _MAX_HEADERS:
            header = _read(real)
            if header is not None:
                screened = _screen_file(real, header, dirs, remarks, unsaved, seen, depth + 1)
                if screened != header:
                    unsaved[real] = screened
    return out


def _read(path: str) -> str | None:
    try:
        if os.path.getsize(path) > 4 << 20:
            return None
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def _refused(rng: SourceRange, shown: str, target: str, what: str, where: str) -> Remark:
    how = "remove the directive" if where == "directive" else "remove the flag (from compile_commands.json or the settings)"
    return missed(
        "frontend",
        "IncludeRefused",
        f"`{shown}` was not read: `{target}` is {what}, not a file, and reading it could block or "
        f"never end; hexplore parsed the file without it ({how} to silence this)",
        rng,
    )
