"""The CPU JIT: optimize a `CpuModule` at O3 for the host, compile it with MCJIT, call it on numpy
buffers through ctypes.

libgomp is loaded into the process (``load_library_permanently``) before the first compile, so
the JIT resolves ``GOMP_parallel`` and ``omp_get_*`` to the real OpenMP runtime; `set_threads`
calls ``omp_set_num_threads`` on it, which is what later parallel regions of this thread use.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import llvmlite.binding as llvm
import numpy as np

from core_compiler.errors import UnsupportedCall
from core_compiler.llvm import c_types as ct
from core_compiler.llvm.cpu_lowering import CpuModule
from core_compiler.llvm.target import host_target_machine, optimize, parse
from core_compiler.runtime.reference import address_getter

_CALL = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


@functools.cache
def libgomp() -> ctypes.CDLL:
    """The OpenMP runtime, loaded once for ctypes and for the JIT's symbol resolution."""
    name = ctypes.util.find_library("gomp") or "libgomp.so.1"
    llvm.load_library_permanently(name)
    return ctypes.CDLL(name, mode=ctypes.RTLD_GLOBAL)


def set_threads(n: int) -> None:
    """The number of threads of the next ``GOMP_parallel`` calls made from this thread."""
    libgomp().omp_set_num_threads(ctypes.c_int(n))


def max_threads() -> int:
    """The number of threads the next ``GOMP_parallel`` call from this thread starts."""
    return int(libgomp().omp_get_max_threads())


@dataclass(frozen=True, eq=False)
class JitFunction:
    """A compiled `CpuModule`; keeps its execution engine (and so the code) alive."""

    module: CpuModule
    optimized_ir: str
    engine: llvm.ExecutionEngine
    entry: Callable[[int], None]

    def __call__(self, values: Mapping[str, object]) -> float:
        """Call with arrays (C-contiguous numpy, written in place) and scalars by name; seconds."""
        keep = [_argument(spec.kind, spec.ctype, values[spec.name]) for spec in self.module.args]
        argv = (ctypes.c_void_p * max(1, len(keep)))(*(k.ctypes.data for k in keep))
        start = time.perf_counter()
        self.entry(ctypes.addressof(argv))
        return time.perf_counter() - start


@functools.lru_cache(maxsize=64)
def jit_compile(module: CpuModule, library: str | None = None, light: bool = False) -> JitFunction:
    """Optimize and compile `module`; the same module (by value) is compiled once per process,
    which spares the O3 pipeline for a size-independent kernel run at several sizes. The functions
    its opaque calls call (`CpuModule.externals`) are those of the shared `library` (the C
    compiler's build of the original). `light`: `optimize`'s lighter pipeline."""
    libgomp()
    machine = host_target_machine()
    ref = parse(module.ir, machine)
    optimize(ref, machine, light)
    text = str(ref)
    engine = llvm.create_mcjit_compiler(ref, machine)
    _resolve(module.externals, library)
    engine.finalize_object()
    address = engine.get_function_address(module.entry)
    return JitFunction(module, text, engine, _CALL(address))


def _resolve(names: tuple[str, ...], library: str | None) -> None:
    """Bind each of `names` to its address in `library`, right before an engine links: the
    symbol table is the process's, and two files may define a function of the same name."""
    if not names:
        return
    if library is None:
        raise UnsupportedCall(f"`{names[0]}` is defined in the user's C code, which this run did not build")
    lib = _library(library)
    for name in names:
        getter = getattr(lib, address_getter(name))
        getter.restype = ctypes.c_void_p
        llvm.add_symbol(name, getter())


@functools.cache
def _library(path: str) -> ctypes.CDLL:
    return ctypes.CDLL(path, mode=ctypes.RTLD_LOCAL)


def _argument(kind: str, ctype: str, value: object) -> np.ndarray:
    if kind == "array":
        arr = value
        if not isinstance(arr, np.ndarray) or not arr.flags.c_contiguous:
            raise ValueError("arrays must be C-contiguous numpy arrays")
        return arr
    dtype = np.int32 if kind == "int" else scalar_dtype(ctype)
    return np.array([value], dtype=dtype)


def scalar_dtype(ctype: str) -> np.dtype:
    t = ct.canonical(ctype)
    if ct.is_float(t):
        return np.dtype(np.float64 if t == "double" else np.float32)
    bits = ct.llvm_type(t).width  # type: ignore[attr-defined]
    return np.dtype(f"{'u' if ct.is_unsigned(t) else 'i'}{bits // 8}")
