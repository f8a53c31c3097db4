"""Source maps from the printers (core_compiler/source_map.py): every mapped line of CUDA, OpenCL
and the C target assigns the array its statement writes, every statement has a line, the C
target's lines are those of the spliced file, and LLVM IR and PTX point at the statement's line.

Each check is also run on the map moved down one line, which it must reject: the checks can fail.
"""

from __future__ import annotations

import functools
import re

import pytest

from core_compiler.analysis import FileAnalysis, analyze_file
from core_compiler.codegen.c import generate_c
from core_compiler.codegen.cuda import generate_cuda
from core_compiler.codegen.opencl import generate_opencl
from core_compiler.llvm.cpu_lowering import lower_cpu, optimized_ast
from core_compiler.llvm.nvptx import lower_gpu, ptxas_path, run_ptxas
from core_compiler.pipeline import CPU_SCHEDULE, gpu_program
from core_compiler.scop.model import Scop
from core_compiler.source_map import SourceMap, join_mapped, statement_ranges, tag, untag
from core_compiler.transform.schedule import compute_schedule
from tests.conftest import KERNELS

FILES = ("gemm.c", "jacobi_2d.c", pytest.param("2mm.c", marks=pytest.mark.slow))  # 2mm: 6-9 s each (its GPU mapping)


@functools.cache
def analysis(file: str) -> tuple[FileAnalysis, str]:
    path = KERNELS / file
    text = path.read_text()
    return analyze_file(f"tests/kernels/{file}", text), text


def scops(file: str) -> list[Scop]:
    return [sa.scop for f in analysis(file)[0].functions for sa in f.scops]


def _assigns(line: str, array: str) -> bool:
    """`line` assigns an element of `array` (or its promoted copy ``private_C``, ``shared_A``),
    directly or with an atomic addition."""
    atomic = re.match(r"\s*\w*[aA]tomic\w*\(&(.*?),", line)
    target = atomic.group(1) if atomic else re.split(r"\s[-+*/]?=\s", line.strip(), maxsplit=1)[0]
    return bool(re.search(rf"(?<!\w)(\w+_)?{re.escape(array)}\b", target)) and (atomic or "=" in line)


def problems(text: str, smap: SourceMap, scop_list: list[Scop]) -> list[str]:
    """What is wrong with `smap` as the map of `text` for `scop_list` (empty: nothing)."""
    lines = text.split("\n")
    by_name = {(s.name, st.name): st for s in scop_list for st in s.statements}
    out = []
    for e in smap.entries:
        st = by_name[(e.scop, e.statement)]
        if e.range != st.range:
            out.append(f"{e}: not the statement's range")
        elif not (0 < e.line <= len(lines) and _assigns(lines[e.line - 1], st.writes[0].array)):
            out.append(f"line {e.line} does not write {st.writes[0].array}: {lines[e.line - 1] if e.line <= len(lines) else ''}")
    mapped = {(e.scop, e.statement) for e in smap.entries}
    out += [f"{k} has no line" for k in by_name if k not in mapped]
    return out


def check(text: str, smap: SourceMap, scop_list: list[Scop]) -> None:
    assert smap.entries
    assert problems(text, smap, scop_list) == []
    assert problems(text, smap.shifted(1), scop_list), "the check cannot tell a wrong map"
    assert "\x1f" not in text


@pytest.mark.parametrize("file", FILES)
def test_gpu_code_maps_each_statement_to_the_lines_that_assign_it(file: str) -> None:
    fa, _ = analysis(file)
    for f in fa.functions:
        for sa in f.scops:
            gpu = gpu_program(sa)
            program = generate_opencl(gpu)
            check(program.source, program.source_map, [sa.scop])
            cuda = generate_cuda(gpu, "k", offload_if="n < 0" if sa.scop.params else None)
            check(cuda.kernel_cu, cuda.kernel_map, [sa.scop])
            if sa.scop.params:  # the host's CPU fallback runs every statement too
                check(cuda.host_cu, cuda.host_map, [sa.scop])
            listing, smap = cuda.listing()
            assert problems(listing, smap, [sa.scop]) == []


@pytest.mark.parametrize("file", FILES)
def test_c_target_lines_survive_splicing(file: str) -> None:
    fa, text = analysis(file)
    generated = generate_c(fa, text)
    check(generated.source, generated.source_map, scops(file))
    assert generated.source.count("\n") > text.count("\n")  # lines moved: the map followed them
    kernel = next(s for s in scops(file) if s.function.startswith("kernel_"))
    for st in kernel.statements:  # the statement's own source line is no generated line of it
        assert st.range.line not in generated.source_map.lines_of(st.name, kernel.name)
    lines = generated.source.split("\n")
    for piece in generated.scops:  # each SCoP's own map, relative to its text, agrees with the file's
        own = [(e.statement, piece.text.split("\n")[e.line - 1].strip()) for e in piece.source_map.entries]
        in_file = [(e.statement, lines[e.line - 1].strip()) for e in generated.source_map.entries if e.scop == piece.scop]
        assert own == in_file


@pytest.mark.parametrize("file", FILES)
def test_llvm_ir_statements_carry_their_source_line(file: str) -> None:
    fa, _ = analysis(file)
    for f in fa.functions:
        for sa in f.scops:
            ast = optimized_ast(sa.scop, compute_schedule(sa.scop, sa.deps, CPU_SCHEDULE))
            module = lower_cpu(sa.scop, ast, f"{sa.scop.function}_opt")
            assert _dbg_problems(module.ir, module.source_map, sa.scop) == []
            assert _dbg_problems(module.ir, module.source_map.shifted(1), sa.scop)


def _dbg_problems(ir_text: str, smap: SourceMap, scop: Scop) -> list[str]:
    """Each mapped IR line's ``!dbg`` names a DILocation at its statement's line and column."""
    lines = ir_text.split("\n")
    where = {
        m.group(1): (int(m.group(3)), int(m.group(2)))
        for m in re.finditer(r"^(![0-9]+) = !DILocation\(column: (\d+), line: (\d+),", ir_text, re.M)
    }
    out = []
    for e in smap.entries:
        m = re.search(r"!dbg (![0-9]+)", lines[e.line - 1]) if e.line <= len(lines) else None
        if m is None or where.get(m.group(1)) != (e.range.line, e.range.col):
            out.append(f"line {e.line}: {lines[e.line - 1] if e.line <= len(lines) else ''}")
    missing = {st.name for st in scop.statements} - {e.statement for e in smap.entries}
    return out + [f"{name} has no instruction" for name in sorted(missing)]


@pytest.mark.parametrize("file", FILES)
def test_ptx_has_line_directives_of_the_statements(file: str) -> None:
    fa, _ = analysis(file)
    for f in fa.functions:
        for sa in f.scops:
            module = lower_gpu(gpu_program(sa))
            assert re.search(rf'^\s*\.file\s+1\s+"{re.escape(sa.scop.range.file)}"', module.ptx, re.M)
            locs = {(int(m.group(1)), int(m.group(2))) for m in re.finditer(r"\.loc\s+1\s+(\d+)\s+(\d+)", module.ptx)}
            assert {(st.range.line, st.range.col) for st in sa.scop.statements} <= locs
            smap = module.source_map
            assert {e.statement for e in smap.entries} == {st.name for st in sa.scop.statements}
            ptx = module.ptx.split("\n")
            assert all(not ptx[e.line - 1].strip().startswith((".", "$", "{", "}")) for e in smap.entries)
            if ptxas_path() is not None:
                result = run_ptxas(module.ptx)
                assert result.ok, result.output


def test_tags_are_removed_and_lines_counted_after_indenting_and_joining() -> None:
    (scop, *_) = scops("gemm.c")
    first = scop.statements[0]
    body = "\n".join(["for (;;) {", "  " + tag("A[i] = 0;", scop.name, first.name), "}"])
    text, smap = untag("int x;\n" + body.replace("\n", "\n    "), statement_ranges([scop]))
    assert text == "int x;\nfor (;;) {\n      A[i] = 0;\n    }"
    assert [(e.line, e.statement, e.range) for e in smap.entries] == [(3, first.name, first.range)]
    joined, jmap = join_mapped([("a\nb\n", SourceMap()), (text, smap)], "\n")
    assert joined.split("\n")[jmap.entries[0].line - 1] == "      A[i] = 0;"
    foreign = tag("x = 1;", "other#scop0", "S0")  # not a statement of these SCoPs: left alone
    assert untag(foreign, statement_ranges([scop])) == (foreign, SourceMap())
