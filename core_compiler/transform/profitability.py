"""Is offloading a SCoP to the GPU worth it? Polly-ACC's profitability model.

Two checks, both cheap and both said as remarks (pass ``profitability``):

1. **Static**: a SCoP is considered for offload when it has two nested loops, or one loop whose body
   has at least `MIN_OPS_SINGLE_LOOP` operations per iteration. A lone ``y[i] = a*x[i] + y[i]`` costs
   more in launch and transfer than it saves (remark ``TooLittleWork``).
2. **Dynamic work**: the number of instructions the SCoP executes, over-approximated per statement by
   the box around its domain (per dimension ``max - min + 1``, at least 0) times the statement's
   operations per instance (`statement_ops`). With sizes known at compile time (fixed by the context,
   constant loop bounds, or values the caller passes) it is a number compared with the threshold
   (``OffloadProfitable`` / ``KeptOnCpu``); otherwise the host code decides at run time with
   `Profitability.condition_c` (``RuntimeOffloadCheck``).

Example: gemm's ``C[i][j] *= beta`` (3 operations) and ``C[i][j] += alpha*A[i][k]*B[k][j]`` (7) give
``3*ni*nj + 7*ni*nj*nk``: about 4.3e5 at ni=40, nj=50, nk=30, below the default threshold
10*512*512 = 2.6e6, so gemm at those sizes stays on the CPU.

Extents are isl `PwAff`s over the parameters; products of them are not affine, so the estimate keeps
a list of products (`Term`) and evaluates them numerically (exact integers in Python, ``double`` in C).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import islpy as isl

from core_compiler.errors import InternalError, UsageError
from core_compiler.frontend import ir
from core_compiler.remarks import Remark, analysis, missed, passed
from core_compiler.scop.affine import isl_name
from core_compiler.scop.model import Scop
from core_compiler.transform.counting import pw_aff_c

if TYPE_CHECKING:  # the cost model imports this module; the decision only reads a report
    from core_compiler.transform.gpu_cost import GpuCost

PASS = "profitability"

DEFAULT_THRESHOLD = 10 * 512 * 512
"""Dynamic instructions below which offloading does not pay (Polly-ACC's default, 2621440)."""

MIN_OPS_SINGLE_LOOP = 20
"""Operations per iteration a loop nest of depth one needs to be considered (Polly's `InstCount`)."""

_PARAM: Any = isl.dim_type.param


@dataclass(frozen=True)
class ProfitabilityOptions:
    threshold: int = DEFAULT_THRESHOLD
    min_ops_single_loop: int = MIN_OPS_SINGLE_LOOP


# ----------------------------------------------------------------------------- counting operations


def expr_ops(e: ir.Expr) -> int:
    """Operations to evaluate `e`: one per operator, array load (`Subscript`) and call.

    Literals, scalar variables (registers) and casts are free; subscript arithmetic counts, as it
    is address arithmetic the processor executes. ``alpha * A[i][k+1]`` is 3: ``*``, ``+``, a load.
    """
    own = 0
    if isinstance(e, ir.Subscript | ir.Binary | ir.Ternary | ir.Call | ir.OpaqueExpr):
        own = 1
    elif isinstance(e, ir.Unary):
        own = 0 if e.op == "+" else 1
    return own + sum(expr_ops(sub) for sub in ir.sub_expressions(e))


def statement_ops(node: ir.Assign | ir.ExprStmt) -> int:
    """Operations per instance of an assignment: its value, the store, and for ``op=`` a load and op.

    ``C[i][j] += alpha * A[i][k] * B[k][j]`` is 7 (2 loads, 2 multiplications, the load of C, the
    addition, the store). Every instance counts at least 1: even ``t = 0.0`` is a move. An opaque
    call counts its arguments and the call.
    """
    if isinstance(node, ir.ExprStmt):
        return max(1, expr_ops(node.expr))
    target = node.target
    in_memory = isinstance(target, ir.Subscript)
    address = sum(expr_ops(i) for i in target.indices) if isinstance(target, ir.Subscript) else 0
    store = 1 if in_memory else 0
    update = 0 if node.op == "=" else 1 + (1 if in_memory else 0)
    return max(1, expr_ops(node.value) + address + store + update)


# ------------------------------------------------------------------------------ the work estimate


@dataclass(frozen=True, eq=False)
class Term:
    """One statement's share: `ops` times the product of its box `extents` (PwAffs over parameters)."""

    statement: str
    ops: int
    extents: tuple[isl.PwAff, ...]


@dataclass(frozen=True, eq=False)
class WorkEstimate:
    """Dynamic instructions of a SCoP as a function of its parameters: the sum of the `terms`.

    `params` are the parameters' C names in isl order; the extents are simplified under the SCoP's
    context (and any values the estimate was specialized to), so they are exact only there.
    """

    params: tuple[str, ...]
    space: isl.Space  # the parameter space of every extent
    terms: tuple[Term, ...]

    def involved(self) -> tuple[str, ...]:
        """The parameters the estimate still depends on, in isl order."""
        return tuple(
            p
            for i, p in enumerate(self.params)
            if any(e.involves_dims(_PARAM, i, 1) for t in self.terms for e in t.extents)
        )

    def evaluate(self, values: Mapping[str, int] | None = None) -> int:
        """The estimate at `values` (C names); parameters it does not involve may be left out.

        Example: gemm's estimate at ``{"ni": 40, "nj": 50, "nk": 30}`` is 3*40*50 + 7*40*50*30
        = 426000.
        """
        values = dict(values or {})
        missing = [p for p in self.involved() if p not in values]
        if missing:
            raise UsageError(f"the work estimate needs a value for {', '.join(missing)}")
        point = _point(self.space, self.params, values)
        return sum(t.ops * _product(_eval(e, point) for e in t.extents) for t in self.terms)

    def to_c(self) -> str:
        """A C expression of type ``double`` over the parameters (64-bit integer extents).

        Each extent is isl's piecewise expression as nested ``?:`` over ``(long long)`` parameters,
        e.g. ``(((long long)n >= 2) ? ((long long)n - 1) : 0)``, converted to ``double`` before the
        product, so neither ``int`` nor 64-bit overflow: ``3.0 * (double)(...) * (double)(...) + ...``.
        """
        names = dict(zip(_isl_names(self.space), self.params, strict=True))
        parts = [_term_c(t, self.space, names) for t in self.terms if t.ops]
        return " + ".join(parts) or "0.0"

    def to_text(self) -> str:
        """The estimate as a polynomial for people, for large sizes: ``7*ni*nj*nk + 3*ni*nj``.

        Extents that are affine for large sizes become polynomials; others stay as their C text.
        """
        names = dict(zip(_isl_names(self.space), self.params, strict=True))
        total: _Poly = {}
        for t in self.terms:
            poly: _Poly = {(): Fraction(t.ops)}
            for e in t.extents:
                poly = _poly_mul(poly, _extent_poly(e, self.space, names))
            total = _poly_add(total, poly)
        return _poly_text(total)


def estimate_work(scop: Scop, fixed: Mapping[str, int] | None = None) -> WorkEstimate:
    """The box over-approximation of the dynamic instructions of `scop`.

    `fixed` pins parameters (C names) to values: the extents are simplified under them, so the
    estimate no longer involves those parameters.
    """
    context = _pinned_context(scop, fixed or {})
    space = context.get_space()
    terms = tuple(
        Term(s.name, statement_ops(s.info.node), _box_extents(s.domain, context))
        for s in scop.statements
    )
    params = tuple(_c_name(scop, name) for name in _isl_names(space))
    return WorkEstimate(params, space, terms)


def _box_extents(domain: isl.Set, context: isl.Set) -> tuple[isl.PwAff, ...]:
    hull = isl.Set.from_basic_set(domain.simple_hull())
    zero = isl.PwAff.zero_on_domain(isl.LocalSpace.from_space(context.get_space()))
    out = []
    for d in range(hull.dim(isl.dim_type.set)):
        high, low = hull.dim_max(d), hull.dim_min(d)
        if high.involves_nan() or low.involves_nan():
            raise InternalError(f"unbounded dimension {d} in {domain}")
        one = isl.PwAff.val_on_domain(high.domain(), isl.Val.one(domain.get_ctx()))
        extent = high.sub(low).add(one).union_max(zero)
        out.append(extent.gist_params(context).coalesce())
    return tuple(out)


def _pinned_context(scop: Scop, fixed: Mapping[str, int]) -> isl.Set:
    context = scop.context.params()
    for i, name in enumerate(_isl_names(context.get_space())):
        c_name = _c_name(scop, name)
        if c_name in fixed:
            context = context.fix_val(_PARAM, i, isl.Val.int_from_si(scop.ctx, fixed[c_name]))
    # Values outside what hexplore assumes (a negative size): simplify nothing, the box is still exact.
    return isl.Set.universe(context.get_space()) if context.is_empty() else context


def fixed_by_context(scop: Scop) -> dict[str, int]:
    """Parameters the SCoP's context pins to one value (C names)."""
    context = scop.context.params().detect_equalities()
    out = {}
    for i, name in enumerate(_isl_names(context.get_space())):
        v = context.plain_get_val_if_fixed(_PARAM, i)
        if v.is_int():
            out[_c_name(scop, name)] = int(v.to_python())
    return out


def _c_name(scop: Scop, isl_id: str) -> str:
    return next((p for p in scop.params if isl_name(p) == isl_id), isl_id)


def _isl_names(space: isl.Space) -> list[str]:
    return [str(space.get_dim_name(_PARAM, i)) for i in range(space.dim(_PARAM))]


def _point(space: isl.Space, params: tuple[str, ...], values: Mapping[str, int]) -> isl.Point:
    point = isl.Point.zero(space)
    for i, p in enumerate(params):
        v = isl.Val.int_from_si(space.get_ctx(), values.get(p, 0))
        point = point.set_coordinate_val(_PARAM, i, v)
    return point


def _eval(extent: isl.PwAff, point: isl.Point) -> int:
    v = extent.eval(point)
    if not v.is_int():
        raise InternalError(f"extent {extent} is not an integer at {point}")
    return int(v.to_python())


def _product(factors: Any) -> int:
    out = 1
    for f in factors:
        out *= f
    return out


# ------------------------------------------------------------------------------ rendering C


def _term_c(t: Term, space: isl.Space, names: Mapping[str, str]) -> str:
    factors = [f"{t.ops}.0"]
    for e in t.extents:
        text = pw_aff_c(e, space, names, wide=True)
        factors.append(f"{text}.0" if text.isdigit() else f"(double)({text})")
    return " * ".join(factors)


# ----------------------------------------------------------------------- rendering for people

_Poly = dict[tuple[str, ...], Fraction]
"""A polynomial: sorted monomial (atoms, repeated for powers) -> coefficient."""


def _extent_poly(pa: isl.PwAff, space: isl.Space, names: Mapping[str, str]) -> _Poly:
    pieces = [aff for _, aff in pa.get_pieces() if not _is_zero(aff)]
    if not pieces:
        return {}
    if len(pieces) == 1 and pieces[0].dim(isl.dim_type.div) == 0:
        aff = pieces[0]
        poly: _Poly = {(): _fraction(aff.get_constant_val())}
        for i, name in enumerate(_isl_names(space)):
            poly[(names.get(name, name),)] = _fraction(aff.get_coefficient_val(_PARAM, i))
        return {m: c for m, c in poly.items() if c}
    return {(f"({_readable_c(pa, space, names)})",): Fraction(1)}


def _is_zero(aff: isl.Aff) -> bool:
    return bool(aff.is_cst() and aff.get_constant_val().is_zero())


def _readable_c(pa: isl.PwAff, space: isl.Space, names: Mapping[str, str]) -> str:
    """isl's own C text (fewest parentheses, ``min``/``max``/``floord``), with the C names."""
    for i, name in enumerate(_isl_names(space)):
        if names.get(name, name) != name:
            pa = pa.set_dim_id(_PARAM, i, isl.Id(names[name], context=space.get_ctx()))
    universe = isl.Set.universe(pa.get_domain_space())
    return str(isl.AstBuild.from_context(universe).expr_from_pw_aff(pa).to_C_str())


def _fraction(v: isl.Val) -> Fraction:
    return Fraction(int(v.get_num_si()), int(v.get_den_val().to_python()))


def _poly_add(a: _Poly, b: _Poly) -> _Poly:
    out = dict(a)
    for m, c in b.items():
        out[m] = out.get(m, Fraction(0)) + c
    return {m: c for m, c in out.items() if c}


def _poly_mul(a: _Poly, b: _Poly) -> _Poly:
    out: _Poly = {}
    for ma, ca in a.items():
        for mb, cb in b.items():
            m = tuple(sorted(ma + mb))
            out[m] = out.get(m, Fraction(0)) + ca * cb
    return {m: c for m, c in out.items() if c}


def _poly_text(poly: _Poly) -> str:
    """``{("ni","nj","nk"): 7, ("ni","nj"): 3}`` -> ``7*ni*nj*nk + 3*ni*nj`` (highest degree first)."""
    text = ""
    for m in sorted(poly, key=lambda m: (-len(m), m)):
        c = poly[m]
        mag = "*".join([*([str(abs(c))] if abs(c) != 1 or not m else []), *m])
        sign = "-" if c < 0 else "+"
        text = f"{text} {sign} {mag}" if text else (f"-{mag}" if c < 0 else mag)
    return text or "0"


def format_count(n: float) -> str:
    """A count for people: exact below 1000, else one decimal in scientific form (``2.6e6``)."""
    if abs(n) < 1000:
        return str(int(n))
    mantissa, exponent = f"{n:.1e}".split("e")
    return f"{mantissa}e{int(exponent)}"


# -------------------------------------------------------------------------------- the decision


@dataclass(frozen=True, eq=False)
class Profitability:
    """Where a SCoP runs: ``offload``, ``cpu``, or ``runtime`` (the host code tests `condition_c`).

    `value` is the estimate when it was known at compile time; `condition_c` is a C expression over
    the parameters that is true when offloading pays (only for ``runtime``).
    """

    decision: str
    estimate: WorkEstimate
    threshold: int
    condition_c: str | None
    remark: Remark
    value: int | None = None
    gpu_seconds: float | None = None  # the cost model's estimates, where sizes were known
    cpu_seconds: float | None = None


def decide(
    scop: Scop,
    options: ProfitabilityOptions | None = None,
    values: Mapping[str, int] | None = None,
    cost: GpuCost | None = None,
) -> Profitability:
    """Decide whether to offload `scop`; `values` fixes parameters (C names) at compile time.

    With the `cost` of its GPU program (`gpu_cost.gpu_cost`), a SCoP with enough work is also kept
    on the CPU where the estimated GPU time is not below one CPU core's (``KeptOnCpu`` says why,
    with the numbers); where sizes are known only at run time, that comparison joins the host
    code's check.
    """
    options = options or ProfitabilityOptions()
    known = {**fixed_by_context(scop), **{p: v for p, v in (values or {}).items() if p in scop.params}}
    estimate = estimate_work(scop, known)
    on_host = host_call(scop)
    if on_host is not None:
        return Profitability("cpu", estimate, options.threshold, None, on_host)
    too_little = static_check(scop, options)
    if too_little is not None:
        return Profitability("cpu", estimate, options.threshold, None, too_little)
    if set(estimate.involved()) <= set(known):
        first = _at_compile_time(scop, estimate, options.threshold, known, values or {})
    else:
        first = _at_run_time(scop, estimate, options.threshold)
    if cost is None or first.decision == "cpu":
        return first
    if set(cost.params.values()) <= set(known):
        return _weighed(scop, first, cost, known, values or {})
    return _weighed_at_run_time(scop, first, cost)


def host_call(scop: Scop) -> Remark | None:
    """``HostCall`` when the SCoP calls a function of the program (an opaque call): GPU code cannot."""
    call = next((c for s in scop.statements for c in s.info.opaque_calls), None)
    if call is None:
        return None
    return missed(
        PASS,
        "HostCall",
        f"kept on CPU: the loops call `{call.name}`, a function of your program that GPU code cannot call",
        call.range,
        scop.function,
        callee=call.name,
    )


def static_check(scop: Scop, options: ProfitabilityOptions | None = None) -> Remark | None:
    """``TooLittleWork`` when the SCoP has no two nested loops and no loop with enough operations."""
    options = options or ProfitabilityOptions()
    depth = max((len(s.info.loops) for s in scop.statements), default=0)
    if depth >= 2:
        return None
    per_loop: dict[str, int] = {}
    for s in scop.statements:
        if s.info.loops:
            key = s.info.loops[0].id
            per_loop[key] = per_loop.get(key, 0) + statement_ops(s.info.node)
    ops = max(per_loop.values(), default=0)
    if depth == 1 and ops >= options.min_ops_single_loop:
        return None
    what = (
        f"a single loop with {ops} operation{'s' if ops != 1 else ''} per iteration"
        if depth == 1
        else "code without a loop"
    )
    return missed(
        PASS,
        "TooLittleWork",
        f"kept on CPU: {what} is too little work to offload (offloading needs two nested loops or "
        f"at least {options.min_ops_single_loop} operations per iteration)",
        scop.range,
        scop.function,
        ops_per_iteration=ops,
        loop_depth=depth,
    )


def _at_compile_time(
    scop: Scop, estimate: WorkEstimate, threshold: int, known: Mapping[str, int], given: Mapping[str, int]
) -> Profitability:
    value = estimate.evaluate(known)
    where = ", ".join(f"{p} = {v}" for p, v in sorted(given.items()) if p in estimate.params)
    suffix = f" (with {where})" if where else ""
    args = {"estimate": value, "threshold": threshold, "condition": None}
    if value >= threshold:
        message = (
            f"offload pays: about {format_count(value)} dynamic instructions, at least the offload "
            f"threshold of {format_count(threshold)}{suffix}"
        )
        r = passed(PASS, "OffloadProfitable", message, scop.range, scop.function, **args)
        return Profitability("offload", estimate, threshold, None, r, value)
    message = (
        f"kept on CPU: about {format_count(value)} dynamic instructions, below the offload "
        f"threshold of {format_count(threshold)}{suffix}"
    )
    r = missed(PASS, "KeptOnCpu", message, scop.range, scop.function, **args)
    return Profitability("cpu", estimate, threshold, None, r, value)


def _at_run_time(scop: Scop, estimate: WorkEstimate, threshold: int) -> Profitability:
    condition = f"({estimate.to_c()}) >= {threshold}.0"
    text = estimate.to_text()
    message = (
        f"offload decided at run time: on the GPU when {text} >= {threshold} dynamic instructions, "
        f"else on the CPU; the host code checks this before launching"
    )
    r = analysis(
        PASS,
        "RuntimeOffloadCheck",
        message,
        scop.range,
        scop.function,
        estimate=text,
        threshold=threshold,
        condition=condition,
    )
    return Profitability("runtime", estimate, threshold, condition, r)


# ------------------------------------------------------------------------ against the CPU


def _weighed(
    scop: Scop, first: Profitability, cost: GpuCost, known: Mapping[str, int], given: Mapping[str, int]
) -> Profitability:
    from core_compiler.transform.gpu_cost import explain, seconds_text

    at = cost.values(known)
    gpu, cpu = cost.gpu_time().at(at), cost.cpu_time().at(at)
    where = ", ".join(f"{p} = {v}" for p, v in sorted(given.items()) if p in scop.params)
    suffix = f" (with {where})" if where else ""
    args = {**first.remark.args, "gpu_seconds": gpu, "cpu_seconds": cpu}
    if gpu >= cpu:
        message = f"kept on the CPU: {explain(cost, at)}{suffix}"
        r = missed(PASS, "KeptOnCpu", message, scop.range, scop.function, **args)
        return Profitability("cpu", first.estimate, first.threshold, None, r, first.value, gpu, cpu)
    message = (
        f"{first.remark.message}; estimated {seconds_text(gpu)} on the GPU against "
        f"{seconds_text(cpu)} on {cost.cpu.name}"
    )
    r = passed(PASS, "OffloadProfitable", message, scop.range, scop.function, **args)
    return Profitability(first.decision, first.estimate, first.threshold, None, r, first.value, gpu, cpu)


def _weighed_at_run_time(scop: Scop, first: Profitability, cost: GpuCost) -> Profitability:
    from core_compiler.transform.gpu_cost import faster_on_gpu_c, formula_summary

    faster = faster_on_gpu_c(cost)
    condition = f"({first.condition_c}) && {faster}" if first.condition_c else faster
    work = f" when {first.estimate.to_text()} >= {first.threshold} dynamic instructions and" if first.condition_c else " when"
    message = (
        f"offload decided at run time: on the GPU{work} the GPU's estimated time is below "
        f"{cost.cpu.name}'s ({formula_summary(cost)}), else on the CPU; the host code checks this "
        f"before launching"
    )
    args = {**first.remark.args, "condition": condition}
    r = analysis(PASS, "RuntimeOffloadCheck", message, scop.range, scop.function, **args)
    return Profitability("runtime", first.estimate, first.threshold, condition, r)
