"""`bench_gpu.py ptx`: `hexplore run --device cuda` (LLVM's PTX through pycuda) on the PolyBench
kernels at MINI, on the GPU machine, with hexplore's dependencies installed from .whl/ (wheels.sh,
session.sh ptx). Writes ptx.json and ptx.md into OUT."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
POLYBENCH = ROOT / "tests" / "polybench"


def run_one(kernel: str, timeout: float) -> dict[str, object]:
    """`hexplore run --device cuda --json` of one kernel at MINI."""
    cmd = [sys.executable, "-m", "tui.cli", "run", str(POLYBENCH / kernel / f"{kernel}.c"),
           "--function", "kernel_" + kernel.replace("-", "_"), "--device", "cuda",
           "-I", str(POLYBENCH / "utilities"), "-DMINI_DATASET", "--json"]
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"kernel": kernel, "status": f"> {timeout:g} s"}
    wall = round(time.monotonic() - t0, 1)
    try:
        out = json.loads(p.stdout)
    except ValueError:
        return {"kernel": kernel, "status": f"rc {p.returncode}", "wall": wall,
                "stderr": (p.stderr or p.stdout)[-600:]}
    return {"kernel": kernel, "wall": wall, **out}


def markdown(rows: list[dict[str, object]]) -> str:
    head = "| kernel | status | match | max abs error | kernels | device s | message |"
    lines = [head, "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['kernel']} | {r.get('status')} | {r.get('match', '—')} | "
                     f"{r.get('max_abs_error', '—')} | {r.get('kernels', '—')} | "
                     f"{r.get('optimized_s', '—')} | "
                     f"{str(r.get('message') or r.get('stderr') or '')[:160]} |")
    ok = sum(1 for r in rows if r.get("match") is True)
    return "\n".join([*lines, "", f"{ok}/{len(rows)} match."]) + "\n"


def main(out: Path, kernels: list[str], jobs: int, timeout: float) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(jobs) as pool:
        rows = list(pool.map(lambda k: run_one(k, timeout), kernels))
    (out / "ptx.json").write_text(json.dumps(rows, indent=1))
    text = markdown(rows)
    (out / "ptx.md").write_text(text)
    print(text)
