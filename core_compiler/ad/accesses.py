"""Questions the adjoint transform asks of the polyhedral model (isl access relations).

- `overwritten_from`: may the element a statement instance reads be written by that instance or
  a later one? Then the reverse sweep, which runs after the whole forward sweep, would see
  another value, and the value read is taped.
- `may_alias_in_instance`: may a read and the write of one statement instance touch the same
  element (``A[i][j] = A[i][k] ...`` where ``k == j`` happens)? Then the adjoint goes through a
  temporary.
- `conflicts`: which parallel loops have several iterations updating the same shadow element —
  a dependence of the adjoint (its increments are reductions: atomics on a GPU, or the loop runs
  in order); judged on all the adjoint's updates of that shadow in the loop, not one access alone.
- `extents`: the bounding box of a statement's iteration domain, for the tape arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from core_compiler.scop.affine import isl_name
from core_compiler.scop.model import Access, Scop, Statement
from core_compiler.scop.region import LoopInfo


def overwritten_from(scop: Scop, stmt: Statement, read: Access) -> bool:
    writes = scop.writes(read.array)
    if writes.is_empty():
        return False
    sched = scop.schedule()
    read_t = isl.UnionMap.from_map(read.relation).apply_domain(isl.UnionMap.from_map(stmt.schedule))
    write_t = writes.apply_domain(sched)
    pairs = read_t.apply_range(write_t.reverse())  # time read -> time of a write of the same element
    space = stmt.schedule.get_space().range()
    later = isl.UnionMap.from_map(isl.Map.lex_le(space))
    return not pairs.intersect(later).is_empty()


def may_alias_in_instance(read: Access, write: Access) -> bool:
    return read.array == write.array and not read.relation.intersect(write.relation).is_empty()


def conflicts(stmt: Statement, access: Access, parallel: list[LoopInfo],
              updates: list[tuple[Statement, Access]]) -> list[LoopInfo]:  # fmt: skip
    """The loops of `parallel` (enclosing `stmt`) in which the adjoint's update of `access`'s
    shadow element shares that element with an update made by another iteration of the loop (the
    same iterations of the loops around it): a dependence the adjoint carries on that loop, so
    its iterations are not independent (a reduction: atomics, or the loop run in order).

    `updates` are all the shadow accesses the adjoint makes to that array (``d_U[i-1][j]`` and
    ``d_U[i+1][j]`` of one statement, or of two): each alone may be injective while together
    iterations `i` and `i + 2` both add into ``d_U[i+1][j]``."""
    out = []
    for loop in parallel:
        k = stmt.iterators.index(loop.var)
        mine = _by_prefix(stmt, access, k + 1)
        theirs = None
        for other, acc in updates:
            if loop.id not in {lp.id for lp in other.info.loops}:
                continue
            rel = _by_prefix(other, acc, k + 1)
            theirs = rel if theirs is None else theirs.union(rel)
        if theirs is None:
            continue
        pairs = mine.apply_range(theirs.reverse())  # prefix -> prefix touching the same element
        eq = " and ".join(f"p{d} = q{d}" for d in range(k))
        ps = ", ".join(f"p{d}" for d in range(k + 1))
        qs = ", ".join(f"q{d}" for d in range(k + 1))
        other_iteration = isl.Map(f"{{ [{ps}] -> [{qs}] : {eq + ' and ' if eq else ''}p{k} != q{k} }}")
        if not pairs.intersect(other_iteration).is_empty():
            out.append(loop)
    return out


def _by_prefix(stmt: Statement, access: Access, depth: int) -> isl.Map:
    """The access as a relation from the statement's first `depth` iterators (an unnamed
    tuple, shared by all statements) to the array element."""
    prefix = isl.Map.from_domain(stmt.domain).add_dims(isl.dim_type.out, depth)
    for d in range(depth):
        prefix = prefix.equate(isl.dim_type.in_, d, isl.dim_type.out, d)
    return prefix.reverse().apply_range(access.relation).coalesce()


@dataclass(frozen=True)
class Extent:
    lower: int  # subtracted from the iterator
    size: str  # C text over the function's integer parameters


def extents(stmt: Statement, allowed: frozenset[str]) -> list[Extent] | str:
    """One extent per iterator, or why the tape cannot be sized (a message)."""
    out = []
    dom = stmt.domain.remove_divs()  # a box without strides (`i += 2`): bounds without `mod`
    names = {isl_name(p): p for p in allowed}
    for k, var in enumerate(stmt.iterators):
        low = _single_const(dom.dim_min(k))
        high = dom.dim_max(k).coalesce()
        lower = low if low is not None and low < 0 else 0
        if low is None and not _nonnegative(dom, k):
            return f"the lower bound of `{var}` is not a constant and may be negative"
        text = _max_text(high, names)
        if text is None:
            return f"the upper bound of `{var}` is not an affine function of the parameters"
        out.append(Extent(lower, _plus(text, 1 - lower)))
    return out


def _nonnegative(dom: isl.Set, k: int) -> bool:
    clipped = dom.lower_bound_val(isl.dim_type.set, k, isl.Val.zero(dom.get_ctx()))
    return clipped.is_equal(dom)


def _single_const(pw: isl.PwAff) -> int | None:
    pieces = pw.coalesce().get_pieces()
    if len(pieces) != 1 or not pieces[0][1].is_cst():
        return None
    return pieces[0][1].get_constant_val().to_python()


def _max_text(pw: isl.PwAff, names: dict[str, str]) -> str | None:
    pieces = pw.get_pieces()
    texts = {_aff_text(aff, names) for _, aff in pieces}
    if None in texts or not texts:
        return None
    if len(texts) == 1:
        return texts.pop()
    consts = [aff.get_constant_val().to_python() for _, aff in pieces if aff.is_cst()]
    if len(consts) == len(pieces):
        return str(max(consts))
    return None


def _aff_text(aff: isl.Aff, names: dict[str, str]) -> str | None:
    if not aff.get_denominator_val().is_one() or aff.dim(isl.dim_type.div):
        return None
    terms = []
    for i in range(aff.dim(isl.dim_type.param)):
        c = aff.get_coefficient_val(isl.dim_type.param, i).to_python()
        if c == 0:
            continue
        name = aff.get_dim_name(isl.dim_type.param, i)
        if name not in names:
            return None
        terms.append((c, names[name]))
    if any(aff.get_coefficient_val(isl.dim_type.in_, i).to_python() != 0 for i in range(aff.dim(isl.dim_type.in_))):
        return None
    text = ""
    for c, name in terms:
        mag = "" if abs(c) == 1 else f"{abs(c)} * "
        if not text:
            text = ("-" if c < 0 else "") + mag + name
        else:
            text += (" - " if c < 0 else " + ") + mag + name
    const = aff.get_constant_val().to_python()
    return _plus(text, const) if text else str(const)


def _plus(text: str, c: int) -> str:
    if text.lstrip("-").isdigit():
        return str(int(text) + c)
    if c == 0:
        return text
    # fold `n - 1` + 1 into `n`
    for sign in (" - ", " + "):
        head, sep, tail = text.rpartition(sign)
        if sep and tail.isdigit():
            k = int(tail) * (-1 if sign == " - " else 1) + c
            return head if k == 0 else f"{head} {'-' if k < 0 else '+'} {abs(k)}"
    return f"{text} {'-' if c < 0 else '+'} {abs(c)}"
