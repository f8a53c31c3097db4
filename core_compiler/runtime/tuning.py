"""The tuning cache: which CPU variant won the race for a function at given sizes on this machine,
so that the next `hexplore run` of the same code runs it without racing again.

A record is keyed by everything the choice depends on (`tuning_key`): the file's text (an edit
anywhere in it misses: the function's macros and helpers live there too), the function, the
user's ``-D``/``-I``/flags, the sizes, the host CPU (LLVM's name and features: the code is
compiled for it) and the OpenMP threads, hexplore's version and `FORMAT`. It is one small JSON
file per key in the per-user cache (``tuning/<sha256>.json`` under `user_dirs.cache_dir`, private
and checked like the build cache), written whole and renamed into place; a file that does not
read back as a record is a miss. A record only says which variant to build: the run still builds
it from the source, runs it and checks it against the original, so a stale or forged record costs
speed, never a wrong answer (a cached variant that differs is forgotten).

``HEXPLORE_TUNING=off`` turns the cache off (neither read nor written): the test suite runs so,
that a run's choice is the race's.

    key = tuning_key(path, "kernel_gemm", {"ni": 1000, ...}, parse, threads=16)
    load(key)   # Tuned("untiled+jam2", ...) or None
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from core_compiler.frontend import ParseOptions
from core_compiler.user_dirs import cache_dir

FORMAT = "hexplore-tuning/2"  # bumped when the variants or what a record means change
ENVIRONMENT = "HEXPLORE_TUNING"  # "off": no cache


@dataclass(frozen=True)
class Tuned:
    """What won a race, and what it was measured against."""

    variant: str  # one of `cpu_variants.VARIANTS`
    one_thread: bool  # its parallel loops ran on one thread (that was faster)
    seconds: float  # its time in the race
    default_s: float  # the default (tiled) code's time in the same race; 0.0: not timed
    tried: int  # variants tried
    candidates: int  # of these
    parallel_s: float = 0.0  # with `one_thread`: the same variant's time on all threads
    tiles: tuple[int, ...] = ()  # a tiled variant's tile size per band member (`hexplore tune`'s); (): the default


def enabled() -> bool:
    return os.environ.get(ENVIRONMENT, "").strip().lower() not in ("off", "0", "no", "false")


def tuning_key(path: str, function: str, params: Mapping[str, int], parse: ParseOptions | None, threads: int) -> str:
    """The record's name: a SHA-256 of what the choice depends on (module docstring)."""
    options = parse or ParseOptions()
    text = Path(path).read_bytes()
    parts = {
        "format": FORMAT,
        "version": _version(),
        "source": hashlib.sha256(text).hexdigest(),
        "function": function,
        "defines": list(options.defines),
        "include_dirs": list(options.include_dirs),
        "extra_args": list(options.extra_args),
        "params": sorted(params.items()),
        "host": _host(),
        "threads": threads,
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def load(key: str) -> Tuned | None:
    """The record under `key`, or None (none, unreadable, not a record, or the cache is off)."""
    if not enabled():
        return None
    try:
        data = json.loads(_file(key).read_text(encoding="utf-8"))
        return _record(data)
    except (OSError, ValueError, TypeError):
        return None


def store(key: str, tuned: Tuned) -> None:
    """Write the record (atomically: a reader sees the old file or the new one); a cache that
    cannot be written is no error."""
    _write(key, {"format": FORMAT, **asdict(tuned)})


def _write(key: str, record: Mapping[str, object]) -> None:
    if not enabled():
        return
    target = _file(key)
    data = json.dumps(record, indent=1, sort_keys=True)
    with contextlib.suppress(OSError):
        fd, scratch = tempfile.mkstemp(dir=target.parent, prefix=".tuned-")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(data)
            os.replace(scratch, target)
        except OSError:
            os.unlink(scratch)
            raise


# ------------------------------------------------------------------ `hexplore tune`'s GPU records


@dataclass(frozen=True)
class TunedConfig:
    """What `hexplore tune` found fastest for a GPU target (``opencl`` or ``cuda``): the sizes
    and memory choices to map with, and what they were measured against. `compile` reads the
    record of the source without sizes (the last tuning of it), `run` the one at its sizes::

        TunedConfig("opencl", "{kernel[i]->tile[64,16];kernel[i]->block[16,16]}", True, True,
                    "tile 64x16, block 16x16", 0.012, 0.021, 40, 300, "pocl CPU (cpu-x86-64-...)")
    """

    target: str
    sizes: str  # PPCG's ``--sizes`` text; "": hexplore's own choice (the default mapping)
    shared: bool  # shared-memory promotion
    private: bool  # register promotion
    label: str  # the choice in words: "tile 64x16, block 16x16"
    seconds: float  # its time
    default_s: float  # the default mapping's, in the same sweep; 0.0: not timed
    tried: int
    candidates: int
    device: str  # where it was timed
    vector: int = 1  # OpenCL vector width (`MappingOptions.vector`); records older than it have none: 1
    layout: str = "default"  # OpenCL data layout (`GpuOptions.layout`): "default" | "transposed"

    def line(self) -> str:
        """``tuned: tile 64x16, block 16x16, 1.8x over default, on pocl CPU``"""
        gain = f"{self.default_s / self.seconds:.2f}x over default" if self.default_s > 0 and self.seconds > 0 else "default not timed"
        return f"tuned: {self.label}, {gain}, on {self.device} (the fastest of {self.tried} of {self.candidates} configurations `hexplore tune` timed)"


CONFIG_FORMAT = "hexplore-tuned-config/1"


def config_key(path: str, function: str, target: str, params: Mapping[str, int] | None, parse: ParseOptions | None,
               device: str = "") -> str:  # fmt: skip
    """The name of a `TunedConfig`: as `tuning_key`, with the target and the device instead of the
    host CPU and threads; `params` None (and device ""): the record `compile` reads, which knows
    no sizes."""
    options = parse or ParseOptions()
    parts = {
        "format": CONFIG_FORMAT,
        "version": _version(),
        "source": hashlib.sha256(Path(path).read_bytes()).hexdigest(),
        "function": function,
        "defines": list(options.defines),
        "include_dirs": list(options.include_dirs),
        "extra_args": list(options.extra_args),
        "target": target,
        "params": None if params is None else sorted(params.items()),
        "device": device,
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def store_config(key: str, config: TunedConfig) -> None:
    _write(key, {"format": CONFIG_FORMAT, **asdict(config)})


def load_config(key: str) -> TunedConfig | None:
    """The `TunedConfig` under `key`, or None (none, not one, or the cache is off)."""
    if not enabled():
        return None
    try:
        data = json.loads(_file(key).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != CONFIG_FORMAT:
        return None
    values = {f.name: data.get(f.name, f.default) for f in fields(TunedConfig)}
    kinds = {f.name: f.type for f in fields(TunedConfig)}
    for name, value in values.items():
        if kinds[name] == "float" and type(value) is int:
            values[name] = value = float(value)
        if type(value).__name__ != kinds[name]:
            return None
    return TunedConfig(**values)  # type: ignore[arg-type]


def forget(key: str) -> None:
    if enabled():
        with contextlib.suppress(OSError):
            _file(key).unlink()


def _file(key: str) -> Path:
    if len(key) != 64 or any(c not in "0123456789abcdef" for c in key):
        raise ValueError(f"not a tuning key: {key!r}")
    return cache_dir("tuning") / f"{key}.json"


def _record(data: object) -> Tuned | None:
    """`data` read back as a `Tuned`, checked field by field; None where it is not one."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None
    values: dict[str, Any] = {}
    for f in fields(Tuned):
        value = data.get(f.name)
        kind = {"variant": str, "one_thread": bool, "tried": int, "candidates": int, "tiles": tuple}.get(f.name, float)
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if kind is tuple and isinstance(value, list) and all(type(t) is int for t in value):
            value = tuple(value)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            return None
        values[f.name] = value
    return Tuned(**values)


@functools.cache
def _host() -> str:
    """The CPU the JIT compiles for: LLVM's name for it and its features."""
    import llvmlite.binding as llvm

    return f"{llvm.get_host_cpu_name()} {llvm.get_host_cpu_features().flatten()}"


@functools.cache
def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("hexplore")
    except PackageNotFoundError:
        return "unknown"
