"""hexplore's CUDA C — the host code and the kernels — run on the CPU, without a GPU.

`tests/cuda_cpu/` builds ``compile --target cuda --always-offload``'s files with g++ and
AddressSanitizer against a shim of the CUDA runtime (``include/cuda_runtime.h``) and calls the
host function like the original, on the same inputs (`harness.py`). Before this, nothing ran the
host code outside a GPU, and on an H100 (../shared/gpu/H100-2026-11-25.md) PolyBench's heat-3d
segfaulted and deriche printed NaN while the OpenCL and PTX paths of the same kernels were right:

- heat-3d: its time loop is bounded by the macro TSTEPS, so the loops never read the parameter
  `tsteps`, and the host function left it out: ``kernel_heat_3d(int n, double *A, double *B)``
  for the original's ``(int tsteps, int n, A, B)``. Called from PolyBench's main, `n` took 20,
  `A` the value 10 and `B` the address of A: cudaMemcpy read address 0xa. The host function
  now declares every parameter of the original with its type (`codegen.cuda.host_parameter`).
- deriche: the only PolyBench kernel with a `float` parameter (alpha). Called without a
  prototype in scope, C passes it as a double; the host function read 0.0f (the low half of
  the double 0.25), so k = 0/0 and every pixel was NaN — on an H200 too, and with a prototype the
  same CUDA matched gcc's output. The host function itself was right; nothing gave its callers
  a prototype. ``<stem>_host.h`` now declares it, for C and C++.

The PolyBench kernels run at their MINI sizes, the suite's kernels at a size that is no multiple
of the tile size (37) or at 1 (alternating; both with --long); PolyBench's own `main` runs for
heat-3d and deriche with the kernel's definition replaced by the generated header, as on the
GPU. What builds or runs code is `slow`. A test takes a few kernels (about a second of the
pipeline each, and one build per four), so that pytest-xdist spreads them over its workers.
"""

from __future__ import annotations

import functools
import re
import subprocess
from pathlib import Path

import pytest

from core_compiler.analysis import analyze_file
from core_compiler.compile import compile_file
from core_compiler.frontend import ParseOptions
from tests.conftest import KERNELS, ROOT, suite
from tests.cuda_cpu import harness

POLYBENCH = ROOT / "tests" / "polybench"
UTILITIES = POLYBENCH / "utilities"
MINI = ParseOptions((str(UTILITIES),), ("MINI_DATASET",))
NAMES = sorted(p.name for p in POLYBENCH.iterdir() if (p / f"{p.name}.c").exists())
# gramschmidt at MINI orthonormalizes 30 columns of 20 rows: the last 10 are rounding noise after
# projection, in any implementation (hexplore's OpenCL differs from gcc there too, PPCG's did on
# the H100); with as many columns as rows it is well-posed
OVERRIDES = {"gramschmidt": {"n": 20}}
TIME_PARAMS = {"tsteps", "tmax"}


def _function(name: str) -> str:
    return "kernel_" + name.replace("-", "_")


@functools.cache
def _compile_cuda(path: Path, function: str, options: ParseOptions | None = None) -> dict[str, str]:
    fa = analyze_file(str(path), parse_options=options, only=function)
    return compile_file(fa, "cuda", always_offload=True).files


def _shim() -> None:
    why = harness.unavailable()
    if why:
        pytest.skip(why)


# ------------------------------------------------------------------------ the bugs, pinned


@pytest.mark.slow  # the pipeline on heat-3d takes seconds; test_host_signature_... is the fast tier's
def test_host_function_keeps_every_parameter_of_the_original() -> None:
    """heat-3d's loops never read `tsteps`; its host function still takes it, first."""
    files = _compile_cuda(POLYBENCH / "heat-3d" / "heat-3d.c", "kernel_heat_3d", MINI)
    host = files["heat-3d_kernel_heat_3d_host.cu"]
    assert 'extern "C" void kernel_heat_3d(int tsteps, int n, double *A, double *B)\n' in host
    assert "(void)tsteps;" in host


@pytest.mark.slow
def test_host_header_gives_callers_the_prototype() -> None:
    """A C caller of deriche's host function needs `float alpha` in scope: the header has it."""
    files = _compile_cuda(POLYBENCH / "deriche" / "deriche.c", "kernel_deriche", MINI)
    header = files["deriche_kernel_deriche_host.h"].splitlines()
    assert 'extern "C" void kernel_deriche(int w, int h, float alpha, float *imgIn, float *imgOut, float *y1, float *y2);' in header
    c = "void kernel_deriche(int w, int h, float alpha, float imgIn[64][64], float imgOut[64][64], float y1[64][64], float y2[64][64]);"
    assert c in header  # C: the original's declaration


def test_host_signature_takes_types_and_pointers_as_the_original() -> None:
    """Every parameter, read by the loops or not (`unused`), with the original's type; in the
    header for C the original's declarations (`float s` passed as a float, not a double)."""
    src = (
        "void f(long n, int unused, float s, double A[n][n], double (*B)[4], _Bool flag) {\n"
        "  for (long i = 0; i < n; i++) A[i][i] = s * B[i][0];\n}\n"
    )
    files = compile_file(analyze_file("sig.c", src), "cuda", always_offload=True).files
    decl = "void f(long n, int unused, float s, double *A, double *B, bool flag)"
    assert f'extern "C" {decl}\n' in files["sig_f_host.cu"]
    header = files["sig_f_host.h"].splitlines()
    assert f'extern "C" {decl};' in header
    assert "void f(long n, int unused, float s, double A[n][n], double (*B)[4], _Bool flag);" in header


def test_launches_become_calls_and_barriers_are_seen() -> None:
    kernels = (
        "__global__ void kernel1(double *A);\n"
        "__global__ void kernel0(double *A) { A[threadIdx.x] = 0; }\n"
        "__global__ void __launch_bounds__(32) kernel1(double *A)\n{ __shared__ double s[32]; __syncthreads(); }\n"
    )
    host = "  kernel0<<<k0_grid, k0_block>>>(dev_A);\n  kernel1<<<dim3(2, 1), dim3(32)>>>(dev_A);\n"
    assert harness.kernel_traits(kernels) == {"kernel0": (False, 1024), "kernel1": (True, 32)}
    assert harness.launches_on_cpu(host, kernels) == (
        "  hx_cpu::launcher<false, 1024>(kernel0, k0_grid, k0_block)(dev_A);\n"
        "  hx_cpu::launcher<true, 32>(kernel1, dim3(2, 1), dim3(32))(dev_A);\n"
    )


# --------------------------------------------------------------------------- the shim itself

SCENARIOS = {  # scenario -> what its run must show: "ok", or the error's words
    "barrier": "ok",
    "atomics": "ok",
    "uninitialized": "ok",
    "host-pointer": "ok",
    "bad-launch": "ok",
    "launch-bounds": "ok",
    "memcpy-overrun": "ok",
    "out-of-bounds": "heap-buffer-overflow",
    "leak": "detected memory leaks",
    "async-copies": "ok",  # cp.async lands at the wait, not before (`HX_ASYNC_COPY`)
    "async-never-waited": "were never waited for",
}


@functools.cache
def _shim_checks() -> Path:
    source = Path(__file__).parent / "cuda_cpu" / "shim_checks.cu"
    text = source.read_text()
    work = harness._work_dir()
    (work / "shim_checks.cc").write_text(harness.launches_on_cpu(text, text))
    harness._compile(work / "shim_checks.cc", work / "shim_checks")
    return work / "shim_checks"


@pytest.mark.slow
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_shim_behaves_as_a_gpu_and_reports_bugs(scenario: str) -> None:
    """Barriers among a block's threads, atomics, launch checks, and AddressSanitizer's reports
    of an access past an allocation and of device memory never freed."""
    _shim()
    if scenario == "leak" and not harness._leak_checks():
        pytest.skip("LeakSanitizer does not run here")
    run = subprocess.run([str(_shim_checks()), scenario], capture_output=True, text=True, timeout=60, env=harness._env())
    expected = SCENARIOS[scenario]
    if expected == "ok":
        assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-3000:]
    else:
        assert run.returncode != 0 and expected in run.stderr, run.stderr[-3000:]


# ------------------------------------------------------------------------------ PolyBench


@functools.cache
def _mini_sizes(name: str) -> dict[str, int]:
    """The MINI dataset's macros, lower-cased (``N`` -> ``n``): the values `main` passes."""
    path = POLYBENCH / name / f"{name}.c"
    cmd = ["cc", "-E", "-dM", "-DMINI_DATASET", "-I", str(UTILITIES), str(path)]
    text = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=60).stdout
    sizes = {k.lower(): int(v) for k, v in re.findall(r"^#define (\w+) (\d+)\s*$", text, re.M)}
    return sizes | OVERRIDES.get(name, {})


def _chunks(items: list[str], n: int) -> list[list[str]]:
    """`items` in `n` runs of about equal length: one test each, so that pytest-xdist spreads
    them over its workers and each builds its cases a few to an executable."""
    size = -(-len(items) // n)
    return [items[k : k + size] for k in range(0, len(items), size)]


def _failures(results: dict[str, harness.CudaCpuResult], expected: list[str]) -> str:
    lines = [f"{n}: not run" for n in expected if n not in results]
    lines += [f"{n}: {r.report()}" for n, r in results.items() if not r.ok]
    return "\n\n".join(lines)


# `make test` runs one kernel in four (hexplore's CUDA of every suite kernel also runs through
# its own CPU translation: tests/test_cuda_translated.py), `make test-long` all of them
@pytest.mark.slow
@pytest.mark.parametrize(
    "names",
    [*_chunks(NAMES[::4], 2), *(pytest.param(c, marks=pytest.mark.long) for c in _chunks([n for n in NAMES if n not in NAMES[::4]], 2))],
    ids=lambda names: f"{names[0]}..{names[-1]}",
)
def test_polybench_mini_cuda_matches_on_the_cpu(names: list[str]) -> None:
    _shim()
    cases = (harness.prepare(str(POLYBENCH / n / f"{n}.c"), _function(n), _mini_sizes(n), parse=MINI, name=n) for n in names)
    results = harness.run_cases(cases, batch=4)
    assert not _failures(results, names), _failures(results, names)
    assert all(r.kernels >= 1 for r in results.values())


STUB = """#include <stdlib.h>
void *polybench_alloc_data(unsigned long long int n, int elt_size) { return calloc(n, elt_size); }
void polybench_free_data(void *p) { free(p); }
void polybench_flush_cache(void) {}
void polybench_prepare_instruments(void) {}
"""


def _balanced(text: str, start: int, pair: str) -> int:
    """The index after the bracket that closes the one at `start`."""
    depth = 0
    for k in range(start, len(text)):
        depth += {pair[0]: 1, pair[1]: -1}.get(text[k], 0)
        if depth == 0:
            return k + 1
    raise ValueError(f"unbalanced {pair}")


def _without_definition(source: str, function: str, replacement: str) -> str:
    """`source` with ``static void function(...) {...}`` replaced by `replacement`."""
    m = re.search(rf"(?:\bstatic\s+)?\bvoid\s+{function}\s*\(", source)
    assert m is not None, function
    body = source.index("{", _balanced(source, m.end() - 1, "()"))
    return source[: m.start()] + replacement + source[_balanced(source, body, "{}") :]


def _dump(text: str) -> list[float]:
    assert "begin dump" in text, text[-2000:]
    return [float(x) for x in re.findall(r"-?(?:nan|inf|\d+\.\d+)", text.split("begin dump", 1)[1])]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["heat-3d", "deriche"])
def test_polybench_main_calls_the_host_function_through_its_header(name: str, tmp_path: Path) -> None:
    """As on the GPU: PolyBench's own main, its kernel's definition replaced by ``#include
    "<stem>_host.h"``, linked with the CUDA built on the CPU; its dump must be gcc's. (Without
    the header, as before it existed, heat-3d's run ends in AddressSanitizer's SEGV in
    cudaMemcpy and deriche prints NaN, as they did on the H100.)"""
    _shim()
    function = _function(name)
    source = POLYBENCH / name / f"{name}.c"
    files = _compile_cuda(source, function, MINI)
    for file, text in files.items():
        (tmp_path / file).write_text(text)
    # before the header, a C caller had to declare the function itself: as C's implicit call
    header = next((f for f in files if f.endswith("_host.h")), None)
    (host,) = [f for f in files if f.endswith("_host.cu") and function in f]
    kernel = host.replace("_host.cu", "_kernel.cu")
    (tmp_path / "host.cpu").write_text(harness.launches_on_cpu(files[host], files[kernel]))
    declaration = f'#include "{header}"\n' if header else f"void {function}();\n"
    (tmp_path / "main.c").write_text(_without_definition(source.read_text(), function, declaration))
    (tmp_path / "stub.c").write_text(STUB)
    (tmp_path / "cuda.cc").write_text(f'#include <cuda_runtime.h>\n#include "{kernel}"\n#include "host.cpu"\n')
    c = ["gcc", "-std=gnu11", "-O1", "-w", "-fsanitize=address", "-DMINI_DATASET", "-DPOLYBENCH_DUMP_ARRAYS",
         "-I", str(UTILITIES), "-I", str(source.parent), "-I", str(tmp_path)]  # fmt: skip
    harness.run_tool([*c, "-Werror=implicit-function-declaration", "-c", str(tmp_path / "main.c"), "-o", str(tmp_path / "main.o")])
    harness.run_tool([*c, "-c", str(tmp_path / "stub.c"), "-o", str(tmp_path / "stub.o")])
    harness._compile(tmp_path / "cuda.cc", tmp_path / "cuda.o", "-c")
    objects = [str(tmp_path / f) for f in ("main.o", "stub.o", "cuda.o")]
    harness.run_tool([harness.CXX, "-fsanitize=address", "-pthread", *objects, "-o", str(tmp_path / "gpu"), "-lm"])
    harness.run_tool([*c, str(source), str(tmp_path / "stub.c"), "-o", str(tmp_path / "ref"), "-lm"])
    ref = subprocess.run([str(tmp_path / "ref")], capture_output=True, text=True, timeout=60)
    gpu = subprocess.run([str(tmp_path / "gpu")], capture_output=True, text=True, timeout=60, env=harness._env())
    assert gpu.returncode == 0, gpu.stderr[-4000:]
    expected, actual = _dump(ref.stderr), _dump(gpu.stderr)
    assert len(actual) == len(expected)
    bad = [k for k, (e, a) in enumerate(zip(expected, actual, strict=True)) if not abs(e - a) <= 0.011 + 1e-3 * abs(e)]
    assert not bad, f"{len(bad)} of {len(expected)} printed values differ, first at {bad[0]}: {expected[bad[0]]} vs {actual[bad[0]]}"


# ------------------------------------------------------------------------- the kernel suite


def _scaled(sizes: dict[str, int], value: int) -> dict[str, int]:
    return {k: (min(v, 3) if k in TIME_PARAMS else value) for k, v in sizes.items()}


SUITE = {str(k["file"]).removesuffix(".c"): k for k in suite()}
SIZES = {"odd37": 37, "one": 1}  # not a multiple of the 32-wide tiles; a single point
# `make test` runs each kernel at one of the two sizes, alternating (33 pipelines, about 45 s of
# CPU); `make test-long` the other one too
EVERY = [f"{name}-{label}" for name in SUITE for label in SIZES]
SAMPLE = [f"{name}-{label}" for k, name in enumerate(SUITE) for label in [list(SIZES)[k % 2]]]
REST = [case for case in EVERY if case not in SAMPLE]


def _suite_case(case: str) -> harness.CudaCpuCase:
    name, label = case.rsplit("-", 1)
    k = SUITE[name]
    params = _scaled(dict(k["sizes"]), SIZES[label])  # type: ignore[call-overload]
    size_limits = k["size_limits"]
    return harness.prepare(str(KERNELS / str(k["file"])), str(k["function"]), params, size_limits=size_limits, name=case)  # type: ignore[arg-type]


@pytest.mark.slow
@pytest.mark.parametrize(
    "cases",
    [*_chunks(SAMPLE, 2), *(pytest.param(c, marks=pytest.mark.long) for c in _chunks(REST, 2))],
    ids=lambda cases: f"{cases[0]}..{cases[-1]}",
)
def test_suite_kernel_cuda_matches_on_the_cpu(cases: list[str]) -> None:
    _shim()
    results = harness.run_cases((_suite_case(c) for c in cases), batch=4)
    assert not _failures(results, cases), _failures(results, cases)
