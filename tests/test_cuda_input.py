"""CUDA kernels as input (issue 28, item 5): the findings of the `cuda-kernel` pass on kernels
written in the style of the CUDA samples, Rodinia, Parboil and PolyBench-GPU, race-free ones and
ones with planted bugs (tests/cuda_input/kernels/).

Each expected finding is a trailing comment on the line its remark should point at::

    a[i] = 0.5f * (a[i - 1] + a[i + 1]); // expect: DataRace

and a kernel's findings (the remarks named in FINDINGS, as (line, name)) must be exactly its
`expect` comments: a race-free kernel has none. The comments are the truth: where hexplore is
wrong, the kernel is in KNOWN_WRONG (a strict xfail, with what it says instead), not the other
way round.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest

from core_compiler.analysis import FileAnalysis, FunctionAnalysis, analyze_file
from core_compiler.report import remark_text

ROOT = Path(__file__).resolve().parent.parent
CUDA_INPUT = ROOT / "tests" / "cuda_input" / "kernels"
FINDINGS = frozenset(
    {
        "DataRace",
        "BarrierDivergence",
        "RedundantBarrier",
        "UncoalescedAccess",
        "SharedBankConflict",
        "CudaKernelNotModeled",
    }
)
EXPECT = re.compile(r"//\s*expect:\s*(.*?)\s*$")
KERNEL = re.compile(r"^(?:template\s*<[^>]*>\s*)?__global__\s+void\s+(?:__launch_bounds__\s*\([^)]*\)\s+)?(\w+)\s*\(", re.MULTILINE)

# Kernels where hexplore's findings differ from the `expect` comments (the lead fixes the model;
# a fix makes the strict xfail fail: remove the entry then).
KNOWN_WRONG: dict[str, str] = {}


def _kernels() -> list[tuple[str, str]]:
    return [
        (path.name, m.group(1))
        for path in sorted(CUDA_INPUT.glob("*.cu"))
        for m in KERNEL.finditer(path.read_text())
    ]


KERNELS = _kernels()


def _param(file: str, kernel: str) -> object:
    key = f"{file}::{kernel}"
    marks = [pytest.mark.xfail(reason=KNOWN_WRONG[key], strict=True)] if key in KNOWN_WRONG else []
    return pytest.param(file, kernel, id=key, marks=marks)


@functools.cache
def _analysis(file: str) -> FileAnalysis:
    """The file analysed once per test process (the clang front end runs in a worker)."""
    return analyze_file(f"tests/cuda_input/kernels/{file}", (CUDA_INPUT / file).read_text())


def _expected(file: str) -> dict[int, set[str]]:
    """The `expect` comments of a file: line -> names."""
    out: dict[int, set[str]] = {}
    for number, line in enumerate((CUDA_INPUT / file).read_text().splitlines(), start=1):
        m = EXPECT.search(line)
        if m:
            out[number] = {name.strip() for name in m.group(1).split(",") if name.strip()}
    return out


def _function(file: str, kernel: str) -> FunctionAnalysis:
    fa = _analysis(file).function(kernel)
    assert fa is not None, f"{file}: no analysis of `{kernel}`"
    assert fa.function.is_cuda_kernel, f"{file}: `{kernel}` not read as a `__global__` kernel"
    return fa


def _findings(fa: FunctionAnalysis) -> set[tuple[int, str]]:
    return {(r.range.line, r.name) for r in fa.remarks if r.name in FINDINGS}


@pytest.mark.parametrize(("file", "kernel"), [_param(f, k) for f, k in KERNELS])
def test_findings_match_the_expect_comments(file: str, kernel: str) -> None:
    fa = _function(file, kernel)
    rng = fa.function.range
    expected = {
        (line, name)
        for line, names in _expected(file).items()
        if rng.line <= line <= rng.end_line
        for name in names
    }
    found = _findings(fa)
    shown = "\n".join(remark_text(r) for r in fa.remarks if r.name in FINDINGS)
    assert found == expected, (
        f"missing: {sorted(expected - found)}, unexpected: {sorted(found - expected)}\n{shown}"
    )
    if (rng.line, "CudaKernelNotModeled") not in expected:
        assert any(r.name == "CudaKernelModeled" for r in fa.remarks), (
            "the kernel should be modeled"
        )


# One remark per barrier or access: a `__syncthreads()` in a loop over a block size is several
# barrier statements once the loop is unrolled (races are reported once per pair of accesses, so
# one line may carry several DataRace remarks; it is left out here).
@pytest.mark.parametrize(("file", "kernel"), KERNELS, ids=[f"{f}::{k}" for f, k in KERNELS])
def test_one_remark_per_barrier_or_access(file: str, kernel: str) -> None:
    fa = _function(file, kernel)
    sites = [(r.range, r.name) for r in fa.remarks if r.name in FINDINGS - {"DataRace"}]
    assert len(sites) == len(set(sites)), "\n".join(
        remark_text(r) for r in fa.remarks if r.name in FINDINGS
    )


def test_a_race_between_blocks_only_says_so() -> None:
    """thread t of every block stores into out[t]: no barrier can order that, and the remark says so."""
    (race,) = [
        r for r in _function("synchronisation.cu", "per_block_copy").remarks if r.name == "DataRace"
    ]
    assert "threads of different blocks are never ordered" in race.message
    assert race.args["witness"]["a0"] != race.args["witness"]["b0"]  # type: ignore[index]


def test_every_expect_comment_is_in_a_kernel_and_names_a_finding() -> None:
    assert len(KERNELS) >= 16
    for file in sorted({f for f, _ in KERNELS}):
        kernels = [
            fa.function.range for fa in _analysis(file).functions if fa.function.is_cuda_kernel
        ]
        assert len(kernels) == sum(1 for f, _ in KERNELS if f == file), file
        for line, names in _expected(file).items():
            assert names <= FINDINGS, (
                f"{file}:{line}: unknown finding names {sorted(names - FINDINGS)}"
            )
            assert any(r.line <= line <= r.end_line for r in kernels), (
                f"{file}:{line}: `expect` outside a kernel"
            )


def test_the_suite_has_race_free_kernels_and_every_kind_of_planted_bug() -> None:
    names = {
        name
        for file in {f for f, _ in KERNELS}
        for names in _expected(file).values()
        for name in names
    }
    assert names == FINDINGS
    clean = [(f, k) for f, k in KERNELS if not _expected_in(f, k)]
    assert len(clean) >= 10, clean


def _expected_in(file: str, kernel: str) -> set[str]:
    rng = _function(file, kernel).function.range
    return {
        n
        for line, names in _expected(file).items()
        if rng.line <= line <= rng.end_line
        for n in names
    }


@pytest.mark.parametrize("file", ["synchronisation.cu", "memory_access.cu"])
def test_cuda_remark_messages_golden(file: str, golden) -> None:  # type: ignore[no-untyped-def]
    """The words of the findings, their witnesses and the modeled-kernel summary."""
    lines = [
        remark_text(r)
        for fa in _analysis(file).functions
        if fa.function.is_cuda_kernel
        for r in fa.remarks
        if r.pass_name == "cuda-kernel"
    ]
    golden(f"cuda_input/{file.removesuffix('.cu')}.txt", "\n".join(lines) + "\n")


# ------------------------------------------------------------------------------ hexplore's own CUDA

OWN = ("gemm", "jacobi_2d", "heat_3d", "soft_threshold", "lu", "2mm")


@pytest.mark.slow  # the GPU pipeline for each kernel (about 2 s each)
@pytest.mark.parametrize("kernel", OWN)
def test_hexplores_own_cuda_has_no_race_or_divergent_barrier(kernel: str, tmp_path: Path) -> None:
    """The CUDA that `compile --target cuda` writes for a suite kernel, its kernels and host code in
    one file (so that the launches give the block sizes), is race-free by the kernel model: two
    checks of each other, the GPU mapping and the race analysis."""
    from core_compiler.compile import compile_file

    source = ROOT / "tests" / "kernels" / f"{kernel}.c"
    result = compile_file(analyze_file(str(source)), "cuda", always_offload=True)
    kernels = next(t for n, t in result.files.items() if n.endswith("_kernel.cu"))
    host = next(t for n, t in result.files.items() if n.endswith("_host.cu"))
    local = re.compile(r'^#include ".*"$', re.MULTILINE)
    combined = tmp_path / f"{kernel}.cu"
    combined.write_text(local.sub("", kernels) + "\n" + local.sub("", host))
    fa = analyze_file(str(combined))
    modeled = [r for f in fa.functions for r in f.remarks if r.name == "CudaKernelModeled"]
    bad = [f"{r.range.line}: {r.message}" for f in fa.functions for r in f.remarks
           if r.name in ("DataRace", "BarrierDivergence", "CudaKernelNotModeled")]  # fmt: skip
    assert modeled and bad == []


@pytest.mark.parametrize(
    ("kernel", "why"),
    [
        ("sum_then_store", "the kernel reads the thread's index outside the grid-stride loop too"),
        ("nothing", "its body is empty"),
    ],
)
def test_a_kernel_not_modeled_says_what_keeps_it_out(kernel: str, why: str) -> None:
    """`corpus_idioms.cu`: the reason in words a C programmer acts on, not a symptom (before: "the
    grid-stride step of `i` is not a constant", "`return` leaves the loop nest early")."""
    (remark,) = [r for r in _function("corpus_idioms.cu", kernel).remarks if r.name == "CudaKernelNotModeled"]
    assert why in remark.message, remark.message
