"""isl AST nodes as LLVM control flow: ``for`` loops, ``if``s, blocks, marks and user nodes.

User nodes are dispatched by name from a table: a statement ``S0(c0, c1)`` goes to the statement
lowering, and a backend adds its own kinds next to the statements, exactly or as ``prefix*``
entries (NVPTX: ``sync*`` barriers, ``load_*``/``store_*`` copies to and from shared memory and
registers). With a `DebugInfo`, a statement's instructions, whichever handler emits them, carry
its source location. Marks are dispatched by their first word (the CPU's ``parallel`` and ``parallel
private(sum)`` marks outline their loop for libgomp); an unknown mark is transparent.

Loops are emitted as header/body/latch with a phi for the iterator, in the index type; LLVM's
loop passes rotate and vectorize them. The CPU AST build's `LoopFacts` become loop metadata
(independent loops) and registers: a loop-invariant element is loaded into a stack slot before
the loop (SSA after mem2reg), its accesses in the loop use the slot, and it is stored back after.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

import islpy as isl
import llvmlite.ir as ir

from core_compiler.codegen.ast_print import call_parts
from core_compiler.errors import UnknownUserNode
from core_compiler.llvm import c_types as ct
from core_compiler.llvm.debug_info import DebugInfo
from core_compiler.llvm.isl_expr import lower_cond, lower_expr
from core_compiler.llvm.loop_metadata import mark_loop
from core_compiler.llvm.statements import Scope, StatementLowering
from core_compiler.transform.cpu_schedule import contains
from core_compiler.transform.invariant import InvariantElement, LoopFacts

_T: Any = isl.ast_node_type
INTERLEAVE = 4  # partial results of a reduction kept in registers

UserHandler = Callable[["AstLowering", str, list[isl.AstExpr], Scope], None]
MarkHandler = Callable[["AstLowering", isl.AstNode, Scope], None]


@dataclass(frozen=True)
class AstLowering:
    """Lowers AST nodes into the function `builder` is positioned in."""

    builder: ir.IRBuilder
    statements: StatementLowering
    users: Mapping[str, UserHandler]
    marks: Mapping[str, MarkHandler]
    debug: DebugInfo | None = None  # statements carry their source location

    @property
    def ity(self) -> ir.IntType:
        return self.statements.ity

    def at(self, builder: ir.IRBuilder) -> AstLowering:
        """The same tables, emitting with another builder (an outlined function's)."""
        return replace(self, builder=builder)

    def lower(self, node: isl.AstNode, scope: Scope) -> None:
        kind = node.get_type()
        if kind == _T.block:
            for child in children(node):
                self.lower(child, scope)
        elif kind == _T.for_:
            self.for_loop(node, scope)
        elif kind == _T.if_:
            self.if_node(node, scope)
        elif kind == _T.user:
            self.user(node.user_get_expr(), scope)
        elif kind == _T.mark:
            handler = self.marks.get(node.mark_get_id().get_name().partition(" ")[0])
            if handler is None:
                self.lower(node.mark_get_node(), scope)
            else:
                handler(self, node, scope)
        else:
            raise NotImplementedError(f"isl AST node type {kind}")

    def expr(self, e: isl.AstExpr, scope: Scope) -> ir.Value:
        return lower_expr(self.builder, e, scope.ints, self.ity)

    def for_loop(self, node: isl.AstNode, scope: Scope) -> None:
        it = node.for_get_iterator().id_get_id().get_name()
        cond = node.for_get_cond()
        init = self.expr(node.for_get_init(), scope)

        def test(v: ir.Value) -> ir.Value:
            return lower_cond(self.builder, cond, {**scope.ints, it: v}, self.ity)

        promote = self._promotable(node, scope)
        if not promote:
            self._loop(node, it, init, test, scope)
            return
        with self.builder.if_then(test(init)):  # a loop without iterations touches nothing
            slots = {e: self._load_invariant(e, scope) for e in promote}
            promoted = {key: slot for e, (slot, _) in slots.items() for key in e.accesses}
            reduction = any(e.written for e in promote)
            self._loop(node, it, init, test, replace(scope, promoted={**scope.promoted, **promoted}), reduction)
            for e, (slot, address) in slots.items():
                if e.written:
                    self.builder.store(self.builder.load(slot), address)

    def _loop(self, node: isl.AstNode, it: str, init: ir.Value, test: Callable[[ir.Value], ir.Value],
              scope: Scope, reduction: bool = False) -> None:  # fmt: skip
        latch, body = emit_loop(
            self.builder,
            init,
            self.expr(node.for_get_inc(), scope),
            test,
            lambda v: self.lower(node.for_get_body(), scope.with_int(it, v)),
        )
        mark_loop(latch, body, _facts(node).independent, INTERLEAVE if reduction else 0)

    def _promotable(self, node: isl.AstNode, scope: Scope) -> list[InvariantElement]:
        """The loop's invariant elements to keep in registers: not those an enclosing loop
        already keeps, nor arrays already local; none when a parallel region inside would
        read memory behind the register's back."""
        elements = _facts(node).invariant
        if not elements or contains(node.for_get_body(), _T.mark):
            return []
        return [
            e for e in elements
            if e.array not in scope.redirect and not any(k in scope.promoted for k in e.accesses)
            and all(_ids(x) <= scope.ints.keys() for x in e.index)
        ]  # fmt: skip

    def _load_invariant(self, e: InvariantElement, scope: Scope) -> tuple[ir.Value, ir.Value]:
        """A stack slot (SSA after LLVM's mem2reg) holding the element; its slot and address."""
        b = self.builder
        address = self.statements.element_at(b, e.array, [self.expr(x, scope) for x in e.index], scope)
        elem = ct.llvm_type(self.statements.layouts[e.array].decl.elem_type)
        with b.goto_entry_block():
            slot = b.alloca(elem, name=f"{e.array}.reg")
        b.store(b.load(address, typ=elem), slot)
        return slot, address

    def if_node(self, node: isl.AstNode, scope: Scope) -> None:
        cond = lower_cond(self.builder, node.if_get_cond(), scope.ints, self.ity)
        if not node.if_has_else_node():
            with self.builder.if_then(cond):
                self.lower(node.if_get_then_node(), scope)
            return
        with self.builder.if_else(cond) as (then, other):
            with then:
                self.lower(node.if_get_then_node(), scope)
            with other:
                self.lower(node.if_get_else_node(), scope)

    def user(self, e: isl.AstExpr, scope: Scope) -> None:
        name, args = call_parts(e)
        handler = handler_for(self.users, name)
        stmt = next((s for s in self.statements.scop.statements if s.name == name), None)
        if self.debug is None or stmt is None:
            handler(self, name, args, scope)
            return
        with self.debug.statement(self.builder, stmt):
            handler(self, name, args, scope)


def _facts(node: isl.AstNode) -> LoopFacts:
    """The `LoopFacts` of a ``for`` the CPU AST build annotated; nothing known for the others."""
    try:
        facts = node.get_annotation().get_user()
    except isl.Error:  # no annotation
        return _NOTHING_KNOWN
    return facts if isinstance(facts, LoopFacts) else _NOTHING_KNOWN


_NOTHING_KNOWN = LoopFacts(independent=False)


def _ids(e: isl.AstExpr) -> set[str]:
    """The names an AST expression uses."""
    if e.get_type() == isl.ast_expr_type.id:
        return {e.id_get_id().get_name()}
    if e.get_type() != isl.ast_expr_type.op:
        return set()
    return set().union(*(_ids(e.op_get_arg(k)) for k in range(e.op_get_n_arg())))


def handler_for(users: Mapping[str, UserHandler], name: str) -> UserHandler:
    """The handler of `name`: an exact entry (``S0``), else the longest ``prefix*`` entry that
    matches (``sync*`` for ``sync99``, ``load_*`` for ``load_shared_A``)."""
    if name in users:
        return users[name]
    prefixes = [k for k in users if k.endswith("*") and name.startswith(k[:-1])]
    if not prefixes:
        raise UnknownUserNode(name)
    return users[max(prefixes, key=len)]


def statement_handler(low: AstLowering, name: str, args: list[isl.AstExpr], scope: Scope) -> None:
    """``S0(c0, c1 + 1)``: the statement's iterators take the argument values."""
    stmt = low.statements.scop.statement(name)
    values = {it: low.expr(a, scope) for it, a in zip(stmt.iterators, args, strict=True)}
    low.statements.assign(low.builder, stmt, values, scope)


def statement_table(statements: StatementLowering) -> dict[str, UserHandler]:
    return {s.name: statement_handler for s in statements.scop.statements}


def emit_loop(
    b: ir.IRBuilder,
    start: ir.Value,
    step: ir.Value,
    cond: Callable[[ir.Value], ir.Value],
    body: Callable[[ir.Value], None],
) -> tuple[ir.Instruction, list[ir.Block]]:
    """``for (v = start; cond(v); v += step) body(v)``, leaving `b` after the loop; returns the
    back edge's branch and the body's blocks."""
    pre = b.block
    header = b.append_basic_block("for.cond")
    body_bb = b.append_basic_block("for.body")
    exit_bb = b.append_basic_block("for.end")
    first_nested = len(b.function.blocks)
    b.branch(header)
    b.position_at_end(header)
    v = b.phi(start.type, name="it")
    v.add_incoming(start, pre)
    b.cbranch(cond(v), body_bb, exit_bb)
    b.position_at_end(body_bb)
    body(v)
    nxt = b.add(v, step, name="it.next", flags=["nsw"])
    v.add_incoming(nxt, b.block)
    blocks = [body_bb, *b.function.blocks[first_nested:]]
    latch = b.branch(header)
    b.position_at_end(exit_bb)
    return latch, blocks


def children(node: isl.AstNode) -> Iterator[isl.AstNode]:
    lst = node.block_get_children()
    for k in range(lst.n_ast_node()):
        yield lst.get_at(k)
