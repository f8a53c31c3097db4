"""The first second of ``hexplore-lsp`` (`main`; ``python -m lsp.server`` too) over stdio,
before pygls and lsprotocol load.

Importing pygls and lsprotocol takes a second of CPU (lsprotocol's thousand attrs classes alone
0.4-0.7 s), more than the whole budget from process start to a file's first diagnostics (issue
29.3: 1 s). So the server starts here, in plain Python: `start` reads the first messages off
stdin, answers ``initialize`` with the capabilities pygls would answer (`initialize_result`;
`tests/lsp/test_early.py` compares them), and on the first ``didOpen`` analyses the document in
an explorer `Workspace` (imported on a thread meanwhile, while the main thread waits on stdin)
and publishes its first diagnostics as `lsp/diagnostics.py` would (`diagnostics_json`; compared
too): a big file's first function's (the server's `PARTIAL_MIN_FUNCTIONS` rule), a small one's
whole. Then it hands over (`Handover`): the server imports pygls, reads every byte read here again
(`initialize` once more: its answer is dropped, after a check that it is the one sent), adopts the
workspace with the document open as it was (the early analysis stops at the first publish: going
on, it would only slow the imports down; the server's own finds its functions in the cache), and
goes on as usual; its first publish of the same diagnostics is not sent again.

Anything else at the start — a message other than ``initialize``, ``initialized``, ``didOpen``
or a ``didChangeConfiguration`` with hexplore's settings, settings with problems, a header or
body it does not read at a glance — hands over at once: the server answers it, as it always did.
Over TCP nothing of this runs.

*Architecture invariant:* this module imports neither pygls nor lsprotocol (`lsp/server.py`
imports them after `start` returns).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import threading
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

PARTIAL_MIN_FUNCTIONS = 6  # the server's rule too (`lsp/server.py`): see there
FIRST_DIAGNOSTICS_WAIT_S = 5.0  # at most this long before handing over without them
SERVER_NAME, SERVER_VERSION = "hexplore-lsp", "0.1.0"
# `lsp/commands.py` ALL, registered as commands unless the client runs them (`clientCommands`)
COMMANDS = (
    "hexplore.showScheduleTree", "hexplore.showPasses", "hexplore.showCuda", "hexplore.showOpenCL",
    "hexplore.showC", "hexplore.showPtx", "hexplore.showLlvmIr", "hexplore.run", "hexplore.previewRewrite",
)  # fmt: skip
ENCODINGS = ("utf-8", "utf-16", "utf-32")
_HEADER = re.compile(rb"Content-Length: (\d+)\r\n(?:Content-Type: [^\r\n]*\r\n)?\r\n")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")

# Diagnostic severities (LSP's numbers)
ERROR, WARNING, INFORMATION, HINT = 1, 2, 3, 4


# ------------------------------------------------------------------------------ positions


def units(s: str, encoding: str) -> int:
    """`s`'s length in the negotiated encoding's code units."""
    if encoding == "utf-8":
        return len(s.encode("utf-8"))
    if encoding == "utf-32":
        return len(s)
    return len(s) + sum(1 for ch in s if ord(ch) > 0xFFFF)


def split_lines(text: str) -> list[str]:
    return _LINE_BREAK.split(text)


def lsp_position(lines: list[str], encoding: str, line: int, col: int) -> tuple[int, int]:
    """The LSP (line, character) of the core's (1-based line, 1-based byte column), clamped."""
    if line < 1:
        return (0, 0)
    if line > len(lines):
        return (len(lines) - 1, units(lines[-1], encoding))
    text = lines[line - 1]
    if text.isascii():
        return (line - 1, min(max(col - 1, 0), len(text)))
    prefix = text.encode("utf-8")[: max(col - 1, 0)].decode("utf-8", errors="ignore")
    return (line - 1, units(prefix, encoding))


# ------------------------------------------------------------------------------ initialize


def position_encoding(params: dict[str, Any]) -> str:
    """pygls' choice: the client's first encoding that it supports, else UTF-16."""
    general = params.get("capabilities", {}).get("general") or {}
    for enc in general.get("positionEncodings") or ():
        if enc in ENCODINGS:
            return str(enc)
    return "utf-16"


def client_commands(params: dict[str, Any]) -> bool:
    options = params.get("initializationOptions")
    return isinstance(options, dict) and options.get("clientCommands") is True


def initialize_result(params: dict[str, Any]) -> dict[str, Any]:
    """What pygls answers to `params` for `lsp.server.HexploreServer` (as JSON)."""
    commands = [] if client_commands(params) else list(COMMANDS)
    sync: dict[str, Any] = {"openClose": True, "change": 2}
    said = (params["capabilities"].get("textDocument") or {}).get("synchronization") or {}
    for key in ("willSave", "willSaveWaitUntil"):  # false where the client says either way
        if said.get(key) is not None:
            sync[key] = False
    sync["save"] = False
    return {
        "capabilities": {
            "positionEncoding": position_encoding(params),
            "textDocumentSync": sync,
            "hoverProvider": True,
            "codeActionProvider": {"codeActionKinds": ["quickfix", "refactor.rewrite"], "resolveProvider": False},
            "codeLensProvider": {"resolveProvider": False},
            "executeCommandProvider": {"commands": commands},
            "inlayHintProvider": {"resolveProvider": False},
            "workspace": {"workspaceFolders": {"supported": True, "changeNotifications": True}, "fileOperations": {}},
        },
        "serverInfo": {"name": SERVER_NAME, "version": SERVER_VERSION},
    }


def _plain_initialize(params: object) -> bool:
    """Whether `params` are what `initialize_result` is sure about (else pygls answers)."""
    if not isinstance(params, dict) or not isinstance(params.get("capabilities"), dict):
        return False
    general = params["capabilities"].get("general")
    if general is not None and not isinstance(general, dict):
        return False
    encodings = (general or {}).get("positionEncodings")
    if encodings is not None and not (isinstance(encodings, list) and all(isinstance(e, str) for e in encodings)):
        return False
    document = params["capabilities"].get("textDocument")
    if document is not None and not isinstance(document, dict):
        return False
    sync = (document or {}).get("synchronization")
    if sync is not None and not isinstance(sync, dict):
        return False
    if any(not isinstance((sync or {}).get(k, False), bool) for k in ("willSave", "willSaveWaitUntil")):
        return False
    return params.get("initializationOptions") is None or isinstance(params["initializationOptions"], dict)


def root_of(params: dict[str, Any]) -> str | None:
    """The workspace root the server takes from `initialize` (`HexploreServer.on_initialize`)."""
    root = params.get("rootUri")
    folders = params.get("workspaceFolders")
    if root is None and folders and isinstance(folders[0], dict):
        root = folders[0].get("uri")
    if isinstance(root, str) and root.startswith("file:"):
        return urllib.parse.unquote(urllib.parse.urlparse(root).path)
    return None


# ------------------------------------------------------------------------------ diagnostics


def diagnostics_json(analysis: Any, encoding: str, remarks_doc_uri: str) -> list[dict[str, Any]]:
    """`lsp.diagnostics.diagnostics(analysis, index)` as the JSON pygls sends (no decisions: none
    are known this early)."""
    from explorer.api import RemarkKind, SourceRange
    from explorer.offload import DECISION_PASSES

    doc = analysis.document
    lines = split_lines(doc.text)

    def rng(r: Any) -> dict[str, Any]:
        start = lsp_position(lines, encoding, r.line, r.col)
        end = lsp_position(lines, encoding, r.end_line, r.end_col)
        if end < start:
            end = lsp_position(lines, encoding, r.line, r.col + 1)
        return _range(start, end)

    def include_line(r: Any) -> dict[str, Any]:
        name = os.path.basename(r.file)
        for n, line in enumerate(lines):
            if line.lstrip().startswith("#") and "include" in line and name in line:
                return _range((n, 0), lsp_position(lines, encoding, n + 1, len(line.encode()) + 1))
        return _range((0, 0), (0, 0))

    severity_of = {RemarkKind.MISSED: WARNING, RemarkKind.PASSED: INFORMATION, RemarkKind.ANALYSIS: HINT}
    by_name = {"SyntaxError": ERROR, "FunctionHasErrors": INFORMATION, "InternalError": ERROR}
    out = []
    for remark in analysis.all_remarks():
        message = remark.message
        if remark.range.file == doc.path:
            where = rng(remark.range)
        else:
            where = include_line(remark.range)
            r = remark.range
            message = f"in included file {r.file}:{r.line}:{r.col}: {message}"
        if remark.pass_name in DECISION_PASSES and remark.kind is RemarkKind.MISSED:
            severity = INFORMATION
        else:
            severity = by_name.get(remark.name, severity_of[remark.kind])
        diag: dict[str, Any] = {
            "range": where, "message": message, "severity": severity, "code": remark.name,
            "codeDescription": {"href": f"{remarks_doc_uri}#{remark.name}"}, "source": "hexplore",
        }  # fmt: skip
        related = []
        if remark.name == "LoopCarriedDependence":
            kind = remark.args.get("dependence", "")
            for role, key, stmt in (("source", "source_range", "source"), ("sink", "sink_range", "sink")):
                r = remark.args.get(key)
                if not isinstance(r, dict) or r.get("file") != doc.path:
                    continue
                words = f"{role} of the {kind} dependence: statement {remark.args.get(stmt, '?')}"
                related.append({"location": {"uri": doc.uri, "range": rng(SourceRange(**r))}, "message": words})
        if related:
            diag["relatedInformation"] = related
        out.append(diag)
    return out


def _range(start: tuple[int, int], end: tuple[int, int]) -> dict[str, Any]:
    return {"start": {"line": start[0], "character": start[1]}, "end": {"line": end[0], "character": end[1]}}


# ------------------------------------------------------------------------------ the front


@dataclass
class Handover:
    """What the server takes over from `start`."""

    replay: bytes = b""  # every byte read off stdin, to be read again by the server
    answered: tuple[Any, dict[str, Any]] | None = None  # the initialize request's id, the answer sent
    workspace: Any = None  # the explorer Workspace with the document open (None: nothing adopted)
    adopted: dict[str, tuple[str, int]] = field(default_factory=dict)  # uri -> (text, version) opened here
    published: dict[str, dict[str, Any]] = field(default_factory=dict)  # uri -> the publishDiagnostics params sent


def islpy_version_from_its_folder() -> None:
    """islpy's `version` module, made from the name of islpy's ``.dist-info`` folder when islpy is
    imported: its own asks `importlib.metadata`, whose imports (``email.*``) took 0.13-0.16 s of
    the editor's start-up at load 6 (issue 29.3). The same numbers islpy would find; where the
    folder is not one plain ``islpy-X.Y.Z.dist-info``, islpy's own module does it."""
    import importlib.util

    if "islpy" in sys.modules:
        return
    spec = importlib.util.find_spec("islpy")
    if spec is None or spec.origin is None:
        return
    site = os.path.dirname(os.path.dirname(spec.origin))
    found = [n for n in os.listdir(site) if n.startswith("islpy-") and n.endswith(".dist-info")]
    plain = re.fullmatch(r"islpy-(([0-9.]+)([a-z0-9]*?))\.dist-info", found[0]) if len(found) == 1 else None
    if plain is not None:
        sys.meta_path.insert(0, _IslpyVersion(plain.group(1), plain.group(3), plain.group(2)))


class _IslpyVersion:
    """The finder and loader of `islpy.version` (`islpy_version_from_its_folder`); used once."""

    def __init__(self, text: str, status: str, numbers: str) -> None:
        self.text, self.status, self.numbers = text, status, numbers

    def find_spec(self, name: str, path: object = None, target: object = None) -> Any:
        import importlib.machinery

        if name != "islpy.version":
            return None
        sys.meta_path.remove(self)
        loader: Any = self  # a Loader by its methods (importlib.abc is not imported for the type)
        return importlib.machinery.ModuleSpec(name, loader)

    def create_module(self, spec: Any) -> None:
        return None

    def exec_module(self, module: Any) -> None:
        module.VERSION_TEXT, module.VERSION_STATUS = self.text, self.status
        module.VERSION = tuple(int(n) for n in self.numbers.split("."))


def frame(message: dict[str, Any]) -> bytes:
    """`message` as pygls frames it."""
    body = json.dumps(message)
    header = f"Content-Length: {len(body)}\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n"
    return (header + body).encode("utf-8")


class _Front:
    def __init__(self, read: Callable[[], bytes], write: Callable[[bytes], None]) -> None:
        self._read, self._write = read, write
        self.raw = bytearray()
        self._pos = 0  # how far `raw` was read as messages
        self.handover = Handover()
        self._imported = threading.Event()
        self._import_error: BaseException | None = None
        self._published = threading.Event()
        self._publishing = threading.Lock()
        self._open = True  # whether this front may still publish (not after the hand-over)

    def run(self) -> Handover:
        threading.Thread(target=self._import, name="hexplore-early-imports", daemon=True).start()
        with contextlib.suppress(Exception):  # a bug here must not keep the server from starting
            self._run()
        return self._done()

    def _run(self) -> None:
        first = self._message()
        if first is None or first.get("method") != "initialize" or "id" not in first:
            return
        params = first.get("params")
        if not isinstance(params, dict) or not _plain_initialize(params):
            return
        answer = initialize_result(params)
        self._write(frame({"jsonrpc": "2.0", "id": first["id"], "result": answer}))
        self.handover.answered = (first["id"], answer)
        pushed: list[object] = []  # settings pushed meanwhile (Neovim's `settings`)
        while (message := self._message()) is not None:
            if message.get("method") == "workspace/didChangeConfiguration" and self._ours(message.get("params")):
                pushed.append(message["params"]["settings"])
            elif message.get("method") != "initialized":
                break
        if message is not None and message.get("method") == "textDocument/didOpen":
            self._open_first(params, message.get("params"), pushed)

    def _ours(self, params: object) -> bool:
        """Whether a didChangeConfiguration carries hexplore's settings (else the server asks the
        client for them: `HexploreServer.on_configuration`)."""
        data = params.get("settings") if isinstance(params, dict) else None
        if not isinstance(data, dict):
            return False
        self._imported.wait()
        if self._import_error is not None:
            return False
        from explorer.settings import SETTING_KEYS

        return "hexplore" in data or bool(set(data) & set(SETTING_KEYS))

    def _import(self) -> None:
        try:
            from explorer.parsing import warm_up

            warm_up()  # the front end's worker: libclang loads in it, on another core
            islpy_version_from_its_folder()
            import explorer.workspace  # noqa: F401  (islpy, the analysis: tenths of a second)
            from explorer import api, offload, settings  # noqa: F401
        except BaseException as e:  # said by the server when it imports them again
            self._import_error = e
        finally:
            self._imported.set()

    def _message(self) -> dict[str, Any] | None:
        """The next message, or None where it is not one read at a glance (the server reads it)."""
        while True:
            m = _HEADER.match(self.raw, self._pos)
            if m is not None and len(self.raw) >= m.end() + int(m[1]):
                body = bytes(self.raw[m.end() : m.end() + int(m[1])])
                self._pos = m.end() + int(m[1])
                try:
                    message = json.loads(body)
                except ValueError:
                    return None
                return message if isinstance(message, dict) and message.get("jsonrpc") == "2.0" else None
            if m is None and (b"\r\n\r\n" in self.raw[self._pos :] or len(self.raw) - self._pos > 4096):
                return None  # a header this front does not read at a glance
            chunk = self._read()
            if not chunk:
                return None
            self.raw += chunk

    def _open_first(self, init: dict[str, Any], params: object, pushed: list[object]) -> None:
        doc = params.get("textDocument") if isinstance(params, dict) else None
        if not isinstance(doc, dict) or not isinstance(doc.get("uri"), str) or not isinstance(doc.get("text"), str):
            return
        version = doc.get("version")
        if not isinstance(version, int) or isinstance(version, bool):
            return
        self._imported.wait()
        if self._import_error is not None:
            return
        from explorer.settings import Settings
        from explorer.workspace import Workspace

        settings, problems = Settings.from_json(init.get("initializationOptions"), Settings())
        for data in pushed:
            settings, more = Settings.from_json(data, settings)
            problems += more
        if problems:
            return  # the server shows them
        ws = Workspace(settings)
        ws.root = root_of(init)
        uri, text = doc["uri"], doc["text"]
        language = doc.get("languageId") if isinstance(doc.get("languageId"), str) else None
        ws.open(uri, text, version, language)
        self.handover.workspace = ws
        self.handover.adopted[uri] = (text, version)
        encoding = position_encoding(init)
        threading.Thread(target=self._analyse, args=(ws, uri, encoding), name="hexplore-early-analysis", daemon=True).start()
        self._published.wait(FIRST_DIAGNOSTICS_WAIT_S)

    def _analyse(self, ws: Any, uri: str, encoding: str) -> None:
        def progress(partial: Any, left: int) -> None:
            if len(partial.functions) + left >= PARTIAL_MIN_FUNCTIONS:
                self._publish(partial, encoding)

        try:  # stops once published: the rest would slow the server's imports down (the GIL),
            # and the server's analysis finds what was done in the cache
            result = ws.analyze(uri, cancel=self._published.is_set, progress=progress)
            self._publish(result, encoding)
        except BaseException:  # Cancelled, or a failure the server's analysis meets again
            pass
        finally:
            self._published.set()

    def _publish(self, analysis: Any, encoding: str) -> None:
        """The first diagnostics, once, and only before the hand-over."""
        from pathlib import Path

        with self._publishing:
            if not self._open or self._published.is_set():
                return
            doc_uri = (Path(__file__).with_name("REMARKS.md")).as_uri()
            diags = diagnostics_json(analysis, encoding, doc_uri)
            params = {"uri": analysis.uri, "diagnostics": diags, "version": analysis.version}
            self._write(frame({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": params}))
            self.handover.published[analysis.uri] = params
            self._published.set()

    def _done(self) -> Handover:
        with self._publishing:
            self._open = False
        self.handover.replay = bytes(self.raw)
        return self.handover


def start(stdin_fd: int = 0, stdout: Any = None) -> Handover:
    """Answer ``initialize`` and publish the first document's first diagnostics before pygls
    loads (module docstring); what the server takes over."""
    out = stdout or sys.stdout.buffer

    def read() -> bytes:
        try:
            return os.read(stdin_fd, 1 << 16)
        except OSError:
            return b""

    def write(data: bytes) -> None:
        out.write(data)
        out.flush()

    return _Front(read, write).run()


def main(argv: list[str] | None = None) -> int:
    """``hexplore-lsp`` and ``python -m lsp.server``: the arguments checked (a refused address
    answers at once), then over stdio `start`, then the server (`lsp.server.main`)."""
    from lsp.arguments import parse_args

    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    handover = None
    if args.tcp is None:
        handover = start()
    else:  # the front end's worker loads on another core while the server imports pygls
        from explorer.parsing import warm_up

        warm_up()
    from lsp import server

    return server.main(argv, handover)
