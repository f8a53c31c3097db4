"""Running counters (issue 26): a scalar set right before a `for` loop and stepped by a constant
once per iteration (`j = 0; for (...) { a[j] = ...; j += 2; }`) is read in closed form, so that
its subscripts are affine (`core_compiler/frontend/running_counters.py`); where anything else
steps it, the loop stays refused with the reason it had."""

from __future__ import annotations

from pathlib import Path

import pytest

from core_compiler.runtime.differential import check_c, check_opencl
from tests.helpers import analyze, check_cpu, named, range_of

COUNTERS = """
void running_offset(int n, double *a) {
  int j = 0;
  for (int i = 0; i < n; i++) {
    a[j] = i;
    j = j + 2;
  }
}

void down(int n, double *restrict a, const double *restrict b) {
  long p = 3 * n;
  for (int i = n - 1; i >= 0; i--) {
    p -= 3;
    a[p] = b[i];
  }
}

int kept(int n, int m, double *restrict a) {
  int j = m;
  for (int i = 2; i < n; i += 3) {
    a[j] = 1.0 + i;
    j += 2;
    a[j] += 0.5;
  }
  return j;
}

void rows(int n, int m, double *restrict out, const double *restrict in) {
  for (int i = 0; i < n; i++) {
    int k = i * m;
    for (int j = 0; j < m; j++) {
      out[k] = 2.0 * in[i * m + j];
      k++;
    }
  }
}
"""

SIZES = [{"n": 37, "m": 5}, {"n": 1, "m": 1}, {"n": 0, "m": 0}, {"n": 2, "m": 33}]


@pytest.fixture(scope="module")
def counters(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("counters") / "counters.c"
    path.write_text(COUNTERS)
    return str(path)


def test_counters_are_modeled_and_said() -> None:
    fa = analyze(COUNTERS)
    for f in fa.functions:
        assert len(f.scops) == 1 and not [r for r in f.remarks if r.kind.name == "MISSED"], f.function.name
    notes = named(list(fa.all_remarks()), "InductionVariable")
    assert [r.range for r in notes[:3]] == [range_of(COUNTERS, s) for s in ("j = j + 2", "p -= 3", "j += 2")]
    assert "nothing after the loop reads `j`, so the step itself is left out" in notes[0].message
    assert "left out" not in notes[2].message  # `kept` returns its counter


def test_a_counter_read_only_in_its_loop_leaves_the_loop_parallel() -> None:
    fa = analyze(COUNTERS)
    parallel = {f.function.name for f in fa.functions if named(list(f.remarks), "ParallelLoop")}
    assert {"running_offset", "down", "rows"} <= parallel, parallel


@pytest.mark.parametrize("function", ["running_offset", "down", "kept", "rows"])
def test_counters_run_and_match(counters: str, function: str) -> None:
    for sizes in SIZES:
        c = check_c(counters, function, sizes)
        assert c.ok, f"{sizes}\n{c.comparison.report()}"
    cpu = check_cpu(counters, function, SIZES[0], threads=2)
    assert cpu.ok, cpu.report()
    gpu = check_opencl(counters, function, SIZES[0])
    assert gpu.ok, gpu.comparison.report()


NOT_COUNTERS = [
    ("stepped twice", "k++; a[k] = 1.0; k++;"),
    ("stepped under an if", "a[k] = 1.0; if (i % 2) k++;"),
    ("stepped by a variable", "a[k] = 1.0; k += m;"),
    ("a break skips the step", "a[k] = 1.0; if (a[i] > 0) break; k++;"),
    ("stepped in an inner loop", "a[k] = 1.0; for (int t = 0; t < 2; t++) k++;"),
]


def test_a_counter_the_loop_condition_reads_is_not_one() -> None:
    src = "void f(int n, int m, double *a) {\n  int k = 0;\n  for (int i = 0; i < n && k < m; i++) { a[k] = 1.0; k += 2; }\n}\n"
    assert not named(list(analyze(src).all_remarks()), "InductionVariable")


@pytest.mark.parametrize("body", [c[1] for c in NOT_COUNTERS], ids=[c[0] for c in NOT_COUNTERS])
def test_what_is_not_a_counter_stays_refused(body: str) -> None:
    src = f"void f(int n, int m, double *a) {{\n  int k = 0;\n  for (int i = 0; i < n; i++) {{ {body} }}\n}}\n"
    fa = analyze(src).functions[0]
    assert not fa.scops or named(list(fa.remarks), "NonAffineSubscript"), [r.message for r in fa.remarks]
    assert not named(list(fa.remarks), "InductionVariable")


def test_a_counter_whose_start_changes_in_the_loop_is_not_one(tmp_path: Path) -> None:
    src = "void f(int n, int m, double *a) {\n  int k = m;\n  for (int i = 0; i < n; i++) { a[k] = 1.0; k++; m = 0; }\n}\n"
    assert not named(list(analyze(src).all_remarks()), "InductionVariable")
