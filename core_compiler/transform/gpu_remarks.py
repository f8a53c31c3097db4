"""What the GPU mapping decided, said twice: as remarks (one per kernel: offloaded how, or run on
one thread; one per reduction made atomic) and as the `gpu-mapping` pass's text."""

from __future__ import annotations

from core_compiler.remarks import Remark, missed, passed
from core_compiler.transform.gpu_mapping import GpuProgram, Kernel


def memory_summary(k: Kernel) -> str:
    """``; A, B in shared memory (32x32, 32x32 tiles); C in registers`` — what PPCG's promotion chose."""
    shared = [p for p in k.promotions if p.place == "shared"]
    regs = [p for p in k.promotions if p.place == "register"]
    parts = []
    if shared:
        sizes = ", ".join("x".join(map(str, p.size)) for p in shared)
        twice = ", two of each: the next tile is copied while this one computes" if k.buffers > 1 else ""
        parts.append(f"{', '.join(p.array for p in shared)} in shared memory ({sizes} tiles{twice})")
    if regs:
        parts.append(f"{', '.join(p.array for p in regs)} in registers")
    return "".join(f"; {p}" for p in parts)


def mapping_remarks(gpu: GpuProgram) -> list[Remark]:
    scop = gpu.scop
    out = []
    for k in gpu.kernels:
        if k.parallel:
            block = "x".join(map(str, reversed(k.block)))
            out.append(
                passed(
                    "gpu-mapping",
                    "Offloaded",
                    f"offloaded to the GPU as {k.name}: statements {', '.join(k.statements)}, "
                    f"{len(k.tile)} block dimension(s) of {'x'.join(map(str, k.tile))} tiles, "
                    f"block {block} threads" + (f" ({k.shape.why})" if k.shape.why else "") + memory_summary(k),
                    scop.range,
                    scop.function,
                    kernel=k.name,
                    block=list(reversed(k.block)),
                    tile=list(k.tile),
                    host_loops=len(k.host_params),
                    shared=[p.array for p in k.promotions if p.place == "shared"],
                    registers=[p.array for p in k.promotions if p.place == "register"],
                    global_memory={g.array: g.reason for g in k.global_accesses},
                )
            )
            for name in sorted(k.atomic):
                stmt = scop.statement(name)
                out.append(
                    passed(
                        "gpu-mapping",
                        "ReductionParallelized",
                        f"the reduction into `{stmt.writes[0].array}` runs in parallel in {k.name}: "
                        "threads add their values with atomic additions",
                        stmt.range,
                        scop.function,
                        kernel=k.name,
                        statement=name,
                        method="atomics",
                    )
                )
        else:
            out.append(
                missed(
                    "gpu-mapping",
                    "SequentialKernel",
                    f"{k.name} runs statements {', '.join(k.statements)} on one GPU thread: no loop "
                    "around them is parallel",
                    scop.range,
                    scop.function,
                    kernel=k.name,
                )
            )
    return out


def render_mapping(gpu: GpuProgram) -> str:
    """One paragraph per kernel: what runs where, how it is tiled and where its arrays live."""
    lines = []
    for k in gpu.kernels:
        if not k.parallel:
            lines.append(f"{k.name}: {', '.join(k.statements)} on one GPU thread (no parallel loop)")
            continue
        lines.append(f"{k.name}: {', '.join(k.statements)}")
        lines.append(f"  tiles {'x'.join(map(str, k.shape.tile))}, blocks over {k.n_block_dims} dim(s), block {'x'.join(map(str, reversed(k.block)))} threads")
        lines.append(f"  host loops: {len(k.host_params)}; mapped members: {'; '.join(k.band_members)}")
        for p in k.promotions:
            lines.append(f"  {p.array}: {p.place} {'x'.join(map(str, p.size))} ({p.reason})")
        for g in k.global_accesses:
            lines.append(f"  {g.array}: global ({g.reason})")
        for s in sorted(k.atomic):
            lines.append(f"  {s}: reduction with atomic additions")
    return "\n".join(lines) + "\n"
