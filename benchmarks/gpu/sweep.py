"""Mapping choices for a few kernels, timed on the GPU (issue 27): gemm's tile and block sizes
against cuBLAS (its kernel within 2x of cuBLAS FP64), and the options of the kernels that lost
to PPCG (adi, jacobi-2d, seidel-2d). `prepare` (here) compiles PolyBench LARGE once per choice
into `gpu_bundle/sweep/<kernel>.<name>/`, with make rules in `gpu_bundle/sweep.mk` that reuse the
bundle's harness; `benchmarks/gpu/sweep.sh` (there) builds and times each: PolyBench's timer end
to end and the launches alone (CUDA events, `hx_ctx.cu`).

    python benchmarks/gpu/sweep.py prepare [gpu_bundle]
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _sizes(tile: str, block: str) -> list[str]:
    return ["--sizes", f"{{kernel[0]->tile[{tile}];kernel[0]->block[{block}]}}"]


# kernel -> choice name -> extra `hexplore compile` arguments ([] is the default mapping);
# gemm's block sizes are PPCG's order (x, the innermost member `j`, first)
CHOICES: dict[str, dict[str, list[str]]] = {
    "gemm": {
        "default": [],  # 32x64x16 on 16x8: 16 sums per thread, two shared copies (cp.async)
        "single_buffer": ["--no-double-buffer"],  # one shared copy per array, two barriers per k-tile
        "t32x32x32_b32x16": _sizes("32,32,32", "32,16"),  # PPCG's default
        "t64x64x16_b16x16": _sizes("64,64,16", "16,16"),
        # more sums per thread (u<N>_: gpu_mapping.MAX_UNROLL = N, so that all of them unroll)
        "u32_t64x64x16_b8x16": _sizes("64,64,16", "8,16"),  # 4 rows x 8 columns
        "u32_t64x128x8_b16x16": _sizes("64,128,8", "16,16"),
        "u32_t128x64x8_b16x16": _sizes("128,64,8", "16,16"),
        "u64_t64x64x8_b8x8": _sizes("64,64,8", "8,8"),  # 8x8 per thread, 64 threads
        "u64_t64x128x8_b16x8": _sizes("64,128,8", "16,8"),
        "u64_t128x128x8_b16x16": _sizes("128,128,8", "16,16"),
        "u64_t128x64x16_b8x16": _sizes("128,64,16", "8,16"),
    },
    "2mm": {"default": [], "single_buffer": ["--no-double-buffer"]},
    "symm": {"default": [], "single_buffer": ["--no-double-buffer"]},
    "adi": {"default": [], "tile16": ["--tile-size", "16"], "tile64": ["--tile-size", "64"]},
    "jacobi-2d": {"default": [], "tile16": ["--tile-size", "16"], "tile64": ["--tile-size", "64"]},
    "seidel-2d": {"default": [], "tile16": ["--tile-size", "16"]},
    "correlation": {"default": []},
    "heat-3d": {"default": [], "tile16": ["--tile-size", "16"]},
}

# `hexplore compile` with gpu_mapping.MAX_UNROLL set first (argv[1]) and isl's budget 20x (64 points
# per thread exceed 4M operations: ~6 s), the rest its arguments
COMPILE_WITH_UNROLL = """
import sys, islpy as isl, core_compiler.transform.gpu_mapping as g
g.MAX_UNROLL = int(sys.argv[1])
limit = isl.Context.set_max_operations
isl.Context.set_max_operations = lambda self, n: limit(self, min(20 * n, 10**9))
from tui.cli import main
sys.exit(main(sys.argv[2:]))
"""


def _compile(kernel: str, name: str, extra: list[str], dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    function = "kernel_" + kernel.replace("-", "_")
    src = ROOT / "tests/polybench" / kernel / f"{kernel}.c"
    args = ["compile", str(src), "--target", "cuda", "--function", function,
            "-I", str(ROOT / "tests/polybench/utilities"), "-D", "LARGE_DATASET", *extra, "-o", str(dest)]
    unroll = name.split("_")[0][1:] if name.startswith("u") and name.split("_")[0][1:].isdigit() else None
    cmd = ([str(ROOT / ".venv/bin/python"), "-c", COMPILE_WITH_UNROLL, unroll, *args] if unroll
           else [str(ROOT / ".venv/bin/hexplore"), *args])
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT)
    print(kernel, name, "rc", proc.returncode, *[ln[-160:] for ln in proc.stderr.splitlines() if "offloaded" in ln][:1])


def _rules(kernel: str, name: str, dest: Path) -> list[str]:
    function = "kernel_" + kernel.replace("-", "_")
    cus = sorted(p.name for p in dest.glob("*.cu"))
    tag = f"{kernel}.{name}"
    objs = [f"$(B)/obj/sweep/{tag}/{cu[:-3]}.o" for cu in cus]
    rules = []
    for cu, obj in zip(cus, objs, strict=True):
        rules += [f"{obj}: sweep/{tag}/{cu}", "\t@mkdir -p $(@D)",
                  f"\t$(NVCC) $(NVFLAGS) -Isweep/{tag} -D{function}=hx_{function} -c $< -o $@", ""]
    main = f"$(B)/obj/new/LARGE/{kernel}/harness.o"
    rules += [f"$(B)/bin/sweep.{tag}: {main} {' '.join(objs)} $(B)/obj/polybench.o $(B)/obj/hx_ctx.o",
              "\t@mkdir -p $(@D)", "\t$(NVCC) -arch=$(ARCH) -o $@ $^ $(LDWRAP) -lm", ""]
    return rules


def prepare(bundle: Path) -> None:
    rules, bins = [], []
    for kernel, choices in CHOICES.items():
        for name, extra in choices.items():
            dest = bundle / "sweep" / f"{kernel}.{name}"
            _compile(kernel, name, extra, dest)
            rules += _rules(kernel, name, dest)
            bins.append(f"$(B)/bin/sweep.{kernel}.{name}")
    (bundle / "sweep.mk").write_text(f"include Makefile\n\nsweep: {' '.join(bins)}\n\n" + "\n".join(rules))


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] != "prepare":
        sys.exit(__doc__)
    prepare(Path(sys.argv[2] if len(sys.argv) > 2 else "gpu_bundle"))
