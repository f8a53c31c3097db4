"""The searchers on a cost function (a unit test of the search algorithms: no compiler, no
hardware): deterministic for a seed, the budget and early stopping respected, the optimum found."""

from __future__ import annotations

import math
from collections.abc import Sequence

from core_compiler.tune.search import SearchOptions, Trial, evolutionary, exhaustive, search
from core_compiler.tune.space import (
    Choice,
    Config,
    Space,
    cpu_space,
    cpu_tiles,
    opencl_sizes,
    opencl_space,
)


def _cost(c: Config) -> float:
    """A bowl with its minimum at tile 64x16, variant `b`, plus a wrong answer for tile 8x8."""
    tiles = [int(c[k]) for k in ("tile0", "tile1")]
    return 1.0 + abs(math.log2(tiles[0] / 64)) + abs(math.log2(tiles[1] / 16)) + (0.0 if c["variant"] == "b" else 0.5)


def _evaluate(calls: list[int]):  # type: ignore[no-untyped-def]
    def evaluate(configs: Sequence[Config]) -> list[Trial]:
        calls.append(len(configs))
        return [Trial(c, _cost(c), ok=not (c["tile0"] == 8 and c["tile1"] == 8)) for c in configs]

    return evaluate


def _space() -> Space:
    return cpu_space(("a", "b", "c"), band=2, threads=4, tiled=("a", "b"))


class _Clock:
    """Each measured configuration takes a second."""

    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_exhaustive_finds_the_optimum_and_measures_the_default_first() -> None:
    space = cpu_space(("a", "b"), band=1, threads=1, tiled=("a", "b"))
    result = exhaustive(space, lambda cs: [Trial(c, 1.0 + abs(math.log2(int(c["tile0"]) / 64)), True) for c in cs])
    assert result.stopped == "exhausted" and result.candidates == space.size() == 10
    assert result.default.config == space.default
    assert result.best.config["tile0"] == 64
    assert len({t.config for t in result.trials}) == len(result.trials)


def test_evolutionary_is_deterministic_for_a_seed_and_converges() -> None:
    runs = [evolutionary(_space(), _evaluate([]), SearchOptions(seed=7, budget_s=math.inf, patience=4)) for _ in range(2)]
    assert [t.config for t in runs[0].trials] == [t.config for t in runs[1].trials]
    best = runs[0].best
    assert best.seconds <= 1.5, (best, runs[0].stopped)
    assert runs[0].stopped in ("converged", "generations", "exhausted")
    assert runs[0].trials[0].config == _space().default
    assert len(runs[0].trials) < _space().size()  # it did not measure everything


def test_wrong_candidates_never_win() -> None:
    def evaluate(configs: Sequence[Config]) -> list[Trial]:
        return [Trial(c, 0.001 if c["tile0"] == 8 else _cost(c), ok=c["tile0"] != 8) for c in configs]

    result = evolutionary(_space(), evaluate, SearchOptions(seed=1, budget_s=math.inf))
    assert any(t.config["tile0"] == 8 for t in result.trials)
    assert result.best.config["tile0"] != 8 and result.best.ok


def test_the_budget_stops_the_search() -> None:
    clock = _Clock()

    def evaluate(configs: Sequence[Config]) -> list[Trial]:
        clock.t += len(configs)
        return [Trial(c, _cost(c), True) for c in configs]

    result = evolutionary(_space(), evaluate, SearchOptions(seed=3, budget_s=20, population=6), clock=clock)
    assert result.stopped == "budget"
    assert len(result.trials) <= 20 + 6  # the batch that crossed the budget finishes


def test_seeds_are_in_the_first_population() -> None:
    seed = _space().default.with_(variant="b", tile0=64, tile1=16)
    result = evolutionary(_space(), _evaluate([]), SearchOptions(seed=0, budget_s=math.inf, generations=1), seeds=[seed])
    assert seed in [t.config for t in result.trials[:8]]
    assert result.best.config == seed


def test_search_picks_exhaustive_for_small_spaces() -> None:
    small = Space("cpu", (Choice("variant", ("a", "b")),))
    result = search(small, lambda cs: [Trial(c, 2.0 if c["variant"] == "a" else 1.0, True) for c in cs])
    assert result.searcher == "exhaustive" and result.speedup() == 2.0
    assert search(_space(), _evaluate([]), SearchOptions(budget_s=math.inf, exhaustive_limit=10)).searcher == "evolutionary"


def test_opencl_space_prunes_and_normalizes() -> None:
    space = opencl_space(tiled=2, threads=2)
    configs = list(space.all())
    assert configs[0]["mapping"] == "auto" and len(configs) == len(set(configs))
    for c in configs:
        if c["mapping"] == "explicit":
            assert int(c["block0"]) <= int(c["tile0"]) and int(c["block1"]) <= int(c["tile1"])
            assert int(c["block0"]) * int(c["block1"]) <= 1024
    explicit = space.default.with_(mapping="explicit", tile0=64, tile1=16, block0=16, block1=16)
    assert opencl_sizes(space.normal(explicit)) == "{kernel[i]->tile[64,16];kernel[i]->block[16,16]}"
    assert space.label(space.normal(explicit)) == "tile 64x16, block 16x16, coarsening 4x1"


def test_cpu_space_drops_tiles_of_untiled_variants() -> None:
    space = _space()
    untiled = space.normal(space.default.with_(variant="c", tile0=64))
    assert untiled["tile0"] == 32 and cpu_tiles(untiled) == ()
    assert cpu_tiles(space.default.with_(tile0=64)) == (64, 32)
    assert space.size() == 2 * (2 * 25 + 1)
