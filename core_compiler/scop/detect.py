"""SCoP detection: the maximal static-control regions of a function, and why the rest is not one.

A candidate is a statement holding a loop. Consecutive candidates that are each modelable, with the
straight-line statements between them, are merged into one region when the merged region is still
modelable (a scalar written by one nest may be a size of the next). A rejected candidate gets one
remark per problem, and the search goes on inside its body, as Polly's does.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from core_compiler.frontend import ir
from core_compiler.remarks import Remark, analysis, missed
from core_compiler.scop.region import Problem, RegionInfo, check_region

PASS = "scop-detect"


@dataclass(frozen=True)
class Detection:
    regions: tuple[RegionInfo, ...]
    remarks: tuple[Remark, ...]


def detect_scops(function: ir.Function) -> Detection:
    scanner = _Scanner(function)
    symbols: dict[str, ir.CType] = {p.name: p.type for p in function.inputs}
    scanner.scan(function.body, symbols)
    return Detection(tuple(scanner.regions), tuple(scanner.remarks))


_ALLOCATORS = frozenset({"malloc", "calloc", "aligned_alloc"})


def _is_allocation(e: ir.Expr | None) -> bool:
    while isinstance(e, ir.Cast):
        e = e.operand
    return isinstance(e, ir.Call) and e.name in _ALLOCATORS


def _counter_read_later(function: ir.Function, s: ir.Stmt) -> Problem | None:
    """A loop of `s` whose counter is declared before it and read after it (``int i; for (i = 0;
    ...) ...; cnt = i;``): generated loops count with their own variables, so `s` is not modeled."""
    outside = {f.var for f in _fors(s) if not f.declares_var}
    if not outside:
        return None
    end = (s.range.end_line, s.range.end_col)
    for v in _reads(function.body, outside):
        if (v.range.line, v.range.col) >= end:
            message = f"`{v.name}` is read after the loop it counts; its value there is not modeled"
            return Problem("UnsupportedStatement", message, v.range)
    return None


def _fors(s: ir.Stmt) -> list[ir.For]:
    return ([s] if isinstance(s, ir.For) else []) + [f for c in ir.sub_statements(s) for f in _fors(c)]


def _reads(block: tuple[ir.Stmt, ...], names: set[str]) -> list[ir.Var]:
    """The reads of `names` in `block`, except in loops that count with them (a new value)."""
    out: list[ir.Var] = []
    for s in block:
        if isinstance(s, ir.For) and s.var in names:
            continue
        exprs = [getattr(s, f) for f in ("value", "init", "cond", "expr") if isinstance(getattr(s, f, None), ir.Expr)]
        if isinstance(s, ir.Assign) and isinstance(s.target, ir.Subscript):
            exprs.append(s.target)
        out += [e for x in exprs for e in ir.walk_expr(x) if isinstance(e, ir.Var) and e.name in names]
        out += _reads(ir.sub_statements(s), names)
    return out


def _opaque_call(s: ir.Stmt) -> bool:
    """A call of a function hexplore does not see, as a statement of its own outside any loop
    (`scale(n, &C[0][0]);` between two nests): in a region it would only keep the region's nests
    on the CPU (`HostCall`), and beside it it runs in the same order."""
    return isinstance(s, ir.ExprStmt) and isinstance(s.expr, ir.Call) and s.expr.signature is not None


def _has_loop(s: ir.Stmt) -> bool:
    if isinstance(s, ir.For | ir.OtherLoop):
        return True
    return any(_has_loop(c) for c in ir.sub_statements(s))


@dataclass
class _Scanner:
    function: ir.Function
    regions: list[RegionInfo] = field(default_factory=list)
    remarks: list[Remark] = field(default_factory=list)
    _seen: set[tuple[str, object]] = field(default_factory=set)
    fresh: set[str] = field(default_factory=set)

    @functools.cached_property
    def directed(self) -> frozenset[int]:
        """The lines of the loops a ``#pragma hexplore`` line is above."""
        return frozenset(d.loop_line for d in self.function.directives)

    def scan(self, block: tuple[ir.Stmt, ...], symbols: dict[str, ir.CType]) -> None:
        run: list[ir.Stmt] = []
        for s in block:
            if isinstance(s, ir.Decl):
                symbols[s.name] = s.type
                if _is_allocation(s.init):
                    self.fresh.add(s.name)
            if _opaque_call(s):  # between the nests, host code: each nest may still go to the GPU
                self.flush(run, symbols)
                run = []
                continue
            directed = _has_loop(s) and s.range.line in self.directed
            if directed:  # a `#pragma hexplore` line decides this nest: a region of its own
                self.flush(run, symbols)
                run = []
            result = check_region(self.function, (s,), symbols, frozenset(self.fresh))
            late = _counter_read_later(self.function, s)
            if late is not None:
                result = [late]
            if isinstance(result, RegionInfo) or (isinstance(s, ir.Decl) and s.init is None):
                run.append(s)
                if directed:
                    self.flush(run, symbols)
                    run = []
                continue
            self.flush(run, symbols)
            run = []
            if _has_loop(s):
                assert isinstance(result, list)
                self.reject(result)
                self.descend(s, symbols)
        self.flush(run, symbols)

    def descend(self, s: ir.Stmt, symbols: dict[str, ir.CType]) -> None:
        inner = dict(symbols)
        if isinstance(s, ir.For):
            inner[s.var] = ir.Scalar("int")
        if isinstance(s, ir.If):
            self.scan(s.then, dict(inner))
            self.scan(s.other, dict(inner))
        else:
            self.scan(ir.sub_statements(s), inner)

    def flush(self, run: list[ir.Stmt], symbols: dict[str, ir.CType]) -> None:
        """Turn a run of modelable statements into regions: the whole run if it is one region,
        else the run from its first loop on (a leading `int n = N;` must stay outside, to keep
        `n` a parameter), else each loop nest alone."""
        if not any(_has_loop(s) for s in run):
            return
        fresh = frozenset(self.fresh)
        first_loop = next(k for k, s in enumerate(run) if _has_loop(s))
        for candidate in (run, run[first_loop:]):
            merged = check_region(self.function, tuple(candidate), symbols, fresh)
            if isinstance(merged, RegionInfo) and merged.statements:
                self.regions.append(merged)
                return
        for s in run:  # each loop nest is fine alone: keep them as separate regions
            if _has_loop(s):
                alone = check_region(self.function, (s,), symbols, fresh)
                assert isinstance(alone, RegionInfo)
                self.regions.append(alone)

    def reject(self, problems: list[Problem]) -> None:
        for p in problems:
            key = (p.reason, p.range)
            if key in self._seen:
                continue
            self._seen.add(key)
            self.remarks.append(
                missed(PASS, p.reason, p.message, p.range, self.function.name, **dict(p.args))
            )


def assumption_remarks(region: RegionInfo, function: str) -> list[Remark]:
    return [
        analysis(PASS, a.reason, a.message, a.range, function, **dict(a.args)) for a in region.assumptions
    ]
