"""C/CUDA front end: libclang translation units lowered to hexplore's immutable loop IR."""

from __future__ import annotations

from dataclasses import dataclass

from core_compiler.frontend.clang_parse import ParseOptions, diagnostics_as_remarks, parse
from core_compiler.frontend.ir import Function
from core_compiler.frontend.lower import Lowerer
from core_compiler.remarks import Remark

__all__ = ["FrontendResult", "ParseOptions", "run_frontend"]


@dataclass(frozen=True)
class FrontendResult:
    path: str
    text: str
    functions: tuple[Function, ...]
    remarks: tuple[Remark, ...]  # syntax errors, with ranges


def run_frontend(path: str, text: str | None = None, options: ParseOptions | None = None) -> FrontendResult:
    """Parse and lower every function defined in `path` (from `text` when given).

    Raises OSError only when `text` is None and the file cannot be read.
    """
    if text is None:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    tu = parse(path, text, options or ParseOptions())
    functions = Lowerer(path, text).functions(tu)
    return FrontendResult(path, text, tuple(functions), tuple(diagnostics_as_remarks(tu, path)))
