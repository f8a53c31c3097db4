"""Arguments of calls hexplore does not see into (issue 26), beyond numbers and whole arrays: an
address in an array (``a + i``, ``a + i - 1``, ``&a[i]``, ``&A[i][0]``, ``A[i] + 1``, under a
pointer cast) lets the call
touch all of that array; ``&x`` of a local number lets it read and write ``x`` (this iteration's,
where ``x`` is private to the iterations); a variadic function (``printf``, ``snprintf``) reads
the numbers and string literals past its parameters, and keeps its order among the calls with
hidden effects. The generated C and LLVM code pass the same addresses (LLVM: C's default argument
promotions past the ``...``), checked against the original at several sizes."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from core_compiler.codegen.c import COptions, generate_c
from core_compiler.runtime.cpu_variants import check_llvm_cpu
from core_compiler.runtime.differential import check_c
from tests.helpers import analyze, check_cpu, named

ARGS = """
#include <stdio.h>

__attribute__((noinline)) void bump3(double *p) { p[0] += 1.0; p[1] += 2.0; p[2] *= 0.5; }
__attribute__((noinline)) void addto(double *acc, double v) { *acc += v; }
__attribute__((noinline)) void scale_row(int m, float *r, float f) { for (int j = 0; j < m; j++) r[j] *= f; }
__attribute__((noinline)) void stamp(void *p, int i) { ((double *)p)[0] = i * 0.5; }

void offsets(int n, double *a) {
  for (int i = 0; i + 3 <= n; i += 3)
    bump3(a + i);
}

void elements(int n, double *a, double *b) {
  for (int i = 1; i < n; i++) {
    bump3(&a[i - 1]);
    b[i] = a[i] + b[i - 1];
  }
}

void sum_by_address(int n, const double *a, double *out) {
  double s = 0.0;
  for (int i = 0; i < n; i++)
    addto(&s, a[i]);
  out[0] = s;
}

void private_sums(int n, int m, const double *a, double *out) {
  for (int i = 0; i < n; i++) {
    double s = 0.0;
    for (int j = 0; j < m; j++)
      addto(&s, a[j] * i);
    out[i] = s;
  }
}

void rows(int n, int m, float A[n][m]) {
  for (int i = 0; i < n; i++)
    scale_row(m, &A[i][0], 0.5f + i);
}

void row_offsets(int n, int m, float A[n][m], double *a) {
  for (int i = 1; i < n; i++) {
    scale_row(m - 1, A[i] + 1, 0.5f + i);
    bump3(a + i - 1);
  }
}

void casts(int n, double *a) {
  for (int i = 0; i < n; i++)
    stamp((void *)&a[n - 1 - i], i);
}

void format_all(int n, const double *a, char out[n][24]) {
  for (int i = 0; i < n; i++)
    snprintf(out[i], 24, "%6.2f|%d|%s", a[i], i, "x\\t");
}

void format_float(int n, const float *a, char out[n][24]) {
  for (int i = 0; i < n; i++) {
    short k = i;
    snprintf(out[i], 24, "%.3f %d", a[i] * 2.0f, k);
  }
}

void log_and_update(int n, double *a) {
  for (int i = 0; i < n; i++) {
    printf("before %d %g\\n", i, a[i]);
    a[i] = a[i] * 2.0 + 1.0;
    printf("after %d %g\\n", i, a[i]);
  }
}
"""


@pytest.fixture(scope="module")
def args_file(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("opaque_args") / "args.c"
    path.write_text(ARGS)
    return str(path)


def the_call(function: str):  # type: ignore[no-untyped-def]
    f = analyze(ARGS).function(function)
    assert f is not None and len(f.scops) == 1 and not named(list(f.remarks), "ImpureCall")
    [call] = [s for s in f.scops[0].scop.statements if s.info.opaque_calls]
    return f, call


def test_an_address_in_an_array_may_touch_all_of_it() -> None:
    f, call = the_call("offsets")
    assert [(a.array, a.may) for a in call.writes] == [("a", True)]
    assert "-> a[hx_o0]" in str(call.writes[0].relation)  # any element of `a`, not only a[i..]
    assert call.writes[0].info.at is not None and call.writes[0].info.at[0].isl() == "i"  # passed: &a[i]
    [note] = named(list(f.remarks), "OpaqueCall")
    assert "it is treated as reading and writing all of `a`," in note.message
    _, elements = the_call("elements")
    assert [a.array for a in elements.writes] == ["a"]


def test_an_offset_in_a_row_or_a_sum_of_steps_is_an_address() -> None:
    """`A[i] + 1` points to A[i][1], `a + i - 1` to a[i - 1]: all of `A` and `a`, maybe."""
    f = analyze(ARGS).function("row_offsets")
    assert f is not None and len(f.scops) == 1 and not named(list(f.remarks), "ImpureCall")
    first, second = f.scops[0].scop.statements
    assert [(a.array, [x.isl() for x in a.info.at or ()]) for a in first.writes] == [("A", ["i", "1"])]
    assert [(a.array, [x.isl() for x in a.info.at or ()]) for a in second.writes] == [("a", ["i - 1"])]


def test_the_address_of_a_number_is_read_and_written() -> None:
    """`addto(&s, a[i])` reads and may write `s`: the loop carries it (a chain, as `s += a[i]`)."""
    f, call = the_call("sum_by_address")
    assert ("s", True) in [(a.array, a.may) for a in call.writes]
    assert "s" in [a.array for a in call.reads]
    assert not f.scops[0].deps.loops[0].parallel
    [note] = named(list(f.remarks), "OpaqueCall")
    assert "reading and writing all of `s`" in note.message


def test_a_variadic_call_reads_its_values_and_keeps_its_order() -> None:
    f = analyze(ARGS).function("log_and_update")
    assert f is not None and len(f.scops) == 1
    deps = f.scops[0].deps
    state = sorted(str(d) for d in deps.deps if d.array == "global state")
    assert "output S0 -> S2 on global state" in state and "output S2 -> S0 on global state" in state
    first, _, last = f.scops[0].scop.statements
    assert [a.array for a in first.reads] == ["a"] and [a.array for a in last.reads] == ["a"]


@pytest.mark.slow
@pytest.mark.parametrize("function", ["private_sums", "format_float"])
def test_generated_code_matches_the_original(args_file: str, function: str) -> None:
    """`&s` of a scalar private to `i`; `snprintf` with a `float` and a `short` past its `...`
    (promoted to `double` and `int`)."""
    matches_everywhere(args_file, function)


def test_the_source_order_passes_the_stack_slot(args_file: str) -> None:
    """The source-order variant keeps `s` on the stack (one slot, as the C does): `&s` is that
    slot, not the expanded array the other schedules use (a wrong `out` before the fix)."""
    for n, m in ((9, 5), (1, 3)):
        result = check_llvm_cpu(args_file, "private_sums", {"n": n, "m": m}, variants=("source order",), threads=1)
        assert result.ok, result.report()


@pytest.mark.long
@pytest.mark.parametrize("function", ["elements", "offsets", "sum_by_address", "rows", "row_offsets", "casts", "format_all"])
def test_the_others_match_too(args_file: str, function: str) -> None:
    matches_everywhere(args_file, function)


def matches_everywhere(path: str, function: str) -> None:
    for n, m in ((37, 5), (1, 1), (0, 0), (8, 33)):
        values = {"n": n, "m": m}
        cpu = check_cpu(path, function, values, threads=2)
        assert cpu.ok, f"{values}\n{cpu.report()}"
        c = check_c(path, function, values, openmp=True)
        assert c.ok and c.kernels == 1, f"{values}\n{c.comparison.report()}"


@pytest.mark.slow
def test_printf_prints_in_the_original_order(args_file: str, tmp_path: Path) -> None:
    """The C target's `log_and_update` prints what the original prints, line for line."""
    generated = generate_c(analyze(ARGS, args_file), ARGS, COptions(openmp=True)).source
    assert 'printf("before %d %g\\n", (c0), a[(c0)]);' in generated
    main = "\nint main(void) { double a[7] = {1, 2, 3, 4, 5, 6, 7}; log_and_update(7, a); return 0; }\n"
    printed = []
    for name, text in (("original", ARGS), ("generated", generated)):
        source = tmp_path / f"{name}.c"
        source.write_text(text + main)
        subprocess.run(["cc", "-O1", "-fopenmp", "-o", str(tmp_path / name), str(source)], check=True)
        printed.append(subprocess.run([str(tmp_path / name)], capture_output=True, text=True, check=True).stdout)
    assert printed[0] == printed[1] and printed[0].count("\n") == 14
