"""Malformed JSON-RPC input over stdio (issue 31.3): the server answers what can be answered,
skips what cannot, and never goes deaf.

Specific cases: a body that is not JSON gets -32700; a batch and a body that is not a request get
-32600; after a wrong or unreadable ``Content-Length`` the next good message is answered; an
error answer never carries a Python traceback. Then 1,000 messages from a seeded generator —
junk bytes, broken headers, wrong lengths, non-JSON and non-request bodies, batches, bad params,
unknown methods — mixed with well-formed requests: every well-formed request is answered and the
server is still up at the end.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures"
URI = (FIXTURES / "matmul.c").as_uri()
ANSWER_S = 60.0


def frame(message: Any, delta: int = 0) -> bytes:
    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % (len(body) + delta) + body


class RawServer:
    """`hexplore-lsp` on pipes, read by a thread that collects every message it sends."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "lsp.server"], cwd=ROOT,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        self.messages: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            assert length is not None
            message = json.loads(out.read(length))
            with self._lock:
                self.messages.append(message)

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def request(self, msg_id: int | str, method: str, params: Any) -> bytes:
        return frame({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})

    def answer(self, msg_id: Any, timeout: float = ANSWER_S) -> dict[str, Any]:
        """The response to `msg_id` (None: the next response with ``id: null`` not yet taken)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                for i, m in enumerate(self.messages):
                    if "method" not in m and m.get("id", "absent") == msg_id:
                        return self.messages.pop(i)
            if self.proc.poll() is not None:
                raise AssertionError(f"the server exited with {self.proc.returncode}")
            time.sleep(0.01)
        raise AssertionError(f"no answer to {msg_id!r} within {timeout:.0f} s")

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()


@pytest.fixture(scope="module")
def server() -> Any:
    s = RawServer()
    s.send(s.request("init", "initialize", {"processId": os.getpid(), "rootUri": FIXTURES.as_uri(), "capabilities": {}}))
    assert "result" in s.answer("init")
    s.send(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
    text = (FIXTURES / "matmul.c").read_text()
    item = {"uri": URI, "languageId": "c", "version": 1, "text": text}
    s.send(frame({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": item}}))
    yield s
    s.stop()


def functions(s: RawServer, msg_id: int | str) -> bytes:
    return s.request(msg_id, "hexplore/functions", {"uri": URI})


def assert_functions(answer: dict[str, Any]) -> None:
    assert "matmul" in [f["name"] for f in answer["result"]], answer


def no_python_details(answer: dict[str, Any]) -> None:
    text = json.dumps(answer.get("error", {}))
    assert "Traceback" not in text and 'File \\"' not in text and "traceback" not in text, text


def test_a_body_that_is_not_json_is_a_parse_error(server: RawServer) -> None:
    server.send(frame(b"{this is not json"))
    assert server.answer(None)["error"]["code"] == -32700
    server.send(frame(b"\xff\xfe\x00 binary"))
    assert server.answer(None)["error"]["code"] == -32700


def test_a_batch_is_an_invalid_request(server: RawServer) -> None:
    batch = [{"jsonrpc": "2.0", "id": "b1", "method": "hexplore/functions", "params": {"uri": URI}}]
    server.send(frame(json.dumps(batch).encode()))
    answer = server.answer(None)
    assert answer["error"]["code"] == -32600 and "batch" in answer["error"]["message"]


@pytest.mark.parametrize(
    "body",
    [b"42", b'"hello"', b"null", b'{"jsonrpc": "2.0"}', b'{"id": 3, "method": "hexplore/functions"}',
     b'{"jsonrpc": "2.0", "id": 3, "method": 7}', b'{"jsonrpc": "2.0", "id": [1], "method": "x"}'],
)  # fmt: skip
def test_a_body_that_is_not_a_message_is_an_invalid_request(server: RawServer, body: bytes) -> None:
    server.send(frame(body))
    msg_id = 3 if b'"id": 3' in body else None
    assert server.answer(msg_id)["error"]["code"] == -32600


@pytest.mark.parametrize(
    "broken",
    [
        frame({"jsonrpc": "2.0", "id": "lost", "method": "hexplore/functions", "params": {"uri": URI}}, 300),
        frame({"jsonrpc": "2.0", "id": "lost", "method": "hexplore/functions", "params": {"uri": URI}}, -10),
        b"Content-Length: 5\r\n\r\n",
        b"Content-Length: banana\r\n\r\n{}",
        b"Content-Length: 99999999999\r\n\r\n{}",
        b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n",
        b"\r\n\r\n\r\n",
        b"Content-Type: application/json\r\n\r\n{}",
    ],
    ids=["too-long", "too-short", "no-body", "not-a-number", "huge", "http", "blank-lines", "no-length"],
)
def test_after_a_broken_header_the_next_message_is_answered(server: RawServer, broken: bytes) -> None:
    key = f"after-{broken[:30]!r}"
    server.send(broken + functions(server, key))
    assert_functions(server.answer(key))


def test_bad_params_and_unknown_methods_are_answered(server: RawServer) -> None:
    server.send(server.request("bad-hover", "textDocument/hover", {"textDocument": 5, "position": "x"}))
    answer = server.answer("bad-hover")
    assert answer["error"]["code"] == -32602
    no_python_details(answer)
    server.send(server.request("unknown", "hexplore/nothing", {}))
    assert server.answer("unknown")["error"]["code"] == -32601


def test_an_internal_error_is_answered_without_python_details() -> None:
    """A handler that raises what it did not mean to (a bug): pygls answers with the exception's
    type, message and traceback; hexplore-lsp with a generic InternalError (the log has them)."""
    from concurrent.futures import Future

    from lsp.server import HexploreServer

    class Capture:
        data = b""

        def write(self, data: bytes) -> None:
            self.data += data

        def close(self) -> None:
            pass

    server = HexploreServer()
    out = Capture()
    server.protocol.set_writer(out)
    failed: Future[Any] = Future()
    failed.set_exception(KeyError("/home/secret/path"))
    server.protocol._send_handler_result(failed, msg_id=17)
    answer = json.loads(out.data.split(b"\r\n\r\n", 1)[1])
    assert answer["id"] == 17 and answer["error"]["code"] == -32603
    assert "secret" not in out.data.decode() and "KeyError" not in out.data.decode()
    no_python_details(answer)


def _junk(rng: random.Random, good: bytes) -> bytes:
    """One malformed message (or stray bytes) of a random kind."""
    kind = rng.randrange(12)
    req = {"jsonrpc": "2.0", "id": f"junk{rng.random()}", "method": "hexplore/functions", "params": {"uri": URI}}
    if kind == 0:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 60))).replace(b"ontent", b"ontext")
    if kind == 1:
        return frame(json.dumps(req).encode()[: rng.randrange(1, 40)])  # truncated JSON
    if kind == 2:
        return frame(req, rng.choice([-7, -1, 1, 9, 200]))  # a wrong length
    if kind == 3:
        return frame(json.dumps([req, req]).encode())  # a batch
    if kind == 4:
        return frame(rng.choice([b"1", b"[]", b"true", b'{"jsonrpc": "1.0", "id": 1, "method": "x"}', b'{"result": 3}']))
    if kind == 5:
        return b"Content-Length: %s\r\n\r\n" % rng.choice([b"-4", b"", b"1e3", b"0x10"])
    if kind == 6:
        return frame({"jsonrpc": "2.0", "id": rng.randrange(10**6, 2 * 10**6), "method": "textDocument/hover", "params": rng.choice([[], {}, {"textDocument": {}}])})
    if kind == 7:
        return frame({"jsonrpc": "2.0", "method": f"unknown/{rng.randrange(99)}", "params": {}})  # a notification: no answer
    if kind == 8:
        return frame({"jsonrpc": "2.0", "id": rng.randrange(10**6, 2 * 10**6), "method": "hexplore/artifact", "params": {"uri": 3, "pass": None}})
    if kind == 9:
        return b"X-Junk: yes\r\n" + good[: rng.randrange(len(good))] + b"\r\n"  # a message cut short
    if kind == 10:
        return frame(b"\x00\x01\x02" + json.dumps(req).encode())
    return b"\r\n" * rng.randrange(1, 4)


def test_a_thousand_random_and_malformed_messages(server: RawServer) -> None:
    rng = random.Random(3103)
    wanted: list[str] = []
    stream = bytearray()
    for n in range(1000):
        if rng.random() < 0.3:
            msg_id = f"good-{n}"
            method, params = rng.choice([
                ("hexplore/functions", {"uri": URI}),
                ("textDocument/hover", {"textDocument": {"uri": URI}, "position": {"line": rng.randrange(20), "character": rng.randrange(20)}}),
                ("textDocument/codeLens", {"textDocument": {"uri": URI}}),
            ])  # fmt: skip
            stream += server.request(msg_id, method, params)
            wanted.append(msg_id)
        else:
            stream += _junk(rng, server.request("x", "hexplore/functions", {"uri": URI}))
        if len(stream) > 4096 or n == 999:  # in pieces, as a pipe delivers them
            server.send(bytes(stream))
            stream.clear()
    for msg_id in wanted:
        answer = server.answer(msg_id)
        assert "result" in answer, answer
    with server._lock:
        errors = [m for m in server.messages if "error" in m]
    for answer in errors:
        no_python_details(answer)
        assert answer["error"]["code"] != -32603, answer
    server.send(functions(server, "still-up"))
    assert_functions(server.answer("still-up"))


def test_over_tcp_too(tmp_path: Path) -> None:
    """The TCP mode reads with the same reader: after authentication, a non-JSON body gets -32700
    and a wrong Content-Length does not swallow the next request."""
    import socket

    from tests.lsp.tcp_helpers import initialize, start_server

    srv = start_server(tmp_path)
    reply = b""
    try:
        after = {"jsonrpc": "2.0", "id": "tcp-after", "method": "hexplore/functions", "params": {"uri": URI}}
        data = (
            frame(initialize(srv.token))
            + frame(b"{not json")
            + frame({"jsonrpc": "2.0", "id": "tcp-long", "method": "hexplore/functions", "params": {}}, 200)
            + frame(after)
        )
        with socket.create_connection(("127.0.0.1", srv.port), timeout=ANSWER_S) as conn:
            conn.sendall(data)
            while b"tcp-after" not in reply and (chunk := conn.recv(65536)):
                reply += chunk
    finally:
        srv.stop()
    answers = [json.loads(part.split(b"\r\n\r\n", 1)[1]) for part in reply.split(b"Content-Length: ")[1:]]
    by_id = {a.get("id"): a for a in answers if "method" not in a}
    assert by_id[None]["error"]["code"] == -32700
    assert by_id["tcp-after"]["error"]["code"] == -32602  # read and answered: the document is not open here
