"""The server's first second, before pygls loads (`lsp/early.py`): its ``initialize`` answer and
its first diagnostics are what pygls and `lsp/diagnostics.py` send, and the server takes over
from it (every byte read again, ``initialize`` answered once, the first publish not repeated)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from explorer.workspace import Workspace
from lsp import diagnostics, early
from lsp.positions import LineIndex
from lsp.server import HexploreServer

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures"

# Capabilities as clients send them: none, Neovim's and VS Code's kinds of answers that matter here.
CAPABILITIES: list[tuple[dict[str, Any], Any]] = [
    ({}, None),
    ({}, {"clientCommands": True}),
    ({"general": {"positionEncodings": ["utf-8", "utf-16"]}}, {"hexplore": {"defines": ["N=8"]}}),
    ({"general": {"positionEncodings": ["utf-32"]}}, None),
    ({"general": {"positionEncodings": ["utf-7"]}}, None),
    ({"textDocument": {"synchronization": {"willSave": True, "willSaveWaitUntil": False, "didSave": True}}}, None),
    ({"workspace": {"fileOperations": {"didCreate": True, "willRename": True}, "configuration": True},
      "window": {"workDoneProgress": True}, "notebookDocument": {"synchronization": {}}}, {"clientCommands": True}),
]  # fmt: skip


def pygls_answer(params: dict[str, Any]) -> Any:
    """What the server's pygls answers to `initialize` with `params`, as JSON."""
    server = HexploreServer()
    protocol = server.protocol
    steps = protocol.lsp_initialize(protocol._converter.structure(params, types.InitializeParams))
    handler, args, _ = next(steps)
    try:
        steps.send(handler(*args))
    except StopIteration as done:
        return json.loads(json.dumps(done.value, default=protocol._serialize_message))
    raise AssertionError("lsp_initialize did not end")


@pytest.mark.parametrize(("capabilities", "options"), CAPABILITIES)
def test_initialize_is_answered_as_pygls_answers(capabilities: dict[str, Any], options: Any) -> None:
    params = {"processId": None, "rootUri": None, "capabilities": capabilities, "initializationOptions": options}
    assert early._plain_initialize(params)
    assert early.initialize_result(params) == pygls_answer(params)


def test_the_partial_rule_is_the_servers() -> None:
    from lsp import server

    assert server.PARTIAL_MIN_FUNCTIONS == early.PARTIAL_MIN_FUNCTIONS


NON_ASCII = """#include "missing.h"
/* größe: 𝑛 */ void f(int n, double a[n]) { for (int i = 1; i < n; i++) a[i] = a[i - 1] * 2; }
void g(int n, double a[n], double b[n]) { for (int i = 0; i < n; i++) /* é */ b[i] = a[i] + 1; }
"""


@pytest.mark.parametrize("name", ["matmul.c", "broken.c", "indirect.c", "non-ascii"])
@pytest.mark.parametrize("encoding", ["utf-16", "utf-8"])
def test_first_diagnostics_are_the_servers(name: str, encoding: str) -> None:
    text = NON_ASCII if name == "non-ascii" else (FIXTURES / name).read_text()
    ws = Workspace()
    uri = (FIXTURES / name).as_uri()
    ws.open(uri, text, 3)
    analysis = ws.analyze(uri)
    server = HexploreServer()
    want = diagnostics.diagnostics(analysis, LineIndex(text, encoding))
    got = early.diagnostics_json(analysis, encoding, diagnostics.REMARKS_DOC.as_uri())
    assert got == json.loads(json.dumps(want, default=server.protocol._serialize_message))
    assert got  # something to compare


class Pipe:
    """The front's stdin and stdout, in this process: `messages` come in one read each."""

    def __init__(self, *messages: dict[str, Any]) -> None:
        self.chunks = [early.frame({"jsonrpc": "2.0", **m}) for m in messages]
        self.out = b""

    def read(self) -> bytes:
        return self.chunks.pop(0) if self.chunks else b""

    def write(self, data: bytes) -> None:
        self.out += data

    def sent(self) -> list[dict[str, Any]]:
        out, rest = [], self.out
        while rest:
            head, _, rest = rest.partition(b"\r\n\r\n")
            n = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
            out.append(json.loads(rest[:n]))
            rest = rest[n:]
        return out


INIT = {"id": 1, "method": "initialize", "params": {"processId": None, "rootUri": None, "capabilities": {}}}


def opened(text: str, version: int = 1) -> dict[str, Any]:
    doc = {"uri": "file:///tmp/hexplore-early/t.c", "languageId": "c", "version": version, "text": text}
    return {"method": "textDocument/didOpen", "params": {"textDocument": doc}}


def test_pushed_settings_apply_to_the_first_analysis() -> None:
    text = "void f(double a[N]) { for (int i = 0; i < N; i++) a[i] = 0; }\n"
    push = {"method": "workspace/didChangeConfiguration", "params": {"settings": {"hexplore": {"defines": ["N=8"]}}}}
    pipe = Pipe(INIT, {"method": "initialized", "params": {}}, push, opened(text))
    handover = early._Front(pipe.read, pipe.write).run()
    answer, published = pipe.sent()
    assert answer["id"] == 1 and published["method"] == "textDocument/publishDiagnostics"
    codes = [d["code"] for d in published["params"]["diagnostics"]]
    assert "SyntaxError" not in codes and "ScopDetected" in codes  # N defined
    assert handover.replay == b"".join(early.frame({"jsonrpc": "2.0", **m}) for m in (INIT, {"method": "initialized", "params": {}}, push, opened(text)))
    assert handover.published[published["params"]["uri"]] == published["params"]
    assert handover.answered == (1, answer["result"])


def test_settings_that_are_not_hexplores_leave_the_first_analysis_to_the_server() -> None:
    push = {"method": "workspace/didChangeConfiguration", "params": {"settings": {"python": {}}}}
    pipe = Pipe(INIT, push, opened("void f(void) {}\n"))
    handover = early._Front(pipe.read, pipe.write).run()
    assert [m.get("id") for m in pipe.sent()] == [1]  # initialize answered, nothing published
    assert handover.workspace is None and not handover.adopted


# ----------------------------------------------------------------------------- the server, started

MANY = "".join(f"void f{k}(int n, double a[n]) {{ for (int i = 0; i < n; i++) a[i] = a[i] * {k}; }}\n" for k in range(8))


class Session:
    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "lsp.server"], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(early.frame({"jsonrpc": "2.0", **message}))
        self.proc.stdin.flush()

    def receive(self) -> dict[str, Any]:
        out = self.proc.stdout
        assert out is not None
        header = b""
        while not header.endswith(b"\r\n\r\n"):
            byte = out.read(1)
            assert byte, "the server ended"
            header += byte
        length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
        return json.loads(out.read(length))  # type: ignore[no-any-return]

    def until(self, found: Any, limit: int = 200) -> list[dict[str, Any]]:
        """Messages up to the first for which `found` holds (it last)."""
        seen = []
        for _ in range(limit):
            seen.append(self.receive())
            if found(seen[-1]):
                return seen
        raise AssertionError(f"not among {seen}")

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


@pytest.fixture
def session() -> Any:
    s = Session()
    yield s
    s.close()


def initialize(session: Session, options: Any = None) -> dict[str, Any]:
    params = {"processId": None, "rootUri": None, "capabilities": {}, "initializationOptions": options}
    session.send({"id": 1, "method": "initialize", "params": params})
    return session.until(lambda m: m.get("id") == 1)[-1]


def test_the_server_takes_over_from_the_early_front(session: Session) -> None:
    answer = initialize(session)
    assert answer["result"] == early.initialize_result({"capabilities": {}})
    session.send({"method": "initialized", "params": {}})
    uri = "file:///tmp/hexplore-early/many.c"
    doc = {"uri": uri, "languageId": "c", "version": 7, "text": MANY}
    session.send({"method": "textDocument/didOpen", "params": {"textDocument": doc}})
    first = session.receive()
    assert first["method"] == "textDocument/publishDiagnostics" and first["params"]["version"] == 7
    lines = {d["range"]["start"]["line"] for d in first["params"]["diagnostics"]}
    assert lines == {0}  # a file of 8 functions: its first function's, at once
    hover = {"textDocument": {"uri": uri}, "position": {"line": 5, "character": 40}}
    session.send({"id": 2, "method": "textDocument/hover", "params": hover})
    seen = session.until(lambda m: m.get("id") == 2)
    assert "loop `i`" in seen[-1]["result"]["contents"]["value"]  # answered by the server
    seen += session.until(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                          and {d["range"]["start"]["line"] for d in m["params"]["diagnostics"]} >= set(range(8)))  # fmt: skip
    assert not any(m.get("id") == 1 for m in seen)  # initialize answered once
    assert first not in seen  # the first publish not repeated
    session.send({"id": 3, "method": "shutdown"})
    assert session.until(lambda m: m.get("id") == 3)[-1]["result"] is None


def test_a_first_message_other_than_initialize_goes_to_the_server(session: Session) -> None:
    session.send({"id": 5, "method": "shutdown"})
    assert session.until(lambda m: m.get("id") == 5)[-1] == {"jsonrpc": "2.0", "id": 5, "result": None}


def test_settings_with_problems_leave_the_analysis_to_the_server(session: Session) -> None:
    started = time.monotonic()
    initialize(session, {"tileSizes": [0]})
    session.send({"method": "initialized", "params": {}})
    doc = {"uri": "file:///tmp/hexplore-early/one.c", "languageId": "c", "version": 1, "text": MANY.split("\n")[0]}
    session.send({"method": "textDocument/didOpen", "params": {"textDocument": doc}})
    seen = session.until(lambda m: m.get("method") == "textDocument/publishDiagnostics")
    warned = [m for m in seen if m.get("method") == "window/showMessage"]
    assert warned and "tileSizes" in warned[0]["params"]["message"]  # the server's words, shown
    assert time.monotonic() - started < 60


def test_a_failure_in_the_front_hands_everything_over(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(params: dict[str, Any]) -> dict[str, Any]:
        raise KeyError("a bug")

    monkeypatch.setattr(early, "initialize_result", broken)
    pipe = Pipe(INIT, opened("void f(void) {}\n"))
    handover = early._Front(pipe.read, pipe.write).run()
    assert pipe.out == b"" and handover.answered is None  # the server answers initialize
    assert handover.replay == early.frame({"jsonrpc": "2.0", **INIT})
