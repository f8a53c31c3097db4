"""GPU speed: hexplore's CUDA C on the 30 PolyBench kernels, linked into PolyBench's own `main`,
against gcc -O3 on one core, a baseline revision of hexplore, and the PPCG column of the last
H100 record (../shared/gpu/H100-2026-11-25.md), with cuBLAS DGEMM at gemm LARGE.

The work is split between two machines: `prepare` runs here (hexplore needs islpy and libclang)
and writes a small bundle (the generated .cu files, the harness C and a Makefile); `device` runs
on the lent GPU machine (`bash benchmarks/gpu/session.sh` there, with `gpu_bundle` carried):
builds the bundle with make -j, checks MINI dumps against gcc's, times LARGE and writes
`results.json` and `table.md`.

    python benchmarks/bench_gpu.py prepare [DIR] [--sizes MINI,LARGE] [--baseline-rev REV]
    python benchmarks/bench_gpu.py device [DIR] --out OUTDIR [--no-gpu] [--budget S]
    python benchmarks/bench_gpu.py table [DIR]     # what the bundle holds (no GPU needed)
    python benchmarks/bench_gpu.py render OUTDIR   # OUTDIR/results.json as table.md
    python benchmarks/bench_gpu.py ptx --out OUTDIR  # `hexplore run --device cuda` at MINI
    python benchmarks/bench_gpu.py                 # prepare, then `device` on a machine with a
                                                   # GPU, else the table

Times are PolyBench's timer around the kernel call (cudaMalloc + transfers + kernels; the CUDA
context is made before `main`), the best of `--repeat` runs; gcc's is one run.

On the lent machine, one call (about 6.5 minutes; HX_BUDGET=seconds changes that):

    run(command="bash benchmarks/gpu/session.sh", carry=["gpu_bundle"], timeout_s=480)

and, with `benchmarks/gpu/wheels.sh` run here first, `hexplore run --device cuda` at MINI:

    run(command="HX_BUDGET=240 bash benchmarks/gpu/session.sh ptx", carry=[".whl"], timeout_s=300)
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "gpu"))

DEFAULT_DIR = "gpu_bundle"


def _prepare(args: argparse.Namespace) -> None:
    import bundle  # here only: the device has no need of it

    kernels = args.kernels.split(",") if args.kernels else bundle.KERNELS
    out = Path(args.dir)
    out.mkdir(parents=True, exist_ok=True)
    _exclude(out)
    m = bundle.prepare(out, args.sizes.split(","), args.baseline_rev, args.new_rev, kernels,
                       args.jobs)
    size = _size_mib(out)
    print(f"prepared {out} in {m['prepare_seconds']} s ({size:.1f} MiB)")
    if size > 30:
        print(f"warning: {out} is {size:.0f} MiB; what is carried to the device is at most 64 MiB")
    _summary(out)


def _exclude(out: Path) -> None:
    """Keep a bundle inside the checkout out of git (.git/info/exclude, not .gitignore)."""
    root = Path(__file__).resolve().parent.parent
    try:
        rel = out.resolve().relative_to(root)
    except ValueError:
        return
    exclude = root / ".git" / "info" / "exclude"
    line = f"/{rel.as_posix()}/"
    exclude.parent.mkdir(parents=True, exist_ok=True)
    lines = exclude.read_text().splitlines() if exclude.exists() else []
    if line not in lines:
        exclude.write_text("\n".join([*lines, line]) + "\n")


def _size_mib(out: Path) -> float:
    return sum(f.stat().st_size for f in out.rglob("*") if f.is_file()) / 2**20


def _summary(out: Path) -> None:
    """What the bundle holds: per kernel and size, the kernels hexplore generated."""
    m = json.loads((out / "manifest.json").read_text())
    cols = [(v, s) for v in m["revisions"] for s in m["sizes"]]
    by = {(c["variant"], c["size"], c["kernel"]): c for c in m["compiles"]}
    print("revisions: " + ", ".join(f"{v} = {r}" for v, r in m["revisions"].items()))
    print("kernels generated (__global__ functions; '-' where the compile failed)")
    print(f"{'kernel':16}" + "".join(f"{v + ' ' + s:>12}" for v, s in cols))
    for k in m["kernels"]:
        cells = [by[(v, s, k)] for v, s in cols]
        print(f"{k:16}" + "".join(f"{c['kernels'] if c['host'] else '-':>12}" for c in cells))
    failed = [c for c in m["compiles"] if not c["host"]]
    for c in failed[:6]:
        print(f"\n{c['variant']} {c['size']} {c['kernel']}: rc {c['rc']}\n{c['remarks'][-800:]}")
    if len(failed) > 6:
        print(f"\n... and {len(failed) - 6} more failed compiles (manifest.json)")


def _device(args: argparse.Namespace) -> None:
    import device

    device.main(Path(args.dir), Path(args.out), gpu=not args.no_gpu, budget=args.budget,
                repeat=args.repeat, timeout=args.timeout, cpu_timeout=args.cpu_timeout,
                kernels=args.kernels.split(",") if args.kernels else None,
                slow=args.slow.split(",") if args.slow else None)


def _ptx(args: argparse.Namespace) -> None:
    import ptx

    root = Path(__file__).resolve().parent.parent
    every = sorted(p.name for p in (root / "tests" / "polybench").iterdir()
                   if (p / f"{p.name}.c").is_file())
    kernels = args.kernels.split(",") if args.kernels else every
    ptx.main(Path(args.out), kernels, args.jobs, args.timeout)


def _render(args: argparse.Namespace) -> None:
    import table

    out = Path(args.outdir)
    text = table.render(json.loads((out / "results.json").read_text()))
    (out / "table.md").write_text(text)
    print(text)


def _default(args: argparse.Namespace) -> None:
    _prepare(args)
    if _has_gpu():
        dev = _arguments_of(["device", args.dir, "--out", "out/bench_gpu"])
        _device(dev)
    else:
        print("no GPU here (nvidia-smi): the bundle is prepared; run `device` on a GPU machine")


def _has_gpu() -> bool:
    smi = shutil.which("nvidia-smi")
    return smi is not None and subprocess.run([smi, "-L"], capture_output=True).returncode == 0


def _parser() -> tuple[argparse.ArgumentParser, list[str]]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command")
    prep = sub.add_parser("prepare", help="write the bundle (here: needs hexplore)")
    dev = sub.add_parser("device", help="build, check and time the bundle (there: needs a GPU)")
    table = sub.add_parser("table", help="what the bundle holds")
    render = sub.add_parser("render", help="OUTDIR/results.json as OUTDIR/table.md")
    render.add_argument("outdir")
    ptx = sub.add_parser("ptx", help="`hexplore run --device cuda` on every kernel at MINI")
    ptx.add_argument("--out", required=True)
    ptx.add_argument("--kernels", default="")
    ptx.add_argument("--jobs", type=int, default=8)
    ptx.add_argument("--timeout", type=float, default=120.0)
    for q in (prep, dev, table):
        q.add_argument("dir", nargs="?", default=DEFAULT_DIR)
        q.add_argument("--kernels", default="", help="comma-separated subset (default: all 30)")
    prep.add_argument("--sizes", default="MINI,LARGE")
    prep.add_argument("--baseline-rev", default=None, help="also compile with hexplore at REV")
    prep.add_argument("--new-rev", default=None, help="REV instead of the working tree")
    prep.add_argument("--jobs", type=int, default=2, help="hexplore compiles at a time")
    dev.add_argument("--out", required=True)
    dev.add_argument("--no-gpu", action="store_true", help="build all, run only the CPU parts")
    dev.add_argument("--budget", type=float, default=380.0, help="seconds for the whole run")
    dev.add_argument("--repeat", type=int, default=2, help="timed runs per GPU program")
    dev.add_argument("--timeout", type=float, default=10.0, help="seconds per GPU program")
    dev.add_argument("--cpu-timeout", type=float, default=20.0, help="seconds per gcc program")
    dev.add_argument("--slow", default="cholesky,lu,ludcmp,floyd-warshall",
                     help="kernels whose hexplore programs run beside gcc's, with its timeout")
    return p, list(sub.choices)


def _arguments_of(argv: list[str]) -> argparse.Namespace:
    p, commands = _parser()
    if argv and (argv[0] in commands or argv[0] in ("-h", "--help")):
        return p.parse_args(argv)
    # No subcommand: `prepare` with these options, then `device` where there is a GPU.
    args = p.parse_args(["prepare", *argv])
    args.command = None
    return args


def main() -> None:
    args = _arguments_of(sys.argv[1:])
    handlers = {"prepare": _prepare, "device": _device, None: _default,
                "table": lambda a: _summary(Path(a.dir)), "render": _render, "ptx": _ptx}
    handlers[args.command](args)


if __name__ == "__main__":
    main()
