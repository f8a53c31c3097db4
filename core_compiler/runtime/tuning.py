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

FORMAT = "hexplore-tuning/1"  # bumped when the variants or what a record means change
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
    if not enabled():
        return
    target = _file(key)
    data = json.dumps({"format": FORMAT, **asdict(tuned)}, indent=1, sort_keys=True)
    with contextlib.suppress(OSError):
        fd, scratch = tempfile.mkstemp(dir=target.parent, prefix=".tuned-")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(data)
            os.replace(scratch, target)
        except OSError:
            os.unlink(scratch)
            raise


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
        kind = {"variant": str, "one_thread": bool, "tried": int, "candidates": int}.get(f.name, float)
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
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
