"""Run hexplore's generated CUDA C — host code and kernels — on the CPU, against the original.

``compile --target cuda --always-offload`` gives ``<stem>_kernel.cu``, ``<stem>_kernel.hu``,
``<stem>_host.cu`` and ``<stem>_host.h``; the ``extern "C"`` host function takes the original
function's place. The harness rewrites each launch ``kernel0<<<grid, block>>>(args)`` into
``hx_cpu::launcher<barriers>(kernel0, grid, block)(args)`` (`barriers`: whether that kernel calls
``__syncthreads()``) and builds the files against ``include/cuda_runtime.h``, the CPU shim (no
nvcc header), with ``g++ -std=c++20 -x c++ -fsanitize=address``, and a driver that declares the
original's signature (a host function that differs is a conflicting declaration), reads every
argument from a file (scalars by value, arrays into buffers of exactly their size), calls the host
function and writes the arrays back (and the return value). Where the function is more than one
loop nest, ``compile`` also writes ``<stem>_host.c``, the source with each nest replaced by a call of
its host function: that file is built as C (gcc, AddressSanitizer) and linked in, every pair of
kernel and host files is included, and the driver calls the rewritten function. The reference (`core_compiler.runtime.reference`) gets the
same inputs (`runtime.inputs.make_inputs`) and `runtime.compare.compare_arrays` judges.

Each case runs in its own process with a time limit, so a segfault, an AddressSanitizer report
(with its stack), a CUDA error the host code checks (``HX_CHECK``), a barrier some threads skip
or an endless loop is a failed case that says what happened. Cases are built a few to one
executable, each in its own namespace (every build pays for g++'s start, the headers and the
sanitizer's link, about half a second), on a thread while the caller prepares the next ones; a
batch that does not compile is built again case by case, so that the error is the culprit's.
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import os
import re
import shutil
import struct
import subprocess
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core_compiler.analysis import AnalysisOptions, analyze_file
from core_compiler.codegen.host_calls import HOST_FILE
from core_compiler.compile import compile_file
from core_compiler.errors import NotCheckable
from core_compiler.frontend import ParseOptions
from core_compiler.pipeline import GpuOptions
from core_compiler.runtime.compare import Comparison, compare_arrays
from core_compiler.runtime.differential import reference_outputs, scop_values
from core_compiler.runtime.footprint import fit_layout
from core_compiler.runtime.inputs import make_inputs
from core_compiler.runtime.reference import build_reference, call_reference
from core_compiler.runtime.signature import ArraySlot, Layout, ScalarSlot, layout_for_source

INCLUDE = Path(__file__).resolve().parent / "include"
CXX = os.environ.get("CXX_CUDA_CPU", "g++")
CC = os.environ.get("CC_CUDA_CPU", "gcc")  # `<stem>_host.c`, the rewritten source, is C (VLA parameters)
C_FLAGS = ("-std=gnu11", "-O0", "-g", "-fno-omit-frame-pointer", "-fsanitize=address", "-w")
# -O0: at -O1 g++ takes 3x as long (10x with -fsanitize=undefined) on deriche's 19 kernels, and
# runs at PolyBench's MINI sizes take milliseconds either way
FLAGS = ("-std=c++20", "-x", "c++", "-O0", "-g", "-fno-omit-frame-pointer", "-fsanitize=address", "-pthread", "-w")
LEAKS = "detect_leaks=1"  # device memory never freed fails too, where LeakSanitizer works
BATCH = 8  # cases per executable
BUILD_TIMEOUT_S = 300
RUN_TIMEOUT_S = 60

_LAUNCH = re.compile(r"\b(\w+)\s*<<<(.+?)>>>\s*\(")
# a kernel's head: its launch bound (optional), its name
_KERNEL = re.compile(r"__global__\s+void\s+(?:__launch_bounds__\s*\(\s*(\d+)[^)]*\)\s*)?(\w+)\s*\(")


@dataclass(frozen=True, eq=False)
class CudaCpuCase:
    """One function's generated CUDA at one size, with its inputs and the reference's outputs."""

    name: str
    layout: Layout
    files: Mapping[str, str]  # file name -> text, as `compile` writes them
    inputs: Mapping[str, np.ndarray]
    expected: Mapping[str, np.ndarray]  # every array after the original ran on `inputs`
    source_dir: str = ""  # the source's folder: `<stem>_host.c` includes what it included

    @property
    def rewritten(self) -> str | None:
        """``<stem>_host.c`` where the function is more than one loop nest; None otherwise."""
        return next((n for n in self.files if n.endswith(HOST_FILE)), None)

    @property
    def kernels(self) -> int:
        return sum(len(kernel_traits(t)) for n, t in self.files.items() if n.endswith("_kernel.cu"))


@dataclass(frozen=True)
class CudaCpuResult:
    name: str
    comparison: Comparison | None  # None when the program did not build or run to its end
    kernels: int
    failure: str = ""  # the build's or the run's output

    @property
    def ok(self) -> bool:
        return self.comparison is not None and self.comparison.ok

    def report(self) -> str:
        return self.failure if self.comparison is None else self.comparison.report()


def unavailable() -> str | None:
    """Why the CUDA CPU shim cannot build or run sanitized programs here; None when it can."""
    return _probe(CXX)


@functools.cache
def _probe(cxx: str) -> str | None:
    if shutil.which(cxx) is None:
        return f"{cxx} is not installed"
    work = Path(tempfile.mkdtemp(dir=_work_dir()))
    (work / "probe.cc").write_text("#include <cuda_runtime.h>\nint main() { void *p; cudaMalloc(&p, 8); return cudaFree(p); }\n")
    try:
        _compile(work / "probe.cc", work / "probe")
        run = subprocess.run([str(work / "probe")], capture_output=True, text=True, timeout=RUN_TIMEOUT_S, env=_env())
    except (BuildFailed, OSError, subprocess.TimeoutExpired) as e:
        return f"the CUDA CPU shim does not build or run here: {e}"
    return None if run.returncode == 0 else f"a program built with AddressSanitizer does not run here: {run.stderr[-500:]}"


@functools.cache
def _leak_checks() -> bool:
    """Whether LeakSanitizer runs here (it needs ptrace, which some containers refuse)."""
    work = Path(tempfile.mkdtemp(dir=_work_dir()))
    (work / "leak.cc").write_text("#include <stdlib.h>\nint main() { return malloc(8) == 0; }\n")
    try:
        _compile(work / "leak.cc", work / "leak")
        env = {**os.environ, "ASAN_OPTIONS": LEAKS}
        run = subprocess.run([str(work / "leak")], capture_output=True, text=True, timeout=RUN_TIMEOUT_S, env=env)
    except (BuildFailed, OSError, subprocess.TimeoutExpired):
        return False
    return "detected memory leaks" in run.stderr


# ------------------------------------------------------------------------------------- cases


def prepare(
    path: str,
    function: str,
    params: Mapping[str, int | float],
    size_limits: Mapping[str, str | None] | None = None,
    parse: ParseOptions | None = None,
    gpu: GpuOptions | None = None,
    name: str | None = None,
) -> CudaCpuCase:
    """`function`'s CUDA (``compile --target cuda --always-offload``) and the original's outputs
    on the deterministic inputs; `NotCheckable` where it uses globals, or where it is one loop nest
    after scalar set-up that the host function, taking the function's place, leaves out."""
    layout = layout_for_source(path, function, params, size_limits=size_limits, options=parse)
    base = parse or ParseOptions()
    options = ParseOptions(base.include_dirs, layout.defines, base.extra_args)
    fa = analyze_file(path, parse_options=options, options=AnalysisOptions(), only=function)
    (fn,) = fa.functions
    layout = fit_layout(fn.function, fn.scops, layout)
    if any(s.glob for s in layout.slots):
        raise NotCheckable(f"`{function}` uses globals")
    files = compile_file(fa, "cuda", options=gpu, always_offload=True).files
    if not any(n.endswith(HOST_FILE) for n in files):  # the host function is `function`
        values = scop_values(fn.function, fn.scops, layout)
        if values.result is not None or values.prologue:
            raise NotCheckable(f"`{function}` computes scalars before its loops or returns a value")
    inputs = make_inputs(layout)
    expected = reference_outputs(call_reference(build_reference(path, layout), layout, inputs))
    return CudaCpuCase(name or function, layout, files, inputs, expected, str(Path(path).resolve().parent))


def run_cases(cases: Iterable[CudaCpuCase], batch: int = BATCH) -> dict[str, CudaCpuResult]:
    """Every case built and run, by name. `cases` may be a generator: each batch is built and run
    on a thread while the next ones are prepared."""
    futures: list[Future[list[CudaCpuResult]]] = []
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending: list[CudaCpuCase] = []
        for case in cases:
            alone = case.rewritten is not None or any(c.rewritten for c in pending)  # it defines the file's functions
            if alone or any(_host_function(c) == _host_function(case) for c in pending) or len(pending) == batch:
                futures.append(pool.submit(_build_and_run, pending))
                pending = []
            pending.append(case)
        if pending:
            futures.append(pool.submit(_build_and_run, pending))
        return {r.name: r for f in futures for r in f.result()}


def check_cuda_cpu(
    path: str,
    function: str,
    params: Mapping[str, int | float],
    size_limits: Mapping[str, str | None] | None = None,
    parse: ParseOptions | None = None,
) -> CudaCpuResult:
    """One case, built and run: ``check_cuda_cpu("tests/kernels/gemm.c", "kernel_gemm", {...})``."""
    case = prepare(path, function, params, size_limits, parse)
    return run_cases([case])[case.name]


def _host_function(case: CudaCpuCase) -> str:
    return case.layout.function


def _build_and_run(cases: Sequence[CudaCpuCase]) -> list[CudaCpuResult]:
    try:
        exe = build(cases)
    except BuildFailed as e:
        if len(cases) > 1:  # whose is it?
            return [r for c in cases for r in _build_and_run([c])]
        return [CudaCpuResult(cases[0].name, None, cases[0].kernels, f"build failed: {e}")]
    return [_run_case(exe, k, c) for k, c in enumerate(cases)]


def _run_case(exe: Path, index: int, case: CudaCpuCase) -> CudaCpuResult:
    try:
        actual = run(exe, index, case.layout, case.inputs)
    except RunFailed as e:
        return CudaCpuResult(case.name, None, case.kernels, f"run failed: {e}")
    return CudaCpuResult(case.name, compare_arrays(case.expected, actual), case.kernels)


# ----------------------------------------------------------------------------------- sources


def launches_on_cpu(host_cu: str, kernel_cu: str) -> str:
    """`host_cu` with each ``k<<<g, b>>>(`` as ``hx_cpu::launcher<barriers, bound>(k, g, b)(``."""
    traits = kernel_traits(kernel_cu)

    def launch(m: re.Match[str]) -> str:
        barriers, bound = traits.get(m[1], (False, 1024))
        return f"hx_cpu::launcher<{'true' if barriers else 'false'}, {bound}>({m[1]}, {m[2].strip()})("

    return _LAUNCH.sub(launch, host_cu)


def kernel_traits(kernel_cu: str) -> dict[str, tuple[bool, int]]:
    """Per kernel defined in `kernel_cu`: whether its body (the text up to the next kernel) calls
    ``__syncthreads()``, and its ``__launch_bounds__`` (1024 without)."""
    heads = [m for m in _KERNEL.finditer(kernel_cu) if _defines(kernel_cu, m)]
    ends = [m.start() for m in heads[1:]] + [len(kernel_cu)]
    return {m[2]: ("__syncthreads" in kernel_cu[m.end() : end], int(m[1] or 1024)) for m, end in zip(heads, ends, strict=True)}


def _defines(text: str, head: re.Match[str]) -> bool:
    """Whether the kernel head `head` starts a definition (its parameter list is followed by
    ``{``), not a declaration."""
    depth, k = 1, head.end()
    while depth and k < len(text):
        depth += {"(": 1, ")": -1}.get(text[k], 0)
        k += 1
    return text[k:].lstrip().startswith("{")


def _cxx(c_type: str) -> str:
    return "bool" if c_type == "_Bool" else c_type


def case_source(case: CudaCpuCase, directory: str) -> str:
    """The case's files, included in a namespace of their own with the original's prototype
    first, and ``run(in, out)``: per slot of the layout, its byte count (a uint64) and its bytes
    are read; the function is called; the arrays are written back in slot order, then what it
    returned."""
    layout = case.layout
    types = ", ".join(_cxx(s.c_type) + (" *" if isinstance(s, ArraySlot) else "") for s in layout.slots)
    lines = [
        "/* the original's signature: a host function that differs is a conflicting declaration */",
        f'extern "C" {_cxx(layout.returns)} {layout.function}({types or "void"});',
    ]
    for host, kernel in host_files(case.files):
        lines += [f'#include "{directory}/{kernel}"', f'#include "{directory}/{host}.cpu"']
    lines.append("static int run(FILE *in, FILE *out) {")
    args = []
    for k, slot in enumerate(layout.slots):
        var = f"hx_arg{k}"
        lines.append(f"  size_t {var}_bytes; void *{var}_p = hx_driver::slot(in, &{var}_bytes);")
        if isinstance(slot, ScalarSlot):
            lines.append(f"  {_cxx(slot.c_type)} {var}; memcpy(&{var}, {var}_p, sizeof {var}); free({var}_p);")
        else:
            lines.append(f"  {_cxx(slot.c_type)} *{var} = ({_cxx(slot.c_type)} *){var}_p;")
        args.append(var)
    call = f"{layout.function}({', '.join(args)})"
    lines.append(f"  {call};" if layout.returns == "void" else f"  {_cxx(layout.returns)} hx_returned = {call};")
    for k, slot in enumerate(layout.slots):
        if isinstance(slot, ArraySlot):
            lines += [f"  fwrite(hx_arg{k}, 1, hx_arg{k}_bytes, out);", f"  free(hx_arg{k});"]
    if layout.returns != "void":
        lines.append("  fwrite(&hx_returned, sizeof hx_returned, 1, out);")
    return "\n".join([*lines, "  return 0;", "}"])


def host_files(files: Mapping[str, str]) -> list[tuple[str, str]]:
    """Each ``<name>_host.cu`` with its ``<name>_kernel.cu``."""
    return [(n, n.removesuffix("_host.cu") + "_kernel.cu") for n in sorted(files) if n.endswith("_host.cu")]


DRIVER_HEAD = r"""#include <cuda_runtime.h>
namespace hx_driver {
/* One argument: its byte count, then its bytes, into a buffer of exactly that size. */
static void *slot(FILE *f, size_t *bytes) {
  unsigned long long n = 0;
  if (fread(&n, sizeof n, 1, f) != 1) { fprintf(stderr, "driver: short input\n"); exit(3); }
  void *p = malloc(n ? n : 1);
  if (n && fread(p, 1, n, f) != n) { fprintf(stderr, "driver: short input\n"); exit(3); }
  *bytes = n;
  return p;
}
}
"""


def driver(cases: Sequence[CudaCpuCase], directories: Sequence[str]) -> str:
    """``main(argc, argv)``: ``exe K IN OUT`` runs case K."""
    out = [DRIVER_HEAD]
    for k, (case, d) in enumerate(zip(cases, directories, strict=True)):
        out += [f"namespace hx_case{k} {{", case_source(case, d), "}"]
    calls = "".join(f"    case {k}: rc = hx_case{k}::run(in, out); break;\n" for k in range(len(cases)))
    out.append(
        "int main(int argc, char **argv) {\n"
        "  if (argc != 4) return 2;\n"
        '  FILE *in = fopen(argv[2], "rb"), *out = fopen(argv[3], "wb");\n'
        "  if (!in || !out) return 2;\n"
        "  int rc = 2;\n"
        f"  switch (atoi(argv[1])) {{\n{calls}  }}\n"
        "  fclose(in);\n  fclose(out);\n  return rc;\n}\n"
    )
    return "\n".join(out)


def _input_bytes(layout: Layout, inputs: Mapping[str, np.ndarray]) -> bytes:
    out = []
    for slot in layout.slots:
        if isinstance(slot, ScalarSlot):
            data = np.array([slot.value], dtype=slot.dtype).tobytes()
        else:
            data = np.ascontiguousarray(inputs[slot.name], dtype=slot.dtype).tobytes()
        out += [struct.pack("<Q", len(data)), data]
    return b"".join(out)


def _outputs(layout: Layout, data: bytes) -> dict[str, np.ndarray]:
    out, at = {}, 0
    for slot in layout.arrays:
        n = slot.size * slot.dtype.itemsize
        out[slot.name] = np.frombuffer(data[at : at + n], dtype=slot.dtype).reshape(slot.shape).copy()
        at += n
    dtype = layout.return_dtype
    if dtype is not None:
        out["return"] = np.frombuffer(data[at : at + dtype.itemsize], dtype=dtype)[0].copy()
    return out


# ---------------------------------------------------------------------------------- build, run


class BuildFailed(Exception):
    """A compiler or tool run by the harness failed (the shimmed CUDA did not build)."""


class RunFailed(Exception):
    """The program ran past its time limit or exited with a non-zero status."""


# printed once by AddressSanitizer's swapcontext interceptor; the shim tells it of each switch of
# stacks (__sanitizer_start_switch_fiber), which is what the false positives it warns of need
_FIBER_WARNING = re.compile(r"^==\d+==WARNING: ASan doesn't fully support makecontext/swapcontext.*\n?", re.M)


def without_fiber_warning(stderr: str) -> str:
    return _FIBER_WARNING.sub("", stderr)


@functools.cache
def _work_dir() -> Path:
    """A private directory (0700) for this process's sources and executables, removed at exit."""
    path = Path(tempfile.mkdtemp(prefix="hexplore-cuda-cpu-"))
    atexit.register(shutil.rmtree, path, True)
    return path


def _env() -> dict[str, str]:
    return {**os.environ, "ASAN_OPTIONS": LEAKS if _leak_checks() else "detect_leaks=0"}


def _compile(source: Path, exe: Path, *extra: str, objects: Sequence[Path] = ()) -> None:
    """`source` as CUDA on the CPU: an executable (`objects` linked in), or with ``-c`` in `extra`
    an object."""
    linked = ["-x", "none", *map(str, objects)] if objects else []
    run_tool([CXX, *FLAGS, "-I", str(INCLUDE), *extra, str(source), *linked, "-o", str(exe)])


def _rewritten_object(case: CudaCpuCase, directory: str) -> Path:
    """``<stem>_host.c`` built as C, with the source's macros and include folders."""
    assert case.rewritten is not None
    obj = Path(directory) / f"{case.rewritten}.o"
    if not obj.exists():
        layout = case.layout
        flags = [*(f"-D{d}" for d in layout.defines), *(f"-I{d}" for d in layout.include_dirs)]
        if case.source_dir:
            flags.append(f"-I{case.source_dir}")
        tmp = obj.with_suffix(".tmp.o")
        run_tool([CC, *C_FLAGS, *flags, "-c", str(Path(directory) / case.rewritten), "-o", str(tmp)])
        os.replace(tmp, obj)
    return obj


def run_tool(cmd: list[str]) -> None:
    """A compiler or linker command; `BuildFailed` with its messages."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise BuildFailed(str(e)) from e
    if proc.returncode != 0:
        raise BuildFailed(f"{' '.join(cmd)}:\n{proc.stderr[-4000:]}")


def _write_case(case: CudaCpuCase) -> str:
    """The case's files (and the host file with launches on the CPU, ``.cpu``) in a directory
    named by their content."""
    files = dict(case.files)
    for host, kernel in host_files(case.files):
        files[f"{host}.cpu"] = launches_on_cpu(case.files[host], case.files[kernel])
    directory = _work_dir() / hashlib.sha256(repr(sorted(files.items())).encode()).hexdigest()[:20]
    if not directory.exists():
        tmp = Path(tempfile.mkdtemp(dir=_work_dir()))
        for name, text in files.items():
            (tmp / name).write_text(text, encoding="utf-8")
        os.replace(tmp, directory)
    return str(directory)


def build(cases: Sequence[CudaCpuCase]) -> Path:
    """One executable for `cases` (whose host functions have different names), cached by content."""
    directories = [_write_case(c) for c in cases]
    source = driver(cases, directories)
    exe = _work_dir() / f"run-{hashlib.sha256(source.encode()).hexdigest()[:20]}"
    if not exe.exists():
        path = exe.with_suffix(".cc")
        path.write_text(source, encoding="utf-8")
        tmp = exe.with_suffix(".tmp")
        objects = [_rewritten_object(c, d) for c, d in zip(cases, directories, strict=True) if c.rewritten]
        _compile(path, tmp, objects=objects)
        os.replace(tmp, exe)
    return exe


def run(exe: Path, index: int, layout: Layout, inputs: Mapping[str, np.ndarray], timeout_s: float = RUN_TIMEOUT_S) -> dict[str, np.ndarray]:
    """The arrays after case `index`'s host function ran on `inputs`; `RunFailed` otherwise."""
    with tempfile.TemporaryDirectory(dir=_work_dir()) as d:
        src, dst = Path(d) / "in", Path(d) / "out"
        src.write_bytes(_input_bytes(layout, inputs))
        cmd = [str(exe), str(index), str(src), str(dst)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, env=_env())
        except subprocess.TimeoutExpired as e:
            raise RunFailed(f"ran past {timeout_s} s") from e
        stderr = without_fiber_warning(proc.stderr)
        if proc.returncode != 0 or stderr.strip():
            raise RunFailed(f"exit status {proc.returncode}\n{proc.stdout[-2000:]}\n{stderr[-6000:]}")
        return _outputs(layout, dst.read_bytes())
