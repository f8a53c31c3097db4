"""`bench_gpu.py prepare`: the device bundle, made where hexplore runs (no GPU needed).

For each PolyBench kernel and dataset size, hexplore's CUDA C (`hexplore compile --target cuda`,
with `--always-offload` at MINI) from the working tree ("new") and, with `--baseline-rev`, from
that git revision ("base", exported with `git archive` and run with this venv), and PolyBench's
program twice: `src/<k>/<k>.cpu.c` (the original, for gcc -O3) and, per compile,
`harness/<variant>/<SIZE>/<k>.c`, whose `kernel_<k>` calls hexplore's host function
(harness.py). Both print the arrays exactly (`%.17g`), so that dumps compare numerically. A
Makefile builds every program on the device (`make -j16`), outside the bundle.

Layout of DIR (a few MiB: it is carried to the device)::

    manifest.json   kernels, sizes, revisions, each compile's status, remarks and kernel count
    Makefile        $(B)/bin/{cpu,new,base}.<SIZE>.<k>, $(B)/bin/cublas_gemm (B: outside DIR)
    common/         polybench.h (the timer macros on), polybench.c, hx_ctx.cu, cublas_gemm.cu
    src/<k>/        <k>.h, <k>.cpu.c
    harness/<variant>/<SIZE>/<k>.c
    cuda/<variant>/<SIZE>/<k>/   hexplore's .cu and .hu files
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from compile_worker import MARK
from harness import harness

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
POLYBENCH = ROOT / "tests" / "polybench"
KERNELS = sorted(p.name for p in POLYBENCH.iterdir() if (p / f"{p.name}.c").is_file())

TIMER_MACROS = (
    "# define polybench_start_instruments polybench_timer_start();\n"
    "# define polybench_stop_instruments polybench_timer_stop();\n"
    "# define polybench_print_instruments polybench_timer_print();\n"
    "extern void polybench_timer_start(void);\n"
    "extern void polybench_timer_stop(void);\n"
    "extern void polybench_timer_print(void);\n"
)
EMPTY_MACROS = (
    "# define polybench_start_instruments\n"
    "# define polybench_stop_instruments\n"
    "# define polybench_print_instruments\n"
)
EXACT_PRINT = """
/* bench_gpu: print every value exactly, so that dumps compare numerically. */
#undef DATA_PRINTF_MODIFIER
#if defined(DATA_TYPE_IS_INT)
# define DATA_PRINTF_MODIFIER "%d "
#elif defined(DATA_TYPE_IS_FLOAT)
# define DATA_PRINTF_MODIFIER "%.9g "
#else
# define DATA_PRINTF_MODIFIER "%.17g "
#endif
"""


@dataclass(frozen=True)
class Compile:
    """One `hexplore compile` of one kernel at one size by one hexplore."""

    variant: str  # "new" or "base"
    size: str  # "MINI", "LARGE", ...
    kernel: str
    rc: int
    seconds: float
    files: tuple[str, ...]
    kernels: int  # __global__ functions generated
    host: bool  # an extern "C" host function was generated
    remarks: str
    inputs: str  # inputs_digest(size, kernel)
    harness: str = ""  # why PolyBench's main cannot call hexplore's function ("" where it can)
    note: str = ""  # e.g. parameters hexplore's function leaves out


def function_name(kernel: str) -> str:
    """`fdtd-2d` -> `kernel_fdtd_2d`."""
    return "kernel_" + kernel.replace("-", "_")


def exact_print(source: str, kernel: str) -> str:
    """Insert EXACT_PRINT after `#include "<kernel>.h"`."""
    include = f'#include "{kernel}.h"'
    if include not in source:
        raise ValueError(f"{kernel}.c does not include {kernel}.h")
    return source.replace(include, include + "\n" + EXACT_PRINT, 1)


def data_type(kernel: str) -> str:
    """`double`, `float` or `int`: the default DATA_TYPE of the kernel's header."""
    header = (POLYBENCH / kernel / f"{kernel}.h").read_text()
    m = re.search(r"#\s*define\s+DATA_TYPE_IS_(INT|FLOAT|DOUBLE)\s*$", header, re.M)
    return m.group(1).lower() if m else "double"


def write_if_changed(path: Path, text: str) -> None:
    """Keep a file (and its time, so that make keeps what it built from it) if its text is the same."""
    if not (path.is_file() and path.read_text() == text):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def write_sources(out: Path) -> None:
    """common/ and src/: everything but hexplore's output."""
    header = (POLYBENCH / "utilities" / "polybench.h").read_text()
    if EMPTY_MACROS not in header:
        raise ValueError("polybench.h: the empty instrument macros were not found")
    write_if_changed(out / "common" / "polybench.h", header.replace(EMPTY_MACROS, TIMER_MACROS))
    for name in ("polybench.c", "hx_ctx.cu", "cublas_gemm.cu"):
        write_if_changed(out / "common" / name, (HERE / name).read_text())
    for k in KERNELS:
        src = out / "src" / k
        write_if_changed(src / f"{k}.h", (POLYBENCH / k / f"{k}.h").read_text())
        text = exact_print((POLYBENCH / k / f"{k}.c").read_text(), k)
        write_if_changed(src / f"{k}.cpu.c", text)


# The slowest compiles first, so that the two workers end together (seconds measured 2026-11).
SLOW_FIRST = ("seidel-2d", "deriche", "adi", "3mm", "correlation", "symm", "heat-3d",
              "gramschmidt", "2mm", "ludcmp", "lu", "cholesky", "fdtd-2d")


class Worker:
    """A compile_worker.py process running the hexplore of one tree."""

    def __init__(self, tree: Path) -> None:
        self.tree = tree
        self.proc: subprocess.Popen[str] | None = None

    def ask(self, argv: list[str]) -> tuple[int, str]:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = subprocess.Popen(
                [sys.executable, str(HERE / "compile_worker.py")], cwd=self.tree, text=True,
                env={**os.environ, "PYTHONPATH": str(self.tree)},
                stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(argv) + "\n")
        self.proc.stdin.flush()
        for line in self.proc.stdout:
            if line.startswith(MARK):
                r = json.loads(line[len(MARK):])
                return int(r["rc"]), str(r["log"])
        return -1, f"the compile worker died (rc {self.proc.wait()})"

    def close(self) -> None:
        if self.proc is not None and self.proc.stdin is not None:
            self.proc.stdin.close()
            self.proc.wait()


def _argv(size: str, kernel: str, dest: Path) -> list[str]:
    argv = ["compile", str(POLYBENCH / kernel / f"{kernel}.c"), "--target", "cuda",
            "--function", function_name(kernel), "-I", str(POLYBENCH / "utilities"),
            "-D", f"{size}_DATASET", "-o", str(dest)]
    return [*argv, "--always-offload"] if size == "MINI" else argv


def _compile_one(worker: Worker, variant: str, size: str, kernel: str, out: Path) -> Compile:
    """Compile into a fresh folder; files that did not change keep their time (for make)."""
    dest = out / "cuda" / variant / size / kernel
    fresh = dest.with_name(kernel + ".new")
    shutil.rmtree(fresh, ignore_errors=True)
    fresh.mkdir(parents=True)
    t0 = time.perf_counter()
    rc, log = worker.ask(_argv(size, kernel, fresh))
    seconds = time.perf_counter() - t0
    dest.mkdir(parents=True, exist_ok=True)
    for old in dest.iterdir():
        if not (fresh / old.name).is_file():
            old.unlink()
    for f in fresh.iterdir():
        write_if_changed(dest / f.name, f.read_text())
    shutil.rmtree(fresh)
    return _result(variant, size, kernel, rc, seconds, dest, log)


def _result(variant: str, size: str, kernel: str, rc: int, seconds: float, dest: Path,
            log: str) -> Compile:
    files = tuple(sorted(f.name for f in dest.iterdir()))
    cu = [(dest / f).read_text() for f in files if f.endswith(".cu")]
    return Compile(variant, size, kernel, rc, round(seconds, 2), files,
                   sum(t.count("__global__") for t in cu), any('extern "C"' in t for t in cu),
                   log.strip(), inputs_digest(size, kernel))


@contextmanager
def exported(rev: str | None) -> Iterator[Path]:
    """The tree of `rev` (`git archive` into a temporary folder), or the working tree for None."""
    if rev is None:
        yield ROOT
        return
    with tempfile.TemporaryDirectory(prefix="hx-rev-") as tmp:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", rev],
                                 capture_output=True, check=True).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(tmp, filter="data")
        yield Path(tmp)


def _ordered(sizes: list[str], kernels: list[str]) -> list[tuple[str, str]]:
    rank = {k: i for i, k in enumerate(SLOW_FIRST)}
    work = [(s, k) for s in sizes for k in kernels]
    return sorted(work, key=lambda sk: rank.get(sk[1], len(rank)))


def compile_variant(out: Path, variant: str, rev: str | None, work: list[tuple[str, str]],
                    jobs: int) -> list[Compile]:
    """hexplore at `rev` on each (size, kernel) of `work`, by `jobs` workers."""
    if not work:
        return []
    queue = list(reversed(work))
    lock = threading.Lock()
    results: list[Compile] = []

    def drain(worker: Worker) -> None:
        while True:
            with lock:
                if not queue:
                    break
                size, kernel = queue.pop()
            c = _compile_one(worker, variant, size, kernel, out)
            with lock:
                results.append(c)
        worker.close()

    with exported(rev) as tree, ThreadPoolExecutor(jobs) as pool:
        list(pool.map(drain, [Worker(tree) for _ in range(jobs)]))
    return results


def inputs_digest(size: str, kernel: str) -> str:
    """What a compile's output depends on besides hexplore: the sources and the arguments."""
    h = hashlib.sha256(" ".join(_argv(size, kernel, Path("-"))).encode())
    for f in (POLYBENCH / kernel / f"{kernel}.c", POLYBENCH / kernel / f"{kernel}.h",
              POLYBENCH / "utilities" / "polybench.h"):
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


def _reusable(out: Path, variant: str, revision: str) -> dict[tuple[str, str], Compile]:
    """The previous bundle's compiles of `variant` by the same revision of the same inputs."""
    try:
        old = json.loads((out / "manifest.json").read_text())
    except (OSError, ValueError):
        return {}
    found = {}
    for c in old.get("compiles", []):
        key = (c["size"], c["kernel"])
        if (c["variant"] == variant and old.get("revisions", {}).get(variant) == revision
                and c.get("inputs") == inputs_digest(*key)
                and all((out / "cuda" / c["variant"] / c["size"] / c["kernel"] / f).is_file()
                        for f in c["files"])):
            fields = {f: c[f] for f in Compile.__dataclass_fields__ if f in c}
            found[key] = Compile(**{**fields, "files": tuple(c["files"])})
    return found


def compile_all(out: Path, sizes: list[str], revs: dict[str, str | None], kernels: list[str],
                jobs: int, revisions: dict[str, str]) -> list[Compile]:
    """Every (variant, size, kernel) compile; a clean revision's earlier outputs are kept."""
    results: list[Compile] = []
    for variant, rev in revs.items():
        kept = {} if rev is None else _reusable(out, variant, revisions[variant])
        work = [sk for sk in _ordered(sizes, kernels) if sk not in kept]
        results += [c for (s, k), c in kept.items() if s in sizes and k in kernels]
        results += compile_variant(out, variant, rev, work, jobs)
    return sorted(results, key=lambda c: (c.variant != "new", c.size, c.kernel))


def git_rev(rev: str | None) -> str:
    """The commit of `rev` (HEAD for the working tree, with `+dirty` if it has changes)."""
    sha = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", rev or "HEAD"],
                         capture_output=True, text=True, check=True).stdout.strip()
    if rev is not None:
        return sha
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "-uno"],
                           capture_output=True, text=True).stdout.strip()
    return sha + ("+dirty" if dirty else "")


def _program_rules(size: str, kernel: str, variant: str, compile_: Compile) -> list[str]:
    """Make rules for bin/<variant>.<size>.<kernel>: the harness and hexplore's .cu files."""
    cuda = f"cuda/{variant}/{size}/{kernel}"
    headers = " ".join(f"{cuda}/{f}" for f in compile_.files if f.endswith(".hu"))
    fname = function_name(kernel)
    main = f"$(B)/obj/{variant}/{size}/{kernel}/harness.o"
    rules = [f"{main}: harness/{variant}/{size}/{kernel}.c src/{kernel}/{kernel}.h common/polybench.h",
             "\t@mkdir -p $(@D)",
             f"\t$(CC) $(CFLAGS) -D{size}_DATASET -Icommon -Isrc/{kernel} -c $< -o $@", ""]
    objs = []
    for f in compile_.files:
        if f.endswith(".cu"):
            obj = f"$(B)/obj/{variant}/{size}/{kernel}/{f[:-3]}.o"
            objs.append(obj)
            rules += [f"{obj}: {cuda}/{f} {headers}", "\t@mkdir -p $(@D)",
                      f"\t$(NVCC) $(NVFLAGS) -D{fname}=hx_{fname} -c $< -o $@", ""]
    rules += [f"$(B)/bin/{variant}.{size}.{kernel}: {main} {' '.join(objs)} $(B)/obj/polybench.o $(B)/obj/hx_ctx.o",
              "\t@mkdir -p $(@D)", "\t$(NVCC) -arch=$(ARCH) -o $@ $^ $(LDWRAP) -lm", ""]
    return rules


def _c_rules(size: str, kernel: str) -> list[str]:
    deps = f"src/{kernel}/{kernel}.h common/polybench.h"
    return [f"$(B)/bin/cpu.{size}.{kernel}: src/{kernel}/{kernel}.cpu.c $(B)/obj/polybench.o {deps}",
            "\t@mkdir -p $(@D)",
            f"\t$(CC) $(CFLAGS) -D{size}_DATASET -Icommon -Isrc/{kernel} -o $@ $< $(B)/obj/polybench.o -lm",
            ""]


MAKE_HEADER = """\
# Generated by benchmarks/bench_gpu.py prepare: `make -j16 -k` on the device.
NVCC = nvcc
CC = gcc
ARCH = sm_90
CFLAGS = -O3
NVFLAGS = -O3 -arch=$(ARCH) -diag-suppress 177,550
LDWRAP := -Xlinker --wrap=__cudaLaunchKernel
# Where programs and objects go: outside the bundle, which is carried (device.py passes B=...).
B = /tmp/hx_bench_gpu/build

.PHONY: all cpu gpu
all: cpu gpu

$(B)/obj/polybench.o: common/polybench.c
\t@mkdir -p $(@D)
\t$(CC) $(CFLAGS) -c $< -o $@

$(B)/obj/hx_ctx.o: common/hx_ctx.cu
\t@mkdir -p $(@D)
\t$(NVCC) $(NVFLAGS) -c $< -o $@

$(B)/bin/cublas_gemm: common/cublas_gemm.cu
\t@mkdir -p $(@D)
\t$(NVCC) $(NVFLAGS) $(CUBLAS_INC) -o $@ $< $(CUBLAS_LD) -lcublas

"""


def makefile(compiles: list[Compile], sizes: list[str], kernels: list[str]) -> str:
    """The bundle's Makefile: `cpu` (gcc builds) and `gpu` (nvcc builds and cuBLAS) targets."""
    rules: list[str] = []
    cpu, gpu = [], ["$(B)/bin/cublas_gemm"]
    for size in sizes:
        for k in kernels:
            rules += _c_rules(size, k)
            cpu.append(f"$(B)/bin/cpu.{size}.{k}")
    for c in compiles:
        if c.host and not c.harness:
            rules += _program_rules(c.size, c.kernel, c.variant, c)
            gpu.append(f"$(B)/bin/{c.variant}.{c.size}.{c.kernel}")
    targets = [f"cpu: {' '.join(cpu)}", "", f"gpu: {' '.join(gpu)}", ""]
    return MAKE_HEADER + "\n".join(targets + rules)


def write_harnesses(out: Path, compiles: list[Compile]) -> list[Compile]:
    """harness/<variant>/<size>/<kernel>.c for each compile; the compiles with `harness` set
    where PolyBench's main cannot call hexplore's function."""
    done = []
    for c in compiles:
        dest = out / "harness" / c.variant / c.size / f"{c.kernel}.c"
        host = [f for f in c.files if f.endswith("_host.cu")]
        try:
            if not c.host or not host:
                raise ValueError(f"no host function (hexplore compile rc {c.rc})")
            source = (out / "src" / c.kernel / f"{c.kernel}.cpu.c").read_text()
            host_cu = (out / "cuda" / c.variant / c.size / c.kernel / host[0]).read_text()
            text, note = harness(source, function_name(c.kernel), host_cu)
            write_if_changed(dest, text)
            done.append(replace(c, harness="", note=note))
        except ValueError as e:
            dest.unlink(missing_ok=True)
            done.append(replace(c, harness=str(e)))
    return done


def _remove_stale(out: Path, compiles: list[Compile]) -> None:
    """cuda/ folders and harnesses of an earlier bundle that this one does not use."""
    used = {out / "cuda" / c.variant / c.size / c.kernel for c in compiles}
    for d in sorted((out / "cuda").glob("*/*/*")):
        if d not in used:
            shutil.rmtree(d)
    used = {out / "harness" / c.variant / c.size / f"{c.kernel}.c" for c in compiles}
    for f in sorted((out / "harness").glob("*/*/*.c")):
        if f not in used:
            f.unlink()
    shutil.rmtree(out / "shim", ignore_errors=True)  # an earlier layout
    for f in (out / "src").glob("*/*.main.c"):
        f.unlink()


def prepare(out: Path, sizes: list[str], baseline: str | None, new_rev: str | None,
            kernels: list[str], jobs: int = 2) -> dict[str, object]:
    """Write the bundle into `out`; returns the manifest."""
    t0 = time.perf_counter()
    out = out.resolve()  # hexplore runs in the exported tree
    shutil.rmtree(out / "build", ignore_errors=True)  # never carried: device.py builds elsewhere
    write_sources(out)
    revs: dict[str, str | None] = {"new": new_rev}
    if baseline:
        revs["base"] = baseline
    revisions = {v: git_rev(r) for v, r in revs.items()}
    compiles = write_harnesses(out, compile_all(out, sizes, revs, kernels, jobs, revisions))
    _remove_stale(out, compiles)
    (out / "Makefile").write_text(makefile(compiles, sizes, kernels))
    manifest: dict[str, object] = {
        "sizes": sizes,
        "kernels": kernels,
        "types": {k: data_type(k) for k in kernels},
        "revisions": revisions,
        "compiles": [asdict(c) for c in compiles],
        "prepare_seconds": round(time.perf_counter() - t0, 1),
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return manifest
