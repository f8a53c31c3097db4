"""The layers of DESIGN.md, checked on every import (ast: function-local and `TYPE_CHECKING`
imports included)::

    tui/ ──┐
           ├──> explorer/ ──> core_compiler/
    lsp/ ──┘

- `tui/` and `lsp/` reach the compiler through `explorer/` only (`explorer/api.py`,
  `explorer/commands.py`, the workspace), never `core_compiler`;
- `explorer/` imports neither face; `core_compiler/` imports no layer above it and no UI library;
- only `lsp/` imports pygls and lsprotocol, only `tui/` imports textual (tests and benchmarks
  that drive a face count as that face: `tests/lsp/`, `benchmarks/bench_lsp.py`);
- the schedule -> GPU-mapping glue lives in `core_compiler/pipeline.py` only: nothing else,
  tests included, calls or imports `map_to_gpu` or `compute_gpu_schedule`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCANNED = ("core_compiler", "explorer", "lsp", "tui", "tests", "benchmarks")

# The top-level packages each layer must not import.
FORBIDDEN = {
    "tui": {"core_compiler"},
    "lsp": {"core_compiler"},
    "explorer": {"tui", "lsp"},
    "core_compiler": {"explorer", "tui", "lsp"},
}
# Each UI library and the one face that imports it.
UI_LIBRARIES = {"pygls": "lsp", "lsprotocol": "lsp", "textual": "tui"}

GLUE = {"map_to_gpu", "compute_gpu_schedule"}
# The pipeline calls them; the modules that define them may mention them.
GLUE_HOMES = {"core_compiler/pipeline.py", "core_compiler/transform/gpu_mapping.py", "core_compiler/transform/schedule.py"}


def python_files() -> list[str]:
    return sorted(str(p.relative_to(ROOT)) for top in SCANNED for p in (ROOT / top).rglob("*.py"))


def imports(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """(line, top-level package) of every import; a relative import stays in its own package."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name.split(".")[0]) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module.split(".")[0]


def face(rel: str) -> str:
    """The face a file belongs to or drives: `lsp` for ``lsp/server.py``, ``tests/lsp/x.py`` and
    ``benchmarks/bench_lsp.py``."""
    parts = Path(rel).parts
    if parts[0] == "tests" and len(parts) > 2:
        return parts[1]
    if parts[0] == "benchmarks":
        return Path(rel).stem.removeprefix("bench_")
    return parts[0]


def layer_violations(rel: str, source: str) -> list[str]:
    layer = Path(rel).parts[0]
    found = []
    for line, top in imports(ast.parse(source, rel)):
        if top in FORBIDDEN.get(layer, ()):
            found.append(f"{rel}:{line}: {layer}/ imports {top}")
        owner = UI_LIBRARIES.get(top)
        if owner is not None and owner != face(rel):
            found.append(f"{rel}:{line}: imports {top}, which only {owner}/ may")
    return found


def glue_violations(rel: str, source: str) -> list[str]:
    if rel in GLUE_HOMES:
        return []
    found = []
    for node in ast.walk(ast.parse(source, rel)):
        name = None
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
        elif isinstance(node, ast.ImportFrom):
            name = next((a.name for a in node.names if a.name in GLUE), None)
        if name in GLUE:
            found.append(f"{rel}:{node.lineno}: {name} outside core_compiler/pipeline.py")
    return found


def _read(rel: str) -> str:
    return (ROOT / rel).read_text(encoding="utf-8")


def test_every_module_keeps_to_its_layer() -> None:
    found = [v for rel in python_files() for v in layer_violations(rel, _read(rel))]
    assert not found, "layering violations:\n" + "\n".join(found)


def test_schedule_to_mapping_glue_lives_in_the_pipeline() -> None:
    found = [v for rel in python_files() for v in glue_violations(rel, _read(rel))]
    assert not found, "call `core_compiler.pipeline.gpu_program` or `run_passes` instead:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("rel", "source", "expected"),
    [
        ("tui/x.py", "def f():\n    from core_compiler.transform.gpu_mapping import GpuProgram\n", ["tui/x.py:2: tui/ imports core_compiler"]),
        ("lsp/x.py", "import core_compiler.remarks\n", ["lsp/x.py:1: lsp/ imports core_compiler"]),
        ("explorer/x.py", "from lsp import server\n", ["explorer/x.py:1: explorer/ imports lsp"]),
        ("core_compiler/x.py", "if TYPE_CHECKING:\n    from explorer.api import Remark\n",
         ["core_compiler/x.py:2: core_compiler/ imports explorer"]),
        ("core_compiler/x.py", "import textual.app\n", ["core_compiler/x.py:1: imports textual, which only tui/ may"]),
        ("tui/x.py", "from lsprotocol import types\n", ["tui/x.py:1: imports lsprotocol, which only lsp/ may"]),
        ("tests/test_x.py", "import pygls\n", ["tests/test_x.py:1: imports pygls, which only lsp/ may"]),
        ("tests/lsp/test_x.py", "import pygls\nimport core_compiler\n", []),
        ("tui/x.py", "from . import model\nfrom explorer.api import Remark\n", []),
    ],
)  # fmt: skip
def test_the_layer_check_sees_bad_imports(rel: str, source: str, expected: list[str]) -> None:
    assert layer_violations(rel, source) == expected


def test_the_glue_check_sees_calls_and_imports() -> None:
    source = "from core_compiler.transform.gpu_mapping import map_to_gpu\nschedule.compute_gpu_schedule(scop, deps)\n"
    assert glue_violations("tests/test_x.py", source) == [
        "tests/test_x.py:1: map_to_gpu outside core_compiler/pipeline.py",
        "tests/test_x.py:2: compute_gpu_schedule outside core_compiler/pipeline.py",
    ]
    assert glue_violations("core_compiler/pipeline.py", source) == []


def test_the_command_line_is_read_before_the_compiler_loads() -> None:
    """`hexplore --help` and a usage error answer without islpy, numpy or pyopencl (1.3 s of
    imports before `tui/subcommands.py` split from `tui/cli.py`); the choices they offer are the
    compiler's own (`core_compiler/choices.py`)."""
    import subprocess
    import sys

    probe = "import sys, tui.cli; print(sorted(m for m in ('islpy', 'numpy', 'pyopencl', 'llvmlite') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "[]", out.stdout
    from core_compiler.choices import REPORT_FORMATS
    from core_compiler.report import FORMATS

    assert tuple(sorted(FORMATS)) == REPORT_FORMATS
