"""400 random edits through the workspace API (1000 in the long tier): analysis never raises, every result describes the
version it was asked for, and the incremental results equal a from-scratch analysis."""

from __future__ import annotations

import os
import random
from pathlib import Path

from core_compiler.analysis import analyze_file
from core_compiler.remarks import Remark
from explorer.workspace import TextChange, Workspace, path_for_uri
from tests.explorer.random_edits import position, random_edit

FIXTURES = Path(__file__).parents[1] / "lsp" / "fixtures"
URI = "file:///tmp/hexplore-random/edits.c"
EDITS = 1000 if os.environ.get("HEXPLORE_LONG") else 400
CHECK_EVERY = 10


def from_scratch(text: str) -> list[Remark]:
    """The remarks of a fresh workspace (no cache); equal to the core's `analyze_file` unless a
    header is missing: the explorer parses on after that fatal error, as clangd does."""
    ws = Workspace(use_compile_commands=False)
    ws.open(URI, text)
    remarks = ws.analyze(URI).all_remarks()
    if not any("file not found" in r.message for r in remarks):
        assert remarks == analyze_file(path_for_uri(URI), text).all_remarks()
    return remarks


def test_random_edits_never_break_the_workspace() -> None:
    rng = random.Random(20261105)
    original = (FIXTURES / "matmul.c").read_text() + (FIXTURES / "broken.c").read_text()
    ws = Workspace()
    ws.open(URI, original, version=0)
    for version in range(1, EDITS + 1):
        text = ws.document(URI).text
        if rng.random() < 0.03 or len(text) > 3 * len(original):
            ws.update(URI, original, version)  # start over now and then
        else:
            start, end, new = random_edit(rng, text)
            ws.edit(URI, [TextChange(new, position(text, start), position(text, end))], version)
        result = ws.analyze(URI)
        assert result.version == version
        assert result.document.text == ws.document(URI).text
        if version % CHECK_EVERY == 0:
            assert result.all_remarks() == from_scratch(result.document.text), f"version {version}"
    stats = ws.cache.stats()
    assert stats.hits > EDITS // 2  # the cache did its job (825 of 1000 with this seed)
