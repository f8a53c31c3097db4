"""Loop-invariant array elements, for scalar replacement in the CPU code.

An element that a loop touches at one address throughout — the accumulator ``table[i][j]`` of
nussinov's ``k`` loop, ``C[i][j]`` of a matrix product's ``k`` loop, ``x[i]`` of a triangular
solve — can live in a register for the whole loop: loaded before it, stored after it. LLVM does
this itself only when it can tell the element apart from every other access in the loop, and it
cannot when the same array is read elsewhere in the loop (``table[k+1][j]`` might be
``table[i][j]`` for all its alias analysis knows). isl can: `invariant_elements` runs while the
AST of a loop is built and, for each array, looks for one element that

- the loop's accesses reach as a function of the enclosing loops alone (it does not move with
  this loop or any loop inside it),
- is accessed on every iteration point of the enclosing loops at which the loop runs (so loading
  it before the loop reads nothing the program would not read), and
- every other access of the array in the loop provably never reaches.

The accesses that reach it are then redirected to the register by the LLVM lowering
(`llvm/ast_lower.py`), which also guards the load and store with the loop's first test, so a
loop that runs no iteration touches nothing.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import islpy as isl

from core_compiler.scop.model import Access, Scop
from core_compiler.scop.region import AccessInfo

_OUT = isl.dim_type.out


@dataclass(frozen=True, eq=False)
class InvariantElement:
    array: str
    index: tuple[isl.AstExpr, ...]  # the element's subscripts, in the enclosing loops' iterators
    accesses: frozenset[tuple[str, AccessInfo]]  # (statement, access) of every access reaching it
    written: bool  # some of them store: the register goes back to memory after the loop


@dataclass(frozen=True, eq=False)
class LoopFacts:
    """What the CPU AST build learned about one ``for`` loop (its annotation's user object)."""

    independent: bool  # carries no dependence (`core_compiler.transform.cpu_schedule.build_ast`)
    invariant: tuple[InvariantElement, ...] = ()


def invariant_elements(build: isl.AstBuild, scop: Scop) -> tuple[InvariantElement, ...]:
    """The invariant elements of the loop `build` is about to generate, one per array at most."""
    maps: list[isl.Map] = []
    build.get_schedule().foreach_map(maps.append)
    depth = maps[0].dim(_OUT) if maps else 0
    if depth == 0:
        return ()
    runs = isl.UnionSet.empty(maps[0].get_space().params())
    by_array: dict[str, list[tuple[str, Access, isl.Map]]] = defaultdict(list)
    for m in maps:
        stmt = scop.statement(m.get_tuple_name(isl.dim_type.in_))
        outer = m.project_out(_OUT, depth - 1, 1)  # instance -> the enclosing loops' values
        runs = runs.union(isl.UnionSet.from_set(outer.range()))
        for acc in (*stmt.reads, *stmt.writes):
            by_array[acc.array].append((stmt.name, acc, acc.relation.intersect_domain(m.domain()).apply_domain(outer)))
    found = (_element(array, rels, runs, build, depth) for array, rels in by_array.items())
    return tuple(e for e in found if e is not None)


def _element(array: str, rels: list[tuple[str, Access, isl.Map]], runs: isl.UnionSet, build: isl.AstBuild,
             depth: int) -> InvariantElement | None:  # fmt: skip
    """The first access whose element is invariant, reached at every point of `runs`, and either
    reached exactly or never by each other access of `array`. None where an opaque call may touch
    any element (`Access.may`): it reads and writes memory, not the register."""
    if any(a.may for _, a, _ in rels):
        return None
    for _, _, candidate in rels:
        if not candidate.is_single_valued() or not runs.is_subset(isl.UnionSet.from_set(candidate.domain())):
            continue
        members = [(s, a) for s, a, rel in rels if rel.is_subset(candidate)]
        others_apart = all(rel.is_subset(candidate) or rel.intersect(candidate).is_empty() for _, _, rel in rels)
        if others_apart:
            return InvariantElement(
                array,
                _subscripts(candidate, build, depth),
                frozenset((s, a.info) for s, a in members),
                any(a.is_write for _, a in members),
            )
    return None


def _subscripts(element: isl.Map, build: isl.AstBuild, depth: int) -> tuple[isl.AstExpr, ...]:
    """``enclosing loops -> element`` as AST expressions over the loop being built's schedule
    space (which has this loop's dimension too; the expressions do not use it)."""
    pma = isl.PwMultiAff.from_map(element)
    out = []
    for k in range(pma.dim(_OUT)):
        pa = pma.get_pw_aff(k).insert_dims(isl.dim_type.in_, depth - 1, 1)
        out.append(build.expr_from_pw_aff(pa))
    return tuple(out)
