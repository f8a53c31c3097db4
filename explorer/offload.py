"""The back end's offload decision for each modeled loop nest, as the editor shows it: the remarks
`hexplore compile` gives (`core_compiler/compile.py`), moved onto the nest's outer loop header.

Per nest, as `compile` decides: the work estimate first (``KeptOnCpu`` / ``TooLittleWork`` when
too little, with the numbers); otherwise the GPU mapping and its cost against one CPU core
(``KeptOnCpu`` with both times, ``OffloadProfitable``, or ``RuntimeOffloadCheck`` when the sizes
are known only at run time), and for a nest that goes to the GPU what each kernel is
(``Offloaded``: "offloaded to the GPU as kernel0: …", ``SequentialKernel``,
``ReductionParallelized``). For the CUDA target, a nest the code around it reads from stays on
the CPU (``KeptOnCpuForCaller``).

The GPU mapping costs tenths of a second to seconds per nest and reads the analysis' isl
objects: the server computes decisions after it published the analysis' diagnostics, on its
request thread (`lsp/server.py`). Example::

    remarks = nest_decisions(fa, sa, lambda: gpu_program(sa), text, "cuda")
    [r.name for r in remarks]    # ["RuntimeOffloadCheck", "Offloaded"]
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from core_compiler.analysis import FunctionAnalysis, ScopAnalysis
from core_compiler.codegen.host_calls import split_problem, takes_whole
from core_compiler.remarks import Remark
from core_compiler.transform.gpu_cost import offload_decision
from core_compiler.transform.gpu_mapping import GpuProgram
from core_compiler.transform.gpu_remarks import mapping_remarks
from core_compiler.transform.profitability import decide

# The passes whose remarks are decisions about a whole nest (the editor shows them as
# Information at most: a decision, not a problem in the code).
DECISION_PASSES = ("profitability", "gpu-mapping", "codegen-cuda")


def nest_decisions(
    fa: FunctionAnalysis,
    sa: ScopAnalysis,
    gpu: Callable[[], GpuProgram | None],
    text: str | None = None,
    target: str = "cuda",
) -> tuple[Remark, ...]:
    """The decision remarks of the nest `sa` of `fa`, on its outer loop's header. `gpu` maps the
    nest when the decision needs it (None: the mapping failed, and nothing is said); `text` is
    the whole file's, for the CUDA target's check of the code around the nest."""
    if target == "cuda" and text is not None and not takes_whole(fa):
        problem = split_problem(fa, sa, fa.function.range.file, text)
        if problem is not None:  # compile keeps it on the CPU before weighing anything
            return _on_outer_loop(sa, [problem])
    worth = decide(sa.scop)
    if worth.decision == "cpu":
        return _on_outer_loop(sa, [worth.remark])
    program = gpu()
    if program is None:
        return ()
    worth = offload_decision(program)
    out = [worth.remark]
    if worth.decision != "cpu":
        out += mapping_remarks(program)
    return _on_outer_loop(sa, out)


def _on_outer_loop(sa: ScopAnalysis, remarks: list[Remark]) -> tuple[Remark, ...]:
    loops = sa.scop.loops
    if not loops:
        return tuple(remarks)
    header = loops[0].header_range
    return tuple(replace(r, range=header) for r in remarks)


def shifted(remarks: tuple[Remark, ...], lines: int) -> tuple[Remark, ...]:
    """`remarks` `lines` lines further down (a function that moved since they were made)."""
    if not lines:
        return remarks
    return tuple(replace(r, range=replace(r.range, line=r.range.line + lines, end_line=r.range.end_line + lines)) for r in remarks)
