"""The GPU cost model's decision per PolyBench kernel at LARGE, next to what the H100 record
measured (`../shared/gpu/H100-2026-11-25.md`: hexplore's CUDA C at commit 539408e, PolyBench's
timer around the call, best of 2; one CPU thread of gcc -O3). Needs no GPU.

For each kernel: the model's estimated GPU time (H100 constants, `core_compiler/transform/
gpu_cost.py`) and one-core CPU time at the LARGE sizes of its header, the decision the profitability
model takes there (``gpu``/``cpu``), the record's times, and whether the decision agrees with
the record (``ok``: offloaded where the record's GPU time beat the CPU's, kept where it lost; ``~``:
within 1.5x of each other in the record, either is fine). The last lines fit the CPU's seconds per
operation to the record (the median of measured time / counted operations).

    python benchmarks/bench_gpu_model.py [--kernels cholesky,gemm] [--json FILE]

The mapping is the current one; the record's times are those of the mapping at 539408e, so a
kernel whose mapping changed since may disagree for that reason (the ``note`` column: ``?``
where it was not timed again). Where the current mapping was timed (on an H200, `H200`), the
verdict uses that time instead.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core_compiler.analysis import analyze_file  # noqa: E402
from core_compiler.frontend import ParseOptions  # noqa: E402
from core_compiler.pipeline import gpu_program  # noqa: E402
from core_compiler.transform.gpu_cost import ONE_CORE, gpu_cost  # noqa: E402
from core_compiler.transform.profitability import decide  # noqa: E402

POLYBENCH = ROOT / "tests" / "polybench"
TIMEOUT = 12.0  # the record's limit: "> 12" rows

# kernel: (gcc -O3 one thread, hexplore CUDA C) seconds at LARGE; None where it did not finish
RECORD: dict[str, tuple[float, float | None]] = {
    "gemm": (0.531, 0.0081), "2mm": (2.946, 0.2226), "3mm": (3.498, 0.2094), "atax": (0.010, 0.0094),
    "bicg": (0.017, 0.0077), "mvt": (0.031, 0.0073), "gemver": (0.037, 0.0130), "gesummv": (0.008, 0.0088),
    "syrk": (0.840, 0.0076), "syr2k": (6.242, 0.0110), "symm": (5.334, None), "trmm": (2.492, 0.0284),
    "doitgen": (0.762, 0.2710), "correlation": (8.671, 0.0244), "covariance": (10.910, 0.0244),
    "durbin": (0.003, 0.0741), "trisolv": (0.008, 0.0248), "gramschmidt": (9.397, 0.2964),
    "deriche": (0.467, 2.1001), "adi": (15.155, 1.066), "fdtd-2d": (2.006, 0.294), "jacobi-1d": (0.001, 0.0059),
    "jacobi-2d": (1.763, 0.0262), "seidel-2d": (22.201, 0.0959), "nussinov": (10.998, 0.691),
    "heat-3d": (1.840, None), "cholesky": (1.2, None), "lu": (5.3, None), "ludcmp": (5.6, None),
    "floyd-warshall": (30.1, None),
}  # fmt: skip
# hexplore's CUDA C of the current mapping (working tree of 2026-11-26, before the cost model's
# run-time check), timed the same way on an NVIDIA H200 (same SMs and clocks as the H100, faster
# HBM): PolyBench's timer (s) and the launches counted (`benchmarks/gpu/hx_ctx.cu`). durbin,
# gramschmidt, deriche and symm did not build then (a CPU-fallback buffer named like a parameter).
H200: dict[str, tuple[float, int]] = {
    "cholesky": (0.0275, 6000), "lu": (0.0269, 5997), "gemm": (0.00482, 1), "2mm": (0.0125, 2),
    "trisolv": (0.0249, 4001), "jacobi-1d": (0.00343, 1000), "fdtd-2d": (0.0177, 1500),
    "nussinov": (0.689, 2499), "adi": (0.986, 2013), "doitgen": (0.255, 42000), "atax": (0.00422, 2),
    "gesummv": (0.00352, 1), "seidel-2d": (0.0879, 7988), "correlation": (0.0284, 12),
    "heat-3d": (0.0736, 1000),
}  # fmt: skip
MAPPING_CHANGED = {"symm", "deriche"}  # since the record, and not timed again
NOTES = {
    "heat-3d": "record: segfault; runs now",
    "symm": "record: > 12 s (one-thread mapping then)",
    "deriche": "record mapping ran scalars' loops on one thread; now parallel",
    "cholesky": "record > 12 s was another mapping; 0.028 s on the H200 now",
    "lu": "record > 12 s was another mapping; 0.027 s on the H200 now",
}


def large_sizes(name: str) -> dict[str, int]:
    """The ``LARGE_DATASET`` macros of the kernel's header, by the lower-case parameter names."""
    text = (POLYBENCH / name / f"{name}.h").read_text()
    block = re.search(r"#\s*ifdef LARGE_DATASET(.*?)#\s*endif", text, re.S)
    assert block, name
    return {m.group(1).lower(): int(m.group(2)) for m in re.finditer(r"#\s*define\s+(\w+)\s+(\d+)", block.group(1))}


def row(name: str) -> dict[str, object]:
    function = "kernel_" + name.replace("-", "_")
    parse = ParseOptions((str(POLYBENCH / "utilities"),), ())
    fa = analyze_file(str(POLYBENCH / name / f"{name}.c"), parse_options=parse, only=function)
    (sa,) = fa.functions[0].scops
    sizes = {p: v for p, v in large_sizes(name).items() if p in sa.scop.params}
    start = time.perf_counter()
    cost = gpu_cost(gpu_program(sa))
    seconds = time.perf_counter() - start
    at = cost.values(sizes)
    decision = decide(sa.scop, values=sizes, cost=cost)
    cpu_rec, gpu_rec = RECORD[name]
    launches = sum(float(k.launches.evaluate(at)) for k in cost.kernels)
    return {
        "kernel": name,
        "sizes": sizes,
        "gpu_model_s": cost.gpu_time().at(at),
        "cpu_model_s": cost.cpu_time().at(at),
        "cpu_ops": float(cost.cpu_ops.evaluate(at)),
        "cpu_bytes": float(cost.copied_in.evaluate(at)),
        "launches": launches,
        "sequential": sum(1 for k in cost.kernels if not k.parallel),
        "decision": "gpu" if decision.decision == "offload" else decision.decision,
        "gpu_record_s": gpu_rec,
        "gpu_h200_s": H200.get(name, (None, 0))[0],
        "launches_h200": H200.get(name, (None, None))[1],
        "cpu_record_s": cpu_rec,
        "model_time_s": seconds,
        "note": NOTES.get(name, ""),
    }


def verdict(r: dict[str, object]) -> str:
    """Against the H200's time of the current mapping where there is one, else the record's."""
    gpu = r["gpu_h200_s"] if r["gpu_h200_s"] is not None else r["gpu_record_s"]
    cpu = r["cpu_record_s"]
    assert isinstance(cpu, float)
    if r["kernel"] in MAPPING_CHANGED and r["gpu_h200_s"] is None:
        return "?"
    if gpu is None:
        return "ok" if r["decision"] == "cpu" or r["kernel"] == "heat-3d" else "WRONG"
    assert isinstance(gpu, float)
    if max(gpu, cpu) / min(gpu, cpu) < 1.5:
        return "~"
    right = "gpu" if gpu < cpu else "cpu"
    return "ok" if r["decision"] == right else "WRONG"


def _s(x: object, none: str = "> 12") -> str:
    if x is None:
        return none
    assert isinstance(x, float)
    return f"{x:.3g}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kernels", help="comma-separated PolyBench names (default: all 30)")
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args()
    names = args.kernels.split(",") if args.kernels else list(RECORD)
    rows = [row(n) for n in names]
    print(
        f"{'kernel':<15}{'launches':>10}{'(H200)':>8}{'seq':>4}{'model GPU':>11}{'model CPU':>11}{'decision':>9}"
        f"{'H200 GPU':>10}{'rec. GPU':>10}{'rec. CPU':>10}{'':>7}  note"
    )
    for r in rows:
        launches, seen = r["launches"], r["launches_h200"]
        assert isinstance(launches, float)
        print(
            f"{r['kernel']:<15}{launches:>10.4g}{seen if seen is not None else '-':>8}{r['sequential']:>4}"
            f"{_s(r['gpu_model_s']):>11}{_s(r['cpu_model_s']):>11}{r['decision']:>9}"
            f"{_s(r['gpu_h200_s'], '-'):>10}{_s(r['gpu_record_s']):>10}{_s(r['cpu_record_s']):>10}{verdict(r):>7}  {r['note']}"
        )
    print("seconds; model GPU: the H100 model; H200 GPU: measured 2026-11-26; rec.: the H100 record")
    cpu = ONE_CORE
    ratios = [(float(r["cpu_record_s"]) - float(r["cpu_bytes"]) / cpu.bytes_s) / float(r["cpu_ops"]) for r in rows]  # type: ignore[arg-type]
    if len(ratios) >= 4:
        q1, median, _ = statistics.quantiles(ratios, n=4)
        print(f"\nrecord CPU seconds per counted operation (streaming taken out): first quartile {q1:.3g}, "
              f"median {median:.3g}, range {min(ratios):.3g}..{max(ratios):.3g}; the model uses {cpu.op_s:.3g}")
    fitted = [(float(r["gpu_model_s"]), float(r["gpu_h200_s"])) for r in rows if r["gpu_h200_s"] is not None]  # type: ignore[arg-type]
    if fitted:
        within = sum(1 for m, t in fitted if max(m, t) / min(m, t) <= 1.5)
        print(f"model GPU time within 1.5x of the H200's for {within} of {len(fitted)} kernels")
    wrong = [r["kernel"] for r in rows if verdict(r) == "WRONG"]
    print(f"decisions against the record: {', '.join(map(str, wrong)) or 'none'}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
