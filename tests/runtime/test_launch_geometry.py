"""The launch geometry both runtimes use (`launches.kernel_launches`) against what the generated
CUDA host code launches: its ``dim3 kN_block(…)`` and ``dim3 kN_grid(…)``, evaluated here with
C's integer semantics. No GPU needed."""

from __future__ import annotations

import ast
import re

import pytest

from core_compiler.codegen.cuda import generate_cuda
from core_compiler.runtime.differential import device_case
from core_compiler.runtime.gpu_opencl import opencl_launch
from core_compiler.runtime.launches import KernelLaunch, kernel_launches
from tests.conftest import KERNELS, suite


def _c_int(node: ast.expr, env: dict[str, int]) -> int:
    """An integer C expression (``/`` and ``%`` truncate towards zero; isl's macros)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.Name):
        return env[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_c_int(node.operand, env)
    if isinstance(node, ast.BinOp):
        a, b = _c_int(node.left, env), _c_int(node.right, env)
        quotient = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1) if isinstance(node.op, ast.Div | ast.Mod) else 0
        ops = {ast.Add: a + b, ast.Sub: a - b, ast.Mult: a * b, ast.Div: quotient, ast.Mod: a - b * quotient}
        return ops[type(node.op)]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        a, b = (_c_int(arg, env) for arg in node.args)
        return {"hx_max": max(a, b), "hx_min": min(a, b), "floord": a // b}[node.func.id]
    raise ValueError(f"not an integer C expression: {ast.unparse(node)}")


def _dim3(args: str, env: dict[str, int]) -> tuple[int, int, int]:
    values = [_c_int(e, env) for e in ast.parse(f"({args},)", mode="eval").body.elts]  # type: ignore[attr-defined]
    x, y, z = [*values, 1, 1, 1][:3]
    return x, y, z


def _host_geometry(host_cu: str, env: dict[str, int]) -> dict[str, tuple[tuple[int, int, int], tuple[int, int, int]]]:
    """Kernel name -> (grid, block) as the host code's ``dim3`` declarations say."""
    dims = {(k, what): args for k, what, args in re.findall(r"dim3 k(\d+)_(grid|block)\((.*)\);", host_cu)}
    return {f"kernel{k}": (_dim3(dims[k, "grid"], env), _dim3(dims[k, "block"], env)) for k, _ in dims}


def _launches(file: str, params: dict[str, int]) -> tuple[list[KernelLaunch], str]:
    entry = next(k for k in suite() if k["file"] == file)
    case = device_case(str(KERNELS / file), str(entry["function"]), params, entry["size_limits"])  # type: ignore[arg-type]
    v = case.values
    host = generate_cuda(case.program.gpu, "k").host_cu
    return kernel_launches(case.program, v.ints, v.floats), host


@pytest.mark.parametrize(
    ("file", "params"),
    [
        ("gemm.c", {"ni": 40, "nj": 50, "nk": 30}),
        ("gemm.c", {"ni": 100, "nj": 37, "nk": 1}),
        ("2mm.c", {"ni": 32, "nj": 36, "nk": 40, "nl": 44}),
        ("heat_3d.c", {"n": 70, "tsteps": 2}),  # 2 block axes, 3 thread axes: grid (1, y, z)
    ],
)
def test_grid_and_block_are_what_the_cuda_host_launches(file: str, params: dict[str, int]) -> None:
    launches, host = _launches(file, params)
    expected = _host_geometry(host, params)
    assert launches and {k.kernel for k in launches} == set(expected)
    for k in launches:
        assert (k.grid, k.block) == expected[k.kernel], k.kernel


def test_gemm_geometry_by_hand() -> None:
    """Register tiles of 32x64 (i, j) with 16x8 threads: x runs along j (nj = 50: 1 block), y along
    i (ni = 100: 4 blocks)."""
    (k,), _ = _launches("gemm.c", {"ni": 100, "nj": 50, "nk": 30})
    assert (k.grid, k.block, k.axes) == ((1, 4, 1), (16, 8, 1), 2)
    cl = opencl_launch(k)
    assert (cl.global_size, cl.local_size) == ((16, 32), (16, 8))


def test_an_empty_size_launches_nothing() -> None:
    (k,), host = _launches("gemm.c", {"ni": 0, "nj": 50, "nk": 30})
    assert k.empty and k.grid == (1, 0, 1)
    assert _host_geometry(host, {"ni": 0, "nj": 50, "nk": 30})["kernel0"][0] == (1, 1, 1)  # clamped to 1
