"""What forward and reverse mode share: the differentiation context, shadow names, C statements
and loops as text (forward and reversed), and the derivative functions' signatures.

Shadows are named ``d_<name>`` and declared like their primal: a parameter ``DATA_TYPE
C[NI][NJ]`` gets ``DATA_TYPE d_C[NI][NJ]`` (the declaration is copied from the source, macros and
all). A floating-point scalar parameter ``alpha`` gets ``double d_alpha`` in forward mode (an
input tangent) and ``double d_alpha[1]`` in reverse mode (its adjoint is a result).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace

from core_compiler.ad.activity import Activity
from core_compiler.ad.cprint import NO_RANGE, CPrinter, SourceText, plus_const
from core_compiler.errors import NotDifferentiable
from core_compiler.frontend import ir
from core_compiler.remarks import Remark
from core_compiler.scop.dependences import Dependences
from core_compiler.scop.if_conversion import if_converted
from core_compiler.scop.model import Access, Scop, Statement

Leaf = ir.Var | ir.Subscript
PASS = "ad"


@dataclass
class Context:
    fn: ir.Function
    source: SourceText
    activity: Activity
    scop: Scop
    deps: Dependences
    mode: str  # "forward" | "reverse"
    remarks: list[Remark] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.body = model_body(self.fn.body, self.scop)
        loops = {lp.var for lp in self.scop.loops}
        self.printer = CPrinter(self.source, frozenset(p.name for p in self.fn.params) | frozenset(
            _declared(self.fn.body)) | frozenset(loops))  # fmt: skip
        self.statements: dict[int, Statement] = {}
        by_node = {id(s.info.node): s for s in self.scop.statements}
        by_range = {(s.info.node.range, _target_name(s.info.assignment.target)): s for s in self.scop.statements}
        for node in (*_assignments(self.fn.body), *_assignments(self.body)):
            if isinstance(node, ir.Assign):
                st = by_node.get(id(node))
            else:
                st = by_range.get((node.range, node.name))
            if st is not None:
                self.statements[id(node)] = st
        self.loop_locals = frozenset(_loop_locals(self.body, inside=False))
        self.scalar_params = frozenset(
            p.name for p in self.fn.params if isinstance(p.type, ir.Scalar) and p.name in self.activity.floats
        )
        self.written = frozenset(_target_name(n.target) if isinstance(n, ir.Assign) else n.name
                                 for n in _assignments(self.body))  # fmt: skip
        # a loop counter the front end took from a `while` (`int i = 0; while (i < n) {... i++;}`)
        # has its declaration folded into the loop: the derivative's loops declare it
        self.declared = frozenset(p.name for p in self.fn.params) | frozenset(_declared(self.fn.body))

    def is_parallel(self, s: ir.For) -> bool:
        return any(lp.parallel and lp.loop.header_range == s.header_range for lp in self.deps.loops)

    # ------------------------------------------------------------------------------ names

    def c(self, e: ir.Expr) -> str:
        return self.printer.expr(e)

    def is_active(self, leaf: Leaf) -> bool:
        return name_of(leaf) in self.activity.active

    def shadow(self, leaf: Leaf) -> ir.Var | ir.Subscript:
        if isinstance(leaf, ir.Subscript):
            return ir.Subscript("d_" + leaf.base, leaf.indices, leaf.range, leaf.base_range)
        if leaf.name in self.scalar_params and self.mode == "reverse":
            return ir.Subscript("d_" + leaf.name, (ir.IntLit(0, NO_RANGE),), leaf.range, leaf.range)
        return ir.Var("d_" + leaf.name, leaf.range, leaf.type)

    def read_access(self, st: Statement, leaf: Leaf) -> Access | None:
        return next((a for a in st.reads if a.info.node is leaf), None)

    # ------------------------------------------------------------------------- statements

    def parts(self, node: ir.Assign | ir.Decl) -> tuple[Leaf, str, ir.Expr]:
        if isinstance(node, ir.Assign):
            return node.target, node.op, node.value
        assert node.init is not None
        st = self.statements.get(id(node))
        target = st.info.assignment.target if st is not None else ir.Var(node.name, node.range, node.type)
        return target, "=", node.init

    def declaration(self, typ: ir.CType, name: str) -> str:
        """``double t[n][m]`` for an array type (its sizes printed like expressions: macros kept)."""
        dims: list[str] = []
        while isinstance(typ, ir.Array):
            dims += ["" if d is None else self.c(d) for d in typ.dims]
            typ = typ.elem
        sep = "" if str(typ).endswith("*") else " "
        return f"{typ}{sep}{name}" + "".join(f"[{d}]" for d in dims)

    def zeroed(self, typ: ir.CType, name: str) -> list[str]:
        """Declare `name` of type `typ` set to zero: a scalar initialized, an array (perhaps of
        variable length, which C cannot initialize) followed by loops that clear it."""
        if not isinstance(typ, ir.Array):
            return [f"{self.declaration(typ, name)} = 0.0;"]
        dims: list[ir.Expr | None] = []
        while isinstance(typ, ir.Array):
            dims += typ.dims
            typ = typ.elem
        counters = [f"hx_z{k}" for k in range(len(dims))]
        lines = [f"{self.declaration(typ, name)}" + "".join(f"[{'' if d is None else self.c(d)}]" for d in dims) + ";"]
        for k, (v, d) in enumerate(zip(counters, dims, strict=True)):
            lines.append("  " * k + f"for (int {v} = 0; {v} < {'0' if d is None else self.c(d)}; {v}++)")
        lines.append("  " * len(dims) + name + "".join(f"[{v}]" for v in counters) + " = 0.0;")
        return lines

    def primal_line(self, node: ir.Assign | ir.Decl) -> str:
        if isinstance(node, ir.Decl):
            init = "" if node.init is None else f" = {self.c(node.init)}"
            return f"{self.declaration(node.type, node.name)}{init};"
        return f"{self.c(node.target)} {node.op} {self.c(node.value)};"

    # ------------------------------------------------------------------------------ loops

    def loop_header(self, s: ir.For) -> str:
        decl = "int " if s.declares_var or s.var not in self.declared else ""
        return f"for ({decl}{s.var} = {self.c(s.init)}; {self.c(s.cond)}; {_step(s.var, s.step)})"

    def reversed_header(self, s: ir.For) -> str:
        """The same iterations, last first: ``for (i = 0; i < n; i++)`` -> ``for (i = n - 1; i >= 0;
        i--)``; ``j < n && j < i + 3`` starts at the smaller bound; with step 2 the last value is
        ``a + 2 * ((n - 1 - a) / 2)``, and the loop keeps its condition (for an empty loop C's
        truncating division puts that value at or below `a`, where the condition fails)."""
        bounds = _bounds(s)
        if bounds is None:
            raise NotDifferentiable(
                f"cannot reverse the loop `{s.var}`: write its condition as `{s.var} < bound` or "
                f"`{s.var} <= bound` (`>`/`>=` for a decreasing loop), or a `&&` of such bounds"
            )
        up = s.step > 0
        ends = [limit if op in ("<", ">") else plus_const(limit, 1 if up else -1) for op, limit in bounds]
        end = ends[0]
        for other in ends[1:]:  # the tightest bound: MIN (MAX counting down) as a `?:`
            end = ir.Ternary(ir.Binary("<" if up else ">", end, other, NO_RANGE), end, other, NO_RANGE)
        step = abs(s.step)
        init = self.printer.expr(s.init, 11)  # `j >= (1 > i - 2 ? 1 : i - 2)`
        start = f"{s.var} >= {init}" if up else f"{s.var} <= {init}"
        if step == 1:
            last = plus_const(end, -1 if up else 1)
            cond = start
        else:
            span = ir.Binary("-", plus_const(end, -1), s.init, NO_RANGE) if up else \
                ir.Binary("-", s.init, plus_const(end, 1), NO_RANGE)  # fmt: skip
            k = ir.IntLit(step, NO_RANGE)
            offset = ir.Binary("*", k, ir.Binary("/", span, k, NO_RANGE), NO_RANGE)
            last = ir.Binary("+" if up else "-", s.init, offset, NO_RANGE)
            cond = f"{start} && {self.printer.expr(s.cond, 6)}"
        decl = "int " if s.declares_var or s.var not in self.declared else ""
        return f"for ({decl}{s.var} = {self.c(last)}; {cond}; {_step(s.var, -s.step)})"


def model_body(stmts: tuple[ir.Stmt, ...], scop: Scop) -> tuple[ir.Stmt, ...]:
    """`stmts` as the polyhedral model reads them: an ``if`` whose condition reads data is the
    assignments it was if-converted to (``if (x[i] > 0) y[i] = x[i];`` is
    ``y[i] = x[i] > 0 ? x[i] : y[i];``), and each assignment is the statement's own node (a
    ``MIN`` in a subscript read as two reads), so that every statement of the model is one
    assignment here. Reverse mode differentiates this body: the original ``if`` has no statement
    of its own, and re-evaluating its condition in the reverse sweep would read overwritten values."""
    guarded = {p.range for p in scop.region.assumptions if p.reason == "GuardedAssignment"}
    by_target = {id(s.info.assignment.target): s.info.assignment for s in scop.statements}
    scalar = {(s.info.node.range, s.info.assignment.target.name): s.info.assignment
              for s in scop.statements if isinstance(s.info.assignment.target, ir.Var)}  # fmt: skip

    def node(a: ir.Assign) -> ir.Assign:
        found = by_target.get(id(a.target))
        if found is None and isinstance(a.target, ir.Var):  # a branch's `double t = ...;`
            found = scalar.get((a.range, a.target.name))
        return found or a

    def walk(body: tuple[ir.Stmt, ...]) -> tuple[ir.Stmt, ...]:
        out: list[ir.Stmt] = []
        for s in body:
            converted = if_converted(s) if isinstance(s, ir.If) and s.cond.range in guarded else None
            if converted is not None:
                out += [node(c) if isinstance(c, ir.Assign) else c for c in converted]
            elif isinstance(s, ir.Assign):
                out.append(node(s))
            elif isinstance(s, ir.For):
                out.append(replace(s, body=walk(s.body)))
            elif isinstance(s, ir.If):
                out.append(replace(s, then=walk(s.then), other=walk(s.other)))
            else:
                out.append(s)
        return tuple(out)

    return walk(stmts)


def name_of(leaf: Leaf) -> str:
    return leaf.name if isinstance(leaf, ir.Var) else leaf.base


def _target_name(t: ir.Var | ir.Subscript) -> str:
    return t.name if isinstance(t, ir.Var) else t.base


def _step(var: str, step: int) -> str:
    if abs(step) == 1:
        return f"{var}++" if step == 1 else f"{var}--"
    return f"{var} += {step}" if step > 0 else f"{var} -= {-step}"


def _bounds(s: ir.For) -> list[tuple[str, ir.Expr]] | None:
    """`(op, limit)` for each bound of the condition (one, or a `&&` of them) read as
    ``var op limit``, each in the direction the loop moves; None for any other condition."""
    parts: list[ir.Expr] = []

    def conjuncts(e: ir.Expr) -> None:
        if isinstance(e, ir.Binary) and e.op == "&&":
            conjuncts(e.lhs)
            conjuncts(e.rhs)
        else:
            parts.append(e)

    conjuncts(s.cond)
    out = []
    for c in parts:
        b = _bound(s, c)
        if b is None:
            return None
        out.append(b)
    return out


def _bound(s: ir.For, c: ir.Expr) -> tuple[str, ir.Expr] | None:
    """`(op, limit)` with the comparison `c` read as ``var op limit``."""
    if not isinstance(c, ir.Binary) or c.op not in ("<", "<=", ">", ">="):
        return None
    flip = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
    if isinstance(c.lhs, ir.Var) and c.lhs.name == s.var:
        op, limit = c.op, c.rhs
    elif isinstance(c.rhs, ir.Var) and c.rhs.name == s.var:
        op, limit = flip[c.op], c.lhs
    else:
        return None
    if (s.step > 0) != (op in ("<", "<=")):
        return None
    return op, limit


def _assignments(stmts: tuple[ir.Stmt, ...]) -> Iterator[ir.Assign | ir.Decl]:
    for s in stmts:
        if isinstance(s, ir.Assign) or (isinstance(s, ir.Decl) and s.init is not None):
            yield s
        yield from _assignments(ir.sub_statements(s))


def _declared(stmts: tuple[ir.Stmt, ...]) -> Iterator[str]:
    for s in stmts:
        if isinstance(s, ir.Decl):
            yield s.name
        yield from _declared(ir.sub_statements(s))


def _loop_locals(stmts: tuple[ir.Stmt, ...], inside: bool) -> Iterator[str]:
    for s in stmts:
        if isinstance(s, ir.Decl) and inside:
            yield s.name
        yield from _loop_locals(ir.sub_statements(s), inside or isinstance(s, ir.For))


# ------------------------------------------------------------------------------- blocks


def block_lines(
    ctx: Context,
    stmts: tuple[ir.Stmt, ...],
    indent: int,
    leaf: Callable[[ir.Assign | ir.Decl], list[str]],
    *,
    reverse: bool = False,
    prelude: Callable[[tuple[ir.Stmt, ...]], list[str]] | None = None,
) -> list[str]:
    """`stmts` as C lines; `leaf` gives each assignment's lines; loops reversed with `reverse`."""
    pad = "  " * indent
    out = [pad + line for line in (prelude(stmts) if prelude else [])]
    for s in reversed(stmts) if reverse else stmts:
        if isinstance(s, ir.For):
            # A loop that carries no dependence in the primal has independent adjoint iterations
            # too (the increments they share are sums): it keeps its direction, which compilers
            # vectorize best.
            backwards = reverse and not ctx.is_parallel(s)
            header = ctx.reversed_header(s) if backwards else ctx.loop_header(s)
            body = block_lines(ctx, s.body, indent + 1, leaf, reverse=reverse, prelude=prelude)
            out += _braced(pad + header, body, pad)
        elif isinstance(s, ir.If):
            then = block_lines(ctx, s.then, indent + 1, leaf, reverse=reverse, prelude=prelude)
            other = block_lines(ctx, s.other, indent + 1, leaf, reverse=reverse, prelude=prelude)
            if not then and not other:
                continue
            out += _braced(f"{pad}if ({ctx.c(s.cond)})", then or [pad + "  ;"], pad)
            if other:
                out += _braced(f"{pad}else", other, pad)
        elif isinstance(s, ir.Assign | ir.Decl):
            if isinstance(s, ir.Decl) and s.init is None:
                if not reverse:
                    if ctx.mode == "forward" and s.name in ctx.activity.active:
                        out.append(f"{pad}{ctx.declaration(s.type, 'd_' + s.name)};")
                    out.append(pad + ctx.primal_line(s))
                continue
            out += [pad + line for line in leaf(s)]
    return out


def _braced(header: str, body: list[str], pad: str) -> list[str]:
    if not body:
        return []
    if len(body) == 1:
        return [header, body[0]]
    return [header + " {", *body, pad + "}"]


# --------------------------------------------------------------------------- signatures


def param_text(ctx: Context, p: ir.Param) -> str:
    text = ctx.source.slice(p.range)
    return text if text and re.search(rf"\b{re.escape(p.name)}\b", text) else ctx.declaration(p.type, p.name)


def shadow_param_text(ctx: Context, p: ir.Param) -> str:
    if isinstance(p.type, ir.Scalar):
        return f"{p.type} d_{p.name}" + ("[1]" if ctx.mode == "reverse" else "")
    text = param_text(ctx, p)
    if ctx.mode == "reverse":
        text = re.sub(r"\bconst\b\s*", "", text)
    return _restrict(_rename_declarator(text, p.name, "d_" + p.name), "d_" + p.name)


def _restrict(text: str, name: str) -> str:
    """Shadows are buffers of their own: say so (``double d_A[restrict n][m]``), so that the C
    compiler need not reload through them after every store."""
    if "restrict" in text:
        return text
    m = re.search(rf"\b{re.escape(name)}\b\s*\[", text)
    if m:
        return text[: m.end()] + "restrict " + text[m.end() :]
    m = re.search(rf"\*\s*{re.escape(name)}\b", text)
    return text[: m.start() + 1] + "restrict " + text[m.start() + 1 :] if m else text


def _rename_declarator(text: str, old: str, new: str) -> str:
    """Rename the declared name, not a macro or size that happens to share it."""
    depth = 0
    for m in re.finditer(r"[\[\]]|\b\w+\b", text):
        tok = m.group(0)
        if tok == "[":
            depth += 1
        elif tok == "]":
            depth -= 1
        elif tok == old and depth == 0:
            return text[: m.start()] + new + text[m.end() :]
    return text.replace(old, new, 1)


def shadow_params(ctx: Context) -> list[ir.Param]:
    """Parameters that get a shadow: floating-point ones that are active, `wrt` or `of`."""
    wanted = ctx.activity.active | set(ctx.activity.wrt) | set(ctx.activity.of)
    return [p for p in ctx.fn.params if p.name in wanted and p.name in ctx.activity.floats]
