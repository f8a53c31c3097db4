"""Golden files of the model and dependences of every kernel in the suite
(update with `pytest --update-golden`, review the diff)."""

from __future__ import annotations

import pytest

from core_compiler.analysis import analyze_file
from core_compiler.remarks import RemarkKind
from core_compiler.report import remark_text
from tests.conftest import KERNELS, suite

KERNEL_SUITE = suite()


@pytest.mark.parametrize("kernel", KERNEL_SUITE, ids=[str(k["file"]) for k in KERNEL_SUITE])
def test_kernel_model_golden(kernel: dict[str, object], golden) -> None:  # type: ignore[no-untyped-def]
    path = f"tests/kernels/{kernel['file']}"
    fa = analyze_file(path, (KERNELS / str(kernel["file"])).read_text(), only=str(kernel["function"]))
    (fn,) = fa.functions
    assert not [r for r in fn.remarks if r.kind is RemarkKind.MISSED], "kernel must be modeled whole"
    assert len(fn.scops) == 1
    parts = [rec.text for rec in fn.trace if rec.name != "frontend"]
    parts.append("\n".join(remark_text(r) for r in fn.remarks) + "\n")
    golden(f"models/{str(kernel['file']).removesuffix('.c')}.txt", "\n".join(parts))


def test_suite_covers_every_category_and_parallelism() -> None:
    categories = {k["category"] for k in KERNEL_SUITE}
    assert {"blas", "linear-algebra", "solver", "stencil", "datamining", "dynprog"} <= categories
    assert len(KERNEL_SUITE) >= 25
    for k in KERNEL_SUITE:
        fa = analyze_file(f"tests/kernels/{k['file']}", only=str(k["function"]))
        loops = [lp for sa in fa.functions[0].scops for lp in sa.deps.loops]
        assert any(lp.parallel for lp in loops) == bool(k["parallel"]), k["file"]
