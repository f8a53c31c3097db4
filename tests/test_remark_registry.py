"""Remark names are a closed vocabulary: every name the code emits is in
`core_compiler/remark_names.py` with its kind and pass, and `lsp/REMARKS.md` (where editors link
each diagnostic) is generated from it.

Two ways to find the emitted names: a static scan of the source (calls of the remark helpers with
a literal name, and the literals that become a name later: `ir.Note`s, opaque IR nodes, region
problems), and the remarks that analysis, compilation and differentiation actually emit on the
bundled corpora and on the reject cases of `test_scop_rejects.py`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from core_compiler.remark_names import REMARK_NAMES, markdown
from core_compiler.remarks import Remark, RemarkKind
from core_compiler.source import SourceRange

ROOT = Path(__file__).resolve().parent.parent
SCANNED = ("core_compiler", "explorer", "lsp", "tui")

# helper -> (position of the name argument, kind; None: the kind is the first argument)
MAKERS: dict[str, tuple[int, RemarkKind | None]] = {
    "passed": (1, RemarkKind.PASSED),
    "missed": (1, RemarkKind.MISSED),
    "analysis": (1, RemarkKind.ANALYSIS),
    "remark": (2, None),
    "Remark": (2, None),
}
# calls in the front end and the region checks whose argument becomes a remark's name later:
# an `ir.Note` is an Analysis remark (analysis.py), an opaque node or a region problem a Missed
# one, a problem appended to a region's `assumptions` an Analysis one (detect.py)
SOURCES = {
    "Note": 0,
    "OpaqueStmt": 0,
    "OpaqueExpr": 0,
    "OtherLoop": 1,
    "opaque": 1,
    "Problem": 0,
    "problem": 0,
    "affine_or_problem": 2,
    "non_affine": 1,
}
SOURCE_DIRS = ("core_compiler/frontend", "core_compiler/scop")
# names computed from a value whose literals are among the SOURCES: (file, expression)
COMPUTED = {
    ("core_compiler/analysis.py", "n.name"),  # ir.Note
    ("core_compiler/cuda/grid.py", "n.name"),  # ir.Note of the kernel rewrite (`UnrolledBlockLoop`)
    ("core_compiler/scop/detect.py", "p.reason"),  # region problems
    ("core_compiler/scop/detect.py", "a.reason"),  # region assumptions
    ("core_compiler/ad/differentiate.py", "p.reason"),  # region problems, as AD reports them
    ("core_compiler/scop/region.py", "s.reason"),  # opaque statements and loops
    ("core_compiler/scop/region.py", "e.reason"),  # opaque expressions
    ("core_compiler/scop/region.py", "reason"),  # the parameter of affine_or_problem/non_affine
    ("core_compiler/frontend/lower.py", "reason"),  # the parameter of opaque()
    ("core_compiler/frontend/lower.py", "e.reason"),  # an opaque expression as a statement
}


@dataclass(frozen=True)
class Emitted:
    name: str
    kind: RemarkKind | None  # None: not known statically
    where: str  # file:line


def _literals(e: ast.expr, fn: ast.AST | None, module: ast.Module) -> tuple[set[str], list[str]]:
    """The string literals `e` can be, and the parts of it that are computed (as source text).
    Follows ``a if c else b``, a local variable assigned only literals, and a call of a function of
    the same module (its returns)."""
    if isinstance(e, ast.Constant) and isinstance(e.value, str):
        return {e.value}, []
    if isinstance(e, ast.IfExp):
        (a, ca), (b, cb) = _literals(e.body, fn, module), _literals(e.orelse, fn, module)
        return a | b, ca + cb
    if isinstance(e, ast.Name) and fn is not None:
        values = [
            a.value
            for a in ast.walk(fn)
            if isinstance(a, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == e.id for t in a.targets)
        ]
        resolved = [_literals(v, None, module) for v in values]  # None: no variable of a variable
        if values and not any(c for _, c in resolved):
            return set().union(*(a for a, _ in resolved)), []
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name):
        called = next(
            (d for d in module.body if isinstance(d, ast.FunctionDef) and d.name == e.func.id), None
        )
        if called is not None:
            found: set[str] = set()
            computed: list[str] = []
            for r in ast.walk(called):
                if isinstance(r, ast.Return) and r.value is not None:
                    a, ca = _literals(r.value, called, module)
                    found, computed = found | a, computed + ca
            return found, computed
    return set(), [ast.unparse(e)]


def _callee(call: ast.Call) -> str | None:
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def _source_kind(call: ast.Call, name: str, parents: dict[ast.AST, ast.AST]) -> RemarkKind:
    if name == "Note":
        return RemarkKind.ANALYSIS
    up = parents.get(call)
    if isinstance(up, ast.Call) and isinstance(up.func, ast.Attribute) and up.func.attr == "append":
        target = up.func.value
        if isinstance(target, ast.Attribute) and target.attr == "assumptions":
            return RemarkKind.ANALYSIS
    return RemarkKind.MISSED


def scan(path: Path, rel: str) -> tuple[list[Emitted], list[tuple[str, str]]]:
    """The names `path` emits, and its computed names as (file, expression) with their lines."""
    module = ast.parse(path.read_text(encoding="utf-8"))
    parents = {child: node for node in ast.walk(module) for child in ast.iter_child_nodes(node)}
    sources = rel.startswith(SOURCE_DIRS)
    found: list[Emitted] = []
    computed: list[tuple[str, str]] = []
    for call in (n for n in ast.walk(module) if isinstance(n, ast.Call)):
        name = _callee(call)
        if name in MAKERS and rel != "core_compiler/remarks.py":
            pos, kind = MAKERS[name]
            if kind is None and call.args and isinstance(call.args[0], ast.Attribute):
                kind = RemarkKind[call.args[0].attr]
        elif name in SOURCES and sources:
            pos, kind = SOURCES[name], _source_kind(call, name, parents)
        else:
            continue
        if len(call.args) <= pos:
            continue
        fn = parents.get(call)
        while fn is not None and not isinstance(fn, ast.FunctionDef):
            fn = parents.get(fn)
        literals, exprs = _literals(call.args[pos], fn, module)
        found += [Emitted(x, kind, f"{rel}:{call.lineno}") for x in sorted(literals)]
        computed += [(rel, f"{e}  (line {call.lineno})") for e in exprs]
    return found, computed


def scan_tree() -> tuple[list[Emitted], list[tuple[str, str]]]:
    found: list[Emitted] = []
    computed: list[tuple[str, str]] = []
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*.py")):
            f, c = scan(path, path.relative_to(ROOT).as_posix())
            found += f
            computed += c
    return found, computed


def unregistered(emitted: list[Emitted]) -> list[str]:
    out = []
    for e in emitted:
        entry = REMARK_NAMES.get(e.name)
        if entry is None:
            out.append(f"{e.where}: `{e.name}` is not registered in core_compiler/remark_names.py")
        elif e.kind is not None and e.kind is not entry.kind:
            out.append(
                f"{e.where}: `{e.name}` is emitted as {e.kind.value}, registered as {entry.kind.value}"
            )
    return out


# ------------------------------------------------------------------------------------ static


def test_every_name_in_the_source_is_registered() -> None:
    emitted, _ = scan_tree()
    assert len({e.name for e in emitted}) > 40  # the scan sees the code
    assert unregistered(emitted) == []


def test_every_computed_name_comes_from_a_known_source() -> None:
    """A name computed from a value is registered only through the literals of that value's
    source (SOURCES); a new kind of computed name must say where its literals come from."""
    _, computed = scan_tree()
    unknown = [f"{f}: {e}" for f, e in computed if (f, e.split("  (line")[0]) not in COMPUTED]
    assert unknown == []


def test_the_scan_finds_a_name_that_is_not_registered(tmp_path: Path) -> None:
    src = tmp_path / "new_pass.py"
    src.write_text(
        "def f(r):\n"
        "    name = 'NotARemarkYet' if r else 'ParallelLoop'\n"
        "    return [missed('p', name, 'why', r), Remark(RemarkKind.PASSED, 'p', 'KeptOnCpu', 'm', r)]\n"
    )
    emitted, computed = scan(src, "core_compiler/new_pass.py")
    assert computed == []
    assert unregistered(emitted) == [
        "core_compiler/new_pass.py:3: `NotARemarkYet` is not registered in core_compiler/remark_names.py",
        "core_compiler/new_pass.py:3: `ParallelLoop` is emitted as Missed, registered as Analysis",
        "core_compiler/new_pass.py:3: `KeptOnCpu` is emitted as Passed, registered as Missed",
    ]


def test_the_lsp_severity_overrides_name_registered_remarks() -> None:
    from lsp.diagnostics import _BY_NAME

    assert set(_BY_NAME) - set(REMARK_NAMES) == set()


# ----------------------------------------------------------------------------------- dynamic


def _emitted_on(path: str, text: str | None = None) -> list[Remark]:
    """Every remark analysis, `compile` (cuda, opencl offloading everything, c with OpenMP) and
    differentiation (with respect to every floating-point parameter) emit on one file."""
    from core_compiler.ad import NotDifferentiable, differentiate
    from core_compiler.ad.differentiate import float_param
    from core_compiler.analysis import analyze_file
    from core_compiler.codegen.c import COptions
    from core_compiler.compile import compile_file

    fa = analyze_file(path, text)
    out = list(fa.all_remarks())
    if not any(f.scops for f in fa.functions):
        return out
    out += compile_file(fa, "cuda", text=text).remarks
    out += compile_file(fa, "opencl", text=text, always_offload=True).remarks
    out += compile_file(fa, "c", c_options=COptions(openmp=True), text=text).remarks
    for f in fa.functions:
        wrt = tuple(p.name for p in f.function.params if float_param(p))
        if f.scops and wrt:
            try:
                out += differentiate(path, f.function.name, wrt, text=text).remarks
            except NotDifferentiable as e:  # its remarks say why, with ranges: registered too
                out += e.remarks
    return out


def check_emitted(remarks: list[Remark]) -> list[str]:
    """What is wrong with `remarks`: unregistered names, another kind or pass, empty messages."""
    bad = []
    for r in remarks:
        entry = REMARK_NAMES.get(r.name)
        if entry is None:
            bad.append(f"{r.range}: `{r.name}` ({r.pass_name}) is not registered")
        elif r.kind is not entry.kind or r.pass_name not in entry.passes:
            bad.append(f"{r.range}: `{r.name}` is {r.kind.value} from `{r.pass_name}`, registered as "
                       f"{entry.kind.value} from {entry.passes}")  # fmt: skip
        if not r.message.strip():
            bad.append(f"{r.range}: `{r.name}` has an empty message")
    return sorted(set(bad))


# one function per remark that the reject cases, the editor's and AD's files do not emit
SNIPPETS = """
#include <math.h>
#include <stddef.h>
void delinearized(int n, double *A) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      A[i * n + j] = 0.0;
}
void guarded(int n, double *x) {
  for (int i = 0; i < n; i++)
    if (x[i] < 0) x[i] = 0;
}
void while_as_for(int n, double *a) {
  int i = 0;
  while (i < n) { a[i] = 1.0; i++; }
}
void not_null(int n, double *a) {
  if (a == NULL) return;
  for (int i = 0; i < n; i++) a[i] = 1.0;
}
void pointer_into_array(int n, int m, double *A, const double *v) {
  for (int i = 0; i < n; i++) {
    double *row = A + i * m;
    for (int j = 0; j < m; j++) row[j] += v[j];
  }
}
void wraps(int n, double a[n], double b[n]) {
  for (int i = 0; i < n; i++) b[i] = a[(i - 1) % n];
}
void side_effect(int n, double *a, double *b) {
  for (int i = 0; i < n; i++) a[i] = (b[i] = 2) + 1;
}
void floored(int n, double x[n], double y[n]) {
  for (int i = 0; i < n; i++) y[i] = floor(x[i]) + x[i];
}
void undeclared(int n, double *a) {
  __pencil_assume(n > 0);
  for (int i = 0; i < n; i++) a[i] = 1.0;
}
void induction(int n, double *a, double *b) {
  for (int i = 0; i + 1 < n; i++) { int j = i + 1; b[i] = a[j]; }
}
void breaks(int n, double *a) {
  for (int i = 0; i < n; i++) { if (i > 5) break; a[i] = 1.0; }
}
void continues(int n, double *a) {
  for (int i = 0; i < n; i++) { if (i % 3 == 0) continue; a[i] = 1.0; }
}
static void bump(double *a, int i) { a[i] += 1.0; }
void bumps(int n, double *a) {
  for (int i = 0; i < n; i++) bump(a, i);
}
__attribute__((noinline)) void log_row(int i, double *a) { a[i] += 1.0; }
void opaque_call(int n, double *a) {
  for (int i = 0; i < n; i++) log_row(i, a);
}
void run_time_step(int n, int s, double *a) {
  for (int i = 0; i < n; i += s) a[i] = 0.0;
}
struct pt { double x, vx; };
void fields(int n, struct pt *p) {
  for (int i = 0; i < n; i++) p[i].x += p[i].vx;
}
struct cell { int n; double *data; };
void field_pointer(int n, struct cell *c) {
  for (int i = 0; i < n; i++) c->data[i] = 0.0;
}
void report(double *p);
void more_than_a_nest(int n, double A[n][n], double B[n][n]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      for (int k = 0; k < n; k++) A[i][j] += B[i][k] * B[k][j];
  report(A[n / 2]);  /* not modeled (a row at a division): the function is more than its nest */
}
void directed(int n, double A[n][n], double B[n][n], double *a) {
  #pragma hexplore gpu block(32, 8)
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) B[i][j] = 2.0 * A[i][j];
}
void kept(int n, double A[n][n], double B[n][n]) {
  #pragma hexplore cpu
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) B[i][j] = 2.0 * A[i][j];
}
void refused(int n, double *a) {
  #pragma hexplore gpu
  for (int i = 1; i < n; i++) a[i] += a[i - 1];
  #pragma hexplore gpu blocks(32)
  a[0] = 0.0;
  #pragma hexplore cpu
  a[1] = 0.0;
}
"""


@pytest.fixture(scope="module")
def emitted() -> list[Remark]:
    """The small inputs: every reject case, the compile decisions, the editor's and AD's files."""
    from tests.test_remark_paths import SOURCE
    from tests.test_scop_rejects import CASES

    out: list[Remark] = []
    for i, (_, src, _) in enumerate(CASES):
        out += _emitted_on(f"reject{i}.c", src)
    out += _emitted_on("paths.c", SOURCE)
    out += _emitted_on("snippets.c", SNIPPETS)
    out += _emitted_on(
        "broken.c", "void f(int n, double *a) { for (int i = 0; i < n; i++) a[i] = ; }\n"
    )
    for pattern in ("tests/ad/kernels/*.c", "tests/lsp/fixtures/*.c", "examples/*.c", "tests/cuda_input/kernels/*.cu"):
        for path in sorted(ROOT.glob(pattern)):
            out += _emitted_on(str(path))
    return out


@pytest.mark.slow  # compiles every suite kernel for every back end (25 s)
def test_every_emitted_remark_is_registered_with_its_kind_and_pass(emitted: list[Remark]) -> None:
    assert check_emitted(emitted) == []


@pytest.mark.slow  # shares the 25 s fixture above
def test_the_small_inputs_reach_most_names(emitted: list[Remark]) -> None:
    # a timed CPU run, a bug, isl giving up or a derivative hexplore cannot parse emit the others
    rare = {
        "TilingNotFaster",
        "ParallelNotFaster",
        "RaceStopped",  # a run whose race ran out of time (tests/runtime/test_tuning.py)
        "TunedVariant",  # a run that read the tuning cache (tests/runtime/test_tuning.py)
        "TunedConfiguration",  # a compile that read `hexplore tune`'s record (tests/tune/test_ray_sweep.py)
        "VectorLoads",  # an OpenCL vector width, which only tuning asks for (tests/tune/test_vector_width.py)
        "NoVectorLoads",
        "TransposedLayout",  # the OpenCL transposed layout, which only tuning asks for (tests/tune/test_layout.py)
        "NoTransposedLayout",
        "InternalError",
        "DerivativeNotAnalyzed",
        "DerivativeNotOneScop",  # a derivative hexplore cannot model again
        "NotInReverseSweep",  # a statement reverse mode cannot map back to its assignment
        "AnalysisBudgetExceeded",
        "CpuCodeBudgetExceeded",  # isl giving up on the C target (tests/fuzz/test_regressions.py)
        "ScheduleBudgetExceeded",  # isl's scheduler giving up (tests/fuzz/test_regressions.py)
        # hostile input, each emitted (and its name checked) by tests/test_hostile_input.py
        "FrontendCrashed",
        "FrontendBudgetExceeded",
        "IncludeRefused",
        "ExpressionTooLarge",
        "NonAsciiName",
        "PolyhedralLibraryError",  # an isl error other than these: no input is known to cause one
    }
    assert sorted(set(REMARK_NAMES) - rare - {r.name for r in emitted}) == []


def test_a_remark_with_another_kind_pass_or_no_message_is_caught() -> None:
    r = Remark(
        RemarkKind.MISSED, "dependences", "ParallelLoop", " ", SourceRange("t.c", 1, 1, 1, 2)
    )
    assert check_emitted([r, replace(r, name="Unheard", message="m")]) == [
        "t.c:1:1: `ParallelLoop` has an empty message",
        "t.c:1:1: `ParallelLoop` is Missed from `dependences`, registered as Analysis from ('dependences',)",
        "t.c:1:1: `Unheard` (dependences) is not registered",
    ]


# `make test` samples two kernels (about 8 s of CPU each: analysed, compiled three ways and
# differentiated; the `emitted` fixture's small inputs reach most names); the long tier takes all.
SAMPLED = ("gemm.c", "dot_norm.c")


@pytest.mark.slow
@pytest.mark.parametrize(
    "path",
    [p if p.name in SAMPLED else pytest.param(p, marks=pytest.mark.long) for p in sorted(ROOT.glob("tests/kernels/*.c"))],
    ids=lambda p: p.name,
)
def test_every_remark_on_the_kernels_is_registered(path: Path) -> None:
    assert check_emitted(_emitted_on(str(path))) == []


# ------------------------------------------------------------------------------ the registry


def test_every_entry_has_a_one_line_doc() -> None:
    for e in REMARK_NAMES.values():
        assert e.doc.strip() and "\n" not in e.doc and e.doc.endswith("."), e.name
        assert e.passes and e.section, e.name


def test_remarks_md_is_generated_from_the_registry() -> None:
    doc = (ROOT / "lsp" / "REMARKS.md").read_text(encoding="utf-8")
    anchors = {
        line[len('<a id="') : -len('"></a>')]
        for line in doc.splitlines()
        if line.startswith("<a id=")
    }
    assert sorted(set(REMARK_NAMES) - anchors) == [], "registered but not in REMARKS.md"
    assert sorted(anchors - set(REMARK_NAMES)) == [], "in REMARKS.md but not registered (stale)"
    assert doc == markdown(), (
        "regenerate: python -m core_compiler.remark_names --markdown > lsp/REMARKS.md"
    )
