"""Counting integer points with the sizes as symbols: ``count({ [i, j] : 0 <= j < i < n })`` is
``n*n/2 - n/2`` (where ``n >= 1``), what barvinok's ``card`` gives, which this islpy build lacks.

The count of a set (or the sum of a polynomial over it) is computed dimension by dimension,
innermost first, on disjoint convex pieces: isl gives the lowest and highest value of the last
dimension as piecewise quasi-affine functions of the parameters and the outer dimensions (its
*chambers*), and Faulhaber's formula sums the polynomial between them,
``sum(x^k for x in a..b) = S_k(b) - S_k(a - 1)``, which holds for every integer ``a <= b + 1``.
Floor divisions in the bounds (``x <= floor(n/2)``, tile counts) stay in the polynomial as
`Floor` atoms, so results are exact quasi-polynomials. A count is *approximate* (`Count.exact`
false) only where a convex piece has holes along the summed dimension (existential variables, as
in ``i % 3 = 0``) or a floor depends on the summed variable; isl's budget or too many chambers give
a box over-approximation, also said approximate.

A `Count` is a list of pieces ``(where, polynomial)`` whose values **add up** where several
``where`` hold (pieces of disjoint convex parts of a set overlap once projected on the
parameters). It evaluates exactly at given sizes, renders for people as the polynomial that holds
at given (or large) sizes, and as a C expression of type ``double`` (``(cond ? poly : 0.0) + ...``).

The printer of isl AST expressions as self-contained C (no ``floord``/``min`` macros) lives here
too: conditions of counts and the profitability model's extents share it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from typing import Any

import islpy as isl

from core_compiler.errors import InternalError

_SET: Any = isl.dim_type.set
_PARAM: Any = isl.dim_type.param
_DIV: Any = isl.dim_type.div
_OP: Any = isl.ast_expr_op_type
_T: Any = isl.ast_expr_type

MAX_PIECES = 256
"""Pieces of one summation step beyond which a count falls back to the box over-approximation."""

COUNT_OPERATIONS = 150_000
"""isl operations one exact count may take (skewed stencils' thread counts took seconds) before
it falls back to the box over-approximation."""


class NotCountable(Exception):
    """The exact count would take too many pieces or isl's budget ran out: a box is used instead."""


# ------------------------------------------------------------------------------ polynomials

Monomial = tuple[tuple["Atom", int], ...]  # sorted by `_atom_key`, powers >= 1


@dataclass(frozen=True)
class Floor:
    """``floor(arg)`` for an affine `arg` with rational coefficients (isl's integer division)."""

    arg: Poly


Atom = str | Floor


def _atom_key(a: Atom) -> str:
    return a if isinstance(a, str) else f"~floor({a.arg.text()})"


@dataclass(frozen=True)
class Poly:
    """A polynomial with rational coefficients over variables (isl names) and `Floor` atoms."""

    terms: tuple[tuple[Monomial, Fraction], ...] = ()

    @staticmethod
    def of(d: Mapping[Monomial, Fraction]) -> Poly:
        return Poly(tuple(sorted(((m, c) for m, c in d.items() if c), key=lambda t: _mono_key(t[0]))))

    @staticmethod
    def const(c: int | Fraction) -> Poly:
        return Poly.of({(): Fraction(c)})

    @staticmethod
    def var(name: str) -> Poly:
        return Poly.of({((name, 1),): Fraction(1)})

    @staticmethod
    def floor(arg: Poly) -> Poly:
        if arg.is_const():  # floor of a number is a number
            return Poly.const(math.floor(arg.constant()))
        return Poly.of({((Floor(arg), 1),): Fraction(1)})

    def is_const(self) -> bool:
        return all(not m for m, _ in self.terms)

    def constant(self) -> Fraction:
        return next((c for m, c in self.terms if not m), Fraction(0))

    def __add__(self, other: Poly) -> Poly:
        out = dict(self.terms)
        for m, c in other.terms:
            out[m] = out.get(m, Fraction(0)) + c
        return Poly.of(out)

    def __neg__(self) -> Poly:
        return self.scale(-1)

    def __sub__(self, other: Poly) -> Poly:
        return self + -other

    def scale(self, c: int | Fraction) -> Poly:
        return Poly.of({m: k * c for m, k in self.terms})

    def __mul__(self, other: Poly) -> Poly:
        out: dict[Monomial, Fraction] = {}
        for ma, ca in self.terms:
            for mb, cb in other.terms:
                m = _mono_mul(ma, mb)
                out[m] = out.get(m, Fraction(0)) + ca * cb
        return Poly.of(out)

    def __pow__(self, k: int) -> Poly:
        out = Poly.const(1)
        for _ in range(k):
            out = out * self
        return out

    def variables(self) -> frozenset[str]:
        out: set[str] = set()
        for m, _ in self.terms:
            for a, _ in m:
                out |= {a} if isinstance(a, str) else a.arg.variables()
        return frozenset(out)

    def subst(self, name: str, value: Poly) -> Poly:
        """`name` replaced by `value` (affine where `name` occurs inside a floor)."""
        out = Poly()
        for m, c in self.terms:
            term = Poly.const(c)
            for a, k in m:
                if a == name:
                    term = term * value**k
                elif isinstance(a, Floor) and name in a.arg.variables():
                    term = term * Poly.floor(a.arg.subst(name, value)) ** k
                else:
                    term = term * Poly.of({((a, k),): Fraction(1)})
            out = out + term
        return out

    def floors_averaged(self, name: str) -> Poly:
        """Floors whose argument involves `name` replaced by their mean: ``floor(e) ~ e - (d-1)/(2d)``
        for ``e`` with denominator ``d`` (every remainder equally likely)."""
        out = Poly()
        for m, c in self.terms:
            term = Poly.const(c)
            for a, k in m:
                if isinstance(a, Floor) and name in a.arg.variables():
                    d = math.lcm(*(q.denominator for _, q in a.arg.terms))
                    term = term * (a.arg - Poly.const(Fraction(d - 1, 2 * d))) ** k
                else:
                    term = term * Poly.of({((a, k),): Fraction(1)})
            out = out + term
        return out

    def in_floor(self, name: str) -> bool:
        return any(isinstance(a, Floor) and name in a.arg.variables() for m, _ in self.terms for a, _ in m)

    def coefficients(self, name: str) -> dict[int, Poly]:
        """The polynomial as ``sum(c_k * name^k)``: ``{k: c_k}`` (`name` must not be in a floor)."""
        out: dict[int, dict[Monomial, Fraction]] = {}
        for m, c in self.terms:
            k = next((p for a, p in m if a == name), 0)
            rest = tuple((a, p) for a, p in m if a != name)
            out.setdefault(k, {})[rest] = c
        return {k: Poly.of(d) for k, d in out.items()}

    def evaluate(self, values: Mapping[str, int | Fraction]) -> Fraction:
        total = Fraction(0)
        for m, c in self.terms:
            v = c
            for a, k in m:
                x = Fraction(values[a]) if isinstance(a, str) else Fraction(math.floor(a.arg.evaluate(values)))
                v *= x**k
            total += v
        return total

    def text(self, names: Mapping[str, str] | None = None) -> str:
        """For people, highest degree first: ``1/2*n*n - 1/2*n``; floors as ``floor((n + 31)/32)``."""
        names = names or {}
        out = ""
        for m, c in sorted(self.terms, key=lambda t: (-_degree(t[0]), _mono_key(t[0]))):
            factors = [_atom_text(a, names) for a, k in m for _ in range(k)]
            mag = "*".join([*([_frac_text(abs(c))] if abs(c) != 1 or not m else []), *factors])
            if not out:
                out = f"-{mag}" if c < 0 else mag
            else:
                out += f" {'-' if c < 0 else '+'} {mag}"
        return out or "0"

    def c(self, names: Mapping[str, str]) -> str:
        """A C expression of type ``double``: variables are ``(double)`` of their C names, floors
        are integer divisions of ``long long`` numerators (rounded down, whatever the sign)."""
        parts = []
        for m, c in self.terms:
            factors = [_atom_c(a, names) for a, k in m for _ in range(k)]
            if c != 1 or not factors:
                factors.insert(0, _c_double(c))
            parts.append(" * ".join(factors))
        return "(" + " + ".join(parts) + ")" if parts else "0.0"


def _mono_key(m: Monomial) -> str:
    return " ".join(f"{_atom_key(a)}^{k}" for a, k in m)


def _degree(m: Monomial) -> int:
    return sum(k for _, k in m)


def _mono_mul(a: Monomial, b: Monomial) -> Monomial:
    powers: dict[str, tuple[Atom, int]] = {_atom_key(x): (x, k) for x, k in a}
    for x, k in b:
        key = _atom_key(x)
        powers[key] = (x, powers[key][1] + k) if key in powers else (x, k)
    return tuple(powers[k] for k in sorted(powers))


def _frac_text(c: Fraction) -> str:
    return str(c.numerator) if c.denominator == 1 else f"{c.numerator}/{c.denominator}"


def _atom_text(a: Atom, names: Mapping[str, str]) -> str:
    if isinstance(a, str):
        return names.get(a, a)
    d = math.lcm(*(q.denominator for _, q in a.arg.terms))
    return f"floor(({a.arg.scale(d).text(names)})/{d})"


def _c_double(c: Fraction) -> str:
    if c.denominator == 1:
        return f"{c.numerator}.0"
    return f"({c.numerator}.0 / {c.denominator}.0)"


def _atom_c(a: Atom, names: Mapping[str, str]) -> str:
    if isinstance(a, str):
        return f"(double){names.get(a, a)}"
    d = math.lcm(*(q.denominator for _, q in a.arg.terms))
    num = " + ".join(_int_term_c(m, c * d, names) for m, c in a.arg.terms)
    return f"(double)({_floor_div_c(f'({num})', str(d))})"


def _int_term_c(m: Monomial, c: Fraction, names: Mapping[str, str]) -> str:
    assert c.denominator == 1
    factors = [str(c.numerator) + "LL"] + [_int_atom_c(a, names) for a, k in m for _ in range(k)]
    return " * ".join(factors)


def _int_atom_c(a: Atom, names: Mapping[str, str]) -> str:
    if isinstance(a, str):
        return f"(long long){names.get(a, a)}"
    d = math.lcm(*(q.denominator for _, q in a.arg.terms))
    num = " + ".join(_int_term_c(m, c * d, names) for m, c in a.arg.terms)
    return _floor_div_c(f"({num})", str(d))


def _floor_div_c(n: str, d: str) -> str:
    return f"({n} < 0 ? -((-{n} + {d} - 1) / {d}) : {n} / {d})"


# ------------------------------------------------------------------------------ from isl


def aff_poly(aff: isl.Aff) -> Poly:
    """An isl quasi-affine expression as a polynomial over its dimension names (params, then the
    domain's), integer divisions as `Floor` atoms."""
    out = Poly.const(_fraction(aff.get_constant_val()))
    for kind in (_PARAM, isl.dim_type.in_):
        for i in range(aff.dim(kind)):
            c = _fraction(aff.get_coefficient_val(kind, i))
            if c:
                name = aff.get_dim_name(kind, i)
                if name is None:
                    raise InternalError(f"unnamed dimension {i} in {aff}")
                out = out + Poly.var(str(name)).scale(c)
    for k in range(aff.dim(_DIV)):
        c = _fraction(aff.get_coefficient_val(_DIV, k))
        if c:
            out = out + Poly.floor(aff_poly(aff.get_div(k))).scale(c)
    return out


def _fraction(v: isl.Val) -> Fraction:
    return Fraction(int(v.get_num_si()), int(v.get_den_val().to_python()))


# ------------------------------------------------------------------------------ counts


@dataclass(frozen=True, eq=False)
class Count:
    """A number that depends on the parameters: the sum of the `pieces` whose set holds.

    Each set is over the parameters only (isl names); polynomials are over the same names.
    """

    pieces: tuple[tuple[isl.Set, Poly], ...]
    exact: bool = True

    @staticmethod
    def const(ctx: isl.Context, c: int | Fraction) -> Count:
        return Count(((isl.Set.universe(isl.Space.params_alloc(ctx, 0)), Poly.const(c)),) if c else ())

    def __add__(self, other: Count) -> Count:
        pieces = tuple((s, p) for s, p in self.pieces + other.pieces if p.terms)
        return Count(pieces, self.exact and other.exact)

    def __mul__(self, other: Count) -> Count:
        out = []
        for sa, pa in self.pieces:
            for sb, pb in other.pieces:
                both = _meet(sa, sb)
                if not both.is_empty():
                    out.append((both, pa * pb))
        return Count(tuple(out), self.exact and other.exact)

    def scale(self, c: int | Fraction) -> Count:
        return Count(tuple((s, p.scale(c)) for s, p in self.pieces), self.exact)

    def params(self) -> frozenset[str]:
        return frozenset(n for s, p in self.pieces for n in (*_param_names(s), *p.variables()))

    def at(self, values: Mapping[str, int]) -> Poly:
        """The polynomial that holds at `values` (isl names): what a person reads."""
        out = Poly()
        for s, p in self.pieces:
            if _holds(s, values):
                out = out + p
        return out

    def evaluate(self, values: Mapping[str, int]) -> Fraction:
        return self.at(values).evaluate(values)

    def c(self, names: Mapping[str, str]) -> str:
        """A C expression of type ``double`` over the parameters' C names (`names`: isl -> C)."""
        parts = []
        for s, p in self.pieces:
            if not p.terms:
                continue
            value = p.c(names)
            cond = set_c(s, names)
            parts.append(value if cond == "1" else f"(({cond}) ? {value} : 0.0)")
        return " + ".join(parts) or "0.0"


def _param_names(s: isl.Set) -> list[str]:
    return [str(s.get_dim_name(_PARAM, i)) for i in range(s.dim(_PARAM))]


def _meet(a: isl.Set, b: isl.Set) -> isl.Set:
    return a.align_params(b.get_space()).intersect(b.align_params(a.get_space())).coalesce()


def _holds(s: isl.Set, values: Mapping[str, int]) -> bool:
    for i, name in enumerate(_param_names(s)):
        if name not in values:
            raise InternalError(f"a count needs a value for {name}")
        s = s.fix_val(_PARAM, i, isl.Val.int_from_si(s.get_ctx(), values[name]))
    return not s.is_empty()


def from_pw_aff(pa: isl.PwAff) -> Count:
    """A piecewise quasi-affine function of the parameters as a count (0 outside its domain)."""
    pieces = tuple((s.coalesce(), aff_poly(a)) for s, a in pa.get_pieces())
    return Count(pieces)


def count(s: isl.Set) -> Count:
    """The number of integer points of `s` as a function of its parameters."""
    return sum_over(s, Poly.const(1))


def sum_over(s: isl.Set, f: Poly | Count) -> Count:
    """``sum(f(x) for x in s)``: `f` is over the parameters and the set's dimension names (a
    `Count` whose pieces' sets may constrain those names as parameters). Unnamed dimensions are
    named ``_x0, _x1, …`` (then `f` cannot refer to them)."""
    s = _named(s)
    summand = Count(((isl.Set.universe(isl.Space.params_alloc(s.get_ctx(), 0)), f),)) if isinstance(f, Poly) else f
    dims = [str(s.get_dim_name(_SET, i)) for i in range(s.dim(_SET))]
    ctx = s.get_ctx()
    budget = ctx.get_max_operations()
    ctx.reset_operations()
    ctx.set_max_operations(COUNT_OPERATIONS)
    try:
        out = Count(())
        for where, poly in summand.pieces:
            out = out + _sum_piece(_restrict(s, where, dims), poly, dims)
        return out
    except (NotCountable, isl.Error, TypeError):  # TypeError: a value isl left undefined when its budget ran out
        pass
    finally:
        ctx.set_max_operations(budget)
        ctx.reset_operations()
    return _box_sum(s, summand, dims)


def _named(s: isl.Set) -> isl.Set:
    for i in range(s.dim(_SET)):
        if s.get_dim_name(_SET, i) is None:
            s = s.set_dim_name(_SET, i, f"_x{i}")
    return s


def _restrict(s: isl.Set, where: isl.Set, dims: list[str]) -> isl.Set:
    """`s` intersected with `where`, whose parameters may be `s`'s dimension names."""
    flat = _meet(_to_params(s, len(dims)), where)
    return _to_set(flat, dims)


def _to_params(s: isl.Set, n: int) -> isl.Set:
    """The last `n` set dimensions moved to the parameters (after the others)."""
    first = s.dim(_SET) - n
    moved = s.move_dims(_PARAM, s.dim(_PARAM), _SET, first, n)
    return moved.params() if moved.dim(_SET) == 0 else moved


def _to_set(s: isl.Set, dims: list[str]) -> isl.Set:
    """The parameters named `dims` moved to the set dimensions, in that order, after the others."""
    if s.get_space().is_params():
        s = isl.Set.from_params(s)
    for name in dims:
        pos = s.find_dim_by_name(_PARAM, name)
        if pos < 0:
            raise InternalError(f"no parameter {name} in {s}")
        s = s.move_dims(_SET, s.dim(_SET), _PARAM, pos, 1)
    return s


def _sum_piece(s: isl.Set, f: Poly, dims: list[str]) -> Count:
    budget = [MAX_PIECES]
    pieces, exact = [], True
    for b in s.make_disjoint().get_basic_sets():
        for piece, ok in _sum_convex(isl.Set.from_basic_set(b), f, dims, budget):
            pieces.append(piece)
            exact = exact and ok
    return Count(tuple(pieces), exact)


def _sum_convex(
    b: isl.Set, g: Poly, dims: list[str], budget: list[int]
) -> list[tuple[tuple[isl.Set, Poly], bool]]:
    """Sum `g` over the convex `b` (set dimensions `dims`): pieces over the parameters, each
    with whether it is exact. Integer divisions isl knows (``i % 3 = 0``: ``3*e = i``) become
    outer dimensions first, so the strided dimensions are summed exactly between bounds."""
    if not dims:
        return [((b, g), True)]
    exact = True
    if _n_divs(b) > 0 and not _divs_of_params(b):
        lifted = _lifted(b, dims)
        if lifted is not None:
            return _sum_convex(lifted[0], g, lifted[1], budget)
        exact = False  # unknown existential variables: the slice may have holes, counted as full
    x, outer = dims[-1], dims[:-1]
    if g.in_floor(x):
        exact, g = False, g.floors_averaged(x)
    out = []
    for c, h in _sum_last(b, g, x, outer):
        budget[0] -= 1
        if budget[0] < 0:
            raise NotCountable(f"more than {MAX_PIECES} pieces")
        out += [(piece, ok and exact) for piece, ok in _sum_convex(c, h, outer, budget)]
    return out


def _n_divs(b: isl.Set) -> int:
    return sum(bs.dim(_DIV) for bs in b.get_basic_sets())


def _divs_of_params(b: isl.Set) -> bool:
    """Whether every integer division of the convex `b` is known and reads only parameters
    (``n % 2 = 0``): a condition on the sizes, no hole along a dimension, so nothing to lift.
    Lifting one made a dimension whose sum gave the division back, and the sum never ended
    (fuzzer seed 50: ``{ [e] : n % 2 = 0 and 2e <= n - 4 and ... }``; a GPU cost count ran for
    minutes)."""
    (bs,) = b.get_basic_sets()
    local = bs.get_local_space()
    try:
        return not any(_reads_dims(local.get_div(k)) for k in range(bs.dim(_DIV)))
    except isl.Error:  # an unknown division
        return False


def _reads_dims(aff: isl.Aff) -> bool:
    """Whether the quasi-affine `aff` reads a set dimension, directly or in one of its divisions."""
    if aff.involves_dims(isl.dim_type.in_, 0, aff.dim(isl.dim_type.in_)):
        return True
    return any(not aff.get_coefficient_val(_DIV, k).is_zero() and _reads_dims(aff.get_div(k)) for k in range(aff.dim(_DIV)))


def _lifted(b: isl.Set, dims: list[str]) -> tuple[isl.Set, list[str]] | None:
    """`b` with its integer divisions as set dimensions before `dims` (None where one is unknown,
    so not a function of the others: lifting it could count a point several times)."""
    (bs,) = b.get_basic_sets()
    local = bs.get_local_space()
    try:
        for k in range(bs.dim(_DIV)):
            local.get_div(k)
    except isl.Error:
        return None
    n = bs.dim(_DIV)
    flat = isl.Set.from_basic_set(bs.lift()).flatten()
    names = _fresh(n, {*dims, *_param_names(b)})
    for k, name in enumerate(names):
        flat = flat.set_dim_name(_SET, len(dims) + k, name)
    for k, name in enumerate(dims):
        flat = flat.set_dim_name(_SET, k, name)
    np_ = flat.dim(_PARAM)
    flat = flat.move_dims(_PARAM, np_, _SET, len(dims), n).move_dims(_SET, 0, _PARAM, np_, n)
    return flat, names + dims


def _fresh(n: int, taken: set[str]) -> list[str]:
    """`n` names ``_e0, _e1, …`` that are not in `taken` (the dimensions and parameters): names
    made from the number of dimensions alone repeated a division lifted before, two dimensions
    ``_e1_0``, one of them moved or summed in the other's place."""
    out: list[str] = []
    k = 0
    while len(out) < n:
        if f"_e{k}" not in taken:
            out.append(f"_e{k}")
        k += 1
    return out


def _sum_last(b: isl.Set, g: Poly, x: str, outer: list[str]) -> list[tuple[isl.Set, Poly]]:
    """Sum `g` over the last dimension `x` of the convex `b`: pieces over the outer dimensions."""
    slice_ = b.move_dims(_PARAM, b.dim(_PARAM), _SET, 0, len(outer))
    low, high = slice_.dim_min(0), slice_.dim_max(0)
    if low.involves_nan() or high.involves_nan():
        raise NotCountable(f"{x} is unbounded in {b}")
    coefficients = g.coefficients(x)
    out = []
    for dl, al in low.get_pieces():
        for du, au in high.get_pieces():
            where = dl.intersect(du)
            if where.is_empty():
                continue
            a, z = aff_poly(al), aff_poly(au)
            total = Poly()
            for k, ck in coefficients.items():
                total = total + ck * (_faulhaber(k, z) - _faulhaber(k, a - Poly.const(1)))
            back = _to_set(where, outer) if outer else where
            out += [(isl.Set.from_basic_set(bs), total) for bs in back.make_disjoint().get_basic_sets()]
    return out


@cache
def _bernoulli(n: int) -> Fraction:
    """B_n with B_1 = +1/2."""
    if n == 0:
        return Fraction(1)
    return 1 - sum((math.comb(n, k) * _bernoulli(k) / (n - k + 1) for k in range(n)), Fraction(0))


def _faulhaber(k: int, n: Poly) -> Poly:
    """``sum(x^k for x in 1..n)`` as a polynomial in `n` (0 at n = 0, and S(n) - S(n-1) = n^k)."""
    out = Poly()
    for j in range(k + 1):
        c = Fraction(math.comb(k + 1, j)) * _bernoulli(j) / (k + 1)
        out = out + (n ** (k + 1 - j)).scale(c)
    return out


def _box_sum(s: isl.Set, summand: Count, dims: list[str]) -> Count:
    """The over-approximation when the exact sum is out of reach: the box around `s` (per
    dimension ``max - min + 1``) times the summand, with the dimensions it reads at their maxima."""
    box = Count.const(s.get_ctx(), 1)
    zero = isl.PwAff.zero_on_domain(isl.LocalSpace.from_space(s.params().get_space()))
    maxima = []
    for d in range(len(dims)):
        high, low = s.dim_max(d), s.dim_min(d)
        one = isl.PwAff.val_on_domain(high.domain(), isl.Val.one(s.get_ctx()))
        box = box * from_pw_aff(high.sub(low).add(one).union_max(zero).coalesce())
        maxima.append(high.coalesce().get_pieces())
    pieces = []
    for where, poly in summand.pieces:
        for name, highs in zip(dims, maxima, strict=True):
            if name in poly.variables():
                poly = poly.subst(name, aff_poly(highs[0][1])) if len(highs) == 1 else poly.floors_averaged(name)
        kept = [n for n in dims if where.find_dim_by_name(_PARAM, n) >= 0]
        pieces.append((_to_set(where, kept).params() if kept else where, poly))
    return Count((box * Count(tuple(pieces))).pieces, exact=False)


# ------------------------------------------------------------------------------ isl expressions as C


def set_c(s: isl.Set, names: Mapping[str, str], wide: bool = True) -> str:
    """A parameter set as a C condition (``1`` for the universe)."""
    if s.plain_is_universe():
        return "1"
    build = isl.AstBuild.from_context(isl.Set.universe(s.get_space()))
    return expr_c(build.expr_from_set(s), names, wide)


def pw_aff_c(pa: isl.PwAff, space: isl.Space, names: Mapping[str, str], wide: bool = False) -> str:
    """A PwAff over the parameters as a self-contained C expression (no ``floord``/``min`` macros).

    `names` maps isl names to C names; `wide` casts every parameter to ``long long``.
    """
    build = isl.AstBuild.from_context(isl.Set.universe(space))
    return expr_c(build.expr_from_pw_aff(pa), names, wide)


def expr_c(e: isl.AstExpr, names: Mapping[str, str], wide: bool) -> str:
    kind = e.get_type()
    if kind == _T.id:
        name = names.get(e.get_id().get_name(), e.get_id().get_name())
        return f"(long long){name}" if wide else name
    if kind == _T.int:
        return e.get_val().to_str()
    args = [expr_c(e.get_op_arg(i), names, wide) for i in range(e.get_op_n_arg())]
    return _op_c(e.get_op_type(), args)


_BINARY_C = {
    _OP.and_: "&&", _OP.and_then: "&&", _OP.or_: "||", _OP.or_else: "||", _OP.add: "+",
    _OP.sub: "-", _OP.mul: "*", _OP.div: "/", _OP.pdiv_q: "/", _OP.pdiv_r: "%", _OP.zdiv_r: "%",
    _OP.eq: "==", _OP.le: "<=", _OP.lt: "<", _OP.ge: ">=", _OP.gt: ">",
}  # fmt: skip


def _op_c(op: Any, args: list[str]) -> str:
    if op in _BINARY_C:
        return f"({args[0]} {_BINARY_C[op]} {args[1]})"
    if op == _OP.minus:
        return f"(-{args[0]})"
    if op in (_OP.cond, _OP.select):
        return f"({args[0]} ? {args[1]} : {args[2]})"
    if op in (_OP.max, _OP.min):
        cmp = ">" if op == _OP.max else "<"
        out = args[0]
        for a in args[1:]:
            out = f"({out} {cmp} {a} ? {out} : {a})"
        return out
    if op == _OP.fdiv_q:  # floor division by a positive constant, isl's `floord`
        return _floor_div_c(args[0], args[1])
    raise InternalError(f"isl AST operator {op} in a parameter expression")


def total(counts: Iterable[Count], ctx: isl.Context) -> Count:
    """The sum of `counts` (0 for none)."""
    out = Count(())
    for c in counts:
        out = out + c
    return out if out.pieces else Count.const(ctx, 0)
