"""Reverse (adjoint) mode as a SCoP-to-SCoP transform.

The derivative function runs the primal once (the *forward sweep*), then the *reverse sweep*:
every statement's adjoint, in the reverse order of statement instances — statement lists
reversed, every loop run backwards (``for (i = n - 1; i >= 0; i--)``), conditions unchanged
(they are affine in loop counters and sizes, which the primal never changes). Both sweeps are
static control with affine subscripts, so the derivative is itself a SCoP.

The adjoint of ``T = e(r1, r2, ...)`` is ``d_r += d_T * de/dr`` for every active read, then
``d_T = 0`` (the old value of T did not reach the output). Compound statements keep ``d_T``
(``T += e``: dT/dT_old is 1) or scale it (``T *= beta``: ``d_T *= beta``). Where a read may touch
the target element of the same instance, the adjoint goes through a temporary ``adj_S``.

Values the partials need are read from the primal arrays in the reverse sweep when nothing writes
them at or after the instance that read them (isl decides, from the access relations and the
original schedule). Otherwise they are kept: recomputed, when the value is a local scalar defined
once, in the same loop body, from values still available; else stored in the forward sweep in a
*tape*, an array expanded over the statement's loops (``tape_S1_C[i][j] = C[i][j]``).

Shadows accumulate (``+=``): the caller zeroes the shadows of pure inputs and seeds the shadows of
outputs, as Enzyme's ``enzyme_dup`` does; on return the shadow of an output holds the derivative
with respect to that array's value on entry.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from core_compiler.ad import accesses
from core_compiler.ad.cprint import NO_RANGE, ZERO, add, is_const, mul, substitute, value_leaves
from core_compiler.ad.emit import (
    Context,
    Leaf,
    block_lines,
    name_of,
    param_text,
    shadow_param_text,
    shadow_params,
)
from core_compiler.ad.rules import partials
from core_compiler.errors import NotDifferentiable
from core_compiler.frontend import ir
from core_compiler.remarks import analysis, missed
from core_compiler.scop.model import Access, Statement
from core_compiler.scop.region import LoopInfo
from core_compiler.source import SourceRange


@dataclass(frozen=True)
class Tape:
    name: str
    statement: str
    value: str  # the C text of the value kept
    elem_type: str
    iterators: tuple[str, ...]
    extents: tuple[accesses.Extent, ...]
    range: SourceRange

    def access(self) -> ir.Subscript:
        idx: tuple[ir.Expr, ...] = tuple(
            ir.Var(v, NO_RANGE) if e.lower == 0 else ir.Binary("-", ir.Var(v, NO_RANGE), ir.IntLit(e.lower, NO_RANGE), NO_RANGE)
            for v, e in zip(self.iterators, self.extents, strict=True)
        ) or (ir.IntLit(0, NO_RANGE),)
        return ir.Subscript(self.name, idx, NO_RANGE, NO_RANGE)

    @property
    def sizes(self) -> tuple[str, ...]:
        return tuple(e.size for e in self.extents) or ("1",)

    def param(self) -> str:
        return f"{self.elem_type} {self.name}" + "".join(f"[{s}]" for s in self.sizes)


@dataclass
class _Plan:
    node: ir.Assign | ir.Decl
    st: Statement | None
    target: Leaf
    op: str
    short: bool  # `T += e` with e not reading T's array: d_T is left alone
    increments: list[tuple[Leaf, ir.Expr]] = field(default_factory=list)
    guards: dict[int, tuple[ir.Expr, ...]] = field(default_factory=dict)  # by id of an increment's leaf
    self_partial: ir.Expr | None = None
    alias: bool = False
    stores: list[Tape] = field(default_factory=list)


@dataclass
class Adjoint:
    """The reverse-mode functions of one primal function, as C text."""

    name: str  # the entry point, `f_grad`
    core: str  # the SCoP: `f_grad_core` when tapes are needed, else `f_grad`
    text: str
    tapes: tuple[Tape, ...]


class Reverse:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.tapes: dict[tuple[str, str], Tape] = {}
        self.recomputed: set[str] = set()
        self.plans: dict[int, _Plan] = {}
        self._overwritten: dict[tuple[str, int], bool] = {}
        self.parallel = {lp.loop.id for lp in ctx.deps.loops if lp.parallel}
        self.defs = _single_definitions(ctx)
        self.int_params = frozenset(
            p.name for p in ctx.fn.params if isinstance(p.type, ir.Scalar) and p.type.is_integer
        )
        for node in _nodes(ctx.body):
            st = ctx.statements.get(id(node))
            plan = self.plan(node, st) if st is not None else None
            if plan is not None:
                self.plans[id(node)] = plan
        self.refuse_unplanned()
        for plan in self.plans.values():
            self.reduction_remark(plan)

    def refuse_unplanned(self) -> None:
        """Every assignment to an active variable has its adjoint, or the derivative is refused:
        a statement the reverse sweep skipped would make a gradient silently wrong."""
        ctx = self.ctx
        planned = {id(p.st) for p in self.plans.values()}
        missing: list[tuple[SourceRange, str]] = []
        for node in _nodes(ctx.body):
            if isinstance(node, ir.Decl) and node.init is None:
                continue
            target, _, _ = ctx.parts(node)
            st = ctx.statements.get(id(node))
            if ctx.is_active(target) and (st is None or id(st) not in planned):
                missing.append((node.range, ctx.c(target)))
        nodes = {id(ctx.statements.get(id(n))) for n in _nodes(ctx.body)}
        for st in ctx.scop.statements:
            target = st.info.assignment.target
            if ctx.is_active(target) and id(st) not in nodes:
                missing.append((st.range, ctx.c(target)))
        missing = list(dict.fromkeys(missing))
        if missing:
            remarks = tuple(missed(
                "ad", "NotInReverseSweep", f"the reverse sweep cannot differentiate this assignment to "
                f"`{what}` (hexplore found no statement of its model for it), so `{ctx.fn.name}` is not "
                "differentiated in reverse mode rather than given a wrong gradient; forward mode "
                "handles it", rng, ctx.fn.name, target=what) for rng, what in missing)  # fmt: skip
            where = ", ".join(f"line {r.line}" for r, _ in missing)
            raise NotDifferentiable(
                f"reverse mode cannot differentiate the assignment(s) at {where} of `{ctx.fn.name}`; "
                "use --mode forward", remarks)

    # ------------------------------------------------------------------------- planning

    def plan(self, node: ir.Assign | ir.Decl, st: Statement) -> _Plan | None:
        ctx = self.ctx
        target, op, value = ctx.parts(node)
        if not ctx.is_active(target):
            return None
        same = any(name_of(leaf) == name_of(target) for leaf in value_leaves(value))
        short = op in ("+=", "-=") and not same
        full = value if short or op == "=" else ir.Binary(op[0], target, value, node.range)
        pairs, notes = partials(full, ctx.is_active)
        for n in notes:
            ctx.remarks.append(analysis(
                "ad", "NonDifferentiable", f"{n.reason}: its derivative is taken as zero (on the "
                "path from `--wrt` to the outputs)", n.range, ctx.fn.name))  # fmt: skip
        plan = _Plan(node, st, target, op, short)
        own: ir.Expr | None = None
        groups: dict[tuple[str, str], tuple[Leaf, ir.Expr, tuple[ir.Expr, ...]]] = {}
        for leaf, p in pairs:
            if ctx.c(leaf) == ctx.c(target):
                own = p if own is None else add(own, p)
                continue
            guard = self.guard(st, value, leaf)
            key = (ctx.c(leaf), " && ".join(ctx.c(c) for c in guard))
            old = groups.get(key)
            groups[key] = (leaf, p, guard) if old is None else (old[0], add(old[1], p), guard)
        if own is not None and not short:
            plan.self_partial = self.available(own, st, plan)
        write = st.writes[0] if st.writes else None
        for leaf, p, guard in groups.values():
            plan.increments.append((leaf, self.available(p, st, plan)))
            if guard:
                plan.guards[id(leaf)] = tuple(self.available(c, st, plan) for c in guard)
            acc = ctx.read_access(st, leaf)
            if name_of(leaf) == name_of(target) and (acc is None or write is None
                                                     or accesses.may_alias_in_instance(acc, write)):  # fmt: skip
                plan.alias = True
        return plan

    def guard(self, st: Statement, value: ir.Expr, leaf: Leaf) -> tuple[ir.Expr, ...]:
        """The conditions under which the increment of `leaf` runs: a read that C makes only under
        an affine `?:` condition (``x[MAX(j - 2, 0)]`` read as ``j - 2 > 0 ? x[j - 2] : x[0]``) is
        incremented under the `?:` conditions C evaluates it under, since its subscript may be
        outside the array where they fail. Two reads of one element on the two sides of a `?:`
        have different guards, so different increments. A condition that reads data is made
        available (taped) by the caller like the partials: the reverse sweep runs after the
        forward sweep has perhaps overwritten what it reads."""
        acc = self.ctx.read_access(st, leaf)
        if acc is None or not acc.info.guard:
            return ()
        return tuple(_path_conditions(value, leaf) or ())

    def available(self, p: ir.Expr, st: Statement, plan: _Plan) -> ir.Expr:
        """`p` with every value that the reverse sweep would not see recomputed or taped."""
        by_id: dict[int, ir.Expr] = {}
        for leaf in value_leaves(p):
            if self.is_available(leaf, st):
                continue
            by_id[id(leaf)] = self.recompute(leaf, st) or self.tape(leaf, st, plan).access()
        return substitute(p, by_id) if by_id else p

    def is_available(self, leaf: Leaf, st: Statement) -> bool:
        ctx = self.ctx
        name = name_of(leaf)
        if name in ctx.loop_locals:
            return False  # its forward-sweep value (a scalar or array) is out of scope in the reverse sweep
        acc = ctx.read_access(st, leaf)
        if acc is None:
            return name not in ctx.written
        key = (st.name, id(acc))
        if key not in self._overwritten:
            self._overwritten[key] = accesses.overwritten_from(ctx.scop, st, acc)
        return not self._overwritten[key]

    def recompute(self, leaf: Leaf, st: Statement) -> ir.Expr | None:
        ctx = self.ctx
        if not isinstance(leaf, ir.Var):
            return None
        d = self.defs.get(leaf.name)
        if d is None:
            return None
        def_st, expr = d
        if [lp.id for lp in def_st.info.loops] != [lp.id for lp in st.info.loops]:
            return None
        if not all(self.is_available(x, def_st) for x in value_leaves(expr)):
            return None
        if leaf.name not in self.recomputed:
            self.recomputed.add(leaf.name)
            ctx.remarks.append(analysis(
                "ad", "Recomputed", f"`{leaf.name}` is recomputed in the reverse sweep as "
                f"`{ctx.c(expr)}` (cheaper than a tape: no memory, and its inputs are not "
                "overwritten)", def_st.range, ctx.fn.name, variable=leaf.name))  # fmt: skip
        return expr

    def tape(self, leaf: Leaf, st: Statement, plan: _Plan) -> Tape:
        ctx = self.ctx
        key = (st.name, ctx.c(leaf))
        if key in self.tapes:
            return self.tapes[key]
        ext = accesses.extents(st, self.int_params)
        if isinstance(ext, str):
            raise NotDifferentiable(
                f"`{ctx.c(leaf)}` at line {leaf.range.line} must be kept for the reverse sweep, "
                f"but the tape cannot be sized: {ext}"
            )
        base = f"tape_{st.name}_{name_of(leaf)}"
        taken = {t.name for t in self.tapes.values()}
        name = base
        k = 1
        while name in taken:
            name = f"{base}_{k}"
            k += 1
        elem = next((a.elem_type for a in ctx.scop.arrays if a.name == name_of(leaf)), "double")
        tape = Tape(name, st.name, ctx.c(leaf), elem, st.iterators, tuple(ext), leaf.range)
        self.tapes[key] = tape
        plan.stores.append(tape)
        size = " * ".join(tape.sizes)
        ctx.remarks.append(analysis(
            "ad", "Taped", f"`{ctx.c(leaf)}` is overwritten before the reverse sweep needs it: "
            f"the forward sweep keeps it in `{name}` ({size} {elem} values, one per iteration)",
            leaf.range, ctx.fn.name, tape=name, statement=st.name, size=size))  # fmt: skip
        return tape

    def reduction_remark(self, plan: _Plan) -> None:
        ctx, st = self.ctx, plan.st
        if st is None or not plan.increments:
            return
        parallel = [lp for lp in st.info.loops if lp.id in self.parallel]
        if not parallel:
            return
        racy: list[tuple[str, list[LoopInfo]]] = []
        clean: list[tuple[str, list[LoopInfo]]] = []
        for leaf, _ in plan.increments:
            acc = ctx.read_access(st, leaf)
            loops = parallel if acc is None else accesses.conflicts(st, acc, parallel, self.updates(name_of(leaf)))
            shadow = ctx.c(ctx.shadow(leaf))
            if all(s != shadow for s, _ in racy + clean):  # one element on the two sides of a `?:`
                (racy if loops else clean).append((shadow, loops))
        loop_names = ", ".join(f"`{lp.var}`" for lp in parallel)
        parts = [f"`{s}` is a reduction over loop(s) " + ", ".join(f"`{lp.var}`" for lp in ls)
                 + " (atomic or reduction on a GPU)" for s, ls in racy]  # fmt: skip
        if clean:
            parts.append(
                ", ".join(f"`{s}`" for s, _ in clean)
                + f": each element is updated by one iteration of the parallel loop(s) {loop_names}, "
                "so a plain `+=` (no atomics)"
            )
        ctx.remarks.append(analysis(
            "ad", "AdjointReduction" if racy else "AdjointNoAtomics",
            "in the adjoint of this statement, " + "; ".join(parts), st.range, ctx.fn.name,
            atomics=[s for s, _ in racy], plain=[s for s, _ in clean]))  # fmt: skip

    def updates(self, array: str) -> list[tuple[Statement, Access]]:
        """Every access the adjoint makes to the shadow of `array`: the increments of each
        statement's reads, and the statement's own target (read, then zeroed or scaled)."""
        out: list[tuple[Statement, Access]] = []
        for plan in self.plans.values():
            st = plan.st
            if st is None:
                continue
            for leaf, _ in plan.increments:
                acc = self.ctx.read_access(st, leaf)
                if acc is not None and acc.array == array:
                    out.append((st, acc))
            out += [(st, w) for w in st.writes if w.array == array]
        return out

    # ------------------------------------------------------------------------- emission

    def forward_lines(self, node: ir.Assign | ir.Decl) -> list[str]:
        ctx = self.ctx
        plan = self.plans.get(id(node))
        stores = [f"{ctx.c(t.access())} = {t.value};" for t in plan.stores] if plan else []
        return [*stores, ctx.primal_line(node)]

    def adjoint_lines(self, node: ir.Assign | ir.Decl) -> list[str]:
        plan = self.plans.get(id(node))
        if plan is None:
            return []
        ctx = self.ctx
        d_target: ir.Expr = ctx.shadow(plan.target)
        out: list[str] = []
        if plan.short:
            sign = plan.op[0]
            return [self.guarded(plan, leaf, _increment(ctx, leaf, d_target, p, sign)) for leaf, p in plan.increments]
        if plan.alias:
            assert plan.st is not None
            tmp = f"adj_{plan.st.name}"
            out.append(f"double {tmp} = {ctx.c(d_target)};")
            d_target, old = ir.Var(tmp, NO_RANGE), d_target
            if plan.self_partial is None:
                out.append(f"{ctx.c(old)} = 0.0;")
            elif not is_const(plan.self_partial, 1):
                out.append(f"{ctx.c(old)} = {ctx.c(mul(d_target, plan.self_partial))};")
            out += [self.guarded(plan, leaf, _increment(ctx, leaf, d_target, p, "+")) for leaf, p in plan.increments]
            return out
        out += [self.guarded(plan, leaf, _increment(ctx, leaf, d_target, p, "+")) for leaf, p in plan.increments]
        if plan.self_partial is None:
            out.append(f"{ctx.c(d_target)} = 0.0;")
        elif not is_const(plan.self_partial, 1):
            out.append(f"{ctx.c(d_target)} *= {ctx.c(plan.self_partial)};")
        return out

    def guarded(self, plan: _Plan, leaf: Leaf, line: str) -> str:
        """`line`, the increment of `leaf`, under the increment's guard (see `guard`)."""
        conds = plan.guards.get(id(leaf))
        if not conds:
            return line
        text = " && ".join(self.ctx.printer.expr(c, 6) for c in conds)
        return f"if ({text}) {line}"

    def shadow_decls(self, stmts: tuple[ir.Stmt, ...]) -> list[str]:
        ctx = self.ctx
        replayed = [ctx.primal_line(s) for s in stmts if isinstance(s, ir.Decl) and self.replayable(s)]
        return replayed + [line for s in stmts if isinstance(s, ir.Decl) and s.name in ctx.activity.active
                           for line in ctx.zeroed(s.type, "d_" + s.name)]  # fmt: skip

    def replayable(self, s: ir.Decl) -> bool:
        """An integer local set once by its declaration from values nothing writes (``int j =
        i + 1;`` used in a subscript): declared again at the start of its block in the reverse
        sweep, where the adjoints' subscripts read it."""
        if s.init is None or not (isinstance(s.type, ir.Scalar) and s.type.is_integer):
            return False
        names = {n.name if isinstance(n, ir.Var) else n.base
                 for n in ir.walk_expr(s.init) if isinstance(n, ir.Var | ir.Subscript)}  # fmt: skip
        assigned = [n for n in _nodes(self.ctx.body) if isinstance(n, ir.Assign) and name_of(n.target) == s.name]
        return not assigned and not names & self.ctx.written

    def functions(self, name: str) -> Adjoint:
        ctx = self.ctx
        forward = block_lines(ctx, ctx.body, 1, self.forward_lines)
        backward = block_lines(ctx, ctx.body, 1, self.adjoint_lines, reverse=True, prelude=self.shadow_decls)
        params = [param_text(ctx, p) for p in ctx.fn.params]
        shadows = [shadow_param_text(ctx, p) for p in shadow_params(ctx)]
        tapes = list(self.tapes.values())
        core = f"{name}_core" if tapes else name
        head = f"void {core}({', '.join([*params, *shadows, *(t.param() for t in tapes)])})"
        body = ["  /* forward sweep: the primal" + (", keeping overwritten values */" if tapes else " */"),
                *forward, "  /* reverse sweep: adjoints in reverse order */", *backward]  # fmt: skip
        text = "\n".join([head, "{", *body, "}"]) + "\n"
        if tapes:
            text += "\n" + self.wrapper(name, core, params + shadows, tapes)
        return Adjoint(name, core, text, tuple(tapes))

    def wrapper(self, name: str, core: str, params: list[str], tapes: list[Tape]) -> str:
        ctx = self.ctx
        args = [p.name for p in ctx.fn.params] + [f"d_{p.name}" for p in shadow_params(ctx)]
        lines = [f"void {name}({', '.join(params)})", "{"]
        for t in tapes:
            size = " * ".join(f"hx_tape_extent({s})" for s in t.sizes)
            lines.append(f"  void *{t.name} = malloc(sizeof({t.elem_type}) * {size});")
        lines.append(f"  {core}({', '.join(args + [t.name for t in tapes])});")
        lines += [f"  free({t.name});" for t in tapes]
        return "\n".join([*lines, "}"]) + "\n"


TAPE_HELPER = (
    "static size_t hx_tape_extent(long n)\n{\n  return n > 0 ? (size_t)n : 1;\n}\n"
)


def _increment(ctx: Context, leaf: Leaf, d_target: ir.Expr, p: ir.Expr, sign: str) -> str:
    if isinstance(p, ir.Unary) and p.op == "-":
        p, sign = p.operand, "-" if sign == "+" else "+"
    term = mul(d_target, p) if not is_const(p, 0) else ZERO
    return f"{ctx.c(ctx.shadow(leaf))} {sign}= {ctx.c(term)};"


def _nodes(stmts: tuple[ir.Stmt, ...]):  # type: ignore[no-untyped-def]
    for s in stmts:
        if isinstance(s, ir.Assign | ir.Decl):
            yield s
        yield from _nodes(ir.sub_statements(s))


def _single_definitions(ctx: Context) -> dict[str, tuple[Statement, ir.Expr]]:
    """Local scalars declared inside a loop and assigned exactly once, by their declaration."""
    count: dict[str, int] = {}
    defs: dict[str, tuple[Statement, ir.Expr]] = {}
    for node in _nodes(ctx.body):
        if isinstance(node, ir.Decl) and node.init is None:
            continue
        target, _, value = ctx.parts(node)
        name = name_of(target)
        count[name] = count.get(name, 0) + 1
        st = ctx.statements.get(id(node))
        if isinstance(node, ir.Decl) and st is not None and name in ctx.loop_locals:
            defs[name] = (st, value)
    return {n: d for n, d in defs.items() if count[n] == 1}


def _path_conditions(e: ir.Expr, leaf: Leaf) -> list[ir.Expr] | None:
    """The `?:` conditions (negated on the `else` side) under which C evaluates `leaf` in `e`."""
    if e is leaf:
        return []
    if isinstance(e, ir.Ternary):
        for side, cond in ((e.then, e.cond), (e.other, ir.Unary("!", e.cond, NO_RANGE))):
            inner = _path_conditions(side, leaf)
            if inner is not None:
                return [cond, *inner]
        return None
    if isinstance(e, ir.Subscript):
        return None
    for sub in ir.sub_expressions(e):
        inner = _path_conditions(sub, leaf)
        if inner is not None:
            return inner
    return None
