"""``workspace/executeCommand`` for the code lenses' commands (PROTOCOL.md, "Code lens commands").

Each lens command takes one argument ``{"uri": string, "function": string}`` (``hexplore.run``
also ``device``, ``sizes``, ``timeoutSeconds``). Executed by the server, a ``hexplore.show*``
command answers with the view as text (``{"title", "language", "text"}``) and shows it: with
``window/showDocument`` where the client supports it (the text is written to a file in the user's
private cache, ``views/``), else as a ``window/showMessage`` (long texts cut, the result has all).
``hexplore.run`` answers with the ``hexplore/run`` result plus a one-line ``message``, also shown.
``hexplore.previewRewrite`` (the argument is a loop rewrite's code action ``data``: ``uri``,
``function``, ``line``, ``column``, ``title``) answers with the rewrite's diffs, a view in language
``diff``: of the source, and of the function's C as ``compile --target c`` makes it.

A client that implements the commands itself (the VS Code extension) says so with
``initializationOptions.clientCommands: true``; the server then does not register them, since
VS Code's language client would register the same command names a second time.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from pygls.exceptions import JsonRpcInvalidParams

from explorer.api import cache_root, private_dir
from explorer.views import View
from lsp import code_lens, custom_requests

VIEW_OF = {
    "hexplore.showScheduleTree": "scheduleTree",
    "hexplore.showPasses": "passes",
    **{command: target for target, (_, command) in code_lens.CODE_COMMANDS.items()},
}
RUN = "hexplore.run"
PREVIEW = "hexplore.previewRewrite"  # a loop rewrite's diffs: source and generated C (`code_actions.py`)
ALL = (*VIEW_OF, RUN, PREVIEW)
MESSAGE_LINES = 60  # a view shown as a message is cut after this many lines
_EXTENSIONS = {"diff": ".diff", "cuda-cpp": ".cu", "opencl": ".cl", "c": ".c", "llvm": ".ll", "ptx": ".ptx"}


def target(command: str, arguments: tuple[Any, ...]) -> dict[str, Any]:
    """The command's one argument, ``{uri, function, ...}``; InvalidParams otherwise."""
    if len(arguments) != 1 or not isinstance(arguments[0], dict):
        raise JsonRpcInvalidParams(
            f"{command}: expected one argument {{\"uri\": ..., \"function\": ...}}, got {list(arguments)!r}"
        )
    arg = arguments[0]
    custom_requests.field(arg, "uri", command)
    custom_requests.field(arg, "function", command)
    return arg


def view_result(view: View) -> dict[str, Any]:
    return {"title": f"hexplore: {view.title}", "language": view.language, "text": view.text}


def view_file(view: View, uri: str) -> Path:
    """Where `view` is written for ``window/showDocument``: the user's private cache, one file per
    document and view (written again each time)."""
    digest = hashlib.sha256(uri.encode()).hexdigest()[:12]
    directory = private_dir(cache_root() / "views" / digest)
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in view.title.replace(" ", "-"))
    path = directory / (name + _EXTENSIONS.get(view.language, ".txt"))
    path.write_text(view.text, encoding="utf-8")
    return path


def view_message(view: View) -> str:
    lines = view.text.splitlines()
    head = f"hexplore: {view.title}"
    if len(lines) <= MESSAGE_LINES:
        return "\n".join([head, *lines])
    cut = len(lines) - MESSAGE_LINES
    return "\n".join([head, *lines[:MESSAGE_LINES], f"… {cut} more line(s): the command's result has them all"])


def run_message(function: str, result: dict[str, Any]) -> str:
    """``hexplore: run matmul on cpu (n=64): ok: the generated code matches … (0.41 ms vs 0.93 ms)``."""
    sizes = ", ".join(f"{k}={v}" for k, v in result["sizes"].items())
    text = f"hexplore: run {function} on {result['device']} ({sizes}): {result['status']}: {result['message']}"
    if result["optimized_ms"] > 0:
        text += f" (original {result['reference_ms']} ms, hexplore {result['optimized_ms']} ms, speedup {result['speedup']}x)"
    return text
