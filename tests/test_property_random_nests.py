"""Property: for random affine loop nests, hexplore's generated C and OpenCL compute what the
original C computes.

Each example is a C function with VLA parameters, 2-4 nested loops (triangular bounds such as
``j < i + 1`` or ``j < n - i`` included), 1-3 statements at various depths (imperfect nests) and
affine subscripts with positive and negative coefficients (``A[n - i][2*j + 1]``). Statements read
the arrays they and the others write, so the nests carry flow, anti and output dependences that the
schedule, the tiling and the GPU mapping must respect.

The generated C is checked sequentially at the tiny sizes and with OpenMP (two threads) at the
small ones.

Every access is in bounds by construction: each iterator ``v`` stays within ``0 <= v <= P`` for one
size parameter ``P`` (its loop's bounds never go past ``P + 1``), a subscript with a negative
coefficient ``-a*v`` also adds ``a*P``, so its value lies in ``[c, c + sum |a|*P]``, and each array
dimension's extent is the largest such bound over its accesses, plus one.

Values stay tame (every statement is a convex-ish mix of inputs in [0.5, 1.5)), so the floating
results do not overflow and the only differences allowed are the comparison's rounding slack.
"""

from __future__ import annotations

import hashlib
import os
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.strategies import DrawFn

from core_compiler.pipeline import GpuOptions
from core_compiler.runtime.differential import check_c, check_opencl
from core_compiler.transform.cpu_schedule import CpuOptions
from core_compiler.transform.gpu_mapping import MappingOptions

LONG = os.environ.get("HEXPLORE_LONG") == "1"  # `make test-long`: 25 examples; `make test`: the first 10

ITERATORS = ("i", "j", "k", "l")
ARRAYS = ("A", "B", "C")
COEFFS = ("0.5", "0.25", "0.125")

NEVER_RUNS = """void f(int n, double B[1])
{
  for (int i = 0; i < 0; i++)
    B[0] = 1.0;
}
"""


@dataclass(frozen=True)
class Loop:
    var: str
    lower: str
    upper: str  # exclusive
    size: str  # the parameter P with 0 <= var <= P


@dataclass(frozen=True)
class Subscript:
    coeffs: tuple[tuple[str, int], ...]  # iterator -> coefficient (nonzero)
    const: int  # >= 0

    def text(self, sizes: dict[str, str]) -> str:
        terms = []
        for v, a in self.coeffs:
            # -b*v alone could be negative: b*P - b*v is not, as 0 <= v <= P
            terms.append(_times(a, v) if a > 0 else f"{_times(-a, sizes[v])} - {_times(-a, v)}")
        if self.const or not terms:
            terms.append(str(self.const))
        return " + ".join(terms)

    def bound(self, sizes: dict[str, str]) -> dict[str, int]:
        """The largest value as ``{param: coefficient, "": constant}``."""
        out = {"": self.const}
        for v, a in self.coeffs:
            out[sizes[v]] = out.get(sizes[v], 0) + abs(a)
        return out


def _times(c: int, name: str) -> str:
    return name if c == 1 else f"{c}*{name}"


@dataclass(frozen=True)
class Access:
    array: str
    subscripts: tuple[Subscript, ...]

    def text(self, sizes: dict[str, str]) -> str:
        return self.array + "".join(f"[{s.text(sizes)}]" for s in self.subscripts)


@dataclass(frozen=True)
class Stmt:
    depth: int  # enclosing loops, 1..len(loops)
    after: bool  # after the loop nested at this depth (there is none at the innermost depth)
    target: Access
    op: str  # "=" | "+="
    reads: tuple[Access, ...]
    scalar: bool  # also reads `alpha`

    def text(self, sizes: dict[str, str]) -> str:
        terms = [f"{c} * {r.text(sizes)}" for c, r in zip(COEFFS, self.reads, strict=False)]
        if self.scalar:
            terms.append("0.125 * alpha")
        if self.op == "=":
            terms.append("0.0625")
        return f"{self.target.text(sizes)} {self.op} {' + '.join(terms)};"


@dataclass(frozen=True)
class Nest:
    params: tuple[str, ...]
    loops: tuple[Loop, ...]
    stmts: tuple[Stmt, ...]
    dims: tuple[tuple[str, int], ...]  # array -> number of dimensions
    tile: int

    @property
    def sizes(self) -> dict[str, str]:
        return {lp.var: lp.size for lp in self.loops}

    def accesses(self) -> list[Access]:
        return [a for s in self.stmts for a in (s.target, *s.reads)]

    def extent(self, array: str, d: int) -> str:
        """The largest subscript value over every access of `array` in dimension `d`, plus one."""
        top: dict[str, int] = {}
        for a in self.accesses():
            if a.array == array:
                for k, v in a.subscripts[d].bound(self.sizes).items():
                    top[k] = max(top.get(k, 0), v)
        terms = [p if c == 1 else f"{c}*{p}" for p, c in sorted(top.items()) if p and c]
        return " + ".join([*terms, str(top.get("", 0) + 1)])

    def source(self) -> str:
        used = sorted({a.array for a in self.accesses()})
        arrays = [
            f"double {name}" + "".join(f"[{self.extent(name, d)}]" for d in range(dict(self.dims)[name]))
            for name in used
        ]
        signature = ", ".join([*(f"int {p}" for p in self.params), "double alpha", *arrays])
        body = "\n".join(self._body(0, "  "))
        return f"void f({signature})\n{{\n{body}\n}}\n"

    def _body(self, depth: int, pad: str) -> list[str]:
        """The loop at `depth` and everything inside it."""
        loop = self.loops[depth]
        inner = pad + "  "
        here = [s for s in self.stmts if s.depth == depth + 1]
        lines = [f"{pad}for (int {loop.var} = {loop.lower}; {loop.var} < {loop.upper}; {loop.var}++) {{"]
        lines += [inner + s.text(self.sizes) for s in here if not s.after]
        if depth + 1 < len(self.loops):
            lines += self._body(depth + 1, inner)
        lines += [inner + s.text(self.sizes) for s in here if s.after]
        return [*lines, f"{pad}}}"]


# --------------------------------------------------------------------------------- strategies


def _loop(draw: DrawFn, index: int, outer: tuple[Loop, ...], params: tuple[str, ...]) -> Loop:
    size = draw(st.sampled_from(params))
    var = ITERATORS[index]
    same = [lp.var for lp in outer if lp.size == size]  # 0 <= v <= size: safe in `size - v`
    lowers = ["0", "1", *(lp.var for lp in outer), *(f"{size} - {v}" for v in same)]
    uppers = [size, f"{size} + 1", f"{size} - 1", *(f"{v} + 1" for v in same),
              *(f"{size} - {lp.var}" for lp in outer)]  # fmt: skip
    lower = draw(st.sampled_from(lowers))
    upper = draw(st.sampled_from([u for u in uppers if u != lower]))  # not trivially empty
    return Loop(var, lower, upper, size)


def _subscript(draw: DrawFn, iterators: tuple[str, ...]) -> Subscript:
    chosen = draw(st.lists(st.sampled_from(iterators), max_size=2, unique=True)) if iterators else []
    coeffs = tuple((v, draw(st.sampled_from((1, 1, 2, -1, -2)))) for v in sorted(chosen))
    return Subscript(coeffs, draw(st.integers(0, 2)))


def _access(draw: DrawFn, array: str, ndims: int, iterators: tuple[str, ...]) -> Access:
    return Access(array, tuple(_subscript(draw, iterators) for _ in range(ndims)))


def _pick(draw: DrawFn, dims: dict[str, int], iterators: tuple[str, ...]) -> Access:
    array = draw(st.sampled_from(ARRAYS))
    return _access(draw, array, dims[array], iterators)


def _stmt(draw: DrawFn, depth: int, n_loops: int, dims: dict[str, int]) -> Stmt:
    iterators = ITERATORS[:depth]
    target = _pick(draw, dims, iterators)
    reads = []
    for _ in range(draw(st.integers(1, 3))):
        if draw(st.booleans()):  # an in-place update: the target itself, or a neighbour of it
            shift = draw(st.integers(0, 1))
            subs = tuple(Subscript(s.coeffs, s.const + shift) for s in target.subscripts)
            reads.append(Access(target.array, subs))
        else:
            reads.append(_pick(draw, dims, iterators))
    after = depth < n_loops and draw(st.booleans())
    op = draw(st.sampled_from(("=", "+=")))
    return Stmt(depth, after, target, op, tuple(reads), draw(st.booleans()))


@st.composite
def nests(draw: DrawFn) -> Nest:
    params = ("n", "m")[: draw(st.integers(1, 2))]
    n_loops = draw(st.integers(2, 4))
    loops: tuple[Loop, ...] = ()
    for index in range(n_loops):
        loops = (*loops, _loop(draw, index, loops, params))
    dims = {a: draw(st.integers(1, 3)) for a in ARRAYS}
    depths = [n_loops, *draw(st.lists(st.integers(1, n_loops), max_size=2))]
    stmts = tuple(_stmt(draw, d, n_loops, dims) for d in draw(st.permutations(depths)))
    tile = draw(st.sampled_from((2, 3, 4, 32)))
    return Nest(params, loops, stmts, tuple(sorted(dims.items())), tile)


def size_sets(params: tuple[str, ...]) -> st.SearchStrategy[list[dict[str, int]]]:
    tiny = st.fixed_dictionaries({p: st.integers(0, 1) for p in params})
    small = st.fixed_dictionaries({p: st.integers(2, 6) for p in params})
    return st.tuples(tiny, small).map(list)


# ----------------------------------------------------------------------------------- property


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OMP_NUM_THREADS", "2")  # read when libgomp is loaded, in this process
        yield tmp_path_factory.mktemp("random-nests")


def _write(directory: Path, source: str) -> str:
    path = directory / f"nest_{hashlib.sha256(source.encode()).hexdigest()[:16]}.c"
    path.write_text(source)
    return str(path)


@pytest.mark.slow  # about 17 s of CPU per example (two compilers and PoCL): one here, 25 in the long tier
@settings(max_examples=25 if LONG else 1, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])  # fmt: skip
@given(data=st.data())
def test_generated_c_and_opencl_match_the_original(workdir: Path, data: st.DataObject) -> None:
    nest = data.draw(nests(), label="nest")
    source = nest.source()
    path = _write(workdir, source)
    for params, openmp in zip(data.draw(size_sets(nest.params), label="sizes"), (False, True), strict=True):
        where = f"\n{source}\nsizes {params}, tile {nest.tile}, OpenMP {openmp}"
        c = check_c(path, "f", params, cpu=CpuOptions(tile_size=nest.tile), openmp=openmp)
        assert c.ok and c.kernels == 1, textwrap.indent(c.comparison.report(), "  ") + where
        cl = check_opencl(path, "f", params, gpu=GpuOptions(mapping=MappingOptions(tile_size=nest.tile)))
        assert cl.ok and cl.kernels >= 1, textwrap.indent(cl.comparison.report(), "  ") + where


# Regressions the property found (both crashed map_to_gpu before gpu.py was fixed).


def test_a_loop_nest_that_never_runs(tmp_path: Path) -> None:
    """isl drops statements that never run: the GPU host AST then has no kernel instance."""
    path = _write(tmp_path, NEVER_RUNS)
    assert check_c(path, "f", {"n": 3}).ok
    assert check_opencl(path, "f", {"n": 3}).ok


PHASED = """void f(int n, int m, double B[2*m + 2*n + 3])
{
  for (int i = 1; i < n - 1; i++)
    for (int j = n - i; j < n; j++)
      for (int k = 0; k < m - j; k++)
        for (int l = m - k; l < m - i; l++)
          B[2*j + 2*l + 1] += B[2*j + 2*l + 2];
}
"""


def test_a_triangular_nest_with_a_carried_dependence(tmp_path: Path) -> None:
    """gpu.py once read a schedule dimension of this nest as fixed when it is not."""
    path = _write(tmp_path, PHASED)
    for tile in (4, 32):
        assert check_c(path, "f", {"n": 4, "m": 3}, cpu=CpuOptions(tile_size=tile)).ok
        assert check_opencl(path, "f", {"n": 4, "m": 3}, gpu=GpuOptions(mapping=MappingOptions(tile_size=tile))).ok
