"""The shape of the GPU code for the PolyBench kernels that ran slowly on an H100
(../shared/gpu/H100-2026-11-25.md): how many kernels, which statements each runs, how many host
loops launch it (one launch per iteration), how many block dimensions and threads, what goes to
shared memory or registers. Each line pins a fix:

- 2mm, 3mm: one kernel per matrix product, each parallel in two dimensions (the products were
  fused into one kernel parallel in `i` alone: 12x and 4.4x slower than PPCG), with register
  tiles (16x8 threads, each summing 4x4 points: tests/test_register_tiles.py);
- fdtd-2d, jacobi-2d: the time loop on the host, one launch per step of 2-d parallel kernels,
  their stencils in global memory (each element used about 4 times in a tile: shared memory made
  jacobi-2d 1.5x slower on an H100);
- symm: one 2-d kernel, `temp2` a register (it ran 3 one-thread kernels per (i, j): > 12 s);
- deriche: the row and column sweeps parallel across rows and columns, their running values in
  registers (19 one-thread kernels: 13x slower than PPCG).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from core_compiler.pipeline import gpu_program
from core_compiler.transform.gpu_mapping import Kernel
from tests.helpers import polybench_analysis

POLYBENCH = Path(__file__).parent / "polybench"


def _shape(k: Kernel) -> str:
    if not k.parallel:
        return f"{k.name} {','.join(k.statements)} one thread, {len(k.host_params)} host loops"
    places = sorted(f"{p.array}:{p.place}" for p in k.promotions)
    return (
        f"{k.name} {','.join(k.statements)} {k.n_block_dims}-d grid, block {'x'.join(map(str, reversed(k.block)))}, "
        f"{len(k.host_params)} host loops; {' '.join(places)}"
    ).rstrip("; ")


def _structure(name: str) -> list[str]:
    (sa,) = polybench_analysis(name).functions[0].scops
    return [_shape(k) for k in gpu_program(sa).kernels]


EXPECTED = {
    "2mm": [
        "kernel0 S0,S1 2-d grid, block 16x8, 0 host loops; A:shared B:shared tmp:register",
        "kernel1 S2,S3 2-d grid, block 16x8, 0 host loops; C:shared D:register tmp:shared",
    ],
    "3mm": [
        "kernel0 S2,S3 2-d grid, block 16x8, 0 host loops; C:shared D:shared F:register",
        "kernel1 S0,S1 2-d grid, block 16x8, 0 host loops; A:shared B:shared E:register",
        "kernel2 S4,S5 2-d grid, block 16x8, 0 host loops; E:shared F:shared G:register",
    ],
    "fdtd-2d": [
        "kernel0 S2 2-d grid, block 32x16, 1 host loops",
        "kernel1 S1 2-d grid, block 32x16, 1 host loops",
        "kernel2 S0,S3 2-d grid, block 32x16, 1 host loops; _fict_:shared",
    ],
    "jacobi-2d": [
        "kernel0 S0 2-d grid, block 32x16, 1 host loops",
        "kernel1 S1 2-d grid, block 32x16, 1 host loops",
    ],
    "symm": [
        "kernel0 S0,S1,S2,S3 2-d grid, block 32x16, 0 host loops; A:shared B:shared C:register temp2:register",
    ],
}


# 2mm and 3mm (5-8 s each: their register-tiled mapping) leave the fast tier
@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in ("2mm", "3mm") else n for n in sorted(EXPECTED)])
def test_the_gpu_code_has_the_fixed_structure(name: str) -> None:
    assert _structure(name) == EXPECTED[name]


def test_deriche_sweeps_run_in_parallel_with_their_running_values_in_registers() -> None:
    shapes = _structure("deriche")
    sweeps = [s for s in shapes if "1-d grid" in s]
    assert len(sweeps) == 4, "\n".join(shapes)
    for s in sweeps:
        assert "0 host loops" in s and ("ym1:register" in s or "yp1:register" in s), s
    one_thread = [s for s in shapes if "one thread" in s]
    assert all("0 host loops" in s for s in one_thread), one_thread  # the constants, once per call
