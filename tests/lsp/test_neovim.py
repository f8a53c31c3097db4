"""Neovim (0.7+, headless) as a second real client: it starts hexplore-lsp, attaches it to a C
file, and dumps the diagnostics it received as JSON. Skipped where `nvim` is not installed
(Debian package: `neovim`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.lsp.lsp_helpers import FIXTURES

NVIM = shutil.which("nvim")
SCRIPT = Path(__file__).parent / "nvim" / "diagnostics.lua"

pytestmark = pytest.mark.skipif(NVIM is None, reason="nvim is not installed (apt-get install neovim)")


def test_neovim_receives_the_diagnostics(tmp_path: Path) -> None:
    source = tmp_path / "indirect.c"
    shutil.copy(FIXTURES / "indirect.c", source)
    out = tmp_path / "diagnostics.json"
    env = {
        **os.environ,
        "HEXPLORE_OUT": str(out),
        "HEXPLORE_LSP_CMD": json.dumps([sys.executable, "-m", "lsp.server"]),
        "XDG_STATE_HOME": str(tmp_path / "state"),  # keep Neovim's log out of $HOME
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }
    assert NVIM is not None
    subprocess.run(
        [NVIM, "--headless", "--clean", "-n", "-i", "NONE", str(source), "-c", f"luafile {SCRIPT}"],
        env=env,
        cwd=Path(__file__).parents[2],  # the repository, so `-m lsp.server` imports this checkout
        timeout=60,
        check=True,
        stdin=subprocess.DEVNULL,
        capture_output=True,
    )
    result = json.loads(out.read_text())
    assert result["ok"] is True and result["client"] == "hexplore"
    got = sorted(
        (d["code"], d["lnum"], d["col"], d["end_lnum"], d["end_col"], d["severity"], d["source"])
        for d in result["diagnostics"]
    )
    assert got == [
        ("ImpureCall", 12, 4, 12, 24, 2, "hexplore"),
        ("IndirectAccess", 6, 9, 6, 15, 2, "hexplore"),
    ]
    indirect = next(d for d in result["diagnostics"] if d["code"] == "IndirectAccess")
    assert indirect["message"].startswith("`hist[idx[i]]` takes its subscript from the array `idx`")
