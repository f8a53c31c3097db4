"""isl AST nodes as LLVM control flow: ``for`` loops, ``if``s, blocks, marks and user nodes.

User nodes are dispatched by name from a table: a statement ``S0(c0, c1)`` goes to the statement
lowering, and a backend adds its own kinds next to the statements, exactly or as ``prefix*``
entries (NVPTX: ``sync*`` barriers, ``load_*``/``store_*`` copies to and from shared memory and
registers). Marks are dispatched the same way (the CPU's ``parallel``
mark outlines its loop for libgomp); an unknown mark is transparent.

Loops are emitted as header/body/latch with a phi for the iterator, in the index type; LLVM's
loop passes rotate and vectorize them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

import islpy as isl
import llvmlite.ir as ir

from core_compiler.codegen.ast_print import call_parts
from core_compiler.cpu import INDEPENDENT
from core_compiler.llvm.isl_expr import lower_cond, lower_expr
from core_compiler.llvm.loop_metadata import mark_independent
from core_compiler.llvm.statements import Scope, StatementLowering

_T: Any = isl.ast_node_type

UserHandler = Callable[["AstLowering", str, list[isl.AstExpr], Scope], None]
MarkHandler = Callable[["AstLowering", isl.AstNode, Scope], None]


class UnknownUserNode(KeyError):
    """A user node whose name is neither a statement nor a registered kind."""


@dataclass(frozen=True)
class AstLowering:
    """Lowers AST nodes into the function `builder` is positioned in."""

    builder: ir.IRBuilder
    statements: StatementLowering
    users: Mapping[str, UserHandler]
    marks: Mapping[str, MarkHandler]

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
            handler = self.marks.get(node.mark_get_id().get_name())
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
        latch, body = emit_loop(
            self.builder,
            self.expr(node.for_get_init(), scope),
            self.expr(node.for_get_inc(), scope),
            lambda v: lower_cond(self.builder, cond, {**scope.ints, it: v}, self.ity),
            lambda v: self.lower(node.for_get_body(), scope.with_int(it, v)),
        )
        if _annotation(node) == INDEPENDENT:
            mark_independent(latch, body)

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
        handler_for(self.users, name)(self, name, args, scope)


def _annotation(node: isl.AstNode) -> str:
    """The name of the node's annotation, "" when it has none (isl reports that as an error)."""
    try:
        return str(node.get_annotation().get_name())
    except isl.Error:
        return ""


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
