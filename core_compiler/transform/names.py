"""The names generated code declares, kept apart from the user's.

Kernels declare block ids ``b0, b1``, thread ids ``t0…``, tile origins ``T0…``, loop counters
``c0…``; the isl sets they come from also name the values of host loops ``h0…``, first blocks
``o0…`` and set dimensions ``x0…``, ``y0…``, ``a0…`` next to the program's own parameters. C as
people write it uses such names too (PolyBench's deriche has a scalar ``b1``), and a clash either
fails to compile or, worse, makes isl read a user's parameter ``t0`` as the thread id. So each
family's prefix is the first of ``b``, ``hx_b``, ``hx0_b``, … that names nothing in the code.
The copies of an array ``A`` in shared memory, in registers and on the device are
``shared_A``, ``private_A``, ``dev_A`` and ``transposed_A`` (`codegen/layouts.py`), or ``hx_shared_A``, … where the code has such a name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import islpy as isl

from core_compiler.frontend import ir

FAMILIES = "btTXhocxya"
WORDS = ("shared", "private", "dev", "transposed")  # before ``_<array>``: the array's copies
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_MAX_COUNTERS = 64  # loop counters named per AST (isl picks its own names past these)


def free_prefix(base: str, taken: Iterable[str]) -> str:
    """`base`, or ``hx_<base>``, ``hx0_<base>``, … : the first that no name in `taken` is followed by digits."""
    used = {m[1] for t in taken if (m := re.fullmatch(r"(\w*?)\d+", t))}
    candidates = (base, f"hx_{base}", *(f"hx{k}_{base}" for k in range(1000)))
    return next(p for p in candidates if p not in used)


def free_word(base: str, taken: Iterable[str]) -> str:
    """`base`, or ``hx_<base>``, ``hx0_<base>``, … : the first that no name in `taken` begins with, then ``_``."""
    taken = tuple(taken)
    candidates = (base, f"hx_{base}", *(f"hx{k}_{base}" for k in range(1000)))
    return next(p for p in candidates if not any(t.startswith(f"{p}_") for t in taken))


@dataclass(frozen=True)
class Names:
    """A prefix per family (`FAMILIES`); ``names("b", 1)`` is ``b1`` unless the user has a ``b1``."""

    prefixes: dict[str, str] = field(default_factory=lambda: {f: f for f in (*FAMILIES, *WORDS)}, hash=False)

    def __call__(self, family: str, k: int) -> str:
        return f"{self.prefixes[family]}{k}"

    def copy(self, word: str, array: str) -> str:
        """The name of `array`'s copy `word` (`WORDS`): ``shared_A``."""
        return f"{self.prefixes[word]}_{array}"

    def seq(self, family: str, n: int) -> list[str]:
        return [self(family, k) for k in range(n)]

    def ast_build(self, context: isl.Set) -> isl.AstBuild:
        """An AST build whose loop counters are this family ``c``."""
        ids = isl.IdList.alloc(context.get_ctx(), _MAX_COUNTERS)
        for name in self.seq("c", _MAX_COUNTERS):
            ids = ids.add(isl.Id(name, context=context.get_ctx()))
        return isl.AstBuild.from_context(context).set_iterators(ids)


PLAIN = Names()


def names_avoiding(taken: Iterable[str]) -> Names:
    taken = frozenset(taken)
    return Names({**{f: free_prefix(f, taken) for f in FAMILIES}, **{w: free_word(w, taken) for w in WORDS}})


def identifiers(stmts: Iterable[ir.Stmt]) -> Iterator[str]:
    """Every name the statements use: variables, arrays, functions, declared names."""
    for s in stmts:
        if isinstance(s, ir.Decl):
            yield s.name
        if isinstance(s, ir.For):
            yield s.var
        for e in _expressions(s):
            yield from _IDENTIFIER.findall(str(e))
        yield from identifiers(ir.sub_statements(s))


def _expressions(s: ir.Stmt) -> tuple[ir.Expr, ...]:
    if isinstance(s, ir.Assign):
        return (s.target, s.value)
    if isinstance(s, ir.Decl | ir.Jump):
        return () if (e := s.init if isinstance(s, ir.Decl) else s.value) is None else (e,)
    if isinstance(s, ir.For):
        return (s.init, s.cond)
    if isinstance(s, ir.If):
        return (s.cond,)
    return (s.expr,) if isinstance(s, ir.ExprStmt) else ()
