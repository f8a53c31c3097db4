"""Statement instances as LLVM IR: the source assignment, typed as C types it, with every array
access an address in a flat, row-major buffer.

Addresses follow the ``"flat"`` layout of `codegen/statements.py`: ``A[i][j]`` of a ``double
A[n][m]`` is element ``i * m + j`` of the buffer ``A``; scalars written in the nest are one-element
buffers; local scalars expanded over their loops are buffers indexed from the lower bound of what
is accessed. Index arithmetic is in the index type (``i64`` on the CPU), like the isl AST's.

`Scope` is what a statement can see: integer names (parameters under their C and isl names, AST
iterators, GPU ids), read-only floating scalars, and array base pointers.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

import islpy as isl
import llvmlite.ir as ir

from core_compiler.codegen.statements import ArrayLayout, array_layouts
from core_compiler.errors import UnsupportedExpression
from core_compiler.frontend import ir as cir
from core_compiler.llvm import c_types as ct
from core_compiler.llvm.c_types import CValue
from core_compiler.llvm.isl_expr import lower_expr
from core_compiler.llvm.math_calls import MathLibrary, declare
from core_compiler.scop.affine import Affine, Atom, isl_name, term_pw_aff
from core_compiler.scop.dependences import reduction_op
from core_compiler.scop.model import Scop, Statement
from core_compiler.scop.region import AccessInfo, opaque_callable

Redirect = Callable[[ir.IRBuilder, list[ir.Value]], ir.Value]


@dataclass(frozen=True)
class Scope:
    ints: Mapping[str, ir.Value]  # index-typed: parameters, AST iterators, h*, b*, t*, o*
    scalars: Mapping[str, CValue] = field(default_factory=dict)  # read-only scalars
    arrays: Mapping[str, ir.Value] = field(default_factory=dict)  # base pointers
    # array -> the address of an element (source subscripts) in a local copy: shared, registers
    redirect: Mapping[str, Redirect] = field(default_factory=dict)
    # (statement, AccessInfo) -> the stack slot standing for the loop-invariant element it reaches
    promoted: Mapping[tuple[str, AccessInfo], ir.Value] = field(default_factory=dict)

    def with_int(self, name: str, value: ir.Value) -> Scope:
        return replace(self, ints={**self.ints, name: value})


class StatementLowering:
    """Lowers statement instances of one SCoP; holds what does not change between instances."""

    def __init__(self, scop: Scop, math: MathLibrary, ity: ir.IntType) -> None:
        self.scop = scop
        self.math = math
        self.ity = ity
        self.layouts: dict[str, ArrayLayout] = array_layouts(scop)
        self.accesses: dict[str, dict[object, AccessInfo]] = {
            s.name: {a.info.node: a.info for a in (*s.reads, *s.writes)} for s in scop.statements
        }
        self._atoms: dict[Atom, tuple[isl.AstExpr, tuple[str, ...]]] = {}

    def assign(self, b: ir.IRBuilder, stmt: Statement, iters: Mapping[str, ir.Value], scope: Scope) -> None:
        """Emit ``target op= value`` for the instance whose iterators have the values `iters`."""
        node = stmt.info.node
        e = _Exprs(self, b, scope, iters, self.accesses[stmt.name], stmt.name)
        if isinstance(node, cir.ExprStmt):
            e.opaque_call(node.expr)
            return
        ptr, ctype = e.address(node.target)
        chain = _accumulation(node) if ct.is_float(ctype) else None
        if chain is None and node.op == "=":
            rhs = e.expr(node.value)
        else:  # `t += a*b`: the add on the loop-carried chain stays an add, not an FMA
            op, term = chain or (node.op[:-1], node.value)
            old = CValue(b.load(ptr, align=element_size(ctype), typ=ct.llvm_type(ctype)), ct.canonical(ctype))
            rhs = e.binary(op, old, e.expr(term), contract=chain is None)
        b.store(ct.convert(b, rhs, ctype).value, ptr, align=element_size(ctype))

    def reduction_update(
        self, b: ir.IRBuilder, stmt: Statement, iters: Mapping[str, ir.Value], scope: Scope
    ) -> tuple[ir.Value, CValue]:
        """For a `+=`/`-=` reduction run with atomics: the element's address and what to add."""
        node = stmt.info.assignment
        found = reduction_op(node)
        assert found is not None and found[0] == "+", f"{stmt.name} is not an addition"
        e = _Exprs(self, b, scope, iters, self.accesses[stmt.name], stmt.name)
        ptr, ctype = e.address(node.target)
        value = e.expr(found[1])
        if node.op == "-=":
            value = e.binary("-", CValue(ir.Constant(value.value.type, 0), value.ctype), value)
        return ptr, ct.convert(b, value, ctype)

    # ------------------------------------------------------------------------- addresses

    def element(self, b: ir.IRBuilder, info: AccessInfo, iters: Mapping[str, ir.Value], scope: Scope,
                stmt: str = "") -> ir.Value:  # fmt: skip
        """The address of the element `info` (of statement `stmt`) accesses: a promoted element's
        slot, a local copy when `scope` redirects the array, else the array's own."""
        slot = scope.promoted.get((stmt, info))
        if slot is not None:
            return slot
        names = {**scope.ints, **iters}
        idx = [self.affine(b, a, names) for a in info.indices]
        local = scope.redirect.get(info.array)
        return local(b, idx) if local is not None else self.element_at(b, info.array, idx, scope)

    def element_at(self, b: ir.IRBuilder, array: str, idx: list[ir.Value], scope: Scope) -> ir.Value:
        """The address of ``array[idx...]`` (source subscripts) in its flat buffer."""
        lay = self.layouts[array]
        if lay.is_scalar:
            idx = [i if lo is None else b.sub(i, self._bound(b, scope, array, "lower", d, lo))
                   for d, (i, lo) in enumerate(zip(idx, lay.lower, strict=True))]  # fmt: skip
            extents = self._local_extents(b, array, scope)
        else:
            extents = [None if e is None else self.affine(b, e, scope.ints) for e in lay.decl.extents]
        if any(e is None for e in extents[1:]):
            raise UnsupportedExpression(f"array `{array}` has an inner dimension of unknown size")
        linear = linearize(b, idx, [e for e in extents[1:] if e is not None], self.ity)
        elem = ct.llvm_type(lay.decl.elem_type)
        return b.gep(scope.arrays[array], [linear], inbounds=True, source_etype=elem)

    def element_count(self, b: ir.IRBuilder, array: str, scope: Scope) -> ir.Value:
        """The number of elements in `array`'s flat buffer."""
        lay = self.layouts[array]
        if lay.is_scalar:
            extents = self._local_extents(b, array, scope)
        else:
            extents = [None if e is None else self.affine(b, e, scope.ints) for e in lay.decl.extents]
        count: ir.Value = ir.Constant(self.ity, 1)
        for e in extents:
            if e is None:
                raise UnsupportedExpression(f"array `{array}` has a dimension of unknown size")
            count = b.mul(count, e, flags=["nsw"])
        return count

    def hoist_layouts(self, b: ir.IRBuilder, scope: Scope) -> Scope:
        """`scope` with the expanded locals' lower bounds and extents computed here, once: isl
        expressions of the sizes, up to thousands of characters each in a register-tiled kernel,
        that each access would otherwise lower again (gemm's CUDA translated for the CPU: 1.34
        million lines of IR). They are ints of the scope, so outlined loops receive them too; a
        constant or a size stays one where it is used (a constant folds there)."""
        ints = dict(scope.ints)
        for array, lay in self.layouts.items():
            if not lay.is_scalar:
                continue
            for d, (lo, e) in enumerate(zip(lay.lower, lay.extent, strict=True)):
                for kind, expr in (("lower", lo), ("extent", e)):
                    if isinstance(expr, isl.AstExpr) and expr.get_type() == isl.ast_expr_type.op:
                        ints[_hoisted(kind, array, d)] = lower_expr(b, expr, scope.ints, self.ity)
        return replace(scope, ints=ints)

    def _bound(self, b: ir.IRBuilder, scope: Scope, array: str, kind: str, d: int, e: isl.AstExpr) -> ir.Value:
        """An expanded local's lower bound or extent: its value hoisted into `scope`, else lowered here."""
        hoisted = scope.ints.get(_hoisted(kind, array, d))
        return hoisted if hoisted is not None else lower_expr(b, e, scope.ints, self.ity)

    def _local_extents(self, b: ir.IRBuilder, array: str, scope: Scope) -> list[ir.Value | None]:
        return [None if e is None or isinstance(e, str) else self._bound(b, scope, array, "extent", d, e)
                for d, e in enumerate(self.layouts[array].extent)]  # fmt: skip

    def affine(self, b: ir.IRBuilder, a: Affine, names: Mapping[str, ir.Value]) -> ir.Value:
        out: ir.Value = ir.Constant(self.ity, a.const)
        for name, coeff in a.coeffs:
            term = names[name] if isinstance(name, str) else self.atom(b, name, names)
            if coeff != 1:
                term = b.mul(ir.Constant(self.ity, coeff), term, flags=["nsw"])
            out = b.add(out, term, flags=["nsw"])
        return out

    def atom(self, b: ir.IRBuilder, atom: Atom, names: Mapping[str, ir.Value]) -> ir.Value:
        """A `FloorDiv` or `Mod` term, through isl's own AST expression for it (as loop bounds are
        lowered: ``fdiv_q``, ``pdiv_r``); a `WrapMod` as the model reads it, in pieces."""
        if atom not in self._atoms:
            variables = tuple(sorted(Affine.of({atom: 1}).variables(), key=isl_name))
            space = isl.Space.create_from_names(self.scop.ctx, set=[], params=[isl_name(v) for v in variables])
            pa = term_pw_aff(atom, space)
            build = isl.AstBuild.from_context(isl.Set.universe(pa.get_domain_space()))
            self._atoms[atom] = (build.expr_from_pw_aff(pa), variables)
        expr, variables = self._atoms[atom]
        # iterators are known by their C names, parameters by both theirs and isl's
        values = {isl_name(v): names[v] if v in names else names[isl_name(v)] for v in variables}
        return lower_expr(b, expr, values, self.ity)


def _hoisted(kind: str, array: str, d: int) -> str:
    """The scope name of an expanded local's hoisted bound, which no parameter, iterator or grid size has."""
    return f"hx.{kind}.{array}.{d}"


def _cast_pointer(b: ir.IRBuilder, v: ir.Value, t: ir.Type) -> ir.Value:
    return b.bitcast(v, t) if v.type != t and isinstance(v.type, ir.PointerType) else v


def _c_string(text: str) -> bytes:
    """The bytes of the C string literal `text` (quotes and escapes as written, adjacent literals
    joined): ``"%f\\n"`` is ``%f`` and a newline."""
    try:
        return b"".join(ast.literal_eval("[" + ",".join(_literals(text)) + "]"))
    except (SyntaxError, ValueError, IndexError) as e:
        raise UnsupportedExpression(f"the string literal {text}") from e


def _literals(text: str) -> list[str]:
    """The literals of ``"a" "b"`` as Python byte literals (C's escapes are Python's, but for
    octal and hex escapes longer than Python reads, which C format strings do not use)."""
    found, i = [], 0
    while i < len(text):
        if text[i] != '"':
            i += 1
            continue
        j = i + 1
        while text[j] != '"':
            j += 2 if text[j] == "\\" else 1
        found.append("b" + text[i : j + 1])
        i = j + 1
    return found


def linearize(b: ir.IRBuilder, idx: list[ir.Value], inner: list[ir.Value], ity: ir.IntType) -> ir.Value:
    """Row-major: ``((i0 * e1 + i1) * e2 + i2)`` for the inner extents ``e1, e2``."""
    linear = idx[0] if idx else ir.Constant(ity, 0)
    for i, ext in zip(idx[1:], inner, strict=True):
        linear = b.add(b.mul(linear, ext, flags=["nsw"]), i, flags=["nsw"])
    return linear


def element_size(ctype: str) -> int:
    """``sizeof``, which is also the alignment, of a scalar C type."""
    t = ct.llvm_type(ctype)
    return max(1, t.width // 8) if isinstance(t, ir.IntType) else (8 if ct.canonical(ctype) == "double" else 4)


@dataclass(frozen=True)
class _Exprs:
    """The expressions of one statement instance."""

    owner: StatementLowering
    b: ir.IRBuilder
    scope: Scope
    iters: Mapping[str, ir.Value]
    acc: Mapping[object, AccessInfo]
    stmt: str

    def address(self, e: cir.Expr) -> tuple[ir.Value, str]:
        info = self.acc.get(e)
        if info is None:
            raise UnsupportedExpression(f"`{e}` is not an access of the SCoP")
        decl = self.owner.layouts[info.array].decl
        return self.owner.element(self.b, info, self.iters, self.scope, self.stmt), decl.elem_type

    def expr(self, e: cir.Expr) -> CValue:
        handler = _HANDLERS.get(type(e))
        if handler is None:
            raise UnsupportedExpression(f"cannot lower `{e}`")
        return handler(self, e)

    def literal_int(self, e: cir.IntLit) -> CValue:
        ctype = "int" if -(2**31) <= e.value < 2**31 else "long"
        return CValue(ir.Constant(ct.llvm_type(ctype), e.value), ctype)

    def literal_float(self, e: cir.FloatLit) -> CValue:
        ctype = "float" if e.text.lower().endswith("f") and not e.text.lower().startswith("0x") else "double"
        return CValue(ir.Constant(ct.llvm_type(ctype), e.value), ctype)

    def var(self, e: cir.Var) -> CValue:
        if e.name in self.iters:
            return self.index_as_int(self.iters[e.name])
        if e in self.acc:
            return self.load(e)
        if e.name in self.scope.scalars:
            return self.scope.scalars[e.name]
        if e.name in self.scope.ints:
            return self.index_as_int(self.scope.ints[e.name])
        raise UnsupportedExpression(f"`{e.name}` has no value in the generated code")

    def index_as_int(self, v: ir.Value) -> CValue:
        """Loop counters and parameters are ``int`` in the source."""
        return ct.convert(self.b, CValue(v, "long" if self.owner.ity.width == 64 else "int"), "int")

    def load(self, e: cir.Expr) -> CValue:
        ptr, ctype = self.address(e)
        return CValue(self.b.load(ptr, align=element_size(ctype), typ=ct.llvm_type(ctype)), ct.canonical(ctype))

    def unary(self, e: cir.Unary) -> CValue:
        v = self.expr(e.operand)
        if e.op == "!":
            return ct.from_truth(self.b, self.b.not_(ct.truth(self.b, v)))
        v = ct.convert(self.b, v, ct.promoted(v.ctype))
        if e.op == "-":
            neg = self.b.fneg(v.value) if ct.is_float(v.ctype) else self.b.neg(v.value)
            return CValue(neg, v.ctype)
        if e.op == "~":
            return CValue(self.b.not_(v.value), v.ctype)
        return v

    def binary_node(self, e: cir.Binary) -> CValue:
        if e.op in ("&&", "||"):
            return self.logical(e)
        return self.binary(e.op, self.expr(e.lhs), self.expr(e.rhs))

    def binary(self, op: str, x: CValue, y: CValue, contract: bool = True) -> CValue:
        if op in ("<<", ">>"):
            x = ct.convert(self.b, x, ct.promoted(x.ctype))
            y = ct.convert(self.b, y, x.ctype)
            shift = self.b.shl if op == "<<" else (self.b.lshr if ct.is_unsigned(x.ctype) else self.b.ashr)
            return CValue(shift(x.value, y.value), x.ctype)
        ctype = ct.common_type(x.ctype, y.ctype)
        x, y = ct.convert(self.b, x, ctype), ct.convert(self.b, y, ctype)
        if op in _COMPARE:
            return ct.from_truth(self.b, self.compare(op, x, y))
        return CValue(_arith(self.b, op, ctype, x.value, y.value, contract), ctype)

    def compare(self, op: str, x: CValue, y: CValue) -> ir.Value:
        if ct.is_float(x.ctype):
            return self.b.fcmp_ordered(op, x.value, y.value) if op != "!=" else self.b.fcmp_unordered(op, x.value, y.value)
        cmp = self.b.icmp_unsigned if ct.is_unsigned(x.ctype) else self.b.icmp_signed
        return cmp(op, x.value, y.value)

    def logical(self, e: cir.Binary) -> CValue:
        """``&&``/``||`` short-circuit: the right operand may be out of bounds when skipped."""
        lhs = ct.truth(self.b, self.expr(e.lhs))
        start = self.b.block
        rhs_bb = self.b.append_basic_block("logic.rhs")
        end = self.b.append_basic_block("logic.end")
        if e.op == "&&":
            self.b.cbranch(lhs, rhs_bb, end)
        else:
            self.b.cbranch(lhs, end, rhs_bb)
        self.b.position_at_end(rhs_bb)
        rhs = ct.truth(self.b, self.expr(e.rhs))
        rhs_end = self.b.block
        self.b.branch(end)
        self.b.position_at_end(end)
        phi = self.b.phi(ir.IntType(1))
        phi.add_incoming(ir.Constant(ir.IntType(1), int(e.op == "||")), start)
        phi.add_incoming(rhs, rhs_end)
        return ct.from_truth(self.b, phi)

    def ternary(self, e: cir.Ternary) -> CValue:
        """Only the chosen operand is evaluated, as in C; LLVM turns it into a select when safe."""
        cond = ct.truth(self.b, self.expr(e.cond))
        then_bb = self.b.append_basic_block("sel.then")
        else_bb = self.b.append_basic_block("sel.else")
        end = self.b.append_basic_block("sel.end")
        self.b.cbranch(cond, then_bb, else_bb)
        self.b.position_at_end(then_bb)
        tv, then_end = self.expr(e.then), self.b.block
        self.b.position_at_end(else_bb)
        ev, else_end = self.expr(e.other), self.b.block
        ctype = ct.common_type(tv.ctype, ev.ctype)
        incoming = []
        for v, bb in ((tv, then_end), (ev, else_end)):
            self.b.position_at_end(bb)
            incoming.append((ct.convert(self.b, v, ctype).value, self.b.block))
            self.b.branch(end)
        self.b.position_at_end(end)
        phi = self.b.phi(ct.llvm_type(ctype))
        for v, bb in incoming:
            phi.add_incoming(v, bb)
        return CValue(phi, ctype)

    def call(self, e: cir.Call) -> CValue:
        if opaque_callable(e):
            value = self.opaque_call(e)
            if value is None:
                raise UnsupportedExpression(f"`{e.name}` returns nothing")
            return value
        return self.owner.math.call(self.b, e.name, [self.expr(a) for a in e.args])

    def opaque_call(self, e: cir.Expr) -> CValue | None:
        """``log_event(a, i)``: a call of a function defined elsewhere (the JIT resolves it), with
        each array passed as its base pointer and each number converted to the parameter's type;
        its value, None for a `void` function."""
        assert isinstance(e, cir.Call) and e.signature is not None
        values: list[ir.Value] = []
        for arg, ptype in zip(e.args, e.signature.params + ("...",) * (len(e.args) - len(e.signature.params)), strict=True):
            info = self.acc.get(arg)
            if isinstance(arg, cir.StrLit):
                values.append(self.string(arg))
            elif ptype == "...":  # C's default argument promotions: `float` to `double`, `short` to `int`
                values.append(self.promoted(self.expr(arg)))
            elif ptype.endswith("*") and info is not None and info.whole and info.at is not None:  # `&a[i]`, `a + i`, `&x`
                values.append(self.row(info, info.at))
            elif ptype.endswith("*") and info is not None and info.whole and info.indices:  # a row `A[i]`
                values.append(self.row(info, info.indices))
            elif ptype.endswith("*") and info is not None and info.whole:
                values.append(self.scope.arrays[info.array])
            else:
                values.append(ct.convert(self.b, self.expr(arg), ptype).value)
        sig = e.signature
        result = ir.VoidType() if sig.result == "void" else ct.llvm_type(sig.result)
        fixed = [v.type for v in values[: len(sig.params)]]
        callee = declare(self.b.module, e.name, result, fixed, sig.variadic)
        # one declaration per callee: a later call's pointers (`char (*)[24]`, another array) cast to its types
        params = callee.function_type.args
        values = [_cast_pointer(self.b, v, t) for v, t in zip(values, params, strict=False)] + values[len(params) :]
        value = self.b.call(callee, values)
        return None if sig.result == "void" else CValue(value, ct.canonical(sig.result))

    def string(self, s: cir.StrLit) -> ir.Value:
        """A pointer to the first character of the literal `s`, a constant of the module."""
        data = bytearray(_c_string(s.text)) + b"\0"
        typ = ir.ArrayType(ir.IntType(8), len(data))
        module = self.b.module
        var = ir.GlobalVariable(module, typ, name=module.get_unique_name("hx_str"))
        var.global_constant, var.linkage, var.initializer = True, "private", ir.Constant(typ, data)
        return self.b.gep(var, [ir.Constant(self.owner.ity, 0), ir.Constant(self.owner.ity, 0)], inbounds=True)

    def promoted(self, v: CValue) -> ir.Value:
        """`v` as C passes it to a `...` parameter: ``float`` as ``double``, integers narrower than
        ``int`` as ``int``."""
        if ct.canonical(v.ctype) == "float":
            return ct.convert(self.b, v, "double").value
        t = v.value.type
        if isinstance(t, ir.IntType) and t.width < 32:
            return ct.convert(self.b, v, "int").value
        return v.value

    def row(self, info: AccessInfo, at: tuple[Affine, ...]) -> ir.Value:
        """The address of the first element of the row ``A[i]`` (`at`: i) that `info` passes."""
        names = {**self.scope.ints, **self.iters}
        idx = [self.owner.affine(self.b, a, names) for a in at]
        rank = len(self.owner.layouts[info.array].decl.extents)
        idx += [ir.Constant(self.owner.ity, 0)] * (rank - len(idx))
        local = self.scope.redirect.get(info.array)  # `&s` of a scalar the source order keeps on the stack
        return local(self.b, idx) if local is not None else self.owner.element_at(self.b, info.array, idx, self.scope)

    def cast(self, e: cir.Cast) -> CValue:
        if not isinstance(e.type, cir.Scalar):
            raise UnsupportedExpression(f"cast to `{e.type}`")
        return ct.convert(self.b, self.expr(e.operand), e.type.name)


_COMPARE = ("<", "<=", ">", ">=", "==", "!=")
_HANDLERS: dict[type, Callable[[_Exprs, object], CValue]] = {
    cir.IntLit: _Exprs.literal_int,  # type: ignore[dict-item]
    cir.FloatLit: _Exprs.literal_float,  # type: ignore[dict-item]
    cir.Var: _Exprs.var,  # type: ignore[dict-item]
    cir.Subscript: _Exprs.load,  # type: ignore[dict-item]
    cir.Unary: _Exprs.unary,  # type: ignore[dict-item]
    cir.Binary: _Exprs.binary_node,  # type: ignore[dict-item]
    cir.Ternary: _Exprs.ternary,  # type: ignore[dict-item]
    cir.Call: _Exprs.call,  # type: ignore[dict-item]
    cir.Cast: _Exprs.cast,  # type: ignore[dict-item]
}


def _accumulation(node: cir.Assign) -> tuple[str, cir.Expr] | None:
    """``("+", e)`` for ``t += e`` and ``t = t + e`` (``"-"`` likewise): an update whose old value
    is the previous instance's result, a chain through the loop. Its add is not contracted into an
    FMA with a product in ``e``: an FMA's latency (4 cycles on Zen 4, 3 for an add) would lengthen
    the chain, which gcc's tuning also avoids."""
    if node.op in ("+=", "-="):
        return node.op[0], node.value
    v, target = node.value, str(node.target)
    if node.op == "=" and isinstance(v, cir.Binary) and v.op in ("+", "-") and str(v.lhs) == target:
        return v.op, v.rhs
    if node.op == "=" and isinstance(v, cir.Binary) and v.op == "+" and str(v.rhs) == target:
        return "+", v.lhs
    return None


def _arith(b: ir.IRBuilder, op: str, ctype: str, x: ir.Value, y: ir.Value, contract: bool = True) -> ir.Value:
    if ct.is_float(ctype):  # `contract`: a*b+c may become one FMA, as gcc (-ffp-contract=fast) and nvcc do
        fops = {"+": b.fadd, "-": b.fsub, "*": b.fmul, "/": b.fdiv, "%": b.frem}
        return fops[op](x, y, flags=("contract",) if contract else ())
    unsigned = ct.is_unsigned(ctype)
    flags = [] if unsigned else ["nsw"]
    iops: dict[str, Callable[[], ir.Value]] = {
        "+": lambda: b.add(x, y, flags=flags),
        "-": lambda: b.sub(x, y, flags=flags),
        "*": lambda: b.mul(x, y, flags=flags),
        "/": lambda: b.udiv(x, y) if unsigned else b.sdiv(x, y),
        "%": lambda: b.urem(x, y) if unsigned else b.srem(x, y),
        "&": lambda: b.and_(x, y),
        "|": lambda: b.or_(x, y),
        "^": lambda: b.xor(x, y),
    }
    if op not in iops:
        raise UnsupportedExpression(f"operator `{op}`")
    return iops[op]()
