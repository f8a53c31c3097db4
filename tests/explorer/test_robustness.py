"""1000 random edits through the workspace API: analysis never raises, every result describes the
version it was asked for, and the incremental results equal the core's from-scratch analysis."""

from __future__ import annotations

import random
from pathlib import Path

from random_edits import position, random_edit

from core_compiler.analysis import analyze_file
from explorer.workspace import TextChange, Workspace

FIXTURES = Path(__file__).parents[1] / "lsp" / "fixtures"
URI = "file:///tmp/hexplore-random/edits.c"
EDITS = 1000
CHECK_EVERY = 10


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
            fresh = analyze_file(result.document.path, result.document.text)
            assert result.all_remarks() == fresh.all_remarks(), f"version {version}"
    stats = ws.cache.stats()
    assert stats.hits > EDITS // 2  # the cache did its job (825 with this seed)
