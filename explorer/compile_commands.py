"""Per-file compiler flags from a compilation database (``compile_commands.json``), found the way
clangd finds it: in the file's directory or any parent, or in a ``build/`` directory beside them.

Only the flags that change how a file parses are kept (``-I``, ``-D``, ``-U``, ``-isystem``,
``-include``, ``-std=``, ``-fopenmp``, …); relative directories are resolved against the entry's
``directory``. A file with no entry borrows the flags of the entry whose path shares the longest
prefix with it (clangd's "interpolation", simplified), so headers and new files still get ``-I``.

Example::

    db = find_database("/src/proj/kernels/gemm.c")      # /src/proj/build/compile_commands.json
    flags = db.flags_for("/src/proj/kernels/gemm.c")     # CompileFlags(include_dirs=(...), ...)
"""

from __future__ import annotations

import json
import os
import shlex
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

DATABASE_NAME = "compile_commands.json"
_SEARCH_SUBDIRS = ("", "build")

# Flags followed by a value, either joined (-Ifoo) or as the next argument (-I foo).
_DIR_FLAGS = ("-I", "-isystem", "-iquote", "-idirafter")
_VALUE_FLAGS = ("-D", "-U", "-include", *_DIR_FLAGS)
_KEPT_PREFIXES = ("-std=", "-fopenmp", "-fms-extensions", "-funsigned-char", "-fsigned-char")


@dataclass(frozen=True)
class CompileFlags:
    include_dirs: tuple[str, ...] = ()
    defines: tuple[str, ...] = ()  # "N=10" or "DEBUG"
    extra_args: tuple[str, ...] = ()  # other parse-relevant flags, already split
    source: str = ""  # the database these came from ("" when none)


NO_FLAGS = CompileFlags()


@dataclass(frozen=True)
class CompilationDatabase:
    path: str
    entries: tuple[tuple[str, CompileFlags], ...]  # (absolute file, flags)

    @staticmethod
    def load(path: str | os.PathLike[str]) -> CompilationDatabase:
        """Read a database; a malformed file or entry is skipped rather than raised."""
        path = os.path.abspath(path)
        try:
            with open(path, encoding="utf-8") as f:
                raw = json.load(f)
        except (OSError, ValueError):
            return CompilationDatabase(path, ())
        entries = [e for item in (raw if isinstance(raw, list) else []) for e in _entry(item, path)]
        return CompilationDatabase(path, tuple(entries))

    def flags_for(self, file: str) -> CompileFlags:
        target = os.path.normpath(os.path.abspath(file))
        best: tuple[int, CompileFlags] | None = None
        for entry_file, flags in self.entries:
            if entry_file == target:
                return flags
            score = len(os.path.commonpath([entry_file, target])) if entry_file else 0
            if best is None or score > best[0]:
                best = (score, flags)
        return best[1] if best is not None else CompileFlags(source=self.path)


def _entry(item: object, db_path: str) -> Iterator[tuple[str, CompileFlags]]:
    if not isinstance(item, dict):
        return
    directory = item.get("directory")
    file = item.get("file")
    if not isinstance(directory, str) or not isinstance(file, str):
        return
    args = item.get("arguments")
    if not (isinstance(args, list) and all(isinstance(a, str) for a in args)):
        command = item.get("command")
        if not isinstance(command, str):
            return
        try:
            args = shlex.split(command)
        except ValueError:
            return
    full = os.path.normpath(os.path.join(directory, file))
    yield full, parse_flags(args[1:], directory, db_path)


def parse_flags(args: Sequence[str], directory: str, source: str = "") -> CompileFlags:
    """Keep the flags of a compiler command line that matter for parsing."""
    includes: list[str] = []
    defines: list[str] = []
    extra: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        flag, value = _split_value_flag(arg)
        if flag is not None:
            if value == "" and i + 1 < len(args):
                i += 1
                value = args[i]
            if flag == "-I":
                includes.append(_absolute(value, directory))
            elif flag == "-D":
                defines.append(value)
            elif flag in _DIR_FLAGS or flag == "-include":
                extra += [flag, _absolute(value, directory)]
            else:  # -U
                extra.append(f"-U{value}")
        elif arg.startswith(_KEPT_PREFIXES):
            extra.append(arg)
        i += 1
    return CompileFlags(tuple(includes), tuple(defines), tuple(extra), source)


def _split_value_flag(arg: str) -> tuple[str | None, str]:
    for flag in sorted(_VALUE_FLAGS, key=len, reverse=True):
        if arg == flag:
            return flag, ""
        if arg.startswith(flag) and flag in ("-I", "-D", "-U"):
            return flag, arg[len(flag) :]
    return None, ""


def _absolute(path: str, directory: str) -> str:
    return os.path.normpath(os.path.join(directory, path))


def find_database(file: str | os.PathLike[str]) -> str | None:
    """The ``compile_commands.json`` clangd would use for `file`, or None."""
    here = Path(os.path.abspath(file)).parent
    for directory in (here, *here.parents):
        for sub in _SEARCH_SUBDIRS:
            candidate = directory / sub / DATABASE_NAME
            if candidate.is_file():
                return str(candidate)
    return None


class DatabaseCache:
    """Databases by path, reloaded when the file's modification time changes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loaded: dict[str, tuple[float, CompilationDatabase]] = {}

    def flags_for(self, file: str) -> CompileFlags:
        db_path = find_database(file)
        if db_path is None:
            return NO_FLAGS
        try:
            mtime = os.stat(db_path).st_mtime
        except OSError:
            return NO_FLAGS
        with self._lock:
            known = self._loaded.get(db_path)
            if known is None or known[0] != mtime:
                known = (mtime, CompilationDatabase.load(db_path))
                self._loaded[db_path] = known
        return known[1].flags_for(file)
