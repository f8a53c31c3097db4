"""From loop-IR expressions to affine forms and isl text.

An expression is *affine* in a set of names when it is a sum of integer multiples of those names and
a constant (``2*i + n - 1``); C's ``/`` and ``%`` by a positive constant are accepted as isl's
``floor`` and ``mod`` (exact for the non-negative values loop counters take). Polynomials
(``i*n + j``) are kept separately for delinearization.

An affine form is a small expression tree, as loopy's and exo's index expressions are: an
`Affine` is a linear combination of *terms*, each a variable (its C name, a ``str``) or an
*atom*: `FloorDiv` (``i / 2``), `Mod` (``i % 2``) or `WrapMod` (``(i + 1) % n``), whose operands
are `Affine` again. Every reading of it walks the tree: `Affine.isl` (isl text for the model),
`isl_pw_aff` (an ``isl.PwAff`` built with isl's own operations), the C printer
(`core_compiler.codegen.statements.affine_c`) and the LLVM lowering. Nothing edits their text.

Failures carry the offending sub-expression, so that remarks point at exactly that text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace

import islpy as isl

from core_compiler.frontend import ir


@dataclass(frozen=True)
class Affine:
    """``sum(coeff * term) + const``: a term is a variable's name or an atom (`FloorDiv`, `Mod`,
    `WrapMod`); `coeffs` are sorted by the isl text of their terms, nonzero."""

    coeffs: tuple[tuple[Term, int], ...]
    const: int

    @staticmethod
    def of(coeffs: Mapping[Term, int], const: int = 0) -> Affine:
        return Affine(tuple(sorted(((k, v) for k, v in coeffs.items() if v), key=_term_key)), const)

    def coeff(self, name: Term) -> int:
        return dict(self.coeffs).get(name, 0)

    @property
    def names(self) -> frozenset[str]:
        """The variables of the linear combination itself (not those inside its atoms)."""
        return frozenset(k for k, _ in self.coeffs if isinstance(k, str))

    @property
    def atoms(self) -> tuple[Atom, ...]:
        """The floor/mod terms of the linear combination itself, in the order of `coeffs`."""
        return tuple(k for k, _ in self.coeffs if not isinstance(k, str))

    def variables(self) -> frozenset[str]:
        """Every variable `self` reads, inside its atoms too."""
        inner = (v for atom in self.atoms for part in atom.operands() for v in part.variables())
        return self.names.union(inner)

    def contains(self, atom: Atom) -> bool:
        """Whether `atom` is one of the terms, or inside one."""
        return any(a == atom or any(p.contains(atom) for p in a.operands()) for a in self.atoms)

    def substitute(self, atom: Atom, by: Affine) -> Affine:
        """`self` with the term `atom` (of its linear combination) replaced by `by`."""
        c = self.coeff(atom)
        if not c:
            return self
        rest = Affine.of({k: v for k, v in self.coeffs if k != atom}, self.const)
        return rest + by.scale(c)

    def __add__(self, other: Affine) -> Affine:
        c = dict(self.coeffs)
        for k, v in other.coeffs:
            c[k] = c.get(k, 0) + v
        return Affine.of(c, self.const + other.const)

    def scale(self, f: int) -> Affine:
        return Affine.of({k: v * f for k, v in self.coeffs}, self.const * f)

    def __neg__(self) -> Affine:
        return self.scale(-1)

    def __sub__(self, other: Affine) -> Affine:
        return self + (-other)

    def is_constant(self) -> bool:
        return not self.coeffs

    def isl(self) -> str:
        """isl syntax, e.g. ``2*i + n - 1``."""
        parts = [product_text(v, term_isl(k), "*") for k, v in self.coeffs]
        if self.const or not parts:
            parts.append(str(self.const))
        return signed_sum(parts)


@dataclass(frozen=True)
class FloorDiv:
    """``floor(num / den)``: C's ``num / den`` by a positive constant where ``num >= 0``."""

    num: Affine
    den: int

    def operands(self) -> tuple[Affine, ...]:
        return (self.num,)


@dataclass(frozen=True)
class Mod:
    """``num mod den`` (rounded down): C's ``num % den`` by a positive constant where ``num >= 0``."""

    num: Affine
    den: int

    def operands(self) -> tuple[Affine, ...]:
        return (self.num,)


@dataclass(frozen=True)
class WrapMod:
    """C's ``num % den`` by a size ``den`` (``a[(i + 1) % n]``, a periodic boundary): isl's ``mod``
    takes constants only, so the model reads it in pieces (`wrap_pieces`)."""

    num: Affine
    den: Affine

    def operands(self) -> tuple[Affine, ...]:
        return (self.num, self.den)


Atom = FloorDiv | Mod | WrapMod
Term = str | Atom


def term_isl(term: Term) -> str:
    """isl text of a term: ``floor((i)/2)``, ``((i) mod 2)``; a `WrapMod` as ``((i + 1) mod (n))``,
    which isl does not read (the model substitutes its pieces first)."""
    if isinstance(term, str):
        return isl_name(term)
    if isinstance(term, FloorDiv):
        return f"floor(({term.num.isl()})/{term.den})"
    if isinstance(term, Mod):
        return f"(({term.num.isl()}) mod {term.den})"
    return f"(({term.num.isl()}) mod ({term.den.isl()}))"


def _term_key(item: tuple[Term, int]) -> str:
    return item[0] if isinstance(item[0], str) else term_isl(item[0])


def product_text(coeff: int, term: str, times: str) -> str:
    """``coeff`` times the printed `term`: ``n``, ``-n``, ``2*n`` (``times`` is ``*`` or `` * ``)."""
    if coeff == 1:
        return term
    return f"-{term}" if coeff == -1 and times == "*" else f"{coeff}{times}{term}"


def signed_sum(parts: Iterable[str]) -> str:
    """``a + b - c`` from the printed terms ``a``, ``b``, ``-c``."""
    text = ""
    for k, part in enumerate(parts):
        if not k:
            text = part
        elif part.startswith("-"):
            text += f" - {part[1:]}"
        else:
            text += f" + {part}"
    return text


def isl_pw_aff(a: Affine, space: isl.Space) -> isl.PwAff:
    """`a` as an ``isl.PwAff`` on `space` (a parameter space naming each variable by its
    `isl_name`), built with isl's operations; a `WrapMod` is its pieces (`wrap_pieces`)."""
    ls = isl.LocalSpace.from_space(space)
    out = isl.PwAff.from_aff(isl.Aff.zero_on_domain(ls).set_constant_val(isl.Val.int_from_si(space.get_ctx(), a.const)))
    for term, coeff in a.coeffs:
        value = term_pw_aff(term, space)
        out = out.add(value.scale_val(isl.Val.int_from_si(space.get_ctx(), coeff)))
    return out


def term_pw_aff(term: Term, space: isl.Space) -> isl.PwAff:
    """One term of an affine form as an ``isl.PwAff`` on `space` (see `isl_pw_aff`)."""
    ctx = space.get_ctx()
    if isinstance(term, str):
        pos = space.find_dim_by_name(isl.dim_type.param, isl_name(term))
        return isl.PwAff.from_aff(isl.Aff.var_on_domain(isl.LocalSpace.from_space(space), isl.dim_type.param, pos))
    if isinstance(term, FloorDiv):
        return isl_pw_aff(term.num, space).scale_down_val(isl.Val.int_from_si(ctx, term.den)).floor()
    if isinstance(term, Mod):
        return isl_pw_aff(term.num, space).mod_val(isl.Val.int_from_si(ctx, term.den))
    pieces = [isl_pw_aff(value, space).intersect_domain(_wrap_where(term, q, space)) for q, value in _wrap_values(term)]
    out = pieces[0]
    for p in pieces[1:]:
        out = out.union_add(p)
    return out


def _wrap_where(w: WrapMod, q: int, space: isl.Space) -> isl.Set:
    """Where piece `q` of `w` holds: ``q*den <= num < (q+1)*den`` (piece 0 also where num < 0)."""
    num = isl_pw_aff(w.num, space)
    below = num.lt_set(isl_pw_aff(w.den.scale(q + 1), space))
    return below.intersect(num.ge_set(isl_pw_aff(w.den.scale(q), space))) if q else below


_ISL_RESERVED = frozenset(
    ["and", "or", "not", "min", "max", "floor", "ceil", "mod", "exists", "true", "false", "infty", "NaN", "domain", "range"]
)


def isl_name(name: str) -> str:
    """A C name as an isl identifier (isl keywords and CUDA's `threadIdx.x` are renamed)."""
    name = name.replace(".", "_")
    return name + "_" if name in _ISL_RESERVED else name


@dataclass(frozen=True)
class NotAffine:
    """Why an expression is not affine: the culprit sub-expression and a kind."""

    expr: ir.Expr
    kind: str  # "product" | "variable" | "array" | "call" | "float" | "other"
    detail: str = ""


def affine(expr: ir.Expr, allowed: Callable[[str], bool], wrapping: bool = False) -> Affine | NotAffine:
    """The affine form of `expr` over the names for which `allowed` is true; with `wrapping` (a
    subscript), ``e % m`` by a size is a `WrapMod` atom."""
    if isinstance(expr, ir.IntLit):
        return Affine.of({}, expr.value)
    if isinstance(expr, ir.Var):
        if allowed(expr.name):
            return Affine.of({expr.name: 1})
        return NotAffine(expr, "variable", expr.name)
    if isinstance(expr, ir.Cast):
        if isinstance(expr.type, ir.Scalar) and expr.type.is_integer:
            return affine(expr.operand, allowed, wrapping)
        return NotAffine(expr, "float")
    if isinstance(expr, ir.Unary) and expr.op in ("-", "+"):
        inner = affine(expr.operand, allowed, wrapping)
        if isinstance(inner, NotAffine) or expr.op == "+":
            return inner
        return -inner
    if isinstance(expr, ir.Binary) and expr.op in ("+", "-", "*", "/", "%"):
        return _binary(expr, allowed, wrapping)
    if isinstance(expr, ir.Binary) and expr.op == "&":
        return _low_bits(expr, allowed, wrapping)
    if isinstance(expr, ir.Subscript):
        return NotAffine(expr, "array")
    if isinstance(expr, ir.Call):
        return NotAffine(expr, "call")
    if isinstance(expr, ir.FloatLit):
        return NotAffine(expr, "float")
    return NotAffine(expr, "other")


def _binary(expr: ir.Binary, allowed: Callable[[str], bool], wrapping: bool) -> Affine | NotAffine:
    lhs = affine(expr.lhs, allowed, wrapping)
    if isinstance(lhs, NotAffine):
        return lhs
    rhs = affine(expr.rhs, allowed, wrapping)
    if isinstance(rhs, NotAffine):
        return rhs
    if wrapping and expr.op == "%" and not rhs.is_constant() and not lhs.atoms and not rhs.atoms:
        return Affine.of({WrapMod(lhs, rhs): 1})
    if expr.op == "+":
        return lhs + rhs
    if expr.op == "-":
        return lhs - rhs
    if expr.op == "*":
        if lhs.is_constant():
            return rhs.scale(lhs.const)
        if rhs.is_constant():
            return lhs.scale(rhs.const)
        return NotAffine(expr, "product")
    # "/" and "%": only by a positive constant, as a floor/mod atom
    if not rhs.is_constant() or rhs.const <= 0:
        return NotAffine(expr, "product")
    if lhs.is_constant():
        q = lhs.const // rhs.const if lhs.const >= 0 else -((-lhs.const) // rhs.const)
        return Affine.of({}, q if expr.op == "/" else lhs.const - q * rhs.const)
    atom = FloorDiv(lhs, rhs.const) if expr.op == "/" else Mod(lhs, rhs.const)
    return Affine.of({atom: 1})


def _low_bits(expr: ir.Binary, allowed: Callable[[str], bool], wrapping: bool) -> Affine | NotAffine:
    """``e & (2^k - 1)``, the low k bits of `e`: ``e mod 2^k`` (CUDA's ``lane = i & 31``, a
    double-buffered copy's ``(T / 16) & 1``), as ``e % 2^k`` where `e` is not negative, which the
    model assumes of every modulo (`core_compiler.scop.model.negative_division`)."""
    mask = affine(expr.rhs, allowed, wrapping)
    if isinstance(mask, NotAffine) or not mask.is_constant() or mask.const < 1 or mask.const & (mask.const + 1):
        return NotAffine(expr, "other")
    return _binary(ir.Binary("%", expr.lhs, ir.IntLit(mask.const + 1, expr.rhs.range), expr.range), allowed, wrapping)


WRAPS = 4  # `WrapMod`: how many times ``e`` of ``e % m`` may pass a multiple of ``m``


def _wrap_values(w: WrapMod) -> list[tuple[int, Affine]]:
    """The value ``e - q*m`` of ``e % m`` on piece `q`, for q below `WRAPS`."""
    return [(q, w.num - w.den.scale(q)) for q in range(WRAPS)]


def wrap_pieces(w: WrapMod) -> list[tuple[Affine, str]]:
    """``e % m`` in pieces ``(value, where)``, `where` as isl text: ``e - q*m`` where
    ``q*m <= e < (q+1)*m``, for q below `WRAPS` (the first piece also where ``e < 0``, which
    `core_compiler.scop.model.negative_division` excludes). It is C's value while
    ``0 <= e < WRAPS * m`` (`core_compiler.scop.model.modulo_out_of_range` checks that)."""
    e, m = w.num.isl(), w.den.isl()
    return [
        (value, f"{e} < {q + 1}*({m})" + (f" and {e} >= {q}*({m})" if q else ""))
        for q, value in _wrap_values(w)
    ]


# ------------------------------------------------------------------------------ conditions


@dataclass(frozen=True)
class Constraint:
    """``expr op 0`` with op ``>=`` or ``=``, or ``%k`` for "expr is a multiple of k".

    A condition is a DNF of these."""

    expr: Affine
    op: str


Dnf = tuple[tuple[Constraint, ...], ...]  # or of ands


def condition(expr: ir.Expr, allowed: Callable[[str], bool], negate: bool = False) -> Dnf | NotAffine:
    """An affine condition in disjunctive normal form (``a < b`` is ``b - a - 1 >= 0``)."""
    if isinstance(expr, ir.Unary) and expr.op == "!":
        return condition(expr.operand, allowed, not negate)
    if isinstance(expr, ir.Binary) and expr.op in ("&&", "||"):
        lhs = condition(expr.lhs, allowed, negate)
        if isinstance(lhs, NotAffine):
            return lhs
        rhs = condition(expr.rhs, allowed, negate)
        if isinstance(rhs, NotAffine):
            return rhs
        if (expr.op == "||") != negate:
            return lhs + rhs
        return tuple(a + b for a in lhs for b in rhs)
    if isinstance(expr, ir.Binary) and expr.op in _FLIP:
        split = _split_choice(expr)
        if split is not None:
            return condition(split, allowed, negate)
        left = affine(expr.lhs, allowed)
        if isinstance(left, NotAffine):
            return left
        right = affine(expr.rhs, allowed)
        if isinstance(right, NotAffine):
            return right
        op = _FLIP[expr.op] if negate else expr.op
        return _compare(left - right, op)
    value = affine(expr, allowed)  # `if (n)` means n != 0
    if isinstance(value, NotAffine):
        return value
    return _compare(value, "==" if negate else "!=")


def hoist_choice(e: ir.Expr) -> ir.Expr:
    """``f(c ? t : u)`` as ``c ? f(t) : f(u)`` through the integer arithmetic around a `?:`, so that
    each side can be affine on its own: ``MIN(ii + 32, n) - 1`` is
    ``ii + 32 < n ? ii + 32 - 1 : n - 1``."""
    if isinstance(e, ir.Ternary):
        return replace(e, then=hoist_choice(e.then), other=hoist_choice(e.other))
    if isinstance(e, ir.Unary | ir.Cast):
        return _through(hoist_choice(e.operand), lambda x: replace(e, operand=x))
    if isinstance(e, ir.Binary) and e.op in ("+", "-", "*", "/", "%"):
        lhs, rhs = hoist_choice(e.lhs), hoist_choice(e.rhs)
        if isinstance(lhs, ir.Ternary):
            return _through(lhs, lambda x: replace(e, lhs=x, rhs=rhs))
        return _through(rhs, lambda x: replace(e, lhs=lhs, rhs=x))
    return e


def _through(operand: ir.Expr, rebuild: Callable[[ir.Expr], ir.Expr]) -> ir.Expr:
    """`rebuild(operand)`, moved into both sides when `operand` is a `?:`."""
    if not isinstance(operand, ir.Ternary):
        return rebuild(operand)
    return replace(operand, then=hoist_choice(rebuild(operand.then)), other=hoist_choice(rebuild(operand.other)))


def choose_elements(e: ir.Expr) -> ir.Expr:
    """``a[c ? t : u]`` read as ``c ? a[t] : a[u]``, the same value: a MIN or MAX in a subscript
    becomes two plain reads, each made on its side of the condition."""
    subs = ir.sub_expressions(e)
    chosen = tuple(choose_elements(x) for x in subs)
    if any(a is not b for a, b in zip(chosen, subs, strict=True)):
        e = ir.with_sub_expressions(e, chosen)
    if not isinstance(e, ir.Subscript):
        return e
    for k, index in enumerate(e.indices):
        split = hoist_choice(index)
        if isinstance(split, ir.Ternary):
            def at(x: ir.Expr, e: ir.Subscript = e, k: int = k) -> ir.Expr:
                return choose_elements(replace(e, indices=(*e.indices[:k], x, *e.indices[k + 1 :])))

            return ir.Ternary(split.cond, at(split.then), at(split.other), e.range)
    return e


def _split_choice(cmp: ir.Binary) -> ir.Expr | None:
    """``x < (c ? t : u)`` as ``(c && x < t) || (!c && x < u)``; None without a `?:` operand."""
    lhs, rhs = hoist_choice(cmp.lhs), hoist_choice(cmp.rhs)
    for side in (lhs, rhs):
        if isinstance(side, ir.Ternary):
            def pick(x: ir.Expr, side: ir.Ternary = side) -> ir.Expr:
                return replace(cmp, lhs=x if side is lhs else lhs, rhs=x if side is rhs else rhs)

            r = cmp.range
            yes = ir.Binary("&&", side.cond, pick(side.then), r)
            no = ir.Binary("&&", ir.Unary("!", side.cond, r), pick(side.other), r)
            return ir.Binary("||", yes, no, r)
    return None


_FLIP = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}


def _compare(d: Affine, op: str) -> Dnf:
    """``d op 0`` as DNF over ``>= 0`` and ``= 0`` constraints."""
    one = Affine.of({}, 1)
    if op == ">=":
        return ((Constraint(d, ">="),),)
    if op == ">":
        return ((Constraint(d - one, ">="),),)
    if op == "<=":
        return ((Constraint(-d, ">="),),)
    if op == "<":
        return ((Constraint(-d - one, ">="),),)
    if op == "==":
        return ((Constraint(d, "="),),)
    return ((Constraint(d - one, ">="),), (Constraint(-d - one, ">="),))


def dnf_isl(dnf: Dnf) -> str:
    """isl text of a DNF: ``(a >= 0 and b = 0) or (...)``."""
    if not dnf:
        return "false"
    ors = []
    for conj in dnf:
        ands = [_constraint_isl(c) for c in conj] or ["true"]
        ors.append("(" + " and ".join(ands) + ")")
    return " or ".join(ors)


def _constraint_isl(c: Constraint) -> str:
    if c.op.startswith("%"):  # stride: expr is a multiple of the modulus
        return f"({c.expr.isl()}) mod {c.op[1:]} = 0"
    return f"{c.expr.isl()} {c.op} 0"


# ------------------------------------------------------------------------------ polynomials

Monomial = tuple[str, ...]  # sorted names; () is the constant term
Poly = dict[Monomial, int]


def polynomial(expr: ir.Expr, allowed: Callable[[str], bool]) -> Poly | None:
    """The integer polynomial of `expr` over allowed names, or None (used for delinearization)."""
    if isinstance(expr, ir.IntLit):
        return {(): expr.value}
    if isinstance(expr, ir.Var):
        return {(expr.name,): 1} if allowed(expr.name) else None
    if isinstance(expr, ir.Cast):
        return polynomial(expr.operand, allowed)
    if isinstance(expr, ir.Unary) and expr.op == "-":
        p = polynomial(expr.operand, allowed)
        return None if p is None else {m: -c for m, c in p.items()}
    if isinstance(expr, ir.Binary) and expr.op in ("+", "-", "*"):
        a, b = polynomial(expr.lhs, allowed), polynomial(expr.rhs, allowed)
        if a is None or b is None:
            return None
        if expr.op == "*":
            out: Poly = {}
            for ma, ca in a.items():
                for mb, cb in b.items():
                    m = tuple(sorted(ma + mb))
                    out[m] = out.get(m, 0) + ca * cb
            return {m: c for m, c in out.items() if c}
        sign = 1 if expr.op == "+" else -1
        out = dict(a)
        for m, c in b.items():
            out[m] = out.get(m, 0) + sign * c
        return {m: c for m, c in out.items() if c}
    return None


def poly_to_affine(p: Poly) -> Affine | None:
    if any(len(m) > 1 for m in p):
        return None
    return Affine.of({m[0]: c for m, c in p.items() if m}, p.get((), 0))


def delinearize(p: Poly, size_params: frozenset[str]) -> tuple[list[Affine], list[str]] | None:
    """Split a linearized subscript into per-dimension affine subscripts.

    ``i*n + j`` with size parameter ``n`` gives ``([i, j], ["n"])``;
    ``i*n*m + j*m + k`` gives ``([i, j, k], ["n", "m"])`` (sizes outermost first).
    """
    dims: list[Affine] = []
    sizes: list[str] = []
    while True:
        aff = poly_to_affine(p)
        if aff is not None:
            dims.insert(0, aff)
            return (dims, sizes) if sizes else None
        nonlinear = [m for m in p if len(m) > 1]
        common = set(nonlinear[0]).intersection(*map(set, nonlinear[1:])) & size_params
        if not common:
            return None
        s = sorted(common)[-1]
        quotient: Poly = {}
        rest: Poly = {}
        for m, c in p.items():
            if s in m:
                lst = list(m)
                lst.remove(s)
                quotient[tuple(lst)] = quotient.get(tuple(lst), 0) + c
            else:
                rest[m] = c
        inner = poly_to_affine(rest)
        if inner is None:
            return None
        dims.insert(0, inner)
        sizes.insert(0, s)
        p = quotient
