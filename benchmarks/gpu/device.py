"""`bench_gpu.py device`: build, check and time a bundle (bundle.py) on the GPU machine.

Runs with the standard library and numpy: the device has no hexplore.
Phases, each within the time left of `budget` seconds, results.json rewritten after each:

1. build: `make -k -j<cores>` (the `cpu` target only with `gpu=False`);
2. MINI: every program once with its dump (PolyBench's `argc > 42 && argv[0] == ""` switch),
   several at a time; hexplore's dumps compared with gcc's;
3. cuBLAS DGEMM at gemm LARGE;
4. LARGE, gcc: one run each with its dump (the reference), several at a time (one core each);
5. LARGE, hexplore: one at a time. First a check run of every program (dump, and each launch
   timed with CUDA events: hx_ctx.cu), then `repeat` timed runs of those that finished; a program
   past `timeout` is reported as "> timeout";
6. LARGE dumps compared with gcc's, each as soon as its program ran (`LargeChecks`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import warnings
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TypeVar

import minimake
import numpy as np
import table

WORK = Path(tempfile.gettempdir()) / "hx_bench_gpu"
DUMPS = WORK / "dumps"  # emptied at the start of each run
BUILD = WORK / "build"  # kept: make rebuilds what changed
GPU_ENV = {"CUDA_MODULE_LOADING": "EAGER"}
RTOL = {"double": 1e-6, "float": 1e-4, "int": 0.0}
DUMP_SECONDS = 30  # a check run also prints its arrays: deriche's 8.8M numbers at LARGE take ~10 s
T = TypeVar("T")


@dataclass
class Run:
    """One run of one program."""

    rc: int | None  # None: killed at the timeout
    seconds: float | None  # PolyBench's timer
    wall: float
    note: str = ""  # the end of stderr when it failed


class Clock:
    """The whole run's deadline."""

    def __init__(self, budget: float) -> None:
        self.end = time.monotonic() + budget

    def left(self, reserve: float = 0.0) -> float:
        return self.end - time.monotonic() - reserve


def run_program(path: Path, timeout: float, dump: Path | None = None,
                env: dict[str, str] | None = None) -> Run:
    """Run a bundle program; with `dump`, PolyBench prints its arrays there (stderr)."""
    argv = ["", *["-"] * 42] if dump else [path.name]
    err = dump.open("w") if dump else subprocess.PIPE
    t0 = time.monotonic()
    try:
        p = subprocess.run(argv, executable=str(path), stdout=subprocess.PIPE, stderr=err,
                           timeout=max(timeout, 0.1), env={**os.environ, **(env or {})})
    except subprocess.TimeoutExpired:
        return Run(None, None, round(time.monotonic() - t0, 3), f"> {timeout:g} s")
    finally:
        if dump:
            err.close()  # type: ignore[union-attr]
    wall = round(time.monotonic() - t0, 3)
    lines = p.stdout.decode(errors="replace").split()
    seconds = _float(lines[-1]) if lines else None
    note = "" if p.returncode == 0 else _tail(dump.read_text(errors="replace") if dump
                                               else p.stderr.decode(errors="replace"))
    return Run(p.returncode, seconds, wall, note)


def _float(s: str) -> float | None:
    try:
        return float(s)
    except ValueError:
        return None


def _tail(text: str) -> str:
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln[:1].isdigit()]
    return " | ".join(lines[-3:])[-300:]


# ---- dumps ---------------------------------------------------------------------------------------

MARKERS = re.compile(r"(?:begin|end)\s+dump:\s+\S+|==(?:BEGIN|END)\s+DUMP_ARRAYS==")


def read_dump(path: Path) -> np.ndarray:
    """The numbers of a PolyBench dump, in order (numpy parses "nan", "-nan" and "inf" too)."""
    text = MARKERS.sub(" ", path.read_text(errors="replace"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return np.fromstring(text, sep=" ") if text.strip() else np.zeros(0)


def compare(ref: np.ndarray, got: np.ndarray, rtol: float) -> dict[str, object]:
    """`got` against `ref`: ok within `rtol` relative, values below 1/1000 of the largest
    magnitude compared relative to that (cancellation leaves them with little precision)."""
    if len(ref) != len(got):
        return {"status": f"length {len(got)} vs {len(ref)}"}
    finite = np.abs(ref[np.isfinite(ref)])
    big = float(finite.max()) if finite.size else 0.0
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(ref - got)
        scale = np.maximum(np.abs(ref), np.abs(got))
        same = (ref == got) | (np.isnan(ref) & np.isnan(got))
        rel = np.where(same, 0.0, diff / np.maximum(scale, max(1e-3 * big, 1e-300)))
        bad = ~(rel <= rtol)  # NaN against a number is bad too
    nans = int(np.count_nonzero(np.isnan(ref) != np.isnan(got)))
    n_bad = int(np.count_nonzero(bad))
    status = "ok" if n_bad == 0 else (f"NaN {nans}/{len(ref)}" if nans else
                                      f"differs {n_bad}/{len(ref)}")
    finite_rel = rel[np.isfinite(rel)]
    out: dict[str, object] = {"status": status, "n": len(ref), "bad": n_bad,
                              "max_rel": float(finite_rel.max()) if finite_rel.size else 0.0}
    if n_bad:
        i = int(np.argmax(bad))
        out["first"] = [i, float(ref[i]), float(got[i])]
    return out


def check(ref_dump: Path, run: Run, dump: Path, rtol: float) -> dict[str, object]:
    """The check of one hexplore program's run against gcc's dump."""
    if run.rc is None:
        return {"status": run.note}
    if run.rc != 0:
        return {"status": f"crash rc {run.rc}", "note": run.note}
    if not ref_dump.is_file():
        return {"status": "no ref"}
    return compare(read_dump(ref_dump), read_dump(dump), rtol)


# ---- phases --------------------------------------------------------------------------------------


def build(bundle: Path, gpu: bool, clock: Clock, out: Path) -> dict[str, object]:
    """`make -k -j` into BUILD (minimake.py where there is no make): everything, or the gcc
    programs alone where there is no nvcc."""
    jobs = os.cpu_count() or 4
    targets = ["all"] if gpu or shutil.which("nvcc") else ["cpu"]
    variables = [f"B={BUILD}", *_cublas_vars()]
    t0 = time.monotonic()
    limit = max(0.4 * clock.left(), 60)
    if shutil.which("make") and not os.environ.get("HX_NO_MAKE"):
        try:
            p = subprocess.run(["make", "-C", str(bundle), "-k", f"-j{jobs}", *variables, *targets],
                               capture_output=True, text=True, timeout=limit)
            log, rc = p.stdout + p.stderr, p.returncode
        except subprocess.TimeoutExpired as e:
            log, rc = _text(e.stdout) + _text(e.stderr) + "\n[make timed out]", None
    else:
        overrides = dict(v.split("=", 1) for v in variables)
        rc, log = minimake.build(bundle / "Makefile", targets, overrides, jobs)
        log = "[no make: minimake.py]\n" + log
    (out / "build.log").write_text(log)
    errors = [ln for ln in log.splitlines() if "error" in ln.lower()][:40]
    return {"rc": rc, "seconds": round(time.monotonic() - t0, 1), "targets": targets,
            "errors": errors}


def _text(b: bytes | str | None) -> str:
    return b.decode(errors="replace") if isinstance(b, bytes) else b or ""


def _pool_map(fn: Callable[[str], T], items: Iterable[str], workers: int) -> list[T]:
    with ThreadPoolExecutor(max(workers, 1)) as pool:
        return list(pool.map(fn, items))


def mini(bins: Path, m: dict, variants: list[str], timeout: float,
         size: str) -> dict[str, dict]:
    """Every program of `size` (MINI) once with its dump; hexplore's checked against gcc's."""
    dumps = DUMPS / size
    dumps.mkdir(parents=True, exist_ok=True)

    def one(name: str) -> tuple[str, Run]:
        env = GPU_ENV if not name.startswith("cpu.") else None
        prog = bins / name
        if not prog.is_file():
            return name, Run(-1, None, 0.0, "no build")
        return name, run_program(prog, timeout, dumps / f"{name}.txt", env)

    names = [f"{v}.{size}.{k}" for k in m["kernels"] for v in ["cpu", *variants]]
    runs = dict(_pool_map(one, names, min(8, os.cpu_count() or 2)))
    res: dict[str, dict] = {}
    for k in m["kernels"]:
        ref = dumps / f"cpu.{size}.{k}.txt"
        res[k] = {"cpu": asdict(runs[f"cpu.{size}.{k}"])}
        if ref.is_file():
            res[k]["cpu"]["values"] = int(read_dump(ref).size)
        for v in variants:
            r = runs[f"{v}.{size}.{k}"]
            c = check(ref, r, dumps / f"{v}.{size}.{k}.txt", RTOL[m["types"][k]])
            if r.note == "no build":
                c = {"status": "no build"}
            res[k][v] = {**asdict(r), "check": c}
    return res


def cublas(bins: Path, timeout: float) -> dict[str, object]:
    """bin/cublas_gemm's line: kernel-only and with-transfer DGEMM times."""
    prog = bins / "cublas_gemm"
    if not prog.is_file():
        return {"status": "no build"}
    lib = _find("lib", "libcublas.so*")
    env = {**os.environ, "LD_LIBRARY_PATH": ":".join(filter(None, [
        *([str(lib.parent)] if lib else []), os.environ.get("LD_LIBRARY_PATH", "")]))}
    try:
        p = subprocess.run([str(prog)], capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"status": f"> {timeout:g} s"}
    words = p.stdout.split()
    vals = {words[i]: _float(words[i + 1]) for i in range(0, len(words) - 1, 2)}
    return {"status": "ok" if p.returncode == 0 else f"rc {p.returncode}", **vals,
            "stderr": p.stderr[-300:]}


def _find(kind: str, pattern: str) -> Path | None:
    """cuBLAS's header or library: in nvcc's toolkit, else in pip's nvidia packages."""
    roots: list[Path] = []
    nvcc = shutil.which("nvcc")
    if nvcc:
        roots.append(Path(os.path.realpath(nvcc)).parent.parent)
    roots += [Path(p) for p in ("/usr/local/cuda", "/usr")]
    try:
        import nvidia  # type: ignore[import-not-found]

        roots += [Path(p) / "*" for p in nvidia.__path__] + [Path(p) for p in nvidia.__path__]
    except ImportError:
        pass
    subs = ["include", "targets/*/include"] if kind == "include" else [
        "lib64", "lib", "targets/*/lib", "lib/x86_64-linux-gnu"]
    for root in roots:
        for sub in subs:
            found = sorted(Path("/").glob(f"{str(root / sub).lstrip('/')}/{pattern}"))
            if found:
                return found[0]
    return None


def _cublas_vars() -> list[str]:
    """make variables that point nvcc at cuBLAS where it is not in the toolkit."""
    inc, lib = _find("include", "cublas_v2.h"), _find("lib", "libcublas.so*")
    out = [f"CUBLAS_INC=-I{inc.parent}"] if inc else []
    return out + ([f"CUBLAS_LD=-L{lib.parent} -Xlinker -rpath={lib.parent}"] if lib else [])


def cpu_large(bins: Path, kernels: list[str], timeout: float,
              size: str, slow: dict[str, dict] | None = None, variants: tuple[str, ...] = ()) -> dict[str, dict]:
    """gcc's programs of `size` (LARGE), one run each with its dump, half the cores at a time.
    With `slow`, hexplore's programs of the kernels it names run in the same pool (one run each
    with its dump, also their timed run): kernels that take tens of seconds at LARGE whichever device
    the host code picks (cholesky, lu, ludcmp, floyd-warshall), measured in parallel rather than
    one at a time in the GPU phase."""
    dumps = DUMPS / size
    dumps.mkdir(parents=True, exist_ok=True)
    jobs = [("cpu", k) for k in kernels] + [(v, k) for k in (slow or {}) for v in variants]

    def one(job: str) -> dict[str, object]:
        v, k = job.split(" ")
        prog = bins / f"{v}.{size}.{k}"
        if not prog.is_file():
            return asdict(Run(-1, None, 0.0, "no build"))
        if v == "cpu":
            return asdict(run_program(prog, timeout, dumps / f"cpu.{size}.{k}.txt"))
        run = asdict(run_program(prog, timeout, dumps / f"{v}.{size}.{k}.txt", GPU_ENV))  # launches not timed one by one
        return {"check_run": run, "runs": [run]}

    done = dict(zip(jobs, _pool_map(one, [f"{v} {k}" for v, k in jobs], cpu_workers() + len(jobs) - len(kernels)), strict=True))
    for (v, k), r in done.items():
        if v != "cpu" and slow is not None:
            slow[k][v] = r
    return {k: r for (v, k), r in done.items() if v == "cpu"}


def cpu_workers() -> int:
    """gcc's programs run this many at a time (one core each, half the cores)."""
    return max(1, (os.cpu_count() or 2) // 2)


def _check_run(prog: Path, name: str, timeout: float, dumps: Path) -> dict[str, object]:
    """The first run of a timed GPU program: its dump, and its launches timed one by one."""
    ktime = dumps / f"{name}.ktime"
    ktime.unlink(missing_ok=True)
    r = run_program(prog, timeout, dumps / f"{name}.txt",
                    {**GPU_ENV, "HX_KERNEL_TIME": str(ktime)})
    out: dict[str, object] = {"check_run": asdict(r)}
    if ktime.is_file():
        launches, ms = ktime.read_text().split()
        out |= {"launches": int(launches), "kernel_ms": float(ms)}
    return out


def gpu_large(bins: Path, kernels: list[str], variants: list[str], repeat: int,
              timeout: float, clock: Clock, reserve: float, size: str,
              progress: Callable[[dict[str, dict]], None],
              checked: Callable[[str, str, dict], None] = lambda k, v, e: None) -> dict[str, dict]:
    """hexplore's programs of `size` one at a time: a check run each (handed to `checked`), then
    `repeat` timed runs; `progress` gets the results so far after each program."""
    res: dict[str, dict] = {k: {} for k in kernels}
    progs = [(k, v) for k in kernels for v in variants]
    for k, v in progs:
        prog = bins / f"{v}.{size}.{k}"
        left = clock.left(reserve)
        if not prog.is_file():
            res[k][v] = {"status": "no build"}
        elif left < 1:
            res[k][v] = {"status": "skipped (time)"}
        else:
            res[k][v] = _check_run(prog, f"{v}.{size}.{k}", min(timeout + DUMP_SECONDS, left), DUMPS / size)
            checked(k, v, res[k][v])
        progress(res)
    for _ in range(repeat):
        for k, v in progs:
            r = res[k][v].get("check_run")
            if r and r["rc"] == 0 and clock.left(reserve) > r["wall"] + 1:
                run = run_program(bins / f"{v}.{size}.{k}", timeout, env=GPU_ENV)
                res[k][v].setdefault("runs", []).append(asdict(run))
                progress(res)
    return res


class LargeChecks:
    """The check runs' dumps of `size` compared with gcc's in worker processes, each as soon as
    its program has run (the GPU phase leaves the host's cores idle), so that the comparison of
    ~100 MB of dumps does not wait for, or outlast, the timings."""

    def __init__(self, m: dict, size: str) -> None:
        self.types, self.dumps = m["types"], DUMPS / size
        self.size = size
        self.pool = ProcessPoolExecutor(max(1, min(4, (os.cpu_count() or 2) // 4)))
        self.futures: dict[tuple[str, str], Future] = {}

    def submit(self, k: str, v: str, entry: dict) -> None:
        if "check_run" in entry:
            self.futures[k, v] = self.pool.submit(
                check, self.dumps / f"cpu.{self.size}.{k}.txt", Run(**entry["check_run"]),
                self.dumps / f"{v}.{self.size}.{k}.txt", RTOL[self.types[k]])

    def collect(self, res: dict[str, dict], timeout: float) -> None:
        """Each finished comparison into its entry of `res`; those not done in `timeout` seconds
        say so."""
        done, _ = wait(list(self.futures.values()), timeout=max(timeout, 0.1))
        for (k, v), f in self.futures.items():
            res[k][v]["check"] = f.result() if f in done else {"status": "not compared (time)"}
        self.pool.shutdown(wait=False, cancel_futures=True)


# ---- driver --------------------------------------------------------------------------------------


def _gpu_name() -> str:
    smi = shutil.which("nvidia-smi")
    if not smi:
        return "no GPU (no nvidia-smi)"
    p = subprocess.run([smi, "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                       capture_output=True, text=True)
    return p.stdout.strip() or p.stderr.strip()


def _save(out: Path, results: dict) -> None:
    (out / "results.json").write_text(json.dumps(results, indent=1))
    (out / "table.md").write_text(table.render(results))


def main(bundle: Path, out: Path, gpu: bool, budget: float, repeat: int, timeout: float,
         cpu_timeout: float, kernels: list[str] | None, slow: list[str] | None = None) -> None:
    clock = Clock(budget)
    out.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(DUMPS, ignore_errors=True)
    m = json.loads((bundle / "manifest.json").read_text())
    if kernels:
        m["kernels"] = [k for k in m["kernels"] if k in kernels]
    variants = [v for v in m["revisions"] if gpu]
    small = "MINI" if "MINI" in m["sizes"] else None
    big = ([s for s in m["sizes"] if s != "MINI"] or [None])[-1]
    results = _header(m, timeout, cpu_timeout, repeat, small, big)
    ks, bins = m["kernels"], BUILD / "bin"
    slow_res: dict[str, dict] = {k: {} for k in slow or [] if k in ks and gpu}
    fast = [k for k in ks if k not in slow_res]
    checks = LargeChecks(m, big) if big else None

    def large_cpu() -> dict[str, dict]:  # gcc's, and the slow kernels' (compared as soon as they ran)
        res = cpu_large(bins, ks, min(cpu_timeout, clock.left(60)), big, slow_res, tuple(variants))
        for k, entries in slow_res.items():
            for v, entry in entries.items():
                checks.submit(k, v, entry)  # type: ignore[union-attr]
        return res

    steps: list[tuple[str, Callable[[], object]]] = [
        ("build", lambda: build(bundle, gpu, clock, out)),
        ("mini", lambda: mini(bins, m, variants, timeout, small) if small else {}),
        ("cublas", lambda: cublas(bins, 30) if gpu else {"status": "no GPU"}),
        ("cpu_large", lambda: large_cpu() if big else {}),
        ("gpu_large", lambda: {**slow_res, **gpu_large(bins, fast, variants, repeat, timeout, clock, 45, big,
                                                       lambda r: _save(out, {**results, "gpu_large": {**slow_res, **r}}),
                                                       checks.submit)}  # type: ignore[union-attr]
         if big else {}),
    ]
    for name, step in steps:
        t0 = time.monotonic()
        print(f"[bench_gpu] {name} ({clock.left():.0f} s left)", flush=True)
        results[name] = step()
        results["phases"][name] = round(time.monotonic() - t0, 1)
        _save(out, results)
    if checks:
        checks.collect(results["gpu_large"], clock.left(-5))
    _save(out, results)
    print(table.render(results))


def _header(m: dict, timeout: float, cpu_timeout: float, repeat: int,
            small: str | None, big: str | None) -> dict:
    return {"gpu": _gpu_name(), "manifest": {k: m[k] for k in ("revisions", "sizes")},
            "check_size": small, "time_size": big,
            "started": time.strftime("%Y-%m-%d %H:%M:%S"), "timeout": timeout,
            "cpu_timeout": cpu_timeout, "repeat": repeat, "phases": {},
            "cpu_workers": cpu_workers(),
            "kernel_counts": {f"{c['variant']}.{c['size']}.{c['kernel']}": c["kernels"]
                              for c in m["compiles"]},
            "harness": {f"{c['variant']} {c['size']} {c['kernel']}": c.get("harness") or c["note"]
                        for c in m["compiles"] if c.get("harness") or c.get("note")}}
