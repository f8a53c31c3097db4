"""Searchers over a `Space`: exhaustive for small spaces, evolutionary (Tensor Comprehensions'
genetic search) for the others. Both take `evaluate`, which measures a batch of configurations
(in parallel, `engine.py`) and returns a `Trial` per configuration, checked against the reference
(a wrong or failed candidate is a trial with ``seconds = inf``: it never wins), and stop at a time
budget. They know nothing of compilers: a unit test gives them a cost function and a fake clock::

    result = search(space, evaluate, SearchOptions(budget_s=60, seed=1))
    result.best.config, result.best.seconds, result.speedup()

The evolutionary search (TC, Vasilache et al. 2018, section 6): a population seeded with the
default configuration and the `seeds` (the static model's picks), filled with random ones that
fit; each generation keeps the `survivors` fastest, then breeds children — two parents drawn
with probability proportional to their speed (1/time), a uniform crossover of their choices,
mutation of each choice with `mutation_rate` — that are new and fit the limits. It stops at the
budget, after `generations`, when `patience` generations in a row found nothing faster (early
stopping), or when no new configuration is left.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from core_compiler.tune.space import EXHAUSTIVE_LIMIT, Config, Space


@dataclass(frozen=True)
class Trial:
    """One configuration measured: its best time, or inf where it failed, differed from the
    reference (`ok` False) or was not run in time."""

    config: Config
    seconds: float
    ok: bool
    message: str = ""  # why it failed or differed; "" when it ran and matched
    build_s: float = 0.0

    @property
    def counts(self) -> bool:
        return self.ok and math.isfinite(self.seconds)


Evaluate = Callable[[Sequence[Config]], Sequence[Trial]]


@dataclass(frozen=True)
class SearchOptions:
    budget_s: float = 60.0  # wall time of the whole search, measurements included
    seed: int = 0
    population: int = 8
    generations: int = 50
    survivors: int = 2  # TC's elites: carried into the next generation unchanged
    mutation_rate: float = 0.25
    crossover_rate: float = 0.8
    patience: int = 3  # generations without a faster configuration: stop
    batch: int = 4  # exhaustive search: configurations measured at once
    exhaustive_limit: int = EXHAUSTIVE_LIMIT


@dataclass(frozen=True)
class SearchResult:
    searcher: str  # "exhaustive" | "evolutionary"
    trials: tuple[Trial, ...]  # in the order measured, the default first
    candidates: int  # configurations in the space (after pruning); -1 not counted
    stopped: str  # "exhausted" | "budget" | "converged" | "generations"
    seconds: float
    generations: int = 0

    @property
    def default(self) -> Trial:
        return self.trials[0]

    @property
    def best(self) -> Trial:
        """The fastest trial that matched the reference; the default where none did."""
        return min((t for t in self.trials if t.counts), key=lambda t: t.seconds, default=self.default)

    def speedup(self) -> float:
        """The default's time over the best's (1.0 where either is not timed)."""
        if not (self.default.counts and self.best.counts) or self.best.seconds <= 0:
            return 1.0
        return self.default.seconds / self.best.seconds


@dataclass
class _Run:
    """The search's state: what was measured, and the clock."""

    evaluate: Evaluate
    budget_s: float
    clock: Callable[[], float]
    on_trial: Callable[[Trial], None]
    start: float = 0.0
    seen: dict[Config, Trial] = field(default_factory=dict)
    order: list[Trial] = field(default_factory=list)

    def over(self) -> bool:
        return self.clock() - self.start >= self.budget_s

    def measure(self, configs: Iterable[Config]) -> list[Trial]:
        new = list(dict.fromkeys(c for c in configs if c not in self.seen))
        if not new or self.over():
            return [self.seen[c] for c in configs if c in self.seen]
        for trial in self.evaluate(new):
            self.seen[trial.config] = trial
            self.order.append(trial)
            self.on_trial(trial)
        return [self.seen[c] for c in dict.fromkeys(configs) if c in self.seen]

    def result(self, searcher: str, candidates: int, stopped: str, generations: int = 0) -> SearchResult:
        return SearchResult(searcher, tuple(self.order), candidates, stopped, self.clock() - self.start, generations)


def search(space: Space, evaluate: Evaluate, options: SearchOptions = SearchOptions(), seeds: Sequence[Config] = (),
           clock: Callable[[], float] = time.monotonic, on_trial: Callable[[Trial], None] | None = None) -> SearchResult:  # fmt: skip
    """Exhaustive where the space has at most `options.exhaustive_limit` configurations, else
    evolutionary."""
    count = count_candidates(space, options.exhaustive_limit)
    if 0 <= count <= options.exhaustive_limit:
        return exhaustive(space, evaluate, options, clock, on_trial)
    return evolutionary(space, evaluate, options, seeds, clock, on_trial)


def count_candidates(space: Space, past: int = 200_000) -> int:
    """The space's size, or -1 where its raw product is past `past` configurations (not counted)."""
    return space.size() if space.raw_size() <= past else -1


def exhaustive(space: Space, evaluate: Evaluate, options: SearchOptions = SearchOptions(),
               clock: Callable[[], float] = time.monotonic, on_trial: Callable[[Trial], None] | None = None) -> SearchResult:  # fmt: skip
    """Every configuration, the default first, `options.batch` at a time, until the budget."""
    run = _Run(evaluate, options.budget_s, clock, on_trial or (lambda t: None), clock())
    configs = list(space.all())
    run.measure(configs[:1])  # the default alone first: what the others are measured against
    batch = max(options.batch, 1)
    for k in range(1, len(configs), batch):
        if run.over():
            return run.result("exhaustive", len(configs), "budget")
        run.measure(configs[k : k + batch])
    stopped = "exhausted" if len(run.seen) >= len(configs) else "budget"
    return run.result("exhaustive", len(configs), stopped)


def evolutionary(space: Space, evaluate: Evaluate, options: SearchOptions = SearchOptions(), seeds: Sequence[Config] = (),
                 clock: Callable[[], float] = time.monotonic, on_trial: Callable[[Trial], None] | None = None) -> SearchResult:  # fmt: skip
    """TC's genetic search (module docstring); deterministic for a seed and a deterministic
    `evaluate`."""
    rng = random.Random(options.seed)
    run = _Run(evaluate, options.budget_s, clock, on_trial or (lambda t: None), clock())
    candidates = count_candidates(space)
    run.measure([space.default])
    population = run.measure(_initial(space, seeds, options.population, rng, run.seen))
    best, stale, generation = _best_time(run.order), 0, 0
    for generation in range(1, options.generations + 1):
        if run.over():
            return run.result("evolutionary", candidates, "budget", generation - 1)
        children = _children(space, population, options, rng, run.seen)
        if not children:
            return run.result("evolutionary", candidates, "exhausted", generation - 1)
        measured = run.measure(children)
        population = _survivors(population, options.survivors) + measured
        now = _best_time(run.order)
        stale = stale + 1 if now >= best else 0
        best = min(best, now)
        if stale >= options.patience:
            return run.result("evolutionary", candidates, "converged", generation)
    return run.result("evolutionary", candidates, "generations", generation)


def _initial(space: Space, seeds: Sequence[Config], size: int, rng: random.Random, seen: dict[Config, Trial]) -> list[Config]:
    """The default, the seeds that fit, then random configurations that fit, `size` in all."""
    out = list(dict.fromkeys([space.default, *(space.normal(s) for s in seeds if space.fits(space.normal(s)))]))
    for _ in range(50 * size):
        if len(out) >= size:
            break
        c = space.random(rng)
        if c not in out and space.fits(c):
            out.append(c)
    return out[:max(size, 1)]


def _children(space: Space, population: Sequence[Trial], options: SearchOptions, rng: random.Random,
              seen: dict[Config, Trial]) -> list[Config]:  # fmt: skip
    """`population - survivors` new configurations that fit: bred from parents drawn by speed,
    else (where breeding finds nothing new) random ones."""
    want = max(options.population - options.survivors, 1)
    out: list[Config] = []
    weights = [1.0 / t.seconds if t.counts and t.seconds > 0 else 0.0 for t in population]
    if not any(weights):
        weights = [1.0] * len(population)
    for _ in range(40 * want):
        if len(out) >= want:
            break
        a, b = rng.choices(population, weights)[0], rng.choices(population, weights)[0]
        child = space.crossover(a.config, b.config, rng) if rng.random() < options.crossover_rate else a.config
        child = space.mutate(child, rng, options.mutation_rate)
        if child not in seen and child not in out and space.fits(child):
            out.append(child)
    for _ in range(40 * want):  # breeding is stuck in a corner: fresh blood
        if len(out) >= want:
            break
        c = space.random(rng)
        if c not in seen and c not in out and space.fits(c):
            out.append(c)
    return out


def _survivors(population: Sequence[Trial], n: int) -> list[Trial]:
    return sorted(population, key=lambda t: (not t.counts, t.seconds, t.config))[:n]


def _best_time(trials: Sequence[Trial]) -> float:
    return min((t.seconds for t in trials if t.counts), default=math.inf)
