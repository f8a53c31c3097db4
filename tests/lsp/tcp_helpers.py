"""A `hexplore-lsp --tcp 127.0.0.1:0` subprocess for the TCP tests: its port, from the line it
prints on stderr, and the session token, from its token file."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).parents[2]


@dataclass
class TcpServer:
    proc: subprocess.Popen[bytes]
    port: int
    token_file: Path
    stderr: Path

    @property
    def token(self) -> str:
        return self.token_file.read_text().strip()

    def log(self) -> str:
        return self.stderr.read_text(errors="replace")

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


def start_server(tmp: Path, *extra: str, timeout_s: float = 60.0) -> TcpServer:
    token_file, stderr = tmp / "session.token", tmp / "stderr.txt"
    with open(stderr, "wb") as err:
        cmd = [sys.executable, "-m", "lsp.server", "--tcp", "127.0.0.1:0", "--token-file", str(token_file), *extra]
        proc = subprocess.Popen(cmd, cwd=ROOT, stderr=err)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for line in stderr.read_text(errors="replace").splitlines():
            if "listening on 127.0.0.1:" in line:
                port = int(line.split("127.0.0.1:")[1].split(";")[0])
                return TcpServer(proc, port, token_file, stderr)
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    proc.wait()
    raise TimeoutError(f"hexplore-lsp --tcp did not listen: {stderr.read_text(errors='replace')}")


def frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def initialize(token: str | None, id: int = 1) -> dict[str, Any]:
    options = {} if token is None else {"token": token}
    params = {"processId": os.getpid(), "rootUri": None, "capabilities": {}, "initializationOptions": options}
    return {"jsonrpc": "2.0", "id": id, "method": "initialize", "params": params}


def exchange(port: int, data: bytes, timeout_s: float = 30.0) -> bytes:
    """Send `data` on a new connection; everything the server sends until it closes it (a
    connection still open after `timeout_s` fails the test)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout_s) as s:
        s.sendall(data)
        got = b""
        while chunk := s.recv(65536):
            got += chunk
        return got
