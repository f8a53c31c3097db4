"""A declaration that shadows a name of an enclosing scope is a variable of its own::

    for (int c2 = 0; c2 < m; c2 += 32)            for (int c2 = 0; c2 < m; c2 += 32)
      for (int c2 = T2; c2 <= T2 + 31; c2++)  ->    for (int c2_1 = T2; c2_1 <= T2 + 31; c2_1++)
        B[c2] += A[c2];                               B[c2_1] += A[c2_1];

Legal C (and C++), as hexplore's own double-buffered CUDA writes it. The loop IR names a variable
by its spelling, so the inner declaration gets a name unused in the function (``c2_1``) and every
reference to it follows its declaration; ranges stay the source's. Declarations in sibling scopes
(``for (int i ...) ...; for (int i ...) ...``) do not shadow each other and keep their names.
"""

from __future__ import annotations

from collections.abc import Iterable

import clang.cindex as ci

K = ci.CursorKind

# the statements whose children are a scope of their own (C99 6.8.2, 6.8.4, 6.8.5)
_SCOPES = {K.COMPOUND_STMT, K.FOR_STMT, K.IF_STMT, K.WHILE_STMT, K.DO_STMT, K.SWITCH_STMT}


def shadowing_names(body: ci.Cursor, params: Iterable[str]) -> dict[int, str]:
    """The new name of each local declaration in the function body `body` that shadows a
    parameter (`params`) or a local of an enclosing scope, by its cursor's hash; {} when none does
    (the common case: only statements are walked, not expressions)."""
    shadowing: list[ci.Cursor] = []
    _walk(body, [set(params)], shadowing)
    if not shadowing:
        return {}
    taken = {t.spelling for t in body.get_tokens()} | set(params)
    out: dict[int, str] = {}
    for decl in shadowing:
        k = 1
        while f"{decl.spelling}_{k}" in taken:
            k += 1
        out[decl.hash] = f"{decl.spelling}_{k}"
        taken.add(out[decl.hash])
    return out


def _walk(cur: ci.Cursor, scopes: list[set[str]], shadowing: list[ci.Cursor]) -> None:
    for child in cur.get_children():
        kind = child.kind
        if kind == K.VAR_DECL:
            if any(child.spelling in s for s in scopes):
                shadowing.append(child)
            scopes[-1].add(child.spelling)
        elif kind in _SCOPES:
            scopes.append(set())
            _walk(child, scopes, shadowing)
            scopes.pop()
        elif kind.is_statement() or kind == K.DECL_STMT:
            _walk(child, scopes, shadowing)
