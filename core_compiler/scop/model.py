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
    Atom,
    Constraint,
    Dnf,
    FloorDiv,
    Mod,
    WrapMod,
    dnf_isl,
    isl_name,
    wrap_pieces,
)
from core_compiler.scop.region import AccessInfo, ArrayDecl, LoopInfo, RegionInfo, StmtInfo
from core_compiler.source import SourceRange


@dataclass(frozen=True, eq=False)
class Access:
    array: str
    relation: isl.Map  # statement instance -> array element, restricted to the domain
    info: AccessInfo
    is_write: bool
    may: bool = False  # some of the elements, not known which (an opaque call's): a write does not kill


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

    def writes(self, array: str | None = None, may: bool | None = None) -> isl.UnionMap:
        """The writes (of `array`), all of them or only the may-writes (`may`) or the others."""
        return _union_map(
            self.ctx,
            [a.relation for s in self.statements for a in s.writes if array in (None, a.array) and may in (None, a.may)],
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
    ranks = {a.name: len(a.extents) for a in region.arrays}
    statements = tuple(_statement(ctx, params, s, depth, ranks) for s in region.statements)
    extents = {a.name: _extent(ctx, params, a) for a in region.arrays}
    sizes = sorted({n for a in region.arrays for e in a.extents if e is not None for n in e.names})
    context_text = " and ".join(f"{isl_name(n)} >= 0" for n in sizes) or "true"
    context = isl.Set.read_from_str(ctx, f"{params} -> {{ : {context_text} }}")
    return Scop(function, index, region, ctx, context, statements, region.arrays, extents)


def _statement(ctx: isl.Context, params: str, s: StmtInfo, depth: int, ranks: dict[str, int]) -> Statement:
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
        if a.whole:  # any element (of a row `A[i]`): `S0[i] -> A[o0, o1]` (`S0[i] -> A[i, o1]`)
            every = ", ".join([i.isl() for i in a.indices] + [f"hx_o{d}" for d in range(len(a.indices), ranks[a.array])])
            rel = isl.Map.read_from_str(ctx, f"{params} -> {{ {s.name}[{iters}] -> {isl_name(a.array)}[{every}] }}")
            return Access(a.array, rel.intersect_domain(domain), a, is_write, may=True)
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
    the pieces of its `WrapMod` atoms (``(i + 1) % n``), each replaced by its value there."""
    wraps = _wraps(a)
    pieces = []
    for combination in itertools.product(*(wrap_pieces(w) for w in wraps)):
        indices = list(a.indices)
        for w, (value, _) in zip(wraps, combination, strict=True):
            indices = [i.substitute(w, value) for i in indices]
        where = " and ".join(where for _, where in combination) or "true"
        pieces.append((", ".join(i.isl() for i in indices), where))
    return pieces


def _wraps(a: AccessInfo) -> list[WrapMod]:
    """The `WrapMod` atoms of `a`'s subscripts."""
    return sorted({t for i in a.indices for t in i.atoms if isinstance(t, WrapMod)}, key=lambda t: t.num.isl() + t.den.isl())


def modulo_out_of_range(scop: Scop) -> tuple[str, SourceRange] | None:
    """A subscript ``e % m`` by a size whose ``e`` may leave ``0 .. WRAPS*m - 1``, where the
    model's reading of it (`wrapping_mod`) is not C's value: the subscript and where, or None."""
    params = "[" + ", ".join(isl_name(p) for p in scop.params) + "]"
    for st in scop.statements:
        iters = ", ".join(isl_name(i) for i in st.info.iterators)
        for a in (*st.reads, *st.writes):
            for w in _wraps(a.info):
                head = f"{params} -> {{ {st.name}[{iters}]"
                fits = isl.Set.read_from_str(scop.ctx, f"{head} : 0 <= {w.num.isl()} < {WRAPS}*({w.den.isl()}) }}")
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
            if _negative(scop.ctx, params, s.name, iters, [t for i in a.indices for t in i.atoms], st.domain):
                return f"the subscript `{a.text}`", a.range
    return None


def _atoms(dnf: Dnf) -> list[Atom]:
    return [t for conj in dnf for c in conj for t in c.expr.atoms]


def _substitute(dnf: Dnf, atom: Atom, by: Affine) -> Dnf:
    return tuple(tuple(Constraint(c.expr.substitute(atom, by), c.op) for c in conj) for conj in dnf)


def _rounding_matters(ctx: isl.Context, head: str, constraints: tuple[Dnf, ...], domain: isl.Set) -> bool:
    """Whether the instances C runs differ from `domain`, where each ``/`` and ``%`` rounds down:
    C's set is the union, over the signs of the numerators, of the constraints with each negative
    numerator's quotient rounded toward zero (``-floor(-e/k)``)."""
    atoms = list(dict.fromkeys(t for c in constraints for t in _atoms(c)))
    if not atoms:
        return False
    if len(atoms) > 4 or any(_nested(a, b) for a in atoms for b in atoms):  # many, or nested
        plain = [c for c in constraints if not _atoms(c)]
        around = isl.Set.read_from_str(ctx, f"{head} : {' and '.join(f'({dnf_isl(c)})' for c in plain) or 'true'} }}")
        return any(not around.intersect(_below(ctx, head, a)).is_empty() for a in atoms)
    c_set = isl.Set.empty(domain.get_space())
    for signs in itertools.product((True, False), repeat=len(atoms)):
        piece, guards = constraints, []
        for atom, nonnegative in zip(atoms, signs, strict=True):
            guards.append(f"{atom.num.isl()} >= 0" if nonnegative else f"{atom.num.isl()} < 0")
            piece = piece if nonnegative else tuple(_substitute(c, atom, _toward_zero(atom)) for c in piece)
        text = " and ".join(f"({dnf_isl(c)})" for c in piece)
        c_set = c_set.union(isl.Set.read_from_str(ctx, f"{head} : {' and '.join(guards)} and {text} }}"))
    return not c_set.is_equal(domain)


def _nested(atom: Atom, outer: Atom) -> bool:
    """Whether `atom` is inside `outer` (``i / 2`` in ``(i / 2 + 1) / 3``)."""
    return any(part.contains(atom) for part in outer.operands())


def _toward_zero(atom: Atom) -> Affine:
    """C's value of ``e / k`` or ``e % k`` where ``e < 0``: ``-floor(-e/k)``, ``-((-e) mod k)``."""
    assert isinstance(atom, FloorDiv | Mod), "conditions have no `%` by a size"
    flipped = FloorDiv(-atom.num, atom.den) if isinstance(atom, FloorDiv) else Mod(-atom.num, atom.den)
    return Affine.of({flipped: -1})


def _negative(ctx: isl.Context, params: str, stmt: str, iters: str, atoms: list[Atom], where: isl.Set) -> bool:
    head = f"{params} -> {{ {stmt}[{iters}]"
    return any(not _below(ctx, head, a).intersect(where).is_empty() for a in atoms)


def _below(ctx: isl.Context, head: str, atom: Atom) -> isl.Set:
    """Where the numerator of `atom` is negative."""
    return isl.Set.read_from_str(ctx, f"{head} : {atom.num.isl()} < 0 }}")
