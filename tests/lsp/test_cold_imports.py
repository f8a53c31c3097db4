"""The editor's start-up (issue 29.3): what `lsp/early.py` imports before the first diagnostics
leaves clang's bindings and the lowering to the front end's worker, and islpy's version comes from
its folder's name (not `importlib.metadata`, 0.13-0.16 s), the same as islpy's own."""

from __future__ import annotations

import json
import subprocess
import sys

# what `Early._import` imports, then a document analysed as the first diagnostics are
EDITOR = """
import json, sys
from lsp.early import islpy_version_from_its_folder
islpy_version_from_its_folder()
import explorer.workspace
from explorer import api, offload, settings
from explorer.workspace import Workspace
ws = Workspace()
ws.open("file:///tmp/hexplore-cold/a.c", "void f(int n, double a[n]) { for (int i = 0; i < n; i++) a[i] = 2 * a[i]; }", 1)
names = [r.name for r in ws.analyze("file:///tmp/hexplore-cold/a.c").all_remarks()]
import islpy
print(json.dumps({"modules": sorted(sys.modules), "version": [list(islpy.VERSION), islpy.VERSION_TEXT, islpy.version.VERSION_STATUS], "remarks": names}))
"""

OWN = "import islpy, json; print(json.dumps([list(islpy.VERSION), islpy.VERSION_TEXT, islpy.version.VERSION_STATUS]))"


def run(code: str) -> object:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    return json.loads(out.stdout.splitlines()[-1])


def test_the_editor_analyses_without_clang_bindings_the_lowering_or_importlib_metadata() -> None:
    found = run(EDITOR)
    assert isinstance(found, dict)
    assert "ParallelLoop" in found["remarks"]  # the analysis ran, its IR from the worker
    loaded = set(found["modules"])
    for module in ("clang.cindex", "core_compiler.frontend.lower", "core_compiler.frontend.clang_parse", "importlib.metadata"):
        assert module not in loaded, module
    assert found["version"] == run(OWN)
