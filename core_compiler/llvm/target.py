"""LLVM targets: the host CPU (JIT, O3, the host's CPU name and features so that loops vectorize)
and NVPTX (PTX text for ``sm_90``), and the O3 pipeline both go through.

llvmlite initializes LLVM itself since 0.45; only the targets and printers are registered here,
once per process.
"""

from __future__ import annotations

import functools

import llvmlite.binding as llvm

NVPTX_TRIPLE = "nvptx64-nvidia-cuda"
NVPTX_DATALAYOUT = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
DEFAULT_SM = "sm_90"
PTX_FEATURES = "+ptx80"  # PTX ISA 8.0: the first with sm_90


@functools.cache
def _init() -> None:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    # No loop versions that assume a symbolic stride is 1: ``table[k + 1][j]`` strides by ``n``,
    # the row length of a VLA, which is never 1 at sizes worth running; the versioned loop's
    # guard fails and the loop runs unvectorized and uninterleaved instead (nussinov: 1.7x slower).
    llvm.set_option("", "-enable-mem-access-versioning=0")


def host_target_machine() -> llvm.TargetMachine:
    """The JIT's machine: host triple, CPU (``znver4``, …) and features, O3.

    A new one per call: an MCJIT engine takes ownership of its machine and frees it with itself.
    """
    _init()
    target = llvm.Target.from_default_triple()
    features = llvm.get_host_cpu_features().flatten()
    return target.create_target_machine(
        cpu=llvm.get_host_cpu_name(), features=features, opt=3, codemodel="jitdefault", jit=True
    )


@functools.cache
def nvptx_target_machine(sm: str = DEFAULT_SM) -> llvm.TargetMachine:
    _init()
    target = llvm.Target.from_triple(NVPTX_TRIPLE)
    return target.create_target_machine(cpu=sm, features=PTX_FEATURES, opt=3)


def optimize(module: llvm.ModuleRef, machine: llvm.TargetMachine, light: bool = False) -> None:
    """Run the O3 pipeline with loop and SLP vectorization on `module`, in place; `light`: O1
    without unrolling or vectorization, for a module whose O3 takes minutes (a register-tiled
    kernel translated for the CPU: 27,000 lines of IR, 210 s at O3, 16 s at O1 under load)."""
    pto = llvm.create_pipeline_tuning_options(speed_level=1 if light else 3)
    pto.loop_vectorization = not light
    pto.slp_vectorization = not light
    pto.loop_unrolling = not light
    builder = llvm.create_pass_builder(machine, pto)
    builder.getModulePassManager().run(module, builder)


def parse(text: str, machine: llvm.TargetMachine) -> llvm.ModuleRef:
    """Parse and verify IR text, with the machine's triple and data layout."""
    _init()
    module = llvm.parse_assembly(text)
    module.triple = machine.triple
    module.data_layout = str(machine.target_data)
    module.verify()
    return module
