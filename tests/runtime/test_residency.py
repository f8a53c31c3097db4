"""Transfer caching on PoCL (real OpenCL): one `OpenCLRuntime` run twice on the same inputs moves
only what the kernels write; a changed input moves again and the result follows it; an array the
kernels only overwrite is never copied in; a run at another size starts afresh."""

from __future__ import annotations

import numpy as np
import pytest

from core_compiler.runtime.device import Residency
from core_compiler.runtime.differential import DeviceCase, check_device, device_case
from core_compiler.runtime.gpu_opencl import OpenCLRuntime
from core_compiler.runtime.opencl import OpenCLMemory
from tests.conftest import KERNELS, suite

NI, NJ, NK = 40, 50, 30
A_BYTES, B_BYTES, C_BYTES = NI * NK * 8, NK * NJ * 8, NI * NJ * 8  # doubles


def _case(file: str, params: dict[str, int], exact_sizes: bool = True) -> DeviceCase:
    entry = next(k for k in suite() if k["file"] == file)
    limits = entry["size_limits"] if exact_sizes else None
    return device_case(str(KERNELS / file), str(entry["function"]), params, limits)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def gemm() -> DeviceCase:
    return _case("gemm.c", {"ni": NI, "nj": NJ, "nk": NK})


def test_second_run_moves_only_what_the_kernels_write(gemm: DeviceCase) -> None:
    inputs = gemm.inputs()
    assert (inputs["A"].nbytes, inputs["B"].nbytes, inputs["C"].nbytes) == (A_BYTES, B_BYTES, C_BYTES)
    runtime = OpenCLRuntime()
    first, cmp, _ = gemm.run(runtime, inputs)
    assert cmp.ok, cmp.report()
    assert (first.copied_in, first.copied_out) == (("A", "B", "C"), ("C",))
    assert (first.bytes_in, first.bytes_out) == (A_BYTES + B_BYTES + C_BYTES, C_BYTES)  # 37600, 16000
    second, cmp, _ = gemm.run(runtime, gemm.inputs())
    assert cmp.ok, cmp.report()
    assert (second.copied_in, second.copied_out) == (("C",), ("C",))  # C is read and written
    assert (second.bytes_in, second.bytes_out) == (C_BYTES, C_BYTES)  # 16000, 16000


def test_a_changed_input_is_copied_again_and_the_result_follows(gemm: DeviceCase) -> None:
    runtime = OpenCLRuntime()
    before, _, _ = gemm.run(runtime, gemm.inputs())
    changed = gemm.inputs()
    changed["A"][3, 7] += 1.5
    after, cmp, _ = gemm.run(runtime, changed)  # compared with the reference on `changed`
    assert cmp.ok, cmp.report()
    assert after.copied_in == ("A", "C") and after.bytes_in == A_BYTES + C_BYTES
    assert not np.array_equal(after.arrays["C"][3], before.arrays["C"][3])
    assert np.array_equal(after.arrays["C"][:3], before.arrays["C"][:3])


def test_check_device_reports_first_and_later_bytes(gemm: DeviceCase) -> None:
    r = check_device(gemm.path, "kernel_gemm", {"ni": NI, "nj": NJ, "nk": NK}, OpenCLRuntime(),
                     {"ni": "NI", "nj": "NJ", "nk": "NK"}, repeat=3)  # fmt: skip
    assert r.ok and r.runs == 3 and r.failed_run == 0
    assert (r.bytes_transferred, r.bytes_transferred_repeat) == (A_BYTES + B_BYTES + 2 * C_BYTES, 2 * C_BYTES)


def test_an_output_the_kernels_overwrite_is_never_copied_in() -> None:
    """soft_threshold: E is only written, everywhere; Y is written and then read for E."""
    case = _case("soft_threshold.c", {"n": 24, "m": 40})
    runtime = OpenCLRuntime()
    first, cmp, _ = case.run(runtime, case.inputs())
    assert cmp.ok, cmp.report()
    assert "E" not in first.copied_in and first.copied_out == ("E", "Y")
    changed = case.inputs()
    changed["X"] = -changed["X"]  # every element of E changes; a stale one would show
    second, cmp, _ = case.run(runtime, changed)
    assert cmp.ok, cmp.report()
    assert "E" not in second.copied_in and "X" in second.copied_in


def test_an_output_written_in_part_is_copied_in() -> None:
    """Without the size limits, E is declared 64x80 and the loops write 24x40 of it."""
    case = _case("soft_threshold.c", {"n": 24, "m": 40}, exact_sizes=False)
    run, cmp, _ = case.run(OpenCLRuntime(), case.inputs())
    assert cmp.ok, cmp.report()
    assert "E" in run.copied_in and run.bytes_in >= 3 * 64 * 80 * 8


def test_a_runtime_reused_at_another_size_starts_afresh(gemm: DeviceCase) -> None:
    runtime = OpenCLRuntime()
    gemm.run(runtime, gemm.inputs())
    other = _case("gemm.c", {"ni": 37, "nj": 5, "nk": 1})
    run, cmp, _ = other.run(runtime, other.inputs())
    assert cmp.ok, cmp.report()
    assert run.copied_in == ("A", "B", "C") and run.bytes_in == (37 * 1 + 1 * 5 + 37 * 5) * 8


def test_residency_compares_bytes_not_values() -> None:
    """NaN equals itself and 0.0 differs from -0.0: the device holds bits, not numbers."""
    residency = Residency(OpenCLMemory())
    hosts = {"x": np.array([np.nan, 0.0, 1.0])}
    residency.buffers(hosts)
    assert residency.copy_in(hosts, ["x"]).nbytes == 24
    assert residency.copy_in({"x": hosts["x"].copy()}, ["x"]).arrays == ()
    signed = {"x": np.array([np.nan, -0.0, 1.0])}
    assert residency.copy_in(signed, ["x"]).arrays == ("x",)
    out = {"x": np.zeros(3)}
    residency.copy_out(out, ["x"])
    assert np.array_equal(out["x"].view(np.uint8), signed["x"].view(np.uint8))
