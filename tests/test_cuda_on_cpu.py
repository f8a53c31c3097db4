"""CUDA on the CPU (issue 28, item 3): each race-free kernel of the CUDA suite (`tests/cuda_input`)
translated by `core_compiler.cuda.cpu` (lockstep loops over its model, LLVM, OpenMP over blocks)
against the same kernel run by the CUDA runtime shim of `tests/cuda_cpu` (g++, the threads of a
block as fibers that `__syncthreads()` switches between) and against its OpenCL counterpart on PoCL
(the kernel's text with CUDA's names turned into OpenCL's, `opencl_counterpart`): three
independent readings of CUDA's semantics, on the same inputs, with the launch of the file at sizes that are no multiple of the
block (37, 41). (`hexplore run` compares the translation on all cores with one thread.) Then the
same programs split over 1, 2 and 4 simulated devices (`core_compiler.cuda.devices`).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from core_compiler.cuda.cpu import NotTranslatable, compile_kernel, footprint
from core_compiler.cuda.host import bind, host_needs, run_host
from core_compiler.frontend import ir, run_frontend
from tests.cuda_cpu.harness import CXX, FLAGS, INCLUDE, kernel_traits, launches_on_cpu, unavailable

pytestmark = pytest.mark.slow

SUITE = Path(__file__).parent / "cuda_input" / "kernels"
FINDINGS = re.compile(r"//\s*expect:.*(DataRace|BarrierDivergence|CudaKernelNotModeled)")
KERNEL = re.compile(r"^(?:template\s*<[^>]*>\s*)?__global__\s+void\s+(?:__launch_bounds__\s*\([^)]*\)\s+)?(\w+)\s*\(", re.MULTILINE)
SIZES = {"n": 37, "m": 41, "width": 37, "height": 41, "steps": 2}
WIDER = {"reduce0": {"n": 1000}, "reduce3": {"n": 1100}}  # launched with n / 256 blocks
NOT_TRANSLATED = {
    "histogram256": "not modeled (hist[data[i]])",
    # launched with `in + RADIUS` (it reads in[-RADIUS]): this test gives each kernel arrays from
    # their first element; the kernel itself is translated (`compile_kernel`)
    "stencil_1d": "an argument that points into an array",
    # launched on `nblocks`, a local of its host function, which `bind` below (the host's
    # parameters only) does not compute: `run_host` runs it against numpy in
    # test_a_grid_from_a_local_constant_fixes_the_stride
    "count_hits": "a grid from a local of the host function",
}


def _race_free() -> list[tuple[str, str]]:
    out = []
    for path in sorted(SUITE.glob("*.cu")):
        text = path.read_text()
        heads = list(KERNEL.finditer(text))
        for head, end in zip(heads, [*(h.start() for h in heads[1:]), len(text)], strict=True):
            body = text[head.start() : end]
            if not FINDINGS.search(body) and head[1] not in NOT_TRANSLATED and f"{head[1]}<<<" in text:
                out.append((path.name, head[1]))
    return out


def _launch_of(fns: dict[str, ir.Function], kernel: str) -> tuple[ir.Launch, ir.Call, ir.Function]:
    launch = fns[kernel].launches[0]
    for fn in fns.values():
        for s in _statements(fn.body):
            if isinstance(s, ir.ExprStmt) and s.range == launch.range and isinstance(s.expr, ir.Call):
                return launch, s.expr, fn
    raise AssertionError(f"no launch of {kernel}")


def _statements(stmts: tuple[ir.Stmt, ...]) -> list[ir.Stmt]:
    return [x for s in stmts for x in (s, *_statements(ir.sub_statements(s)))]


def _inputs(kernel: ir.Function, sizes: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    out = {}
    for p in kernel.params:
        if isinstance(p.type, ir.Pointer):
            elem = str(p.type.pointee).replace("const ", "")
            dtype = np.dtype({"float": np.float32, "double": np.float64, "int": np.int32,
                              "unsigned int": np.uint32, "unsigned char": np.uint8}[elem])  # fmt: skip
            size = max(sizes.get(p.name, 0), 1)
            out[p.name] = (rng.random(size) * 4).astype(dtype) if dtype.kind == "f" else rng.integers(0, 10, size).astype(dtype)
    return out


def _shim(path: Path, kernel: str, values: dict[str, object], grid: dict[str, int], block: tuple[int, ...],
          arrays: dict[str, np.ndarray], tmp: Path) -> dict[str, np.ndarray]:  # fmt: skip
    """`kernel` launched by the CUDA shim on `arrays` (files in `tmp`), its arrays afterwards."""
    text = _for_the_shim(path.read_text())
    barriers, bound = kernel_traits(text).get(kernel, (False, 1024))
    args, lines = [], []
    for k, (name, value) in enumerate(values.items()):
        if isinstance(value, np.ndarray):
            ctype = {"f4": "float", "f8": "double", "i4": "int", "u4": "unsigned int", "u1": "unsigned char"}[value.dtype.str[1:]]
            value.tofile(tmp / f"{name}.bin")
            lines += [f'  {ctype} *h{k} = ({ctype} *)hx_load("{tmp}/{name}.bin", {value.nbytes}), *a{k};',
                      f"  cudaMalloc((void **)&a{k}, {value.nbytes} + 1);",  # device memory, as the shim checks
                      f"  cudaMemcpy(a{k}, h{k}, {value.nbytes}, cudaMemcpyHostToDevice);"]  # fmt: skip
            args.append(f"a{k}")
            continue
        args.append(f"{value!r}f" if isinstance(value, float) else str(value))
    saves = [f'  cudaMemcpy(h{k}, a{k}, {v.nbytes}, cudaMemcpyDeviceToHost); hx_save("{tmp}/{name}.out", h{k}, {v.nbytes});'
             for k, (name, v) in enumerate(values.items()) if isinstance(v, np.ndarray)]  # fmt: skip
    g = ", ".join(str(grid.get(a, 1)) for a in "xyz")
    source = "\n".join([
        "#include <cuda_runtime.h>", "#include <cstdio>", "#include <cstdlib>",
        launches_on_cpu(text, text),
        "static void *hx_load(const char *p, size_t n) { void *b = malloc(n + 1); FILE *f = fopen(p, \"rb\");"
        " if (n) fread(b, 1, n, f); fclose(f); return b; }",
        "static void hx_save(const char *p, void *b, size_t n) { FILE *f = fopen(p, \"wb\"); fwrite(b, 1, n, f); fclose(f); }",
        "int main() {", *lines,
        f"  hx_cpu::launcher<{'true' if barriers else 'false'}, {bound}>({kernel}, dim3({g}), dim3({', '.join(map(str, block))}))({', '.join(args)});",
        *saves, "  return 0;", "}",
    ])  # fmt: skip
    (tmp / "main.cu").write_text(source)
    exe = tmp / "main"
    build = subprocess.run([CXX, *FLAGS, "-I", str(INCLUDE), str(tmp / "main.cu"), "-o", str(exe)], capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr[-3000:]
    ran = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120, env={"ASAN_OPTIONS": "detect_leaks=0"})
    assert ran.returncode == 0 and "cuda_cpu:" not in ran.stderr, ran.stderr[-3000:]
    return {n: np.fromfile(tmp / f"{n}.out", dtype=v.dtype) for n, v in values.items() if isinstance(v, np.ndarray)}


def _for_the_shim(text: str) -> str:
    """What the shim cannot read, as it can: `extern __shared__ int s[];` (its `__shared__` is
    `static`) with a size, and a template kernel's launch (`k<32><<<g, b>>>(`) as a call."""
    text = re.sub(r"extern\s+__shared__\s+([\w ]+?)\s+(\w+)\s*\[\s*\]", r"__shared__ \1 \2[16384]", text)
    return re.sub(r"\b(\w+<\d+>)\s*<<<(.+?)>>>\s*\(", r"hx_cpu::launcher<true, 1024>(\1, \2)(", text)


OPENCL_HEAD = r"""
__attribute__((overloadable)) float hx_atomic_add(volatile __global float *p, float v) {
  union { unsigned u; float f; } old, new_;
  do { old.f = *p; new_.f = old.f + v; } while (atomic_cmpxchg((volatile __global unsigned *)p, old.u, new_.u) != old.u);
  return old.f;
}
__attribute__((overloadable)) int hx_atomic_add(volatile __global int *p, int v) { return atomic_add(p, v); }
__attribute__((overloadable)) unsigned hx_atomic_add(volatile __global unsigned *p, unsigned v) { return atomic_add(p, v); }
"""
_CL = [
    (r"__global__\s+void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?", "__kernel void "),
    (r"extern\s+__shared__\s+([\w ]+?)\s+(\w+)\s*\[\s*\]", r"__local \1 \2[2048]"),
    (r"__shared__", "__local"), (r"__syncthreads\(\)", "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)"),
    (r"atomicAdd\(", "hx_atomic_add("), (r"__restrict__", "restrict"),
    (r"threadIdx\.([xyz])", lambda m: f"(int)get_local_id({'xyz'.index(m[1])})"),
    (r"blockIdx\.([xyz])", lambda m: f"(int)get_group_id({'xyz'.index(m[1])})"),
    (r"blockDim\.([xyz])", lambda m: f"(int)get_local_size({'xyz'.index(m[1])})"),
    (r"gridDim\.([xyz])", lambda m: f"(int)get_num_groups({'xyz'.index(m[1])})"),
]  # fmt: skip


def opencl_counterpart(fn: ir.Function, file_text: str = "") -> str:
    """The kernel `fn` as OpenCL C, mechanically: the file's macros, ids, barriers, `__local`,
    pointer parameters in `__global` memory, atomics (a float one as a compare-and-swap loop)."""
    macros = "".join(line + "\n" for line in file_text.splitlines() if line.startswith("#define"))
    text = fn.text
    for pattern, repl in _CL:
        text = re.sub(pattern, repl, text)  # type: ignore[arg-type]
    head, _, body = text.partition("{")
    head = re.sub(r"(\bconst\s+)?([\w ]+?\*)", lambda m: f"__global {m[1] or ''}{m[2]}", head)
    return OPENCL_HEAD + macros + head + "{" + body


def _pocl(fn: ir.Function, values: dict[str, object], grid: dict[str, int], block: tuple[int, ...],
          file_text: str) -> dict[str, np.ndarray]:  # fmt: skip
    from core_compiler.runtime.launches import BufferArg, ScalarArg
    from core_compiler.runtime.opencl import Launch, run_opencl

    args: list[BufferArg | ScalarArg] = []
    for p in fn.params:
        v = values[p.name]
        if isinstance(v, np.ndarray):
            args.append(BufferArg(p.name))
        else:
            args.append(ScalarArg(v, "float32" if isinstance(v, float) else ("uint32" if "unsigned" in str(p.type) else "int32")))  # type: ignore[arg-type]
    dims = max((k + 1 for k, a in enumerate("xyz") if grid.get(a, 1) > 1 or block[k] > 1), default=1)  # <<<1, 1>>>: 1
    launch = Launch(fn.name, tuple(grid.get(a, 1) * block[k] for k, a in enumerate("xyz"))[:dims], tuple(block[:dims]), tuple(args))
    arrays = {n: v for n, v in values.items() if isinstance(v, np.ndarray)}
    return dict(run_opencl(opencl_counterpart(fn, file_text), [launch], arrays).arrays)


@pytest.mark.skipif(unavailable() is not None, reason=str(unavailable()))
@pytest.mark.parametrize(("file", "kernel"), _race_free(), ids=[f"{f}::{k}" for f, k in _race_free()])
def test_translation_matches_the_cuda_shim(file: str, kernel: str, tmp_path: Path) -> None:
    path = SUITE / file
    fns = {f.name: f for f in run_frontend(str(path)).functions}
    launch, call, host = _launch_of(fns, kernel)
    sizes = {**SIZES, **WIDER.get(kernel, {})}
    env: dict[str, int | float] = {p.name: sizes.get(p.name, 37) for p in host.params if not isinstance(p.type, ir.Pointer)}
    probe, grid = bind(fns[kernel], call, launch, env, {})
    cpu = compile_kernel(fns[kernel])
    needs = footprint(cpu.model, {k: v for k, v in probe.items() if isinstance(v, int)}, grid)
    arrays = _inputs(fns[kernel], needs, np.random.default_rng(7))
    values, _ = bind(fns[kernel], call, launch, env, {})
    values.update(arrays)
    block = tuple(d or 1 for d in launch.block)
    expected = _shim(path, kernel, dict(values), grid, block, arrays, tmp_path)
    mine = {n: a.copy() for n, a in arrays.items()}
    cpu({**values, **mine}, grid)
    on_pocl = _pocl(fns[kernel], {**values, **{n: a.copy() for n, a in arrays.items()}}, grid, block, path.read_text())
    for name, want in expected.items():
        np.testing.assert_allclose(mine[name], want, rtol=1e-5, atol=1e-5, err_msg=f"{kernel}: `{name}` vs the shim")
        np.testing.assert_allclose(on_pocl[name], want, rtol=1e-5, atol=1e-5, err_msg=f"{kernel}: OpenCL `{name}` vs the shim")


def test_a_racy_kernel_is_refused() -> None:
    fns = {f.name: f for f in run_frontend(str(SUITE / "synchronisation.cu")).functions}
    with pytest.raises(NotTranslatable, match="data race"):
        compile_kernel(fns["last_writer"])


def test_a_host_function_runs_its_launches() -> None:
    fns = {f.name: f for f in run_frontend(str(SUITE / "fixed_rows.cu")).functions}
    sizes = {"n": 37, "m": 41}
    needs = host_needs(fns, "host_fixed_rows", ("A", "s"), sizes)
    assert needs == {"A": 36 * 64 + 41, "s": 37}
    A = np.arange(needs["A"], dtype=np.float32)
    s = np.full(needs["s"], 2.0, dtype=np.float32)
    run = run_host(fns, "host_fixed_rows", {"A": A, "s": s}, sizes)
    assert [name for name, _ in run.launches] == ["scale_rows"]
    rows = np.arange(needs["A"], dtype=np.float32)
    inside = (np.arange(needs["A"]) // 64 < 37) & (np.arange(needs["A"]) % 64 < 41)
    np.testing.assert_array_equal(A, np.where(inside, 2 * rows, rows))


def test_hexplore_run_on_a_cuda_file(capsys: pytest.CaptureFixture[str]) -> None:
    from tui.cli import main

    path = str(SUITE / "fixed_rows.cu")
    assert main(["run", path, "--function", "host_fixed_rows", "--param", "n=37", "--param", "m=41"]) == 0
    out = capsys.readouterr().out
    assert "host_fixed_rows(n=37, m=41), 1 launch(es)" in out and "scale_rows" in out and out.rstrip().endswith("match")
    racy = str(Path(__file__).parent / "lsp" / "fixtures" / "races.cu")
    assert main(["run", racy, "--function", "run"]) == 2
    assert "`smooth` has a data race" in capsys.readouterr().err


# ------------------------------------------------------------------------------ several devices

PROGRAMS = [
    ("heat.cu", "run_heat", {"n": 45, "steps": 2}),
    ("transpose.cu", "run_transpose", {"width": 70, "height": 41}),
    ("memory_access.cu", "run_memory_access", {"m": 37, "n": 41}),
    ("fixed_rows.cu", "host_fixed_rows", {"n": 37, "m": 41}),
]


@pytest.mark.parametrize(("file", "host", "sizes"), PROGRAMS, ids=[p[1] for p in PROGRAMS])
def test_several_devices_give_the_arrays_of_one(file: str, host: str, sizes: dict[str, int]) -> None:
    """Each launch split over N devices by its outermost block axis, each device receiving only
    the rows its blocks read and lack (`cuda.devices`): the arrays equal one device's, bit for
    bit, for N = 1, 2, 4; and a device moves no more than the whole arrays each launch."""
    from core_compiler.cuda.devices import Devices

    fns = {f.name: f for f in run_frontend(str(SUITE / file)).functions}
    pointers = tuple(p.name for p in fns[host].params if isinstance(p.type, ir.Pointer))
    needs = host_needs(fns, host, pointers, sizes)
    rng = np.random.default_rng(3)
    base = {p: rng.random(max(needs.get(p, 0), 1)).astype(np.float32) for p in pointers}
    one = {k: v.copy() for k, v in base.items()}
    run_host(fns, host, one, sizes)
    for count in (1, 2, 4):
        arrays = {k: v.copy() for k, v in base.items()}
        devices = Devices(count)
        run = run_host(fns, host, arrays, sizes, launcher=devices)
        for name in pointers:
            np.testing.assert_array_equal(arrays[name], one[name], err_msg=f"{count} devices: `{name}`")
        whole = sum(a.nbytes for a in base.values()) * len(run.launches)
        assert all(0 <= moved_in <= whole for moved_in, _ in devices.moved())


def test_a_stencil_split_moves_boundary_rows_after_its_first_launch() -> None:
    from core_compiler.cuda.devices import Devices

    fns = {f.name: f for f in run_frontend(str(SUITE / "heat.cu")).functions}
    n, row = 96, 96 * 4
    arrays = {"a": np.ones(n * n, dtype=np.float32), "b": np.ones(n * n, dtype=np.float32)}
    devices = Devices(2)
    run_host(fns, "run_heat", arrays, {"n": n, "steps": 3}, launcher=devices)
    received = sum(moved_in for moved_in, _ in devices.moved())
    # both arrays once, and per later launch one boundary row each way: far below 6 whole copies
    assert received == 2 * n * n * 4 + 5 * 2 * row + 2 * row


# ------------------------------------------------------------------------------ run-time grids


@pytest.mark.parametrize("n", [0, 1, 7, 37, 100])
def test_a_grid_stride_loop_over_a_run_time_grid_covers_every_element_once(n: int) -> None:
    """`grid_stride.cu`'s loops are modeled over the blocks that cover `n`, whatever grid the
    launch gives (`GridStrideLoop`): the kernel has no `gridDim` parameter, and its translation
    gives the loop's result for launches of 1, 2 and 5 blocks of 8 threads (fewer threads than
    elements, each thread several iterations, or more)."""
    fns = {f.name: f for f in run_frontend(str(SUITE / "grid_stride.cu")).functions}
    rng = np.random.default_rng(n)
    x = rng.random(n + 1, dtype=np.float32)
    scale, axpy = compile_kernel(fns["scale_stride"]), compile_kernel(fns["axpy_stride"])
    assert not any(p.startswith("gridDim") for p in scale.model.scop.params + axpy.model.scop.params)
    for blocks in (1, 2, 5):
        y = np.full(n + 1, -1.0, dtype=np.float32)
        scale({"y": y, "x": x, "a": 2.0, "n": n}, {"x": blocks})
        want = np.where(np.arange(n + 1) < n, np.float32(2) * x, np.float32(-1))
        np.testing.assert_array_equal(y, want)
        axpy({"n": n, "a": 3.0, "x": x, "y": y}, {"x": blocks})
        np.testing.assert_allclose(y, np.where(np.arange(n + 1) < n, np.float32(3) * x + want, want), rtol=1e-6)


def test_a_race_in_a_grid_stride_loop_is_found() -> None:
    fns = {f.name: f for f in run_frontend(str(SUITE / "grid_stride.cu")).functions}
    with pytest.raises(NotTranslatable, match="data race"):
        compile_kernel(fns["shift_stride"])


# ------------------------------------------------------------------------------ rows of a size

ROWS_OF_N = """
__global__ void first_row_then_rest(double *a, const double *b, int n, int m) {
  int x = blockIdx.x * 32 + threadIdx.x;
  int y = blockIdx.y;
  if (x < n && y == 0)
    a[(0) * (n) + x] = b[(0) * (n) + x] + 1.0;
  if (x < n && y >= 1 && y < m)
    a[(y) * (n) + x] = 2.0 * a[(y) * (n) + x] + b[(y - 1) * (n) + x];
}
void run(double *a, const double *b, int n, int m) { first_row_then_rest<<<dim3((n + 31) / 32, m), 32>>>(a, b, n, m); }
"""


@pytest.mark.parametrize(("n", "m"), [(0, 1), (1, 1), (1, 3), (5, 3), (37, 4)])
def test_rows_of_a_size_beside_a_constant_row(n: int, m: int, tmp_path: Path) -> None:
    """``a[(0) * (n) + x]`` (row 0 written out, as generated code does: fdtd-2d's `ey`) beside
    ``a[(y) * (n) + x]``: both read as rows of `n` (`DelinearizedRows`), not a plain subscript that
    refuses the other's rows; the translation against numpy."""
    path = tmp_path / "rows.cu"
    path.write_text(ROWS_OF_N)
    (fn,) = [f for f in run_frontend(str(path)).functions if f.is_cuda_kernel]
    kernel = compile_kernel(fn)
    rng = np.random.default_rng(n * 10 + m)
    a, b = rng.random(n * m + 1), rng.random(n * m + 1)
    want = a.copy()
    if n:
        want[:n] = b[:n] + 1.0
        for y in range(1, m):
            want[y * n : (y + 1) * n] = 2.0 * a[y * n : (y + 1) * n] + b[(y - 1) * n : y * n]
    kernel({"a": a, "b": b, "n": n, "m": m}, {"x": (n + 31) // 32, "y": m})
    np.testing.assert_array_equal(a, want)


# ------------------------------------------------------------------------------ the corpus's idioms


def _idioms_reference(a: np.ndarray, b: np.ndarray, c: np.ndarray, v: np.ndarray, n: int) -> None:
    """What `corpus_idioms.cu`'s `run_corpus_idioms` computes, in numpy, in place."""
    a[:n] = 3.0
    for z in range(2):
        for y in range(1, n - 1):
            row = (z * 64 + y) * 64
            b[row + 1 : row + n - 1] = a[row : row + n - 2] + a[row - 64 + 1 : row - 64 + n - 1]
    for _ in range(3):
        c[:n] = np.float32(0.5) * c[:n] + np.float32(1.0)
    c[0] += 1.0
    c[2] += 1.0
    v[:n] = np.abs(v[:n])
    if n > 0:
        c[:64] = a[63::-1]


@pytest.mark.parametrize("n", [0, 1, 2, 7, 37, 64])
@pytest.mark.parametrize("g", [1, 2, 4])
def test_the_corpus_idioms_run_as_numpy_says(n: int, g: int) -> None:
    """`run_corpus_idioms` (grid-stride loops over a run-time grid of `g % 2 + 1` by `g % 3 + 1`
    blocks, one nested in a loop over planes and starting one past the thread's index, an early
    exit, a `return;` ending a kernel), its host code and kernels translated for the CPU, against
    numpy, at sizes that are no multiple of the blocks and at 0 and 1."""
    path = SUITE / "corpus_idioms.cu"
    fns = {f.name: f for f in run_frontend(str(path)).functions}
    scalars = {"n": n, "g": g}
    needs = host_needs(fns, "run_corpus_idioms", ("a", "b", "c", "v"), scalars)
    rng = np.random.default_rng(n + 100 * g)
    arrays = {name: rng.random(max(needs[name], 1), dtype=np.float32) for name in ("a", "b", "c")}
    arrays["v"] = rng.integers(-9, 10, max(needs["v"], 1)).astype(np.int32)
    want = {k: x.copy() for k, x in arrays.items()}
    _idioms_reference(want["a"], want["b"], want["c"], want["v"], n)
    run_host(fns, "run_corpus_idioms", arrays, scalars)
    for name, expected in want.items():
        np.testing.assert_allclose(arrays[name], expected, rtol=1e-6, err_msg=f"`{name}` at n = {n}, g = {g}")


def test_the_corpus_idioms_with_races_or_divergent_barriers_are_not_run() -> None:
    """A planted race in a grid-stride loop, and an early exit before a `__syncthreads()`, have no
    result a CPU translation could reproduce: refused, saying why."""
    fns = {f.name: f for f in run_frontend(str(SUITE / "corpus_idioms.cu")).functions}
    with pytest.raises(NotTranslatable, match="data race"):
        compile_kernel(fns["shift_back_race"])
    with pytest.raises(NotTranslatable, match="divergent barrier"):
        run_host(fns, "run_exit_then_sync", {"a": np.zeros(64, np.float32), "b": np.zeros(64, np.float32)}, {"n": 37})


@pytest.mark.parametrize("n", [0, 1, 37, 256, 300])
def test_a_grid_from_a_local_constant_fixes_the_stride(n: int) -> None:
    """`count_hits` (StarPU's pi example): launched on `nblocks` blocks, a local set to 4 and
    changed nowhere, so its grid-stride loop over a shared counter, then a tree reduction with
    barriers, is modeled for 4 x 64 threads; each block's count against numpy, at sizes below,
    at and above the 256 threads (each thread then counts two elements)."""
    fns = {f.name: f for f in run_frontend(str(SUITE / "corpus_idioms.cu")).functions}
    assert fns["count_hits"].launches[0].grid == (4, 1, 1)
    x = np.random.default_rng(n).random(max(n, 1), dtype=np.float32)
    per_block = np.full(4, 99, dtype=np.uint32)
    run_host(fns, "run_count_hits", {"x": x, "per_block": per_block}, {"n": n})
    threads = np.arange(256)
    want = [sum(int(x[i] <= 0.5) for t in threads[64 * b : 64 * (b + 1)] for i in range(t, n, 256)) for b in range(4)]
    np.testing.assert_array_equal(per_block, want)
