"""Run generated programs through every back end against the original C, in worker processes
with a time limit, and count what happened.

`check_program` checks one program in this process: the analysis (no SCoP: *refused*, with the
names of the remarks that say why), then each back end at the program's size sets —

- ``llvm``:   the LLVM CPU variants of `check_llvm_cpu` (the tiled code, the source order and one
  other in turn, see `_llvm_variants`) on 1 thread at the first and last sizes; the tiled code
  on 2 threads at the first;
- ``c``:      `check_c` at every size, with OpenMP (2 threads) at the first;
- ``opencl``: `check_opencl` (PoCL) at the first size;
- ``cuda``:   the CUDA files compiled by nvcc (``-c``), where nvcc is installed (every
  `CUDA_EVERY`-th seed);
- ``ad``:     `check_gradients` (forward and reverse mode against finite differences, and the
  dot-product test) by every floating array the program reads, on the C derivative at the
  first size.

A back end that refuses (`NotCheckable`, `NotDifferentiable`, `LayoutError`, `Unsupported`) is
counted by reason, as is a gradient check of a program that branches on its data where only the
finite differences disagree (`Inconclusive`); a wrong answer is a *mismatch*; any other exception (the generated code does
not build, an internal error) is a *crash*. `Pool` runs programs in long-lived worker processes
and kills one that runs past its time limit (a *hang*) or dies.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import random
import shutil
import subprocess
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path

from tests.fuzz.generator import Program, generate, size_sets

BACKENDS = ("llvm", "c", "opencl", "cuda", "ad")
QUICK = "quick"  # in `only`: C at the first and last sizes, the tiled LLVM code and OpenCL at the first
CUDA_EVERY = 5  # nvcc takes seconds: every fifth seed's CUDA is compiled
NON_SMOOTH = {"data-dependent-if", "min-max-value", "ternary-value"}


class Inconclusive(Exception):
    """A gradient check of a program that branches on its data whose forward and reverse modes
    agree (the dot-product test) but differ from finite differences: the finite step (1e-2 in
    single precision) may cross a branch. Counted with the refusals, not as a mismatch."""


class NothingReplaced(Exception):
    """The C target replaced no loop nest: isl's budget ran out generating them (they stay as
    written, `CpuCodeBudgetExceeded`), or none is modeled at these sizes. Nothing generated was
    checked; counted with the refusals."""


REFUSALS = ("Inconclusive", "NothingReplaced", "NotCheckable", "NotDifferentiable", "LayoutError", "Unsupported",
            "SizesError")  # fmt: skip


@dataclass
class Failure:
    backend: str  # "llvm/2" (2 threads), "c+omp", …
    kind: str  # "mismatch" | "crash" | "hang"
    sizes: dict[str, int]
    detail: str

    def line(self) -> str:
        return f"{self.kind} on {self.backend} at {self.sizes}:\n{self.detail}"


@dataclass
class Outcome:
    seed: int
    modeled: bool = False
    refusals: list[str] = field(default_factory=list)  # the analysis's reasons (not modeled)
    skipped: list[str] = field(default_factory=list)  # "backend: reason" of a back end that refused
    failures: list[Failure] = field(default_factory=list)
    checks: Counter[str] = field(default_factory=Counter)  # back end -> checks passed
    timing: Counter[str] = field(default_factory=Counter)  # back end -> seconds
    seconds: float = 0.0
    source: str = ""

    @property
    def ok(self) -> bool:
        return not self.failures

    def report(self) -> str:
        lines = [f"seed {self.seed}: " + ("ok" if self.ok else f"{len(self.failures)} failure(s)")]
        lines += [f.line() for f in self.failures]
        lines += [f"program (python -m tests.fuzz --seeds {self.seed}:{self.seed + 1} --show):", self.source]
        return "\n".join(lines)


def _kind(e: BaseException) -> str:
    """"refused" for an exception that is a back end's refusal, else "crash"."""
    names = {c.__name__ for c in type(e).__mro__}
    return "refused" if names & set(REFUSALS) else "crash"


def _short(e: BaseException) -> str:
    return f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"


def check_program(program: Program, only: Iterable[str] = BACKENDS, directory: str | None = None) -> Outcome:
    """`program` through the back ends in `only`, against the original (in this process)."""
    from core_compiler.analysis import analyze_file
    from core_compiler.frontend import ParseOptions
    from core_compiler.remarks import RemarkKind

    start = time.perf_counter()
    out = Outcome(program.seed, source=program.source)
    base = directory or tempfile.mkdtemp(prefix="hexplore-fuzz-")
    path = str(Path(base) / f"fuzz_{program.seed}.c")
    Path(path).write_text(program.source)
    sizes = size_sets(program, program.seed)
    try:
        fa = analyze_file(path, parse_options=ParseOptions(), only=program.function)
    except Exception as e:  # analyses never raise on user input
        out.failures.append(Failure("analysis", "crash", {}, traceback.format_exc()[-3000:]))
        del e
        out.seconds = time.perf_counter() - start
        return out
    scops = fa.functions[0].scops if fa.functions else ()
    if len(scops) == 0:
        passes = ("scop-detect", "polyhedral-model", "frontend")
        why = sorted({r.name for r in fa.all_remarks() if r.kind == RemarkKind.MISSED and r.pass_name in passes})
        out.refusals = why or ["(no remark)"]
        out.seconds = time.perf_counter() - start
        return out
    out.modeled = True
    wanted = set(only)
    stage = Path(base) / f"stage_{os.getpid()}"  # what runs now: said when the process dies
    for backend, label, params, check in _plan(program, sizes, path, wanted):
        stage.write_text(f"{label} at {params}")
        begun = time.perf_counter()
        try:
            verdict = check()
        except Exception as e:
            if _kind(e) == "refused":
                out.skipped.append(f"{label}: {type(e).__name__}")
            else:
                out.failures.append(Failure(label, "crash", params, traceback.format_exc()[-3000:]))
            continue
        finally:
            out.timing[backend] += time.perf_counter() - begun
        if verdict is None:
            out.checks[backend] += 1
        else:
            out.failures.append(Failure(label, "mismatch", params, verdict))
    out.seconds = time.perf_counter() - start
    return out


Check = Callable[[], "str | None"]  # None: it matched; else what differs


def _plan(program: Program, sizes: list[dict[str, int]], path: str, only: set[str]) -> Iterator[tuple[str, str, dict[str, int], Check]]:
    """(back end, label, sizes, check) in the order they run."""
    from core_compiler.ad.check import check_gradients
    from core_compiler.runtime.differential import check_c, check_opencl

    limits = program.size_limits
    f = program.function
    big = sizes[0]
    if "quick" in only:  # the bug hunt's short plan: each back end once, and C at size 0
        yield "c", "c", big, lambda: _c(check_c(path, f, big, size_limits=limits))
        yield "c", "c", sizes[-1], lambda: _c(check_c(path, f, sizes[-1], size_limits=limits))
        yield "llvm", "llvm/1", big, lambda: _llvm(path, f, big, limits, 1, ("tiled",))
        yield "opencl", "opencl", big, lambda: _diff(check_opencl(path, f, big, size_limits=limits))
        return
    if "c" in only:
        for s in sizes:
            yield "c", "c", s, lambda s=s: _c(check_c(path, f, s, size_limits=limits))
        yield "c", "c+omp", big, lambda: _c(check_c(path, f, big, size_limits=limits, openmp=True))
    if "llvm" in only:
        one, two = _llvm_variants(program.seed)
        for s in (big, sizes[-1]):
            yield "llvm", "llvm/1", s, lambda s=s: _llvm(path, f, s, limits, 1, one)
        yield "llvm", "llvm/2", big, lambda: _llvm(path, f, big, limits, 2, two)
    if "opencl" in only:
        yield "opencl", "opencl", big, lambda: _diff(check_opencl(path, f, big, size_limits=limits))
    if "cuda" in only and shutil.which("nvcc") and program.seed % CUDA_EVERY == 0:
        yield "cuda", "cuda", big, lambda: _nvcc(path, program, big)
    if "ad" in only and program.wrt:
        def grad() -> str | None:
            r = check_gradients(path, f, program.wrt, big, size_limits=limits, backend="c")
            if not r.ok and r.dot <= r.dot_tol and NON_SMOOTH & set(program.features):
                raise Inconclusive(r.report())  # the two modes agree; the finite step crossed a branch
            return None if r.ok else r.report()

        yield "ad", "ad", big, grad


def _diff(result) -> str | None:  # type: ignore[no-untyped-def]
    return None if result.ok else result.comparison.report()[-3000:]


def _c(result) -> str | None:  # type: ignore[no-untyped-def]
    if result.ok and result.kernels == 0:
        raise NothingReplaced(f"no loop nest replaced at {result.params}")
    return _diff(result)


def _llvm_variants(seed: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The LLVM variants checked on 1 and on 2 threads: the tiled code, and others in turn (all
    of them take half a minute to build; over many seeds each gets its share)."""
    from core_compiler.runtime.cpu_variants import VARIANTS

    r = random.Random(seed * 31 + 5)
    others = [v for v in VARIANTS if v not in ("tiled", "source order")]
    return ("tiled", "source order", r.choice(others)), ("tiled",)


def _llvm(path: str, function: str, sizes: dict[str, int], limits: dict[str, str | None] | None, threads: int,
          variants: tuple[str, ...]) -> str | None:  # fmt: skip
    """`check_llvm_cpu` without its timing races: each of `variants` (where the SCoP has it) built
    for `threads` threads, run once and compared with the C compiler's build."""
    import islpy as isl

    from core_compiler.llvm.jit import set_threads
    from core_compiler.runtime.compare import compare_arrays
    from core_compiler.runtime.cpu_variants import case_variants, compile_variant, prepare, run_jit
    from core_compiler.runtime.differential import reference_outputs
    from core_compiler.runtime.reference import run_reference

    case = prepare(path, function, sizes, limits)
    expected = reference_outputs(run_reference(path, case.layout, case.inputs))
    set_threads(threads)
    bad = []
    for v in case_variants(case):
        if v not in variants:
            continue
        try:
            jit = compile_variant(case, v, parallel=threads > 1)
        except isl.Error:  # isl's operation limit: the variant is left out, as check_llvm_cpu does
            case.analysis.scop.ctx.reset_operations()
            continue
        cmp = compare_arrays(expected, case.outputs(run_jit(jit, case)[0]))
        if not cmp.ok:
            bad.append(f"variant {v} ({threads} thread(s)):\n{cmp.report()[-1500:]}")
    return "\n".join(bad) or None


def _nvcc(path: str, program: Program, sizes: dict[str, int]) -> str | None:
    """The CUDA files compile with ``nvcc -c``; a failure raises (a crash: invalid code)."""
    from core_compiler.analysis import analyze_file
    from core_compiler.compile import compile_file
    from core_compiler.frontend import ParseOptions
    from core_compiler.runtime.signature import macro_defines

    defines = macro_defines(sizes, program.size_limits or {})
    fa = analyze_file(path, parse_options=ParseOptions(defines=defines), only=program.function)
    result = compile_file(fa, "cuda", always_offload=True)
    work = Path(tempfile.mkdtemp(prefix="hexplore-fuzz-cuda-"))
    for name, text in result.files.items():
        (work / name).write_text(text)
    units = sorted(n for n in result.files if n.endswith(".cu"))
    (work / "all.cu").write_text("".join(f'#include "{n}"\n' for n in units))
    proc = subprocess.run(["nvcc", "-c", "-o", str(work / "all.o"), str(work / "all.cu")],
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    shutil.rmtree(work, ignore_errors=True)
    if proc.returncode != 0:
        raise RuntimeError("nvcc rejects the generated CUDA:\n" + proc.stderr[-2000:])
    return None


# ------------------------------------------------------------------------------ workers


def _serve(conn: Connection, directory: str) -> None:
    """A worker: check the seeds it is sent until it is sent None."""
    os.environ["OMP_NUM_THREADS"] = "2"  # read when libgomp loads (generated C with OpenMP)
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):  # the parent is gone
            return
        if task is None:
            return
        seed, only = task
        conn.send(check_program(generate(seed), only, directory))


class _Worker:
    def __init__(self, directory: str) -> None:
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=_serve, args=(child, directory), daemon=True)
        self.process.start()
        child.close()
        self.seed: int | None = None
        self.started = 0.0

    def send(self, seed: int, only: tuple[str, ...]) -> None:
        self.seed, self.started = seed, time.monotonic()
        self.conn.send((seed, only))

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self.conn.send(None)
        self.process.join(5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()


class Pool:
    """`jobs` worker processes, each checking one program at a time within `timeout` seconds."""

    def __init__(self, jobs: int = 1, timeout: float = 300.0, directory: str | None = None) -> None:
        self.jobs, self.timeout = max(jobs, 1), timeout
        self.directory = directory or tempfile.mkdtemp(prefix="hexplore-fuzz-")
        self.workers: list[_Worker] = []

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc: object) -> None:
        for w in self.workers:
            w.stop()

    def run(self, seeds: Iterable[int], only: tuple[str, ...] = BACKENDS) -> Iterator[Outcome]:
        """Each seed's outcome, as it finishes (not in order)."""
        pending = list(seeds)[::-1]
        busy: list[_Worker] = []
        idle = self.workers[:]
        while pending or busy:
            while pending and (idle or len(busy) + len(idle) < self.jobs):
                w = idle.pop() if idle else self._spawn()
                w.send(pending.pop(), only)
                busy.append(w)
            ready = multiprocessing.connection.wait([w.conn for w in busy] + [w.process.sentinel for w in busy], timeout=1.0)
            now = time.monotonic()
            for w in list(busy):
                seed = w.seed if w.seed is not None else -1
                if w.conn in ready:
                    try:
                        outcome: Outcome = w.conn.recv()
                    except (EOFError, OSError):
                        outcome = self._lost(w, seed, "crash", "the worker process died")
                    else:
                        busy.remove(w)
                        idle.append(w)
                        yield outcome
                        continue
                    busy.remove(w)
                    yield outcome
                elif w.process.sentinel in ready or not w.process.is_alive():
                    busy.remove(w)
                    yield self._lost(w, seed, "crash", f"the worker process died (exit code {w.process.exitcode})")
                elif now - w.started > self.timeout:
                    busy.remove(w)
                    yield self._lost(w, seed, "hang", f"no answer within {self.timeout:.0f} s")

    def _spawn(self) -> _Worker:
        w = _Worker(self.directory)
        self.workers.append(w)
        return w

    def _lost(self, w: _Worker, seed: int, kind: str, why: str) -> Outcome:
        """The outcome of a seed whose worker hung or died; the worker is replaced."""
        w.process.kill()
        w.process.join()
        self.workers.remove(w)
        with contextlib.suppress(OSError):
            why += f", while checking {(Path(self.directory) / f'stage_{w.process.pid}').read_text()}"
        program = generate(seed)
        out = Outcome(seed, modeled=True, source=program.source, seconds=time.monotonic() - w.started)
        out.failures.append(Failure("worker", kind, {}, why))
        return out


def sanitize(program: Program, directory: str | None = None) -> str | None:
    """Run `program` at each of its size sets as built by gcc with AddressSanitizer and
    UndefinedBehaviorSanitizer (heap arrays of exactly the declared extents): None when it is
    well-defined there, else the sanitizer's report. Checks the generator, not hexplore."""
    work = Path(directory or tempfile.mkdtemp(prefix="hexplore-fuzz-asan-"))
    for k, sizes in enumerate(size_sets(program, program.seed)):
        src = work / f"asan_{program.seed}_{k}.c"
        src.write_text(program.source + "\n" + program.main(sizes))
        exe = work / f"asan_{program.seed}_{k}"
        defines = [f"-D{s}={v}" for s, v in sizes.items()] if program.macro else []
        flags = ["-O0", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all"]
        build = subprocess.run(["gcc", *flags, *defines, "-o", str(exe), str(src), "-lm"],
                               capture_output=True, text=True, timeout=300)  # fmt: skip
        if build.returncode != 0:
            return f"gcc rejects it at {sizes}:\n{build.stderr[-2000:]}"
        run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300,
                             env={**os.environ, "ASAN_OPTIONS": "detect_leaks=0"})  # fmt: skip
        if run.returncode != 0:
            return f"the sanitizers stop it at {sizes}:\n{run.stderr[-2000:]}"
    return None
