"""PPCG's ``--sizes`` option: tile, block and grid sizes per kernel, in isl's union-map syntax.

``{kernel[0]->tile[32,32]; kernel[0]->block[32,8]; kernel[i]->tile[16,16]}`` gives kernel 0 tiles of
32x32 and blocks of 32x8 threads, and every other kernel 16x16 tiles. A variable index (``kernel[i]``)
means every kernel; a numbered entry overrides it for its kernel (`sizes_for`).

A small recursive-descent parser rather than isl: isl would accept sets with constraints
(``kernel[i] -> tile[32] : i > 2``) that PPCG's users rarely mean, and its errors have no columns.
Errors are `SizesError`s for the user: ``--sizes: expected `tile`, `block` or `grid` after `->` at
column 14 (found `tiles`)``. Columns are 1-based.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from core_compiler.errors import SizesError

Sizes = dict[int | None, dict[str, tuple[int, ...]]]
"""Kernel index (None: every kernel) -> {"tile" | "block" | "grid": sizes, outermost first}."""

KINDS = ("tile", "block", "grid")
MAX_DIMS = {"block": 3, "grid": 2}  # CUDA's thread block has 3 dimensions; PPCG maps 2 to the grid

_TOKEN = re.compile(
    r"\s*(?:(?P<name>[A-Za-z_]\w*)|(?P<int>\d+)|(?P<punct>->|[{}\[\];,])|(?P<bad>\S))"
)


@dataclass(frozen=True)
class _Token:
    kind: str  # "name" | "int" | "punct" | "bad" | "end"
    text: str
    col: int  # 1-based


def _tokens(text: str) -> list[_Token]:
    out: list[_Token] = []
    pos = 0
    while True:
        m = _TOKEN.match(text, pos)
        if m is None:  # only whitespace left
            return [*out, _Token("end", "", len(text) + 1)]
        kind = m.lastgroup or "bad"
        out.append(_Token(kind, m.group(kind), m.start(kind) + 1))
        pos = m.end()


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = _tokens(text)
        self.pos = 0
        self.sizes: Sizes = {}
        self.seen: dict[tuple[int | None, str], int] = {}

    def peek(self) -> _Token:
        return self.tokens[self.pos]

    def fail(self, expected: str, at: _Token | None = None) -> SizesError:
        tok = at or self.peek()
        found = "the end" if tok.kind == "end" else f"`{tok.text}`"
        return SizesError(f"--sizes: expected {expected} at column {tok.col} (found {found})")

    def expect(self, text: str, expected: str | None = None) -> _Token:
        tok = self.peek()
        if tok.text != text or tok.kind not in ("punct", "name"):
            raise self.fail(expected or f"`{text}`")
        self.pos += 1
        return tok

    def integer(self, what: str) -> int:
        tok = self.peek()
        if tok.kind != "int":
            raise self.fail(what)
        self.pos += 1
        return int(tok.text)

    def parse(self) -> Sizes:
        self.expect("{", "`{`")
        if self.peek().text != "}":
            self.entry()
            while self.peek().text == ";":
                self.pos += 1
                if self.peek().text == "}":
                    break
                self.entry()
        self.expect("}", "`;` or `}`")
        extra = self.peek()
        if extra.kind != "end":
            raise SizesError(f"--sizes: unexpected `{extra.text}` after the closing `}}` at column {extra.col}")
        return self.sizes

    def entry(self) -> None:
        self.expect("kernel", "`kernel`")
        self.expect("[", "`[` after `kernel`")
        kernel = self.kernel_index()
        self.expect("]", "`]` after the kernel index")
        self.expect("->", "`->` after `kernel[...]`")
        kind_tok = self.peek()
        if kind_tok.kind != "name" or kind_tok.text not in KINDS:
            raise self.fail("`tile`, `block` or `grid` after `->`")
        self.pos += 1
        values = self.values(kind_tok)
        self.record(kernel, kind_tok, values)

    def kernel_index(self) -> int | None:
        tok = self.peek()
        if tok.kind == "name":
            self.pos += 1
            return None
        return self.integer("a kernel number or a variable such as `i` in `kernel[...]`")

    def values(self, kind_tok: _Token) -> tuple[int, ...]:
        kind = kind_tok.text
        self.expect("[", f"`[` after `{kind}`")
        values = [self.size(kind)]
        while self.peek().text == ",":
            self.pos += 1
            values.append(self.size(kind))
        self.expect("]", f"`,` or `]` in the `{kind}` sizes")
        limit = MAX_DIMS.get(kind)
        if limit is not None and len(values) > limit:
            raise SizesError(
                f"--sizes: `{kind}` takes at most {limit} sizes, got {len(values)} at column {kind_tok.col}"
            )
        return tuple(values)

    def size(self, kind: str) -> int:
        tok = self.peek()
        value = self.integer(f"a positive integer in the `{kind}` sizes")
        if value <= 0:
            raise SizesError(f"--sizes: {kind} sizes must be positive, got {value} at column {tok.col}")
        return value

    def record(self, kernel: int | None, kind_tok: _Token, values: tuple[int, ...]) -> None:
        key = (kernel, kind_tok.text)
        if key in self.seen:
            who = "every kernel" if kernel is None else f"kernel {kernel}"
            raise SizesError(
                f"--sizes: `{kind_tok.text}` of {who} is given twice, at columns {self.seen[key]} "
                f"and {kind_tok.col}"
            )
        self.seen[key] = kind_tok.col
        self.sizes.setdefault(kernel, {})[kind_tok.text] = values


def parse_sizes(text: str) -> Sizes:
    """Parse a ``--sizes`` string; raises `SizesError` with the column of the first bad part.

    >>> parse_sizes("{kernel[0]->tile[32,32]; kernel[i]->block[16]}")
    {0: {'tile': (32, 32)}, None: {'block': (16,)}}
    """
    return _Parser(text).parse()


def sizes_for(sizes: Mapping[int | None, Mapping[str, tuple[int, ...]]], kernel: int) -> dict[str, tuple[int, ...]]:
    """The sizes of kernel `kernel`: the every-kernel entry, overridden kind by kind by its own.

    >>> sizes_for({None: {"tile": (16, 16), "block": (8,)}, 1: {"tile": (64,)}}, 1)
    {'tile': (64,), 'block': (8,)}
    """
    return {**sizes.get(None, {}), **sizes.get(kernel, {})}


def format_sizes(sizes: Mapping[int | None, Mapping[str, tuple[int, ...]]]) -> str:
    """The ``--sizes`` text of `sizes` (every-kernel entries as ``kernel[i]``); `parse_sizes` inverts it."""
    entries = []
    for kernel in sorted(sizes, key=lambda k: (k is not None, k or 0)):
        index = "i" if kernel is None else str(kernel)
        for kind in KINDS:
            if kind in sizes[kernel]:
                values = ",".join(map(str, sizes[kernel][kind]))
                entries.append(f"kernel[{index}]->{kind}[{values}]")
    return "{" + "; ".join(entries) + "}"
