"""A SCoP as one LLVM function for the host CPU, sequential or with parallel loops on libgomp.

The function takes the SCoP's arguments in `codegen/opencl.kernel_args` order minus the GPU's: every
array (scalars written in the nest and expanded local scalars included) as a pointer to a flat
row-major buffer, then the integer parameters (``int``), then the read-only scalars. Array
pointers are ``noalias``: the SCoP model already assumes that they do not alias (an ``Analysis``
remark says so), and it lets the loop vectorizer work without run-time checks.

A ``for`` directly under a ``parallel`` mark (see `core_compiler/transform/cpu_schedule.py`) is outlined into
``<name>.omp<k>(ptr data)``, whose ``data`` is a struct of every value in scope; the function calls
``GOMP_parallel(outlined, &data, 0, 0)`` and each thread runs every n-th chunk of consecutive
iterations (``omp_get_thread_num``/``omp_get_num_threads``; `CHUNKS_PER_THREAD` chunks each, which
balances triangular loops, or one block each under a ``parallel blocks`` mark), or every n-th
iteration when the loop's bound is not a plain ``c <= e``. What isl made into something other than a ``for`` under the mark (a split loop, an
``if``) runs sequentially.

``hx_call_<name>(ptr argv)`` calls the function with ``argv[k]`` pointing at argument k, the
reference runner's convention, so one ctypes signature calls every kernel.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import islpy as isl
import llvmlite.binding as llvm
import llvmlite.ir as ir

from core_compiler.llvm import c_types as ct
from core_compiler.llvm.ast_lower import AstLowering, UserHandler, emit_loop, statement_table
from core_compiler.llvm.debug_info import DebugInfo
from core_compiler.llvm.isl_expr import lower_cond, lower_expr
from core_compiler.llvm.math_calls import HOST_MATH, declare
from core_compiler.llvm.statements import Redirect, Scope, StatementLowering, element_size
from core_compiler.scop.affine import isl_name
from core_compiler.scop.dependences import Dependences
from core_compiler.scop.model import Scop
from core_compiler.source_map import SourceMap, StatementLocation, ir_source_map
from core_compiler.transform.cpu_schedule import (
    PARALLEL_MARK,
    CpuOptions,
    ParallelMark,
    build_ast,
    cpu_program,
)
from core_compiler.transform.schedule import original_schedule

_T: Any = isl.ast_node_type
_OP: Any = isl.ast_expr_op_type
I32 = ir.IntType(32)
I64 = ir.IntType(64)
PTR = ir.PointerType()


@dataclass(frozen=True)
class CpuArg:
    name: str
    kind: str  # "array" | "int" | "scalar"
    ctype: str  # the element type of an array, the type of a scalar


@dataclass(frozen=True)
class CpuModule:
    name: str  # the function
    entry: str  # hx_call_<name>(ptr argv)
    args: tuple[CpuArg, ...]
    ir: str  # before optimization
    parallel_loops: int  # loops outlined for GOMP_parallel
    locations: tuple[StatementLocation, ...] = ()  # the statements' debug locations in `ir`
    externals: tuple[str, ...] = ()  # functions the opaque calls call: defined in the user's C (`jit_compile`)

    @property
    def source_map(self) -> SourceMap:
        """The lines of `ir` that belong to a statement instance (its ``!dbg``)."""
        return ir_source_map(self.ir, self.locations)


def cpu_args(scop: Scop) -> tuple[CpuArg, ...]:
    out = [CpuArg(a.name, "array", a.elem_type) for a in sorted(scop.arrays, key=lambda a: a.name)]
    out += [CpuArg(p, "int", "int") for p in scop.params]
    out += [CpuArg(n, "scalar", t) for n, t in scop.region.readonly_scalars]
    return tuple(out)


def original_ast(scop: Scop, deps: isl.UnionMap | None = None) -> isl.AstNode:
    """The source order, the reference the optimized code is timed against; with `deps`, its
    independent loops are annotated (`core_compiler.transform.cpu_schedule.build_ast`)."""
    return build_ast(scop, original_schedule(scop), deps)


def optimized_ast(scop: Scop, schedule: isl.Schedule, options: CpuOptions | None = None,
                  deps: Dependences | None = None) -> isl.AstNode:  # fmt: skip
    """`core_compiler.transform.cpu_schedule`'s tiled, parallel-marked AST of `schedule`."""
    return cpu_program(scop, schedule, options or CpuOptions(), deps).ast


def lower_cpu(scop: Scop, ast: isl.AstNode, name: str, parallel: bool = True,
              users: Mapping[str, UserHandler] | None = None, source_order: bool = False) -> CpuModule:  # fmt: skip
    """The function `name` computing `scop` in the order of `ast`; `users` adds or overrides
    user-node handlers (statements by name). With `source_order` (`ast` runs the statements as
    written, sequentially), scalars declared inside the loops live in one stack slot each, as in
    the C code, instead of their expanded arrays."""
    module = ir.Module(name=name)
    module.triple = llvm.get_process_triple()
    debug = DebugInfo(module, scop)
    args = cpu_args(scop)
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [_arg_type(a) for a in args]), name=name)
    for a, spec in zip(fn.args, args, strict=True):
        a.name = spec.name
        if spec.kind == "array":
            a.add_attribute("noalias")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    scope = entry_scope(b, scop, args, list(fn.args))
    stack = scope
    if source_order:
        assert not parallel, "a source-order function runs sequentially"
        stack = _locals_on_stack(b, scop, scope)
    stmts = StatementLowering(scop, HOST_MATH, I64)
    stack = stmts.hoist_layouts(b, stack)
    outliner = _Outliner(name, debug)
    marks = {PARALLEL_MARK: outliner.outline} if parallel else {}
    AstLowering(b, stmts, {**statement_table(stmts), **(users or {})}, marks, debug).lower(ast, stack)
    for a in scop.arrays if source_order else ():  # a `return s;` after the nest reads them
        if a.kind == "local-scalar" and not a.extents:
            b.store(b.load(stack.redirect[a.name](b, []), typ=ct.llvm_type(a.elem_type)), scope.arrays[a.name])
    b.ret_void()
    _trampoline(module, fn, args, debug)
    externals = tuple(sorted({c.name for s in scop.statements for c in s.info.opaque_calls}))
    return CpuModule(name, f"hx_call_{name}", args, str(module), outliner.count, tuple(debug.locations), externals)


def _locals_on_stack(b: ir.IRBuilder, scop: Scop, scope: Scope) -> Scope:
    """Each loop-local scalar (``double acc`` inside a loop) as one ``alloca``: in source order an
    instance's value is dead before the next instance is written, as in the original C."""
    redirect = dict(scope.redirect)
    for a in scop.arrays:
        if a.kind == "local-scalar":
            redirect[a.name] = _constant_address(b.alloca(ct.llvm_type(a.elem_type), name=f"{a.name}.slot"))
    return Scope(scope.ints, scope.scalars, scope.arrays, redirect)


def _constant_address(slot: ir.Value) -> Redirect:
    return lambda _b, _idx: slot


def _arg_type(a: CpuArg) -> ir.Type:
    if a.kind == "array":
        return PTR
    return I32 if a.kind == "int" else ct.llvm_type(a.ctype)


def entry_scope(b: ir.IRBuilder, scop: Scop, args: tuple[CpuArg, ...], values: list[ir.Value]) -> Scope:
    """Parameters widened to ``i64`` under their C and isl names; scalars and arrays as passed."""
    ints: dict[str, ir.Value] = {}
    scalars: dict[str, ct.CValue] = {}
    arrays: dict[str, ir.Value] = {}
    for spec, v in zip(args, values, strict=True):
        if spec.kind == "array":
            arrays[spec.name] = v
        elif spec.kind == "int":
            wide = b.sext(v, I64, name=f"{spec.name}.i64")
            ints[spec.name] = ints[isl_name(spec.name)] = wide
        else:
            scalars[spec.name] = ct.CValue(v, ct.canonical(spec.ctype))
    return Scope(ints, scalars, arrays)


def _trampoline(module: ir.Module, fn: ir.Function, args: tuple[CpuArg, ...], debug: DebugInfo) -> None:
    tramp = ir.Function(module, ir.FunctionType(ir.VoidType(), [PTR]), name=f"hx_call_{fn.name}")
    b = ir.IRBuilder(tramp.append_basic_block("entry"))
    values = []
    for k, spec in enumerate(args):
        slot = b.gep(tramp.args[0], [ir.Constant(I64, k)], inbounds=True, source_etype=PTR)
        p = b.load(slot, typ=PTR)
        values.append(p if spec.kind == "array" else b.load(p, typ=_arg_type(spec)))
    debug.call(b, fn, values)
    b.ret_void()


# ---------------------------------------------------------------------------------- OpenMP


@dataclass
class _Outliner:
    """Turns ``parallel``-marked loops into ``GOMP_parallel`` calls; counts them."""

    parent: str
    debug: DebugInfo
    count: int = 0

    def outline(self, low: AstLowering, mark: isl.AstNode, scope: Scope) -> None:
        loop = mark.mark_get_node()
        options = ParallelMark.parse(mark.mark_get_id().get_name()) or ParallelMark()
        if loop.get_type() != _T.for_ or (options.private and _upper_bounds(loop.for_get_cond(), _iterator(loop)) is None):
            low.lower(loop, scope)  # without chunks, no thread knows it runs the last iteration
            return
        fields = _captured(scope)
        struct = ir.LiteralStructType([v.type for _, _, v in fields])
        fn = self._outlined(low, loop, fields, struct, options)
        b = low.builder
        with b.goto_entry_block():
            data = b.alloca(struct, name="omp.data")
        packed: ir.Value = ir.Constant(struct, ir.Undefined)
        for k, (_, _, v) in enumerate(fields):
            packed = b.insert_value(packed, v, k)
        b.store(packed, data)  # one aggregate store: llvmlite's allocas are typed pointers
        gomp = declare(b.module, "GOMP_parallel", ir.VoidType(), [PTR, PTR, I32, I32])
        b.call(gomp, [fn, data, ir.Constant(I32, 0), ir.Constant(I32, 0)])

    def _outlined(self, low: AstLowering, loop: isl.AstNode, fields: list[tuple[str, str, ir.Value]],
                  struct: ir.LiteralStructType, options: ParallelMark) -> ir.Function:  # fmt: skip
        """``omp<k>(ptr data)`` unpacks `data` and calls ``omp<k>.body``, whose array arguments are
        ``noalias`` again (pointers loaded from a struct are not), so its loops vectorize without
        run-time alias checks."""
        module = low.builder.module
        name = f"{self.parent}.omp{self.count}"
        self.count += 1
        body = self._body(low, loop, fields, name, options)
        fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [PTR]), name=name)
        fn.linkage = "internal"
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        values = []
        for k, (_, fname, v) in enumerate(fields):
            slot = b.gep(fn.args[0], [ir.Constant(I32, 0), ir.Constant(I32, k)], source_etype=struct)
            values.append(b.load(slot, typ=v.type, name=fname))
        tid = b.sext(b.call(declare(module, "omp_get_thread_num", I32, []), []), I64)
        nth = b.sext(b.call(declare(module, "omp_get_num_threads", I32, []), []), I64)
        self.debug.call(b, body, [*values, tid, nth])
        b.ret_void()
        return fn

    def _body(self, low: AstLowering, loop: isl.AstNode, fields: list[tuple[str, str, ir.Value]],
              name: str, options: ParallelMark) -> ir.Function:  # fmt: skip
        types = [v.type for _, _, v in fields] + [I64, I64]
        fn = ir.Function(low.builder.module, ir.FunctionType(ir.VoidType(), types), name=f"{name}.body")
        fn.linkage = "internal"
        for (kind, fname, _), arg in zip(fields, fn.args, strict=False):
            arg.name = fname
            if kind == "array":
                arg.add_attribute("noalias")
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        scope = _scope_of(fields, list(fn.args))
        copies = [_PrivateCopy.of(b, low.statements, a, scope) for a in options.private]
        scope = replace(scope, arrays={**scope.arrays, **{c.array: c.copy for c in copies}})
        chunks = 1 if options.blocks else CHUNKS_PER_THREAD
        last = _split_loop(low.at(b), loop, scope, fn.args[-2], fn.args[-1], chunks)
        if copies:
            with b.if_then(last):
                for c in copies:
                    c.copy_out(b)
            for c in copies:
                b.call(declare(b.module, "free", ir.VoidType(), [PTR]), [c.copy])
        b.ret_void()
        return fn


@dataclass(frozen=True)
class _PrivateCopy:
    """One thread's copy of an array of a ``parallel private(...)`` loop: allocated and filled
    from the shared array when the thread starts; the thread that runs the loop's last iteration
    copies it back (`core_compiler.transform.cpu_schedule._private` says why that is the array after the loop)."""

    array: str
    shared: ir.Value
    copy: ir.Value
    size: ir.Value  # bytes

    @staticmethod
    def of(b: ir.IRBuilder, stmts: StatementLowering, array: str, scope: Scope) -> _PrivateCopy:
        width = element_size(stmts.layouts[array].decl.elem_type)
        size = b.mul(stmts.element_count(b, array, scope), ir.Constant(I64, width), flags=["nsw"])
        copy = b.call(declare(b.module, "malloc", PTR, [I64]), [size], name=f"{array}.private")
        shared = scope.arrays[array]
        _memcpy(b, copy, shared, size)
        return _PrivateCopy(array, shared, copy, size)

    def copy_out(self, b: ir.IRBuilder) -> None:
        _memcpy(b, self.shared, self.copy, self.size)


def _memcpy(b: ir.IRBuilder, to: ir.Value, source: ir.Value, size: ir.Value) -> None:
    b.call(declare(b.module, "memcpy", PTR, [PTR, PTR, I64]), [to, source, size])


def _captured(scope: Scope) -> list[tuple[str, str, ir.Value]]:
    out = [("int", n, v) for n, v in scope.ints.items()]
    out += [("scalar:" + v.ctype, n, v.value) for n, v in scope.scalars.items()]
    return out + [("array", n, v) for n, v in scope.arrays.items()]


def _scope_of(fields: list[tuple[str, str, ir.Value]], values: list[ir.Value]) -> Scope:
    ints: dict[str, ir.Value] = {}
    scalars: dict[str, ct.CValue] = {}
    arrays: dict[str, ir.Value] = {}
    for (kind, name, _), v in zip(fields, values, strict=False):
        if kind == "int":
            ints[name] = v
        elif kind == "array":
            arrays[name] = v
        else:
            scalars[name] = ct.CValue(v, kind.removeprefix("scalar:"))
    return Scope(ints, scalars, arrays)


CHUNKS_PER_THREAD = 8  # the iterations of a parallel loop are dealt out in this many chunks per thread


def _split_loop(low: AstLowering, loop: isl.AstNode, scope: Scope, tid: ir.Value, nth: ir.Value,
                chunks_per_thread: int = CHUNKS_PER_THREAD) -> ir.Value:  # fmt: skip
    """This thread's share of `loop`: every `nth` chunk of consecutive iterations from chunk `tid`
    (OpenMP's ``schedule(static, chunk)``), `chunks_per_thread` of them, so that a triangular loop
    (``j <= i``) gives each thread a fair share of the work; one (a block) where every iteration
    does the same work, so that a thread keeps its iterations, and their cache lines, as the loops
    around move on; or every `nth`
    iteration from `tid` when the loop's bound is not a plain ``c <= e``. Returns whether this
    thread ran the last iteration (false in the second case, where it is not known)."""
    b = low.builder
    it = _iterator(loop)
    init, inc = low.expr(loop.for_get_init(), scope), low.expr(loop.for_get_inc(), scope)
    cond = loop.for_get_cond()

    def body(k: ir.Value) -> None:
        value = b.add(init, b.mul(k, inc, flags=["nsw"]), flags=["nsw"], name=it)
        low.lower(loop.for_get_body(), scope.with_int(it, value))

    bounds = _upper_bounds(cond, it)
    if bounds is None:
        emit_loop(b, tid, nth, lambda k: lower_cond(b, cond, {**scope.ints, it: b.add(init, b.mul(k, inc))}, I64), body)
        return ir.Constant(ir.IntType(1), 0)
    ub = None
    for e, strict in bounds:
        v = lower_expr(b, e, scope.ints, I64)
        v = b.sub(v, ir.Constant(I64, 1)) if strict else v
        ub = v if ub is None else b.select(b.icmp_signed("<", ub, v), ub, v)
    assert ub is not None
    diff = b.sub(ub, init)
    trips = b.select(b.icmp_signed("<", diff, ir.Constant(I64, 0)), ir.Constant(I64, 0),
                     b.add(b.sdiv(diff, inc), ir.Constant(I64, 1)))  # fmt: skip
    chunks = b.mul(nth, ir.Constant(I64, chunks_per_thread))
    rounded_up = b.sdiv(b.add(trips, b.sub(chunks, ir.Constant(I64, 1))), chunks)
    chunk = b.select(b.icmp_signed("<", trips, chunks), ir.Constant(I64, 1), rounded_up)
    stride = b.mul(nth, chunk)

    def one_chunk(lo: ir.Value) -> None:
        end = b.add(lo, chunk)
        hi = b.select(b.icmp_signed("<", end, trips), end, trips)
        emit_loop(b, lo, ir.Constant(I64, 1), lambda k: b.icmp_signed("<", k, hi), body)

    emit_loop(b, b.mul(tid, chunk), stride, lambda lo: b.icmp_signed("<", lo, trips), one_chunk)
    last = b.sdiv(b.sub(trips, ir.Constant(I64, 1)), chunk)  # the last chunk, when there is one
    mine = b.icmp_signed("==", b.srem(last, nth), tid)
    return b.and_(b.icmp_signed(">", trips, ir.Constant(I64, 0)), mine)


def _iterator(loop: isl.AstNode) -> str:
    return str(loop.for_get_iterator().id_get_id().get_name())


def _upper_bounds(cond: isl.AstExpr, it: str) -> list[tuple[isl.AstExpr, bool]] | None:
    """``c <= e`` / ``c < e`` (and conjunctions of them) as [(e, strict)]; None otherwise."""
    if cond.get_type() != isl.ast_expr_type.op:
        return None
    op = cond.op_get_type()
    args = [cond.op_get_arg(k) for k in range(cond.op_get_n_arg())]
    if op in (_OP.and_, _OP.and_then):
        parts = [_upper_bounds(a, it) for a in args]
        return None if any(p is None for p in parts) else [x for p in parts if p for x in p]
    if op in (_OP.le, _OP.lt) and _is_id(args[0], it) and not _mentions(args[1], it):
        return [(args[1], op == _OP.lt)]
    return None


def _is_id(e: isl.AstExpr, name: str) -> bool:
    return e.get_type() == isl.ast_expr_type.id and e.id_get_id().get_name() == name


def _mentions(e: isl.AstExpr, name: str) -> bool:
    if e.get_type() == isl.ast_expr_type.id:
        return e.id_get_id().get_name() == name
    if e.get_type() != isl.ast_expr_type.op:
        return False
    return any(_mentions(e.op_get_arg(k), name) for k in range(e.op_get_n_arg()))
