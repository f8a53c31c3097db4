"""Every kernel of the suite becomes CUDA in PPCG's file layout, and nvcc compiles it — including
kernels whose C declares VLA parameters (`double A[n][m]`), which nvcc rejects as written."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from core_compiler.compile import compile_file
from tests.conftest import suite
from tests.helpers import suite_analysis

NVCC = shutil.which("nvcc")
KERNEL_SUITE = suite()


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed: CUDA text cannot be compile-checked")
@pytest.mark.parametrize("kernel", KERNEL_SUITE, ids=[str(k["file"]) for k in KERNEL_SUITE])
def test_generated_cuda_compiles_with_nvcc(kernel: dict[str, object], tmp_path) -> None:  # type: ignore[no-untyped-def]
    fa = suite_analysis(str(kernel["file"]), str(kernel["function"]))
    result = compile_file(fa, "cuda", always_offload=True)
    assert {n.rsplit("_", 1)[-1] for n in result.files} == {"kernel.cu", "kernel.hu", "host.cu", "host.h"}
    for name, text in result.files.items():
        (tmp_path / name).write_text(text)
    # the host function's header first: a definition that differs from it does not compile
    units = sorted(n for n in result.files if n.endswith("_host.h")) + sorted(n for n in result.files if n.endswith(".cu"))
    (tmp_path / "all.cu").write_text("".join(f'#include "{n}"\n' for n in units))
    assert NVCC is not None
    proc = subprocess.run([NVCC, "-c", "-o", str(tmp_path / "all.o"), str(tmp_path / "all.cu")], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert any(r.name == "Offloaded" for r in result.remarks)


def test_vla_host_signature_uses_plain_pointers() -> None:
    src = "void f(int n, int m, double A[n][m]) { for (int i = 0; i < n; i++) for (int j = 0; j < m; j++) A[i][j] = 2 * A[i][j]; }"
    from core_compiler.analysis import analyze_file as analyze

    result = compile_file(analyze("vla.c", src), "cuda", always_offload=True)
    host = result.files["vla_f_host.cu"]
    assert 'extern "C" void f(int n, int m, double *A)' in host  # the original order: same ABI
