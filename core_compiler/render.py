"""Text renderings of the artifacts, for the pass trace, the CLI report and golden tests.

Deterministic: the same input gives the same bytes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core_compiler.frontend import ir

if TYPE_CHECKING:
    from core_compiler.scop.dependences import Dependences
    from core_compiler.scop.model import Scop
    from core_compiler.scop.region import RegionInfo


def function_ir(fn: ir.Function) -> str:
    params = ", ".join(f"{p.type} {p.name}" for p in fn.params)
    lines = [f"{fn.return_type} {fn.name}({params})" + (" [cuda kernel]" if fn.is_cuda_kernel else "")]
    lines += _stmts(fn.body, 1)
    return "\n".join(lines) + "\n"


def _stmts(stmts: tuple[ir.Stmt, ...], depth: int) -> list[str]:
    pad = "  " * depth
    out: list[str] = []
    for s in stmts:
        line = s.range.line
        if isinstance(s, ir.For):
            out.append(f"{pad}for {s.var} = {s.init}; {s.cond}; {s.var} += {s.step}   @{line}")
            out += _stmts(s.body, depth + 1)
        elif isinstance(s, ir.If):
            out.append(f"{pad}if {s.cond}   @{line}")
            out += _stmts(s.then, depth + 1)
            if s.other:
                out.append(f"{pad}else")
                out += _stmts(s.other, depth + 1)
        elif isinstance(s, ir.Assign):
            out.append(f"{pad}{s.target} {s.op} {s.value}   @{line}")
        elif isinstance(s, ir.Decl):
            init = f" = {s.init}" if s.init is not None else ""
            out.append(f"{pad}{s.type} {s.name}{init}   @{line}")
        elif isinstance(s, ir.OtherLoop):
            out.append(f"{pad}<{s.kind} loop: {s.reason}>   @{line}")
            out += _stmts(s.body, depth + 1)
        elif isinstance(s, ir.Jump):
            out.append(f"{pad}{s.kind}" + (f" {s.value}" if s.value is not None else "") + f"   @{line}")
        elif isinstance(s, ir.ExprStmt):
            out.append(f"{pad}{s.expr}   @{line}")
        else:
            out.append(f"{pad}<{s.reason}: {s.message}>   @{line}")
            out += _stmts(s.body, depth + 1)
    return out


def regions(regs: tuple[RegionInfo, ...]) -> str:
    if not regs:
        return "no static-control regions\n"
    out = []
    for k, r in enumerate(regs):
        rng = r.range
        out.append(
            f"scop {k}: lines {rng.line}-{rng.end_line}, {len(r.statements)} statements, "
            f"{len(r.loops)} loops, parameters [{', '.join(r.params)}]"
        )
    return "\n".join(out) + "\n"


def scop_model(scop: Scop) -> str:
    out = [f"scop {scop.name} (lines {scop.range.line}-{scop.range.end_line})"]
    out.append(f"  parameters: [{', '.join(scop.params)}]")
    out.append(f"  context: {scop.context}")
    for a in scop.arrays:
        dims = "".join(f"[{'?' if e is None else e.isl()}]" for e in a.extents)
        out.append(f"  array {a.elem_type} {a.name}{dims} ({a.kind})")
    for s in scop.statements:
        out.append(f"  {s.name}: {s.info.text}")
        out.append(f"    domain:   {s.domain}")
        out.append(f"    schedule: {s.schedule}")
        out += [f"    read:     {acc.relation}" for acc in s.reads]
        out += [f"    write:    {acc.relation}" for acc in s.writes]
    return "\n".join(out) + "\n"


def dependences(deps: Dependences) -> str:
    out = [f"dependences of {deps.scop.name}"]
    for d in deps.deps:
        out.append(f"  {d.kind:6} {d.array}: {d.relation}")
    for lp in deps.loops:
        loop = lp.loop
        if lp.parallel:
            state = "parallel"
        elif lp.reduction:
            state = "reduction (parallel as a reduction)"
        else:
            state = "carries " + "; ".join(c.describe() for c in lp.carried)
        out.append(f"  loop {loop.var} (line {loop.range.line}, depth {loop.depth}): {state}")
    for r in deps.reductions:
        out.append(f"  reduction {r.statement}: {r.op} into {r.array} over {', '.join(r.loops)}")
    return "\n".join(out) + "\n"
