"""The polyhedral model of a region, in isl: domains, 2d+1 schedules, access relations, arrays.

Example (matmul, ``C[i][j] = 0`` then ``C[i][j] += A[i][k]*B[k][j]``)::

    S0: [ni, nj] -> { S0[i, j] : 0 <= i < ni and 0 <= j < nj }   schedule S0[i,j] -> [0,i,0,j,0,0,0]
    S1: [ni, nj, nk] -> { S1[i, j, k] : ... }                     schedule S1[i,j,k] -> [0,i,0,j,1,k,0]
        reads C[i, j], A[i, k], B[k, j]; writes C[i, j]
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import islpy as isl

from core_compiler.scop.affine import (
    WRAPS,
    Affine,
    Dnf,
    dnf_isl,
    is_atom,
    isl_name,
    wrap_pieces,
    wrapping_mod,
)
from core_compiler.scop.region import AccessInfo, ArrayDecl, LoopInfo, RegionInfo, StmtInfo
from core_compiler.source import SourceRange


@dataclass(frozen=True, eq=False)
class Access:
    array: str
    relation: isl.Map  # statement instance -> array element, restricted to the domain
    info: AccessInfo
    is_write: bool


@dataclass(frozen=True, eq=False)
class Statement:
    name: str
    info: StmtInfo
    domain: isl.Set
    schedule: isl.Map  # the original (2d+1) schedule
    reads: tuple[Access, ...]
    writes: tuple[Access, ...]

    @property
    def range(self) -> SourceRange:
        return self.info.node.range

    @property
    def iterators(self) -> tuple[str, ...]:
        return self.info.iterators


@dataclass(frozen=True, eq=False)
class Scop:
    function: str
    index: int  # within the function
    region: RegionInfo
    ctx: isl.Context
    context: isl.Set  # what hexplore assumes of the parameters
    statements: tuple[Statement, ...]
    arrays: tuple[ArrayDecl, ...]
    extents: dict[str, isl.Set]  # array name -> the elements it may hold (where sizes are known)

    @property
    def name(self) -> str:
        return f"{self.function}#scop{self.index}"

    @property
    def params(self) -> tuple[str, ...]:
        return self.region.params

    @property
    def loops(self) -> tuple[LoopInfo, ...]:
        return self.region.loops

    @property
    def range(self) -> SourceRange:
        return self.region.range

    def domains(self) -> isl.UnionSet:
        return _union_set(self.ctx, [s.domain for s in self.statements])

    def schedule(self) -> isl.UnionMap:
        return _union_map(self.ctx, [s.schedule for s in self.statements])

    def reads(self, array: str | None = None) -> isl.UnionMap:
        return _union_map(
            self.ctx, [a.relation for s in self.statements for a in s.reads if array in (None, a.array)]
        )

    def writes(self, array: str | None = None) -> isl.UnionMap:
        return _union_map(
            self.ctx, [a.relation for s in self.statements for a in s.writes if array in (None, a.array)]
        )

    def statement(self, name: str) -> Statement:
        return next(s for s in self.statements if s.name == name)


def _union_set(ctx: isl.Context, sets: list[isl.Set]) -> isl.UnionSet:
    out = isl.UnionSet.empty(isl.Space.params_alloc(ctx, 0))
    for s in sets:
        out = out.union(isl.UnionSet.from_set(s))
    return out


def _union_map(ctx: isl.Context, maps: list[isl.Map]) -> isl.UnionMap:
    out = isl.UnionMap.empty(isl.Space.params_alloc(ctx, 0))
    for m in maps:
        out = out.union(isl.UnionMap.from_map(m))
    return out


def build_model(function: str, index: int, region: RegionInfo, ctx: isl.Context) -> Scop:
    """Build the isl model; raises isl.Error when isl gives up (e.g. its operation budget)."""
    params = "[" + ", ".join(isl_name(p) for p in region.params) + "]"
    depth = max((len(s.loops) for s in region.statements), default=0)
    statements = tuple(_statement(ctx, params, s, depth) for s in region.statements)
    extents = {a.name: _extent(ctx, params, a) for a in region.arrays}
    sizes = sorted({n for a in region.arrays for e in a.extents if e is not None for n in e.names})
    context_text = " and ".join(f"{isl_name(n)} >= 0" for n in sizes) or "true"
    context = isl.Set.read_from_str(ctx, f"{params} -> {{ : {context_text} }}")
    return Scop(function, index, region, ctx, context, statements, region.arrays, extents)


def _statement(ctx: isl.Context, params: str, s: StmtInfo, depth: int) -> Statement:
    iters = ", ".join(isl_name(i) for i in s.iterators)
    constraints = " and ".join(f"({dnf_isl(c)})" for c in s.constraints) or "true"
    domain = isl.Set.read_from_str(ctx, f"{params} -> {{ {s.name}[{iters}] : {constraints} }}").coalesce()
    time = []
    for level, loop in enumerate(s.loops):
        time.append(str(s.position[level]))
        time.append(isl_name(loop.var) if loop.step > 0 else f"-{isl_name(loop.var)}")
    time.append(str(s.position[len(s.loops)]))
    time += ["0"] * (2 * depth + 1 - len(time))
    schedule = isl.Map.read_from_str(
        ctx, f"{params} -> {{ {s.name}[{iters}] -> [{', '.join(time)}] }}"
    ).intersect_domain(domain)

    def access(a: AccessInfo, is_write: bool) -> Access:
        pieces = [f"{s.name}[{iters}] -> {isl_name(a.array)}[{idx}] : {where}" for idx, where in _wrapped(a)]
        rel = isl.Map.read_from_str(ctx, f"{params} -> {{ {'; '.join(pieces)} }}")
        return Access(a.array, rel.intersect_domain(_guarded(ctx, f"{params} -> {{ {s.name}[{iters}]", domain, a)), a, is_write)

    return Statement(
        s.name,
        s,
        domain,
        schedule,
        tuple(access(a, False) for a in s.reads),
        tuple(access(a, True) for a in s.writes),
    )


def _wrapped(a: AccessInfo) -> list[tuple[str, str]]:
    """The subscripts of `a` as isl text, in pieces with their conditions: one per combination of
    the pieces of its `wrapping_mod` atoms (``(i + 1) % n``)."""
    atoms = _wraps(a)
    plain = ", ".join(i.isl() for i in a.indices)
    pieces = []
    for combination in itertools.product(*(wrap_pieces(e, m) for _, e, m in atoms)):
        idx = plain
        for (atom, _, _), (value, _) in zip(atoms, combination, strict=True):
            idx = idx.replace(atom, f"({value})")
        pieces.append((idx, " and ".join(where for _, where in combination) or "true"))
    return pieces


def _wraps(a: AccessInfo) -> list[tuple[str, str, str]]:
    """The `wrapping_mod` atoms of `a`'s subscripts, each with its ``e`` and ``m``."""
    atoms = sorted({n for i in a.indices for n in i.names})
    return [(atom, *parts) for atom in atoms if (parts := wrapping_mod(atom)) is not None]


def modulo_out_of_range(scop: Scop) -> tuple[str, SourceRange] | None:
    """A subscript ``e % m`` by a size whose ``e`` may leave ``0 .. WRAPS*m - 1``, where the
    model's reading of it (`wrapping_mod`) is not C's value: the subscript and where, or None."""
    params = "[" + ", ".join(isl_name(p) for p in scop.params) + "]"
    for st in scop.statements:
        iters = ", ".join(isl_name(i) for i in st.info.iterators)
        for a in (*st.reads, *st.writes):
            for _, e, m in _wraps(a.info):
                head = f"{params} -> {{ {st.name}[{iters}]"
                fits = isl.Set.read_from_str(scop.ctx, f"{head} : 0 <= {e} < {WRAPS}*({m}) }}")
                if not _guarded(scop.ctx, head, st.domain, a.info).is_subset(fits):
                    return a.info.text, a.info.range
    return None


def _guarded(ctx: isl.Context, head: str, domain: isl.Set, a: AccessInfo) -> isl.Set:
    """The instances of `domain` that make access `a`: those where its guard holds (a read on one
    side of ``?:``, ``&&`` or ``||``). `head` is ``[params] -> { S[i, j]``."""
    if not a.guard:
        return domain
    guard = " and ".join(f"({dnf_isl(c)})" for c in a.guard)
    return domain.intersect(isl.Set.read_from_str(ctx, f"{head} : {guard} }}"))


def _extent(ctx: isl.Context, params: str, a: ArrayDecl) -> isl.Set:
    names = [f"a{d}" for d in range(len(a.extents))]
    cons = []
    for name, ext in zip(names, a.extents, strict=True):
        cons.append(f"0 <= {name}" + (f" < {Affine.isl(ext)}" if ext is not None else ""))
    body = " and ".join(cons) or "true"
    return isl.Set.read_from_str(ctx, f"{params} -> {{ {isl_name(a.name)}[{', '.join(names)}] : {body} }}")


def negative_division(scop: Scop) -> tuple[str, SourceRange] | None:
    """A subscript, loop bound or condition whose ``/`` or ``%`` C rounds otherwise than the model:
    C rounds a negative quotient toward zero, the model's ``floor``/``mod`` round down
    (``(i - 3) / 2`` at ``i = 0``: C gives -1, floor -2). What it is (``the subscript
    `a[(i - 3) / 2]```) and where, or None."""
    params = "[" + ", ".join(isl_name(p) for p in scop.params) + "]"
    for st in scop.statements:
        s = st.info
        iters = ", ".join(isl_name(i) for i in s.iterators)
        if _rounding_matters(scop.ctx, f"{params} -> {{ {s.name}[{iters}]", s.constraints, st.domain):
            return "a loop bound or condition", (s.loops[-1].header_range if s.loops else s.node.range)
        for a in (*s.reads, *s.writes):
            if _negative(scop.ctx, params, s.name, iters, [n for i in a.indices for n in i.names], st.domain):
                return f"the subscript `{a.text}`", a.range
    return None


def _names(dnf: Dnf) -> list[str]:
    return [n for conj in dnf for c in conj for n in c.expr.names]


def _rounding_matters(ctx: isl.Context, head: str, constraints: tuple[Dnf, ...], domain: isl.Set) -> bool:
    """Whether the instances C runs differ from `domain`, where each ``/`` and ``%`` rounds down:
    C's set is the union, over the signs of the numerators, of the constraints with each negative
    numerator's quotient rounded toward zero (``-floor(-e/k)``)."""
    atoms = sorted({n for c in constraints for n in _names(c) if is_atom(n)}, key=len, reverse=True)
    if not atoms:
        return False
    if len(atoms) > 4 or any(a in b for a in atoms for b in atoms if a != b):  # many, or nested
        plain = [c for c in constraints if not any(is_atom(n) for n in _names(c))]
        around = isl.Set.read_from_str(ctx, f"{head} : {' and '.join(f'({dnf_isl(c)})' for c in plain) or 'true'} }}")
        return any(not around.intersect(_below(ctx, head, a)).is_empty() for a in atoms)
    text = " and ".join(f"({dnf_isl(c)})" for c in constraints)
    c_set = isl.Set.empty(domain.get_space())
    for signs in itertools.product((True, False), repeat=len(atoms)):
        piece, guards = text, []
        for atom, nonnegative in zip(atoms, signs, strict=True):
            numerator, toward_zero = _parts(atom)
            guards.append(f"{numerator} >= 0" if nonnegative else f"{numerator} < 0")
            piece = piece if nonnegative else piece.replace(atom, toward_zero)
        c_set = c_set.union(isl.Set.read_from_str(ctx, f"{head} : {' and '.join(guards)} and {piece} }}"))
    return not c_set.is_equal(domain)


def _parts(atom: str) -> tuple[str, str]:
    """``floor((e)/k)`` or ``((e) mod k)``: the numerator `e`, and C's value where `e` < 0."""
    if atom.startswith("floor("):
        numerator, k = atom[len("floor(("):atom.rindex(")/")], atom[atom.rindex(")/") + 2 : -1]
        return numerator, f"(-floor((-({numerator}))/{k}))"
    numerator, k = atom[2:atom.rindex(") mod ")], atom[atom.rindex(") mod ") + 6 : -1]
    return numerator, f"(-((-({numerator})) mod {k}))"


def _negative(ctx: isl.Context, params: str, stmt: str, iters: str, names: list[str], where: isl.Set) -> bool:
    head = f"{params} -> {{ {stmt}[{iters}]"
    return any(is_atom(n) and not _below(ctx, head, n).intersect(where).is_empty() for n in names)


def _below(ctx: isl.Context, head: str, atom: str) -> isl.Set:
    return isl.Set.read_from_str(ctx, f"{head} : {_parts(atom)[0]} < 0 }}")
