"""Neovim (0.7+, headless) as a second real client: it starts hexplore-lsp, attaches it to a C
file, and dumps the diagnostics it received as JSON; with the snippet PROTOCOL.md documents, it
runs a code lens (executed by the server) and applies a code action. Skipped where `nvim` is not
installed (Debian package: `neovim`)."""

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
LENSES_AND_ACTIONS = Path(__file__).parent / "nvim" / "lenses_and_actions.lua"
PROTOCOL = Path(__file__).parents[2] / "lsp" / "PROTOCOL.md"
ROOT = Path(__file__).parents[2]

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
        ("ImpureCall", 12, 4, 12, 33, 2, "hexplore"),
        ("IndirectAccess", 6, 9, 6, 15, 2, "hexplore"),
    ]
    indirect = next(d for d in result["diagnostics"] if d["code"] == "IndirectAccess")
    assert indirect["message"].startswith("`hist[idx[i]]` takes its subscript from the array `idx`")


def _documented_snippet() -> str:
    """The Neovim configuration PROTOCOL.md gives (its ```lua block after "Neovim (0.7 and later)")."""
    text = PROTOCOL.read_text()
    start = text.index("```lua\n", text.index("Neovim (0.7 and later)")) + len("```lua\n")
    return text[start : text.index("```", start)]


def test_neovim_runs_a_code_lens_and_applies_a_code_action_with_the_documented_snippet(tmp_path: Path) -> None:
    source = tmp_path / "actions.c"
    shutil.copy(FIXTURES / "actions.c", source)
    snippet = tmp_path / "hexplore.lua"
    snippet.write_text(_documented_snippet())
    out = tmp_path / "result.json"
    env = {
        **os.environ,
        "HEXPLORE_OUT": str(out),
        "HEXPLORE_LSP_CMD": json.dumps([sys.executable, "-m", "lsp.server"]),
        "HEXPLORE_CACHE_DIR": str(tmp_path / "cache"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }
    assert NVIM is not None
    subprocess.run(
        [NVIM, "--headless", "--clean", "-n", "-i", "NONE",
         "--cmd", "lua vim.g.hexplore_lsp_cmd = vim.fn.json_decode(vim.env.HEXPLORE_LSP_CMD)", "--cmd", f"luafile {snippet}",
         str(source), "-c", f"luafile {LENSES_AND_ACTIONS}"],
        env=env, cwd=ROOT, timeout=120, check=True, stdin=subprocess.DEVNULL, capture_output=True,
    )  # fmt: skip
    result = json.loads(out.read_text())
    assert result["attached"] and result["diagnostics"], result
    assert {"line": 2, "title": "show CUDA"} in result["lenses"] and {"line": 2, "title": "run"} in result["lenses"]
    assert result["shown"], result
    cuda = next(m for m in result["messages"] if m.startswith("hexplore: CUDA of mm"))
    assert "__global__" in cuda
    assert not [n for n in result["notes"] if "does not support command" in n]
    assert result["interchanged"], result
    assert result["lines"] == ["  for (int j = 0; j < n; j++)", "    for (int i = 0; i < n; i++)"]
    assert result["skewed"], result
    assert result["skew_lines"] == [
        "  for (int i = 1; i < n; i++)", "    for (int j_s = 0 + (1); j_s < (n - 1) + (n - 1); j_s++) {", "      int j = j_s - i;",
    ]  # fmt: skip
