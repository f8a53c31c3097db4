"""Loop metadata for independent loops: ``llvm.loop.parallel_accesses``.

When isl shows that a loop carries no dependence (`core_compiler.transform.cpu_schedule.INDEPENDENT`), every load and
store in its body joins the function's *access group* and the loop's latch branch gets
``!llvm.loop !{self, !{"llvm.loop.parallel_accesses", group}}``. LLVM's loop vectorizer then
vectorizes without the run-time overlap checks it would otherwise insert, checks that fail for
``A[i][j] -= A[i][k] * A[k][j]`` (one array read and written in the loop) and send every
iteration to the scalar loop.

Only memory accesses are covered: a scalar kept in a stack slot (`llvm/cpu.py`'s loop-local
scalars in source order) is left out of the group, since isl modelled it as an expanded array.
Access groups and loop ids must be ``distinct`` nodes and a loop id refers to itself, which
llvmlite's `Module.add_metadata` (it merges equal nodes) does not make; `_Distinct` does.
"""

from __future__ import annotations

import llvmlite.ir as ir


class _Distinct(ir.values.MDValue):  # type: ignore[misc]
    """A ``distinct !{...}`` node, compared by identity (it may contain itself)."""

    def __init__(self, module: ir.Module, operands: tuple[ir.Value, ...] = ()) -> None:
        super().__init__(module, operands, name=str(len(module.metadata)))

    def descr(self, buf: list[str]) -> None:
        super().descr(buf)
        buf[-2] = "distinct " + buf[-2]

    def __eq__(self, other: object) -> bool:
        return self is other

    def __hash__(self) -> int:
        return id(self)


def access_group(module: ir.Module) -> ir.values.MDValue:
    """The module's one access group (created on first use)."""
    group = getattr(module, "_hx_access_group", None)
    if group is None:
        group = _Distinct(module)
        module._hx_access_group = group  # type: ignore[attr-defined]
    return group


def mark_loop(latch: ir.Instruction, body: list[ir.Block], independent: bool, interleave: int = 0) -> None:
    """Loop metadata on `latch` (the back edge): with `independent`, the loop is free of carried
    dependences among the memory accesses in `body`; with `interleave`, the vectorizer runs that
    many iterations side by side (independent partial results of a reduction in registers)."""
    module = latch.module
    hints = []
    if independent:
        group = access_group(module)
        for block in body:
            for instr in block.instructions:
                if isinstance(instr, ir.LoadInstr | ir.StoreInstr) and not _on_stack(instr):
                    instr.set_metadata("llvm.access.group", group)
        hints.append(module.add_metadata([ir.MetaDataString(module, "llvm.loop.parallel_accesses"), group]))
    if interleave > 1:
        count = ir.Constant(ir.IntType(32), interleave)
        hints.append(module.add_metadata([ir.MetaDataString(module, "llvm.loop.interleave.count"), count]))
    if hints:
        loop = _Distinct(module)
        loop.operands = (loop, *hints)
        latch.set_metadata("llvm.loop", loop)


def _on_stack(instr: ir.Instruction) -> bool:
    pointer = instr.operands[0] if isinstance(instr, ir.LoadInstr) else instr.operands[1]
    return isinstance(pointer, ir.AllocaInstr)
