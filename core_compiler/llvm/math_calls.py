"""C math calls (``sqrt``, ``exp``, ``fmax``, …) for the host and for NVPTX.

Both targets use LLVM intrinsics where the target lowers them to instructions (``llvm.sqrt``,
``llvm.fabs``, ``llvm.maxnum`` for ``fmax``, which has C's NaN rule). The rest differ: the host
uses intrinsics that become libm calls, resolved by the JIT in the running process; NVPTX has no
libm, so those become libdevice's ``__nv_exp`` & co. (`nvptx.py` links libdevice in).

Names ending in ``f`` (``expf``) take and return ``float``; the others ``double``, after C's
argument conversions.
"""

from __future__ import annotations

from dataclasses import dataclass

import llvmlite.ir as ir

from core_compiler.errors import UnsupportedCall
from core_compiler.llvm.c_types import CValue, common_type, convert, is_float, llvm_type

_BASE = frozenset(
    ["sqrt", "exp", "exp2", "log", "log2", "log10", "pow", "fabs", "sin", "cos", "tan", "tanh",
     "sinh", "cosh", "asin", "acos", "atan", "atan2", "floor", "ceil", "fmax", "fmin", "fmod",
     "round", "trunc", "cbrt", "hypot", "erf"]
)  # fmt: skip
_HOST_INTRINSICS = {
    "sqrt": "llvm.sqrt", "fabs": "llvm.fabs", "exp": "llvm.exp", "exp2": "llvm.exp2",
    "log": "llvm.log", "log2": "llvm.log2", "log10": "llvm.log10", "pow": "llvm.pow",
    "sin": "llvm.sin", "cos": "llvm.cos", "floor": "llvm.floor", "ceil": "llvm.ceil",
    "trunc": "llvm.trunc", "round": "llvm.round", "fmax": "llvm.maxnum", "fmin": "llvm.minnum",
}  # fmt: skip
_NVPTX_INTRINSICS = {
    k: _HOST_INTRINSICS[k] for k in ("sqrt", "fabs", "floor", "ceil", "trunc", "fmax", "fmin")
}
_ARITY = {"pow": 2, "atan2": 2, "fmax": 2, "fmin": 2, "fmod": 2, "hypot": 2}


@dataclass(frozen=True)
class MathLibrary:
    """Where math calls go: `intrinsics` by base name, else `prefix + name` (libm, libdevice)."""

    intrinsics: dict[str, str]
    prefix: str  # "" for libm, "__nv_" for libdevice

    def call(self, b: ir.IRBuilder, name: str, args: list[CValue]) -> CValue:
        if name in ("abs", "labs", "min", "max"):
            return _integer_or_generic(b, self, name, args)
        base, ctype = _split(name)
        if len(args) != _ARITY.get(base, 1):
            raise UnsupportedCall(f"`{name}` takes {_ARITY.get(base, 1)} arguments, got {len(args)}")
        vals = [convert(b, a, ctype).value for a in args]
        ty = llvm_type(ctype)
        if base in self.intrinsics:
            fname = f"{self.intrinsics[base]}.{'f64' if ctype == 'double' else 'f32'}"
        else:
            fname = self.prefix + name
        fn = declare(b.module, fname, ty, [ty] * len(vals))
        return CValue(b.call(fn, vals), ctype)


HOST_MATH = MathLibrary(_HOST_INTRINSICS, "")
NVPTX_MATH = MathLibrary(_NVPTX_INTRINSICS, "__nv_")


def _split(name: str) -> tuple[str, str]:
    if name in _BASE:
        return name, "double"
    if name.endswith("f") and name[:-1] in _BASE:
        return name[:-1], "float"
    raise UnsupportedCall(f"call to `{name}` is not supported by the LLVM backend")


def _integer_or_generic(b: ir.IRBuilder, lib: MathLibrary, name: str, args: list[CValue]) -> CValue:
    """``abs``/``labs`` on integers; ``min``/``max`` (CUDA's overloads) on any arithmetic type."""
    if name in ("abs", "labs"):
        v = convert(b, args[0], "int" if name == "abs" else "long")
        neg = b.icmp_signed("<", v.value, ir.Constant(v.value.type, 0))
        return CValue(b.select(neg, b.neg(v.value), v.value), v.ctype)
    ctype = common_type(args[0].ctype, args[1].ctype)
    x, y = (convert(b, a, ctype) for a in args)
    if is_float(ctype):
        return lib.call(b, "fmax" if name == "max" else "fmin", [x, y]) if ctype == "double" else \
            lib.call(b, "fmaxf" if name == "max" else "fminf", [x, y])
    cmp = b.icmp_unsigned if ctype.startswith("unsigned") else b.icmp_signed
    pick = cmp(">" if name == "max" else "<", x.value, y.value)
    return CValue(b.select(pick, x.value, y.value), ctype)


def declare(module: ir.Module, name: str, ret: ir.Type, args: list[ir.Type], variadic: bool = False) -> ir.Function:
    """The function `name` of `module`, declared on first use (`variadic`: ``printf(fmt, ...)``)."""
    existing = module.globals.get(name)
    if isinstance(existing, ir.Function):
        return existing
    return ir.Function(module, ir.FunctionType(ret, args, var_arg=variadic), name=name)
