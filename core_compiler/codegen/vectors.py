"""OpenCL vector loads along a thread's run of contiguous points (PPOpenCL's vector width).

With `MappingOptions.vector` > 1 each thread runs contiguous points of the innermost
thread-mapped member (``for (c1 = T1 + 8 * t1; c1 <= T1 + 8 * t1 + 7; c1++)``). Those points are
iterations of a parallel loop, so they may run in lock-step: the loop is printed as a vector
loop of width w with a scalar remainder::

    {
      int c1 = T1 + 8 * t1;
      for (; c1 + 3 <= T1 + 8 * t1 + 7; c1 += 4) {
        vstore4(vload4(0, &C[i * 50 + c1]) + alpha * A[i * 30 + k] * vload4(0, &B[k * 50 + c1]), 0, &C[i * 50 + c1]);
      }
      for (; c1 <= T1 + 8 * t1 + 7; c1++) {
        C[i * 50 + c1] += alpha * A[i * 30 + k] * B[k * 50 + c1];
      }
    }

A run is vectorized only where every access is contiguous along it (stride 1 in the last
subscript, the others fixed) or the same for all its points, what is written is contiguous,
no loop bound or condition inside depends on the point, and the statements are plain
arithmetic (``+ - * /``) on ``double`` or ``float``; otherwise the loop stays scalar and
`ScalarRun.why` says why. This module holds the checks; `kernel_body.KernelPrinter` prints.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import islpy as isl

from core_compiler.codegen.ast_print import expr_c
from core_compiler.frontend import ir
from core_compiler.scop.affine import Affine
from core_compiler.transform.gpu_mapping import when_parts

_OP: Any = isl.ast_expr_op_type
_T: Any = isl.ast_node_type
VECTOR_TYPES = ("double", "float")


class NotVectorizable(Exception):  # a decision, not an error: caught where the loop is printed
    """Why a thread's run stays scalar, in words."""


@dataclass(frozen=True)
class VectorRun:
    """A loop printed with vector loads: its kernel, width, source loop and contiguous accesses."""

    kernel: str
    width: int
    loop: str  # the source iterator the run steps ("j")
    reads: tuple[str, ...]  # "B[k][j..j+3]"
    writes: tuple[str, ...]
    statement: str  # one statement of the run, for the remark's range

    def message(self) -> str:
        def said(texts: tuple[str, ...], verb: str) -> str:
            return f"{verb} of {', '.join(texts)} are contiguous" if texts else ""

        why = "; ".join(w for w in (said(self.reads, "reads"), said(self.writes, "writes")) if w)
        return f"vector width {self.width} on the {self.loop} loop in {self.kernel}: {why}"


def merged(runs: list[VectorRun]) -> tuple[VectorRun, ...]:
    """One run per kernel and loop: a kernel prints its full and partial tiles apart."""
    out: dict[tuple[str, str, int], VectorRun] = {}
    for r in runs:
        key = (r.kernel, r.loop, r.width)
        seen = out.get(key)
        if seen is not None:
            r = VectorRun(r.kernel, r.width, r.loop, tuple(dict.fromkeys(seen.reads + r.reads)),
                          tuple(dict.fromkeys(seen.writes + r.writes)), seen.statement)  # fmt: skip
        out[key] = r
    return tuple(out.values())


@dataclass(frozen=True)
class ScalarRun:
    """A thread's run that stays scalar, and why."""

    kernel: str
    width: int
    why: str


def lane_coefficient(e: isl.AstExpr, lane: str) -> int | None:
    """How `e` changes per step of `lane`: ``2 * c1 + T1`` -> 2; None where it is not affine in it."""
    kind = e.get_type()
    if kind == isl.ast_expr_type.int:
        return 0
    if kind == isl.ast_expr_type.id:
        return 1 if e.id_get_id().get_name() == lane else 0
    op = e.op_get_type()
    args = [e.op_get_arg(k) for k in range(e.op_get_n_arg())]
    coeffs = [lane_coefficient(a, lane) for a in args]
    if all(c == 0 for c in coeffs):
        return 0
    if any(c is None for c in coeffs):
        return None
    if op == _OP.add:
        return sum(c for c in coeffs if c is not None)
    if op == _OP.sub:
        return (coeffs[0] or 0) - (coeffs[1] or 0)
    if op == _OP.minus:
        return -(coeffs[0] or 0)
    if op == _OP.mul:
        constant = [a for a, c in zip(args, coeffs, strict=True) if c == 0]
        other = [c for c in coeffs if c]
        if len(constant) == 1 and len(other) == 1 and constant[0].get_type() == isl.ast_expr_type.int:
            return int(constant[0].int_get_val().to_python()) * other[0]
    return None


def index_steps(indices: tuple[Affine, ...], steps: dict[str, int]) -> tuple[int, ...] | None:
    """Per subscript, its step per point of the run (`steps`: each iterator's); None where a
    subscript reads a moving iterator under ``/`` or ``%``."""
    moving = {v for v, s in steps.items() if s}
    out = []
    for a in indices:
        if any(moving & set(part.variables()) for atom in a.atoms for part in atom.operands()):
            return None
        out.append(sum(c * steps.get(v, 0) for v, c in a.coeffs if isinstance(v, str)))
    return tuple(out)


def access_kind(steps: tuple[int, ...] | None) -> str:
    """ "uniform" (the same element for every point), "contiguous" (stride 1 in the last
    subscript), else "other"."""
    if steps is None:
        return "other"
    if all(s == 0 for s in steps):
        return "uniform"
    if steps[-1] == 1 and all(s == 0 for s in steps[:-1]):
        return "contiguous"
    return "other"


def run_text(node: ir.Expr, last: Affine, loop: str, width: int) -> str:
    """``B[k][j..j+3]``, ``A[i][j-1..j+2]``: the source access with its last subscript (`last`)
    spanning the run of `loop`."""
    if not isinstance(node, ir.Subscript) or not node.indices:
        return str(node)
    head = node.base + "".join(f"[{i}]" for i in node.indices[:-1])
    if last.names == {loop} and not last.atoms and last.coeff(loop) == 1:

        def at(c: int) -> str:
            return f"{loop}{c:+d}" if c else loop

        return f"{head}[{at(last.const)}..{at(last.const + width - 1)}]"
    text = str(node.indices[-1])
    return f"{head}[{text}..{text}+{width - 1}]"


def check_expression(e: ir.Expr, moving: set[str], vector_type: str, scalars: dict[str, str]) -> None:
    """Plain arithmetic the vector types take: literals, scalars (`scalars`: their types),
    accesses, ``+ - * /``."""
    if isinstance(e, ir.IntLit):
        return
    if isinstance(e, ir.FloatLit):
        if vector_type == "float" and not e.text.lower().endswith("f"):
            raise NotVectorizable(f"the double constant {e.text} does not combine with float vectors")
        return
    if isinstance(e, (ir.Var, ir.Subscript)):
        if isinstance(e, ir.Var) and e.name in moving:
            raise NotVectorizable(f"the loop counter {e.name} is used as a value")
        if isinstance(e, ir.Var) and vector_type == "float" and scalars.get(e.name) == "double":
            raise NotVectorizable(f"the double {e.name} does not combine with float vectors")
        return  # subscripts are checked as accesses
    if isinstance(e, ir.Unary) and e.op in ("-", "+"):
        check_expression(e.operand, moving, vector_type, scalars)
        return
    if isinstance(e, ir.Binary) and e.op in ("+", "-", "*", "/"):
        check_expression(e.lhs, moving, vector_type, scalars)
        check_expression(e.rhs, moving, vector_type, scalars)
        return
    raise NotVectorizable(f"`{e}` is not plain arithmetic")


def mentions(e: isl.AstExpr, name: str) -> bool:
    return re.search(rf"\b{re.escape(name)}\b", expr_c(e)) is not None


def check_body(node: isl.AstNode, lane: str) -> None:
    """Loop bounds and conditions inside the run must not depend on its point."""
    kind = node.get_type()
    if kind == _T.block:
        children = node.block_get_children()
        for k in range(children.n_ast_node()):
            check_body(children.get_at(k), lane)
    elif kind == _T.for_:
        if any(mentions(e, lane) for e in (node.for_get_init(), node.for_get_cond(), node.for_get_inc())):
            raise NotVectorizable("an inner loop's bounds depend on the point")
        check_body(node.for_get_body(), lane)
    elif kind == _T.if_:
        if mentions(node.if_get_cond(), lane):
            raise NotVectorizable("a condition depends on the point")
        check_body(node.if_get_then_node(), lane)
        if node.if_has_else_node():
            check_body(node.if_get_else_node(), lane)
    elif kind == _T.mark:
        check_body(node.mark_get_node(), lane)
    elif kind == _T.user:
        cond, _ = when_parts(node.user_get_expr())
        if cond is not None and mentions(cond, lane):
            raise NotVectorizable("a condition depends on the point")
