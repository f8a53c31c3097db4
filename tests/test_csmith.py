"""Random C programs from csmith (issue 31): `hexplore analyze` never crashes or hangs on them, and
`hexplore compile --target c` keeps their meaning — the generated program, built by gcc, prints
the same checksum as the original.

The programs are csmith 2.3.0's for seeds 1-60 with ``--max-funcs 4`` (the review's set). The fast
tier and `make test` check `FAST_SEEDS`; the others are the long tier (`make test-long`). csmith is the Debian package (``csmith`` and ``libcsmith-dev``, for ``csmith.h``),
which `make` installs where apt can; without it these tests skip and say so.

Per program: the analysis has `ANALYZE_LIMIT_S` (a hang fails the test, it does not stall the
suite); each build and run has its own limit, and a seed whose original program does not finish
in `RUN_LIMIT_S` is not compared (csmith's loops can run for minutes).
"""

from __future__ import annotations

import functools
import glob
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

import pytest

from core_compiler.analysis import FileAnalysis, analyze_file
from core_compiler.compile import compile_file
from core_compiler.frontend import ParseOptions

SEEDS = range(1, 61)
FAST_SEEDS = (11, 12, 18, 40, 46, 57, 58)  # quick ones, each with loop nests the C target replaces
ANALYZE_LIMIT_S = 60.0
RUN_LIMIT_S = 10.0
CC_FLAGS = ("-O1", "-w")
CSMITH = shutil.which("csmith")


def csmith_include() -> str | None:
    """The directory of ``csmith.h``: Debian's libcsmith-dev puts it in /usr/include/csmith."""
    for pattern in ("/usr/include/csmith*", "/usr/local/include/csmith*"):
        for found in sorted(glob.glob(pattern)):
            if os.path.isfile(os.path.join(found, "csmith.h")):
                return found
    return None


INCLUDE = csmith_include()
NEEDS_CSMITH = pytest.mark.skipif(
    CSMITH is None or INCLUDE is None,
    reason="csmith is not installed (the Debian packages csmith and libcsmith-dev; `make` installs "
    "them where apt can): the random-program tests need it",
)
NEEDS_GCC = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed: the programs cannot be built")


def _seeds(fast: bool) -> list[object]:
    return [s if s in FAST_SEEDS else pytest.param(s, marks=pytest.mark.long) for s in SEEDS if (s in FAST_SEEDS) == fast]


ALL_SEEDS = _seeds(True) + _seeds(False)  # the fast ones first


@functools.cache
def program(seed: int) -> Path:
    """csmith's program for `seed` (deterministic for one csmith version), in a directory of this
    process's own."""
    assert CSMITH is not None
    text = subprocess.run([CSMITH, "--seed", str(seed), "--max-funcs", "4"], capture_output=True, text=True,
                          check=True, timeout=60, cwd=_programs.name).stdout  # fmt: skip (csmith writes platform.info where it runs)
    path = Path(_programs.name) / f"csmith{seed}.c"
    path.write_text(text)
    return path


_programs = tempfile.TemporaryDirectory(prefix="hexplore-csmith-")


class AnalysisTimeout(Exception):
    """The analysis of one program ran past `ANALYZE_LIMIT_S` (a hang fails its test only)."""


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise `AnalysisTimeout` in this thread after `seconds` (a hang fails, it does not stall)."""

    def expire(signum: int, frame: FrameType | None) -> None:
        raise AnalysisTimeout(f"no answer after {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@functools.cache
def analyze(seed: int) -> FileAnalysis:
    """The analysis of `seed`'s program, within `ANALYZE_LIMIT_S` (once per process: both tests use it)."""
    assert INCLUDE is not None
    path = program(seed)
    with time_limit(ANALYZE_LIMIT_S):
        return analyze_file(str(path), path.read_text(), ParseOptions(include_dirs=(INCLUDE,)))


def build_and_run(source: Path, exe: Path) -> subprocess.CompletedProcess[str] | None:
    """The program's output, or None when it does not finish in `RUN_LIMIT_S`."""
    assert INCLUDE is not None
    subprocess.run(["gcc", *CC_FLAGS, "-I", INCLUDE, "-o", str(exe), str(source)], check=True, timeout=120,
                   capture_output=True, text=True)  # fmt: skip
    try:
        return subprocess.run([str(exe)], capture_output=True, text=True, timeout=RUN_LIMIT_S)
    except subprocess.TimeoutExpired:
        return None


@NEEDS_CSMITH
@pytest.mark.parametrize("seed", ALL_SEEDS)
def test_analyze_neither_crashes_nor_hangs(seed: int) -> None:
    """`int *p = &g; … *p = i;` crashed 34 of these 60 programs (IndexError in pointers.py)."""
    fa = analyze(seed)
    assert fa.functions, [r.message for r in fa.remarks]
    internal = [r.message for r in fa.all_remarks() if r.name == "InternalError"]
    assert not internal, internal


@NEEDS_CSMITH
@NEEDS_GCC
@pytest.mark.parametrize("seed", ALL_SEEDS)
def test_generated_c_prints_the_same_checksum(seed: int, tmp_path: Path) -> None:
    """`compile --target c` and gcc: the same checksum as the original program. A local array
    declared before a nest was a `malloc`'d buffer freed after it: 10 of 19 transformed programs
    did not compile, and one shadowing a global printed another value."""
    path = program(seed)
    source = path.read_text()
    (text,) = compile_file(analyze(seed), "c", text=source).files.values()
    if text == source:
        pytest.skip(f"seed {seed}: no loop nest the C target replaces")
    out = tmp_path / "generated.c"
    out.write_text(text)
    original = build_and_run(path, tmp_path / "original")
    if original is None:
        pytest.skip(f"seed {seed}: the original program runs longer than {RUN_LIMIT_S:g} s")
    ours = build_and_run(out, tmp_path / "generated")
    assert ours is not None, f"seed {seed}: the generated program runs past {RUN_LIMIT_S:g} s; the original does not"
    assert (ours.returncode, ours.stdout) == (original.returncode, original.stdout), f"seed {seed}"
