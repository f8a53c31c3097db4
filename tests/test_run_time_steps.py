"""Loops that step by a size known only at run time (issue 26): ``for (i = lo; i < n; i += s)``
is read as ``if (s >= 1) for (i = lo; i < n; i++)`` whose statements run where
``(i - lo) % s == 0`` (``i -= s``: ``(lo - i) % s``) (`core_compiler/frontend/run_time_steps.py`, `RunTimeStep`), checked against
the original at several sizes and steps (1, a step past the extent, non-multiples)."""

from __future__ import annotations

import pytest

from core_compiler.runtime.differential import check_c
from tests.helpers import analyze, check_cpu, named, range_of

STEPS = """
void strided(int n, int s, double *a) {
  for (int i = 0; i < n; i += s)
    a[i] = a[i] * 2.0;
}

void rows_by(int n, int m, int s, double A[n][m]) {
  for (int i = 0; i < n; i++)
    for (int j = 1; j < m; j += s) {
      double t = A[i][j - 1];
      A[i][j] += 1.0 + t;
    }
}

void blocks(int n, int s, const double *a, double *c) {
  for (int ii = 0; ii < n; ii += s)
    for (int i = ii; i < n && i < ii + s; i++)
      c[i] = a[i] + ii;
}

void from(int n, int s, int lo, double *a) {
  int i;
  for (i = lo + 1; i < n; i += s)
    a[i] = a[i - 1] + i;
}

void changes(int n, int s, double *a) {
  for (int i = 0; i < n; i += s) {
    a[i] = 1.0;
    s = s + 1;
  }
}

void down(int n, int s, double *a) {
  for (int i = n - 1; i >= 0; i -= s)
    a[i] = a[i] * 0.5 + i;
}

void reads(int n, const int *s, double *a) {
  for (int i = 0; i < n; i += s[0])
    a[i] = 1.0;
}

void mirror(int n, int s, double *a) {
  for (int i = 0; i < n; i += s)
    a[i] = 1.0 + a[n - 1 - i];
}
"""


@pytest.fixture(scope="module")
def steps_file(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("steps") / "steps.c"
    path.write_text(STEPS)
    return str(path)


def test_a_run_time_step_is_a_guarded_loop() -> None:
    f = analyze(STEPS).function("strided")
    assert f is not None and len(f.scops) == 1 and not [r for r in f.remarks if r.kind.name == "MISSED"]
    [note] = named(list(f.remarks), "RunTimeStep")
    assert note.range == range_of(STEPS, "for (int i = 0; i < n; i += s)")
    assert note.message == (
        "`i += s` steps by `s`, known only at run time: hexplore reads the loop as one over every `i` (step 1) "
        "whose statements run where `(i - 0) % s == 0`, assuming `s >= 1` (with `s <= 0` the loop would not "
        "end, or would overflow `i`, and the generated code does nothing); it visits `s` times as many `i` as "
        "the original"
    )
    scop = f.scops[0].scop
    assert str(scop.statements[0].domain) == "[n, s] -> { S0[i] : s > 0 and 0 <= i < n }"  # the assumption
    assert f.scops[0].deps.loops[0].parallel


def test_dependences_are_those_of_every_counter_value() -> None:
    """`a[i] = a[i - 1] + i` with a step of 2 carries nothing, but the model sees every `i`: the
    loop stays sequential (safe)."""
    f = analyze(STEPS).function("from")
    assert f is not None and len(f.scops) == 1
    assert not f.scops[0].deps.loops[0].parallel


@pytest.mark.parametrize(
    "function, says",
    [
        ("changes", "but the loop changes `s`, which its step or start reads"),
        ("reads", "but its step or start reads an array or calls a function"),
    ],
)
def test_what_stays_refused(function: str, says: str) -> None:
    f = analyze(STEPS).function(function)
    assert f is not None and not f.scops
    [refused] = named(list(f.remarks), "NonCanonicalLoop")
    assert says in refused.message and not named(list(f.remarks), "RunTimeStep")


SIZES = [(37, 3), (1, 1), (0, 2), (33, 32)]


@pytest.mark.slow
@pytest.mark.parametrize("function", ["rows_by"])
def test_generated_code_matches_the_original(steps_file: str, function: str) -> None:
    """A step on the inner loop with a declaration in its body (blocks of a run-time size and the
    others in the long tier)."""
    matches_everywhere(steps_file, function)


@pytest.mark.long
@pytest.mark.parametrize("function", ["strided", "from", "mirror", "down", "blocks"])
def test_the_others_match_too(steps_file: str, function: str) -> None:
    matches_everywhere(steps_file, function)


def matches_everywhere(path: str, function: str) -> None:
    for n, s in SIZES:
        values = {"n": n, "m": 7, "s": s, "lo": 2}
        cpu = check_cpu(path, function, values, threads=2)
        assert cpu.ok, f"{values}\n{cpu.report()}"
        c = check_c(path, function, values, openmp=True)
        assert c.ok and c.kernels == 1, f"{values}\n{c.comparison.report()}"
