"""hexplore's generated CUDA C run through its own CUDA-on-the-CPU translation (issue 28).

`harness.py` builds ``compile --target cuda --always-offload``'s files with g++ against a shim of
the CUDA runtime. Here the same files are read by hexplore itself: the kernel file and the host
file as one ``.cu`` text (so that the launches give the kernels' block sizes), the host function
interpreted by `core_compiler.cuda.host` (cudaMalloc, cudaMemcpy, launches with grids computed
from the sizes), each kernel modeled over its grid and run in lockstep through the LLVM CPU path
(`core_compiler.cuda.cpu`). The host function is called as the original is: the original's
arguments in its order, so a host function whose parameters differ from the original's is an
error, not a quiet mismatch. The outputs are compared with the original's, as the shim's are.

Where the function is more than one loop nest, `compile` writes ``<stem>_host.c``, C that calls
one host function per nest: the translation runs host code, not C around it, so such a case is
`NotRun` with that reason.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from core_compiler.cuda.cpu import NotTranslatable, compiled
from core_compiler.cuda.host import HostCodeError, run_host
from core_compiler.frontend import ir, run_frontend
from core_compiler.runtime.compare import Comparison, compare_arrays
from core_compiler.runtime.signature import ArraySlot, Layout, ScalarSlot
from tests.cuda_cpu.harness import CudaCpuCase, host_files

_LOCAL_INCLUDE = re.compile(r'^#include ".*"$', re.MULTILINE)


class NotRun(Exception):
    """The case's CUDA is out of the translation's reach (the reason says which construct)."""


@dataclass(frozen=True)
class TranslatedResult:
    name: str
    comparison: Comparison | None  # None where it did not run to its end
    kernels: int  # kernels launched
    seconds: dict[str, float]  # "model" (kernels modeled and JIT-compiled), "run" (the host function)
    failure: str = ""

    @property
    def ok(self) -> bool:
        return self.comparison is not None and self.comparison.ok

    def report(self) -> str:
        return self.failure if self.comparison is None else self.comparison.report()


def combined_source(files: Mapping[str, str]) -> tuple[str, str]:
    """The one ``.cu`` text of the kernels and the host code (local includes dropped: the kernel
    header only declares what the kernel file defines), and the host function's file stem."""
    pairs = host_files(files)
    if len(pairs) != 1:
        raise NotRun(f"{len(pairs)} host files: the function is more than one loop nest")
    host, kernel = pairs[0]
    return _LOCAL_INCLUDE.sub("", files[kernel]) + "\n" + _LOCAL_INCLUDE.sub("", files[host]), host.removesuffix(".cu")


def run_translated(case: CudaCpuCase, directory: str) -> TranslatedResult:
    """`case`'s generated CUDA through the CPU translation, compared with the original's outputs;
    the combined source is written to `directory` (the front end reads files)."""
    start = time.perf_counter()
    seconds: dict[str, float] = {}
    try:
        if case.rewritten is not None:
            raise NotRun(f"`compile` wrote {case.rewritten}: C around several host functions, which the translation does not run")
        text, stem = combined_source(case.files)
        path = f"{directory}/{stem}.cu"
        with open(path, "w") as f:
            f.write(text)
        functions = {fn.name: fn for fn in run_frontend(path, text).functions}
        for fn in functions.values():
            if fn.is_cuda_kernel:
                compiled(fn)
        seconds["model"] = time.perf_counter() - start
        arrays, scalars = _arguments(case.layout, case.inputs, functions[case.layout.function])
        start = time.perf_counter()
        run = run_host(functions, case.layout.function, arrays, scalars)
        seconds["run"] = time.perf_counter() - start
    except (NotRun, NotTranslatable, HostCodeError) as e:
        return TranslatedResult(case.name, None, 0, seconds, f"{type(e).__name__}: {e}")
    if run.leaked:
        return TranslatedResult(case.name, None, len(run.launches), seconds, f"device memory never freed: {', '.join(run.leaked)}")
    actual = {s.name: arrays[s.name].reshape(s.shape) for s in case.layout.arrays}
    return TranslatedResult(case.name, compare_arrays(case.expected, actual), len(run.launches), seconds)


def _arguments(layout: Layout, inputs: Mapping[str, np.ndarray], host: ir.Function) -> tuple[dict[str, np.ndarray], dict[str, int | float]]:
    """The original's arguments bound to the host function's parameters in order, each of the
    original's type: a host function that takes other parameters is `HostCodeError`."""
    if len(host.params) != len(layout.slots):
        raise HostCodeError(f"the host function `{host.name}` takes {len(host.params)} parameters, the original "
                            f"{len(layout.slots)}: called as the original, its arguments land in the wrong parameters")  # fmt: skip
    arrays: dict[str, np.ndarray] = {}
    scalars: dict[str, int | float] = {}
    for param, slot in zip(host.params, layout.slots, strict=True):
        _same_type(param, slot)
        if isinstance(slot, ScalarSlot):
            scalars[param.name] = slot.value
        else:
            arrays[param.name] = np.ascontiguousarray(inputs[slot.name], dtype=slot.dtype).reshape(-1).copy()
    return arrays, scalars


def _same_type(param: ir.Param, slot: ScalarSlot | ArraySlot) -> None:
    typ = param.type
    if isinstance(slot, ArraySlot):
        ok = isinstance(typ, ir.Pointer) and str(typ.pointee).replace("const ", "") == slot.c_type
    else:
        ok = isinstance(typ, ir.Scalar) and typ.name == slot.c_type.replace("_Bool", "bool")
    if not ok:
        kind = "an array of" if isinstance(slot, ArraySlot) else "a"
        raise HostCodeError(f"the host function's parameter `{param.name}` is `{typ}` where the original's "
                            f"`{slot.name}` is {kind} `{slot.c_type}`")  # fmt: skip
