"""The OpenCL data layout choice (PPOpenCL's): a 2-D array that a kernel reads with a stride
between neighbouring work-items is read from a transposed copy instead, made once before the
kernels by a small transpose kernel on the device.

syrk's ``C[i][j] += alpha * A[i][k] * A[j][k]`` maps ``j`` to the work-items' x: neighbouring
work-items read ``A[j][k]`` and ``A[j+1][k]``, ``m`` elements apart. Read from
``transposed_A[k][j]`` they are neighbours::

    __kernel void make_transposed_A(__global double *restrict A, __global double *restrict transposed_A, int m, int n)
    { … transposed_A[c * (40) + r] = A[r * (40) + c]; … }     /* launched first */
    … (alpha * A[((T0 + t0)) * (40) + (c2)]) * transposed_A[((c2)) * (48) + (T1 + t1)] …

Only where it is legal without keeping the copy consistent: no statement of the loop nest writes
the array (so the copy made before the first kernel stays equal to it), and the array's extents
are known from the parameters the kernels get. Reads of an array a kernel keeps in shared memory
or registers are copied there from the array itself and left alone. The choice is
``GpuOptions.layout`` ("transposed"), a choice of the OpenCL tuning space kept only where
`hexplore tune` measures it faster; `TransposedLayout` says what was chosen, with the strides
before and after.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from core_compiler.codegen.statements import array_layouts, extent_c
from core_compiler.scop.affine import Affine
from core_compiler.scop.model import Scop
from core_compiler.scop.region import ArrayDecl
from core_compiler.transform.gpu_cost import (
    _thread_x_iterator as thread_x_iterator,  # gpu_cost's coalescing test
)
from core_compiler.transform.gpu_mapping import GpuProgram, Kernel

LAYOUTS = ("default", "transposed")
BLOCK = 16  # work-items per axis of the transpose kernel's work-groups


@dataclass(frozen=True)
class StridedRead:
    kernel: str
    statement: str
    text: str  # the access as written: ``A[j][k]``
    loop: str  # the loop counter the work-items' x runs along: ``j``
    node: object  # `AccessInfo.node`: which access of the statement


@dataclass(frozen=True)
class Transposed:
    """One array read from its transposed copy ``copy[k][j]`` (= ``array[j][k]``)."""

    array: str
    copy: str  # the copy's buffer
    kernel: str  # the transpose kernel, launched before the others
    elem_type: str
    extents: tuple[Affine, Affine]  # the array's, outermost first
    rows: str  # C text of extents[0], as the kernels spell it
    cols: str
    reads: tuple[StridedRead, ...]

    def element(self, idx: list[str]) -> str:
        """Element ``[idx0][idx1]`` of the array, read from the copy."""
        return f"{self.copy}[({idx[1]}) * {self.rows} + {idx[0]}]"

    def size(self, ints: Mapping[str, int]) -> tuple[int, int]:
        """Rows and columns at these parameter values."""
        rows, cols = (_value(e, ints) for e in self.extents)
        return max(rows, 0), max(cols, 0)

    def source(self, params: tuple[str, ...]) -> str:
        """The transpose kernel: one work-item per element, x along the array's rows."""
        t, ctype = self.copy, self.elem_type
        args = ", ".join([f"__global {ctype} *restrict {self.array}", f"__global {ctype} *restrict {t}",
                          *(f"int {p}" for p in params)])  # fmt: skip
        c, r = "(int)get_global_id(0)", "(int)get_global_id(1)"
        return (f"__kernel void {self.kernel}({args})\n{{\n"
                f"  if ({r} < {self.rows} && {c} < {self.cols})\n"
                f"    {t}[({c}) * {self.rows} + {r}] = {self.array}[({r}) * {self.cols} + {c}];\n}}\n")  # fmt: skip

    def message(self) -> str:
        """``A is read from a transposed copy, transposed_A: A[j][k] in kernel0 (S1), along j: …``"""
        stride = _bare(self.cols)
        where = "; ".join(f"{r.text} in {r.kernel} ({r.statement}), along {r.loop}" for r in self.reads)
        return (f"{self.array} is read from a transposed copy, {self.copy}, made once before the kernels by "
                f"{self.kernel}: {where}: neighbouring work-items read elements {stride} apart in {self.array}, "
                f"1 apart in the copy; legal because no statement of the loop nest writes {self.array}")  # fmt: skip


def transposed_reads(gpu: GpuProgram) -> tuple[tuple[Transposed, ...], tuple[str, ...]]:
    """The arrays worth reading from a transposed copy, and why others strided along x are not."""
    scop = gpu.scop
    written = {a.array for s in scop.statements for a in s.writes}
    decls = {a.name: a for a in scop.arrays}
    layouts = array_layouts(scop)
    found: dict[str, list[StridedRead]] = {}
    refused: dict[str, str] = {}
    for k in gpu.kernels:
        for read, array in _strided(gpu, k):
            why = _illegal(decls.get(array), scop, written)
            if why:
                refused.setdefault(array, why)
            else:
                found.setdefault(array, []).append(read)
    out = []
    for array, reads in found.items():
        decl, lay = decls[array], layouts[array]
        e0, e1 = decl.extents
        assert e0 is not None and e1 is not None
        out.append(Transposed(array, gpu.names.copy("transposed", array), f"make_{gpu.names.copy('transposed', array)}",
                              decl.elem_type, (e0, e1), extent_c(lay.extent[0]), extent_c(lay.extent[1]), tuple(reads)))  # fmt: skip
    return tuple(out), tuple(f"{a}: {why}" for a, why in refused.items())


def _strided(gpu: GpuProgram, k: Kernel) -> list[tuple[StridedRead, str]]:
    """The reads of kernel `k` from global memory whose rows differ between neighbouring work-items
    (x) and whose columns do not, ``A[j][k]`` with ``j`` on x, with their arrays."""
    subtree = gpu.kernel_schedules.get(k.name)
    if not k.parallel or not k.block or subtree is None:
        return []
    promoted = {p.array for p in k.promotions}
    out = []
    for name in k.statements:
        stmt = gpu.scop.statement(name)
        x = thread_x_iterator(gpu.scop, k, subtree, name)
        if x is None:
            continue
        it = stmt.iterators[x[0]]
        for a in stmt.reads:
            info = a.info
            if info.whole or info.array in promoted or len(info.indices) != 2:
                continue
            row, col = info.indices
            if it in col.variables() or abs(row.coeff(it)) != 1 or any(it in t.variables() for t in _atom_parts(row)):
                continue
            out.append((StridedRead(k.name, name, info.text, it, info.node), info.array))
    return out


def _atom_parts(a: Affine) -> list[Affine]:
    return [part for atom in a.atoms for part in atom.operands()]


def _illegal(decl: ArrayDecl | None, scop: Scop, written: set[str]) -> str:
    if decl is None or decl.kind != "array":
        return "not an array of the function"
    if decl.name in written:
        return "the loop nest writes it, so a copy made before the kernels would go stale"
    extents = decl.extents
    if len(extents) != 2 or any(e is None or e.atoms or not e.variables() <= set(scop.params) for e in extents):
        return "its extents are not known from the loop nest's parameters"
    return ""


def _value(a: Affine, ints: Mapping[str, int]) -> int:
    return a.const + sum(c * ints[str(t)] for t, c in a.coeffs)


def _bare(text: str) -> str:
    return text[1:-1] if text.startswith("(") and text.endswith(")") else text
