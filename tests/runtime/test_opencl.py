"""OpenCL on PoCL's CPU device: work-groups, __local memory, barriers, 2-D launches."""

from __future__ import annotations

import numpy as np
import pytest

from core_compiler.runtime import (
    BufferArg,
    Launch,
    LocalArg,
    OpenCLError,
    ScalarArg,
    run_opencl,
)
from core_compiler.runtime.opencl import pocl_device

REDUCE = """
#define WG 64
__kernel void partial_sums(__global const double *x, __global double *partial, int n)
{
  __local double tile[WG];                 /* a __local array declared in the kernel */
  int lid = get_local_id(0), gid = get_global_id(0);
  tile[lid] = gid < n ? x[gid] : 0.0;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = WG / 2; s > 0; s >>= 1) {   /* tree reduction over the work-group */
    if (lid < s)
      tile[lid] += tile[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0)
    partial[get_group_id(0)] = tile[0];
}

__kernel void total(__global const double *partial, __global double *out, int groups,
                    __local double *scratch)
{
  int lid = get_local_id(0);
  scratch[lid] = lid < groups ? partial[lid] : 0.0;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid == 0) {
    double s = 0.0;
    for (int i = 0; i < get_local_size(0); i++)
      s += scratch[i];
    out[0] = s;
  }
}
"""


def test_work_group_reduction_with_local_memory_and_barriers() -> None:
    n, wg = 1000, 64
    groups = -(-n // wg)  # 16
    x = np.random.default_rng(0).uniform(0.5, 1.5, n)
    launches = [
        Launch("partial_sums", (groups * wg,), (wg,),
               (BufferArg("x"), BufferArg("partial"), ScalarArg(n, "int32"))),
        Launch("total", (16,), (16,),
               (BufferArg("partial"), BufferArg("out"), ScalarArg(groups), LocalArg(16 * 8))),
    ]  # fmt: skip
    arrays = {"x": x, "partial": np.zeros(groups), "out": np.zeros(1)}
    result = run_opencl(REDUCE, launches, arrays)
    expected = [x[g * wg : (g + 1) * wg].sum() for g in range(groups)]
    np.testing.assert_allclose(result.arrays["partial"], expected, rtol=1e-13)
    assert result.arrays["out"][0] == pytest.approx(x.sum(), rel=1e-13)
    np.testing.assert_array_equal(arrays["partial"], 0.0)  # the host arrays are not written
    assert [t.kernel for t in result.launches] == ["partial_sums", "total"]
    assert all(t.seconds > 0 and not t.skipped for t in result.launches)
    assert result.device == pocl_device().name


TRANSPOSE = """
#define T 8
__kernel void transpose(__global const float *a, __global float *b, int rows, int cols)
{
  __local float tile[T][T + 1];
  int c = get_global_id(0), r = get_global_id(1);
  int lc = get_local_id(0), lr = get_local_id(1);
  if (r < rows && c < cols)
    tile[lr][lc] = a[r * cols + c];
  barrier(CLK_LOCAL_MEM_FENCE);
  int oc = get_group_id(1) * T + lc, or_ = get_group_id(0) * T + lr;
  if (or_ < cols && oc < rows)
    b[or_ * rows + oc] = tile[lc][lr];
}
"""


def test_2d_launch_with_a_local_tile() -> None:
    rows, cols = 13, 21
    a = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols)
    launch = Launch("transpose", (24, 16), (8, 8),
                    (BufferArg("a"), BufferArg("b"), ScalarArg(rows), ScalarArg(cols)))  # fmt: skip
    result = run_opencl(TRANSPOSE, [launch], {"a": a, "b": np.zeros((cols, rows), np.float32)})
    np.testing.assert_array_equal(result.arrays["b"], a.T)
    assert result.arrays["b"].shape == (cols, rows)


def test_empty_launches_and_arrays() -> None:
    src = "__kernel void k(__global double *x) { x[get_global_id(0)] += 1.0; }"
    launch = Launch("k", (0,), None, (BufferArg("x"),))
    result = run_opencl(src, [launch], {"x": np.zeros((0, 3))})
    assert result.arrays["x"].shape == (0, 3)
    assert result.launches[0].skipped


def test_errors_are_clear() -> None:
    src = "__kernel void k(__global double *x) { x[get_global_id(0)] = 1.0; }"
    arrays = {"x": np.zeros(10)}
    with pytest.raises(OpenCLError, match="multiple of local size"):
        run_opencl(src, [Launch("k", (10,), (4,), (BufferArg("x"),))], arrays)
    with pytest.raises(OpenCLError, match="no array named 'y'"):
        run_opencl(src, [Launch("k", (10,), None, (BufferArg("y"),))], arrays)
    with pytest.raises(OpenCLError, match="no kernel 'nope'"):
        run_opencl(src, [Launch("nope", (10,), None, (BufferArg("x"),))], arrays)
    with pytest.raises(OpenCLError, match="does not build"):
        run_opencl("__kernel void k(__global double *x) { x[0] = undeclared; }", [], arrays)


def test_a_kernel_belongs_to_its_program_when_programs_come_and_go() -> None:
    """Programs are built and collected in turn (the build cache evicts them); each new program
    may reuse the address of a collected one, and its kernel must still be its own."""
    import gc

    import pyopencl as cl

    from core_compiler.runtime.opencl import _context, _kernel

    ctx = _context()[0]
    for k in range(12):
        n = 1 + k % 3
        params = ", ".join(f"__global double *a{j}" for j in range(n))
        program = cl.Program(ctx, f"__kernel void kernel0({params}) {{ }}").build()
        assert _kernel(program, "kernel0").num_args == n
        del program
        gc.collect()
