"""CUDA through pycuda on an NVIDIA GPU: LLVM's PTX for suite kernels against the original C at
sizes that are and are not tile multiples, 1 and 0; transfer caching across runs; and
``hexplore run --device cuda`` end to end. Skipped (with the reason) without pycuda or a GPU."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from core_compiler.runtime.differential import DeviceCase, check_device, device_case
from core_compiler.runtime.gpu_cuda import CudaRuntime
from core_compiler.runtime.run import cuda_unavailable
from tests.conftest import KERNELS, suite
from tui.cli import main

pytest.importorskip("pycuda", reason="pycuda is not installed (pip install 'hexplore[gpu]')")
if why := cuda_unavailable():
    pytest.skip(reason=why, allow_module_level=True)

pytestmark = pytest.mark.gpu

TIME_PARAMS = {"tsteps", "tmax"}
KERNELS_RUN = ("gemm.c", "2mm.c", "atax.c", "jacobi_2d.c", "heat_3d.c", "dot_norm.c", "correlation.c")


def _scaled(sizes: dict[str, int], value: int) -> dict[str, int]:
    return {k: (min(v, 3) if k in TIME_PARAMS else value) for k, v in sizes.items()}


def _entry(file: str) -> dict[str, object]:
    return next(k for k in suite() if k["file"] == file)


CASES = []
for file in KERNELS_RUN:
    sizes = dict(_entry(file)["sizes"])  # type: ignore[call-overload]
    for label, params in (("default", sizes), ("odd37", _scaled(sizes, 37)), ("one", _scaled(sizes, 1)), ("zero", _scaled(sizes, 0))):
        CASES.append(pytest.param(file, params, id=f"{file.removesuffix('.c')}-{label}"))


@pytest.fixture
def runtime() -> Iterator[CudaRuntime]:
    runtime = CudaRuntime()
    yield runtime
    runtime.close()


@pytest.mark.parametrize(("file", "params"), CASES)
def test_cuda_matches_original(file: str, params: dict[str, int], runtime: CudaRuntime) -> None:
    """Twice through one runtime: the second run finds the read-only arrays resident."""
    entry = _entry(file)
    result = check_device(str(KERNELS / file), str(entry["function"]), params, runtime, entry["size_limits"], repeat=2)  # type: ignore[arg-type]
    assert result.ok, f"run {result.failed_run}: {result.comparison.report()}"
    assert result.kernels >= 1


NI, NJ, NK = 40, 50, 30
A_BYTES, B_BYTES, C_BYTES = NI * NK * 8, NK * NJ * 8, NI * NJ * 8


@pytest.fixture(scope="module")
def gemm() -> DeviceCase:
    entry = _entry("gemm.c")
    return device_case(str(KERNELS / "gemm.c"), "kernel_gemm", {"ni": NI, "nj": NJ, "nk": NK}, entry["size_limits"])  # type: ignore[arg-type]


def test_read_only_arrays_stay_on_the_gpu(gemm: DeviceCase, runtime: CudaRuntime) -> None:
    first, cmp, _ = gemm.run(runtime, gemm.inputs())
    assert cmp.ok, cmp.report()
    assert (first.bytes_in, first.bytes_out) == (A_BYTES + B_BYTES + C_BYTES, C_BYTES)
    second, cmp, _ = gemm.run(runtime, gemm.inputs())
    assert cmp.ok, cmp.report()
    assert second.copied_in == ("C",) and (second.bytes_in, second.bytes_out) == (C_BYTES, C_BYTES)
    changed = gemm.inputs()
    changed["A"][3, 7] += 1.5
    third, cmp, _ = gemm.run(runtime, changed)  # against the reference on the changed input
    assert cmp.ok, cmp.report()
    assert third.copied_in == ("A", "C") and third.bytes_in == A_BYTES + C_BYTES
    assert not np.array_equal(third.arrays["C"][3], second.arrays["C"][3])


MM = """void mm(int n, double A[n][n], double B[n][n], double C[n][n]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      for (int k = 0; k < n; k++)
        C[i][j] += A[i][k] * B[k][j];
}
"""


def test_hexplore_run_on_cuda(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "mm.c"
    path.write_text(MM)
    argv = ["run", str(path), "--function", "mm", "--device", "cuda", "--param", "n=37", "--repeat", "3"]
    assert main([*argv, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["match"] is True and report["device"] == "cuda" and report["runs"] == 3
    assert report["reference_s"] > 0 and report["optimized_s"] > 0
    matrix = 37 * 37 * 8
    assert report["bytes_transferred"] == 3 * matrix + matrix  # A, B, C in; C out
    assert report["bytes_transferred_repeat"] == 2 * matrix  # C in and out
    assert main(argv) == 0
    assert "read-only arrays stayed on the device" in capsys.readouterr().out
