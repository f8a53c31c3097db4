"""A kernel's search space: the choices the pipeline's options leave open, what each candidate
means, and the static pruning that drops candidates before anything is built.

A `Config` is one value per `Choice`, in the space's order; a space knows which choices a value
makes irrelevant (an untiled variant has no tile sizes: `Space.normal` gives them the default, so
two configurations that build the same code are one), and which configurations break a limit
(`Space.fits`: work-group size, shared memory). The default configuration — what hexplore does
without tuning — is always in the space and always first::

    space = cpu_space(("tiled", "untiled", "tiled+jam2"), band=2, threads=16)
    space.default                # Config(variant='tiled', tile0=32, tile1=32, threads='all')
    space.size()                 # the candidates left after normalizing and pruning
    space.label(config)          # "tiled, tile 64x16, all threads"
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from random import Random

Value = int | str | bool
CPU_TILES = (8, 16, 32, 64, 128)
GPU_TILES = (8, 16, 32, 64)
GPU_BLOCKS = (4, 8, 16, 32)
VECTOR_WIDTHS = (1, 2, 4)  # OpenCL vector loads along a thread's run of points (PPOpenCL's); 1: none
LAYOUTS = ("default", "transposed")  # strided read-only arrays read from transposed copies (`codegen/layouts.py`)
MAX_WORK_GROUP = 1024  # CUDA's threads per block; PoCL's CPU device allows 4096, the sizes tuned must also run on a GPU
SHARED_BYTES = 48 * 1024  # per block, CUDA's default
EXHAUSTIVE_LIMIT = 64  # spaces this small are searched exhaustively


@dataclass(frozen=True)
class Choice:
    name: str
    values: tuple[Value, ...]  # the default first


@dataclass(frozen=True, order=True)
class Config:
    """One value per choice of its space, in the space's order."""

    values: tuple[tuple[str, Value], ...]

    def __getitem__(self, name: str) -> Value:
        return dict(self.values)[name]

    def get(self, name: str, default: Value) -> Value:
        return dict(self.values).get(name, default)

    def with_(self, **changes: Value) -> Config:
        return Config(tuple((k, changes.get(k, v)) for k, v in self.values))

    def key(self) -> str:
        return ",".join(f"{k}={v}" for k, v in self.values)


@dataclass(frozen=True)
class Space:
    """The choices, how to normalize a configuration (`normalize`: irrelevant choices to their
    default), which fit the target's limits (`fits`), and how to say one in words (`describe`)."""

    target: str  # "cpu" | "opencl"
    choices: tuple[Choice, ...]
    normalize: Callable[[Config], Config] = field(default=lambda c: c, compare=False)
    fits: Callable[[Config], bool] = field(default=lambda c: True, compare=False)
    describe: Callable[[Config], str] = field(default=lambda c: c.key(), compare=False)

    @property
    def default(self) -> Config:
        return self.normal(Config(tuple((c.name, c.values[0]) for c in self.choices)))

    def normal(self, config: Config) -> Config:
        return self.normalize(config)

    def label(self, config: Config) -> str:
        return self.describe(config)

    def all(self) -> Iterator[Config]:
        """Every distinct configuration that fits, the default first."""
        seen = {self.default}
        yield self.default
        for values in itertools.product(*(c.values for c in self.choices)):
            config = self.normal(Config(tuple(zip((c.name for c in self.choices), values, strict=True))))
            if config not in seen and self.fits(config):
                seen.add(config)
                yield config

    def size(self) -> int:
        return sum(1 for _ in self.all())

    def raw_size(self) -> int:
        return math.prod(len(c.values) for c in self.choices)

    def random(self, rng: Random) -> Config:
        """A configuration drawn uniformly per choice, normalized; it may not fit (`fits`)."""
        return self.normal(Config(tuple((c.name, rng.choice(c.values)) for c in self.choices)))

    def mutate(self, config: Config, rng: Random, rate: float) -> Config:
        """Each choice redrawn with probability `rate` (at least one is)."""
        names = [c.name for c in self.choices if len(c.values) > 1]
        forced = rng.choice(names) if names else None
        values = dict(config.values)
        for c in self.choices:
            if c.name == forced or rng.random() < rate:
                values[c.name] = rng.choice([v for v in c.values if v != values[c.name]] or list(c.values))
        return self.normal(Config(tuple((c.name, values[c.name]) for c in self.choices)))

    def crossover(self, a: Config, b: Config, rng: Random) -> Config:
        """Each choice from one parent or the other (TC's uniform crossover)."""
        return self.normal(Config(tuple((k, v if rng.random() < 0.5 else b[k]) for k, v in a.values)))


# ------------------------------------------------------------------------------------ CPU


def cpu_space(variants: tuple[str, ...], band: int, threads: int, tiled: tuple[str, ...],
              one_thread_only: bool = False) -> Space:  # fmt: skip
    """The LLVM CPU path's space: the schedule variants of `cpu_variants` (`variants`, the default
    first; unroll-and-jam and register tiles are variants), a tile size per member of the widest
    permutable band (`band` members) for the `tiled` variants, and all threads or one."""
    tile_choices = tuple(Choice(f"tile{k}", (32, *(t for t in CPU_TILES if t != 32))) for k in range(band))
    thread_values: tuple[Value, ...] = ("one",) if one_thread_only or threads <= 1 else ("all", "one")
    choices = (Choice("variant", variants), *tile_choices, Choice("threads", thread_values))

    def normalize(c: Config) -> Config:
        if c["variant"] == "source order":  # built without parallel loops either way
            c = c.with_(threads=thread_values[0])
        if c["variant"] in tiled:
            return c
        return c.with_(**{t.name: 32 for t in tile_choices})

    def describe(c: Config) -> str:
        tiles = "x".join(str(c[t.name]) for t in tile_choices)
        tiling = f", tile {tiles}" if c["variant"] in tiled and tiles else ""
        threads = "" if c["variant"] == "source order" else ", one thread" if c["threads"] == "one" else ", all threads"
        return f"{c['variant']}{tiling}{threads}"

    return Space("cpu", choices, normalize, describe=describe)


def cpu_tiles(config: Config) -> tuple[int, ...]:
    """The tile sizes a CPU configuration gives, per band member; () where they are all the default."""
    tiles = tuple(int(v) for k, v in config.values if k.startswith("tile"))
    return () if all(t == 32 for t in tiles) else tiles


# ------------------------------------------------------------------------------------ OpenCL


@dataclass(frozen=True)
class KernelLimits:
    """What a GPU configuration must respect: threads per work-group, shared memory per block,
    and the extents of the mapped loops where the sizes are known (a tile past the extent is the
    extent: pruned as a duplicate)."""

    max_work_group: int = MAX_WORK_GROUP
    shared_bytes: int = SHARED_BYTES
    element_bytes: int = 8
    arrays_per_tile: int = 2  # arrays a tile may stage in shared memory, for the static bound
    extents: tuple[int, ...] = ()  # per tiled member, outermost first; () unknown


def opencl_space(tiled: int, threads: int, limits: KernelLimits = KernelLimits(), transposable: bool = False) -> Space:
    """The GPU mapping's space for a SCoP whose widest kernel tiles `tiled` members and maps
    `threads` of them to threads: "auto" (hexplore's own choice: register tiles, small tiles for
    few blocks) or explicit tile sizes per member and block sizes per thread dimension — a tile
    larger than its block is thread coarsening, tile/block points per thread — and shared and
    register promotion on or off, a vector width (`VECTOR_WIDTHS`), and where some kernel reads a
    read-only array with a stride between neighbouring work-items (`transposable`), the data
    layout (`LAYOUTS`: read it from a transposed copy or not). Pruned: blocks past
    `max_work_group` threads, a block wider than its tile (normalized to the tile: the mapper would
    shrink it), tiles past a known extent, and shared memory on where the tiles of the arrays
    staged there could not fit `shared_bytes`."""
    tiles = tuple(Choice(f"tile{k}", (32, *(t for t in GPU_TILES if t != 32))) for k in range(tiled))
    default_blocks = {1: (512,), 2: (16, 32), 3: (4, 4, 32)}.get(threads, ())  # outermost first: DEFAULT_BLOCKS'
    blocks = tuple(Choice(f"block{k}", (b, *(v for v in GPU_BLOCKS if v != b))) for k, b in enumerate(default_blocks))
    choices = (Choice("mapping", ("auto", "explicit")), *tiles, *blocks,
               Choice("shared", (True, False)), Choice("private", (True, False)), Choice("vector", VECTOR_WIDTHS),
               Choice("layout", LAYOUTS if transposable else LAYOUTS[:1]))  # fmt: skip

    def normalize(c: Config) -> Config:
        if c["mapping"] == "auto":
            return c.with_(vector=1, **{t.name: t.values[0] for t in (*tiles, *blocks)})
        # the mapper shrinks a block to a divisor of its tile (`gpu_mapping._divisor_at_most`;
        # all sizes here are powers of two): a wider block is the same code
        c = c.with_(**{b.name: min(int(c[b.name]), int(c[t.name])) for b, t in zip(blocks, tiles, strict=False)})
        return _vector_normal(c, len(blocks))

    def fits(c: Config) -> bool:
        if c["mapping"] == "auto":
            return True
        tile = [int(c[t.name]) for t in tiles]
        block = [int(c[b.name]) for b in blocks]
        if math.prod(block) > limits.max_work_group:
            return False
        if any(t > _next_power(e) for t, e in zip(tile, limits.extents, strict=False)):
            return False
        # an array's tile in shared memory spans (at most) the two widest tile dimensions; past the
        # limit the mapper keeps it in global memory: the configuration without shared memory
        slab = math.prod(sorted(tile)[-2:]) * limits.element_bytes * limits.arrays_per_tile
        return not (c["shared"] and len(tile) >= 2 and slab > limits.shared_bytes)

    def describe(c: Config) -> str:
        memory = _memory_words(bool(c["shared"]), bool(c["private"]))
        if c.get("layout", "default") != "default":
            memory += f", {c['layout']} layout"
        if c["mapping"] == "auto":
            return "hexplore's mapping" + memory
        tile = [int(c[t.name]) for t in tiles]
        block = [int(c[b.name]) for b in blocks]
        coarse = [t // b for t, b in zip(tile, block, strict=False)]
        text = f"tile {'x'.join(map(str, tile))}, block {'x'.join(map(str, block))}"
        if any(k > 1 for k in coarse):
            text += f", coarsening {'x'.join(map(str, coarse))}"
        if int(c["vector"]) > 1:
            text += f", vector width {c['vector']}"
        return text + memory

    return Space("opencl", choices, normalize, fits, describe)


def _vector_normal(c: Config, threads: int) -> Config:
    """A vector width needs runs of at least that many points per thread along the innermost
    thread member (tile over block); the mapper keeps no register copies with one (`gpu_mapping`):
    other configurations are the same code."""
    width = int(c["vector"])
    if width <= 1 or threads == 0:
        return c.with_(vector=1)
    k = threads - 1
    if int(c[f"tile{k}"]) // int(c[f"block{k}"]) < width:
        return c.with_(vector=1)
    return c.with_(private=False)


def _memory_words(shared: bool, private: bool) -> str:
    off = [w for w, on in (("shared memory", shared), ("registers", private)) if not on]
    return f", no {' or '.join(off)}" if off else ""


def _next_power(n: int) -> int:
    return 1 << max(n - 1, 0).bit_length()


def opencl_sizes(config: Config) -> str:
    """PPCG's ``--sizes`` for an explicit GPU configuration (blocks given x first, as PPCG's);
    "" for "auto"."""
    if config["mapping"] == "auto":
        return ""
    tile = [str(v) for k, v in config.values if k.startswith("tile")]
    block = [str(v) for k, v in config.values if k.startswith("block")]
    parts = [f"kernel[i]->tile[{','.join(tile)}]"] + ([f"kernel[i]->block[{','.join(reversed(block))}]"] if block else [])
    return "{" + ";".join(parts) + "}"
