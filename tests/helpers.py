"""Test helpers: locate text in a source, analyse snippets, run functions on every backend."""

from __future__ import annotations

import functools
import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from core_compiler.analysis import FileAnalysis, ScopAnalysis, analyze_file
from core_compiler.frontend import ParseOptions
from core_compiler.remarks import Remark
from core_compiler.runtime.cpu_variants import LlvmCpuResult, check_llvm_cpu
from core_compiler.runtime.differential import check_c, check_opencl
from core_compiler.source import SourceRange

ROOT = Path(__file__).resolve().parent.parent
KERNELS = ROOT / "tests" / "kernels"
POLYBENCH = ROOT / "tests" / "polybench"


def range_of(src: str, needle: str, path: str = "t.c", nth: int = 0) -> SourceRange:
    """The SourceRange of the `nth` occurrence of `needle` (which must not span lines)."""
    start = -1
    for _ in range(nth + 1):
        start = src.index(needle, start + 1)
    line = src.count("\n", 0, start) + 1
    col = start - (src.rfind("\n", 0, start) + 1) + 1
    return SourceRange(path, line, col, line, col + len(needle))


@functools.lru_cache(maxsize=64)
def analyze(src: str, path: str = "t.c") -> FileAnalysis:
    """`src`'s analysis, one per text in a test process: an analysis is immutable, and the back
    ends keep their schedules and mappings with it (`pipeline._kept`), so the tests that compile
    one snippet for several targets map it once."""
    return analyze_file(path, src)


@functools.lru_cache(maxsize=48)
def suite_analysis(file: str, function: str) -> FileAnalysis:
    """`function` of the suite kernel tests/kernels/`file` analysed, once per test process: the
    GPU-structure, golden, nvcc and barrier tests of one kernel share its mappings."""
    return analyze_file(str(KERNELS / file), only=function)


@functools.lru_cache(maxsize=48)
def polybench_analysis(name: str, defines: tuple[str, ...] = ()) -> FileAnalysis:
    """PolyBench's `kernel_<name>` (tests/polybench/<name>) analysed, once per test process."""
    parse = ParseOptions((str(POLYBENCH / "utilities"),), defines)
    return analyze_file(str(POLYBENCH / name / f"{name}.c"), parse_options=parse, only="kernel_" + name.replace("-", "_"))


def remarks(src: str, path: str = "t.c") -> list[Remark]:
    return analyze(src, path).all_remarks()


def named(rs: list[Remark], name: str) -> list[Remark]:
    return [r for r in rs if r.name == name]


def only_scop(path: str, function: str) -> ScopAnalysis:
    """The one modeled loop nest of `function` in the file at `path`."""
    (sa,) = analyze_file(path, only=function).functions[0].scops
    return sa


# The schedules a feature test checks its function under on the LLVM CPU path (`check_cpu`): the
# default (tiled), register tiles over the untiled loops (statements copied with shifted
# iterators), the tilable band (skewed iterators) and the distributed nests (statements apart),
# where the last two differ from the default. tests/llvm/ races every variant on the suite
# kernels, and `make test-long` does here too.
FEATURE_VARIANTS = ("tiled", "untiled+jam2", "tilable", "distributed")


def check_cpu(path: str, function: str, params: Mapping[str, int], **options: Any) -> LlvmCpuResult:
    """`check_llvm_cpu` over `FEATURE_VARIANTS` (every variant in the long tier)."""
    variants = None if os.environ.get("HEXPLORE_LONG") else FEATURE_VARIANTS
    return check_llvm_cpu(path, function, params, variants=variants, **options)


def runs_everywhere(path: str, function: str, sizes: Sequence[Mapping[str, int]]) -> None:
    """`function` matches the original on the LLVM CPU (2 threads) and as generated C at each of
    `sizes`, and on OpenCL (PoCL) at the first."""
    for values in sizes:
        cpu = check_cpu(path, function, values, threads=2)
        assert cpu.ok, f"{values}\n{cpu.report()}"
        c = check_c(path, function, values)
        assert c.ok, f"{values}\n{c.comparison.report()}"
    gpu = check_opencl(path, function, sizes[0])
    assert gpu.ok, gpu.comparison.report()


def nvcc_compiles(files: Mapping[str, str], tmp_path: Path) -> None:
    """The `files` (name -> text) compile with ``nvcc -c``, their ``.cu`` units as one."""
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    units = sorted(n for n in files if n.endswith(".cu"))
    (tmp_path / "all.cu").write_text("".join(f'#include "{n}"\n' for n in units))
    proc = subprocess.run(["nvcc", "-c", "-o", str(tmp_path / "all.o"), str(tmp_path / "all.cu")], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
