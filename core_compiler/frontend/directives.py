"""``#pragma hexplore`` lines: the user's say on where a loop nest runs, written above it.

    #pragma hexplore gpu                      offload, whatever the profitability model says
    #pragma hexplore gpu block(32, 8)         ... with 32x8 threads per block (x first)
    #pragma hexplore gpu block(32, 8) tile(64, 64)   ... and 64x64 tiles (outermost loop first)
    #pragma hexplore cpu                      keep it on the CPU

libclang keeps no pragma it does not know in its AST, so they are read from the text of the
function: a line whose first tokens are ``#pragma hexplore``. Each applies to the code on the next
line that is not blank, a comment or another pragma (`ir.Directive.below`); the analysis ties
it to the modeled loop nest whose outer loop starts there (`transform/directives.py`). A line it
cannot read is an `ir.DirectiveProblem` (a ``MalformedDirective`` remark) with the exact range of
the word at fault and what is accepted; other pragmas are not read here.

Example::

    found, bad = read_directives(lines, "f.c", 3, 9)   # the lines of the file, the function's
    found[0].kind, found[0].block, found[0].loop_line   # ("gpu", (32, 8), 6)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from core_compiler.frontend import ir
from core_compiler.source import SourceRange

MAX_BLOCK_DIMS = 3  # a GPU's thread block has three dimensions
ACCEPTED = (
    "hexplore accepts `#pragma hexplore gpu`, `#pragma hexplore gpu block(32, 8)` "
    "(optionally with `tile(64, 64)`) and `#pragma hexplore cpu`"
)
_PRAGMA = re.compile(r"^\s*#\s*pragma\s+hexplore\b")
_OTHER_PRAGMA = re.compile(r"^\s*#\s*pragma\b")
_TOKEN = re.compile(r"\s*(?:(?P<comment>//|/\*)|(?P<word>[A-Za-z_]\w*)|(?P<int>\d+)|(?P<punct>[(),])|(?P<bad>\S))")


@dataclass(frozen=True)
class _Token:
    kind: str  # "word" | "int" | "punct" | "bad" | "end"
    text: str
    col: int  # 1-based byte column
    end_col: int


class _Malformed(Exception):
    def __init__(self, message: str, at: _Token) -> None:
        super().__init__(message)
        self.at = at


def read_directives(
    lines: Sequence[str], path: str, first: int, last: int
) -> tuple[tuple[ir.Directive, ...], tuple[ir.DirectiveProblem, ...]]:
    """The ``#pragma hexplore`` lines among `lines` `first`..`last` (1-based) of `path`, and the
    problem of each it cannot read."""
    found: list[ir.Directive] = []
    bad: list[ir.DirectiveProblem] = []
    for number in range(first, min(last, len(lines)) + 1):
        line = lines[number - 1]
        if not _PRAGMA.match(line):
            continue
        try:
            found.append(_directive(line, path, number, _below(lines, path, number, last)))
        except _Malformed as e:
            r = SourceRange(path, number, e.at.col, number, e.at.end_col)
            bad.append(ir.DirectiveProblem(f"{e}: {ACCEPTED}", r))
    return tuple(found), tuple(bad)


def _below(lines: Sequence[str], path: str, number: int, last: int) -> SourceRange | None:
    """The text of the first line below `number` (up to `last`) that is neither blank, a comment
    nor a pragma; None where there is none."""
    for k in range(number, min(last, len(lines))):
        text = lines[k].strip()
        if text and not text.startswith(("//", "/*", "*")) and not _OTHER_PRAGMA.match(text):
            line = lines[k]
            start = len(line[: len(line) - len(line.lstrip())].encode()) + 1
            return SourceRange(path, k + 1, start, k + 1, len(line.rstrip().encode()) + 1)
    return None


def _directive(line: str, path: str, number: int, below: SourceRange | None) -> ir.Directive:
    tokens = _tokens(line)
    hexplore = next(k for k, t in enumerate(tokens) if t.text == "hexplore")
    rest = tokens[hexplore + 1 :]
    kind = rest[0]
    if kind.text not in ("gpu", "cpu"):
        what = "" if kind.kind == "end" else f" (found `{kind.text}`)"
        raise _Malformed(f"`#pragma hexplore` must be followed by `gpu` or `cpu`{what}", _shown(kind, tokens))
    clauses = _clauses(rest[1:], kind.text, tokens)
    end = tokens[-2].end_col if len(tokens) > 1 else len(line.encode()) + 1
    start = len(line) - len(line.lstrip())
    rng = SourceRange(path, number, start + 1, number, end)
    text = line.encode()[start : end - 1].decode()
    return ir.Directive(kind.text, text, rng, below, clauses.get("block", ()), clauses.get("tile", ()))


def _clauses(tokens: list[_Token], kind: str, all_tokens: list[_Token]) -> dict[str, tuple[int, ...]]:
    out: dict[str, tuple[int, ...]] = {}
    k = 0
    while tokens[k].kind != "end":
        t = tokens[k]
        if kind == "cpu":
            raise _Malformed(f"`#pragma hexplore cpu` takes nothing after it (found `{t.text}`)", t)
        if t.text not in ("block", "tile"):
            raise _Malformed(f"`#pragma hexplore gpu` takes `block(...)` and `tile(...)`, not `{t.text}`", t)
        if t.text in out:
            raise _Malformed(f"`{t.text}(...)` is given twice", t)
        values, k = _sizes(tokens, k + 1, t.text, all_tokens)
        out[t.text] = values
    return out


def _sizes(tokens: list[_Token], k: int, clause: str, all_tokens: list[_Token]) -> tuple[tuple[int, ...], int]:
    """The integers of ``(32, 8)`` from `tokens[k]`, and the index past the ``)``."""
    _expect(tokens[k], "(", f"`(` after `{clause}`", all_tokens)
    values: list[int] = []
    k += 1
    while True:
        t = tokens[k]
        if t.kind != "int":
            raise _Malformed(f"`{clause}(...)` takes positive integers, separated by commas; found {_found(t)}", _shown(t, all_tokens))
        if int(t.text) < 1:
            raise _Malformed(f"a {clause} size must be at least 1, not {t.text}", t)
        values.append(int(t.text))
        if clause == "block" and len(values) > MAX_BLOCK_DIMS:
            raise _Malformed(f"a block has at most {MAX_BLOCK_DIMS} dimensions (x, y, z)", t)
        if tokens[k + 1].text == ")":
            return tuple(values), k + 2
        _expect(tokens[k + 1], ",", f"`,` or `)` in `{clause}(...)`", all_tokens)
        k += 2


def _expect(t: _Token, text: str, what: str, all_tokens: list[_Token]) -> None:
    if t.text != text or t.kind != "punct":
        raise _Malformed(f"expected {what}, found {_found(t)}", _shown(t, all_tokens))


def _found(t: _Token) -> str:
    return "the end of the line" if t.kind == "end" else f"`{t.text}`"


def _shown(t: _Token, tokens: list[_Token]) -> _Token:
    """The token a remark points at: `t`, or the last one where `t` is the end of the line."""
    return tokens[-2] if t.kind == "end" and len(tokens) > 1 else t


def _tokens(line: str) -> list[_Token]:
    """The tokens of `line` up to a comment, then an "end" token; columns in bytes."""
    out: list[_Token] = []
    pos = 0
    while (m := _TOKEN.match(line, pos)) is not None and m.lastgroup != "comment":
        kind = m.lastgroup or "bad"
        col = len(line[: m.start(kind)].encode()) + 1
        out.append(_Token(kind, m.group(kind), col, col + len(m.group(kind).encode())))
        pos = m.end()
    end = len(line.rstrip().encode()) + 1
    return [*out, _Token("end", "", end, end)]
