"""The CPU schedule: the isl schedule's bands tiled for locality, parallel loops marked.

Every permutable band with at least two members is tiled (``tile_size`` per member); a band with
one member is left as it is. The outermost band of each subtree whose first member is coincident
gets a ``parallel`` mark, so a code generator can run that loop across threads (an OpenMP
``parallel for`` in C, ``GOMP_parallel`` in LLVM IR). Inner parallel loops are not marked: one level
of threads is what OpenMP runs well.

The AST is generated from the marked tree: a ``parallel`` mark node's child is the loop (a ``for``
node) of that band's first member, or what isl made of it (an ``if``/block when the loop was
split or has a single iteration), which generators then run sequentially.
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from core_compiler.scop.model import Scop

PARALLEL_MARK = "parallel"


@dataclass(frozen=True)
class CpuOptions:
    tile_size: int = 32  # 0 or 1: no tiling
    parallel: bool = True  # mark parallel loops


@dataclass(frozen=True, eq=False)
class CpuProgram:
    scop: Scop
    schedule: isl.Schedule  # tiled and marked
    ast: isl.AstNode


def cpu_program(scop: Scop, schedule: isl.Schedule, options: CpuOptions = CpuOptions()) -> CpuProgram:
    root = schedule.get_root()
    if root.n_children():
        root = _transform(root.child(0), options, inside_parallel=False).get_schedule().get_root()
    tiled = root.get_schedule()
    ast = isl.AstBuild.from_context(scop.context.params()).node_from_schedule(tiled)
    return CpuProgram(scop, tiled, ast)


def _transform(node: isl.ScheduleNode, options: CpuOptions, inside_parallel: bool) -> isl.ScheduleNode:
    """Tile and mark the subtree at `node`; returns the node at the same position."""
    if node.get_type() == isl.schedule_node_type.band and node.band_n_member() > 0:
        n = node.band_n_member()
        parallel = options.parallel and not inside_parallel and bool(node.band_member_get_coincident(0))
        if options.tile_size > 1 and n >= 2 and node.band_get_permutable():
            sizes = isl.MultiVal.zero(node.band_get_space())
            for k in range(n):
                sizes = sizes.set_val(k, isl.Val.int_from_si(node.get_ctx(), options.tile_size))
            points = node.band_tile(sizes).child(0)  # the tile band, then the point band
            node = _transform_children(points, options, True).parent()
        else:
            node = _transform_children(node, options, inside_parallel or parallel)
        if parallel:
            node = node.insert_mark(isl.Id(PARALLEL_MARK, context=node.get_ctx()))
        return node
    return _transform_children(node, options, inside_parallel)


def _transform_children(node: isl.ScheduleNode, options: CpuOptions, inside_parallel: bool) -> isl.ScheduleNode:
    for k in range(node.n_children()):
        node = _transform(node.child(k), options, inside_parallel).parent()
    return node
