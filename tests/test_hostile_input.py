"""Hostile input (issue 31.1): each case is a remark and a normal exit, never a dead process or a
hang. libclang runs in the front end's worker (`core_compiler/frontend/worker.py`); includes that
are not files are refused (`frontend/includes.py`); expressions have a budget
(`frontend/expression_budget.py`); isl's errors are told apart (`analysis.isl_error_remark`).

The CLI cases run `hexplore analyze` as a subprocess with a timeout, its stdin a pipe that never
closes (as the language server's is): a regression hangs or crashes the subprocess, not the test.
The language server's side is `tests/lsp/test_hostile_documents.py`.
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core_compiler.analysis import AnalysisOptions, analyze_file
from core_compiler.report import render_report

LOOP = "void f(int n, double *A) {\n  for (int i = 0; i < n; i++)\n    A[i] = 0;\n}\n"
CLI = [sys.executable, "-c", "import sys; from tui.cli import main; sys.exit(main())"]
ROOT = Path(__file__).resolve().parents[1]


def hexplore(*args: str, timeout: float = 120, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`hexplore ARGS` with a stdin pipe that stays open (never written, never closed)."""
    return _run([*CLI, *args], timeout, env)


def _run(argv: list[str], timeout: float, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    read, write = os.pipe()  # its stdin: we hold the writing end open until it is done
    try:
        proc = subprocess.Popen(
            argv, stdin=read, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
            env={**os.environ, **(env or {})}, start_new_session=True,
        )  # fmt: skip
        os.close(read)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            pytest.fail(f"`{' '.join(argv[3:])[:200]}` hung for {timeout} s")
    finally:
        os.close(write)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def names(text: str) -> list[str]:
    """The remark names of a text report, in order."""
    return re.findall(r"\[(?:Missed|Analysis|Passed):(\w+)\]$", text, re.M)


def sum_subscript(terms: int) -> str:
    return "void f(int n, double *A) {\n  for (int i = 0; i < n; i++)\n    A[" + " + ".join(["i"] * terms) + "] = 0;\n}\n"


def test_a_subscript_of_14000_terms_is_a_remark_not_a_segfault(tmp_path: Path) -> None:
    """clang's parser overflows its stack on it (SIGSEGV): it used to take the CLI with it."""
    src = tmp_path / "deep.c"
    src.write_text(sum_subscript(14_000) + LOOP.replace("f(", "g("))
    done = hexplore("analyze", str(src))
    assert done.returncode == 0, done.stderr
    assert "FrontendCrashed" in names(done.stdout)
    assert "SIGSEGV" in done.stdout and "split it into several statements" in done.stdout
    line = next(x for x in done.stdout.splitlines() if "FrontendCrashed" in x)
    assert f"{src}:3:5:" in line  # on the suspiciously long statement


def test_an_expression_past_the_budget_is_an_expression_too_large_remark(tmp_path: Path) -> None:
    """900 terms parse, but lowering and every pass after it recursed past Python's limit."""
    src = tmp_path / "long.c"
    src.write_text(sum_subscript(900) + LOOP.replace("f(", "g("))
    fa = analyze_file(str(src))
    (remark,) = fa.function("f").remarks  # type: ignore[union-attr]
    assert remark.name == "ExpressionTooLarge" and (remark.range.line, remark.range.col) == (3, 5)
    assert "A[i + i" in remark.message and len(remark.message) < 400  # the text is cut short
    assert [r.name for r in fa.function("g").remarks] == ["ParallelLoop", "ScopDetected"]  # type: ignore[union-attr]
    ok = analyze_file(str(src), sum_subscript(150))  # within the budget: modeled as always
    assert "ScopDetected" in [r.name for r in ok.all_remarks()]


@pytest.mark.parametrize("target", ["/dev/stdin", "/dev/zero", "fifo"])
def test_an_include_that_is_not_a_file_is_refused(tmp_path: Path, target: str) -> None:
    """`/dev/stdin` read the pipe forever, `/dev/zero` took 4 GB, a FIFO blocked."""
    if target == "fifo":
        os.mkfifo(tmp_path / "fifo")
    src = tmp_path / "inc.c"
    src.write_text(f'#include "{target}"\n' + LOOP)
    done = hexplore("analyze", str(src), timeout=60)
    assert done.returncode == 0, done.stderr
    assert names(done.stdout) == ["IncludeRefused", "ParallelLoop", "ScopDetected"], done.stdout
    assert f"{src}:1:1:" in done.stdout


def test_an_include_of_a_fifo_in_a_header_is_refused_on_the_header(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "sizes.h").write_text('#define N 10\n#include "fifo"\n')
    src = tmp_path / "main.c"
    src.write_text('#include "sizes.h"\n' + LOOP)
    done = hexplore("analyze", str(src), timeout=60)
    assert done.returncode == 0, done.stderr
    assert names(done.stdout) == ["IncludeRefused", "ParallelLoop", "ScopDetected"], done.stdout
    assert done.stdout.startswith(f"{tmp_path / 'sizes.h'}:2:1: remark: `#include \"fifo\"` was not read")


_WORKSPACE = """
import json, sys
from explorer.workspace import Workspace
ws = Workspace(root=sys.argv[1])
doc = ws.open_file(sys.argv[2])
result = ws.analyze(doc.uri)
print(json.dumps([r.name for r in result.all_remarks()]))
"""


def test_include_dev_stdin_from_compile_commands_through_the_workspace(tmp_path: Path) -> None:
    """A repository's compile_commands.json said `-include /dev/stdin`: the editor's parse read its
    own JSON-RPC pipe and never came back. The workspace runs in a subprocess whose stdin is a pipe
    that never closes, as the language server's is."""
    src = tmp_path / "k.c"
    src.write_text(LOOP)
    entry = {"directory": str(tmp_path), "file": "k.c", "arguments": ["cc", "-include", "/dev/stdin", "-c", "k.c"]}
    (tmp_path / "compile_commands.json").write_text(json.dumps([entry]))
    done = _run([sys.executable, "-c", _WORKSPACE, str(tmp_path), str(src)], timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == ["IncludeRefused", "ParallelLoop", "ScopDetected"]


@pytest.mark.slow
def test_a_macro_expanding_to_2_to_the_20_terms_is_a_budget_remark(tmp_path: Path) -> None:
    """Each level doubles the expression: clang parses for minutes. The worker's time limit
    (shortened here) stops it and says so."""
    macros = ["#define X0(a) a", *(f"#define X{k}(a) X{k - 1}(a) + X{k - 1}(a)" for k in range(1, 21))]
    src = tmp_path / "macro.c"
    src.write_text("\n".join(macros) + "\n" + LOOP.replace("A[i] = 0", "A[i] = X20(i)"))
    start = time.perf_counter()
    done = hexplore("analyze", str(src), timeout=90, env={"HEXPLORE_FRONTEND_TIMEOUT_S": "5"})
    assert done.returncode == 0, done.stderr
    assert names(done.stdout) == ["FrontendBudgetExceeded"]
    assert "time limit of 5 s" in done.stdout and "macro" in done.stdout
    assert time.perf_counter() - start < 60


def test_each_isl_error_has_its_remark(tmp_path: Path) -> None:
    """isl cannot read the name `café`: it was reported as isl's budget running out. The budget
    running out is still `AnalysisBudgetExceeded`."""
    src = tmp_path / "u.c"
    src.write_text("void f(int n, double *A) {\n  for (int café = 0; café < n; café++)\n    A[café] = 0;\n}\n")
    (remark,) = analyze_file(str(src)).function("f").remarks  # type: ignore[union-attr]
    assert remark.name == "NonAsciiName" and "`café`" in remark.message and "rename" in remark.message
    assert remark.range.line == 2
    fa = analyze_file(str(src), LOOP, options=AnalysisOptions(max_isl_operations=1))
    assert [r.name for r in fa.all_remarks()] == ["AnalysisBudgetExceeded"]


@pytest.mark.slow
def test_a_large_file_shows_its_first_functions_within_seconds(tmp_path: Path) -> None:
    """A file of 400 functions (1 MB; the review's had 2,000 in 5 MB) printed nothing until all
    were analysed, minutes later. Each function is printed as soon as it is analysed."""
    body = "\n".join(f"        C[i][j] += alpha * A[i][k] * B[k][j] + {t}.0 * A[i][j];" for t in range(30))
    fns = [
        f"void kernel_{k}(int ni, int nj, int nk, double alpha, double C[ni][nj], double A[ni][nk], "
        f"double B[nk][nj]) {{\n  for (int i = 0; i < ni; i++)\n    for (int j = 0; j < nj; j++)\n"
        f"      for (int k = 0; k < nk; k++) {{\n{body}\n      }}\n}}\n"
        for k in range(400)
    ]
    small = tmp_path / "small.c"  # printed as it goes, the report is the one printed at once
    small.write_text("int broken( {\n" + "".join(fns[:2]))
    assert hexplore("analyze", str(small)).stdout == render_report(analyze_file(str(small)), "text")
    src = tmp_path / "big.c"
    src.write_text("".join(fns))
    proc = subprocess.Popen(
        [*CLI, "analyze", str(src)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, text=True, cwd=ROOT, start_new_session=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 45)
        assert ready, "nothing printed within 45 s"
        assert proc.stdout.readline().startswith("function kernel_0 (line 1): 1 scop(s)")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()


def _segfault() -> None:
    os.kill(os.getpid(), signal.SIGSEGV)


def _sleep() -> None:
    time.sleep(60)


def _allocate() -> int:
    return len(bytearray(1 << 30))


def test_the_worker_survives_crashes_hangs_and_oom() -> None:
    from core_compiler.frontend.worker import FrontendFailure, FrontendLimits, FrontendWorker

    worker = FrontendWorker(FrontendLimits(timeout_s=3, memory_bytes=512 << 20))
    try:
        assert worker.call(os.getpid) != os.getpid()
        with pytest.raises(FrontendFailure, match="SIGSEGV") as crash:
            worker.call(_segfault)
        assert crash.value.kind == "crashed"
        with pytest.raises(FrontendFailure, match="time limit of 3 s") as hang:
            worker.call(_sleep)
        assert hang.value.kind == "budget"
        with pytest.raises(FrontendFailure, match="memory limit of 512 MB") as oom:
            worker.call(_allocate)
        assert oom.value.kind == "budget"
        assert worker.call(sum, (1, 2)) == 3  # a fresh worker after each
    finally:
        worker.close()
