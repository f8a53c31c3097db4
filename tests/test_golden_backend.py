"""Golden files of every back-end pass of every kernel in the suite: the editor pipeline
(`pipeline.backend`: ad, schedule, gpu-mapping, codegen-cuda, codegen-opencl, llvm-ir, ptx) and the
C target, in tests/golden/backend/<kernel>/<label>.txt (update with `pytest --update-golden` and
review the diff). Each record is its text and then its remarks, one line each, as `tests.replay`
writes them, so a golden equals the process-replay recording of the same pass.
"""

from __future__ import annotations

import pytest

from core_compiler.analysis import analyze_file
from core_compiler.compile import compile_file
from core_compiler.pipeline import backend
from core_compiler.remarks import Remark
from tests.conftest import GOLDEN, KERNELS, suite

KERNEL_SUITE = suite()


def remark_lines(remarks: tuple[Remark, ...] | list[Remark]) -> str:
    return "".join(f"-- remark {r.kind.value} {r.name} {r.range}: {r.message}\n" for r in remarks)


# 3mm and symm (8-14 s each: their register-tiled mapping) run in the long tier (`make test-long`);
# 2mm and gemm keep that structure in both tiers
SLOW_GOLDENS = {"3mm.c", "symm.c"}
# the next heaviest (4-9 s of CPU each) in `make test` but not in `make test-fast` (2 minutes)
HEAVY_GOLDENS = {"2mm.c", "heat_3d.c", "covariance.c", "correlation.c", "syrk.c", "syr2k.c"}


def _marks(file: object) -> tuple[pytest.MarkDecorator, ...]:
    return (pytest.mark.long,) if file in SLOW_GOLDENS else (pytest.mark.slow,) if file in HEAVY_GOLDENS else ()


CASES = [pytest.param(k, id=str(k["file"]), marks=_marks(k["file"])) for k in KERNEL_SUITE]


@pytest.mark.parametrize("kernel", CASES)
def test_backend_passes_golden(kernel: dict[str, object], golden, request: pytest.FixtureRequest) -> None:  # type: ignore[no-untyped-def]
    file, stem = str(kernel["file"]), str(kernel["file"]).removesuffix(".c")
    path = f"tests/kernels/{file}"  # relative, so remark ranges do not depend on the checkout
    text = (KERNELS / file).read_text()
    fa = analyze_file(path, text, only=str(kernel["function"]))
    (fn,) = fa.functions
    records = backend(fn, source=(path, text)).records
    labels = [rec.label for rec in records]
    assert len(set(labels)) == len(labels), labels
    assert "backend-error" not in {rec.name for rec in records}, [r.text for r in records if r.name == "backend-error"]
    for rec in records:
        golden(f"backend/{stem}/{rec.label}.txt", rec.text + remark_lines(rec.remarks))
    result = compile_file(fa, "c", text=text)
    (body,) = result.files.values()
    golden(f"backend/{stem}/compile-c.txt", body + remark_lines(result.remarks))
    expected = {f"{label}.txt" for label in labels} | {"compile-c.txt"}
    stale = {p.name for p in (GOLDEN / "backend" / stem).iterdir()} - expected
    if stale and request.config.getoption("--update-golden"):
        for name in stale:
            (GOLDEN / "backend" / stem / name).unlink()
    else:
        assert not stale, f"golden files of passes that no longer run: {sorted(stale)} (pytest --update-golden)"
