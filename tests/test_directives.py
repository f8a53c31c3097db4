"""``#pragma hexplore gpu [block(..) tile(..)]`` and ``#pragma hexplore cpu`` (issue 29): read by the
front end with exact ranges (malformed ones said with what is accepted), tied to the nest below,
checked for legality, obeyed by `compile` and by `run` on every device, where the result still
matches the original at 37, 1 and 0."""

from __future__ import annotations

from pathlib import Path

import pytest

from core_compiler.analysis import analyze_file
from core_compiler.compile import compile_file
from core_compiler.runtime.run import run_function

SCALE = """\
void scale(int n, int m, double A[n][m], double B[n][m]) {
  {pragma}
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      B[i][j] = 2.0 * A[i][j] + 1.0;
}
"""
PREFIX = """\
void prefix(int n, double a[n]) {
  #pragma hexplore gpu
  for (int i = 1; i < n; i++)
    for (int k = 0; k < 8; k++)
      a[i] = a[i] + a[i - 1] * 0.5;
}
"""
# a 16x16 nest: too little work for the profitability model
SMALL = """\
void small(double x[16][16], const double *y) {
  #pragma hexplore gpu block(16, 4) tile(16, 16)
  for (int i = 0; i < 16; i++)
    for (int j = 0; j < 16; j++)
      x[i][j] = 2.0 * x[i][j] + y[j];
}
"""


def _file(tmp_path: Path, text: str, name: str = "d.c") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _remarks(path: str, names: tuple[str, ...], **compile_args: object) -> list[tuple[str, int, int, int, str]]:
    fa = analyze_file(path)
    found = [*fa.all_remarks(), *compile_file(fa, "opencl", **compile_args).remarks]  # type: ignore[arg-type]
    return [(r.name, r.range.line, r.range.col, r.range.end_col, r.message) for r in found if r.name in names]


def test_malformed_directives_are_said_on_the_word_at_fault(tmp_path: Path) -> None:
    lines = [
        "#pragma hexplore gpu block(32, 8, 2, 1)",
        "#pragma hexplore gpu tiles(3)",
        "#pragma hexplore gpu block(32",
        "#pragma hexplore",
        "#pragma hexplore cpu now",
        "#pragma hexplore gpu block(0)",
        "#pragma hexplore gpu block(8) block(8)",
        "#pragma omp parallel for",  # not hexplore's: not read
    ]
    body = "".join(f"  {line}\n" for line in lines)
    path = _file(tmp_path, f"void f(int n, double *a) {{\n{body}  for (int i = 0; i < n; i++) a[i] = 0;\n}}\n")
    accepted = (
        ": hexplore accepts `#pragma hexplore gpu`, `#pragma hexplore gpu block(32, 8)` "
        "(optionally with `tile(64, 64)`) and `#pragma hexplore cpu`"
    )
    got = _remarks(path, ("MalformedDirective",))
    assert [(line, col, end, m.removesuffix(accepted)) for _, line, col, end, m in got] == [
        (2, 40, 41, "a block has at most 3 dimensions (x, y, z)"),
        (3, 24, 29, "`#pragma hexplore gpu` takes `block(...)` and `tile(...)`, not `tiles`"),
        (4, 30, 32, "expected `,` or `)` in `block(...)`, found the end of the line"),
        (5, 11, 19, "`#pragma hexplore` must be followed by `gpu` or `cpu`"),
        (6, 24, 27, "`#pragma hexplore cpu` takes nothing after it (found `now`)"),
        (7, 30, 31, "a block size must be at least 1, not 0"),
        (8, 33, 38, "`block(...)` is given twice"),
    ]
    assert all(m.endswith(accepted) for *_, m in got)


def test_a_gpu_directive_offloads_with_its_block_and_no_run_time_check(tmp_path: Path) -> None:
    path = _file(tmp_path, SCALE.replace("{pragma}", "#pragma hexplore gpu block(32, 8)  // 256 threads"))
    got = _remarks(path, ("OffloadedByDirective", "RuntimeOffloadCheck", "Offloaded"))
    assert [(name, line, col, end) for name, line, col, end, _ in got] == [
        ("OffloadedByDirective", 2, 3, 36), ("Offloaded", 3, 3, 36)]  # fmt: skip
    assert got[0][4] == (
        "offloaded to the GPU as kernel0 because of `#pragma hexplore gpu block(32, 8)` at line 2; "
        "without it the host code would decide at run time, from the sizes"
    )
    assert got[1][4].endswith("block 32x8 threads")  # the model's default is 32x16
    fa = analyze_file(path)
    host = "".join(v for k, v in compile_file(fa, "cuda").files.items() if k.endswith("_host.cu"))
    assert "dim3 k0_block(32, 8);" in host and "too little work to offload" not in host
    plain = analyze_file(_file(tmp_path, SCALE.replace("{pragma}", ""), "plain.c"))
    assert "too little work to offload" in "".join(compile_file(plain, "cuda").files.values())


def test_a_gpu_directive_offloads_what_the_model_keeps_on_the_cpu_with_its_tiles(tmp_path: Path) -> None:
    path = _file(tmp_path, SMALL)
    fa = analyze_file(path)
    assert not compile_file(analyze_file(_file(tmp_path, SMALL.replace("  #pragma", "  // #pragma"), "plain.c")), "opencl").files
    result = compile_file(fa, "opencl")
    assert list(result.files) == ["d_small.cl"]
    (offloaded,) = [r.message for r in result.remarks if r.name == "OffloadedByDirective"]
    assert offloaded.endswith("at line 2; the profitability model alone would keep it on the CPU")
    (mapped,) = [r.message for r in result.remarks if r.name == "Offloaded"]
    assert "16x16 tiles, block 16x4 threads" in mapped


def test_a_block_the_mapping_narrows_is_said(tmp_path: Path) -> None:
    path = _file(tmp_path, SCALE.replace("{pragma}", "#pragma hexplore gpu block(64, 16, 1)"))
    ((*_, message),) = _remarks(path, ("OffloadedByDirective",))
    assert message.endswith(
        "; kernel0 has 32x16 threads per block: a block has one dimension per parallel loop it is mapped to, "
        "and is no wider than its tile"
    )


def test_a_cpu_directive_keeps_the_nest_even_with_always_offload(tmp_path: Path) -> None:
    path = _file(tmp_path, SCALE.replace("{pragma}", "#pragma hexplore cpu"))
    fa = analyze_file(path)
    for target in ("opencl", "cuda"):
        result = compile_file(fa, target, always_offload=True)
        assert result.files == {}
        (kept,) = [r for r in result.remarks if r.name == "KeptOnCpuByDirective"]
        assert kept.message == "kept on the CPU by `#pragma hexplore cpu` at line 2"
        assert (kept.range.line, kept.range.col, kept.range.end_col) == (2, 3, 23)


def test_compile_says_the_cpu_directive_kept_everything_there(tmp_path: Path) -> None:
    from core_compiler.frontend import ParseOptions
    from explorer.commands import CompileSettings, compile_source

    text = SCALE.replace("{pragma}", "#pragma hexplore cpu")
    done = compile_source(_file(tmp_path, text), text, ParseOptions(), None, CompileSettings(always_offload=True))
    assert done.result.files == {} and done.nothing == (
        "nothing to generate: every loop nest of `scale` stays on the CPU (the remarks above say why; "
        "`#pragma hexplore cpu` keeps a nest there whatever the options; --always-offload offloads the others, "
        "--target c tiled C)"
    )


def test_compile_says_the_directives_it_could_not_obey(tmp_path: Path) -> None:
    """`compile` prints the detection's remarks only where nothing is generated; the user's own
    `#pragma hexplore` lines it could not read or tie to a nest are said always."""
    from core_compiler.frontend import ParseOptions
    from explorer.commands import CompileSettings, compile_source

    text = SCALE.replace("{pragma}", "#pragma hexplore gpu blok(3)")
    done = compile_source(_file(tmp_path, text), text, ParseOptions(), None, CompileSettings(target="c"))
    assert done.result.files and not done.nothing
    assert [(r.name, r.range.line, r.range.col) for r in done.reasons] == [("MalformedDirective", 2, 24)]


def test_a_directive_decides_the_loop_nest_below_it_alone(tmp_path: Path) -> None:
    """Loops hexplore would model as one nest are split where a `#pragma hexplore` line is above
    one: each directive decides its own loops, none is ignored."""
    text = (
        "void two(int n, double A[n][n], double B[n][n]) {\n"
        "  #pragma hexplore gpu block(32, 8)\n"
        "  for (int i = 0; i < n; i++)\n"
        "    for (int j = 0; j < n; j++) A[i][j] = 2.0 * B[i][j];\n"
        "  #pragma hexplore cpu\n"
        "  for (int i = 0; i < n; i++)\n"
        "    for (int j = 0; j < n; j++) B[i][j] += A[i][j];\n"
        "  for (int i = 0; i < n; i++)\n"
        "    for (int j = 0; j < n; j++) B[i][j] *= A[i][j];\n"
        "}\n"
    )
    path = _file(tmp_path, text)
    assert [sa.scop.loops[0].range.line for sa in analyze_file(path).functions[0].scops] == [3, 6, 8]
    got = _remarks(path, ("OffloadedByDirective", "KeptOnCpuByDirective", "DirectiveNotOnLoopNest"))
    assert [(name, line) for name, line, *_ in got] == [("OffloadedByDirective", 2), ("KeptOnCpuByDirective", 5)]


def test_the_option_editor_says_the_cpu_directive_kept_the_nest(tmp_path: Path) -> None:
    from explorer.configuration import CodeOptions, compile_function

    text = SCALE.replace("{pragma}", "#pragma hexplore cpu")
    path = _file(tmp_path, text)
    (fa,) = analyze_file(path).functions
    done = compile_function(path, text, fa, CodeOptions(always_offload=True))
    assert done.text == "" and done.nothing == (
        "every loop nest stays on the CPU (a `#pragma hexplore cpu` line keeps a nest there whatever the options)"
    )


def test_a_gpu_directive_that_cannot_be_followed_is_refused_and_the_model_decides(tmp_path: Path) -> None:
    wide = _file(tmp_path, SCALE.replace("{pragma}", "#pragma hexplore gpu block(64, 32)"), "wide.c")
    (refused,) = _remarks(wide, ("DirectiveRefused",))
    assert refused[4] == (
        "`#pragma hexplore gpu block(64, 32)` at line 2 is not followed: a block of 64x32 is 2,048 threads, "
        "more than the 1,024 a GPU block can have; the profitability model decides instead"
    )
    assert "RuntimeOffloadCheck" in [r[0] for r in _remarks(wide, ("RuntimeOffloadCheck",))]
    prefix = _file(tmp_path, PREFIX, "prefix.c")
    got = _remarks(prefix, ("DirectiveRefused", "OffloadedByDirective", "SequentialKernel"), always_offload=True)
    assert got[0][:2] == ("DirectiveRefused", 2) and "no loop of this nest can run its iterations in parallel" in got[0][4]
    assert "OffloadedByDirective" not in [r[0] for r in got]
    call = "void log_row(int i, double *a);\n" + SCALE.replace("{pragma}", "#pragma hexplore gpu").replace(
        "B[i][j] = 2.0 * A[i][j] + 1.0;", "log_row(i, B[i]);")
    (host,) = _remarks(_file(tmp_path, call, "call.c"), ("DirectiveRefused",))
    assert "the loops call `log_row`, a function of your program that GPU code cannot call" in host[4]


def test_a_directive_not_above_a_nests_outer_loop_is_ignored_and_said(tmp_path: Path) -> None:
    text = (
        "void g(int n, double A[n][n]) {\n"
        "  for (int i = 0; i < n; i++)\n"
        "    #pragma hexplore cpu\n"
        "    for (int j = 0; j < n; j++) A[i][j] = 0;\n"
        "  #pragma hexplore gpu\n"
        "  n = 2;\n"
        "}\n"
    )
    got = _remarks(_file(tmp_path, text), ("DirectiveNotOnLoopNest", "KeptOnCpuByDirective"))
    why = "the code below it is not the outermost loop of a loop nest hexplore models"
    assert got == [
        ("DirectiveNotOnLoopNest", 3, 5, 25, f"`#pragma hexplore cpu` is ignored: {why}"),
        ("DirectiveNotOnLoopNest", 5, 3, 23, f"`#pragma hexplore gpu` is ignored: {why}"),
    ]


def test_what_a_run_takes_from_the_directive_on_each_device(tmp_path: Path) -> None:
    from core_compiler.runtime.run import _directed

    wide = _file(tmp_path, SCALE.replace("{pragma}", "#pragma hexplore gpu block(64, 32)"), "wide.c")
    refused = _directed(wide, "scale", "opencl", None)
    assert (refused.kind, refused.gpu) == ("", None) and refused.note == (
        "`#pragma hexplore gpu block(64, 32)` at line 2 is not followed: a block of 64x32 is 2,048 threads, "
        "more than the 1,024 a GPU block can have; the default mapping ran"
    )
    gpu = _directed(_file(tmp_path, SCALE.replace("{pragma}", "#pragma hexplore gpu block(16, 16)")), "scale", "cuda", None)
    assert gpu.kind == "gpu" and gpu.gpu is not None and gpu.gpu.block == (16, 16)
    kept = _directed(_file(tmp_path, SCALE.replace("{pragma}", "#pragma hexplore cpu"), "kept.c"), "scale", "cuda", None)
    assert (kept.kind, kept.note) == ("cpu", "kept on the CPU by `#pragma hexplore cpu` at line 2")
    assert _directed(_file(tmp_path, SCALE.replace("{pragma}", ""), "plain.c"), "scale", "opencl", None).kind == ""


@pytest.mark.slow  # 12 runs through PoCL and the LLVM JIT (about 40 s)
@pytest.mark.parametrize("pragma", ["#pragma hexplore gpu block(32, 8) tile(8, 64)", "#pragma hexplore cpu"])
@pytest.mark.parametrize("device", ["opencl", "cpu"])
def test_a_run_obeys_the_directive_and_matches_the_original(tmp_path: Path, pragma: str, device: str) -> None:
    path = _file(tmp_path, SCALE.replace("{pragma}", pragma))
    for n in (37, 1, 0):
        report = run_function(path, "scale", device, {"n": n, "m": 37 if n else 5})
        assert report.status == "ok" and report.match, report.message
        if pragma.endswith("cpu"):
            assert report.device == "cpu" and report.kernels == 0
            assert report.note.startswith("kept on the CPU by `#pragma hexplore cpu` at line 2") == (device != "cpu")
        elif device == "opencl":
            assert report.device == "opencl" and report.kernels == 1
            assert report.note.startswith("mapped as `#pragma hexplore gpu block(32, 8) tile(8, 64)` at line 2 asks")
        else:
            assert "applies to `--device opencl|cuda` and `compile`" in report.note
