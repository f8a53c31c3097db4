"""C arithmetic types in LLVM: storage types, the usual arithmetic conversions, casts.

A statement body is lowered with C's typing so that the JIT computes what gcc computes: ``int``
arithmetic in 32 bits, ``float`` stays ``float``, ``(double)(i * j)`` multiplies in ``int`` first.
Values carry their C type as a `CValue`; loop counters and parameters, which the isl AST handles
in the wider index type, enter statements as ``int`` like the C source declares them.
"""

from __future__ import annotations

from dataclasses import dataclass

import llvmlite.ir as ir

from core_compiler.errors import UnsupportedType

_INT_BITS = {
    "_Bool": 8, "bool": 8, "char": 8, "signed char": 8, "unsigned char": 8, "short": 16,
    "unsigned short": 16, "int": 32, "unsigned int": 32, "long": 64, "unsigned long": 64,
    "long long": 64, "unsigned long long": 64,
}  # fmt: skip
_RANK = {8: 1, 16: 2, 32: 3, 64: 4}
FLOATING = ("float", "double")


@dataclass(frozen=True)
class CValue:
    """An LLVM value and the C type it has in the source (``int``, ``double``, …)."""

    value: ir.Value
    ctype: str


def canonical(ctype: str) -> str:
    """``signed int`` → ``int``; ``long int`` → ``long``: the spellings `_INT_BITS` knows."""
    words = [w for w in ctype.split() if w not in ("const", "volatile", "restrict")]
    if "int" in words and len(words) > 1 and words != ["unsigned", "int"]:  # `long int`, `signed int`
        words.remove("int")
    if words[:1] == ["signed"] and words != ["signed", "char"]:
        words = words[1:] or ["int"]
    text = " ".join(words)
    return {"unsigned": "unsigned int"}.get(text, text)


def llvm_type(ctype: str) -> ir.Type:
    """The storage type of a C scalar type (``_Bool`` is a byte, as in memory)."""
    c = canonical(ctype)
    if c == "double":
        return ir.DoubleType()
    if c == "float":
        return ir.FloatType()
    if c in _INT_BITS:
        return ir.IntType(_INT_BITS[c])
    raise UnsupportedType(f"type `{ctype}` is not supported by the LLVM backend")


def is_float(ctype: str) -> bool:
    return canonical(ctype) in FLOATING


def is_unsigned(ctype: str) -> bool:
    c = canonical(ctype)
    return c.startswith("unsigned") or c in ("_Bool", "bool")


def promoted(ctype: str) -> str:
    """Integer promotion: anything narrower than ``int`` computes as ``int``."""
    c = canonical(ctype)
    if c in _INT_BITS and _INT_BITS[c] < 32:
        return "int"
    return c


def common_type(a: str, b: str) -> str:
    """The usual arithmetic conversions of C (C11 6.3.1.8) for two arithmetic types."""
    a, b = promoted(a), promoted(b)
    for f in ("double", "float"):
        if f in (a, b):
            return f
    ra, rb = _RANK[_INT_BITS[a]], _RANK[_INT_BITS[b]]
    if ra != rb:  # the wider type wins (64-bit types hold every 32-bit value, signed or not)
        return a if ra > rb else b
    return a if is_unsigned(a) else b


def convert(b: ir.IRBuilder, v: CValue, to: str) -> CValue:
    """``(to) v`` with C semantics (float → int truncates toward zero)."""
    src, dst = canonical(v.ctype), canonical(to)
    if src == dst:
        return CValue(v.value, dst)
    st, dt = llvm_type(src), llvm_type(dst)
    if dst in ("_Bool", "bool"):
        return CValue(b.zext(truth(b, v), dt), dst)
    if is_float(src) and is_float(dst):
        out = b.fpext(v.value, dt) if dst == "double" else b.fptrunc(v.value, dt)
    elif is_float(src):
        out = b.fptoui(v.value, dt) if is_unsigned(dst) else b.fptosi(v.value, dt)
    elif is_float(dst):
        out = b.uitofp(v.value, dt) if is_unsigned(src) else b.sitofp(v.value, dt)
    else:
        out = _int_resize(b, v.value, st, dt, is_unsigned(src))
    return CValue(out, dst)


def _int_resize(b: ir.IRBuilder, v: ir.Value, st: ir.Type, dt: ir.Type, unsigned: bool) -> ir.Value:
    assert isinstance(st, ir.IntType) and isinstance(dt, ir.IntType)
    if st.width == dt.width:
        return v
    if st.width > dt.width:
        return b.trunc(v, dt)
    return b.zext(v, dt) if unsigned else b.sext(v, dt)


def truth(b: ir.IRBuilder, v: CValue) -> ir.Value:
    """``v != 0`` as an ``i1``."""
    if isinstance(v.value.type, ir.IntType) and v.value.type.width == 1:
        return v.value
    if is_float(v.ctype):
        return b.fcmp_unordered("!=", v.value, ir.Constant(v.value.type, 0.0))
    return b.icmp_signed("!=", v.value, ir.Constant(v.value.type, 0))


def from_truth(b: ir.IRBuilder, flag: ir.Value) -> CValue:
    """A comparison result as C's ``int`` 0 or 1."""
    return CValue(b.zext(flag, ir.IntType(32)), "int")


def opaque(v: ir.Value, addrspace: int = 0) -> ir.Value:
    """`v` (a global or an ``alloca``) typed as an opaque ``ptr``: llvmlite gives those typed
    pointers and then checks loads and stores through GEPs of them against the wrong type."""
    v.type = ir.PointerType(addrspace=addrspace)  # type: ignore[attr-defined]
    return v
