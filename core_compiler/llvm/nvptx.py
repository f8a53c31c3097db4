"""GPU kernels as LLVM IR for ``nvptx64-nvidia-cuda``, and PTX for ``sm_90`` from LLVM's NVPTX
backend (the Polly-ACC route), validated by ``ptxas`` in the tests.

Each `Kernel` of a `GpuProgram` becomes one kernel function with the parameters of
`codegen.opencl.kernel_args` (arrays as ``noalias`` pointers, then ``int`` parameters, read-only
scalars, host-loop values ``h*`` and block offsets ``o*``), marked as a kernel both by the
``ptx_kernel`` calling convention and by ``!nvvm.annotations``. Block and thread ids are mapped
exactly as `codegen/cuda.py` does: ``b<d> = blockIdx.<axis> + o<d>``, ``t<d> = threadIdx.<axis>``
with ``axis = "xyz"[n_thread_dims - 1 - d]``. Index arithmetic is ``i32``, the CUDA text's ``int``.

User nodes are dispatched by name (`ast_lower.handler_for`): statements ``S0(i…, T…, X…)``,
copies to and from shared memory and registers (``load_*``/``store_*``) and barriers (``sync*``)
are `kernel_body.KernelBody`'s; more kinds (GPU reductions: `kernel_body.atomic_add`) are passed
to `lower_gpu` as ``users``. Statement instances carry their source line (`debug_info.py`), so the
PTX has ``.file``/``.loc`` directives and `PtxModule.source_map` says which lines are whose.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import llvmlite.binding as llvm
import llvmlite.ir as ir

from core_compiler.codegen.opencl import KernelArgSpec, kernel_args
from core_compiler.llvm import c_types as ct
from core_compiler.llvm.ast_lower import AstLowering, UserHandler
from core_compiler.llvm.debug_info import DebugInfo
from core_compiler.llvm.kernel_body import KernelBody, local_copies
from core_compiler.llvm.math_calls import NVPTX_MATH, declare
from core_compiler.llvm.statements import Scope, StatementLowering
from core_compiler.llvm.target import (
    DEFAULT_SM,
    NVPTX_TRIPLE,
    nvptx_target_machine,
    optimize,
    parse,
)
from core_compiler.scop.affine import isl_name
from core_compiler.source_map import SourceMap, StatementLocation, ir_source_map, ptx_source_map
from core_compiler.transform.gpu_mapping import GpuProgram, Kernel

I32 = ir.IntType(32)
PTR = ir.PointerType()
_AXES = "xyz"
LIBDEVICE_CANDIDATES = ("nvvm/libdevice/libdevice.10.bc",)


@dataclass(frozen=True)
class PtxModule:
    ir: str  # LLVM IR as lowered, before optimization
    ptx: str
    kernels: tuple[str, ...]
    sm: str
    locations: tuple[StatementLocation, ...] = ()  # the statements' debug locations

    @property
    def ir_source_map(self) -> SourceMap:
        return ir_source_map(self.ir, self.locations)

    @property
    def source_map(self) -> SourceMap:
        """The lines of `ptx` under a statement's ``.loc``."""
        return ptx_source_map(self.ptx, self.locations)


# ------------------------------------------------------------------------------- kernels


def lower_gpu(gpu: GpuProgram, sm: str = DEFAULT_SM, users: Mapping[str, UserHandler] | None = None) -> PtxModule:
    """Every kernel of `gpu` in one module, optimized at O3 and emitted as PTX for `sm`."""
    module = ir.Module(name=gpu.scop.name)
    module.triple = NVPTX_TRIPLE
    stmts = StatementLowering(gpu.scop, NVPTX_MATH, I32)
    debug = DebugInfo(module, gpu.scop, nvptx=True)
    for k in gpu.kernels:
        fn = lower_kernel(module, stmts, k, kernel_args(gpu, k), users or {}, debug)
        module.add_named_metadata("nvvm.annotations", [fn, "kernel", ir.Constant(I32, 1)])
    text = str(module)
    return PtxModule(text, emit_ptx(text, sm), tuple(k.name for k in gpu.kernels), sm, tuple(debug.locations))


def lower_kernel(module: ir.Module, stmts: StatementLowering, k: Kernel, specs: tuple[KernelArgSpec, ...],
                 users: Mapping[str, UserHandler], debug: DebugInfo | None = None) -> ir.Function:  # fmt: skip
    """One kernel; user nodes go to `KernelBody`'s handlers, then to `users` (which win)."""
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [_param_type(s) for s in specs]), name=k.name)
    fn.calling_convention = "ptx_kernel"
    for arg, spec in zip(fn.args, specs, strict=True):
        arg.name = spec.name
        if spec.kind == "array":
            arg.add_attribute("noalias")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    scope = _kernel_scope(b, k, specs, list(fn.args))
    body = KernelBody(k, local_copies(b, k))
    table = {**body.handlers(), **users}
    AstLowering(b, stmts, table, {}, debug).lower(k.ast, scope)
    b.ret_void()
    return fn


def _param_type(spec: KernelArgSpec) -> ir.Type:
    if spec.kind == "array":
        return PTR
    return ct.llvm_type(spec.ctype) if spec.kind == "scalar" else I32


def _kernel_scope(b: ir.IRBuilder, k: Kernel, specs: tuple[KernelArgSpec, ...], args: list[ir.Value]) -> Scope:
    ints: dict[str, ir.Value] = {}
    scalars: dict[str, ct.CValue] = {}
    arrays: dict[str, ir.Value] = {}
    for spec, v in zip(specs, args, strict=True):
        if spec.kind == "array":
            arrays[spec.name] = v
        elif spec.kind == "scalar":
            scalars[spec.name] = ct.CValue(v, ct.canonical(spec.ctype))
        else:
            ints[spec.name] = ints[isl_name(spec.name)] = v
    n_t, nm = k.n_thread_dims, k.shape.names
    for d in range(k.n_block_dims):
        ints[nm("b", d)] = b.add(_sreg(b, "ctaid", _AXES[n_t - 1 - d]), ints[nm("o", d)], name=f"b{d}")
    for d in range(n_t):
        ints[nm("t", d)] = _sreg(b, "tid", _AXES[n_t - 1 - d])
    return Scope(ints, scalars, arrays)


def _sreg(b: ir.IRBuilder, reg: str, axis: str) -> ir.Value:
    fn = declare(b.module, f"llvm.nvvm.read.ptx.sreg.{reg}.{axis}", I32, [])
    return b.call(fn, [], name=f"{reg}.{axis}")


# ---------------------------------------------------------------------------------- PTX


def emit_ptx(text: str, sm: str = DEFAULT_SM) -> str:
    """PTX for `sm` from LLVM IR text: libdevice linked in when used, O3, the NVPTX printer."""
    machine = nvptx_target_machine(sm)
    module = parse(text, machine)
    kernels = {f.name for f in module.functions if not f.is_declaration}
    if any(f.name.startswith("__nv_") for f in module.functions if f.is_declaration):
        module.link_in(_libdevice(machine))
        for f in module.functions:  # what the kernels do not call is dropped by O3
            if not f.is_declaration and f.name not in kernels:
                f.linkage = llvm.Linkage.internal
    optimize(module, machine)
    return machine.emit_assembly(module)


def libdevice_path() -> Path | None:
    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    for root in filter(None, roots):
        for rel in LIBDEVICE_CANDIDATES:
            if (Path(root) / rel).exists():
                return Path(root) / rel
    return None


def _libdevice(machine: llvm.TargetMachine) -> llvm.ModuleRef:
    path = libdevice_path()
    if path is None:
        raise FileNotFoundError("libdevice.10.bc not found (set CUDA_HOME): needed for math calls in PTX")
    lib = llvm.parse_bitcode(path.read_bytes())
    lib.triple = machine.triple
    lib.data_layout = str(machine.target_data)
    return lib


@dataclass(frozen=True)
class PtxasResult:
    ok: bool
    output: str


def ptxas_path() -> str | None:
    return shutil.which("ptxas") or (shutil.which("ptxas", path="/usr/local/cuda/bin"))


def run_ptxas(ptx: str, sm: str = DEFAULT_SM) -> PtxasResult:
    """Assemble `ptx` with ``ptxas -arch=<sm>``: the check that the PTX is valid for the GPU."""
    exe = ptxas_path()
    if exe is None:
        raise FileNotFoundError("ptxas not found")
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "kernels.ptx"
        src.write_text(ptx)
        proc = subprocess.run([exe, f"-arch={sm}", str(src), "-o", str(Path(tmp) / "kernels.cubin")],
                              capture_output=True, text=True, timeout=120)  # fmt: skip
    return PtxasResult(proc.returncode == 0, proc.stdout + proc.stderr)
