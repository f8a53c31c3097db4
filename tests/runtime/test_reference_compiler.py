"""The reference is the original program as the C compiler builds it: when that compiler is wrong,
every differential check is. GCC 12.2 (Debian 12's cc) drops the updates of this nest at -O1 and
above; the property test of random nests found it as a "mismatch" of code that was right."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from core_compiler.runtime.inputs import make_inputs
from core_compiler.runtime.reference import _workarounds, run_reference
from core_compiler.runtime.signature import layout_for_source

IVOPTS_VICTIM = """void f(int n, double A[n + 1], double B[3*n + 1])
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      A[i] = 0.5 * A[i] + 0.25 * B[n - i + 2*j] + 0.125 * B[i + j] + 0.0625;
}
"""


def _by_hand(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = a.copy()
    for i in range(n):
        for j in range(n):
            a[i] = 0.5 * a[i] + 0.25 * b[n - i + 2 * j] + 0.125 * b[i + j] + 0.0625
    return a


def test_the_reference_computes_what_the_source_says(tmp_path: Path) -> None:
    path = tmp_path / "victim.c"
    path.write_text(IVOPTS_VICTIM)
    for n in (1, 2, 5):
        layout = layout_for_source(str(path), "f", {"n": n})
        inputs = make_inputs(layout)
        result = run_reference(str(path), layout, inputs)
        np.testing.assert_array_equal(result.arrays["A"], _by_hand(n, inputs["A"], inputs["B"]))


def test_gcc_before_14_gets_the_workaround_and_clang_does_not() -> None:
    gcc12 = "/usr/bin/cc\ncc (Debian 12.2.0-14+deb12u1) 12.2.0\nCopyright (C) 2022 Free Software Foundation, Inc.\n"
    gcc14 = "/usr/bin/gcc\ngcc (GCC) 14.1.0\nCopyright (C) 2024 Free Software Foundation, Inc.\n"
    clang = "/usr/bin/clang\nDebian clang version 14.0.6\nTarget: x86_64-pc-linux-gnu\n"
    assert _workarounds(gcc12) == ("-fno-ivopts",)
    assert _workarounds(gcc14) == ()
    assert _workarounds(clang) == ()
