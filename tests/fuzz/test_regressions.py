"""Bugs the differential fuzzer found (`python -m tests.fuzz`), each as its minimal program."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import runs_everywhere

pytestmark = pytest.mark.slow  # generated code runs

# Seeds 13 and 16: isl's scheduler gives up ("unable to carry dependences") on the dependence
# S1[i] -> S1[n - 1 - 2i] next to a loop starting at n - i, though the source order satisfies it;
# every back end raised islpy's error. `transform/schedule.py` now falls back to the source order.
UNCARRIED = """void f(int n, double B[2 * n + 3])
{
  for (int i = 0; i <= n; i++) {
    for (int l = n - i; l <= i; l++)
      B[2 * i + 1] += B[i];
    B[n - i] = B[2 * i + 1];
  }
}
"""


def test_a_schedule_isl_cannot_find_runs_in_source_order(tmp_path: Path) -> None:
    path = tmp_path / "uncarried.c"
    path.write_text(UNCARRIED)
    runs_everywhere(str(path), "f", [{"n": 13}, {"n": 1}, {"n": 0}])


# Seed 59: a local array declared in a loop that does not run at these sizes (`N / 2 + 1` with
# N = 1 starts at 1): its buffer's box was the empty union set, and `array_layouts` raised isl's
# "union map needs to contain elements in exactly one space" (C target and OpenCL).
EMPTY_LOCAL = """#ifndef N
#define N 40
#endif
void f(double A[N + 1])
{
  for (int i = 1; i < N / 2 + 1; i++) {
    double t[2];
    for (int q = 0; q < 2; q++)
      t[q] = A[i] + q;
    A[i] = t[0] + t[1];
  }
}
"""


def test_a_local_array_in_a_loop_that_never_runs(tmp_path: Path) -> None:
    from core_compiler.runtime.differential import check_c, check_opencl

    path = str(tmp_path / "empty_local.c")
    Path(path).write_text(EMPTY_LOCAL)
    for n in (1, 0, 7):
        assert check_c(path, "f", {"N": n}, size_limits={"N": "N"}).ok
        assert check_opencl(path, "f", {"N": n}, size_limits={"N": "N"}).ok


# Seeds 29, 134 and 176: the reverse mode incremented the adjoint of a read that C makes only under
# a MIN/MAX subscript's condition without that condition (`d_B[..][jj - 2]` at jj = 0: a write
# before the array, a segfault in seeds 29 and 134, a wrong gradient here: dot-product test 7e-4).
# Fixed in core_compiler/ad (075e62b).
REVERSE = """#define MAX(a, b) ((a) > (b) ? (a) : (b))
#ifndef N
#define N 40
#endif
void f(double y[2 * N + 4][N + 3], double private_B[N + 3][2 * N + 3][2 * N + 2])
{
  for (int jj = 0; jj < (N + 1) / 2; jj++) {
    y[(jj + 1) / 3 + 2][jj] = 0.25 * private_B[jj + 1][(jj > 0 ? jj - 1 : 0) + 2][MAX(jj - 2, 0)];
    for (int j = 1; j < jj + 1; j++) {
      for (int j1 = 0; j1 < N - jj; j1++) {
        y[(j + j1) / 2][(j1 + 1) / 3] += 0.125 * private_B[jj / 3 + 2][2 * jj][j1 + jj + 1];
      }
    }
  }
}
"""


def test_reverse_mode_of_a_guarded_read(tmp_path: Path) -> None:
    from core_compiler.ad.check import check_gradients

    path = str(tmp_path / "reverse.c")
    Path(path).write_text(REVERSE)
    result = check_gradients(path, "f", ("y", "private_B"), {"N": 5}, size_limits={"N": "N"})
    assert result.ok, result.report()


# Seed 193: the GPU host code's second loop ran from min to max of the two kernels' `h1` (3 and
# h0/2 - 2) and launched *both* kernels in every iteration, with `h1` fixed: S1's `+=` ran
# several times (OpenCL 375.37 where C gives 98.37). Each launch is now guarded by the
# iterations where its kernel has instances (`gpu_mapping._when`: `hx_when(cond, kernel0(..))`).
HOST_LOOP = """void f(int n, double A[2 * n + 3][2 * n + 3])
{
  for (int i = 0; i < n + 1; i++)
    for (int j = n - i; j < i + 1; j++) {
      A[2 * i + 2][n - j] += A[2][i + 2];
      A[n - i][2 * i] += A[j][i + 2];
    }
}
"""


def test_gpu_host_loop_launches_each_kernel_once(tmp_path: Path) -> None:
    from core_compiler.runtime.differential import check_opencl

    path = str(tmp_path / "host_loop.c")
    Path(path).write_text(HOST_LOOP)
    for n in (5, 12, 1, 0):
        assert check_opencl(path, "f", {"n": n}).ok, n


def test_gpu_host_loop_launches_each_kernel_once_in_cuda_c(tmp_path: Path) -> None:
    """The same host code as CUDA C (the guard printed as an `if`), run on the CPU."""
    from tests.cuda_cpu import harness

    why = harness.unavailable()
    if why:
        pytest.skip(why)
    path = str(tmp_path / "host_loop.c")
    Path(path).write_text(HOST_LOOP)
    cases = [harness.prepare(path, "f", {"n": n}, name=f"host_loop-{n}") for n in (5, 12, 1)]
    results = harness.run_cases(cases)
    assert len(results) == 3 and all(r.ok for r in results.values()), "\n".join(r.report() for r in results.values())


# Seed 435: isl's operation limit in the GPU mapping's grid (`_grid`, `dim_max`) was not caught:
# islpy's "maximal number of operations exceeded" reached the caller (OpenCL, CUDA; a traceback
# from `hexplore compile`). The grid now falls back to the bounds of the tiles' box.
# Then a hang (run of seeds 0:500: no answer in 300 s, on OpenCL and CUDA): each GPU compile spent
# the kernel's whole isl budget (4e6 operations) three times over, for the full tiles of each tile
# shape tried (`_full_tiles`, a heuristic), the exact grid and the GPU cost model's grid, minutes
# each. The full tiles now get `FULL_TILES_OPERATIONS` (1e6) once per kernel (`_FullTiles`), both
# grids `GRID_OPERATIONS` (1e6), the cost model's falling back to the box as the grid does.
GRID_BUDGET = """void f(int n, double B[n + 1][n + 1][n + 4], double y[2 * n + 2][2 * n + 3])
{
  for (int i = 0; i < n % 7; i++) {
    for (int ii = 0; ii < n / 2 + 1; ii++) {
      for (int i2 = ii / 2; i2 < ii + 1; i2++) {
        y[i2][2 * ii + 2] = 0.5 * y[i2][ii] + 0.125 * B[n - i2][i][(i + 1) / 2 + 2];
        y[ii][i + 2] = 0.5 * y[(i + ii) / 2][i2 / 4 + 2] + 0.25 * y[ii + 1][2 * i2 + 1];
      }
    }
  }
}
"""


@pytest.mark.long  # 30 s of isl; the long tier runs it
def test_gpu_mapping_survives_isl_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from core_compiler.runtime.differential import check_opencl
    from core_compiler.transform import gpu_mapping

    calls: list[bool] = []
    full_tiles = gpu_mapping._full_tiles

    def counted(*args: object) -> object:
        found = full_tiles(*args)  # type: ignore[arg-type]
        calls.append(found is None)
        return found

    monkeypatch.setattr(gpu_mapping, "_full_tiles", counted)
    path = str(tmp_path / "grid_budget.c")
    Path(path).write_text(GRID_BUDGET)
    assert check_opencl(path, "f", {"n": 13}).ok
    assert calls.count(True) <= 2, calls  # given up once per kernel, not once per tile shape


def test_full_tiles_are_given_up_for_a_kernel_once_costly(monkeypatch: pytest.MonkeyPatch) -> None:
    import islpy as isl

    from core_compiler.transform import gpu_mapping
    from core_compiler.transform.memory import KernelShape

    calls: list[tuple[int, ...]] = []

    def costly(sched: object, shape: KernelShape) -> None:
        calls.append(shape.tile)
        return None  # isl's budget ran out

    monkeypatch.setattr(gpu_mapping, "_full_tiles", costly)
    full = gpu_mapping._FullTiles(isl.UnionMap("{ S[i] -> [i] : 0 <= i < 10 }"))
    for tile in ((32, 32), (16, 16), (32,)):
        assert full(KernelShape(2, 2, (), tile)) is None
    assert calls == [(32, 32)]


def test_a_grid_isl_cannot_bound_in_its_budget_is_the_box(monkeypatch: pytest.MonkeyPatch) -> None:
    import islpy as isl

    from core_compiler.transform import gpu_mapping

    ctx = isl.Context()
    ctx.set_max_operations(4_000_000)
    sched = isl.UnionMap.read_from_str(ctx, "[n] -> { S[i, j] -> [i, j] : 0 <= i < n and 0 <= j <= i }")
    exact = gpu_mapping._grid(ctx, sched, (32, 32), 2, ())
    monkeypatch.setattr(gpu_mapping, "GRID_OPERATIONS", 1)
    boxed = gpu_mapping._grid(ctx, sched, (32, 32), 2, ())
    assert [e.to_C_str() for e in boxed[1]] == [e.to_C_str() for e in exact[1]]  # a triangle's box
    assert ctx.get_max_operations() == 4_000_000  # the kernel's budget is given back



# Seed 261: the reverse mode was wrong (dot-product test 1.9e-3; forward matched finite differences).
# The increment of a read under an affine `?:` (`B[i][MAX(i - 1, 0) + 2]`) runs under the `?:`
# conditions C evaluates it under, and one of them reads data (`B[2 * i][2 * i] > 1.0`) that a later
# iteration overwrites (`B[n - i][2]`): the guard read the final value where the partials read the
# tape. The guard's conditions now go through the same availability analysis as the partials
# (`Reverse.guard` in core_compiler/ad/reverse.py: `if (tape_S1_B[i] > 1.0 && i > 0) ...`).
REVERSE_261 = """void f(int n, double A[2 * n + 1][n + 1], double B[2 * n + 3][2 * n + 3])
{
  for (int i = 0; i < n; i++) {
    A[2 * i][i] = 0.25 * B[(i > 0 ? i - 1 : 0) + 2][(i > 0 ? i - 1 : 0)] + 0.25 * B[n - i + 2][(i > 0 ? i - 1 : 0) + 2] + 0.25 * A[i][(i > 0 ? i - 1 : 0)];
    B[n - i][2] = (B[2 * i][2 * i] > 1.0 ? 0.25 * B[i][(i > 0 ? i - 1 : 0) + 2] : 0.5 * B[2 * i][2 * i]);
  }
}
"""


def test_reverse_mode_with_guarded_reads_and_a_data_dependent_choice(tmp_path: Path) -> None:
    from core_compiler.ad.check import check_gradients

    path = str(tmp_path / "reverse_261.c")
    Path(path).write_text(REVERSE_261)
    for n in (37, 5, 1, 0):
        result = check_gradients(path, "f", ("A", "B"), {"n": n})
        assert result.ok, result.report()


# Seed 50 (a hang: over 300 s in OpenCL's check): the GPU cost model's count of a kernel's
# footprint lifted an integer division that reads only the sizes (`n % 2 = 0`) into a dimension,
# whose sum gave the division back: the sum went round until its piece budget ran out, its
# polynomials growing each time (25 s for this one-dimensional set, minutes for the seed's), and
# then fell back to the box. Such divisions are conditions on the sizes, not holes, and are kept
# (`counting._divs_of_params`).
SIZE_DIVISION = "[n] -> { [e, x] : n mod 2 = 0 and 0 <= x <= e and 2e <= n - 4 and 4e >= n - 4 and n - 2 <= 6e <= n }"


def test_a_count_under_a_condition_on_the_sizes_is_exact() -> None:
    import islpy as isl

    from core_compiler.transform.counting import count

    ctx = isl.Context()
    s = isl.Set.read_from_str(ctx, SIZE_DIVISION)
    c = count(s)
    assert c.exact
    for n in range(40):
        points = s.fix_val(isl.dim_type.param, 0, isl.Val.int_from_si(ctx, n)).count_val().to_python()
        assert c.evaluate({"n": n}) == points, n


# Seed 283 (OpenCL wrong: y[1] 0.4497 where C gives 0.7669, or NaN): `t` is expanded over (i, j)
# and went to a register with no load or store, as an iteration's own value; but the host loops
# ran S1 (`t = C[j + 2]`, thread 10 of launch (3i, j)) and S2 (`y[M - i] = t`, thread i of launch
# (1 + 2i + 3j, 3)) in different launches, and S2 read a register S1's launch never passed on.
# A register skips its load and store only where each element's accesses share one launch
# (`gpu_mapping._iteration_local`).
SPLIT_LAUNCHES = """#ifndef N
#define N 40
#endif
#ifndef M
#define M 32
#endif
void f(float C[M + N + 3], float y[M + N + 1])
{
  for (int i = 0; i < M; i++) {
    for (int j = (i + 1) / 3; j < N; j++) {
      C[j + i] = y[(j > 0 ? j - 1 : 0)];
      float t = C[j + 2];
      y[M - i] = t;
    }
  }
}
"""


def test_a_register_written_and_read_in_different_launches(tmp_path: Path) -> None:
    from core_compiler.runtime.differential import check_opencl

    path = str(tmp_path / "split_launches.c")
    Path(path).write_text(SPLIT_LAUNCHES)
    for sizes in ({"N": 5, "M": 13}, {"N": 4, "M": 13}, {"N": 1, "M": 1}):
        result = check_opencl(path, "f", sizes, size_limits={"N": "N", "M": "M"})
        assert result.ok, (sizes, result.comparison.report())


# Seed 390 (a hang: CUDA's compile, with the sizes as parameters, took minutes): the box around
# the tiles' footprint of `x[jj % 2][j / 3]` (existentially quantified variables, under `n % 7`)
# spent the kernel's whole isl budget, 4e6 operations, about 70 s, before giving up. The box now
# gets `memory.BOX_OPERATIONS` (1e6: a few seconds), then `x` stays in global memory.
TILE_FOOTPRINT = (
    "[n, h0] -> { [T0, T1, T2] -> x[o0, o1] : (exists (e4, e5: (T0) mod 32 = 0 and (T1) mod 32 = 0 and "
    "(T2) mod 32 = 0 and -31 <= T2 <= 2 and 0 <= o0 <= 1 and 2e4 >= h0 + T0 + o0 and h0 + o0 < 2e4 <= 31 "
    "+ h0 + T0 + o0 and 2e5 >= -2 - 4h0 + T1 - 3o0 + 8e4 and -2 - 5h0 - 4o0 + 10e4 <= 2e5 <= 29 - 4h0 + "
    "T1 - 3o0 + 8e4 and 2e5 <= -3 + n - 4h0 - 3o0 - 7*floor((n)/7) + 8e4 and 7e5 >= -9 - 3h0 - 3o1 + 7e4 "
    "and -7 - n - 3h0 + 7e4 <= 7e5 <= -7 - 3h0 - 3o1 + 7e4 and 7e5 <= -7 - 2h0 + o0 + 5e4)) or ((h0) mod "
    "2 = 0 and (T0) mod 32 = 0 and (T1) mod 32 = 0 and (T2) mod 32 = 0 and (h0 + 2o0) mod 4 = 0 and (3h0 "
    "+ 2o0 + 4o1) mod 8 = 0 and o0 <= n and o1 >= T0 and 0 < o1 <= o0 and o1 <= 31 + T0 and -248 + h0 - "
    "8T1 - 2o0 <= 20o1 <= h0 - 8T1 - 2o0 and -24 + h0 + 8T2 - 2o0 <= 28o1 <= h0 - 2o0 and 28o1 <= 224 + "
    "h0 + 8T2 - 2o0 and 56*floor((n)/7) <= -8 + 8n - h0 + 2o0 + 20o1) }"
)


def test_the_box_of_a_costly_footprint_gives_up_in_seconds() -> None:
    import time

    import islpy as isl

    from core_compiler.transform.memory import KernelShape, _shared

    ctx = isl.Context()
    footprint = isl.UnionMap.from_map(isl.Map.read_from_str(ctx, TILE_FOOTPRINT))
    ctx.set_max_operations(4_000_000)  # a kernel's budget (`analysis`)
    start = time.monotonic()
    with pytest.raises(isl.Error):
        _shared("x", "float", footprint, isl.UnionMap.empty(footprint.get_space()), KernelShape(3, 3, (), (32, 32, 32)), "")
    assert time.monotonic() - start < 35  # 70 s before; about 7 s now
    assert ctx.get_max_operations() == 4_000_000  # the kernel's budget is given back


# Seed 283 too (`hexplore analyze --gpu`: "GPU cost not counted", and the offload decision without
# the cost model): the host loop's bound `c1 = (c0 >= 24 && ...) ? 3 : c0 / 3 - ...` was written
# for isl with `?:`, which isl's syntax lacks, and divisors as `/(3)`, which isl does not read. A
# comparison with a `?:` is now split into its cases; the launches are those the host code runs.
def test_host_loops_with_a_choice_count_their_launches(tmp_path: Path) -> None:
    from core_compiler.analysis import analyze_file
    from core_compiler.frontend import ParseOptions
    from core_compiler.pipeline import gpu_program
    from core_compiler.transform.gpu_cost import gpu_cost, launch_sets

    path = tmp_path / "split_launches.c"
    path.write_text(SPLIT_LAUNCHES)
    fa = analyze_file(str(path), parse_options=ParseOptions(defines=("N=5", "M=13")), only="f")
    gpu = gpu_program(fa.functions[0].scops[0])
    assert "?" in gpu.host_ast.to_C_str()
    launched = {name: sum(s.count_val().to_python() for s in sets) for name, sets in launch_sets(gpu).items()}
    assert launched == {"kernel0": 39, "kernel1": 61}  # by running the host loops (for c0, for c1, hx_when)
    assert gpu_cost(gpu).kernels


# Seed 510 (a crash of OpenCL and CUDA: StopIteration out of the GPU cost model): a statement of a
# kernel that never runs (`k` from `n - ii` to `n - i` where `ii >= n - i`) has no instances in the
# kernel's host values, and `_one` looked for its set there.
NEVER_RUNS = """void f(int n, float A[n + 1], float B[n + 1])
{
  for (int i = 1; i < n; i++)
    for (int ii = n - i; ii < i + 1; ii++) {
      for (int k = n - ii; k < n - i; k++)
        A[k] += B[k];
      B[i] = 0.25f * A[i - 1];
    }
}
"""


def test_a_kernel_statement_that_never_runs(tmp_path: Path) -> None:
    from core_compiler.runtime.differential import check_opencl

    path = str(tmp_path / "never_runs.c")
    Path(path).write_text(NEVER_RUNS)
    for n in (5, 1):
        assert check_opencl(path, "f", {"n": n}).ok, n


# Seed 775 (a crash of OpenCL at n = 37: TypeError, int(None)): the launches' grid is read from
# isl's AST at run time, and islpy's `Val.to_python` prints the value, work isl counts against
# the SCoP's operation limit, which the passes before the run had spent: the printer gave None.
# `ast_print.evaluate` reads an AST's integers without printing them now.
EXHAUSTED_GRID = """void f(int n, double C[n + 1][2 * n + 1][2 * n + 2], double B[n + 3][2 * n + 1][n + 3], double private_B[2 * n + 3][2 * n + 3][2 * n + 1])
{
  for (int i = 1; i < n; i++) {
    for (int j = 0; j < n + 1; j++) {
      for (int k = 1; k < n; k++) {
        B[k - 1][n - j][i + 2] = 0.25 * C[(i + n - 1) % n][2 * j][j + i + 1] + 0.125 * private_B[k + 2][j + 2][2 * j];
        double w1 = 0.125 * B[2][k + i][n - k];
        private_B[j + k][i + k][n - j] = 0.125 * private_B[i + 2][k + 1][(i + n - 1) % n] + 0.5 * w1 + 0.0625 + 0.375 * w1;
      }
    }
  }
}
"""


def test_an_ast_is_evaluated_on_a_spent_isl_budget() -> None:
    import islpy as isl

    from core_compiler.codegen.ast_print import evaluate

    ctx = isl.Context()
    s = isl.Set.read_from_str(ctx, "[n] -> { [i, j] : 0 <= i < n and 0 <= j < i }")
    build = isl.AstBuild.from_context(s.params())
    small = build.expr_from_pw_aff(s.dim_max(1))
    large = build.expr_from_pw_aff(s.dim_max(0).add(isl.PwAff.read_from_str(ctx, "[n] -> { [(12345678901234)] }")))
    ctx.set_max_operations(1)
    with pytest.raises(isl.Error):
        s.coalesce().dim_max(1)  # the budget is spent
    assert evaluate(small, {"n": 7}) == 5
    assert evaluate(large, {"n": 7}) == 12345678901240
    assert ctx.get_max_operations() == 1


@pytest.mark.long  # minutes of isl
def test_the_grid_of_a_kernel_compiled_on_a_spent_budget_launches(tmp_path: Path) -> None:
    from core_compiler.runtime.differential import check_opencl

    path = str(tmp_path / "exhausted_grid.c")
    Path(path).write_text(EXHAUSTED_GRID)
    assert check_opencl(path, "f", {"n": 37}).ok


# Seed 932 (the gradient check failed: forward mode against finite differences NaN): the program
# itself overflows `float` at n = 37, m = 13 (a `+=` chain over three loops), and the finite
# differences of infinities are NaN. Not a wrong derivative: the check now says the values overflow
# (`NotCheckable`, a refusal to the fuzzer) and checks the same program at sizes where they do not.
OVERFLOWS = """void f(int n, float C[n + 1])
{
  for (int i = 0; i < n; i++)
    C[i + 1] += 1000.0f * C[i];
}
"""


def test_a_gradient_check_of_values_that_overflow_says_so(tmp_path: Path) -> None:
    from core_compiler.ad.check import check_gradients
    from core_compiler.errors import NotCheckable

    path = str(tmp_path / "overflows.c")
    Path(path).write_text(OVERFLOWS)
    with pytest.raises(NotCheckable, match="values of `C` overflow float in `f` at n=20"):
        check_gradients(path, "f", ("C",), {"n": 20})
    for n in (5, 1, 0):
        result = check_gradients(path, "f", ("C",), {"n": n})
        assert result.ok, result.report()


# Seed 935 (a crash of the C target at every size: islpy's "maximal number of operations exceeded"
# out of `isl_ast_build_node_from_schedule`): `generate_c` built its AST on what `cpu_program`,
# which builds an AST of its own, had left of the SCoP's isl budget. The AST is a step of its own
# now, with the whole budget; and a nest isl cannot schedule, tile or write out within the budget
# stays as written, with a `CpuCodeBudgetExceeded` remark, instead of a traceback.
BUDGET_AST = """void f(int n, float y[2 * n + 3][2 * n + 3], float shared_A[2 * n + 2][2 * n + 3][2 * n + 3], float dev_C[2 * n + 2][2 * n + 2])
{
  for (int floor = 1; floor < n + 1; floor++) {
    dev_C[2 * floor][floor] += 0.5f * y[n - floor + 1][2 * floor];
    for (int mod = 0; mod < n - floor; mod++) {
      dev_C[n - mod][n - mod + 1] = 0.375f * shared_A[floor + mod][n - floor][0] + 0.125f * shared_A[floor][floor + 2][mod];
      for (int l = 0; l < n + 1; l++) {
        dev_C[n - l][2 * floor] = 0.125f * shared_A[2 * l + 1][2 * l + 2][l] + 0.0625f;
      }
    }
  }
  for (int j = 0; j < n; j++) {
    for (int i = 1; i < j + 1; i++) {
      shared_A[i + j][i][n - j] += 0.375f * shared_A[1][2 * j + 2][n - j + 2];
      for (int k = n - i; k < j + 1; k++) {
        shared_A[j + 1][2][n - j] = 0.5f * dev_C[i + 1][j + i] + 0.01f * k;
        y[k][n - j + 2] += 0.5f * y[j][2] + 0.125f * y[2 * i + 1][k];
      }
      shared_A[i][i + j][j + i] = 0.5f * shared_A[i - 1][j][n - j + 1] + 0.5f * y[2 * i + 2][n - j + 2] + 0.0625f + 0.01f * j;
    }
  }
}
"""


@pytest.mark.long  # a minute of isl per size
def test_c_target_builds_its_ast_with_a_budget_of_its_own(tmp_path: Path) -> None:
    from core_compiler.runtime.differential import check_c

    path = str(tmp_path / "budget_ast.c")
    Path(path).write_text(BUDGET_AST)
    for n in (7, 1, 0):
        result = check_c(path, "f", {"n": n})
        assert result.ok and result.kernels == 1, (n, result.comparison.report())


SMALL = """void f(int n, double A[n][n], double B[n][n])
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      A[i][j] = B[j][i] + A[i][j];
  for (int i = 0; i < n; i++)
    B[i][0] = 2.0 * A[i][i];
}
"""


def test_c_target_keeps_a_nest_as_written_when_isl_gives_up(tmp_path: Path) -> None:
    from core_compiler.analysis import analyze_file
    from core_compiler.codegen.c import COptions
    from core_compiler.compile import compile_c

    path = tmp_path / "small.c"
    path.write_text(SMALL)
    fa = analyze_file(str(path), only="f")
    (sa,) = fa.functions[0].scops
    sa.scop.ctx.set_max_operations(500)  # too few for the scheduler, the tiling or the AST
    result = compile_c(fa, COptions())
    assert result.files == {"small.hexplore.c": SMALL}
    kept, scheduled = result.remarks
    assert kept.name == "CpuCodeBudgetExceeded" and kept.range == sa.scop.range
    assert "gave up" in kept.message and "500 operations" in kept.message
    assert scheduled.name == "ScheduleBudgetExceeded"  # and the source order was its schedule
    sa.scop.ctx.set_max_operations(4_000_000)
    replaced, scheduled = compile_c(fa, COptions()).remarks
    assert replaced.name == "CpuCode" and scheduled.name == "ScheduleBudgetExceeded"  # the source order, remembered


# Seed 977 (a crash of every back end: "maximal number of operations exceeded" out of
# `isl_schedule_constraints_compute_schedule`; isl's scheduler spent the SCoP's budget, about a
# minute, once per back end and variant). `compute_schedule` now falls back to the source order,
# as it does where isl cannot carry a dependence, remembers it for the SCoP and those options, and
# the schedule pass, `compile` and the C target say so (`ScheduleBudgetExceeded`). Here isl's
# scheduler is made to give up at once; the code generated in the source order must still match.
def test_a_schedule_isl_gives_up_on_runs_in_source_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import islpy as isl

    from core_compiler.analysis import analyze_file
    from core_compiler.passes import Trace
    from core_compiler.pipeline import GpuOptions, ScopUnit, run_passes
    from core_compiler.runtime.differential import check_c, check_opencl
    from tests.fuzz.run import _llvm

    def gives_up(self: isl.ScheduleConstraints) -> isl.Schedule:
        raise isl.Error("isl_schedule_constraints_compute_schedule failed: maximal number of operations exceeded")

    monkeypatch.setattr(isl.ScheduleConstraints, "compute_schedule", gives_up)
    path = tmp_path / "small.c"
    path.write_text(SMALL)
    fa = analyze_file(str(path), only="f")
    trace = Trace()
    run_passes(ScopUnit.of(fa.functions[0], fa.functions[0].scops[0]), GpuOptions().passes(), trace)
    said = [r.name for rec in trace.records if rec.name == "schedule" for r in rec.remarks]
    assert said == ["ScheduleBudgetExceeded"]
    for n in (13, 1, 0):
        result = check_c(str(path), "f", {"n": n})
        assert result.ok and result.kernels == 1, (n, result.comparison.report())
    assert check_opencl(str(path), "f", {"n": 13}).ok
    assert _llvm(str(path), "f", {"n": 13}, None, 1, ("tiled", "source order")) is None


# Seed 1178 (a gradient "mismatch": forward and reverse mode 2.4e-2 from the finite differences,
# tolerance 2e-2; the dot-product test passed): `b1 += 0.5f * C[1]` 9,942 times in `float` rounds
# by about 1e-3 of the sum, and the central difference of two such sums over a step of 1e-2 carries
# that error. The derivative is right (the same program in double: 3.6e-10). The check now measures
# the finite differences' own noise (steps h and 2h) and does not hold them to less than that.
FLOAT_SUM = """float f(int n, float C[2])
{
  float b1 = 0.0f;
  for (int j = 0; j < (n + 1) / 2; j++)
    for (int jj = j / 2; jj < n - 1; jj++)
      for (int j1 = jj; j1 < n - 1; j1++)
        b1 += 0.5f * C[1];
  return b1;
}
"""


def test_a_gradient_check_allows_for_the_rounding_of_a_long_float_sum(tmp_path: Path) -> None:
    from core_compiler.ad.check import _derive, check_gradients
    from core_compiler.runtime.signature import layout_for_source

    path = str(tmp_path / "float_sum.c")
    Path(path).write_text(FLOAT_SUM)
    result = check_gradients(path, "f", ("C",), {"n": 37}, of=("return",))
    assert result.ok, result.report()
    assert result.fd_forward > result.fd_tol and result.fd_bound > result.fd_forward  # the noise, measured
    assert result.dot <= result.dot_tol  # the two modes agree to round-off
    wrong = tmp_path / "wrong.c"  # the derivatives of 0.75f * C[1]: still caught (4.6e-1 against 9e-2)
    wrong.write_text(FLOAT_SUM.replace("0.5f", "0.75f"))
    layout = layout_for_source(str(wrong), "f", {"n": 37})
    derivatives = _derive(str(wrong), "f", ("C",), ("return",), layout, None)
    caught = check_gradients(path, "f", ("C",), {"n": 37}, of=("return",), derivatives=derivatives)
    assert not caught.ok and caught.fd_forward > caught.fd_bound, caught.report()
