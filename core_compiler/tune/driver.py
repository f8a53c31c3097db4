"""The tuning of one function (`hexplore tune`): its search space from the default schedule and
mapping, the search on an engine (`engine.py`), the fastest checked configuration kept in the
tuning cache, and the result as a table::

    result = tune(Task.of("gemm.c", "kernel_gemm", "opencl", sizes, parse), TuneOptions(budget_s=60))
    print(result.table())
    result.line()    # "tuned: tile 64x16x32, block 16x16, 1.80x over default, on pthread-... (PoCL)"

Records (`runtime/tuning.py`): on ``cpu`` a `Tuned` (variant, one thread or all, tile sizes) under
the key `hexplore run` reads at these sizes, and a `TunedConfig` for ``compile --target c`` (the
tile sizes); on ``opencl`` a `TunedConfig` for `run --device opencl` at these sizes on this
device, and one for ``compile --target opencl`` (which knows no sizes: the last tuning of this
source). Only a configuration that matched the original is recorded (the default too, where
nothing beat it: the next `run` then skips its race).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import islpy as isl

from core_compiler.runtime import tuning
from core_compiler.tune.engine import LATE, Engine, open_engine
from core_compiler.tune.measure import Task, cores, device_name
from core_compiler.tune.search import SearchOptions, SearchResult, Trial, search
from core_compiler.tune.space import Config, Space, cpu_space, cpu_tiles, opencl_sizes, opencl_space

DEFAULT_GRACE_S = 300.0  # the default candidate's time past the budget, where it needs it (a worker's first preparation)
SEED_VARIANTS = 4
RUNOFF = 3  # the fastest configurations of a search timed again against the default
MODEL_SEEDS = 3  # the cost model's cheapest configurations in the first population
RUNOFF_ROUNDS = 2  # CPU seeds: the race's likeliest winners (`cpu_variants.RACE_ORDER`), at default tiles


@dataclass(frozen=True)
class TuneOptions:
    budget_s: float = 60.0
    seed: int = 0
    engine: str = "auto"  # `engine.open_engine`'s kinds
    jobs: int = 0  # candidates at once (0: the cores)
    address: str | None = None  # ray://host:port
    one_thread: bool = False  # cpu: only one-thread candidates (tune for one core)
    population: int = 0  # 0: twice the jobs, at least 6
    store: bool = True  # write the records
    model_seeds: bool = True  # opencl: the cost model's cheapest picks in the first population (`model_seeds.py`)


@dataclass(frozen=True)
class TuneResult:
    task: Task
    space: Space = field(repr=False)
    search: SearchResult
    device: str
    engine: str

    @property
    def best(self) -> Trial:
        return self.search.best

    def label(self, config: Config) -> str:
        return self.space.label(config)

    def line(self) -> str:
        """``tuned: tile 64x16, block 16x16, 1.80x over default, on pthread-AMD EPYC (PoCL)``"""
        best, default = self.best, self.search.default
        if best.config == default.config or not best.counts:
            return f"tuned: the default ({self.label(default.config)}) is the fastest found, on {self.device}"
        return f"tuned: {self.label(best.config)}, {self.search.speedup():.2f}x over default, on {self.device}"

    def table(self, rows: int = 10) -> str:
        """The fastest `rows` configurations, the default's row always; then the failed count."""
        s = self.search
        ok = sorted((t for t in s.trials if t.counts), key=lambda t: t.seconds)
        shown = ok[:rows] + ([s.default] if s.default not in ok[:rows] else [])
        width = max([len(self.label(t.config)) for t in shown] + [13])
        lines = [f"{'#':>3}  {'configuration':{width}}  {'time':>10}  {'vs default':>10}"]
        for t in shown:
            rank = ok.index(t) + 1 if t in ok else "-"
            gain = f"{s.default.seconds / t.seconds:.2f}x" if s.default.counts and t.counts else "-"
            mark = " (default)" if t.config == s.default.config else ""
            time_text = _duration(t.seconds) if t.counts else t.message[:40] or "failed"
            lines.append(f"{rank:>3}  {self.label(t.config):{width}}  {time_text:>10}  {gain:>10}{mark}")
        late = sum(1 for t in s.trials if t.message == LATE)
        failed = sum(1 for t in s.trials if not t.counts) - late
        count = f"{len(s.trials) - late} of {s.candidates}" if s.candidates >= 0 else f"{len(s.trials) - late}"
        lines.append(f"{s.searcher} search: {count} configurations measured in {s.seconds:.1f} s ({s.stopped}); "
                     f"{failed} failed or differed from the original, {late} stopped at the budget")  # fmt: skip
        return "\n".join(lines)


def tune(task: Task, options: TuneOptions = TuneOptions(), on_trial: Callable[[Trial, int], None] | None = None,
         engine: Engine | None = None) -> TuneResult:  # fmt: skip
    """Search `task`'s space within `options.budget_s` (after the space's set-up and the engine's
    start; the default candidate is measured even past it, `DEFAULT_GRACE_S`) and record
    the fastest configuration that matches the original. Raises what preparing the function
    raises (`NotCheckable`, ...) before any candidate runs."""
    space, seeds = space_for(task, options.one_thread, _model_budget(options))
    if engine is not None:
        return _tune(task, space, seeds, options, on_trial, engine)
    with open_engine(options.engine, options.jobs, options.address) as opened:
        return _tune(task, space, seeds, options, on_trial, opened)


def _tune(task: Task, space: Space, seeds: list[Config], options: TuneOptions,
          on_trial: Callable[[Trial, int], None] | None, engine: Engine) -> TuneResult:  # fmt: skip
    deadline = time.monotonic() + options.budget_s
    slots = options.jobs or engine.slots
    search_options = SearchOptions(budget_s=options.budget_s, seed=options.seed,
                                   population=options.population or max(2 * slots, 6), batch=max(slots, 1))  # fmt: skip
    count = [0]

    def evaluate(configs: Sequence[Config]) -> list[Trial]:
        # the default always gets its time: every other candidate is measured against it
        late = time.monotonic() + DEFAULT_GRACE_S if space.default in configs else deadline
        trials = engine.map(task, configs, max(deadline, late))
        for t in trials:
            count[0] += 1
            if on_trial is not None:
                on_trial(t, count[0])
        return trials

    found = _runoff(search(space, evaluate, search_options, seeds), engine, task)
    result = TuneResult(task, space, found, device_name(task.target), engine.name)
    if options.store:
        record(result)
    return result


def _runoff(result: SearchResult, engine: Engine, task: Task) -> SearchResult:
    """The default and the `RUNOFF` fastest configurations timed again, in turns, `RUNOFF_ROUNDS`
    times (as the CPU race's close contenders are): on a shared machine a busy moment during one
    candidate's timing (the default's above all: it makes the gain) must not decide. Each keeps
    its best time (interference only slows a call); one that fails now (it differs only
    sometimes) does not count."""
    ranked = sorted((t for t in result.trials if t.counts), key=lambda t: t.seconds)[:RUNOFF]
    contenders = list(dict.fromkeys([result.default.config, *(t.config for t in ranked)]))
    if len(contenders) < 2:
        return result
    best = {t.config: t for t in result.trials}
    for _ in range(RUNOFF_ROUNDS):
        for config in contenders:  # one at a time: in turns, not side by side
            (again,) = engine.map(task, [config], time.monotonic() + DEFAULT_GRACE_S)
            old = best[config]
            best[config] = replace(old, seconds=min(old.seconds, again.seconds)) if again.counts else again
    return replace(result, trials=tuple(best[t.config] for t in result.trials))


# ------------------------------------------------------------------------------ spaces


def space_for(task: Task, one_thread: bool = False, model_s: float = 0.0) -> tuple[Space, list[Config]]:
    """The task's space and the seeds of its search; on OpenCL with `model_s` > 0, the cost
    model's picks first (priced for at most that many seconds)."""
    return _cpu_space(task, one_thread) if task.target == "cpu" else _opencl_space(task, model_s)


def _model_budget(options: TuneOptions) -> float:
    """Seconds for the cost model's seeds: a third of the budget, at most `MODEL_BUDGET_S`."""
    from core_compiler.tune.model_seeds import MODEL_BUDGET_S

    return min(MODEL_BUDGET_S, options.budget_s / 3) if options.model_seeds else 0.0


def _cpu_space(task: Task, one_thread: bool) -> tuple[Space, list[Config]]:
    from core_compiler.runtime.cpu_variants import RACE_ORDER, TILED, case_variants, prepare
    from core_compiler.transform.schedule import compute_schedule

    case = prepare(task.path, task.function, task.sizes, parse=task.parse)
    differ = case_variants(case)
    variants = tuple(v for v in RACE_ORDER if v in differ)
    scop = case.analysis.scop
    band = _widest_permutable_band(compute_schedule(scop, case.analysis.deps))
    space = cpu_space(variants, band, cores(task), tuple(v for v in variants if v in TILED), one_thread)
    seeds = [space.normal(space.default.with_(variant=v)) for v in variants[1:SEED_VARIANTS]]
    return space, seeds


def _widest_permutable_band(schedule: isl.Schedule) -> int:
    widest = [0]

    def visit(node: isl.ScheduleNode) -> bool:
        if node.get_type() == isl.schedule_node_type.band and node.band_n_member() >= 2 and node.band_get_permutable():
            widest[0] = max(widest[0], node.band_n_member())
        return True

    schedule.get_root().foreach_descendant_top_down(visit)
    return min(widest[0], 3)


def _opencl_space(task: Task, model_s: float = 0.0) -> tuple[Space, list[Config]]:
    from core_compiler.codegen.layouts import transposed_reads
    from core_compiler.runtime.differential import device_case
    from core_compiler.tune.model_seeds import model_seeds

    case = device_case(task.path, task.function, task.sizes, parse=task.parse)
    kernels = [k for k in case.program.gpu.kernels if k.parallel]
    tiled = max((k.shape.n_tiled for k in kernels), default=0)
    threads = max((k.n_thread_dims for k in kernels), default=0)
    space = opencl_space(min(tiled, 3), min(threads, 3), transposable=bool(transposed_reads(case.program.gpu)[0]))
    explicit = space.default.with_(mapping="explicit")
    seeds = [space.normal(explicit), space.normal(space.default.with_(shared=False)),
             space.normal(explicit.with_(**{c.name: 16 for c in space.choices if c.name.startswith("tile")}))]  # fmt: skip
    if model_s > 0:
        picked, _ = model_seeds(case.values.scop, space, task.sizes, MODEL_SEEDS, model_s)
        seeds = [*picked, *seeds]
    return space, [s for s in seeds if space.fits(s)]


# ------------------------------------------------------------------------------ records


def record(result: TuneResult) -> None:
    """The best configuration in the tuning cache, where it matched the original."""
    best, s, task = result.best, result.search, result.task
    if not best.counts:
        return
    tried = len(s.trials)
    candidates = s.candidates if s.candidates >= 0 else tried
    default_s = s.default.seconds if s.default.counts else 0.0
    if task.target == "cpu":
        _record_cpu(result, tried, candidates, default_s)
        return
    config = tuning.TunedConfig("opencl", opencl_sizes(best.config), bool(best.config["shared"]),
                                bool(best.config["private"]), result.label(best.config), best.seconds, default_s,
                                tried, candidates, result.device, int(best.config.get("vector", 1)),
                                str(best.config.get("layout", "default")))  # fmt: skip
    tuning.store_config(tuning.config_key(task.path, task.function, "opencl", task.sizes, task.parse, opencl_device_key()), config)
    tuning.store_config(tuning.config_key(task.path, task.function, "opencl", None, task.parse), config)


def _record_cpu(result: TuneResult, tried: int, candidates: int, default_s: float) -> None:
    from core_compiler.runtime.cpu_variants import TILED

    best, task = result.best, result.task
    variant, alone, tiles = str(best.config["variant"]), best.config["threads"] == "one", cpu_tiles(best.config)
    threads = cores(task)  # as `run` counts them: OpenMP's default, the cores
    parallel_s = min((t.seconds for t in result.search.trials if t.counts and t.config == best.config.with_(threads="all")), default=0.0)
    tuned = tuning.Tuned(variant, alone and threads > 1, best.seconds, default_s, tried, candidates, parallel_s, tiles)
    tuning.store(tuning.tuning_key(task.path, task.function, task.sizes, task.parse, threads), tuned)
    tile_text = ",".join(map(str, tiles or (32,))) if variant in TILED else "0"
    c = tuning.TunedConfig("c", tile_text, False, False, result.label(best.config), best.seconds, default_s, tried,
                           candidates, result.device)  # fmt: skip
    tuning.store_config(tuning.config_key(task.path, task.function, "c", None, task.parse), c)


def opencl_device_key() -> str:
    """The OpenCL device a `run --device opencl` record is for."""
    from core_compiler.runtime.opencl import pocl_device

    return pocl_device().name.strip()


def _duration(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "-"
    return f"{seconds * 1e3:.2f} ms" if seconds < 1 else f"{seconds:.3f} s"
