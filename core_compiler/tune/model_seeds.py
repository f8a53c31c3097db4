"""Seeds of the OpenCL search from the static GPU cost model (issue 30; TC seeds its genetic
search with the model's picks): a sample of the space's configurations is mapped and priced by
`transform/gpu_cost.py` at the tuned sizes, without building or running anything, and the
cheapest few go into the first population::

    seeds, ranked = model_seeds(scop, space, {"ni": 200, "nj": 200, "nk": 200}, count=4)
    ranked[0]    # (Config(... tile0=16 ...), 0.0031): the model's estimate in seconds

The model's rates are an H100's, not the OpenCL device's: it ranks mappings by the traffic and
the parallelism they give, which carry over; the search's measurements decide. Each pricing
maps the kernel with isl (a second or so), so the sample is bounded by `budget_s`.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Mapping
from typing import Any

import islpy as isl

from core_compiler.errors import HexploreError
from core_compiler.tune.space import Config, Space

MODEL_SAMPLE = 16  # configurations priced, at most
MODEL_BUDGET_S = 30.0


def model_seeds(scop: Any, space: Space, sizes: Mapping[str, int], count: int, budget_s: float = MODEL_BUDGET_S,
                seed: int = 0) -> tuple[list[Config], list[tuple[Config, float]]]:  # fmt: skip
    """The `count` configurations of a sample of `space` that the cost model prices lowest at
    `sizes`, and every priced one with its estimate (cheapest first); `scop` is what
    `pipeline.gpu_program` maps."""
    deadline = time.monotonic() + budget_s
    priced: list[tuple[Config, float]] = []
    for config in sample(space, MODEL_SAMPLE, seed):
        if time.monotonic() > deadline:
            break
        estimate = price(scop, config, sizes)
        if math.isfinite(estimate):
            priced.append((config, estimate))
    priced.sort(key=lambda p: p[1])
    return [c for c, _ in priced[:count]], priced


def sample(space: Space, size: int, seed: int) -> list[Config]:
    """The explicit configurations to price: random ones that fit, distinct, without a vector
    width (the model does not see it) and not the default (measured anyway)."""
    rng = random.Random(seed)
    out: dict[Config, None] = {}
    for _ in range(size * 20):
        config = space.normal(space.random(rng).with_(mapping="explicit", vector=1))
        if config != space.default and space.fits(config):
            out[config] = None
        if len(out) >= size:
            break
    return list(out)


def price(scop: Any, config: Config, sizes: Mapping[str, int]) -> float:
    """The cost model's GPU time of `config` at `sizes` in seconds; inf where it cannot say."""
    from core_compiler.pipeline import gpu_program
    from core_compiler.transform.gpu_cost import gpu_cost
    from core_compiler.tune.measure import gpu_options

    try:
        program = gpu_program(scop, gpu_options(config))
        cost = gpu_cost(program)
        return float(cost.gpu_time().at(cost.values(sizes)))
    except (isl.Error, HexploreError, ValueError, KeyError, ZeroDivisionError):
        return math.inf
