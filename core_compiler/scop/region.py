"""Checking one candidate region and describing it in affine terms (still without isl).

`check_region` walks a list of loop-IR statements and returns either a `RegionInfo` — statements
with their iteration constraints, textual positions and affine accesses — or the list of problems,
each with a stable reason name, a message for a C programmer and the exact range of the culprit.
`model.py` turns a `RegionInfo` into isl objects.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from core_compiler.frontend import ir
from core_compiler.frontend.c_text import c_text
from core_compiler.frontend.ir import is_pure_math
from core_compiler.scop.affine import (
    Affine,
    Constraint,
    Dnf,
    NotAffine,
    affine,
    choose_elements,
    condition,
    delinearize,
    hoist_choice,
    polynomial,
)
from core_compiler.scop.if_conversion import if_converted
from core_compiler.scop.private_scalars import private_scalars
from core_compiler.source import SourceRange


@dataclass(frozen=True)
class Problem:
    reason: str
    message: str
    range: SourceRange
    args: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class LoopInfo:
    id: str  # "L0", "L1", … in source order within the region
    var: str
    depth: int  # 0 for outermost
    start: Dnf  # `var >= init` (`<=` for negative steps), with the stride
    cond: Dnf
    step: int
    range: SourceRange
    header_range: SourceRange
    parent: str | None


@dataclass(frozen=True)
class AccessInfo:
    array: str
    indices: tuple[Affine, ...]
    range: SourceRange
    text: str
    # the IR node (ranges alone collide inside macro expansions); an address passed to an opaque
    # call (`&a[i]`, `a + i`, `(float *)a`, `&x`) is the argument's node
    node: ir.Expr
    guard: tuple[Dnf, ...] = ()  # conditions of `?:`, `&&`, `||` under which C evaluates the read
    whole: bool = False  # every element, maybe (an array passed to a call hexplore cannot see into)
    # an address passed to an opaque call: the element it points to (`&A[i][j]`: i, j; `A + i`: i;
    # `&x`: the scalar's own indices); the call may still touch all of the array
    at: tuple[Affine, ...] | None = None


@dataclass(frozen=True)
class StmtInfo:
    name: str
    node: ir.Assign | ir.ExprStmt  # an assignment, or a call statement modeled as opaque (`opaque_call`)
    loops: tuple[LoopInfo, ...]
    constraints: tuple[Dnf, ...]  # conjunction; each a DNF over the iterators and parameters
    position: tuple[int, ...]  # textual position at each depth (len = depth + 1)
    reads: tuple[AccessInfo, ...]
    writes: tuple[AccessInfo, ...]

    @property
    def iterators(self) -> tuple[str, ...]:
        return tuple(loop.var for loop in self.loops)

    @property
    def call(self) -> ir.Call | None:
        """The call of an opaque call statement (``log_event(a, i);``), else None."""
        return self.node.expr if isinstance(self.node, ir.ExprStmt) and isinstance(self.node.expr, ir.Call) else None

    @property
    def text(self) -> str:
        """The statement as C, without the `;`: ``C[i][j] += A[i][k] * B[k][j]``, ``log_event(a, i)``."""
        node = self.node
        return f"{c_text(node.target)} {node.op} {c_text(node.value)}" if isinstance(node, ir.Assign) else c_text(node.expr)

    @property
    def assignment(self) -> ir.Assign:
        """The assignment of a statement that is not an opaque call."""
        assert isinstance(self.node, ir.Assign), f"{self.name} is a call"
        return self.node

    @property
    def opaque_calls(self) -> tuple[ir.Call, ...]:
        """The calls of functions hexplore does not see into: the statement's own (`call`) or those
        in its value (``a[i] = lookup(t, i)``)."""
        exprs = [self.node.expr] if isinstance(self.node, ir.ExprStmt) else [self.node.target, self.node.value]
        return tuple(c for e in exprs for c in ir.walk_expr(e) if isinstance(c, ir.Call) and opaque_callable(c))

    @property
    def hidden_effects(self) -> bool:
        """Whether the statement calls a function that is not `pure`: it may read and write global
        variables and do I/O, so such statements keep their order among themselves."""
        return any(not (c.signature is not None and c.signature.pure) for c in self.opaque_calls)


@dataclass(frozen=True)
class ArrayDecl:
    name: str
    elem_type: str
    extents: tuple[Affine | None, ...]  # outermost first; None where unknown
    kind: str  # "array" | "scalar" | "local-scalar" | "local-array"
    range: SourceRange
    delinearized: bool = False
    fields: tuple[str, ...] = ()  # an array of structs read as rows: the field at each column

    @property
    def per_iteration(self) -> bool:
        """A scalar expanded over the loops around it: one element per iteration."""
        return self.kind == "local-scalar" and bool(self.extents)


@dataclass(frozen=True)
class RegionInfo:
    stmts: tuple[ir.Stmt, ...]
    range: SourceRange
    statements: tuple[StmtInfo, ...]
    loops: tuple[LoopInfo, ...]
    arrays: tuple[ArrayDecl, ...]
    params: tuple[str, ...]
    readonly_scalars: tuple[tuple[str, str], ...]  # (name, type) of values read, never written
    assumptions: tuple[Problem, ...]  # delinearization and no-alias assumptions (not problems)

    @property
    def code_range(self) -> SourceRange:
        """Where remarks about the whole region point: from its first statement that is not a
        bare declaration (``int i, j, k;`` before PolyBench's ``#pragma scop``)."""
        return _code_range(self.stmts)


def _code_range(stmts: tuple[ir.Stmt, ...]) -> SourceRange:
    first = next((s.range for s in stmts if not (isinstance(s, ir.Decl) and s.init is None)), stmts[0].range)
    last = stmts[-1].range
    return SourceRange(first.file, first.line, first.col, last.end_line, last.end_col)


@dataclass
class _Ctx:
    loops: tuple[LoopInfo, ...] = ()
    constraints: tuple[Dnf, ...] = ()
    position: tuple[int, ...] = (0,)

    @property
    def iterators(self) -> tuple[str, ...]:
        return tuple(loop.var for loop in self.loops)


@dataclass
class _Walker:
    function: ir.Function
    symbols: dict[str, ir.CType]
    written: set[str]
    fresh: frozenset[str]  # local pointers initialized by malloc/calloc: distinct arrays
    problems: list[Problem] = field(default_factory=list)
    statements: list[StmtInfo] = field(default_factory=list)
    loops: list[LoopInfo] = field(default_factory=list)
    arrays: dict[str, ArrayDecl] = field(default_factory=dict)
    params: set[str] = field(default_factory=set)
    readonly: dict[str, str] = field(default_factory=dict)
    assumptions: list[Problem] = field(default_factory=list)
    local_scalar_dims: dict[str, tuple[str, ...]] = field(default_factory=dict)
    local_array_dims: dict[str, tuple[str, ...]] = field(default_factory=dict)  # declared inside the nest
    delinearized: dict[str, tuple[str, ...]] = field(default_factory=dict)
    unmodeled: set[str] = field(default_factory=set)  # counters of the enclosing loops that are not modeled
    call_writes: list[AccessInfo] = field(default_factory=list)  # what the opaque calls of a statement may write
    private_loops: dict[int, tuple[str, ...]] = field(default_factory=dict)  # `private_scalars`

    # --------------------------------------------------------------------------- names

    def type_of(self, name: str, var: ir.Var | None = None) -> ir.CType | None:
        if name in self.symbols:
            return self.symbols[name]
        return var.type if var is not None else None

    def is_int(self, name: str) -> bool:
        t = self.symbols.get(name)
        return isinstance(t, ir.Scalar) and t.is_integer

    def allowed(self, ctx: _Ctx) -> object:
        iters = set(ctx.iterators)

        def ok(name: str) -> bool:
            if name in iters:
                return True
            if name in self.written or not self.is_int(name):
                return False
            self.params.add(name)
            return True

        return ok

    # --------------------------------------------------------------------------- statements

    def block(self, stmts: tuple[ir.Stmt, ...], ctx: _Ctx) -> int:
        """Handle a statement list; returns how many schedule positions it used."""
        used = 0
        for s in stmts:
            here = _Ctx(ctx.loops, ctx.constraints, (*ctx.position[:-1], ctx.position[-1] + used))
            used += self.stmt(s, here)
        return used

    def stmt(self, s: ir.Stmt, ctx: _Ctx) -> int:
        if isinstance(s, ir.For):
            self.for_loop(s, ctx)
        elif isinstance(s, ir.If):
            return self.if_stmt(s, ctx)
        elif isinstance(s, ir.Assign):
            self.assign(s, ctx)
        elif isinstance(s, ir.Decl):
            return self.decl(s, ctx)
        elif isinstance(s, ir.OtherLoop):
            self.problem(s.reason, s.message, s.header_range)
            self.block(s.body, ctx)
        elif isinstance(s, ir.Jump):
            self.problem(
                "UnstructuredControlFlow",
                f"`{s.kind}` leaves the loop nest early, so which iterations run is not known "
                "before the loops start",
                s.range,
            )
        elif isinstance(s, ir.ExprStmt):
            self.expr_stmt(s, ctx)
        elif isinstance(s, ir.OpaqueStmt):
            self.problem(s.reason, s.message, s.range)
        return 1

    def for_loop(self, s: ir.For, ctx: _Ctx) -> None:
        inner = _Ctx(ctx.loops, ctx.constraints, ctx.position)
        inner_allowed = self.allowed(_Ctx((*ctx.loops, _placeholder(s.var)), ctx.constraints))
        lower = self.loop_start(s, self.allowed(ctx), inner_allowed)
        cond = condition(s.cond, inner_allowed)  # type: ignore[arg-type]
        if isinstance(cond, NotAffine):
            self.non_affine(cond, "NonAffineLoopBound", f"the condition of loop `{s.var}`")
        elif not _bounds_iterator(cond, s.var, s.step):
            self.problem(
                "NonCanonicalLoop",
                f"the condition `{c_text(s.cond)}` does not bound `{s.var}` in the direction it "
                f"moves (step {s.step:+d}); write `{s.var} < n`-style bounds",
                s.cond.range,
            )
        for w in _assigned_names(s.body):
            if w[0] == s.var:
                self.problem(
                    "NonCanonicalLoop",
                    f"the loop counter `{s.var}` is changed inside the loop body",
                    w[1],
                )
        if lower is None or isinstance(cond, NotAffine):
            self.unmodeled.add(s.var)  # its uses inside need no remarks of their own
            self.block(s.body, inner)  # keep looking for other problems inside
            self.unmodeled.discard(s.var)
            return
        loop = LoopInfo(
            f"L{len(self.loops)}",
            s.var,
            len(ctx.loops),
            lower,
            cond,
            s.step,
            s.range,
            s.header_range,
            ctx.loops[-1].id if ctx.loops else None,
        )
        self.loops.append(loop)
        body_ctx = _Ctx((*ctx.loops, loop), (*ctx.constraints, lower, cond), (*ctx.position, 0))
        private = {name: self.local_scalar_dims.get(name) for name in self.private_loops.get(id(s), ())}
        for name in private:  # as if declared at the top of the body (`private_scalars`)
            self.local_scalar_dims[name] = body_ctx.iterators
        self.block(s.body, body_ctx)
        for name, outer in private.items():
            if outer is None:
                del self.local_scalar_dims[name]
            else:
                self.local_scalar_dims[name] = outer

    def loop_start(self, s: ir.For, allowed: object, inner_allowed: object) -> Dnf | None:
        """``var >= init`` (``<=`` counting down) as a condition; None after a remark."""
        what = f"the start of loop `{s.var}`"
        init = hoist_choice(s.init)
        if isinstance(init, ir.Ternary) and abs(s.step) == 1:  # `j = MAX(0, i - 2)`
            var = ir.Var(s.var, s.init.range, ir.Scalar("int"))
            start = condition(ir.Binary(">=" if s.step > 0 else "<=", var, init, s.init.range), inner_allowed)  # type: ignore[arg-type]
            if isinstance(start, NotAffine):
                self.non_affine(start, "NonAffineLoopBound", what)
                return None
            return start
        if isinstance(init, ir.Ternary):  # `c0 = max(32 * b + t, t % 16 + 1); ...; c0 += 16`
            pieces = _strided_start(s.var, init, s.step, allowed)
            if isinstance(pieces, NotAffine):
                self.non_affine(pieces, "NonAffineLoopBound", what)
                return None
            return pieces
        aff = self.affine_or_problem(s.init, allowed, "NonAffineLoopBound", what)
        return None if isinstance(aff, NotAffine) else _lower_bound(s.var, aff, s.step)

    def if_stmt(self, s: ir.If, ctx: _Ctx) -> int:
        allowed = self.allowed(ctx)
        then_c = condition(s.cond, allowed)  # type: ignore[arg-type]
        else_c = condition(s.cond, allowed, negate=True)  # type: ignore[arg-type]
        if isinstance(then_c, NotAffine) or isinstance(else_c, NotAffine):
            converted = if_converted(s)
            if converted is not None:
                self.assumptions.append(Problem("GuardedAssignment", _GUARDED.format(cond=c_text(s.cond)), s.cond.range))
                return self.block(converted, ctx)
            bad = then_c if isinstance(then_c, NotAffine) else else_c
            assert isinstance(bad, NotAffine)
            self.non_affine(bad, "NonAffineCondition", "the `if` condition")
            then_c = else_c = ()
        used = self.block(s.then, _Ctx(ctx.loops, (*ctx.constraints, then_c), ctx.position))
        shifted = (*ctx.position[:-1], ctx.position[-1] + used)
        return used + self.block(s.other, _Ctx(ctx.loops, (*ctx.constraints, else_c), shifted))

    def decl(self, s: ir.Decl, ctx: _Ctx) -> int:
        if _is_local_array(s) and s.name not in self.local_array_dims and self.symbols.get(s.name, s.type) == s.type:
            self.symbols[s.name] = s.type
            self.local_array_dims[s.name] = ctx.iterators
            return 0
        if not isinstance(s.type, ir.Scalar):
            self.symbols[s.name] = s.type
            self.problem(
                "UnsupportedStatement",
                f"the local array or pointer `{s.name}` declared inside the loop nest is not "
                "supported; declare it before the loops",
                s.range,
            )
            return 0
        earlier = self.symbols.get(s.name) if s.name in self.local_scalar_dims else None
        if earlier is not None and (earlier != s.type or self.local_scalar_dims[s.name] != ctx.iterators):
            self.problem(
                "UnsupportedStatement",
                f"`{s.name}` is declared a second time in this loop nest, with another type or inside "
                "other loops; hexplore would treat both as one variable, so give them different names",
                s.range,
            )
            return 0
        self.symbols[s.name] = s.type
        self.local_scalar_dims[s.name] = ctx.iterators
        if s.init is None:
            return 0
        self.assign(ir.Assign(ir.Var(s.name, s.range, s.type), "=", s.init, s.range), ctx)
        return 1

    def assign(self, s: ir.Assign, ctx: _Ctx) -> None:
        value = choose_elements(s.value)  # `a[MIN(i, n - 1)]` read as `i < n - 1 ? a[i] : a[n - 1]`
        s = s if value is s.value else replace(s, value=value)
        allowed = self.allowed(ctx)
        write = self.access(s.target, ctx, allowed, is_write=True)
        reads = list(self.reads(s.value, ctx, allowed))
        if s.op != "=" and write is not None:
            reads.append(write)
        call_writes, self.call_writes = self.call_writes, []
        if write is None:
            return
        self.statements.append(
            StmtInfo(
                f"S{len(self.statements)}",
                s,
                ctx.loops,
                ctx.constraints,
                ctx.position,
                tuple(reads),
                (write, *call_writes),
            )
        )

    def expr_stmt(self, s: ir.ExprStmt, ctx: _Ctx) -> None:
        e = s.expr
        if isinstance(e, ir.Call) and opaque_callable(e):
            self.opaque_call(s, e, ctx)
        elif isinstance(e, ir.Call) and not is_pure_math(e):
            self.problem(
                "ImpureCall",
                _UNDECLARED.format(name=e.name)
                if not e.declared
                else _unknown_callee(e)
                or f"the call to `{e.name}` may have side effects (I/O, memory, global state); "
                "only pure math functions such as `sqrt` or `fmax` can appear in a modeled loop nest",
                e.range,
                callee=e.name,
            )
        elif isinstance(e, ir.OpaqueExpr):
            self.problem(e.reason, e.message, e.range)
        else:
            self.problem("UnsupportedStatement", "an expression statement with no effect", s.range)

    def opaque_call(self, s: ir.ExprStmt, call: ir.Call, ctx: _Ctx) -> None:
        """``log_event(a, i);`` of a function hexplore cannot see into, as one statement (`call_accesses`)."""
        reads = list(self.call_accesses(call, ctx, self.allowed(ctx)))
        writes, self.call_writes = self.call_writes, []
        info = StmtInfo(f"S{len(self.statements)}", s, ctx.loops, ctx.constraints, ctx.position, tuple(reads), tuple(writes))
        self.statements.append(info)

    def call_accesses(
        self, call: ir.Call, ctx: _Ctx, allowed: object, guard: tuple[Dnf, ...] = ()
    ) -> Iterator[AccessInfo]:
        """The reads of a call of a function hexplore cannot see into: all of each array passed to it
        (which it may also write, unless the parameter points to `const` or the function is `pure`:
        those go to `call_writes`) and the numbers passed to it; and an `OpaqueCall` note."""
        assert call.signature is not None
        sig = call.signature
        reads: list[AccessInfo] = []
        writes: list[AccessInfo] = []
        fixed = call.args[: len(sig.params)]
        for arg, ptype, const in zip(fixed, sig.params, sig.const_pointees, strict=True):
            if not ptype.endswith("*"):
                reads += self.reads(arg, ctx, allowed, guard)
                continue
            if isinstance(arg, ir.StrLit):  # a string literal: constant, nothing of the loops'
                continue
            whole = self.whole_array(arg, call, ctx)
            if whole is None:
                continue
            reads.append(whole)
            if not (const or sig.pure):
                writes.append(whole)
        for arg in call.args[len(sig.params) :]:
            reads += self.variadic_argument(arg, call, ctx, allowed, guard)
        self.call_writes += writes
        note = _opaque_note(call, [_passed(a) for a in writes], [_passed(a) for a in reads if a.whole])
        self.assumptions.append(Problem("OpaqueCall", note, call.range, (("callee", call.name),)))
        yield from reads

    def variadic_argument(
        self, arg: ir.Expr, call: ir.Call, ctx: _Ctx, allowed: object, guard: tuple[Dnf, ...]
    ) -> Iterator[AccessInfo]:
        """The reads of an argument past a variadic function's parameters (``printf``'s values): a
        number or a string literal; a pointer is refused (``%n`` writes through one, ``%s`` reads
        to a NUL: which elements is unknown)."""
        if isinstance(arg, ir.StrLit):
            return
        if _address(arg) is not None and (_is_pointer(arg) or not isinstance(arg, ir.Var)):
            self.problem(
                "ImpureCall",
                f"`{c_text(arg)}` is an address passed to `{call.name}`'s `...`: hexplore cannot tell which elements "
                "it reads or writes (`%s` reads up to a NUL, `%n` writes); only numbers and string literals "
                "are modeled there",
                arg.range,
                callee=call.name,
            )
            return
        yield from self.reads(arg, ctx, allowed, guard)

    def whole_array(self, arg: ir.Expr, call: ir.Call, ctx: _Ctx) -> AccessInfo | None:
        """All of the array `arg` names, as an argument of `call` (all of a row ``A[i]`` of an array
        of declared rows; all of ``a`` for an address into it, `address`); None (with a problem)
        where `arg` is none of these (a local pointer, ``a + k[i]``)."""
        allowed = self.allowed(ctx)
        row = self.row(arg, allowed) if isinstance(arg, ir.Subscript) else None
        if row is not None:
            return row
        if not isinstance(arg, ir.Var):
            return self.address(arg, call, ctx)
        param = self.function.param(arg.name) if isinstance(arg, ir.Var) else None
        typ = self.type_of(arg.name, arg) if isinstance(arg, ir.Var) else None
        if not isinstance(arg, ir.Var) or param is None or param.volatile or not isinstance(typ, ir.Pointer | ir.Array):
            self.not_an_array(arg, call)
            return None
        self.array_decl(arg.name, typ, arg.range)
        return AccessInfo(arg.name, (), arg.range, arg.name, arg, whole=True)

    def address(self, arg: ir.Expr, call: ir.Call, ctx: _Ctx) -> AccessInfo | None:
        """``&a[i]``, ``a + i``, ``a + i - 1``, ``A[i] + k``, ``(float *)a`` of a parameter or global
        array `a` at affine offsets: all of `a`, maybe (C lets the callee reach any element of `a`
        from there); ``&x`` of a scalar: `x`, maybe read and written. None (with a problem) otherwise."""
        found = _address(arg)
        if isinstance(found, ir.Var) and isinstance(self.type_of(found.name, found), ir.Scalar):
            return self.scalar_address(arg, found, call, ctx)
        target = self.target(_uncast(arg))
        at = None if target is None else self.affine_all(target[1], ctx)
        if target is None or at is None:
            self.not_an_array(arg, call)
            return None
        whole = self.whole_array(target[0], call, ctx)
        return None if whole is None else replace(whole, node=arg, text=c_text(arg), at=at)

    def target(self, e: ir.Expr) -> tuple[ir.Var, list[ir.Expr]] | None:
        """The array an address points into and the subscripts of the element it points to:
        ``&A[i][j]``: A, (i, j); ``A[i] + k``: A, (i, k); ``a + i - 1``: a, (i - 1); ``a``: a, ()."""
        if isinstance(e, ir.Unary) and e.op == "&" and isinstance(e.operand, ir.Subscript):
            return ir.Var(e.operand.base, e.operand.base_range), list(e.operand.indices)
        if isinstance(e, ir.Unary) and e.op == "&" and isinstance(e.operand, ir.Var):
            return e.operand, []
        found = self.stepped(e)
        if found is None:
            return None
        base, fixed, last = found
        return base, fixed + ([] if last is None else [last])

    def stepped(self, e: ir.Expr) -> tuple[ir.Var, list[ir.Expr], ir.Expr | None] | None:
        """An array (``a``), a row (``A[i]``) or either plus or minus integers (``a + i - 1``): the
        array, the row's subscripts and the sum of the steps (None: no step). A cast inside is
        refused: it changes the unit of the steps (``(char *)a + 8``)."""
        if _is_pointer(e):
            return e, [], None  # type: ignore[return-value]
        if self.is_row(e):
            assert isinstance(e, ir.Subscript)
            return ir.Var(e.base, e.base_range), list(e.indices), None
        if not isinstance(e, ir.Binary) or e.op not in ("+", "-"):
            return None
        for pointer, k in ((e.lhs, e.rhs), (e.rhs, e.lhs)) if e.op == "+" else ((e.lhs, e.rhs),):
            found = self.stepped(pointer)
            if found is not None:
                base, fixed, last = found
                step = k if e.op == "+" else ir.Unary("-", k, k.range)
                return base, fixed, step if last is None else ir.Binary("+", last, step, e.range)
        return None

    def is_row(self, e: ir.Expr) -> bool:
        """``A[i]`` of a parameter or global ``double A[n][m]``: a pointer to its row."""
        typ = self.type_of(e.base) if isinstance(e, ir.Subscript) else None
        if not isinstance(e, ir.Subscript) or self.function.param(e.base) is None or not isinstance(typ, ir.Array):
            return False
        return len(e.indices) < len(self.extents(typ))

    def affine_all(self, exprs: list[ir.Expr], ctx: _Ctx) -> tuple[Affine, ...] | None:
        """`exprs` as affine forms without divisions, else None."""
        found = [affine(e, self.allowed(ctx)) for e in exprs]  # type: ignore[arg-type]
        if any(isinstance(a, NotAffine) or a.atoms for a in found):
            return None
        return tuple(a for a in found if isinstance(a, Affine))

    def scalar_address(self, arg: ir.Expr, var: ir.Var, call: ir.Call, ctx: _Ctx) -> AccessInfo | None:
        """``&x`` of a local or parameter scalar: the call may read and write `x` (its element of
        this iteration, where `x` is private to the iterations)."""
        glob = any(g.name == var.name for g in self.function.globals)
        if glob or var.name in ctx.iterators or not isinstance(arg, ir.Unary):
            self.not_an_array(arg, call)
            return None
        found = self.scalar_access(var, ctx, is_write=True)
        return None if found is None else replace(found, node=arg, text=c_text(arg), whole=True, at=found.indices)

    def not_an_array(self, arg: ir.Expr, call: ir.Call) -> None:
        """An `ImpureCall` problem: `arg` is none of what an opaque call is modeled with."""
        self.problem(
            "ImpureCall",
            f"`{call.name}` is a function hexplore cannot see into; it models such a call when each argument "
            "is a number, an array of the function, an address in one at affine subscripts (`&a[i]`, `a + i`) "
            f"or the address of a local number (`&x`), and `{c_text(arg)}` is none of these",
            arg.range,
            callee=call.name,
        )

    def row(self, arg: ir.Subscript, allowed: object) -> AccessInfo | None:
        """``A[i]`` of a parameter or global ``double A[n][m]``, passed as a pointer: all of that row,
        at affine subscripts without divisions; None otherwise."""
        param = self.function.param(arg.base)
        typ = self.type_of(arg.base)
        if param is None or param.volatile or not isinstance(typ, ir.Array) or len(arg.indices) >= len(typ.dims):
            return None
        indices = [affine(i, allowed) for i in arg.indices]  # type: ignore[arg-type]
        if any(isinstance(i, NotAffine) or i.atoms for i in indices):
            return None
        self.array_decl(arg.base, typ, arg.base_range)
        return AccessInfo(arg.base, tuple(i for i in indices if isinstance(i, Affine)), arg.range, c_text(arg), arg, whole=True)

    # --------------------------------------------------------------------------- accesses

    def reads(self, e: ir.Expr, ctx: _Ctx, allowed: object, guard: tuple[Dnf, ...] = ()) -> Iterator[AccessInfo]:
        """The reads `e` makes; those C evaluates only on one side of a `?:`, `&&` or `||` with an
        affine condition carry that condition as their guard (`i > 0 ? u[i-1] : 0` never reads `u[-1]`)."""
        if isinstance(e, ir.Subscript | ir.Var):
            acc = self.access(e, ctx, allowed, is_write=False)
            if acc is not None:
                yield replace(acc, guard=guard) if guard else acc
            return
        if isinstance(e, ir.Call) and opaque_callable(e):
            yield from self.call_accesses(e, ctx, allowed, guard)
            return
        if isinstance(e, ir.Call) and not is_pure_math(e):
            self.problem(
                "ImpureCall",
                _UNDECLARED.format(name=e.name)
                if not e.declared
                else _unknown_callee(e)
                or f"the call to `{e.name}` may have side effects or read memory hexplore cannot "
                "see; only pure math functions such as `sqrt` or `fmax` are allowed, and helpers "
                "whose body is one `return` of an expression of their number parameters (inlined)",
                e.range,
                callee=e.name,
            )
        if isinstance(e, ir.OpaqueExpr):
            self.problem(e.reason, e.message, e.range)
            return
        for sub, sub_guard in _guarded(e, allowed):
            yield from self.reads(sub, ctx, allowed, guard + sub_guard)

    def access(self, e: ir.Var | ir.Subscript, ctx: _Ctx, allowed: object, is_write: bool) -> AccessInfo | None:
        if isinstance(e, ir.Var):
            return self.scalar_access(e, ctx, is_write)
        typ = self.type_of(e.base)
        if typ is None or isinstance(typ, ir.Scalar | ir.OtherType):
            self.problem(
                "PointerArithmetic", f"`{e.base}` is not an array or pointer hexplore can see", e.base_range
            )
            return None
        param = self.function.param(e.base)
        if param is not None and param.volatile:
            self.problem(
                "UnsupportedStatement",
                f"`{e.base}` has `volatile` or `_Atomic` elements: each access must happen as written, so "
                "hexplore leaves these loops as they are",
                e.base_range,
            )
            return None
        local = self._local_array(e.base, typ, ctx)
        if local is not None:
            return self.local_array_access(e, local, allowed)
        if e.base in self.written or (e.base in self.symbols and self._is_local_pointer(e.base)):
            self.problem(
                "PossibleAliasing",
                f"`{e.base}` is a local pointer; hexplore cannot tell which array it points into, "
                "so accesses through it may alias other arrays",
                e.base_range,
                array=e.base,
            )
            return None
        self.array_decl(e.base, typ, e.range)
        indices = self.subscripts(e, allowed)
        return None if indices is None else AccessInfo(e.base, tuple(indices), e.range, c_text(e), e)

    def subscripts(self, e: ir.Subscript, allowed: object, expanded: int = 0) -> list[Affine] | None:
        """The affine subscripts of `e` on its array, past the `expanded` loop dimensions of a local
        array, or None (with a problem). Delinearizing `e` may add dimensions to the array."""
        dims = len(self.arrays[e.base].extents) - expanded
        indices: list[Affine] = []
        for idx in e.indices:
            aff = self.index(idx, e, allowed, len(e.indices), dims)
            if aff is None:
                return None
            indices.extend(aff)
        if len(indices) != len(self.arrays[e.base].extents) - expanded:
            self.problem(
                "UnsupportedExpression",
                f"`{c_text(e)}` uses {len(e.indices)} subscripts on an array of {dims} dimensions",
                e.range,
            )
            return None
        return indices

    def _local_array(self, name: str, typ: ir.CType, ctx: _Ctx) -> tuple[str, ...] | None:
        """The loops a local array (``double t[8];``) is expanded over: those around its declaration
        inside the nest, none for one declared before the nest. None for anything else."""
        if name in self.local_array_dims:
            dims = self.local_array_dims[name]
            return dims if set(dims) <= set(ctx.iterators) else None
        local = isinstance(typ, ir.Array) and name not in self.written and _declares_local_array(self.function.body, name)
        return () if local else None

    def local_array_access(self, e: ir.Subscript, dims: tuple[str, ...], allowed: object) -> AccessInfo | None:
        """``t[j]`` of a local array declared inside loop ``i`` is ``t[i][j]``: each iteration has
        its own array, so the iterations do not depend on each other through it."""
        typ = self.symbols[e.base]
        if e.base not in self.arrays:
            extents = (*(None for _ in dims), *self.extents(typ))
            self.arrays[e.base] = ArrayDecl(e.base, _elem_name(typ), extents, "local-array", e.range)
        own = self.subscripts(e, allowed, len(dims))
        if own is None:
            return None
        indices = [Affine.of({d: 1}) for d in dims] + own
        return AccessInfo(e.base, tuple(indices), e.range, c_text(e), e)

    def index(self, idx: ir.Expr, e: ir.Subscript, allowed: object, n_idx: int, n_dims: int) -> list[Affine] | None:

        aff = affine(idx, allowed, wrapping=True)  # type: ignore[arg-type]
        if not isinstance(aff, NotAffine) and not aff.atoms:
            if e.base in self.delinearized and n_idx == 1:
                self.problem(
                    "NonAffineSubscript",
                    f"`{e.base}` is used both as a 2-D array (`i*n + j`) and with the plain subscript "
                    f"`{c_text(idx)}`",
                    idx.range,
                )
                return None
            return [aff]
        if not isinstance(aff, NotAffine):
            return [aff]
        if aff.kind == "array":
            self.problem(
                "IndirectAccess",
                f"`{c_text(e)}` takes its subscript from the array `{_base(aff.expr)}`, so which "
                "element it touches is only known at run time",
                idx.range,
                array=e.base,
            )
            return None
        if aff.kind == "product" and n_idx == 1 and (n_dims == 1 or e.base in self.delinearized):
            split = self.try_delinearize(idx, e, allowed)
            if split is not None:
                return split
        self.non_affine(aff, "NonAffineSubscript", f"the subscript of `{e.base}`")
        return None

    def try_delinearize(self, idx: ir.Expr, e: ir.Subscript, allowed: object) -> list[Affine] | None:
        poly = polynomial(idx, allowed)  # type: ignore[arg-type]
        if poly is None:
            return None
        names = {n for m in poly for n in m}
        sizes = frozenset(n for n in names if n in self.params)
        split = delinearize(poly, sizes)
        if split is None:
            return None
        dims, size_names = split
        known = self.delinearized.get(e.base)
        if known is not None and known != tuple(size_names):
            return None
        if known is None:
            if any(d is not None for d in self.arrays[e.base].extents) or e.base in self._plain_1d:
                return None
            self.delinearized[e.base] = tuple(size_names)
            old = self.arrays[e.base]
            extents = (None, *(Affine.of({s: 1}) for s in size_names))
            self.arrays[e.base] = ArrayDecl(old.name, old.elem_type, extents, old.kind, old.range, True)
            self.assumptions.append(
                Problem(
                    "Delinearized",
                    f"`{e.base}` is indexed as `{c_text(idx)}`; hexplore treats it as a "
                    f"{len(dims)}-D array with rows of {' x '.join(size_names)} elements, assuming "
                    "every inner subscript stays within its row",
                    idx.range,
                    (("array", e.base), ("sizes", ",".join(size_names))),
                )
            )
        return dims

    @property
    def _plain_1d(self) -> set[str]:
        return {s.array for st in self.statements for s in (*st.reads, *st.writes)}

    def scalar_access(self, v: ir.Var, ctx: _Ctx, is_write: bool) -> AccessInfo | None:
        name = v.name
        if name in ctx.iterators:
            if is_write:
                self.problem("NonCanonicalLoop", f"the loop counter `{name}` is assigned", v.range)
            return None
        if not is_write and any(loop.var == name for loop in self.loops):
            self.problem(
                "UnsupportedStatement",
                f"`{name}` is read after the loop it counts; its final value is not modeled",
                v.range,
            )
            return None
        typ = self.type_of(name, v)
        if not is_write and name not in self.written:
            if isinstance(typ, ir.Scalar) and not typ.is_integer:
                self.readonly[name] = typ.name
            elif isinstance(typ, ir.Scalar):
                self.params.add(name)
            return None
        if not isinstance(typ, ir.Scalar):
            self.problem("UnsupportedExpression", f"`{name}` is not a scalar variable", v.range)
            return None
        dims = self.local_scalar_dims.get(name, ())
        if not set(dims) <= set(ctx.iterators):  # past the loop that declares it: another `name`
            self.problem(
                "UnsupportedStatement",
                f"this `{name}` is not the one declared inside the loop above it; give them different names",
                v.range,
            )
            return None
        kind = "local-scalar" if name in self.local_scalar_dims else "scalar"
        if name not in self.arrays:
            extents: tuple[Affine | None, ...] = tuple(None for _ in dims)
            self.arrays[name] = ArrayDecl(name, typ.name, extents, kind, v.range)
        indices = tuple(Affine.of({d: 1}) for d in dims)
        return AccessInfo(name, indices, v.range, name, v)

    def array_decl(self, name: str, typ: ir.CType, rng: SourceRange) -> ArrayDecl:
        if name not in self.arrays:
            self.arrays[name] = ArrayDecl(name, _elem_name(typ), self.extents(typ), "array", rng, fields=_fields(typ))
        return self.arrays[name]

    def extents(self, typ: ir.CType) -> tuple[Affine | None, ...]:
        if isinstance(typ, ir.Pointer):
            return (None, *self.extents(typ.pointee))
        if isinstance(typ, ir.Array):
            out: list[Affine | None] = []
            ok = self.allowed(_Ctx())
            for d in typ.dims:
                if d is None:
                    out.append(None)
                    continue

                aff = affine(d, ok)  # type: ignore[arg-type]
                out.append(aff if isinstance(aff, Affine) else None)
            return (*out, *self.extents(typ.elem))
        return ()

    def _is_local_pointer(self, name: str) -> bool:
        """A local pointer not known to hold its own fresh allocation (``malloc``)."""
        is_param = self.function.param(name) is not None
        local = not is_param and isinstance(self.symbols.get(name), ir.Pointer)
        return local and name not in self.fresh

    # --------------------------------------------------------------------------- problems

    def affine_or_problem(self, e: ir.Expr, allowed: object, reason: str, what: str) -> Affine | NotAffine:

        aff = affine(e, allowed)  # type: ignore[arg-type]
        if isinstance(aff, NotAffine):
            self.non_affine(aff, reason, what)
        return aff

    def non_affine(self, bad: NotAffine, reason: str, what: str) -> None:
        e = bad.expr
        if bad.kind == "array":
            self.problem(
                reason if reason != "NonAffineSubscript" else "IndirectAccess",
                f"{what} reads the array element `{c_text(e)}`, whose value is only known at run time",
                e.range,
            )
        elif bad.kind == "variable":
            name = bad.detail
            if name in self.unmodeled:  # the counter of a loop whose bounds already have a remark
                return
            why = (
                "is changed inside the loop nest"
                if name in self.written
                else "is not an integer"
                if name in self.symbols
                else "is not a variable hexplore knows"
            )
            self.problem(reason, f"{what} uses `{name}`, which {why}", e.range)
        elif bad.kind == "product":
            self.problem(
                reason,
                f"{what} is not affine: `{c_text(e)}` multiplies or divides two variables (only "
                "constant factors are allowed)",
                e.range,
            )
        elif bad.kind == "call":
            self.problem(reason, f"{what} calls `{c_text(e)}`", e.range)
        elif bad.kind == "float":
            self.problem(reason, f"{what} is computed in floating point (`{c_text(e)}`)", e.range)
        elif isinstance(e, ir.OpaqueExpr) and e.reason == "StructField":  # `m->n` as a bound: the field's own words
            self.problem(
                e.reason,
                f"{what} reads `{c_text(e)}`, a struct field, which hexplore does not read as a size or "
                "subscript; pass it to a function that takes it as a parameter (`int n`) and loop there",
                e.range,
            )
        else:
            self.problem(reason, f"{what} contains `{c_text(e)}`, which is not affine", e.range)

    def problem(self, reason: str, message: str, rng: SourceRange, **args: str) -> None:
        self.problems.append(Problem(reason, message, rng, tuple(sorted(args.items()))))


_UNDECLARED = (
    "`{name}` is not declared, so hexplore does not know what it computes or touches; declare "
    "or define it (a `{{ return <expression>; }}` helper is inlined, math such as `fmin` is known)"
)

_GUARDED = (
    "the `if` condition `{cond}` is known only at run time: its assignments run in every "
    "iteration as `x = {cond} ? value : x` (the old value where it is false)"
)


def opaque_callable(call: ir.Call) -> bool:
    """A call hexplore keeps as an opaque statement: a prototyped function that is not math, takes
    a fixed number of numbers and pointers to numbers, and returns nothing or a number (ignored)."""
    sig = call.signature
    if sig is None or is_pure_math(call):
        return False
    return len(sig.params) == len(call.args) or (sig.variadic and len(call.args) >= len(sig.params))


def _guarded(e: ir.Expr, allowed: object) -> Iterator[tuple[ir.Expr, tuple[Dnf, ...]]]:
    """The operands of `e`, each with the extra condition under which C evaluates it."""
    if isinstance(e, ir.Ternary):
        yes = condition(e.cond, allowed)  # type: ignore[arg-type]
        no = condition(e.cond, allowed, negate=True)  # type: ignore[arg-type]
        if not isinstance(yes, NotAffine) and not isinstance(no, NotAffine):
            yield from ((e.cond, ()), (e.then, (yes,)), (e.other, (no,)))
            return
    if isinstance(e, ir.Binary) and e.op in ("&&", "||"):
        lhs = condition(e.lhs, allowed, negate=e.op == "||")  # type: ignore[arg-type]
        if not isinstance(lhs, NotAffine):
            yield from ((e.lhs, ()), (e.rhs, (lhs,)))
            return
    yield from ((sub, ()) for sub in ir.sub_expressions(e))


def _placeholder(var: str) -> LoopInfo:
    return LoopInfo("?", var, 0, (), (), 1, _NONE, _NONE, None)


_NONE = SourceRange("<none>", 0, 0, 0, 0)


def _lower_bound(var: str, init: Affine, step: int) -> Dnf:
    """``var >= init`` (``<=`` for negative steps), with the stride when |step| > 1."""

    v = Affine.of({var: 1})
    bound = Constraint(v - init, ">=") if step > 0 else Constraint(init - v, ">=")
    return ((bound,),) if abs(step) == 1 else ((bound, Constraint(v - init, f"%{abs(step)}")),)


def _strided_start(var: str, init: ir.Expr, step: int, allowed: object) -> Dnf | NotAffine:
    """The values a loop counter takes from the start `init`, a `?:` (MAX of two starts), by
    steps of `step`: each side's lattice where its condition holds."""
    if not isinstance(init, ir.Ternary):
        aff = affine(init, allowed)  # type: ignore[arg-type]
        return aff if isinstance(aff, NotAffine) else _lower_bound(var, aff, step)
    pieces: list[tuple[Constraint, ...]] = []
    for negate, side in ((False, init.then), (True, init.other)):
        cond = condition(init.cond, allowed, negate=negate)  # type: ignore[arg-type]
        start = _strided_start(var, side, step, allowed)
        if isinstance(cond, NotAffine):
            return cond
        if isinstance(start, NotAffine):
            return start
        pieces += [(*c, *s) for c in cond for s in start]
    return tuple(pieces)


def _bounds_iterator(cond: Dnf, var: str, step: int) -> bool:
    """Every disjunct must bound `var` against its direction of travel."""
    for conj in cond:
        ok = any(
            (c.expr.coeff(var) < 0 if step > 0 else c.expr.coeff(var) > 0)
            for c in conj
            if c.op in (">=", "=")
        )
        if not ok:
            return False
    return True


def _assigned_names(stmts: tuple[ir.Stmt, ...]) -> Iterator[tuple[str, SourceRange]]:
    for s in stmts:
        if isinstance(s, ir.Assign) and isinstance(s.target, ir.Var):
            yield (s.target.name, s.target.range)
        elif isinstance(s, ir.Decl):
            yield (s.name, s.range)
        elif isinstance(s, ir.For):
            yield (s.var, s.header_range)
        yield from _assigned_names(ir.sub_statements(s))


def written_names(stmts: tuple[ir.Stmt, ...]) -> set[str]:
    """The names `stmts` assign, declare or count with, and pass the address of (``f(&x)``)."""
    addressed = {_address_of_var(e) for e in ir.all_exprs(stmts)} - {""}
    return {name for name, _ in _assigned_names(stmts)} | addressed


def _address_of_var(e: ir.Expr) -> str:
    """`x` of ``&x``, else ""."""
    return e.operand.name if isinstance(e, ir.Unary) and e.op == "&" and isinstance(e.operand, ir.Var) else ""


def _uncast(arg: ir.Expr) -> ir.Expr:
    """`arg` without the pointer casts around it (``(void *)&a[i]``: ``&a[i]``)."""
    while isinstance(arg, ir.Cast) and isinstance(arg.type, ir.Pointer):
        arg = arg.operand
    return arg


def _address(arg: ir.Expr) -> ir.Var | None:
    """The variable an address argument points into: ``a`` of ``&a[i]``, ``a + i``, ``i + a``,
    ``a + i - 1``, ``(float *)a``; ``x`` of ``&x``; else None."""
    arg = _uncast(arg)
    if isinstance(arg, ir.Var):
        return arg
    if isinstance(arg, ir.Unary) and arg.op == "&":
        inner = arg.operand
        if isinstance(inner, ir.Subscript):
            return ir.Var(inner.base, inner.base_range)
        return inner if isinstance(inner, ir.Var) else None
    return _stepped_pointer(arg)


def _stepped_pointer(e: ir.Expr) -> ir.Var | None:
    """The pointer variable of ``a + i``, ``(a + i) - 1`` (uncast: steps of its elements), else None."""
    if _is_pointer(e):
        return e  # type: ignore[return-value]
    if isinstance(e, ir.Binary) and e.op in ("+", "-"):
        return _stepped_pointer(e.lhs) or (_stepped_pointer(e.rhs) if e.op == "+" else None)
    return None


def _is_pointer(e: ir.Expr) -> bool:
    """A variable that holds an array or a pointer."""
    return isinstance(e, ir.Var) and isinstance(e.type, ir.Pointer | ir.Array)


def _declares_local_array(stmts: tuple[ir.Stmt, ...], name: str) -> bool:
    """Whether `stmts` declare `name` as a local array (`_is_local_array`)."""
    for s in stmts:
        if isinstance(s, ir.Decl) and s.name == name:
            return _is_local_array(s)
        if _declares_local_array(ir.sub_statements(s), name):
            return True
    return False


def _is_local_array(s: ir.Decl) -> bool:
    """``double t[8];``, ``float w[n][3];``: a local array of known size, without an initializer."""
    typ = s.type
    return isinstance(typ, ir.Array) and s.init is None and None not in typ.dims and isinstance(typ.elem, ir.Scalar)


def _elem_name(typ: ir.CType) -> str:
    while isinstance(typ, ir.Pointer | ir.Array):
        typ = typ.pointee if isinstance(typ, ir.Pointer) else typ.elem
    return str(typ)


def _base(e: ir.Expr) -> str:
    return e.base if isinstance(e, ir.Subscript) else c_text(e)


def check_region(
    function: ir.Function,
    stmts: tuple[ir.Stmt, ...],
    symbols: dict[str, ir.CType],
    fresh: frozenset[str] = frozenset(),
) -> RegionInfo | list[Problem]:
    """Model `stmts` as one static-control region, or say every reason it cannot be one."""
    walker = _Walker(function, dict(symbols), written_names(stmts), fresh, private_loops=private_scalars(function, stmts))
    walker.block(stmts, _Ctx())
    walker.problems += _global_hazards(function, walker)
    if walker.problems:
        return walker.problems
    rng = SourceRange(
        stmts[0].range.file,
        stmts[0].range.line,
        stmts[0].range.col,
        stmts[-1].range.end_line,
        stmts[-1].range.end_col,
    )
    pointer_params = sorted(
        a.name for a in walker.arrays.values() if a.kind == "array" and function.param(a.name)
    )  # malloc'ed locals are distinct from everything else; parameters may overlap
    if all(_global_array(function, p) for p in pointer_params):  # and global arrays cannot
        pointer_params = []
    written_arrays = {w.array for s in walker.statements for w in s.writes}
    unrestricted = [p for p in pointer_params if not function.param(p).restrict]  # type: ignore[union-attr]
    if len(pointer_params) > 1 and written_arrays & set(unrestricted):
        walker.assumptions.append(
            Problem(
                "NoAliasAssumption",
                "assuming the arrays " + ", ".join(f"`{p}`" for p in pointer_params)
                + " do not overlap in memory (mark the pointers `restrict` to make it explicit)",
                _code_range(stmts),
                (("arrays", ",".join(pointer_params)),),
            )
        )
    return RegionInfo(
        stmts,
        rng,
        tuple(walker.statements),
        tuple(walker.loops),
        tuple(walker.arrays.values()),
        tuple(sorted(walker.params)),
        tuple(sorted(walker.readonly.items())),
        tuple(walker.assumptions),
    )


def _mutable_globals(function: ir.Function, names: object) -> list[str]:
    """The `names` that are global variables a run may change (not `const`)."""
    return [g.name for g in function.globals if g.name in names and not g.constant]  # type: ignore[operator]


def _global_hazards(function: ir.Function, walker: _Walker) -> list[Problem]:
    """An opaque call may read any global variable (and write it, unless `pure`): where the nest
    uses one that is not `const` (a loop bound, a factor, a global array) and does not pass it to
    every such call (TSVC's ``dummy(a, b, c, ...)``: the call's accesses through it are modeled),
    it is not modeled."""
    calls = [c for s in walker.statements for c in s.opaque_calls]
    used = _mutable_globals(function, set(walker.params) | set(walker.readonly) | set(walker.arrays))
    passed = [{v.name for v in map(_address, c.args) if v is not None} for c in calls]
    used = [g for g in used if not all(g in names for names in passed)]
    call = next((c for c, names in zip(calls, passed, strict=True) if used[0] not in names), None) if used else None
    if call is None:
        return []
    return [Problem(
        "ImpureCall",
        f"`{call.name}` may read or change the global variable `{used[0]}`, which these loops also use; "
        "hexplore leaves them as they are (pass the variable to it as a parameter instead)",
        call.range,
        (("callee", call.name),),
    )]  # fmt: skip


def _opaque_note(call: ir.Call, written: list[str], read: list[str]) -> str:
    """What hexplore assumed of an opaque call, for the C programmer."""
    assert call.signature is not None
    written, read = list(dict.fromkeys(written)), list(dict.fromkeys(read))
    read_only = [a for a in read if a not in written]
    parts = [f"reading and writing all of {_names(written)}"] if written else []
    parts += [f"only reading all of {_names(read_only)}"] if read_only else []
    what = " and ".join(parts) or "touching no array of these loops"
    if call.signature.pure:
        globals_ = f"`{call.name}` is declared `pure`, so it is assumed to write no global variable and do no I/O"
    else:
        globals_ = (
            "it may also read and write global variables these loops do not use and do I/O, so it also "
            "keeps its order among other such calls"
        )
    order = ", and runs in the original order relative to every statement that touches these" if parts else ""
    return (
        f"`{c_text(call)}` calls a function whose body hexplore does not see: it is treated as {what}{order}; {globals_}"
    )


def _unknown_callee(call: ir.Call) -> str:
    """Why a call is not modeled as an opaque call, where its prototype says ("" elsewhere)."""
    if not call.unknown:
        return ""
    return (
        f"`{call.name}` {call.unknown}, so hexplore cannot tell what the call reads or writes; it models a "
        "call of a function whose prototype takes and returns only numbers and pointers to numbers"
    )


def _passed(a: AccessInfo) -> str:
    """What an argument lets a call touch: `a` (also for ``a + i``, ``&a[i]``), a row ``A[i]``."""
    return a.array if a.at is not None else a.text


def _names(names: list[str]) -> str:
    return ", ".join(f"`{n}`" for n in names)


def _global_array(function: ir.Function, name: str) -> bool:
    """Whether `name` is a global array (not a pointer): it overlaps no other global array."""
    return any(g.name == name and isinstance(g.type, ir.Array) for g in function.globals)


def _fields(typ: ir.CType) -> tuple[str, ...]:
    """The field names of an array of structs read as rows (`struct_fields.py`), else ()."""
    while isinstance(typ, ir.Pointer | ir.Array):
        if isinstance(typ, ir.Array) and typ.fields:
            return typ.fields
        typ = typ.pointee if isinstance(typ, ir.Pointer) else typ.elem
    return ()
