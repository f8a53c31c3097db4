"""compile_commands.json lookup (as clangd does it) and flag extraction."""

from __future__ import annotations

import json
import os
from pathlib import Path

from explorer.compile_commands import CompilationDatabase, DatabaseCache, find_database, parse_flags
from explorer.workspace import Workspace


def _project(tmp_path: Path, entries: list[dict[str, object]], where: str = "build") -> Path:
    (tmp_path / "src" / "deep").mkdir(parents=True)
    db_dir = tmp_path / where
    db_dir.mkdir(exist_ok=True)
    (db_dir / "compile_commands.json").write_text(json.dumps(entries))
    return db_dir / "compile_commands.json"


def test_found_in_a_parent_or_its_build_directory(tmp_path: Path) -> None:
    db = _project(tmp_path, [], where="build")
    assert find_database(tmp_path / "src" / "deep" / "x.c") == str(db)
    top = tmp_path / "src" / "compile_commands.json"
    top.write_text("[]")
    assert find_database(tmp_path / "src" / "deep" / "x.c") == str(top)  # the nearest wins
    assert find_database("/") is None or not str(find_database("/")).startswith(str(tmp_path))


def test_flags_from_command_and_arguments(tmp_path: Path) -> None:
    b = str(tmp_path / "build")
    db_path = _project(tmp_path, [
        {"directory": b, "file": "../src/a.c",
         "command": 'cc -I../include -I /abs/inc -DN=10 -D "M=2" -UX -isystem ../sys -std=c99 -O2 -Wall -c ../src/a.c'},
        {"directory": b, "file": str(tmp_path / "src" / "deep" / "b.c"),
         "arguments": ["clang", "-DDEEP", "-include", "pre.h", "-fopenmp", "-o", "b.o", "b.c"]},
        {"directory": 3, "file": "broken entry"},
        "not even an object",
    ])  # fmt: skip
    db = CompilationDatabase.load(db_path)
    a = db.flags_for(str(tmp_path / "src" / "a.c"))
    assert a.include_dirs == (str(tmp_path / "include"), "/abs/inc")
    assert a.defines == ("N=10", "M=2")
    assert a.extra_args == ("-UX", "-isystem", str(tmp_path / "sys"), "-std=c99")
    b_flags = db.flags_for(str(tmp_path / "src" / "deep" / "b.c"))
    assert b_flags.defines == ("DEEP",)
    assert b_flags.extra_args == ("-include", os.path.join(b, "pre.h"), "-fopenmp")
    # a file with no entry borrows from the entry with the longest common path
    assert db.flags_for(str(tmp_path / "src" / "deep" / "new.c")).defines == ("DEEP",)


def test_a_malformed_database_gives_no_flags(tmp_path: Path) -> None:
    (tmp_path / "compile_commands.json").write_text("{ not json")
    assert DatabaseCache().flags_for(str(tmp_path / "x.c")).defines == ()


def test_the_cache_reloads_a_changed_database(tmp_path: Path) -> None:
    src = tmp_path / "x.c"
    entry = {"directory": str(tmp_path), "file": "x.c", "command": "cc -DA=1 -c x.c"}
    db = tmp_path / "compile_commands.json"
    db.write_text(json.dumps([entry]))
    cache = DatabaseCache()
    assert cache.flags_for(str(src)).defines == ("A=1",)
    db.write_text(json.dumps([{**entry, "command": "cc -DA=2 -c x.c"}]))
    os.utime(db, (1e9, 1e9))  # a different mtime even on coarse-grained file systems
    assert cache.flags_for(str(src)).defines == ("A=2",)


def test_parse_flags_keeps_only_what_parsing_needs() -> None:
    flags = parse_flags(["-O3", "-g", "-o", "out", "-Iinc", "-DX", "-c", "f.c"], "/w")
    assert (flags.include_dirs, flags.defines, flags.extra_args) == (("/w/inc",), ("X",), ())


def test_the_workspace_parses_with_the_database_flags(tmp_path: Path) -> None:
    src = tmp_path / "k.c"
    src.write_text("#ifndef N\n#error need N\n#endif\nint a[N];\n")
    entry = {"directory": str(tmp_path), "file": "k.c", "command": "cc -DN=3 -c k.c"}
    (tmp_path / "compile_commands.json").write_text(json.dumps([entry]))
    ws = Workspace()
    doc = ws.open_file(str(src))
    assert ws.analyze(doc.uri).remarks == ()
    off = Workspace(use_compile_commands=False)
    doc = off.open_file(str(src))
    assert [r.name for r in off.analyze(doc.uri).remarks] == ["SyntaxError", "SyntaxError"]
