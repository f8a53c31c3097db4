"""Tile and block sizes for gemm's kernel, timed on the GPU against cuBLAS (issue 27: gemm's kernel
within 2x of cuBLAS FP64). `prepare` (here) compiles PolyBench gemm at LARGE once per choice of
PPCG-style `--sizes` into `gpu_bundle/sweep/<name>/` with make rules in `gpu_bundle/sweep.mk` that
reuse the bundle's harness; `benchmarks/gpu/sweep.sh` (there) builds and times each, kernel only
(CUDA events around each launch, `hx_ctx.cu`).

    python benchmarks/gpu/sweep.py prepare [gpu_bundle]
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHOICES = {  # name -> (tile, block): tile per band member i, j, k; block x, y as PPCG writes it
    "t32x32x32_b32x16": ("32,32,32", "32,16"),  # the default
    "t64x64x16_b16x16": ("64,64,16", "16,16"),
    "t64x64x32_b16x16": ("64,64,32", "16,16"),
    "t64x128x16_b32x16": ("64,128,16", "32,16"),
    "t128x64x16_b16x16": ("128,64,16", "16,16"),
    "t32x64x32_b32x8": ("32,64,32", "32,8"),
}


def prepare(bundle: Path) -> None:
    rules = []
    for name, (tile, block) in CHOICES.items():
        dest = bundle / "sweep" / name
        dest.mkdir(parents=True, exist_ok=True)
        sizes = f"{{kernel[0]->tile[{tile}];kernel[0]->block[{block}]}}"
        cmd = [str(ROOT / ".venv/bin/hexplore"), "compile", str(ROOT / "tests/polybench/gemm/gemm.c"), "--target", "cuda",
               "--function", "kernel_gemm", "-I", str(ROOT / "tests/polybench/utilities"), "-D", "LARGE_DATASET",
               "--sizes", sizes, "-o", str(dest)]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        print(name, "rc", proc.returncode, *[line for line in proc.stderr.splitlines() if "offloaded" in line][:1])
        cus = sorted(p.name for p in dest.glob("*.cu"))
        objs = [f"$(B)/obj/sweep/{name}/{cu[:-3]}.o" for cu in cus]
        for cu, obj in zip(cus, objs, strict=True):
            rules += [f"{obj}: sweep/{name}/{cu}", "\t@mkdir -p $(@D)",
                      f"\t$(NVCC) $(NVFLAGS) -Isweep/{name} -Dkernel_gemm=hx_kernel_gemm -c $< -o $@", ""]
        main = "$(B)/obj/new/LARGE/gemm/harness.o"
        rules += [f"$(B)/bin/sweep.{name}: {main} {' '.join(objs)} $(B)/obj/polybench.o $(B)/obj/hx_ctx.o",
                  "\t@mkdir -p $(@D)", "\t$(NVCC) -arch=$(ARCH) -o $@ $^ $(LDWRAP) -lm", ""]
    names = " ".join(f"$(B)/bin/sweep.{n}" for n in CHOICES)
    (bundle / "sweep.mk").write_text(f"include Makefile\n\nsweep: {names}\n\n" + "\n".join(rules))


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] != "prepare":
        sys.exit(__doc__)
    prepare(Path(sys.argv[2] if len(sys.argv) > 2 else "gpu_bundle"))
