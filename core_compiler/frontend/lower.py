"""Lowering libclang cursors to the loop IR (`ir.py`).

Anything the IR does not model becomes an opaque node with a stable reason name, so that SCoP
detection can say exactly what stopped it and where. C written the way people write it is read as
the loops it means by the rewrites this translation calls, one module each: `global_inputs`
(file-scope variables and `const` tables as inputs), `inline` (calls of ``{ return <expr>; }``
helpers), `induction` (``j = i + 1; a[j]`` read as ``a[i + 1]``), `loop_exits` (``if (c)
break;`` starting a ``for`` body is its condition, ``if (c) continue;`` guards the rest), `pointers` (local pointers into arrays), `chained_assignment` (``a = b = e;``),
`while_loops` (a counting ``while`` as a ``for``) and `early_return` (``if (n <= 0) return;`` as
the condition of the rest of the body). libclang types become IR types in `clang_types`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import clang.cindex as ci

from core_compiler.frontend import (
    cuda_launches,
    early_return,
    global_inputs,
    induction,
    inline,
    ir,
    loop_exits,
    opaque_calls,
    pointers,
    run_time_steps,
    running_counters,
    shadowing,
    struct_fields,
    void_helpers,
    while_loops,
)
from core_compiler.frontend.chained_assignment import assignment_chain
from core_compiler.frontend.clang_parse import (
    binary_operator,
    definitions,
    evaluate,
    source_range,
    unary_operator,
)
from core_compiler.frontend.clang_parse import unwrap as _unwrap
from core_compiler.frontend.clang_types import (
    ctype,
    has_volatile_elements,
    is_const,
    is_initializer,
    is_integer,
    is_restrict,
)
from core_compiler.frontend.directives import read_directives
from core_compiler.frontend.expression_budget import ExpressionBudget
from core_compiler.frontend.global_inputs import global_write, is_global, is_global_scalar
from core_compiler.source import SourceRange

K = ci.CursorKind
T = ci.TypeKind

_CUDA_BUILTINS = {"threadIdx", "blockIdx", "blockDim", "gridDim"}
_COMPOUND_OPS = {"+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^="}


class Lowerer:
    """Lowers the functions of one translation unit. `path` is the main file's name."""

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.text = text
        self._line_offsets = _line_offsets(text)
        self._inline = inline.Inliner(self.expr)
        self._inline_void = void_helpers.VoidInliner(self.block, text)
        self._aliases: dict[int, pointers.Alias] = {}  # local pointers into arrays, by declaration
        self._aliasable: frozenset[int] | None = None  # in the function being lowered, when needed
        self._body: ci.Cursor | None = None
        self._notes: list[ir.Note] = []
        self._globals: dict[str, ir.Param] = {}  # the file-scope variables the function uses
        self._budget = ExpressionBudget()
        self._views = struct_fields.Views({}, {})  # the function's arrays of structs read as rows
        self._is_cuda = path.endswith((".cu", ".cuh"))
        self._launches: dict[str, tuple[ir.Launch, ...]] | None = None  # by kernel, found when needed
        self._renamed: dict[int, str] = {}  # declarations that shadow an outer name (`shadowing.py`)

    # ------------------------------------------------------------------------------ entry

    def functions(self, tu: ci.TranslationUnit) -> list[ir.Function]:
        return [self.function(cur) for cur in definitions(tu, self.path)]

    def function(self, cur: ci.Cursor) -> ir.Function:
        param_curs = [p for p in cur.get_children() if p.kind == K.PARM_DECL]
        params = tuple(self.param(p) for p in param_curs)
        body_cur = next((c for c in cur.get_children() if c.kind == K.COMPOUND_STMT), None)
        self._aliases, self._aliasable, self._body, self._notes, self._globals = {}, None, body_cur, [], {}
        self._views = struct_fields.Views({}, {})
        self._renamed = {}
        body: tuple[ir.Stmt, ...] = ()
        if body_cur is not None:
            self._renamed = shadowing.shadowing_names(body_cur, (p.name for p in params))
            self._views = struct_fields.views(body_cur, param_curs, lambda c: self.slice(self.range(c)))
            params = self._viewed(params)
            body, assumed = early_return.guards_as_conditions(self.block(body_cur))
            self._notes += assumed
            if not self._is_cuda:  # a kernel's grid-stride loops are `cuda.grid`'s
                body, step_notes = run_time_steps.run_time_steps(body)
                self._notes += step_notes
            body, guard_notes = loop_exits.loop_exits(body)
            body, counter_notes = running_counters.counters(body, params)
            body, induction_notes = induction.substituted(body, params)
            self._notes += guard_notes + counter_notes + induction_notes
        is_kernel = any(c.kind == K.CUDAGLOBAL_ATTR for c in cur.get_children())
        rng = self.range(cur)
        directives, bad_directives = self.directives(rng)
        return ir.Function(
            name=cur.spelling,
            return_type=self.type(cur.result_type, None),
            params=params,
            body=body,
            range=rng,
            name_range=self.name_range(cur),
            is_cuda_kernel=is_kernel,
            text=self.slice(rng),
            notes=tuple(self._notes),
            globals=tuple(self._globals.values()),
            launches=self._kernel_launches(cur) if is_kernel else (),
            template_params=tuple(c.spelling for c in cur.get_children() if c.kind == K.TEMPLATE_NON_TYPE_PARAMETER),
            directives=directives,
            bad_directives=bad_directives,
        )

    def directives(self, rng: SourceRange) -> tuple[tuple[ir.Directive, ...], tuple[ir.DirectiveProblem, ...]]:
        """The ``#pragma hexplore`` lines in the function's text (`directives.py`)."""
        if rng.file != self.path or "hexplore" not in self.text:
            return (), ()
        return read_directives(self.text.split("\n"), self.path, rng.line, rng.end_line)

    def _viewed(self, params: tuple[ir.Param, ...]) -> tuple[ir.Param, ...]:
        """`params` with each array of structs read as rows of its fields (`struct_fields.py`)."""
        out = []
        for p in params:
            view = self._views.views.get(p.name)
            if view is not None:
                p = replace(p, type=struct_fields.view_type(p.type, view), declared=self.slice(p.range))
                self._notes.append(struct_fields.note(view, p.range))
            out.append(p)
        return tuple(out)

    def _kernel_launches(self, kernel: ci.Cursor) -> tuple[ir.Launch, ...]:
        if self._launches is None:
            self._launches = cuda_launches.launches(kernel.translation_unit, self.path, self.range, self._launch_expr)
        return self._launches.get(kernel.spelling, ())

    def _launch_expr(self, cur: ci.Cursor) -> ir.Expr:
        """A launch's size as an expression, lowered outside the function being lowered (its
        notes are not the function's)."""
        notes = len(self._notes)
        out = self.expr(cur)
        del self._notes[notes:]
        return out

    def param(self, cur: ci.Cursor) -> ir.Param:
        typ = cur.type
        return ir.Param(
            cur.spelling, self.type(typ, cur), self.range(cur), is_restrict(typ), has_volatile_elements(typ)
        )

    # ------------------------------------------------------------------------------ types

    def type(self, typ: ci.Type, decl: ci.Cursor | None) -> ir.CType:
        """Lower a declared type; `decl` supplies the size expressions of VLA dimensions."""
        sizes = list(reversed(self._size_exprs(decl))) if decl is not None else []
        return ctype(typ, sizes)

    def _size_exprs(self, decl: ci.Cursor) -> list[ir.Expr]:
        """Array size expressions written in a declaration, innermost first (libclang's order)."""
        out = []
        for child in decl.get_children():
            if child.kind.is_expression() and not is_initializer(decl, child):
                out.append(self.expr(child))
        return out

    # ------------------------------------------------------------------------------ statements

    def block(self, cur: ci.Cursor) -> tuple[ir.Stmt, ...]:
        out: list[ir.Stmt] = []
        for child in cur.get_children():
            loop = self.while_as_for(child, out[-1]) if out and child.kind == K.WHILE_STMT else None
            if loop is not None:
                out[-1] = loop
            else:
                out.extend(self.stmt(child))
        return tuple(out)

    def while_as_for(self, cur: ci.Cursor, before: ir.Stmt) -> ir.For | None:
        """The ``while`` loop `cur` after the statement `before` as a ``for`` loop, when it counts
        (`while_loops.py`); its body and condition are lowered only when `before` sets a counter."""
        cond_c, body_c = cur.get_children()
        if while_loops.counter(before) is None:
            return None
        notes = len(self._notes)
        body = self.body(body_c)
        cond = self.expr(cond_c)
        found = while_loops.while_as_for(before, cond, body, self.range(cur), self._header_range(cur, body_c))
        if found is None:
            del self._notes[notes:]  # the body is lowered again as the `while` loop's
            return None
        loop, note = found
        self._notes.append(note)
        return loop

    def body(self, cur: ci.Cursor) -> tuple[ir.Stmt, ...]:
        return self.block(cur) if cur.kind == K.COMPOUND_STMT else tuple(self.stmt(cur))

    def stmt(self, cur: ci.Cursor) -> Iterator[ir.Stmt]:
        kind = cur.kind
        rng = self.range(cur)
        if kind == K.COMPOUND_STMT:
            yield from self.block(cur)
        elif kind == K.NULL_STMT:
            return
        elif kind == K.DECL_STMT:
            for var in cur.get_children():
                if var.kind == K.VAR_DECL and not self.pointer_alias(var, pointers.initializer(var), self.range(var)):
                    yield self.decl(var)
        elif kind == K.FOR_STMT:
            yield self.for_stmt(cur)
        elif kind == K.DO_STMT and _statement_macro(cur):
            yield from self.body(next(cur.get_children()))
        elif kind in (K.WHILE_STMT, K.DO_STMT):
            children = list(cur.get_children())
            body_cur = children[-1] if kind == K.WHILE_STMT else children[0]
            word = "while" if kind == K.WHILE_STMT else "do"
            yield ir.OtherLoop(
                word,
                "NonCanonicalLoop",
                f"a `{word}` loop has no affine trip count; write it as a `for` loop "
                "with a simple counter",
                self.body(body_cur),
                rng,
                self._header_range(cur, body_cur),
            )
        elif kind == K.IF_STMT:
            children = list(cur.get_children())
            cond = self.expr(children[0])
            then = self.body(children[1]) if len(children) > 1 else ()
            other = self.body(children[2]) if len(children) > 2 else ()
            yield ir.If(cond, then, other, rng)
        elif kind in (K.RETURN_STMT, K.BREAK_STMT, K.CONTINUE_STMT, K.GOTO_STMT):
            children = list(cur.get_children())
            value = self.expr(children[0]) if kind == K.RETURN_STMT and children else None
            word = {
                K.RETURN_STMT: "return",
                K.BREAK_STMT: "break",
                K.CONTINUE_STMT: "continue",
                K.GOTO_STMT: "goto",
            }[kind]
            yield ir.Jump(word, value, rng)
        elif kind == K.LABEL_STMT:
            yield ir.Jump("label", None, self.range_of_tokens(cur, 2))
            for child in cur.get_children():
                yield from self.stmt(child)
        elif kind.is_expression():
            setting = pointers.pointer_assignment(_unwrap(cur))
            inlined = self.call_statement(_unwrap(cur), rng) if setting is None else None
            if inlined is not None:
                yield from inlined
            elif setting is None or not self.pointer_alias(*setting, rng):
                yield from assignment_chain(self, cur)
        elif kind == K.UNEXPOSED_STMT and _one_statement(cur) is not None:
            yield from self.stmt(_one_statement(cur))  # type: ignore[arg-type]  # `#pragma unroll` before a loop
        else:
            word = kind.name.lower().replace("_stmt", "")
            nested = [c for c in cur.get_children() if c.kind.is_statement()]
            body = tuple(s for c in nested for s in self.stmt(c))
            yield ir.OpaqueStmt(
                "UnsupportedStatement", f"a `{word}` statement is not supported", rng, body
            )

    def call_statement(self, cur: ci.Cursor, rng: SourceRange) -> tuple[ir.Stmt, ...] | None:
        """The call of a `void` helper `cur` as the helper's statements (`void_helpers.py`), or None."""
        if cur.kind != K.CALL_EXPR:
            return None
        notes = len(self._notes)
        found = self._inline_void(cur, tuple(self.expr(a) for a in cur.get_arguments()), rng)
        del self._notes[notes:]  # those of the helper's body, at its own lines
        if found is None:
            return None
        self._notes.append(found.note)
        return found.stmts

    def pointer_alias(self, var: ci.Cursor, value: ci.Cursor | None, rng: SourceRange) -> bool:
        """Whether `var`, declared or set to `value` at `rng`, is a local pointer into an array
        whose uses are lowered as that array's elements (`pointers.py`); the alias is then
        remembered and the declaration or assignment dropped."""
        if var.type.get_canonical().kind != T.POINTER or self._body is None:
            return False
        if self._aliasable is None:
            self._aliasable = pointers.aliasable(self._body, self._rank)
        if var.hash not in self._aliasable:
            return False
        if value is None:
            return True  # `double *row;`, set later
        alias = pointers.address(value, self._aliases, self.expr, self._rank)
        if alias is None:
            return False
        self._aliases[var.hash] = alias
        address, name = " ".join(self.slice(self.range(value)).split()), var.spelling
        message = (
            f"`{name}` is set once, to `{address}`, and only indexed: hexplore reads `{name}[k]` as "
            f"the element of `{alias.base}` k places further on"
        )
        self._notes.append(ir.Note("PointerIntoArray", message, rng))
        return True

    def _rank(self, ref: ci.Cursor) -> int:
        """How many subscripts the variable `ref` refers to takes to reach a scalar."""
        typ, rank = ctype(ref.referenced.type, []), 0
        while True:
            if isinstance(typ, ir.Array):
                rank, typ = rank + len(typ.dims), typ.elem
            elif isinstance(typ, ir.Pointer):
                rank, typ = rank + 1, typ.pointee
            else:
                return rank

    def decl(self, cur: ci.Cursor) -> ir.Decl:
        if cur.type.kind == T.CONSTANTARRAY and is_const(cur.type):
            self._use_global(cur)  # a `const` table is an input like a global one
        init = next((c for c in cur.get_children() if is_initializer(cur, c)), None)
        init_ir = self.expr(init) if init is not None else None
        shared = self._is_cuda and any(c.kind == K.CUDASHARED_ATTR for c in cur.get_children())
        return ir.Decl(self.name(cur), self.type(cur.type, cur), init_ir, self.range(cur), shared)

    def expr_stmt(self, cur: ci.Cursor) -> ir.Stmt:
        cur = _unwrap(cur)
        rng = self.range(cur)
        kind = cur.kind
        if kind in (K.BINARY_OPERATOR, K.COMPOUND_ASSIGNMENT_OPERATOR):
            op = binary_operator(cur)
            if op == "=" or op in _COMPOUND_OPS:
                lhs, rhs = cur.get_children()
                target = self.expr(lhs)
                if is_global_scalar(lhs):
                    return global_write(target)
                if isinstance(target, ir.Var | ir.Subscript):
                    return ir.Assign(target, op, self.expr(rhs), rng)
                why = target.message if isinstance(target, ir.OpaqueExpr) else "an unsupported target"
                message = f"the assignment to `{target}` goes through {why}"
                if isinstance(target, ir.OpaqueExpr) and target.reason == "StructField":
                    message = why
                return ir.OpaqueStmt(_opaque_reason(target), message, target.range)
        if kind == K.UNARY_OPERATOR:
            op = unary_operator(cur)
            if op in ("++", "--", "post++", "post--"):
                operand = next(cur.get_children())
                target = self.expr(operand)
                if is_global_scalar(operand):
                    return global_write(target)
                if isinstance(target, ir.Var | ir.Subscript):
                    aop = "+=" if "+" in op else "-="
                    return ir.Assign(target, aop, ir.IntLit(1, rng), rng)
        return ir.ExprStmt(self.expr(cur), rng)

    def for_stmt(self, cur: ci.Cursor) -> ir.Stmt:
        children = list(cur.get_children())
        body_cur = children[-1]
        header = self._header_range(cur, body_cur)
        init_c, cond_c, inc_c = self._for_parts(cur, children[:-1])
        body = self.body(body_cur)
        rng = self.range(cur)

        def other(message: str, parts: ir.LoopHeader | None = None) -> ir.OtherLoop:
            return ir.OtherLoop("for", "NonCanonicalLoop", message, body, rng, header, parts)

        if init_c is None or cond_c is None or inc_c is None:
            return other("this `for` loop lacks an initialization, a condition or an increment")
        var, init, declares = self._for_init(init_c)
        if var is None or init is None:
            return other("the loop initialization is not `i = expression` for one integer `i`")
        step = self._for_step(inc_c, var)
        if step is None:
            return other(
                f"the loop increment does not add a constant to `{var}` (write `{var}++`, "
                f"`{var}--` or `{var} += c`)",
                self._for_header(var, init, declares, cond_c, inc_c),
            )
        cond = self.expr(cond_c)
        return ir.For(var, init, cond, step, body, rng, header, declares)

    def _for_parts(
        self, cur: ci.Cursor, parts: list[ci.Cursor]
    ) -> tuple[ci.Cursor | None, ci.Cursor | None, ci.Cursor | None]:
        """Assign libclang's children (it omits empty ones) to init/cond/inc by position."""
        semis = self._header_semicolons(cur)
        if len(semis) < 2:
            return (None, None, None)
        slots: list[ci.Cursor | None] = [None, None, None]
        for p in parts:
            off = p.extent.start.offset
            slot = 0 if off < semis[0] else (1 if off < semis[1] else 2)
            slots[slot] = p
        return slots[0], slots[1], slots[2]

    def _header_semicolons(self, cur: ci.Cursor) -> list[int]:
        depth, semis = 0, []
        for tok in cur.get_tokens():
            s = tok.spelling
            if s == "(":
                depth += 1
            elif s == ")":
                depth -= 1
                if depth == 0:
                    break
            elif s == ";" and depth == 1:
                semis.append(tok.extent.start.offset)
        return semis

    def _for_init(self, init_c: ci.Cursor) -> tuple[str | None, ir.Expr | None, bool]:
        if init_c.kind == K.DECL_STMT:
            decls = [c for c in init_c.get_children() if c.kind == K.VAR_DECL]
            if len(decls) != 1 or not is_integer(decls[0].type):
                return (None, None, True)
            init = next((c for c in decls[0].get_children() if c.kind.is_expression()), None)
            return (self.name(decls[0]), self.expr(init) if init else None, True)
        init_c = _unwrap(init_c)
        if init_c.kind == K.BINARY_OPERATOR and binary_operator(init_c) == "=":
            lhs, rhs = init_c.get_children()
            lhs = _unwrap(lhs)
            if lhs.kind == K.DECL_REF_EXPR and is_integer(lhs.type):
                return (self.name(lhs), self.expr(rhs), False)
        return (None, None, False)

    def _for_header(
        self, var: str, init: ir.Expr, declares: bool, cond_c: ci.Cursor, inc_c: ci.Cursor
    ) -> ir.LoopHeader | None:
        """The header of a loop whose step is ``var op= value`` with a value that is not a constant
        or an operator other than ``+=``/``-=`` (``s >>= 1``, ``k += blockDim.x``), else None."""
        inc_c = _unwrap(inc_c)
        children = list(inc_c.get_children())
        if inc_c.kind != K.COMPOUND_ASSIGNMENT_OPERATOR or len(children) != 2 or self._ref_name(children[0]) != var:
            return None
        op = binary_operator(inc_c)
        if op not in ("+=", "-=", "*=", "/=", "<<=", ">>="):
            return None
        return ir.LoopHeader(var, init, self.expr(cond_c), op, self.expr(children[1]), declares)

    def _for_step(self, inc_c: ci.Cursor, var: str) -> int | None:
        inc_c = _unwrap(inc_c)
        children = list(inc_c.get_children())
        if not children or self._ref_name(children[0]) != var:
            return None
        if inc_c.kind == K.UNARY_OPERATOR:
            op = unary_operator(inc_c)
            return {"++": 1, "post++": 1, "--": -1, "post--": -1}.get(op)
        if inc_c.kind == K.COMPOUND_ASSIGNMENT_OPERATOR and len(children) == 2:
            op, val = binary_operator(inc_c), evaluate(children[1])
            if isinstance(val, int) and val != 0 and op in ("+=", "-="):
                return val if op == "+=" else -val
        if inc_c.kind == K.BINARY_OPERATOR and binary_operator(inc_c) == "=":
            rhs = self.expr(children[1])
            if isinstance(rhs, ir.Binary) and rhs.op in ("+", "-"):
                lhs_var = isinstance(rhs.lhs, ir.Var) and rhs.lhs.name == var
                if lhs_var and isinstance(rhs.rhs, ir.IntLit) and rhs.rhs.value != 0:
                    return rhs.rhs.value if rhs.op == "+" else -rhs.rhs.value
                if rhs.op == "+" and isinstance(rhs.lhs, ir.IntLit) and isinstance(rhs.rhs, ir.Var) and rhs.rhs.name == var:
                    return rhs.lhs.value or None
        return None

    # ------------------------------------------------------------------------------ expressions

    def expr(self, cur: ci.Cursor) -> ir.Expr:
        """`cur` lowered within the front end's budget (`expression_budget.py`)."""
        return self._budget.lower(cur, self._expr, self.range, self.slice)

    def _expr(self, cur: ci.Cursor) -> ir.Expr:
        cur = _unwrap(cur)
        kind = cur.kind
        rng = self.range(cur)
        if kind == K.INTEGER_LITERAL or kind == K.CHARACTER_LITERAL:
            val = evaluate(cur)
            return ir.IntLit(int(val) if val is not None else 0, rng)
        if kind == K.FLOATING_LITERAL:
            val = evaluate(cur)
            text = self.slice(rng)
            if not text or not (text[0].isdigit() or text[0] == "."):
                text = repr(float(val or 0.0))
            return ir.FloatLit(float(val or 0.0), text, rng)
        if kind == K.DECL_REF_EXPR:
            ref = cur.referenced
            if ref is not None and ref.kind == K.ENUM_CONSTANT_DECL:
                return ir.IntLit(ref.enum_value, rng)
            if is_global(cur):
                self._use_global(cur.referenced)
            return ir.Var(self.name(cur), rng, ctype(cur.type, []))
        if kind == K.ARRAY_SUBSCRIPT_EXPR:
            return self.subscript(cur, rng)
        if kind == K.BINARY_OPERATOR:
            op = binary_operator(cur)
            lhs, rhs = cur.get_children()
            if op in ("=", ",") or op in _COMPOUND_OPS:
                return self.opaque(cur, "SideEffect", f"`{op}` inside an expression has a side effect")
            return ir.Binary(op, self.expr(lhs), self.expr(rhs), rng)
        if kind == K.COMPOUND_ASSIGNMENT_OPERATOR:
            return self.opaque(cur, "SideEffect", "an assignment inside an expression")
        if kind == K.UNARY_OPERATOR:
            return self.unary(cur, rng)
        if kind == K.CONDITIONAL_OPERATOR:
            c, t, e = cur.get_children()
            return ir.Ternary(self.expr(c), self.expr(t), self.expr(e), rng)
        if kind == K.CALL_EXPR:
            return self.call(cur, rng)
        if kind in (K.CSTYLE_CAST_EXPR, K.CXX_FUNCTIONAL_CAST_EXPR, K.CXX_STATIC_CAST_EXPR):
            operand = [c for c in cur.get_children() if c.kind.is_expression()][-1]
            return ir.Cast(self.type(cur.type, None), self.expr(operand), rng)
        if kind == K.MEMBER_REF_EXPR:
            base = next(cur.get_children(), None)
            if base is not None and _ref_name(base) in _CUDA_BUILTINS:
                return ir.Var(f"{_ref_name(base)}.{cur.spelling}", rng, ir.Scalar("unsigned int"))
            return self.member(cur, rng)
        val = evaluate(cur) if kind != K.CALL_EXPR else None
        if isinstance(val, int):
            return ir.IntLit(val, rng)
        if kind == K.UNEXPOSED_EXPR:
            return self.opaque(cur, "UnsupportedExpression", f"`{self.slice(rng)}` is not an expression hexplore models")
        what = kind.name.lower().replace("_", " ")
        return self.opaque(cur, "UnsupportedExpression", f"a {what} is not supported")

    def call(self, cur: ci.Cursor, rng: SourceRange) -> ir.Expr:
        arg_curs = list(cur.get_arguments())
        args = tuple(self.expr(a) for a in arg_curs)
        if self._is_cuda and cur.spelling in cuda_launches.ATOMICS and arg_curs:
            target = self._address_of(arg_curs[0])  # `atomicAdd(&hist[b], 1)`: the element it updates
            args = (target, *args[1:]) if target is not None else args
        inlined = self._inline(cur, arg_curs, args, rng)
        if inlined is not None:
            return inlined
        if _implicitly_declared(cur):
            message = (
                f"`{cur.spelling}` is not declared (no prototype, no definition: C89's implicit "
                f"declaration `int {cur.spelling}()`); hexplore does not know what it computes, so "
                "this is a call to an unknown function: a loop nest around it is not modeled, the "
                "function's other loops are"
            )
            self._notes.append(ir.Note("UndeclaredFunction", message, self.name_range(cur)))
            return ir.Call(cur.spelling, args, rng, declared=False)
        if cur.spelling in ir.PURE_MATH:
            return ir.Call(cur.spelling, args, rng)
        signature = opaque_calls.signature(cur)
        if signature is not None:  # `f(&x)`, `f(&a[i])`: addresses the call may write through
            args = tuple(self._address_arg(c) or self._string(c) or a for c, a in zip(arg_curs, args, strict=True))
        return ir.Call(cur.spelling, args, rng, signature=signature, unknown="" if signature else opaque_calls.unknown(cur))

    def _string(self, cur: ci.Cursor) -> ir.StrLit | None:
        """A string literal argument (``printf``'s format), as written; else None."""
        cur = _unwrap(cur)
        return ir.StrLit(cur.spelling, self.range(cur)) if cur.kind == K.STRING_LITERAL else None

    def _address_arg(self, cur: ci.Cursor) -> ir.Expr | None:
        """An argument ``&a[i]``, ``&x`` or ``&p[i].f`` (also under a pointer cast, ``(void *)&x``) as
        ``Unary("&", element)``; None for any other argument (lowered as an expression)."""
        cur = _unwrap(cur)
        children = [c for c in cur.get_children() if c.kind.is_expression()]
        if cur.kind == K.CSTYLE_CAST_EXPR and children and cur.type.get_canonical().kind == T.POINTER:
            inner = self._address_arg(children[-1])
            return None if inner is None else ir.Cast(self.type(cur.type, None), inner, self.range(cur))
        if cur.kind != K.UNARY_OPERATOR or unary_operator(cur) != "&" or len(children) != 1:
            return None
        element = self.expr(children[0])
        return ir.Unary("&", element, self.range(cur)) if isinstance(element, ir.Subscript | ir.Var) else None

    def member(self, cur: ci.Cursor, rng: SourceRange) -> ir.Expr:
        """``p[i].f`` of an array of structs read as rows (`struct_fields.py`): ``p[i][column]``."""
        params = {name: cur for name in (*self._views.views, *self._views.refused)}
        use = struct_fields.field_use(cur, params)
        view = self._views.views.get(use.param) if use is not None else None
        if use is None or view is None:
            why = self._views.refused.get(use.param) if use is not None else None
            return self.opaque(cur, "StructField", struct_fields.refusal(why, self.slice(rng)))
        base = _unwrap(next(iter(cur.get_children())))
        while base.kind == K.ARRAY_SUBSCRIPT_EXPR:
            base = _unwrap(next(iter(base.get_children())))
        indices = tuple(self.expr(i) for i in use.indices) or (ir.IntLit(0, rng),)
        column = ir.IntLit(view.columns[use.field], rng)
        return ir.Subscript(use.param, (*indices, column), rng, self.range(base), use.field)

    def _address_of(self, cur: ci.Cursor) -> ir.Expr | None:
        """``&a[i]`` (or ``&x``) as ``Unary("&", a[i])``, a pointer ``p`` as ``&p[0]``, else None."""
        cur = _unwrap(cur)
        children = list(cur.get_children())
        if cur.kind == K.DECL_REF_EXPR and cur.type.kind == T.POINTER:
            rng = self.range(cur)
            return ir.Unary("&", ir.Subscript(self.name(cur), (ir.IntLit(0, rng),), rng, rng), rng)
        if cur.kind != K.UNARY_OPERATOR or unary_operator(cur) != "&" or len(children) != 1:
            return None
        element = self.expr(children[0])
        if not isinstance(element, ir.Subscript | ir.Var):
            return None
        return ir.Unary("&", element, self.range(cur))

    def subscript(self, cur: ci.Cursor, rng: SourceRange) -> ir.Expr:
        indices: list[ir.Expr] = []
        node = cur
        while node.kind == K.ARRAY_SUBSCRIPT_EXPR:
            base, index = node.get_children()
            indices.append(self.expr(index))
            node = _unwrap(base)
        indices.reverse()
        alias = self._alias(node)
        if alias is not None and len(indices) == 1:
            return alias.element(indices[0], rng, self.range(node))
        if node.kind == K.DECL_REF_EXPR and is_global(node):
            self._use_global(node.referenced)
        if node.kind == K.DECL_REF_EXPR:
            return ir.Subscript(self.name(node), tuple(indices), rng, self.range(node))
        if node.kind == K.MEMBER_REF_EXPR:  # `p->x[i]`, `s.a[i][j]`: an array or pointer field
            field = self.member(node, self.range(node))
            if isinstance(field, ir.OpaqueExpr):
                return field
        return self.opaque(
            cur,
            "PointerArithmetic",
            f"the array base `{self.slice(self.range(node))}` is not a named array or pointer",
        )

    def unary(self, cur: ci.Cursor, rng: SourceRange) -> ir.Expr:
        op = unary_operator(cur)
        children = list(cur.get_children())
        if op in ("-", "+", "!", "~") and children:
            return ir.Unary(op, self.expr(children[0]), rng)
        if op == "*" and children and _unwrap(children[0]).kind == K.DECL_REF_EXPR:  # `*out` is `out[0]`
            base = _unwrap(children[0])
            alias = self._alias(base)
            if alias is not None:
                return alias.element(ir.IntLit(0, rng), rng, self.range(base))
            return ir.Subscript(self.name(base), (ir.IntLit(0, rng),), rng, self.range(base))
        if op == "*":
            return self.opaque(cur, "PointerArithmetic", "a pointer dereference (`*p`)")
        if op == "&":
            found = self.opaque(cur, "PointerArithmetic", "taking an address (`&x`)")
            operand = _unwrap(children[0]) if children else None
            if not found.text and operand is not None and operand.kind == K.DECL_REF_EXPR:
                # written by a macro (`HX_CHECK(cudaMalloc(&p, n))`): its text is not in the file
                return replace(found, text=f"&{operand.spelling}")
            return found
        if op in ("++", "--", "post++", "post--"):
            return self.opaque(cur, "SideEffect", f"`{op.replace('post', '')}` inside an expression")
        val = evaluate(cur)
        if isinstance(val, int):  # sizeof, alignof
            return ir.IntLit(val, rng)
        return self.opaque(cur, "UnsupportedExpression", f"the operator `{op}` is not supported")

    def name(self, cur: ci.Cursor) -> str:
        """The IR's name of the variable that the declaration or reference `cur` names: its
        spelling, or a name of its own where it shadows an outer one (`shadowing.py`)."""
        decl = cur.referenced if cur.kind == K.DECL_REF_EXPR else cur
        return self._renamed.get(decl.hash, cur.spelling) if self._renamed and decl is not None else cur.spelling

    def _ref_name(self, cur: ci.Cursor) -> str | None:
        cur = _unwrap(cur)
        return self.name(cur) if cur.kind == K.DECL_REF_EXPR else None

    def _alias(self, ref: ci.Cursor) -> pointers.Alias | None:
        if ref.kind != K.DECL_REF_EXPR or ref.referenced is None:
            return None
        return self._aliases.get(ref.referenced.hash)

    def _use_global(self, decl: ci.Cursor) -> None:
        """Record that the function uses the file-scope variable `decl`, when it holds numbers: an
        input of every call (`ir.Function.globals`), modeled like a parameter."""
        if decl.spelling in self._globals:
            return
        found = global_inputs.global_input(decl, self.param(decl))
        if found is not None:
            self._globals[decl.spelling] = found

    def opaque(self, cur: ci.Cursor, reason: str, message: str) -> ir.OpaqueExpr:
        rng = self.range(cur)
        return ir.OpaqueExpr(reason, message, self.slice(rng), rng)

    # ------------------------------------------------------------------------------ ranges

    def range(self, cur: ci.Cursor) -> SourceRange:
        return source_range(cur.extent, self.path)

    def name_range(self, cur: ci.Cursor) -> SourceRange:
        loc = cur.location
        file = loc.file.name if loc.file else self.path
        return SourceRange(file, loc.line, loc.column, loc.line, loc.column + len(cur.spelling))

    def range_of_tokens(self, cur: ci.Cursor, count: int) -> SourceRange:
        toks = list(cur.get_tokens())[:count]
        if not toks:
            return self.range(cur)
        start, end = toks[0].extent.start, toks[-1].extent.end
        return SourceRange(self.path, start.line, start.column, end.line, end.column)

    def _header_range(self, cur: ci.Cursor, body: ci.Cursor) -> SourceRange:
        """From the loop keyword to the closing parenthesis (or to the body's start)."""
        start = cur.extent.start
        end_line, end_col = body.extent.start.line, body.extent.start.column
        if cur.kind == K.DO_STMT:
            end_line, end_col = start.line, start.column + 2
        else:
            depth = 0
            for tok in cur.get_tokens():
                if tok.spelling == "(":
                    depth += 1
                elif tok.spelling == ")":
                    depth -= 1
                    if depth == 0:
                        end_line, end_col = tok.extent.end.line, tok.extent.end.column
                        break
        return SourceRange(self.path, start.line, start.column, end_line, end_col)

    def slice(self, rng: SourceRange) -> str:
        """The source text of `rng` in the main file ("" for other files)."""
        if rng.file != self.path or rng.line < 1 or rng.end_line > len(self._line_offsets):
            return ""
        a = self._line_offsets[rng.line - 1] + rng.col - 1
        b = self._line_offsets[rng.end_line - 1] + rng.end_col - 1
        return self.text[a:b]


def _one_statement(cur: ci.Cursor) -> ci.Cursor | None:
    """The statement an attributed statement wraps (clang's ``AttributedStmt``: a loop hint such
    as ``#pragma unroll`` before a ``for``), or None."""
    children = list(cur.get_children())
    inner = [c for c in children if c.kind.is_statement()]
    return inner[0] if len(inner) == 1 and len(children) == 1 and inner[0].kind == K.FOR_STMT else None


def _line_offsets(text: str) -> list[int]:
    offsets = [0]
    end = text.find("\n")
    while end >= 0:  # str.find, not a loop over characters: this runs on every parse (the editor's)
        offsets.append(end + 1)
        end = text.find("\n", end + 1)
    return offsets


def _ref_name(cur: ci.Cursor) -> str | None:
    cur = _unwrap(cur)
    return cur.spelling if cur.kind == K.DECL_REF_EXPR else None


def _implicitly_declared(call: ci.Cursor) -> bool:
    """Whether the function `call` calls is declared only by the call itself (C89's implicit
    declaration: clang makes an ``int f()`` declaration that has no extent in any file)."""
    ref = call.referenced
    if ref is None or ref.kind != K.FUNCTION_DECL or ref.type.kind != T.FUNCTIONNOPROTO:
        return False
    return ref.extent.start.file is None and ref.get_definition() is None


def _opaque_reason(e: ir.Expr) -> str:
    return e.reason if isinstance(e, ir.OpaqueExpr) else "UnsupportedStatement"


def _statement_macro(cur: ci.Cursor) -> bool:
    """Whether the ``do`` loop `cur` is ``do { ... } while (0)`` (a macro written as one
    statement: ``HX_CHECK(call)``) whose body neither breaks nor continues it: then it is its body."""
    body, cond = list(cur.get_children())
    return evaluate(cond) == 0 and not _exits(body)


def _exits(cur: ci.Cursor, jumps: tuple[ci.CursorKind, ...] = (K.BREAK_STMT, K.CONTINUE_STMT)) -> bool:
    """Whether `cur` holds a ``break`` or ``continue`` (`jumps`) of the loop around it."""
    if cur.kind in jumps:
        return True
    if cur.kind in (K.FOR_STMT, K.WHILE_STMT, K.DO_STMT):
        return False
    inner = (K.CONTINUE_STMT,) if cur.kind == K.SWITCH_STMT else jumps  # a `break` there is the switch's
    return any(_exits(c, inner) for c in cur.get_children())
