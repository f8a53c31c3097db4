"""Random C functions that stress what hexplore once miscompiled (issue 26).

`generate(seed)` is deterministic: the same seed gives the same `Program` (its C text, sizes and
what to differentiate). Every program is well-defined C at every size it is checked at:

- Each iterator ``v`` of a loop over size ``P`` stays within ``lo <= v <= P``: its upper bound
  (exclusive) never exceeds ``P + 1`` and ``lo`` is what its lower bound guarantees (0 or 1).
- A subscript is built with an upper bound as ``{P: coefficient, "": constant}``; every array
  extent is the largest bound over its accesses, plus one. Subscripts are never negative in C:
  a term ``v - 1`` only where ``v >= 1``, ``P - v`` for ``v <= P``, ``e % P`` only where a loop
  around runs ``v < P`` (so ``P >= 1`` there) and ``e >= 0``.
- Divisions and modulos are by positive constants or by such sizes: no division by zero.
  Numerators are non-negative, except in the *negative* forms (``(v - 3) / 2 + 2``,
  ``(v - 2) % 3 + 2``, a bound ``(v - 1) / 2 + 1``) whose C value is still in bounds but which
  C rounds otherwise than floor: hexplore must refuse those (remark `NegativeDivision`) or get
  them right.
- Integers stay small (no overflow); floating values stay tame (convex mixes of inputs in
  [0.5, 1.5), positive coefficients, so no cancellation), so the comparison's rounding slack is
  the only difference allowed.

What a program may contain (each chosen at random): ``/`` and ``%`` by constants and by sizes in
subscripts and bounds, MIN/MAX macros and ``?:`` in bounds and values, iterator names that are
prefixes of each other (``i``, ``ii``, ``i2``) or collide with generated names (``c0``, ``b0``,
``floor``, ``mod``), arrays named like generated copies (``shared_A``, ``private_B``, ``dev_C``),
data-dependent ifs, local scalars and local arrays, reductions into scalars and arrays (a
returned sum), ``float`` or ``double``, VLA parameters or macro sizes (``#define N 40``),
imperfect and triangular nests, and time loops over stencils.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

HEADER = (
    "#define MIN(a, b) ((a) < (b) ? (a) : (b))\n"
    "#define MAX(a, b) ((a) > (b) ? (a) : (b))\n"
)

ITERATOR_THEMES = (
    ("i", "ii", "i2", "iii"),
    ("i", "j", "k", "l"),
    ("c0", "c1", "b0", "t0"),
    ("floor", "mod", "l", "ll"),
    ("h0", "T0", "o0", "p0"),
    ("j", "jj", "j1", "j2"),
)
ARRAY_NAMES = ("A", "B", "C", "shared_A", "private_B", "dev_C", "x", "y")
SCALAR_NAMES = ("s", "acc", "b1", "c2", "sum")
LOCAL_NAMES = ("t", "tmp", "c3", "w")


Bound = dict[str, int]  # {size: coefficient, "": constant}: an upper bound of an integer expression


def _join(*bounds: Bound) -> Bound:
    """An upper bound of the largest of several non-negative values: each coefficient's max."""
    out: Bound = {}
    for b in bounds:
        for k, v in b.items():
            out[k] = max(out.get(k, 0), v)
    return out


def _plus(a: Bound, b: Bound) -> Bound:
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) + v
    return out


@dataclass(frozen=True)
class Loop:
    var: str
    lower: str
    upper: str  # exclusive
    size: str  # P: var <= P
    lo: int  # var >= lo
    below: bool  # var < P wherever it runs (so P >= 1 there)


@dataclass
class Program:
    seed: int
    source: str
    sizes: tuple[str, ...]  # the size parameters (or macros) to set
    macro: bool  # sizes are macros (`#define N 40`), set through size_limits
    wrt: tuple[str, ...]  # floating array parameters it reads: what `grad` differentiates by
    returns: bool
    dtype: str
    features: tuple[str, ...] = ()
    function: str = "f"
    arrays: tuple[tuple[str, tuple[str, ...]], ...] = ()  # each array parameter and its extents, as C

    def main(self, sizes: dict[str, int]) -> str:
        """A C `main` that calls `f` at `sizes` on heap arrays of exactly the declared extents (for
        running the program under the sanitizers); with ``-D`` for macro sizes."""
        lines = ["#include <stdlib.h>", "#include <stdio.h>", "int main(void)", "{"]
        if not self.macro:
            lines += [f"  int {s} = {v};" for s, v in sizes.items()]
        args = [*([] if self.macro else self.sizes)]
        for k, (name, dims) in enumerate(self.arrays):
            count = " * ".join(f"({d})" for d in dims)
            lines += [
                f"  {self.dtype} *{name} = malloc(sizeof({self.dtype}) * {count});",
                f"  for (long q = 0; q < {count}; q++) {name}[q] = 0.5 + (double)((q * 7 + {k}) % 10) / 10;",
            ]
            args.append(f"(void *){name}")
        call = f"f({', '.join(args)})"
        lines.append(f'  printf("%g\\n", (double){call});' if self.returns else f"  {call};")
        lines += [f"  free({name});" for name, _ in self.arrays]
        return "\n".join([*lines, "  return 0;", "}", ""])

    @property
    def size_limits(self) -> dict[str, str | None] | None:
        return {s: s for s in self.sizes} if self.macro else None


@dataclass
class _Array:
    name: str
    ndims: int
    bounds: list[Bound] = field(default_factory=list)  # per dimension
    written: bool = False
    read: bool = False

    def __post_init__(self) -> None:
        self.bounds = [{"": 0} for _ in range(self.ndims)]


class _Gen:
    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)
        self.seed = seed
        self.features: set[str] = set()
        r = self.r
        self.dtype = r.choice(("double", "double", "float"))
        self.suffix = "f" if self.dtype == "float" else ""
        self.macro = r.random() < 0.25
        count = r.choice((1, 1, 2))
        self.sizes = (("N", "M") if self.macro else ("n", "m"))[:count]
        names = list(ARRAY_NAMES)
        r.shuffle(names)
        self.arrays = [_Array(nm, r.choice((1, 1, 2, 2, 3))) for nm in names[: r.randint(2, 4)]]
        self.locals_: list[str] = []  # local scalars in scope (name)
        self.returns = r.random() < 0.2
        # each program stresses a few things, so that most of them are modeled and run
        odds = {"divmod": 0.5, "minmax": 0.4, "sizemod": 0.3, "negative": 0.1, "if": 0.3, "local": 0.25,
                "local-array": 0.2, "ternary": 0.3}  # fmt: skip
        self.allow = {k: r.random() < p for k, p in odds.items()}
        self.scalar = r.choice(SCALAR_NAMES)
        self.local_counter = 0

    # ----------------------------------------------------------------- numbers

    def lit(self, value: str) -> str:
        return value + self.suffix if "." in value else value

    def coeff(self) -> str:
        return self.lit(self.r.choice(("0.5", "0.25", "0.125", "0.375")))

    # ----------------------------------------------------------------- loops

    def loop(self, var: str, outer: list[Loop]) -> Loop:
        r = self.r
        P = r.choice(self.sizes)
        same = [lp for lp in outer if lp.size == P]
        # (text, lo)
        lowers: list[tuple[str, int]] = [("0", 0), ("0", 0), ("1", 1)]
        for lp in same:
            lowers += [(lp.var, lp.lo), (f"{P} - {lp.var}", 0)]
        for lp in outer:
            lowers += [(f"{lp.var} / 2", 0), (f"({lp.var} + 1) / 3", 0)] if self.allow["divmod"] else []
            lowers += [(f"MAX(1, {lp.var} - 2)", 1)] if self.allow["minmax"] else []
        lower, lo = r.choice(lowers)
        # (text, below P)
        uppers: list[tuple[str, bool]] = [(P, True), (P, True), (f"{P} + 1", False), (f"{P} - 1", True)]
        if self.allow["divmod"]:
            uppers += [(f"{P} / 2 + 1", False), (f"({P} + 1) / 2", True), (f"{P} % 7", True)]
        for lp in same:
            uppers += [(f"{lp.var} + 1", lp.below), (f"{P} - {lp.var}", True)]
            if self.allow["minmax"]:
                uppers += [(f"MIN({P}, {lp.var} + 3)", True), (f"MIN({P}, 2 * {lp.var} + 1)", True)]
            if self.allow["ternary"]:
                uppers += [(f"({lp.var} < 3 ? {lp.var} + 1 : 3)", lp.below)]
            if self.allow["divmod"]:
                uppers += [(f"{lp.var} / 2 + 1", lp.below)]
        for lp in outer:
            if self.allow["minmax"] and self.allow["divmod"]:
                uppers += [(f"MIN({P}, {lp.var} % 4 + 2)", True)]
            if self.allow["negative"] and r.random() < 0.3:  # C rounds otherwise than floor at 0
                uppers += [(f"MIN({P}, ({lp.var} - 1) / 2 + 1)", True)]
                self.features.add("negative-division")
        upper, below = r.choice(uppers)
        if "/" in lower + upper or "%" in lower + upper:
            self.features.add("div-mod-bound")
        if "MIN" in lower + upper or "MAX" in lower + upper or "?" in upper:
            self.features.add("min-max-bound")
        return Loop(var, lower, upper, P, lo, below)

    # ----------------------------------------------------------------- subscripts

    def subscript(self, loops: list[Loop]) -> tuple[str, Bound]:
        r = self.r
        if not loops or r.random() < 0.08:
            c = r.randint(0, 2)
            return str(c), {"": c}
        v = r.choice(loops)
        P, bv = v.size, {v.size: 1}
        c = r.choice((0, 0, 0, 1, 2))
        cs = f" + {c}" if c else ""
        forms: list[tuple[str, Bound]] = [
            (f"{v.var}{cs}", _plus(bv, {"": c})),
            (f"{v.var}{cs}", _plus(bv, {"": c})),
            (f"2 * {v.var}{cs}", _plus({P: 2}, {"": c})),
            (f"{P} - {v.var}{cs}", _plus(bv, {"": c})),
        ]
        if v.lo >= 1:
            forms.append((f"{v.var} - 1{cs}", _plus(bv, {"": c})))
        w = r.choice(loops)
        if w is not v:
            forms.append((f"{v.var} + {w.var}{cs}", _plus(_plus(bv, {w.size: 1}), {"": c})))
        if self.allow["divmod"]:
            k = r.choice((2, 3, 5))
            forms += [
                (f"{v.var} / {r.choice((2, 3, 4))}{cs}", _plus(bv, {"": c})),
                (f"{v.var} % {k}{cs}", {"": k - 1 + c}),
                (f"({v.var} + 1) / {k}{cs}", _plus(bv, {"": c + 1})),
            ]
            if w is not v:
                forms.append((f"({v.var} + {w.var}) / 2{cs}", _plus(_plus(bv, {w.size: 1}), {"": c})))
        if self.allow["minmax"]:
            top = f"{P} - 1" if v.below else P  # P >= 1 where v < P
            forms += [(f"MIN({v.var}, {top}){cs}", _plus(bv, {"": c})), (f"MAX({v.var} - 2, 0){cs}", _plus(bv, {"": c}))]
        if self.allow["ternary"]:
            forms.append((f"({v.var} > 0 ? {v.var} - 1 : 0){cs}", _plus(bv, {"": c})))
        if v.below and self.allow["sizemod"]:  # v < P here, so P >= 1: `% P` is defined, below P
            k = r.choice((1, 2))
            forms += [(f"({v.var} + {k}) % {P}", bv), (f"({v.var} + {P} - 1) % {P}", bv)]
            if w is not v and w.size != P:
                forms.append((f"({v.var} + {w.var}) % {P}", _plus(bv, {})))
        if self.allow["negative"] and r.random() < 0.3:  # C truncates where floor rounds down
            forms += [(f"({v.var} - 3) / 2 + 2", _plus(bv, {"": 2})), (f"({v.var} - 2) % 3 + 2", {"": 4})]
            self.features.add("negative-division")
        text, bound = r.choice(forms)
        if "/" in text or "%" in text:
            self.features.add("div-mod-subscript")
        if f"% {P}" in text:
            self.features.add("modulo-by-size")
        if "MIN" in text or "MAX" in text or "?" in text:
            self.features.add("min-max-subscript")
        return text, bound

    def access(self, array: _Array, loops: list[Loop]) -> str:
        subs = []
        for d in range(array.ndims):
            text, bound = self.subscript(loops)
            array.bounds[d] = _join(array.bounds[d], bound)
            subs.append(f"[{text}]")
        return array.name + "".join(subs)

    # ----------------------------------------------------------------- values

    def read(self, loops: list[Loop]) -> str:
        r = self.r
        if self.locals_ and r.random() < 0.25:
            return r.choice(self.locals_)
        a = r.choice(self.arrays)
        a.read = True
        return self.access(a, loops)

    def value(self, loops: list[Loop], plain: bool = False) -> str:
        """A floating expression of tame magnitude."""
        r = self.r
        n = r.randint(1, 3)
        terms = [f"{self.coeff()} * {self.read(loops)}" for _ in range(n)]
        if r.random() < 0.3:
            terms.append(self.lit("0.0625"))
        expr = " + ".join(terms)
        if plain:
            return expr
        roll = r.random()
        if roll < 0.12 and self.allow["minmax"]:
            self.features.add("min-max-value")
            return f"MAX({expr}, {self.coeff()} * {self.read(loops)})"
        if roll < 0.2 and self.allow["ternary"]:
            self.features.add("ternary-value")
            a = self.read(loops)
            return f"({a} > {self.lit('1.0')} ? {expr} : {self.coeff()} * {a})"
        if roll < 0.25 and loops:
            self.features.add("iterator-value")
            v = r.choice(loops)
            return f"{expr} + {self.lit('0.01')} * {v.var}"
        return expr

    def target(self, loops: list[Loop]) -> str:
        r = self.r
        a = r.choice(self.arrays)
        a.written = True
        return self.access(a, loops)

    def statement(self, loops: list[Loop], pad: str) -> list[str]:
        """One statement (or a small block) inside `loops`."""
        r = self.r
        roll = r.random()
        if roll < 0.15 and loops and self.allow["if"]:  # a data-dependent if
            self.features.add("data-dependent-if")
            cond = f"{self.read(loops)} > {self.lit(r.choice(('1.0', '0.9', '1.2')))}"
            lines = [f"{pad}if ({cond})", f"{pad}  {self.target(loops)} = {self.value(loops)};"]
            if r.random() < 0.5:
                lines += [f"{pad}else", f"{pad}  {self.target(loops)} {r.choice(('=', '+='))} {self.value(loops, True)};"]
            return lines
        if roll < 0.27 and loops and self.allow["local"]:  # a local scalar
            self.features.add("local-scalar")
            name = self._local_name()
            lines = [f"{pad}{self.dtype} {name} = {self.value(loops)};"]
            self.locals_.append(name)
            lines.append(f"{pad}{self.target(loops)} = {self.value(loops, True)} + {self.coeff()} * {name};")
            return lines
        if roll < 0.35 and loops and self.allow["local-array"]:  # a local array filled by a loop, then read
            self.features.add("local-array")
            name = self._local_name()
            k = r.choice((2, 3, 4))
            q = self._fresh_iterator(loops)
            saved = self.locals_
            self.locals_ = []
            fill = self.value(loops, True)
            self.locals_ = saved
            lines = [
                f"{pad}{self.dtype} {name}[{k}];",
                f"{pad}for (int {q} = 0; {q} < {k}; {q}++)",
                f"{pad}  {name}[{q}] = {fill} + {self.lit('0.125')} * {q};",
                f"{pad}{self.target(loops)} = {self.coeff()} * {name}[0] + {self.coeff()} * {name}[{k - 1}];",
            ]
            return lines
        if roll < 0.5 and self.returns:  # a reduction into the returned scalar
            self.features.add("scalar-reduction")
            return [f"{pad}{self.scalar} += {self.value(loops, True)};"]
        op = "+=" if r.random() < 0.35 else "="
        if op == "+=":
            self.features.add("array-reduction")
        return [f"{pad}{self.target(loops)} {op} {self.value(loops)};"]

    def _local_name(self) -> str:
        self.local_counter += 1
        return f"{self.r.choice(LOCAL_NAMES)}{self.local_counter}"

    def _fresh_iterator(self, loops: list[Loop]) -> str:
        used = {lp.var for lp in loops}
        for name in ("q", "qq", "q2", "c0", "floor"):
            if name not in used:
                return name
        return "q9"

    # ----------------------------------------------------------------- nests

    def nest(self, theme: tuple[str, ...], depth: int, loops: list[Loop], pad: str) -> list[str]:
        """A loop at `depth` (0-based) of a nest of `len(theme)` loops, with statements before
        and after the inner loop (imperfect) and always some at the innermost level."""
        r = self.r
        lp = self.loop(theme[depth], loops)
        inner = [*loops, lp]
        saved = list(self.locals_)
        body: list[str] = []
        innermost = depth + 1 == len(theme)
        if not innermost and r.random() < 0.25:
            self.features.add("imperfect")
            body += self.statement(inner, pad + "  ")
        if innermost:
            for _ in range(r.randint(1, 2)):
                body += self.statement(inner, pad + "  ")
        else:
            body += self.nest(theme, depth + 1, inner, pad + "  ")
        if not innermost and r.random() < 0.2:
            self.features.add("imperfect")
            body += self.statement(inner, pad + "  ")
        self.locals_ = saved
        return [f"{pad}for (int {lp.var} = {lp.lower}; {lp.var} < {lp.upper}; {lp.var}++) {{", *body, f"{pad}}}"]

    def stencil(self, pad: str) -> list[str]:
        """A time loop over a 1-D or 2-D stencil: `B` from `A`'s neighbours, then back."""
        self.features.add("time-stencil")
        r = self.r
        P = r.choice(self.sizes)
        two = r.random() < 0.4
        a, b = self.arrays[0], self.arrays[1]
        a.written = b.written = a.read = b.read = True
        a.ndims = b.ndims = 2 if two else 1
        top = {P: 1, "": 1}
        a.bounds = [_join(top) for _ in range(a.ndims)]
        b.bounds = [_join(top) for _ in range(b.ndims)]
        it = r.choice(ITERATOR_THEMES)
        t, i, j = "t" if "t" not in it else "tt", it[0], it[1]
        steps = r.choice((1, 2, 3))
        c = self.coeff
        if two:
            upd = (f"{b.name}[{i}][{j}] = {c()} * ({a.name}[{i}][{j}] + {a.name}[{i} - 1][{j}] + "
                   f"{a.name}[{i} + 1][{j}] + {a.name}[{i}][{j} - 1] + {a.name}[{i}][{j} + 1]);")  # fmt: skip
            back = f"{a.name}[{i}][{j}] = {b.name}[{i}][{j}];"
            loops = [f"for (int {i} = 1; {i} < {P}; {i}++)", f"  for (int {j} = 1; {j} < {P}; {j}++)"]
            return [
                f"{pad}for (int {t} = 0; {t} < {steps}; {t}++) {{",
                *(f"{pad}  {x}" for x in loops), f"{pad}      {upd}",
                *(f"{pad}  {x}" for x in loops), f"{pad}      {back}",
                f"{pad}}}",
            ]  # fmt: skip
        periodic = r.random() < 0.4
        if periodic:  # a periodic stencil: neighbours modulo the size
            self.features.add("modulo-by-size")
            upd = (f"{b.name}[{i}] = {c()} * ({a.name}[({i} + {P} - 1) % {P}] + {a.name}[{i}] + "
                   f"{a.name}[({i} + 1) % {P}]);")  # fmt: skip
            lo = "0"
        else:
            upd = f"{b.name}[{i}] = {c()} * ({a.name}[{i} - 1] + {a.name}[{i}] + {a.name}[{i} + 1]);"
            lo = "1"
        return [
            f"{pad}for (int {t} = 0; {t} < {steps}; {t}++) {{",
            f"{pad}  for (int {i} = {lo}; {i} < {P}; {i}++)", f"{pad}    {upd}",
            f"{pad}  for (int {i} = {lo}; {i} < {P}; {i}++)", f"{pad}    {a.name}[{i}] = {b.name}[{i}];",
            f"{pad}}}",
        ]  # fmt: skip

    # ----------------------------------------------------------------- the function

    def program(self) -> Program:
        r = self.r
        body: list[str] = []
        if r.random() < 0.15:
            body += self.stencil("  ")
        else:
            for _ in range(r.choice((1, 1, 1, 2))):
                theme = r.choice(ITERATOR_THEMES)
                depth = r.choice((1, 2, 2, 3, 3))
                order = list(theme[:depth])
                if r.random() < 0.5:
                    r.shuffle(order)
                body += self.nest(tuple(order), 0, [], "  ")
        used = [a for a in self.arrays if a.read or a.written]
        params = [f"int {s}" for s in self.sizes] if not self.macro else []
        decls = []
        for a in used:
            dims = "".join(f"[{_extent(b)}]" for b in a.bounds)
            decls.append(f"{self.dtype} {a.name}{dims}")
        if not any(a.written for a in used) and not self.returns:
            self.returns = True  # something must come out
        head = HEADER
        if self.macro:
            self.features.add("macro-sizes")
            head += "".join(f"#ifndef {s}\n#define {s} {40 - 8 * k}\n#endif\n" for k, s in enumerate(self.sizes))
        else:
            self.features.add("vla")
        ret = self.dtype if self.returns else "void"
        lines = [head, f"{ret} f({', '.join([*params, *decls])})", "{"]
        if self.returns:
            lines.append(f"  {self.dtype} {self.scalar} = {self.lit('0.0')};")
            self.features.add("returns")
        lines += body
        if self.returns:
            lines.append(f"  return {self.scalar};")
        lines.append("}")
        wrt = tuple(a.name for a in used if a.read)
        self.features.add(self.dtype)
        shapes = tuple((a.name, tuple(_extent(b) for b in a.bounds)) for a in used)
        return Program(self.seed, "\n".join(lines) + "\n", self.sizes, self.macro, wrt, self.returns, self.dtype,
                       tuple(sorted(self.features)), arrays=shapes)  # fmt: skip


def _extent(b: Bound) -> str:
    terms = [p if c == 1 else f"{c} * {p}" for p, c in sorted(b.items()) if p and c]
    return " + ".join([*terms, str(b.get("", 0) + 1)])


def generate(seed: int) -> Program:
    """The program of `seed`: the same every time."""
    return _Gen(seed).program()


def size_sets(program: Program, seed: int) -> list[dict[str, int]]:
    """A size that is no multiple of a tile (first), then 1, then 0."""
    r = random.Random(seed * 7919 + 1)
    big = {s: r.choice((5, 7, 11, 13, 37)) for s in program.sizes}
    return [big, dict.fromkeys(program.sizes, 1), dict.fromkeys(program.sizes, 0)]
