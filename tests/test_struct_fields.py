"""Fields of arrays of structs as arrays (issue 26): ``bodies[i].vx`` with ``struct body *bodies``
is column 1 of ``bodies``, rows of the struct's size (`core_compiler/frontend/struct_fields.py`,
`FieldsAsArrays`); what cannot be read so safely is refused with a remark naming the field
(`StructField`). The generated C accesses ``bodies[i].vx`` itself and LLVM steps by the struct's
size: both run against the original on the same structs (padding and unused fields included)."""

from __future__ import annotations

import pytest

from core_compiler.ad import differentiate
from core_compiler.analysis import analyze_file
from core_compiler.codegen.c import COptions, generate_c
from core_compiler.compile import compile_file
from core_compiler.errors import NotDifferentiable
from core_compiler.runtime.differential import check_c
from tests.helpers import analyze, check_cpu, named, range_of

STRUCTS = """
struct body { double x, vx; };
struct particle { double x; int id; double vx, ax; };
struct vec { float x, y, z; };

void move(int n, struct body *bodies, double dt) {
  for (int i = 0; i < n; i++)
    bodies[i].x += dt * bodies[i].vx;
}

void chain(int n, struct body *b) {
  for (int i = 1; i < n; i++)
    b[i].x = b[i - 1].x + b[i].vx;
}

void cross(int n, struct body *b) {
  for (int i = 1; i < n; i++)
    b[i].x = b[i - 1].vx * 0.5;
}

void steps(int n, struct particle *p, double dt) {
  for (int t = 0; t < 3; t++)
    for (int i = 1; i < n; i++) {
      p[i].vx += dt * p[i].ax;
      p[i].x = p[i - 1].x + dt * p[i].vx;
    }
}

void norms(int n, struct vec v[n], float *restrict out) {
  for (int i = 0; i < n; i++)
    out[i] = v[i].x * v[i].x + v[i].y * v[i].y + v[i].z * v[i].z;
}

void first(int n, struct body *b, double *a) {
  for (int i = 0; i < n; i++)
    a[i] += b->x;
}
"""

REFUSED = """
struct particle { double x; int id; };
struct box { double lo[3]; double m; };
struct grid { int n; double *data; };
struct body { double x, vx; };
void use(struct body *b);

void tag(int n, struct particle *p) {
  for (int i = 0; i < n; i++)
    p[i].id = i;
  for (int i = 0; i < n; i++)
    p[i].x = 2 * p[i].x;
}

void boxes(int n, struct box *b) {
  for (int i = 0; i < n; i++)
    b[i].lo[0] = b[i].m;
}

void fill(int n, struct grid *g) {
  for (int i = 0; i < n; i++)
    g->data[i] = 0.0;
}

void bound(struct grid *g, double *a) {
  for (int i = 0; i < g->n; i++)
    a[i] = 0.0;
}

void by_value(int n, struct box s, double *a) {
  for (int i = 0; i < 3; i++)
    a[i] = s.lo[i];
}

void whole(int n, struct body *b) {
  for (int i = 0; i < n; i++)
    b[i].x = 1.0;
  use(b);
}
"""


@pytest.fixture(scope="module")
def structs_file(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("structs") / "structs.c"
    path.write_text(STRUCTS)
    return str(path)


def test_fields_are_columns_of_the_structs_memory() -> None:
    f = analyze(STRUCTS).function("move")
    assert f is not None and len(f.scops) == 1 and not named(list(f.remarks), "StructField")
    [bodies] = [a for a in f.scops[0].scop.arrays if a.name == "bodies"]
    assert bodies.fields == ("x", "vx") and bodies.elem_type == "double"
    [note] = named(list(f.remarks), "FieldsAsArrays")
    assert note.range == range_of(STRUCTS, "struct body *bodies")
    assert note.message == (
        "`bodies` is read as an array of rows of 2 `double`s, one row per `struct body` (`x` is column 0, "
        "`vx` is column 1): each field used is an array of its own, in the structs' memory (`bodies[i].f` "
        "in the generated code)"
    )
    assert f.scops[0].deps.loops[0].parallel


def test_padding_and_unused_fields_keep_their_place() -> None:
    """`int id` sits between `x` and `vx`: the row is 4 doubles, `vx` column 2, `ax` column 3."""
    f = analyze(STRUCTS).function("steps")
    assert f is not None and len(f.scops) == 1
    [p] = [a for a in f.scops[0].scop.arrays if a.name == "p"]
    assert p.fields == ("x", "", "vx", "ax")
    assert [e.const for e in p.extents[1:] if e is not None] == [4]


def test_one_field_is_one_array_and_two_are_two() -> None:
    """`b[i].x = b[i - 1].x + ...` carries a dependence; `b[i].x = b[i - 1].vx` does not: the
    fields of one struct are distinct memory."""
    fa = analyze(STRUCTS)
    chain, cross = fa.function("chain"), fa.function("cross")
    assert chain is not None and cross is not None
    assert not chain.scops[0].deps.loops[0].parallel
    assert cross.scops[0].deps.loops[0].parallel


@pytest.mark.parametrize(
    "function, needle, says",
    [
        ("tag", "p[i].id", "`p[i].x` is a `double` field of `struct particle`, and the loops also use its `int` fields (`id`)"),
        ("boxes", "b[i].lo", "`b[i].lo` is a field of type `double[3]`; hexplore reads the fields of an array of structs as arrays only where they are numbers"),
        ("fill", "g->data", "`g->data` is the pointer `data` stored in each `struct grid`: hexplore cannot tell which array it points to"),
        ("by_value", "s.lo", "`s.lo` reads a field of a struct that is not an array-of-structs parameter"),
        ("whole", "b[i].x", "`b` is also used whole (`b`), not only through its fields"),
    ],
)
def test_what_stays_refused_names_the_field(function: str, needle: str, says: str) -> None:
    f = analyze(REFUSED).function(function)
    assert f is not None and not f.scops
    refused = named(list(f.remarks), "StructField")
    assert refused and refused[0].range == range_of(REFUSED, needle)
    assert says in refused[0].message
    assert not named(list(f.remarks), "FieldsAsArrays")


def test_a_field_as_a_bound_is_an_element_read() -> None:
    """`i < g->n`: `g` is rows of 4 `int`s, and the bound reads one of them (said as written)."""
    f = analyze(REFUSED).function("bound")
    assert f is not None and not f.scops and named(list(f.remarks), "FieldsAsArrays")
    [refused] = named(list(f.remarks), "NonAffineLoopBound")
    assert refused.range == range_of(REFUSED, "g->n")
    assert refused.message == "the condition of loop `i` reads the array element `g[0].n`, whose value is only known at run time"


def test_the_c_target_accesses_the_fields_themselves(structs_file: str) -> None:
    generated = generate_c(analyze(STRUCTS, structs_file), STRUCTS, COptions())
    assert "bodies[(c0)].x += (dt * bodies[(c0)].vx);" in generated.source
    assert "v[(c0)].x * v[(c0)].x" in generated.source.replace("(v[(c0)].x", "v[(c0)].x")
    assert "b[0].x" in generated.source


@pytest.mark.slow
@pytest.mark.parametrize("function", ["steps"])
def test_generated_code_matches_the_original(structs_file: str, function: str) -> None:
    """`steps`: a padded struct, a dependence between elements, two loops (`norms`, `float`
    fields of a `struct vec v[n]` parameter, in the long tier)."""
    matches_everywhere(structs_file, function)


@pytest.mark.long
@pytest.mark.parametrize("function", ["move", "chain", "first", "norms"])
def test_the_others_match_too(structs_file: str, function: str) -> None:
    matches_everywhere(structs_file, function)


def matches_everywhere(structs_file: str, function: str) -> None:
    for n in (37, 1, 0, 33):
        cpu = check_cpu(structs_file, function, {"n": n}, threads=2)
        assert cpu.ok, f"n={n}\n{cpu.report()}"
        c = check_c(structs_file, function, {"n": n}, openmp=True)
        assert c.ok and c.kernels == 1, f"n={n}\n{c.comparison.report()}"


def test_no_derivative_through_struct_fields(structs_file: str) -> None:
    with pytest.raises(NotDifferentiable, match="reads the fields of `bodies`, an array of structs, as arrays"):
        differentiate(structs_file, "move", ("bodies",))


def test_the_cuda_host_prototype_keeps_the_struct(structs_file: str) -> None:
    """C callers of the host function pass `struct body *`: its prototype says so (the CUDA
    definition takes the same pointer as `double *`, one ABI)."""
    result = compile_file(analyze_file(structs_file, only="move"), "cuda", always_offload=True, text=STRUCTS)
    header = result.files["structs_move_host.h"]
    assert "void move(int n, struct body *bodies, double dt);" in header
    assert 'extern "C" void move(int n, double *bodies, double dt);' in header


@pytest.mark.long
@pytest.mark.parametrize("function", ["steps", "norms"])
def test_cuda_on_the_runtime_shim_matches(structs_file: str, function: str) -> None:
    """The CUDA host code copies the structs' memory whole and the kernels step by the struct:
    run on tests/cuda_cpu's shim of the CUDA runtime, against the original."""
    from tests.cuda_cpu import harness

    why = harness.unavailable()
    if why:
        pytest.skip(f"the CUDA CPU shim cannot build here: {why}")
    for n in (37, 1, 0):
        result = harness.check_cuda_cpu(structs_file, function, {"n": n})
        assert result.ok, f"n={n}"
