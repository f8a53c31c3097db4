"""The CPU code hexplore runs: loops isl proves independent reach LLVM as such, and the variant
that runs is the fastest of three, each checked against gcc.

- `build_ast` annotates an innermost ``for`` as independent exactly when no dependence is carried
  by it (source-order gemm: the ``j`` loops; lu: the ``k`` loop carries, the innermost ``j``
  update loop does not; seidel: every loop carries); a compute-out leaves loops without facts.
- Independent loops get ``llvm.loop.parallel_accesses`` with every access of their body in the
  access group, and lu's update loop vectorizes without run-time overlap checks.
- `choose_variant` keeps the fastest of the tiled, untiled, tilable and source-order code and says
  why when it is not tiled; `check_llvm_cpu` compares all of them with gcc's build.
- Register tiles (4x4 unroll-and-jam) run their whole strips without tests; when isolating them
  computes out, they are built without; a variant isl cannot build at all is left out.
- The tilable schedule of trisolv tiles ``j`` and ``i`` together and runs the tiles in parallel
  wavefronts, whose tiles start where a loop from a size does; fdtd's time-skewed band keeps
  ``j`` (stride 1) innermost.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import islpy as isl
import numpy as np
import pytest

from core_compiler.llvm.cpu_lowering import lower_cpu, original_ast
from core_compiler.llvm.jit import jit_compile, set_threads
from core_compiler.runtime import cpu_variants as cpu_llvm
from core_compiler.runtime.cpu_variants import (
    TILABLE,
    TILED,
    VARIANTS,
    CpuCase,
    aligned_copy,
    case_variants,
    check_llvm_cpu,
    choose_variant,
    compile_variant,
    prepare,
    run_jit,
)
from core_compiler.runtime.differential import check_c
from core_compiler.runtime.reference import run_reference
from core_compiler.transform import cpu_schedule as cpu
from core_compiler.transform.cpu_schedule import (
    INDEPENDENT,
    CpuOptions,
    ParallelMark,
    _point_order,
    _score,
    build_ast,
    cpu_program,
)
from core_compiler.transform.schedule import compute_schedule
from tests.conftest import KERNELS

_T: Any = isl.ast_node_type


def _case(kernel: str, function: str, sizes: dict[str, int], limits: dict[str, str | None]) -> CpuCase:
    return prepare(str(KERNELS / kernel), function, sizes, limits)


def _loops(node: isl.AstNode, depth: int = 0) -> list[tuple[int, str, bool]]:
    """(depth, iterator, independent) for every ``for`` node, in AST order."""
    kind = node.get_type()
    if kind == _T.for_:
        try:
            independent = node.get_annotation().get_name() == INDEPENDENT
        except isl.Error:
            independent = False
        it = node.for_get_iterator().id_get_id().get_name()
        return [(depth, it, independent), *_loops(node.for_get_body(), depth + 1)]
    if kind == _T.block:
        lst = node.block_get_children()
        return [x for k in range(lst.n_ast_node()) for x in _loops(lst.get_at(k), depth)]
    if kind == _T.if_:
        out = _loops(node.if_get_then_node(), depth)
        return out + (_loops(node.if_get_else_node(), depth) if node.if_has_else_node() else [])
    if kind == _T.mark:
        return _loops(node.mark_get_node(), depth)
    return []


GEMM = ("gemm.c", "kernel_gemm", {"ni": 40, "nj": 50, "nk": 30}, {"ni": "NI", "nj": "NJ", "nk": "NK"})
LU = ("lu.c", "kernel_lu", {"n": 64}, {"n": "N"})
SEIDEL = ("seidel_2d.c", "kernel_seidel_2d", {"tsteps": 3, "n": 20}, {"tsteps": None, "n": "N"})


def _source_order_loops(spec: tuple) -> list[tuple[int, str, bool]]:  # type: ignore[type-arg]
    case = _case(*spec)
    return _loops(original_ast(case.analysis.scop, case.analysis.deps.union()))


def test_gemm_source_order_innermost_loops_are_independent() -> None:
    loops = _source_order_loops(GEMM)
    # for i { for j { C *= beta }; for k { for j { C += ... } } }: only innermost loops are tested
    assert [(d, ind) for d, _, ind in loops] == [(0, False), (1, True), (1, False), (2, True)], loops


def test_lu_outer_loop_carries_and_the_update_loop_does_not() -> None:
    loops = _source_order_loops(LU)
    assert loops[0][:1] == (0,) and not loops[0][2], loops  # k: every step reads what the last wrote
    deepest = max(d for d, _, _ in loops)
    assert deepest == 2 and all(ind for d, _, ind in loops if d == deepest), loops


def test_seidel_carries_on_every_loop() -> None:
    loops = _source_order_loops(SEIDEL)
    assert loops and not any(ind for _, _, ind in loops), loops


def test_independent_loops_reach_llvm_and_vectorize_without_overlap_checks() -> None:
    case = _case(*LU)
    scop = case.analysis.scop
    plain = jit_compile(lower_cpu(scop, original_ast(scop), "lu_plain", parallel=False, source_order=True))
    marked_module = lower_cpu(scop, original_ast(scop, case.analysis.deps.union()), "lu_marked", parallel=False,
                              source_order=True)  # fmt: skip
    assert "llvm.loop.parallel_accesses" in marked_module.ir
    assert "!llvm.access.group" in marked_module.ir
    marked = jit_compile(marked_module)
    assert "x double>" in marked.optimized_ir  # the update loop is vectorized
    assert "found.conflict" not in marked.optimized_ir  # ... with no run-time overlap check
    assert "found.conflict" in plain.optimized_ir  # which LLVM needs without the annotation


@pytest.mark.parametrize("spec", [GEMM, LU], ids=["gemm", "lu"])
def test_choice_is_the_fastest_variant_and_explains_a_fallback(spec: tuple) -> None:  # type: ignore[type-arg]
    case = _case(*spec)
    _, choice, results = choose_variant(case, parallel=False)
    assert set(choice.seconds) == set(case_variants(case)) == set(results)
    assert set(VARIANTS) - set(case_variants(case)) <= {"tilable", "tilable+jam", "distributed", "distributed+jam"}
    assert choice.seconds[choice.chosen] == min(choice.seconds.values())
    if choice.chosen in TILED:
        assert choice.remark is None
    else:
        assert choice.remark is not None and choice.remark.name == "TilingNotFaster"
        assert "hexplore runs" in choice.remark.message and ("ms" in choice.remark.message or "µs" in choice.remark.message)


def test_check_compares_every_variant_with_gcc() -> None:
    kernel, function, _, limits = LU
    result = check_llvm_cpu(str(KERNELS / kernel), function, {"n": 37}, limits, parallel=True, threads=2)
    assert {"tiled", "untiled", "tilable", "source order"} <= set(result.variants)  # lu has a tilable schedule
    assert all(v.removesuffix(", one thread") in VARIANTS for v in result.variants)
    assert result.ok, result.report()


def test_on_two_threads_the_winner_is_also_timed_on_one() -> None:
    """doitgen's parallel ``p`` loop sits inside the sequential ``r`` and ``q`` loops: with 8
    iterations per start of the threads, one thread is faster, and then that is what runs."""
    limits = {"nr": "NR", "nq": "NQ", "np": "NP"}
    sizes = {"nr": 40, "nq": 40, "np": 8}
    result = check_llvm_cpu(str(KERNELS / "doitgen.c"), "kernel_doitgen", sizes, limits, threads=2)
    choice = result.choice
    assert result.ok, result.report()
    alone = [v for v in result.variants if v.endswith(", one thread")]
    assert len(alone) == 1 and alone[0].removesuffix(", one thread") in VARIANTS  # timed and checked
    if choice.one_thread is not None:
        assert choice.runs == f"{choice.chosen}, one thread" and result.optimized is result.variants[choice.runs]
        assert choice.one_thread.name == "ParallelNotFaster" and "on 2 threads" in choice.one_thread.message


def test_unroll_and_jam_strips_the_second_innermost_loop_by_four() -> None:
    case = _case(*GEMM)
    scop = case.analysis.scop
    ast = cpu_program(scop, compute_schedule(scop, case.analysis.deps), CpuOptions(tile_size=0, jam=4)).ast
    text = ast.to_C_str()
    assert "c1 += 4" in text, text  # k strip-mined by 4 ...
    copies = text.count("S1(")  # ... and unrolled: four copies inside the j loop (a strip may be peeled)
    assert copies >= 4 and copies % 4 == 0, text


def _innermost_bodies(node: isl.AstNode) -> list[isl.AstNode]:
    """The bodies of the innermost ``for`` loops under `node`."""
    kind = node.get_type()
    if kind == _T.for_:
        body = node.for_get_body()
        return _innermost_bodies(body) or [body]
    if kind == _T.block:
        lst = node.block_get_children()
        return [b for k in range(lst.n_ast_node()) for b in _innermost_bodies(lst.get_at(k))]
    if kind == _T.if_:
        other = _innermost_bodies(node.if_get_else_node()) if node.if_has_else_node() else []
        return _innermost_bodies(node.if_get_then_node()) + other
    if kind == _T.mark:
        return _innermost_bodies(node.mark_get_node())
    return []


REGISTER_TILES = CpuOptions(tile_size=0, jam=4, jam_loops=2, isolate=True)


def _unguarded(body: isl.AstNode, statement: str) -> int:
    """How many calls of `statement` the loop body `body` makes outside any ``if``."""
    if body.get_type() == _T.user:
        return int(body.to_C_str().startswith(statement + "("))
    if body.get_type() != _T.block:
        return 0
    nodes = body.block_get_children()
    return sum(_unguarded(nodes.get_at(k), statement) for k in range(nodes.n_ast_node()))


def test_register_tiles_of_whole_strips_run_unguarded() -> None:
    """gemm's ``i`` and ``k`` are jammed by 4 around ``j``: 16 updates of ``C`` per ``j``, and in
    the strips that are whole (here all but the last ``k`` strip: nk = 30) none is tested (the
    ``C[i][j] *= beta`` at ``k = 0`` is)."""
    case = _case(*GEMM)
    scop = case.analysis.scop
    schedule = compute_schedule(scop, case.analysis.deps)
    bodies = _innermost_bodies(cpu_program(scop, schedule, REGISTER_TILES).ast)
    assert any(_unguarded(b, "S1") == 16 for b in bodies), "\n".join(b.to_C_str() for b in bodies)
    guarded = _innermost_bodies(cpu_program(scop, schedule, replace(REGISTER_TILES, isolate=False)).ast)
    assert max(_unguarded(b, "S1") for b in guarded) < 16  # without isolation the copies are tested


def test_isolation_that_costs_too_much_is_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    case = _case(*GEMM)
    scop = case.analysis.scop

    def compute_out(*args: object) -> isl.ScheduleNode:
        raise isl.Error("maximal number of operations exceeded")

    monkeypatch.setattr(cpu, "_isolate_full", compute_out)
    ast = cpu_program(scop, compute_schedule(scop, case.analysis.deps), REGISTER_TILES).ast
    assert "S1(" in ast.to_C_str() and max(_unguarded(b, "S1") for b in _innermost_bodies(ast)) < 16


def test_register_tiles_in_skewed_tiles_are_not_isolated(monkeypatch: pytest.MonkeyPatch) -> None:
    """seidel's point loops run inside the wavefront ``4t + 2i + j``: isolating its whole strips
    ran out of isl's budget after 7-10 s every time, inside tiles. Untiled, they are isolated."""
    case = _case(*SEIDEL)
    scop, deps = case.analysis.scop, case.analysis.deps
    schedule = compute_schedule(scop, deps)
    isolated: list[int] = []
    isolate = cpu._isolate_full
    monkeypatch.setattr(cpu, "_isolate_full", lambda *a: isolated.append(1) or isolate(*a))
    cpu_program(scop, schedule, replace(REGISTER_TILES, tile_size=32), deps)
    assert not isolated
    cpu_program(scop, schedule, REGISTER_TILES, deps)
    assert isolated


def test_a_variant_isl_cannot_build_is_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    case = _case(*GEMM)
    build = cpu_llvm.compile_variant

    def failing(case: CpuCase, variant: str, parallel: bool = True) -> Any:
        if variant == "tiled+jam2":
            raise isl.Error("maximal number of operations exceeded")
        return build(case, variant, parallel)

    monkeypatch.setattr(cpu_llvm, "compile_variant", failing)
    _, choice, results = choose_variant(case, parallel=False)
    assert "tiled+jam2" not in choice.seconds and set(choice.seconds) == set(case_variants(case)) - {"tiled+jam2"}
    assert set(results) == set(choice.seconds)


def test_an_accumulation_add_is_not_contracted_but_its_product_may_be() -> None:
    case = _case(*GEMM)
    scop = case.analysis.scop
    module = lower_cpu(scop, original_ast(scop), "gemm_flags", parallel=False, source_order=True)
    adds = [line for line in module.ir.splitlines() if " fadd " in line]
    assert adds and all("contract" not in line for line in adds), adds  # C[i][j] += ...: the chain
    assert any("fmul contract" in line for line in module.ir.splitlines())


TRISOLV = ("trisolv.c", "kernel_trisolv", {"n": 70}, {"n": "N"})


def test_trisolv_tilable_tiles_run_in_parallel_wavefronts() -> None:
    case = _case(*TRISOLV)
    scop = case.analysis.scop
    program = cpu_program(scop, compute_schedule(scop, case.analysis.deps, TILABLE), CpuOptions())
    code = program.ast.to_C_str()
    assert "// parallel" in code and "c0 += 32" in code, code  # the wavefront loop, then the parallel tiles
    assert compile_variant(case, "tilable").module.parallel_loops == 1
    result = check_llvm_cpu(str(KERNELS / TRISOLV[0]), TRISOLV[1], {"n": 70}, TRISOLV[3], threads=2)
    assert "tilable" in result.variants and result.ok, result.report()


FEW_STEPS = """#define TSTEPS 4
void jacobi(int n, double A[n][n], double B[n][n]) {
  for (int t = 0; t < TSTEPS; t++) {
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        B[i][j] = 0.2 * (A[i][j] + A[i][j - 1] + A[i][j + 1] + A[i + 1][j] + A[i - 1][j]);
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        A[i][j] = 0.2 * (B[i][j] + B[i][j - 1] + B[i][j + 1] + B[i + 1][j] + B[i - 1][j]);
  }
}
"""


def test_a_wavefront_over_a_single_time_tile_runs_sequentially(tmp_path: Path) -> None:
    """Four time steps make one time tile: isl leaves out its loop, and that of the parallel tiles
    (one per wavefront), so the loop below the mark is the next tile loop, which carries
    dependences. The mark is dropped (PolyBench's heat-3d loops ``t <= TSTEPS``)."""
    path = tmp_path / "few_steps.c"
    path.write_text(FEW_STEPS)
    case = cpu_llvm.prepare(str(path), "jacobi", {"n": 30})
    scop = case.analysis.scop
    program = cpu_program(scop, compute_schedule(scop, case.analysis.deps, TILABLE), CpuOptions())
    assert "// parallel" not in program.ast.to_C_str()
    result = check_llvm_cpu(str(path), "jacobi", {"n": 30}, threads=2)
    assert "tilable" in result.variants and result.ok, result.report()
    as_c = check_c(str(path), "jacobi", {"n": 30}, openmp=True, schedule=TILABLE)  # `--target c --openmp`
    assert as_c.ok, as_c.comparison.report()


FROM_LO = """
void smooth(int steps, int lo, int hi, double *A, double *B) {
  for (int t = 0; t < steps; t++) {
    for (int i = lo; i < hi; i++)
      B[i] = 0.25 * (A[i - 1] + 2.0 * A[i] + A[i + 1]);
    for (int i = lo; i < hi; i++)
      A[i] = B[i];
  }
}
"""


def test_wavefront_tiles_of_a_loop_from_a_size_start_where_it_does(tmp_path: Path) -> None:
    """Tiles that start at ``lo`` modulo 32 cost isl its whole budget (35 s) to build a wavefront
    of; shifted to start where ``i`` does (`cpu._tiles_from_lower_bounds`), a tenth of a second."""
    path = tmp_path / "from_lo.c"
    path.write_text(FROM_LO)
    sizes = [{"steps": 40, "lo": 3, "hi": 77}, {"steps": 3, "lo": 5, "hi": 5}, {"steps": 1, "lo": 1, "hi": 2}, {"steps": 0, "lo": 1, "hi": 9}]
    case = cpu_llvm.prepare(str(path), "smooth", sizes[0])
    scop = case.analysis.scop
    program = cpu_program(scop, compute_schedule(scop, case.analysis.deps, TILABLE), CpuOptions())
    assert "// parallel" in program.ast.to_C_str()
    for values in sizes:  # the race narrowed to two variants runs those alone
        result = check_llvm_cpu(str(path), "smooth", values, threads=2, variants=("tiled", "tilable"))
        assert "tilable" in result.variants and result.ok, f"{values}\n{result.report()}"
        assert {v.split(",")[0] for v in result.variants} == {"tiled", "tilable"}


def test_a_skewed_band_keeps_the_stride_one_loop_innermost() -> None:
    """fdtd's tilable band is ``(t, t + i, t + j)``: a step of its last member moves ``j`` alone."""
    case = _case("fdtd_2d.c", "kernel_fdtd_2d", {"tmax": 4, "nx": 20, "ny": 24}, {"tmax": "TMAX", "nx": "NX", "ny": "NY"})
    scop = case.analysis.scop
    band = compute_schedule(scop, case.analysis.deps, TILABLE).get_root().child(0)
    assert band.band_n_member() == 3
    assert _point_order(band, scop) == [0, 1, 2]
    assert _score(band, 2, scop) > 0 > _score(band, 1, scop)


def test_a_compute_out_while_annotating_leaves_loops_without_facts(monkeypatch: pytest.MonkeyPatch) -> None:
    """isl gives up in the first loop's independence test (the budget runs out in it, as on a
    huge skewed nest): the build goes on, and no loop claims a fact nobody proved."""
    case = _case(*LU)
    scop, deps = case.analysis.scop, case.analysis.deps.union()
    test = cpu._carries_nothing

    def out_of_budget(schedule: isl.UnionMap, deps: isl.UnionMap) -> bool:
        limit = scop.ctx.get_max_operations()
        scop.ctx.set_max_operations(1)
        try:
            return test(schedule, deps)
        finally:
            scop.ctx.set_max_operations(limit)  # exhausted: isl refuses every allocation now

    monkeypatch.setattr(cpu, "_carries_nothing", out_of_budget)
    loops = _loops(build_ast(scop, compute_schedule(scop, case.analysis.deps), deps))
    assert loops and not any(independent for _, _, independent in loops)


def _marked_loops(node: isl.AstNode, depth: int = 0) -> list[tuple[int, bool]]:
    """(loops around it, whether its child is one ``for``) for every ``parallel`` mark."""
    kind = node.get_type()
    if kind == _T.mark:
        child = node.mark_get_node()
        return [(depth, child.get_type() == _T.for_), *_marked_loops(child, depth)]
    if kind == _T.for_:
        return _marked_loops(node.for_get_body(), depth + 1)
    if kind == _T.block:
        lst = node.block_get_children()
        return [x for k in range(lst.n_ast_node()) for x in _marked_loops(lst.get_at(k), depth)]
    if kind == _T.if_:
        out = _marked_loops(node.if_get_then_node(), depth)
        return out + (_marked_loops(node.if_get_else_node(), depth) if node.if_has_else_node() else [])
    return []


TRMM = ("trmm.c", "kernel_trmm", {"m": 30, "n": 21}, {"m": "M", "n": "N"})


def test_a_member_that_carries_nothing_runs_outermost_in_parallel_strips() -> None:
    """isl orders trmm's update ``(k, i, j)``: ``k`` carries a dependence (row ``k`` of ``B`` is
    read before it is updated), ``i`` does too, ``j`` none: strips of 32 ``j`` run outermost, in
    parallel, one block of strips per thread (neighbouring strips write the same cache lines),
    instead of the ``i`` loop once per ``k``. It takes the dependences to see that."""
    case = _case(*TRMM)
    scop, deps = case.analysis.scop, case.analysis.deps
    schedule = compute_schedule(scop, deps)
    untiled = CpuOptions(tile_size=0)
    ast = cpu_program(scop, schedule, untiled, deps).ast
    assert _marked_loops(ast)[0] == (0, True)
    assert _mark_names(ast)[0] == "parallel blocks"
    assert ParallelMark.parse("parallel blocks") == ParallelMark(blocks=True)
    assert _mark_names(ast) == ["parallel blocks", "parallel blocks"]  # then ``B[i][j] *= alpha``
    assert _mark_names(cpu_program(scop, schedule, untiled).ast) == ["parallel blocks"]


CHOLESKY = ("cholesky.c", "kernel_cholesky", {"n": 40}, {"n": None})


def test_a_parallel_loop_whose_iterations_do_equal_work_runs_in_one_block_per_thread() -> None:
    """lu's update ``for i > k: for j > k`` gives every ``i`` the same row of ``j``: one block of
    ``i`` per thread is balanced, and as ``k`` grows each thread keeps most of its rows. In
    cholesky's ``for i > k: for k < j <= i`` row ``i`` has ``i - k`` elements: blocks would leave
    one thread the long rows, so its ``i`` is dealt out in chunks; its column division
    ``A[i][k] /= A[k][k]`` is even again."""
    lu, cholesky = _case(*LU), _case(*CHOLESKY)
    untiled = CpuOptions(tile_size=0)
    for case, marks in ((lu, ["parallel blocks"]), (cholesky, ["parallel blocks", "parallel"])):
        scop, deps = case.analysis.scop, case.analysis.deps
        assert _mark_names(cpu_program(scop, compute_schedule(scop, deps), untiled, deps).ast) == marks


def test_a_loop_that_carries_nothing_inside_a_sequential_one_runs_in_parallel() -> None:
    """seidel's default band has no member free of dependences, but once its first loop is fixed
    the second carries none: that loop runs in parallel, once per iteration of the first. On its
    tilable band ``(t, t + i, 2t + i + j)`` every loop carries one."""
    seidel = _case(*SEIDEL)
    scop, deps = seidel.analysis.scop, seidel.analysis.deps
    untiled = CpuOptions(tile_size=0)
    assert _marked_loops(cpu_program(scop, compute_schedule(scop, deps), untiled, deps).ast) == [(1, True)]
    assert _marked_loops(cpu_program(scop, compute_schedule(scop, deps, TILABLE), untiled, deps).ast) == []


def test_isolated_register_tiles_keep_the_parallel_loop_whole() -> None:
    """Separating mvt's whole strips from the partial one would split its parallel ``i`` loop in
    pieces, which run sequentially: the strips are isolated inside it instead."""
    case = _case("mvt.c", "kernel_mvt", {"n": 30}, {"n": "N"})
    scop, deps = case.analysis.scop, case.analysis.deps
    marks = _marked_loops(cpu_program(scop, compute_schedule(scop, deps), REGISTER_TILES, deps).ast)
    assert marks and all(whole for _, whole in marks), marks
    assert compile_variant(case, "untiled+jam2").module.parallel_loops == len(marks)


def test_2mm_distributed_runs_its_two_products_as_two_nests() -> None:
    """isl fuses 2mm's ``tmp = A * B`` and ``D += tmp * C`` along ``i`` and ``j``; the distributed
    variant keeps them apart, each with its own parallel ``i`` loop."""
    sizes = {"ni": 13, "nj": 9, "nk": 11, "nl": 7}
    limits = {"ni": "NI", "nj": "NJ", "nk": "NK", "nl": "NL"}
    case = _case("2mm.c", "kernel_2mm", sizes, limits)
    assert {"distributed", "distributed+jam"} <= set(case_variants(case))
    module = compile_variant(case, "distributed").module
    assert module.parallel_loops >= 2
    result = check_llvm_cpu(str(KERNELS / "2mm.c"), "kernel_2mm", sizes, limits, threads=2)
    assert "distributed" in result.variants and result.ok, result.report()
    mvt = _case("mvt.c", "kernel_mvt", {"n": 30}, {"n": "N"})  # two nests already
    assert "distributed" not in case_variants(mvt)


def test_on_one_thread_the_variants_have_no_parallel_loops(monkeypatch: pytest.MonkeyPatch) -> None:
    case = _case(*TRMM)
    built = cpu_llvm.compile_variant
    asked: list[bool] = []

    def recording(case: CpuCase, variant: str, parallel: bool = True) -> Any:
        asked.append(parallel)
        return built(case, variant, parallel)

    monkeypatch.setattr(cpu_llvm, "compile_variant", recording)
    set_threads(1)
    try:
        jit, _, _ = choose_variant(case, parallel=True)
    finally:
        set_threads(max(os.cpu_count() or 1, 1))
    assert asked and not any(asked) and jit.module.parallel_loops == 0


def test_close_contenders_are_raced_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A slow moment that fell on the source order's one timed call does not decide: the variants
    within 25% of the best run again, in turns (once each: calls this slow are not timed in rounds)."""
    case = _case(*GEMM)
    built, real = cpu_llvm.compile_variant, cpu_llvm.run_jit
    names: dict[int, str] = {}
    seen: list[str] = []
    again: list[str] = []

    def recording(case: CpuCase, variant: str, parallel: bool = True) -> Any:
        jit = built(case, variant, parallel)
        names[id(jit)] = variant
        return jit

    def scripted(jit: Any, case: CpuCase) -> tuple[dict[str, np.ndarray], float]:
        arrays, _ = real(jit, case)
        v = names[id(jit)]
        if v in seen:  # the runoff: the source order's slow moment has passed
            again.append(v)
            return arrays, {"tiled": 1.0, "source order": 0.5}[v]
        seen.append(v)  # the first call: the tiled code and the source order close, the rest far behind
        return arrays, {"tiled": 1.0, "source order": 1.2}.get(v, 5.0)

    monkeypatch.setattr(cpu_llvm, "compile_variant", recording)
    monkeypatch.setattr(cpu_llvm, "run_jit", scripted)
    _, choice, _ = choose_variant(case, parallel=False)
    assert sorted(again) == ["source order", "tiled"]
    assert choice.chosen == "source order" and choice.seconds["source order"] == 0.5
    assert choice.seconds["untiled"] == 5.0  # the others keep their first call's time


def test_the_jit_code_gets_arrays_that_start_a_cache_line() -> None:
    """Where malloc puts an array (16 bytes past a line, say) must not decide the race: trmm's
    register tiles run 1.7x slower on such arrays."""
    for a in (np.arange(7.0), np.zeros((0, 5)), np.arange(12, dtype=np.int32).reshape(3, 4)[:, ::2]):
        b = aligned_copy(a)
        assert b.flags.c_contiguous and b.dtype == a.dtype and b.shape == a.shape and np.array_equal(a, b)
        assert b.ctypes.data % 64 == 0 or b.size == 0  # an empty array has no first element
    case = _case(*GEMM)
    arrays, _ = run_jit(compile_variant(case, "tiled", parallel=False), case)
    assert arrays and all(x.ctypes.data % 64 == 0 for x in arrays.values())
    original = run_reference(case.path, case.layout, case.inputs)  # and so does the C compiler's build
    assert all(x.ctypes.data % 64 == 0 for x in original.arrays.values())


def _mark_names(ast: isl.AstNode) -> list[str]:
    names: list[str] = []

    def visit(node: isl.AstNode) -> bool:
        if node.get_type() == _T.mark:
            names.append(node.mark_get_id().get_name())
        return True

    ast.foreach_descendant_top_down(visit)
    return names


PRIVATE = CpuOptions(tile_size=0, privatize=True)
DOITGEN = ("doitgen.c", "kernel_doitgen", {"nr": 9, "nq": 7, "np": 13}, {"nr": "NR", "nq": "NQ", "np": "NP"})


def test_doitgen_runs_r_in_parallel_on_a_copy_of_sum_per_thread() -> None:
    """Every ``(r, q)`` rewrites ``sum`` before reading it: the ``r`` loop carries only the reuse
    of ``sum``, which a copy per thread removes; the copy of the thread that runs the last ``r``
    is what ``sum`` holds afterwards. Without `privatize` only loops inside ``r`` and ``q`` run in
    parallel."""
    case = _case(*DOITGEN)
    scop, deps = case.analysis.scop, case.analysis.deps
    schedule = compute_schedule(scop, deps)
    assert _mark_names(cpu_program(scop, schedule, PRIVATE, deps).ast) == ["parallel private(sum) blocks"]
    without = cpu_program(scop, schedule, replace(PRIVATE, privatize=False), deps).ast
    assert _mark_names(without) == ["parallel blocks", "parallel blocks"]  # strips of ``p``, and ``p``
    assert all(depth == 2 for depth, _ in _marked_loops(without))
    assert compile_variant(case, "untiled").module.parallel_loops == 1


SCALAR_TEMPORARY = """
void rowdot(int n, int m, double A[n][m], double x[m], double y[n], double last[1]) {
  double t;
  int i, j;
  for (i = 0; i < n; i++) {
    t = 0.0;
    for (j = 0; j < m; j++)
      t += A[i][j] * x[j];
    y[i] = t;
  }
  last[0] = t;
}

void carried(int n, double x[n], double y[n]) {
  double t = 0.0;
  for (int i = 0; i < n; i++) {
    y[i] = t;
    t = x[i];
  }
}

void triangle(int n, double A[n][n], double B[n][n], double tmp[n]) {
  for (int i = 0; i < n; i++) {
    for (int j = 0; j <= i; j++)
      tmp[j] = 2.0 * A[i][j];
    for (int j = 0; j <= i; j++)
      B[i][j] = tmp[j] + 1.0;
  }
}
"""


@pytest.mark.parametrize(
    ("function", "private"),
    [("rowdot", ["parallel private(t) blocks"]), ("carried", []), ("triangle", [])],
)
def test_only_a_temporary_each_iteration_writes_before_reading_is_copied(
    tmp_path: Path, function: str, private: list[str]
) -> None:
    """C89's temporary declared before the loop gets a copy per thread; not a value carried from
    one iteration to the next (``carried``), nor an array the iterations write different parts
    of (``triangle``: the last row's copy would lack the rest). Each matches gcc on two threads."""
    path = tmp_path / "temporaries.c"
    path.write_text(SCALAR_TEMPORARY)
    for n in (37, 1, 0):
        case = prepare(str(path), function, {"n": n, "m": 5})
        scop, deps = case.analysis.scop, case.analysis.deps
        names = _mark_names(cpu_program(scop, compute_schedule(scop, deps), PRIVATE, deps).ast)
        assert [m for m in names if "private" in m] == private, names
        result = check_llvm_cpu(str(path), function, {"n": n, "m": 5}, threads=2)
        assert result.ok, result.report()
