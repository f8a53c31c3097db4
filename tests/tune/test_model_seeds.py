"""The OpenCL search's seeds from the static cost model (`tune/model_seeds.py`): a sample of
explicit configurations, priced by the GPU cost model without running anything."""

from __future__ import annotations

import json

import pytest

from core_compiler.runtime.differential import device_case
from core_compiler.tune.model_seeds import model_seeds, price, sample
from core_compiler.tune.space import opencl_space
from tests.conftest import KERNELS

GEMM = {k["file"]: k for k in json.loads((KERNELS / "suite.json").read_text())}["gemm.c"]
SIZES = {"ni": 200, "nj": 200, "nk": 200}


def test_the_sample_is_explicit_distinct_fitting_and_without_the_default() -> None:
    space = opencl_space(3, 2)
    picked = sample(space, 8, seed=3)
    assert len(picked) == 8 and len(set(picked)) == 8
    assert all(c["mapping"] == "explicit" and c["vector"] == 1 and space.fits(c) and c != space.default for c in picked)
    assert picked == sample(space, 8, seed=3)  # the same seed, the same sample


@pytest.mark.long
def test_the_model_prices_few_threads_a_block_above_many_and_seeds_the_cheapest() -> None:
    case = device_case(str(KERNELS / "gemm.c"), "kernel_gemm", SIZES, GEMM["size_limits"])
    space = opencl_space(3, 2)
    explicit = space.default.with_(mapping="explicit", tile0=32, tile1=32, tile2=32)
    many = space.normal(explicit.with_(block0=16, block1=32))  # 512 threads a block
    few = space.normal(explicit.with_(tile0=64, block0=4, block1=4))  # 16 threads, 16x8 points each
    assert price(case.values.scop, many, SIZES) < price(case.values.scop, few, SIZES)
    seeds, ranked = model_seeds(case.values.scop, space, SIZES, count=1, budget_s=5)  # prices 1 to 3 (isl: ~1 s each)
    assert ranked and seeds == [ranked[0][0]] and [e for _, e in ranked] == sorted(e for _, e in ranked)
