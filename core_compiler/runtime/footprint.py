"""Where the loops reach in memory at given sizes, and whether the arrays as declared hold it.

- `check_footprint`: `NotCheckable` when the loops run past an array of fixed declared size;
- `fit_layout`: room in the arrays of unknown outermost extent (``double *a``) for what the loops touch;
- `default_sizes`: a size for every integer input of a function that keeps its loops inside its arrays.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import islpy as isl

from core_compiler.analysis import ScopAnalysis
from core_compiler.errors import LayoutError, NotCheckable
from core_compiler.frontend import ir
from core_compiler.runtime.signature import Layout, compute_layout
from core_compiler.scop.affine import Affine, isl_name
from core_compiler.scop.model import Scop


def fit_layout(fn: ir.Function, scops: tuple[ScopAnalysis, ...], layout: Layout) -> Layout:
    """`layout` with every array of unknown outermost extent (``double *a``, ``double A[][m]``)
    sized for the elements the loop nests touch at its sizes: the signature alone guesses from
    the integer parameters, too small for a flat n x n matrix ``a[i * n + k]`` and far too large
    where integers are values (``a[i] * k0``), not sizes."""
    ints = layout.ints
    reach: dict[str, int] = {}
    for sa in scops:
        for name, (_, high) in flat_reach(sa.scop, ints).items():
            reach[name] = max(reach.get(name, 0), high + 1)
    if not reach:
        return layout
    values = {s.name: s.value for s in layout.scalars}
    return compute_layout(
        fn, values, defines=layout.defines, include_dirs=layout.include_dirs, reach=reach
    )


def flat_reach(scop: Scop, ints: Mapping[str, int]) -> dict[str, tuple[int, int]]:
    """The lowest and highest flat (row-major) index each array of the SCoP is touched at, at the
    parameter values `ints`; arrays with an inner extent not known there are left out."""
    params = _fixed_params(scop, ints)
    out: dict[str, tuple[int, int]] = {}
    for decl in scop.arrays:
        elements = _touched(scop, decl.name).intersect_params(params)
        strides = _strides(decl.extents, ints)
        if decl.kind != "array" or elements.is_empty() or strides is None:
            continue
        box = isl.Set.from_union_set(elements)
        flat = isl.Aff.zero_on_domain(isl.LocalSpace.from_space(box.get_space()))
        for d, stride in enumerate(strides):
            flat = flat.set_coefficient_val(
                isl.dim_type.in_, d, isl.Val.int_from_si(scop.ctx, stride)
            )
        low, high = box.min_val(flat), box.max_val(flat)
        if low.is_int() and high.is_int():  # else a size of the loops is not known here
            out[decl.name] = (low.to_python(), high.to_python())
    return out


def box_volume(scop: Scop, ints: Mapping[str, int]) -> int:
    """The elements of the boxes around what the SCoP touches of each array at `ints`, summed
    (each box from the lowest to the highest index touched in each dimension; 0 for an array
    whose bounds are not known there)."""
    params = _fixed_params(scop, ints)
    total = 0
    for decl in scop.arrays:
        elements = _touched(scop, decl.name).intersect_params(params)
        if elements.is_empty():
            continue
        box = isl.Set.from_union_set(elements)
        bounds = [(box.dim_min_val(d), box.dim_max_val(d)) for d in range(box.dim(isl.dim_type.set))]
        if not all(low.is_int() and high.is_int() for low, high in bounds):
            continue
        volume = 1
        for low, high in bounds:
            volume *= high.to_python() - low.to_python() + 1
        total += volume
    return total


def _strides(extents: tuple[Affine | None, ...], ints: Mapping[str, int]) -> list[int] | None:
    """Row-major strides of an array whose inner extents are known at `ints`."""
    strides = [1]
    for e in reversed(extents[1:]):
        if e is None or e.atoms or not e.names <= ints.keys():
            return None
        strides.insert(0, strides[0] * (e.const + sum(c * ints[n] for n, c in e.coeffs if isinstance(n, str))))
    return strides


def _touched(scop: Scop, array: str) -> isl.UnionSet:
    """The elements of `array` the statements touch, leaving out the opaque calls' may-accesses
    of a whole array (what the callee touches is its own business: the caller sizes the array)."""
    exact = isl.UnionMap.empty(isl.Space.params_alloc(scop.ctx, 0))
    for s in scop.statements:
        for a in (*s.reads, *s.writes):
            if a.array == array and not a.may:
                exact = exact.union(isl.UnionMap.from_map(a.relation))
    return exact.intersect_domain(scop.domains()).range()


def check_footprint(scop: Scop, layout: Layout, ints: Mapping[str, int] | None = None) -> None:
    """`NotCheckable` when the loops, at the layout's parameter values, reach outside an array as
    declared (``double A[N][N]`` with the default ``N`` run at a larger ``n``): running that
    would write past the array, so the user gets the element and the declaration instead. An
    array the SCoP indexes with more subscripts than its C type has (``a[i * n + k]`` read as
    ``a[i][k]``) is checked in its flat buffer. `ints`: the sizes, when not only the layout's."""
    ints = dict(ints) if ints is not None else layout.ints
    params = _fixed_params(scop, ints)
    flat = flat_reach(scop, ints)
    sizes = ", ".join(f"{k}={v}" for k, v in ints.items())
    for slot in layout.arrays:
        elements = _touched(scop, slot.name).intersect_params(params)
        if elements.is_empty() or len(slot.shape) == 0:
            continue
        box = isl.Set.from_union_set(elements)
        if box.dim(isl.dim_type.set) == len(slot.shape):
            vals = [(box.dim_min_val(d), box.dim_max_val(d)) for d in range(len(slot.shape))]
            if not all(v.is_int() for pair in vals for v in pair):
                raise NotCheckable(
                    f"a size of the loops that touch `{slot.name}` has no value here; give it with --param"
                )
            reach = [(low.to_python(), high.to_python()) for low, high in vals]
            extents = list(slot.shape)
        else:
            reach, extents = [flat.get(slot.name, (0, 0))], [slot.size]
        for d, ((low, high), extent) in enumerate(zip(reach, extents, strict=True)):
            if low < 0 or high >= extent:
                where = f"dimension {d + 1}" if len(extents) > 1 else "the flat buffer"
                raise NotCheckable(
                    f"at {sizes} the loops reach index {low if low < 0 else high} of {where} of `{slot.name}`, "
                    f"which has {extent} elements there (its declared size); give the array room "
                    f"(e.g. -D for the macro that sizes it) or run smaller sizes"
                )


def _fixed_params(scop: Scop, ints: Mapping[str, int]) -> isl.Set:
    params = scop.context.params()
    for name, value in ints.items():
        k = params.find_dim_by_name(isl.dim_type.param, isl_name(name))
        if k >= 0:
            params = params.fix_val(isl.dim_type.param, k, isl.Val.int_from_si(scop.ctx, value))
    return params


def size_inputs(fn: ir.Function) -> tuple[str, ...]:
    """The inputs of `fn` a user sets the size of: its integer parameters and the integer,
    non-``const`` globals it reads."""
    return tuple(
        p.name
        for p in fn.inputs
        if isinstance(p.type, ir.Scalar) and p.type.is_integer and not p.constant
    )


def default_sizes(fn: ir.Function, scops: Sequence[ScopAnalysis], given: Mapping[str, int], default: int) -> dict[str, int]:
    """A value for every `size_inputs` of `fn`: the `given` one, else `default`, halved while
    the loops would reach past an array of fixed declared size (PolyBench's ``double
    C[NI][NJ]`` built with ``-DMINI_DATASET``, where ``NI`` is 20, gets 16). Where no size fits
    (a `given` one is too large), `default`: the run then names the element out of bounds."""
    tries = [{n: int(given.get(n, size)) for n in size_inputs(fn)} for size in _halvings(max(default, 1))]
    return next((values for values in tries if _fits(fn, scops, values)), tries[0])


def _halvings(size: int) -> list[int]:
    return [size >> k for k in range(size.bit_length())]


def _fits(fn: ir.Function, scops: Sequence[ScopAnalysis], values: Mapping[str, int]) -> bool:
    try:
        layout = fit_layout(fn, tuple(scops), compute_layout(fn, values))
    except LayoutError:
        return True  # not a question of size: the run that follows says what it is
    try:
        for sa in scops:
            check_footprint(sa.scop, layout)
    except NotCheckable:
        return False
    return True
