"""Lowering libclang cursors to the loop IR (`ir.py`).

Anything the IR does not model becomes an opaque node with a stable reason name, so that SCoP
detection can say exactly what stopped it and where.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import clang.cindex as ci

from core_compiler.frontend import ir, pointers
from core_compiler.frontend.clang_parse import (
    binary_operator,
    evaluate,
    source_range,
    unary_operator,
)
from core_compiler.frontend.clang_parse import unwrap as _unwrap
from core_compiler.source import SourceRange

K = ci.CursorKind
T = ci.TypeKind

_CUDA_BUILTINS = {"threadIdx", "blockIdx", "blockDim", "gridDim"}
_COMPOUND_OPS = {"+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^="}
_FLOAT_KINDS = {T.FLOAT, T.DOUBLE, T.LONGDOUBLE, T.HALF}
# How deep helpers calling helpers are inlined; a recursive helper stops here and stays a call.
_INLINE_DEPTH = 4
# Inlining copies an argument once per use of its parameter: nested calls (`max3(max3(...), ...)`)
# grow geometrically, so a call whose inlined expression would be larger than this stays a call.
_INLINE_NODES = 1000


class Lowerer:
    """Lowers the functions of one translation unit. `path` is the main file's name."""

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.text = text
        self._line_offsets = _line_offsets(text)
        self._inline_depth = 0
        self._aliases: dict[int, pointers.Alias] = {}  # local pointers into arrays, by declaration
        self._aliasable: frozenset[int] | None = None  # in the function being lowered, when needed
        self._body: ci.Cursor | None = None
        self._notes: list[ir.Note] = []
        self._globals: dict[str, ir.Param] = {}  # the file-scope variables the function uses

    # ------------------------------------------------------------------------------ entry

    def functions(self, tu: ci.TranslationUnit) -> list[ir.Function]:
        out = []
        for cur in tu.cursor.get_children():
            if cur.kind not in (K.FUNCTION_DECL, K.FUNCTION_TEMPLATE) or not cur.is_definition():
                continue
            if not cur.location.file or cur.location.file.name != self.path:
                continue
            out.append(self.function(cur))
        return out

    def function(self, cur: ci.Cursor) -> ir.Function:
        params = tuple(self.param(p) for p in cur.get_children() if p.kind == K.PARM_DECL)
        body_cur = next((c for c in cur.get_children() if c.kind == K.COMPOUND_STMT), None)
        self._aliases, self._aliasable, self._body, self._notes, self._globals = {}, None, body_cur, [], {}
        body = self.guards_as_conditions(self.block(body_cur)) if body_cur is not None else ()
        is_kernel = any(c.kind == K.CUDAGLOBAL_ATTR for c in cur.get_children())
        rng = self.range(cur)
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
        )

    def param(self, cur: ci.Cursor) -> ir.Param:
        typ = cur.type
        return ir.Param(
            cur.spelling, self.type(typ, cur), self.range(cur), _is_restrict(typ), _has_volatile_elements(typ)
        )

    # ------------------------------------------------------------------------------ types

    def type(self, typ: ci.Type, decl: ci.Cursor | None) -> ir.CType:
        """Lower a declared type; `decl` supplies the size expressions of VLA dimensions."""
        sizes = list(reversed(self._size_exprs(decl))) if decl is not None else []
        return self._type(typ, sizes)

    def _type(self, typ: ci.Type, sizes: list[ir.Expr]) -> ir.CType:
        kind = typ.kind
        if kind in (T.CONSTANTARRAY, T.VARIABLEARRAY, T.INCOMPLETEARRAY):
            dims: list[ir.Expr | None] = []
            while typ.kind in (T.CONSTANTARRAY, T.VARIABLEARRAY, T.INCOMPLETEARRAY):
                if typ.kind == T.INCOMPLETEARRAY:
                    dims.append(None)
                elif typ.kind == T.CONSTANTARRAY:
                    if sizes:
                        sizes.pop(0)
                    dims.append(ir.IntLit(typ.element_count, _NO_RANGE))
                else:
                    dims.append(sizes.pop(0) if sizes else None)
                typ = typ.element_type
            return ir.Array(self._type(typ, sizes), tuple(dims))
        if kind == T.POINTER:
            return ir.Pointer(self._type(typ.get_pointee(), sizes))
        if kind in (T.ELABORATED, T.TYPEDEF, T.UNEXPOSED, T.AUTO):
            canon = typ.get_canonical()
            if canon.kind != kind:
                return self._type(canon, sizes)
        if _is_arithmetic(typ):
            return ir.Scalar(_scalar_name(typ))
        return ir.OtherType(typ.spelling)

    def _size_exprs(self, decl: ci.Cursor) -> list[ir.Expr]:
        """Array size expressions written in a declaration, innermost first (libclang's order)."""
        out = []
        for child in decl.get_children():
            if child.kind.is_expression() and not _is_initializer(decl, child):
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
        """``i = 0; while (i < n) { ...; i++; }`` as ``for (i = 0; i < n; i++) { ... }`` when `before`
        sets the counter, the condition reads it, the body ends by stepping it by a constant and
        changes it nowhere else, and no ``continue`` skips the step."""
        cond_c, body_c = cur.get_children()
        typ: ir.CType | None
        if isinstance(before, ir.Decl):
            name, typ, init = before.name, before.type, before.init
        elif isinstance(before, ir.Assign) and before.op == "=" and isinstance(before.target, ir.Var):
            name, typ, init = before.target.name, before.target.type, before.value
        else:
            return None
        if init is None or not isinstance(typ, ir.Scalar) or not typ.is_integer:
            return None
        notes = len(self._notes)
        body = self.body(body_c)
        cond = self.expr(cond_c)
        step = _constant_step(body[-1], name) if body else None
        reads = any(_is_var(e, name) for e in ir.walk_expr(cond))
        if step is None or not reads or name in _changed(body[:-1]) or _continues(body):
            del self._notes[notes:]  # the body is lowered again as the `while` loop's
            return None
        rng, header = self.range(cur), self._header_range(cur, body_c)
        first = str(init)[1:-1] if isinstance(init, ir.Binary) else str(init)
        message = f"this `while` loop counts `{name}` from `{first}` by {step}: hexplore reads it as a `for` loop"
        self._notes.append(ir.Note("WhileAsFor", message, header))
        whole = SourceRange(rng.file, before.range.line, before.range.col, rng.end_line, rng.end_col)
        return ir.For(name, init, cond, step, body[:-1], whole, header, declares_var=False)

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
            if setting is None or not self.pointer_alias(*setting, rng):
                yield from self.assignment_chain(cur)
        else:
            word = kind.name.lower().replace("_stmt", "")
            nested = [c for c in cur.get_children() if c.kind.is_statement()]
            body = tuple(s for c in nested for s in self.stmt(c))
            yield ir.OpaqueStmt(
                "UnsupportedStatement", f"a `{word}` statement is not supported", rng, body
            )

    def guards_as_conditions(self, body: tuple[ir.Stmt, ...]) -> tuple[ir.Stmt, ...]:
        """A function body with ``if (n <= 0) return;`` followed by the rest made into ``if (!(n <= 0))
        { rest }``, the same thing for a ``void`` function, in the shape SCoP detection models: the
        loops after the guard become a nest with the guard's condition on their iterations. NULL
        checks of pointers (``a == NULL``, ``!a``) are taken as false, with a note."""
        for k, s in enumerate(body):
            if isinstance(s, ir.If) and not s.other and k + 1 < len(body) and _is_bare_return(s.then):
                rest = self.guards_as_conditions(body[k + 1 :])
                cond = self._without_null_checks(s.cond)
                if cond is None:
                    return (*body[:k], *rest)
                end = rest[-1].range
                rng = SourceRange(s.range.file, s.range.line, s.range.col, end.end_line, end.end_col)
                return (*body[:k], ir.If(ir.Unary("!", cond, cond.range), rest, (), rng))
        return body

    def _without_null_checks(self, cond: ir.Expr) -> ir.Expr | None:
        """`cond` without its ``||``-ed NULL checks (None when nothing else is left)."""
        if isinstance(cond, ir.Binary) and cond.op == "||":
            lhs, rhs = self._without_null_checks(cond.lhs), self._without_null_checks(cond.rhs)
            return rhs if lhs is None else lhs if rhs is None else replace(cond, lhs=lhs, rhs=rhs)
        name = _null_checked(cond)
        if name is None:
            return cond
        message = f"assuming `{name}` is not NULL: hexplore models the loops for when the arrays exist"
        self._notes.append(ir.Note("NotNullAssumption", message, cond.range))
        return None

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
        typ, rank = self._type(ref.referenced.type, []), 0
        while True:
            if isinstance(typ, ir.Array):
                rank, typ = rank + len(typ.dims), typ.elem
            elif isinstance(typ, ir.Pointer):
                rank, typ = rank + 1, typ.pointee
            else:
                return rank

    def decl(self, cur: ci.Cursor) -> ir.Decl:
        if cur.type.kind == T.CONSTANTARRAY and _is_const(cur.type):
            self._use_global(cur)  # a `const` table is an input like a global one
        init = next((c for c in cur.get_children() if _is_initializer(cur, c)), None)
        init_ir = self.expr(init) if init is not None else None
        return ir.Decl(cur.spelling, self.type(cur.type, cur), init_ir, self.range(cur))

    def assignment_chain(self, cur: ci.Cursor) -> Iterator[ir.Stmt]:
        """``a1 = a2 = k;`` as ``a2 = k; a1 = a2;`` (C assigns right to left, and ``a1`` gets the
        value ``a2`` holds after its assignment); any other expression statement as it is."""
        node = _unwrap(cur)
        if node.kind == K.BINARY_OPERATOR and binary_operator(node) == "=":
            lhs, rhs = node.get_children()
            inner = _unwrap(rhs)
            target = self.expr(lhs)
            chained = inner.kind == K.BINARY_OPERATOR and binary_operator(inner) == "="
            if chained and isinstance(target, ir.Var | ir.Subscript) and not _is_global_scalar(lhs):
                yield from self.assignment_chain(inner)
                yield ir.Assign(target, "=", self.expr(next(inner.get_children())), self.range(node))
                return
        yield self.expr_stmt(cur)

    def expr_stmt(self, cur: ci.Cursor) -> ir.Stmt:
        cur = _unwrap(cur)
        rng = self.range(cur)
        kind = cur.kind
        if kind in (K.BINARY_OPERATOR, K.COMPOUND_ASSIGNMENT_OPERATOR):
            op = binary_operator(cur)
            if op == "=" or op in _COMPOUND_OPS:
                lhs, rhs = cur.get_children()
                target = self.expr(lhs)
                if _is_global_scalar(lhs):
                    return _global_write(target)
                if isinstance(target, ir.Var | ir.Subscript):
                    return ir.Assign(target, op, self.expr(rhs), rng)
                why = target.message if isinstance(target, ir.OpaqueExpr) else "an unsupported target"
                message = f"the assignment to `{target}` goes through {why}"
                return ir.OpaqueStmt(_opaque_reason(target), message, target.range)
        if kind == K.UNARY_OPERATOR:
            op = unary_operator(cur)
            if op in ("++", "--", "post++", "post--"):
                operand = next(cur.get_children())
                target = self.expr(operand)
                if _is_global_scalar(operand):
                    return _global_write(target)
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

        def other(message: str) -> ir.OtherLoop:
            return ir.OtherLoop("for", "NonCanonicalLoop", message, body, rng, header)

        if init_c is None or cond_c is None or inc_c is None:
            return other("this `for` loop lacks an initialization, a condition or an increment")
        var, init, declares = self._for_init(init_c)
        if var is None or init is None:
            return other("the loop initialization is not `i = expression` for one integer `i`")
        step = self._for_step(inc_c, var)
        if step is None:
            return other(
                f"the loop increment does not add a constant to `{var}` (write `{var}++`, "
                f"`{var}--` or `{var} += c`)"
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
            if len(decls) != 1 or not _is_integer(decls[0].type):
                return (None, None, True)
            init = next((c for c in decls[0].get_children() if c.kind.is_expression()), None)
            return (decls[0].spelling, self.expr(init) if init else None, True)
        init_c = _unwrap(init_c)
        if init_c.kind == K.BINARY_OPERATOR and binary_operator(init_c) == "=":
            lhs, rhs = init_c.get_children()
            lhs = _unwrap(lhs)
            if lhs.kind == K.DECL_REF_EXPR and _is_integer(lhs.type):
                return (lhs.spelling, self.expr(rhs), False)
        return (None, None, False)

    def _for_step(self, inc_c: ci.Cursor, var: str) -> int | None:
        inc_c = _unwrap(inc_c)
        children = list(inc_c.get_children())
        if not children or _ref_name(children[0]) != var:
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
                if rhs.op == "+" and isinstance(rhs.lhs, ir.IntLit) and _is_var(rhs.rhs, var):
                    return rhs.lhs.value or None
        return None

    # ------------------------------------------------------------------------------ expressions

    def expr(self, cur: ci.Cursor) -> ir.Expr:
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
            if _is_global(cur):
                self._use_global(cur.referenced)
            return ir.Var(cur.spelling, rng, self._type(cur.type, []))
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
            return self.opaque(cur, "UnsupportedExpression", "a struct member access")
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
        inlined = self.inline(cur, arg_curs, args, rng)
        return inlined if inlined is not None else ir.Call(cur.spelling, args, rng)

    def inline(
        self, cur: ci.Cursor, arg_curs: list[ci.Cursor], args: tuple[ir.Expr, ...], rng: SourceRange
    ) -> ir.Expr | None:
        """The call of a small pure helper (``static inline int idx(int i, int j, int n) { return
        i * n + j; }``) as its returned expression with the arguments in place of the parameters,
        so that a loop nest calling it can still be modeled. None (the call stays a call, which SCoP
        detection refuses) unless the helper only computes with its scalar parameters.

        Every node of the helper's body gets the call's range: remarks point at the call site."""
        found = _inlinable(cur)
        if found is None or self._inline_depth >= _INLINE_DEPTH or not all(map(_is_pure, args)):
            return None
        defn, params, returned = found
        if len(params) != len(args):
            return None
        self._inline_depth += 1
        try:
            body = self.expr(returned)
        finally:
            self._inline_depth -= 1
        names = {p.spelling for p in params}
        if not _is_pure(body) or not _reads_only(body, names):
            return None
        subst = {
            p.spelling: self._converted(arg, _unwrap(a).type, p.type, arg.range)
            for p, a, arg in zip(params, arg_curs, args, strict=True)
        }
        out = self._converted(_at_call(body, subst, rng), _unwrap(returned).type, defn.result_type, rng)
        return out if sum(1 for _ in ir.walk_expr(out)) <= _INLINE_NODES else None

    def _converted(self, e: ir.Expr, have: ci.Type, want: ci.Type, rng: SourceRange) -> ir.Expr:
        """`e` (of C type `have`) converted to `want` as C converts an argument to its parameter's
        type and a returned value to the function's: an explicit cast where the types differ."""
        target = self._type(want, [])
        return e if self._type(have, []) == target else ir.Cast(target, e, rng)

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
        if node.kind == K.DECL_REF_EXPR and _is_global(node):
            self._use_global(node.referenced)
        if node.kind == K.DECL_REF_EXPR:
            return ir.Subscript(node.spelling, tuple(indices), rng, self.range(node))
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
            return ir.Subscript(base.spelling, (ir.IntLit(0, rng),), rng, self.range(base))
        if op == "*":
            return self.opaque(cur, "PointerArithmetic", "a pointer dereference (`*p`)")
        if op == "&":
            return self.opaque(cur, "PointerArithmetic", "taking an address (`&x`)")
        if op in ("++", "--", "post++", "post--"):
            return self.opaque(cur, "SideEffect", f"`{op.replace('post', '')}` inside an expression")
        val = evaluate(cur)
        if isinstance(val, int):  # sizeof, alignof
            return ir.IntLit(val, rng)
        return self.opaque(cur, "UnsupportedExpression", f"the operator `{op}` is not supported")

    def _alias(self, ref: ci.Cursor) -> pointers.Alias | None:
        if ref.kind != K.DECL_REF_EXPR or ref.referenced is None:
            return None
        return self._aliases.get(ref.referenced.hash)

    def _use_global(self, decl: ci.Cursor) -> None:
        """Record that the function uses the file-scope variable `decl`, when it holds numbers: an
        input of every call (`ir.Function.globals`), modeled like a parameter."""
        if decl.spelling in self._globals:
            return
        param = self.param(decl)
        if not _numeric(param.type):
            return
        constant = _is_const(decl.type)
        init = next((c for c in decl.get_children() if _is_initializer(decl, c)), None)
        values = _table(init, decl.type) if constant and init is not None else None
        self._globals[decl.spelling] = replace(param, constant=constant, values=values)

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


_NO_RANGE = SourceRange("<builtin>", 0, 0, 0, 0)


def _null_checked(e: ir.Expr) -> str | None:
    """The pointer `e` checks for NULL: ``p == NULL``, ``NULL == p``, ``p == 0``, ``!p``."""
    if isinstance(e, ir.Unary) and e.op == "!":
        return _pointer_name(e.operand)
    if isinstance(e, ir.Binary) and e.op == "==":
        for p, z in ((e.lhs, e.rhs), (e.rhs, e.lhs)):
            if _pointer_name(p) is not None and _is_null(z):
                return _pointer_name(p)
    return None


def _pointer_name(e: ir.Expr) -> str | None:
    return e.name if isinstance(e, ir.Var) and isinstance(e.type, ir.Pointer | ir.Array) else None


def _is_null(e: ir.Expr) -> bool:
    while isinstance(e, ir.Cast):
        e = e.operand
    return isinstance(e, ir.IntLit) and e.value == 0


def _constant_step(s: ir.Stmt, name: str) -> int | None:
    """The constant `s` adds to `name`: ``i++``, ``i += 2``, ``i -= 1``, ``i = i + 4``."""
    if not isinstance(s, ir.Assign) or not _is_var(s.target, name):
        return None
    value, op = s.value, s.op
    if op == "=" and isinstance(s.value, ir.Binary) and s.value.op in ("+", "-") and _is_var(s.value.lhs, name):
        value, op = s.value.rhs, s.value.op + "="
    if op in ("+=", "-=") and isinstance(value, ir.IntLit) and value.value != 0:
        return value.value if op == "+=" else -value.value
    return None


def _changed(stmts: tuple[ir.Stmt, ...]) -> set[str]:
    """The variables `stmts` assign or declare, loop counters included."""
    out: set[str] = set()
    for s in stmts:
        if isinstance(s, ir.Assign) and isinstance(s.target, ir.Var):
            out.add(s.target.name)
        elif isinstance(s, ir.Decl):
            out.add(s.name)
        elif isinstance(s, ir.For):
            out.add(s.var)
        out |= _changed(ir.sub_statements(s))
    return out


def _continues(stmts: tuple[ir.Stmt, ...]) -> bool:
    """Whether a ``continue`` of this loop (not of a loop inside it) is among `stmts`."""
    for s in stmts:
        if isinstance(s, ir.Jump) and s.kind == "continue":
            return True
        if isinstance(s, ir.If | ir.OpaqueStmt) and _continues(ir.sub_statements(s)):
            return True
    return False


def _is_bare_return(stmts: tuple[ir.Stmt, ...]) -> bool:
    return len(stmts) == 1 and isinstance(stmts[0], ir.Jump) and stmts[0].kind == "return" and stmts[0].value is None


def _line_offsets(text: str) -> list[int]:
    offsets = [0]
    for i, ch in enumerate(text):
        if ch == "\n":
            offsets.append(i + 1)
    return offsets


def returned_expression(defn: ci.Cursor) -> ci.Cursor | None:
    """The expression of a function definition whose body is exactly ``{ return <expr>; }``."""
    body = [c for c in defn.get_children() if c.kind == K.COMPOUND_STMT]
    stmts = list(body[0].get_children()) if len(body) == 1 else []
    if len(stmts) != 1 or stmts[0].kind != K.RETURN_STMT:
        return None
    value = list(stmts[0].get_children())
    return value[0] if len(value) == 1 else None


def _inlinable(call: ci.Cursor) -> tuple[ci.Cursor, list[ci.Cursor], ci.Cursor] | None:
    """The callee's definition, parameters and returned expression, when the definition is in the
    translation unit, is a single ``return`` and takes and returns arithmetic values only."""
    ref = call.referenced
    defn = ref.get_definition() if ref is not None and ref.kind == K.FUNCTION_DECL else None
    if defn is None or defn.type.kind != T.FUNCTIONPROTO or defn.type.is_function_variadic():
        return None
    returned = returned_expression(defn)
    params = [c for c in defn.get_children() if c.kind == K.PARM_DECL]
    scalar = all(_is_arithmetic(p.type) for p in params) and _is_arithmetic(defn.result_type)
    return (defn, params, returned) if returned is not None and scalar else None


def _is_pure(e: ir.Expr) -> bool:
    """No side effect and nothing the IR cannot see: inlining may drop or repeat an argument."""
    return not any(
        isinstance(x, ir.OpaqueExpr) or (isinstance(x, ir.Call) and x.name not in ir.PURE_MATH)
        for x in ir.walk_expr(e)
    )


def _reads_only(e: ir.Expr, params: set[str]) -> bool:
    """Whether `e` reads nothing but `params`: a helper reading globals or memory is not inlined."""
    return not any(
        isinstance(x, ir.Subscript) or (isinstance(x, ir.Var) and x.name not in params)
        for x in ir.walk_expr(e)
    )


def _at_call(e: ir.Expr, args: dict[str, ir.Expr], rng: SourceRange) -> ir.Expr:
    """A helper's returned expression `e` at a call: parameters replaced by `args`, every other node
    given the call's range `rng`."""
    if isinstance(e, ir.Var) and e.name in args:
        return args[e.name]
    e = ir.with_sub_expressions(e, tuple(_at_call(x, args, rng) for x in ir.sub_expressions(e)))
    return replace(e, range=rng, base_range=rng) if isinstance(e, ir.Subscript) else replace(e, range=rng)


def _is_global(ref: ci.Cursor) -> bool:
    decl = ref.referenced
    return decl is not None and decl.kind == K.VAR_DECL and decl.semantic_parent.kind == K.TRANSLATION_UNIT


def _table(init: ci.Cursor, typ: ci.Type) -> tuple[int | float, ...] | None:
    """The values of array type `typ` that the initializer `init` gives, flat, in C's order (what a
    brace list leaves out is 0); None where an element is not a constant (designators, strings,
    braces left out)."""
    if typ.kind != T.CONSTANTARRAY:
        value = evaluate(init)
        return None if value is None else (value,)
    count, elem = typ.element_count, typ.element_type
    init = _unwrap(init)
    if init.kind != K.INIT_LIST_EXPR:
        return None
    out: list[int | float] = []
    items = list(init.get_children())
    if len(items) > count:
        return None
    for item in items:
        part = _table(item, elem)
        if part is None:
            return None
        out += part
    return (*out, *(0,) * ((count - len(items)) * _flat_count(elem)))


def _is_const(typ: ci.Type) -> bool:
    """A `const` variable, or an array of `const` elements."""
    while typ.kind == T.CONSTANTARRAY:
        typ = typ.element_type
    return bool(typ.is_const_qualified())


def _numeric(typ: ir.CType) -> bool:
    """A number, or an array of (pointer to) numbers: what a global may be to be an input."""
    while isinstance(typ, ir.Array | ir.Pointer):
        typ = typ.elem if isinstance(typ, ir.Array) else typ.pointee
    return isinstance(typ, ir.Scalar)


def _flat_count(typ: ci.Type) -> int:
    n = 1
    while typ.kind == T.CONSTANTARRAY:
        n, typ = n * typ.element_count, typ.element_type
    return n


def _is_global_scalar(cur: ci.Cursor) -> bool:
    cur = _unwrap(cur)
    return cur.kind == K.DECL_REF_EXPR and _is_global(cur) and cur.type.kind not in (T.CONSTANTARRAY, T.INCOMPLETEARRAY, T.POINTER)


def _global_write(target: ir.Expr) -> ir.OpaqueStmt:
    message = (
        f"this writes the global variable `{target}`; hexplore models globals the function only "
        "reads, and global arrays (keep the value in a local variable, or return it)"
    )
    return ir.OpaqueStmt("GlobalScalar", message, target.range)


def _ref_name(cur: ci.Cursor) -> str | None:
    cur = _unwrap(cur)
    return cur.spelling if cur.kind == K.DECL_REF_EXPR else None


def _is_var(e: ir.Expr, name: str) -> bool:
    return isinstance(e, ir.Var) and e.name == name


def _is_initializer(decl: ci.Cursor, child: ci.Cursor) -> bool:
    """Whether `child` of a VAR_DECL/PARM_DECL is its initializer rather than an array size."""
    if not child.kind.is_expression():
        return False
    eq = None
    for tok in decl.get_tokens():
        if tok.spelling == "=":
            eq = tok.extent.start.offset
            break
    return eq is not None and child.extent.start.offset > eq


def _is_arithmetic(typ: ci.Type) -> bool:
    canon = typ.get_canonical().kind
    return T.BOOL.value <= canon.value <= T.LONGDOUBLE.value or canon in _FLOAT_KINDS


def _is_integer(typ: ci.Type) -> bool:
    canon = typ.get_canonical().kind
    return T.BOOL.value <= canon.value <= T.INT128.value


def _scalar_name(typ: ci.Type) -> str:
    name = typ.get_canonical().spelling
    for q in ("const ", "volatile ", "restrict ", "__restrict "):
        name = name.replace(q, "")
    return name.strip()


def _has_volatile_elements(typ: ci.Type) -> bool:
    """``volatile double *a``, ``_Atomic int a[n]``: elements whose every access must happen as written."""
    while typ.kind in (T.POINTER, T.CONSTANTARRAY, T.VARIABLEARRAY, T.INCOMPLETEARRAY):
        typ = typ.get_pointee() if typ.kind == T.POINTER else typ.element_type
    return typ.is_volatile_qualified() or "_Atomic" in typ.spelling


def _is_restrict(typ: ci.Type) -> bool:
    return typ.is_restrict_qualified() or "restrict" in typ.spelling


def _opaque_reason(e: ir.Expr) -> str:
    return e.reason if isinstance(e, ir.OpaqueExpr) else "UnsupportedStatement"
