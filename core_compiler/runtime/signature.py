"""Argument layouts: what to pass to a C function, computed from its loop-IR signature.

A `Layout` says, per parameter, either the scalar value to pass or the numpy dtype and shape of
the array to pass. It holds everything the reference runner needs to call the function (the
C spelling of scalar types, the ``-D`` macros the source must be compiled with), so it is the one
object passed between layout, inputs, the reference runner and the worker.

Shapes:

- VLA dimensions (``double A[n][m + 1]``) evaluate their expressions on the parameter values, with
  C's integer semantics (``/`` and ``%`` truncate toward zero).
- Fixed dimensions (``double A[NI][NJ]``, which the front end sees as integer literals) are used as
  parsed. A kernel whose arrays are sized by macros must be parsed *and* compiled with the macros
  set to the sizes: `macro_defines` computes those ``-D`` values from suite-style ``size_limits``
  and `layout_for_source` parses with them, so that the layout and the build agree.
- Unknown extents — a plain pointer (``double *x``), an outermost ``[]`` or a pointer to an array
  (``double (*A)[m]``) — take a ``shapes`` override (``{"x": ("n", "m + 1")}``, entries are integers
  or arithmetic over the integer parameters). Without one, the array holds the ``reach`` the
  caller computed from the loop nest (`footprint.fit_layout`: ``a[i * n + k]`` touches n * n
  elements), else ``prod(v + 1 for every integer parameter v)`` elements, and at least
  ``DEFAULT_MIN_ELEMENTS``, the outermost extent rounded up to hold them.
- An array over ``MAX_ARRAY_BYTES`` is refused when the inputs are made (`inputs.make_array`), not
  here: a guess that `fit_layout` replaces allocates nothing.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from core_compiler.errors import LayoutError
from core_compiler.frontend import ParseOptions, ir, run_frontend

DEFAULT_MIN_ELEMENTS = 64
MAX_ARRAY_BYTES = 1 << 30  # refuse layouts that would allocate more than 1 GiB for one array
FLOAT_SCALAR_VALUES = (1.5, 1.2, 0.8, 1.1, 0.9, 1.3)  # floating scalars in parameter order

# C type spelling (as the front end canonicalizes it) -> numpy dtype character code.
_DTYPES = {
    "_Bool": "?",
    "bool": "?",
    "char": "b",
    "signed char": "b",
    "unsigned char": "B",
    "short": "h",
    "unsigned short": "H",
    "int": "i",
    "unsigned int": "I",
    "long": "l",
    "unsigned long": "L",
    "long long": "q",
    "unsigned long long": "Q",
    "float": "f",
    "double": "d",
    "long double": "g",
}

Dim = int | str  # a `shapes` entry: an extent, or arithmetic over integer parameters ("n + 1")


@dataclass(frozen=True)
class ScalarSlot:
    name: str
    c_type: str  # "int", "double", "unsigned long", ...
    dtype: np.dtype
    value: int | float
    glob: str = ""  # a global the function reads, "scalar" (set before the call) or "constant"; "": a parameter


@dataclass(frozen=True)
class ArraySlot:
    name: str
    c_type: str  # the element type
    dtype: np.dtype
    shape: tuple[int, ...]
    # "": a parameter. A global the function uses: "array" (copied in before the call and out
    # after it), "pointer" (pointed at the buffer), "table" (`const`: its `values` are the input)
    glob: str = ""
    values: tuple[int | float, ...] | None = None  # a table's initial values, flat

    @property
    def size(self) -> int:
        return math.prod(self.shape)


Slot = ScalarSlot | ArraySlot


@dataclass(frozen=True)
class Layout:
    """The arguments of one call of `function`, in parameter order."""

    function: str
    slots: tuple[Slot, ...]
    defines: tuple[str, ...] = ()  # "NI=13": compile (and parse) the source with these
    returns: str = "void"  # the C scalar return type, or "void" when there is none to read
    include_dirs: tuple[str, ...] = ()  # the user's -I: compile (and parse) the source with these

    @property
    def parse_options(self) -> ParseOptions:
        """How the source was parsed for this layout, so that a build and a new parse agree."""
        return ParseOptions(self.include_dirs, self.defines)

    @property
    def return_dtype(self) -> np.dtype | None:
        return None if self.returns == "void" else np.dtype(_DTYPES[self.returns])

    @property
    def arrays(self) -> tuple[ArraySlot, ...]:
        return tuple(s for s in self.slots if isinstance(s, ArraySlot))

    @property
    def scalars(self) -> tuple[ScalarSlot, ...]:
        return tuple(s for s in self.slots if isinstance(s, ScalarSlot))

    @property
    def ints(self) -> dict[str, int]:
        """The integer scalars' values: the sizes."""
        return {s.name: int(s.value) for s in self.scalars if s.dtype.kind in "iub"}

    def slot(self, name: str) -> Slot:
        for s in self.slots:
            if s.name == name:
                return s
        raise KeyError(name)


# ------------------------------------------------------------------------------------ macros


def macro_defines(
    values: Mapping[str, int | float], size_limits: Mapping[str, str | None]
) -> tuple[str, ...]:
    """``-D`` values (``"NI=13"``) that size each macro to its parameter's value.

    `size_limits` maps a parameter to the macro bounding it (or None); a macro bounding several
    parameters gets the largest of their values. Parameters without a value are skipped.
    """
    sizes: dict[str, int] = {}
    for param, macro in size_limits.items():
        if macro is None or param not in values:
            continue
        value = _as_int(values[param], param)
        sizes[macro] = max(sizes.get(macro, value), value)
    return tuple(f"{macro}={value}" for macro, value in sorted(sizes.items()))


def _as_int(value: int | float, name: str) -> int:
    if isinstance(value, bool) or int(value) != value:
        raise LayoutError(f"parameter {name!r} needs an integer value, got {value!r}")
    return int(value)


# ------------------------------------------------------------------------------------ layouts


def layout_for_source(
    path: str,
    function_name: str,
    values: Mapping[str, int | float],
    *,
    size_limits: Mapping[str, str | None] | None = None,
    shapes: Mapping[str, Sequence[Dim]] | None = None,
    text: str | None = None,
    options: ParseOptions | None = None,
) -> Layout:
    """Parse `path` with the macros of `size_limits` set to `values`, then `compute_layout`."""
    defines = macro_defines(values, size_limits or {})
    base = options or ParseOptions()
    parse_options = ParseOptions(base.include_dirs, base.defines + defines, base.extra_args)
    functions = run_frontend(path, text, parse_options).functions
    function = next((f for f in functions if f.name == function_name), None)
    if function is None:
        names = ", ".join(f.name for f in functions) or "none"
        raise LayoutError(f"no function {function_name!r} in {path} (functions: {names})")
    return compute_layout(function, values, shapes=shapes, defines=base.defines + defines, include_dirs=base.include_dirs)


def compute_layout(
    function: ir.Function,
    values: Mapping[str, int | float],
    *,
    shapes: Mapping[str, Sequence[Dim]] | None = None,
    defines: Sequence[str] = (),
    include_dirs: Sequence[str] = (),
    reach: Mapping[str, int] | None = None,
) -> Layout:
    """The layout of a call of `function` with integer parameters taken from `values`; an array
    of unknown outermost extent holds its `reach` (what the loops touch, counted in its flat
    buffer), where given.

    `function` must have been parsed with `defines` (they fix the macro-sized dimensions) and
    `include_dirs`; they are recorded in the layout so that the build uses the same. Floating scalars take their
    value from `values` when present, else the next of `FLOAT_SCALAR_VALUES`.
    """
    ints = _integer_values(function, values)
    shapes = shapes or {}
    slots: list[Slot] = []
    floats = iter(FLOAT_SCALAR_VALUES * len(function.inputs))
    for p in function.inputs:
        glob = p in function.globals
        if isinstance(p.type, ir.Scalar):
            slot: Slot = _scalar_slot(p.name, p.type, {**values, **_constant(p)}, ints, floats)
            slots.append(replace(slot, glob="constant" if p.constant else "scalar") if glob else slot)
        else:
            slot = _array_slot(function.name, p, ints, shapes.get(p.name), (reach or {}).get(p.name))
            slots.append(_global_array(slot, p) if glob else slot)
    return Layout(function.name, tuple(slots), tuple(defines), _returns(function.return_type), tuple(include_dirs))


def _global_array(slot: ArraySlot, p: ir.Param) -> ArraySlot:
    """`slot` of the global `p`: its buffer's contents are the global's before and after a call."""
    if isinstance(p.type, ir.Pointer):
        return replace(slot, glob="pointer")
    if any(d is None for d in p.type.dims):  # type: ignore[union-attr]
        raise LayoutError(f"the global array {p.name!r} is declared without its size here")
    if not p.constant:
        return replace(slot, glob="array")
    if p.values is None:
        raise LayoutError(f"the values of the constant table {p.name!r} are not numbers hexplore can read")
    return replace(slot, glob="table", values=p.values)


def _returns(ctype: ir.CType) -> str:
    """Scalar results are read back; anything else (void, pointers, structs) is ignored."""
    return ctype.name if isinstance(ctype, ir.Scalar) and ctype.name in _DTYPES else "void"


def _constant(p: ir.Param) -> dict[str, int | float]:
    """The value of a `const` global scalar: its initial value, whatever the caller gave."""
    if not p.constant:
        return {}
    if p.values is None:
        raise LayoutError(f"the initial value of the constant {p.name!r} is not a number hexplore can read")
    return {p.name: p.values[0]}


def _integer_values(function: ir.Function, values: Mapping[str, int | float]) -> dict[str, int]:
    out: dict[str, int] = {}
    for p in function.inputs:
        if isinstance(p.type, ir.Scalar) and p.type.is_integer:
            values = {**values, **_constant(p)}
            if p.name not in values:
                raise LayoutError(
                    f"missing a value for integer parameter {p.name!r} of {function.name}"
                )
            out[p.name] = _as_int(values[p.name], p.name)
    return out


def _scalar_slot(
    name: str,
    ctype: ir.Scalar,
    values: Mapping[str, int | float],
    ints: Mapping[str, int],
    floats: Iterator[float],
) -> ScalarSlot:
    dtype = _dtype(ctype, name)
    if ctype.is_integer:
        return ScalarSlot(name, ctype.name, dtype, ints[name])
    value = float(values[name]) if name in values else next(floats)
    return ScalarSlot(name, ctype.name, dtype, value)


def _dtype(ctype: ir.CType, name: str) -> np.dtype:
    if isinstance(ctype, ir.Scalar) and ctype.name in _DTYPES:
        return np.dtype(_DTYPES[ctype.name])
    raise LayoutError(f"parameter {name!r}: unsupported element type {ctype}")


def _array_slot(
    function: str, p: ir.Param, ints: Mapping[str, int], override: Sequence[Dim] | None, reach: int | None = None
) -> ArraySlot:
    elem, dims = _element_and_dims(p)
    dtype = _dtype(elem, p.name)
    if override is not None:
        shape = tuple(_eval_dim(d, ints, p.name) for d in override)
    else:
        inner = tuple(_eval_expr(d, ints, p.name) for d in dims[1:])
        outer = dims[0]
        first = _default_extent(ints, inner, reach) if outer is None else _eval_expr(outer, ints, p.name)
        shape = (first, *inner)
    return _checked(ArraySlot(p.name, str(elem), dtype, shape), function)


def _element_and_dims(p: ir.Param) -> tuple[ir.CType, tuple[ir.Expr | None, ...]]:
    """The element type and dimensions (None: unknown extent), outermost first."""
    t = p.type
    if isinstance(t, ir.Pointer):
        inner = t.pointee
        if isinstance(inner, ir.Array):
            return inner.elem, (None, *inner.dims)
        return inner, (None,)
    if isinstance(t, ir.Array):
        if any(d is None for d in t.dims[1:]):
            raise LayoutError(f"parameter {p.name!r}: only the outermost dimension may be []")
        return t.elem, t.dims
    raise LayoutError(f"parameter {p.name!r}: unsupported parameter type {t}")


def _default_extent(ints: Mapping[str, int], inner: tuple[int, ...], reach: int | None) -> int:
    guess = math.prod(v + 1 for v in ints.values()) if reach is None else reach
    total = max(DEFAULT_MIN_ELEMENTS, guess)
    row = math.prod(inner)
    return -(-total // row) if row else total


def _checked(slot: ArraySlot, function: str) -> ArraySlot:
    if any(d < 0 for d in slot.shape):
        raise LayoutError(f"{function}: array {slot.name!r} would have negative shape {slot.shape}")
    return slot


# ------------------------------------------------------------------------- dimension values


def _eval_dim(dim: Dim, ints: Mapping[str, int], name: str) -> int:
    if isinstance(dim, int):
        return dim
    try:
        tree = ast.parse(dim, mode="eval").body
    except SyntaxError as e:
        raise LayoutError(f"parameter {name!r}: bad shape entry {dim!r}") from e
    return _eval_py(tree, ints, name, dim)


_PY_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "/", ast.Mod: "%"}


def _eval_py(node: ast.expr, ints: Mapping[str, int], name: str, text: str) -> int:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.Name) and node.id in ints:
        return ints[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_eval_py(node.operand, ints, name, text)
    if isinstance(node, ast.BinOp) and type(node.op) in _PY_OPS:
        lhs = _eval_py(node.left, ints, name, text)
        rhs = _eval_py(node.right, ints, name, text)
        return _c_binary(_PY_OPS[type(node.op)], lhs, rhs, name)
    raise LayoutError(f"parameter {name!r}: cannot evaluate shape entry {text!r}")


def _eval_expr(expr: ir.Expr | None, ints: Mapping[str, int], name: str) -> int:
    """The value of a dimension expression of the loop IR, with C integer semantics."""
    if isinstance(expr, ir.IntLit):
        return expr.value
    if isinstance(expr, ir.Var) and expr.name in ints:
        return ints[expr.name]
    if isinstance(expr, ir.Cast):
        return _eval_expr(expr.operand, ints, name)
    if isinstance(expr, ir.Unary) and expr.op in _UNARY:
        return _UNARY[expr.op](_eval_expr(expr.operand, ints, name))
    if isinstance(expr, ir.Binary):
        lhs, rhs = _eval_expr(expr.lhs, ints, name), _eval_expr(expr.rhs, ints, name)
        return _c_binary(expr.op, lhs, rhs, name)
    if isinstance(expr, ir.Ternary):
        cond = _eval_expr(expr.cond, ints, name)
        return _eval_expr(expr.then if cond else expr.other, ints, name)
    raise LayoutError(f"parameter {name!r}: cannot evaluate dimension {expr}")


_UNARY = {"-": lambda v: -v, "+": lambda v: v, "~": lambda v: ~v, "!": lambda v: int(not v)}


_BINARY: dict[str, Callable[[int, int], int]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "&": operator.and_,
    "|": operator.or_, "^": operator.xor, "<<": operator.lshift, ">>": operator.rshift,
    "<": lambda a, b: int(a < b), "<=": lambda a, b: int(a <= b), ">": lambda a, b: int(a > b),
    ">=": lambda a, b: int(a >= b), "==": lambda a, b: int(a == b), "!=": lambda a, b: int(a != b),
    "&&": lambda a, b: int(bool(a and b)), "||": lambda a, b: int(bool(a or b)),
}  # fmt: skip


def _c_binary(op: str, a: int, b: int, name: str) -> int:
    if op in ("/", "%"):
        if b == 0:
            raise LayoutError(f"parameter {name!r}: division by zero in a dimension")
        q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
        return q if op == "/" else a - q * b
    if op not in _BINARY or (op in ("<<", ">>") and not 0 <= b < 64):
        raise LayoutError(f"parameter {name!r}: cannot evaluate {a} {op} {b} in a dimension")
    return _BINARY[op](a, b)
