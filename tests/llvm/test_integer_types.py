"""Unsigned and narrow integer element types, as hashing and image code use them: the LLVM code
wraps, divides, shifts and compares them as C does (checked against gcc on the CPU, and on
OpenCL). The multiplications push values past 2^31, where a signed division or comparison
would give other results."""

from __future__ import annotations

from pathlib import Path

import pytest

from core_compiler.llvm.c_types import canonical
from core_compiler.runtime.differential import check_opencl
from tests.helpers import check_cpu

SOURCE = """
void hash(int n, const unsigned int a[n], unsigned int h[n]) {
  for (int i = 0; i < n; i++)
    h[i] = (a[i] ^ (a[i] >> 7)) * 2654435761u + (unsigned int)i;
}
void big(int n, const unsigned a[n], unsigned q[n], int top[n]) {
  for (int i = 0; i < n; i++) {
    q[i] = (a[i] * 400000000u) / 3u + (a[i] * 400000000u) % 7u;
    top[i] = a[i] * 400000000u > 2147483648u;
  }
}
void widen(int n, const unsigned char a[n], unsigned short b[n], long int c[n]) {
  for (int i = 0; i < n; i++) {
    b[i] = a[i] * 30000u;
    c[i] = (long)a[i] - 200;
  }
}
"""


@pytest.mark.parametrize(
    ("spelled", "canonical_name"),
    [("unsigned int", "unsigned int"), ("unsigned", "unsigned int"), ("signed int", "int"),
     ("long int", "long"), ("const unsigned long int", "unsigned long"), ("signed char", "signed char"),
     ("short int", "short"), ("long long int", "long long")],
)  # fmt: skip
def test_type_spellings(spelled: str, canonical_name: str) -> None:
    assert canonical(spelled) == canonical_name


@pytest.mark.parametrize("function", ["hash", "big", "widen"])
def test_unsigned_and_narrow_elements_match_gcc(tmp_path: Path, function: str) -> None:
    path = tmp_path / "ints.c"
    path.write_text(SOURCE)
    for n in (37, 1, 0):
        cpu = check_cpu(str(path), function, {"n": n})
        assert cpu.ok, cpu.report()
    device = check_opencl(str(path), function, {"n": 37})
    assert device.ok, device.comparison.report()
