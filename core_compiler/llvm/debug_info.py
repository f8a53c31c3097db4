"""Debug locations: the instructions of a statement instance carry the statement's source line.

One `DebugInfo` per module: a ``DIFile`` of the SCoP's file (named as its range names it, so the
IR does not depend on the working directory), a ``DICompileUnit``, the module flags, and a
``DISubprogram`` for each function that holds a statement or calls one that does, made on first
use. `AstLowering.user` lowers a statement instance under `statement`, which points the builder's
instructions at ``!DILocation(line, column)`` of the statement's first character; nothing else
carries a location, except calls between hexplore's own functions (at the SCoP's line), which the
verifier requires once both ends have a subprogram. `locations` is the table that says which
location is which statement (`core_compiler/source_map.py` reads the IR and PTX through it).

On NVPTX the compile unit is ``DebugDirectivesOnly`` (``.file``/``.loc`` and no DWARF sections,
what clang's ``-gline-tables-only`` emits for CUDA devices, DWARF 2); on the CPU
``LineTablesOnly`` (DWARF 4).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import llvmlite.ir as ir

from core_compiler.scop.model import Scop, Statement
from core_compiler.source_map import StatementLocation

I32 = ir.IntType(32)
MODULE_FLAG_WARNING, MODULE_FLAG_MAX = 2, 7  # llvm::Module::ModFlagBehavior


class DebugInfo:
    def __init__(self, module: ir.Module, scop: Scop, nvptx: bool = False) -> None:
        self.module = module
        self.scop = scop
        path = scop.range.file
        self.file = module.add_debug_info(
            "DIFile", {"filename": os.path.basename(path), "directory": os.path.dirname(path)}
        )
        kind = "DebugDirectivesOnly" if nvptx else "LineTablesOnly"
        self.unit = module.add_debug_info("DICompileUnit", {
            "language": ir.DIToken("DW_LANG_C99"), "file": self.file, "producer": "hexplore",
            "isOptimized": True, "runtimeVersion": 0, "emissionKind": ir.DIToken(kind),
        }, is_distinct=True)  # fmt: skip
        module.add_named_metadata("llvm.dbg.cu", self.unit)
        flags = [(MODULE_FLAG_WARNING, "Debug Info Version", 3), (MODULE_FLAG_MAX, "Dwarf Version", 2 if nvptx else 4)]
        for behavior, name, value in flags:
            module.add_named_metadata("llvm.module.flags", [ir.Constant(I32, behavior), name, ir.Constant(I32, value)])
        self._type = module.add_debug_info("DISubroutineType", {"types": module.add_metadata([None])})
        self._subprograms: dict[str, ir.DIValue] = {}
        self._at: dict[tuple[str, str], ir.DIValue] = {}  # (function, statement) -> location
        self.locations: list[StatementLocation] = []

    def subprogram(self, fn: ir.Function) -> ir.DIValue:
        sp = self._subprograms.get(fn.name)
        if sp is None:
            line = self.scop.range.line
            sp = self.module.add_debug_info("DISubprogram", {
                "name": fn.name, "scope": self.file, "file": self.file, "line": line, "scopeLine": line,
                "type": self._type, "spFlags": ir.DIToken("DISPFlagDefinition | DISPFlagOptimized"),
                "unit": self.unit,
            }, is_distinct=True)  # fmt: skip
            fn.set_metadata("dbg", sp)
            self._subprograms[fn.name] = sp
        return sp

    def _location(self, fn: ir.Function, stmt: Statement | None) -> ir.DIValue:
        key = (fn.name, stmt.name if stmt else "")
        loc = self._at.get(key)
        if loc is None:
            r = stmt.range if stmt else self.scop.range
            scope = self.subprogram(fn)
            loc = self.module.add_debug_info("DILocation", {"line": r.line, "column": r.col, "scope": scope})
            self._at[key] = loc
            if stmt is not None:
                self.locations.append(StatementLocation(str(loc.get_reference()), self.scop.name, stmt.name, r))
        return loc

    @contextlib.contextmanager
    def statement(self, b: ir.IRBuilder, stmt: Statement) -> Iterator[None]:
        """What `b` emits inside carries `stmt`'s location."""
        with self._located(b, self._location(b.function, stmt)):
            yield

    def call(self, b: ir.IRBuilder, callee: ir.Function, args: list[ir.Value]) -> ir.Instruction:
        """A call to one of the module's functions, located at the SCoP (both ends get a
        subprogram: an inlined callee's locations then know where they were inlined)."""
        self.subprogram(callee)
        with self._located(b, self._location(b.function, None)):
            return b.call(callee, args)

    @staticmethod
    @contextlib.contextmanager
    def _located(b: ir.IRBuilder, loc: ir.DIValue) -> Iterator[None]:
        saved = b.debug_metadata
        b.debug_metadata = loc
        try:
            yield
        finally:
            b.debug_metadata = saved
