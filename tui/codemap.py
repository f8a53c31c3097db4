"""Which lines of generated code come from which source statement.

Generated C, CUDA and OpenCL print each statement instance as the source statement with its
subscripts rewritten (``C[i][j] += alpha * A[i][k] * B[k][j]`` becomes
``private_C[...][...] += ((alpha * shared_A[...][...]) * shared_B[...][...]);``). So a statement is
recognised by its *shape*: the text with every subscript, parenthesis and blank removed and the
promotion prefixes (``shared_``, ``private_``) dropped; both of those read ``C+=alpha*A*B``.

What this covers: the lines that execute a SCoP statement (in every kernel, phase and tile).
What it does not: loops, copies between global and promoted memory, launches (they come from the
schedule, not from one statement), and LLVM IR and PTX, which carry no statement text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from explorer.api import FunctionAnalysis, SourceRange

_SUBSCRIPT = re.compile(r"\[[^\[\]]*\]")
_PROMOTED = re.compile(r"\b(?:shared|private)_(?=[A-Za-z_])")
_NOISE = re.compile(r"[\s();{}]")


def statement_key(text: str) -> str:
    """`C[i][j] = 0.0;` and `private_C[(c0) / 16][0] = 0.0;` both give `C=0.0`."""
    previous = None
    while previous != text:
        previous, text = text, _SUBSCRIPT.sub("", text)
    return _NOISE.sub("", _PROMOTED.sub("", text))


@dataclass(frozen=True)
class StatementSpan:
    """One SCoP statement: where it is in the source and its shape."""

    name: str  # "S1", or "1:S0" for the second SCoP of the function
    line: int
    end_line: int
    key: str


def range_text(text: str, r: SourceRange) -> str:
    """The source text of `r` (clang columns count bytes; the end column is exclusive)."""
    lines = text.encode("utf-8").split(b"\n")[r.line - 1 : r.end_line]
    if not lines:
        return ""
    if len(lines) == 1:
        return lines[0][r.col - 1 : r.end_col - 1].decode("utf-8", "replace")
    lines[-1] = lines[-1][: r.end_col - 1]
    lines[0] = lines[0][r.col - 1 :]
    return b"\n".join(lines).decode("utf-8", "replace")


def statement_spans(fa: FunctionAnalysis, text: str) -> tuple[StatementSpan, ...]:
    spans = []
    for sa in fa.scops:
        prefix = f"{sa.scop.index}:" if sa.scop.index else ""
        for st in sa.scop.statements:
            key = statement_key(range_text(text, st.range))
            if "=" in key:  # every statement assigns; anything else would match at random
                spans.append(StatementSpan(prefix + st.name, st.range.line, st.range.end_line, key))
    return tuple(spans)


def generated_lines(code: str, spans: Iterable[StatementSpan]) -> dict[str, tuple[int, ...]]:
    """Statement name -> the 1-based lines of `code` that execute it."""
    by_key: dict[str, list[str]] = {}
    for s in spans:
        by_key.setdefault(s.key, []).append(s.name)
    found: dict[str, list[int]] = {}
    for number, line in enumerate(code.splitlines(), start=1):
        for name in by_key.get(statement_key(line), ()):
            found.setdefault(name, []).append(number)
    return {name: tuple(lines) for name, lines in found.items()}


def statements_at(spans: Iterable[StatementSpan], line: int) -> tuple[str, ...]:
    return tuple(s.name for s in spans if s.line <= line <= s.end_line)


def lines_for(statements: Iterable[str], mapping: Mapping[str, tuple[int, ...]]) -> set[int]:
    return {n for s in statements for n in mapping.get(s, ())}
