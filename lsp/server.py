"""``hexplore-lsp``: the language server (pygls 2) over stdio, or TCP with ``--tcp HOST:PORT``
(loopback only, a session token, one server per connection: `lsp/tcp.py`).

Each open document lives in an explorer `Workspace`. A didOpen/didChange marks the document dirty
and starts its analysis loop if none runs: one analysis per document at a time, on a bounded pool
of `ANALYSIS_THREADS` shared by all documents (so a huge document holds one thread, never the
others'). A newer text (or new settings) makes the running analysis stop at the next function
(`Cancelled`: the functions it finished stay in the cache) and the loop analyses the newest
text; diagnostics are published only for the text that is still current, with its version. A
document's first analysis publishes as it goes where the file has `PARTIAL_MIN_FUNCTIONS` or more
(the functions done so far; `_partial_publisher`), so a big file's first diagnostics come after
its first function; meanwhile a hover on a function done answers from that part.
Staleness is decided by the workspace's revisions, not by client versions (a version going
backwards is analysed once, as the newest text).

After the analysis' diagnostics come the back end's offload decisions (`explorer/offload.py`):
once the text has rested `DECISION_DELAY_S`, the decisions not known yet are computed one
function at a time in the back-end worker, a process of its own (the GPU mappings they need take
seconds, inside isl calls that hold the GIL), and the same version is published again with them.
Hovers and analyses never wait behind them; a hover's memory placements come with them.

Requests never wait for an analysis that a storm of edits keeps cancelling: hover, inlay hints,
code lenses and the ``hexplore/*`` requests answer from the document's newest finished analysis,
mapping positions through the edits made since (`lsp/staleness.py`); where a position falls in
text edited since, the answer is ContentModified (-32801). Only a document that has no finished
analysis yet is waited for.

Threads and isl/libclang: islpy holds the GIL for the whole of every isl call (measured: a 0.7 s
`compute_schedule` let another thread run 4 times), so isl calls from several threads never
overlap, and each loop nest has an isl context of its own (`BuildModel`): the analyses of the
pool create fresh contexts, but for an edited function's nests, which are modeled in the context
of the function's last analysis (so that an unchanged model keeps its dependences: isl's
`is_equal` compares within one context). The model and the dependences read none of the
scheduler's or the AST's options the request thread sets there; the budget is shared: a nest that
runs out of it is modeled again in a fresh context (`core_compiler/analysis.py`), and a mapping
of the old analysis made meanwhile may find its budget reset to the analysis' one. What reads or extends a published
analysis' isl objects (hovers, GPU placement, the back-end passes: they set options on a nest's
context) runs on one request thread per server. libclang runs in the front end's worker process
(`core_compiler/frontend/worker.py`), which takes one request at a time. The pool gives fairness
(threads interleave at Python bytecode), not speed-up: the GIL keeps one core busy; a short GIL
switch interval (`SWITCH_INTERVAL_S`) keeps the event loop answering while analyses run.

Malformed input (non-JSON bodies, batches, broken ``Content-Length`` headers) is answered and
skipped by `lsp/framing.py`, the reader used for stdio and TCP; internal errors are answered with
a generic InternalError and logged.

*Architecture invariant:* this package is the only one that imports pygls or lsprotocol.
"""

from __future__ import annotations

if __name__ == "__main__":  # ``python -m lsp.server``: as ``hexplore-lsp``, through `lsp/early.py`,
    # which checks the arguments, starts the front end's worker and answers the client's first
    # messages before this module (pygls, lsprotocol: a second) is imported, as `lsp.server`
    from lsp.early import main as _main

    raise SystemExit(_main())

import asyncio
import contextlib
import functools
import inspect
import json
import logging
import os
import sys
import threading
import time
import urllib.parse
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from lsprotocol import types
from pygls.exceptions import (
    JsonRpcContentModified,
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcInvalidParams,
)
from pygls.lsp.server import LanguageServer
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    LanguageServerProtocol,
    default_converter,
)

from explorer import running
from explorer.api import Remark, UsageError
from explorer.directive_actions import directive_preview, offload_actions_at, remove_directive_at
from explorer.errors import Cancelled, UnknownDocument
from explorer.fixes import interchange_at, rewrite_preview, schedule_rewrites_at
from explorer.parsing import warm_up
from explorer.schedule_tree import schedule_tree
from explorer.settings import SETTING_KEYS, Settings
from explorer.views import View, function_view
from explorer.workspace import Document, DocumentAnalysis, Workspace
from lsp import (
    code_actions,
    code_lens,
    commands,
    custom_requests,
    diagnostics,
    early,
    framing,
    hover,
    inlay_hints,
    tcp,
)
from lsp.arguments import parse_args
from lsp.positions import LineIndex
from lsp.staleness import EditLog

__version__ = early.SERVER_VERSION
log = logging.getLogger("hexplore-lsp")
T = TypeVar("T")
ANALYSIS_THREADS = 4  # documents analysed at once (per process: TCP connections share them)
# How often a thread waiting for the GIL makes the running one give it up (Python's default: 5 ms).
# Answering one message takes the event loop several GIL hand-offs; at 5 ms each, behind busy
# analysis threads, a storm of 100 edits a second left hovers waiting seconds (p95 4.6 s; 0.15 s
# at 0.5 ms: benchmarks/bench_lsp.py --storm).
SWITCH_INTERVAL_S = 0.0005
# How long an analysis stays current before its offload decisions (GPU mappings, tenths of a
# second to seconds per loop nest) are computed: not while the user types.
DECISION_DELAY_S = 0.3
# A document's first analysis publishes what it has found so far (the first function's remarks,
# then more every `PARTIAL_PERIOD_S`) where it has at least `PARTIAL_MIN_FUNCTIONS` functions:
# a 400-line file's first diagnostics come after its first function, not after its last (issue
# 29.3). Smaller files, and every later analysis (edits reuse the unchanged functions: one
# function's work), publish once, complete.
PARTIAL_MIN_FUNCTIONS = early.PARTIAL_MIN_FUNCTIONS
PARTIAL_PERIOD_S = 0.25
INTERNAL_ERROR_MESSAGE = "hexplore-lsp: internal error; the server's log has the details"


def analysis_pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=ANALYSIS_THREADS, thread_name_prefix="hexplore-analysis")


class Snapshot:
    """The newest finished analysis of a document and the way from its text to the current one."""

    def __init__(self, analysis: DocumentAnalysis, current: Document, edits: EditLog) -> None:
        self.analysis = analysis
        self.current = current
        self.stale = analysis.document.revision != current.revision
        self._mapping = edits.between(analysis.document.revision, current.revision)

    def position(self, pos: types.Position) -> types.Position:
        """A position of the current text in the analysed one; ContentModified where it has none."""
        old = self._mapping.to_old(pos)
        if old is None:
            raise _modified(self.current, "the position is in text edited since")
        return old

    def range(self, rng: types.Range) -> types.Range | None:
        """A range of the analysed text in the current one (None where it has none)."""
        return self._mapping.range_to_new(rng)

    def json_ranges(self, value: Any) -> Any:
        """`value` (JSON) with every ``range``/``selectionRange`` moved to the current text;
        ContentModified where one has no counterpart."""
        if not self.stale:
            return value
        if isinstance(value, list):
            return [self.json_ranges(v) for v in value]
        if not isinstance(value, dict):
            return value
        out = {}
        for k, v in value.items():
            if k in ("range", "selectionRange") and isinstance(v, dict):
                rng = self.range(_json_to_range(v))
                if rng is None:
                    raise _modified(self.current, f"the {k} of an answer is in text edited since")
                v = _range_to_json(rng)
            out[k] = self.json_ranges(v)
        return out


def _modified(doc: Document, why: str) -> JsonRpcContentModified:
    return JsonRpcContentModified(f"hexplore: {doc.uri} changed since its last analysis ({why}); ask again")


def _json_to_range(v: dict[str, Any]) -> types.Range:
    s, e = v["start"], v["end"]
    return types.Range(types.Position(s["line"], s["character"]), types.Position(e["line"], e["character"]))


def _range_to_json(r: types.Range) -> dict[str, Any]:
    return {"start": {"line": r.start.line, "character": r.start.character},
            "end": {"line": r.end.line, "character": r.end.character}}  # fmt: skip


class HexploreServer(LanguageServer):
    def __init__(
        self,
        workspace: Workspace | None = None,
        executor: ThreadPoolExecutor | None = None,
        handover: early.Handover | None = None,
    ) -> None:
        super().__init__(
            early.SERVER_NAME,
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=_Protocol,
            converter_factory=_converter,
        )
        self.handover = handover or early.Handover()
        self.explorer = workspace or self.handover.workspace or Workspace()
        self.protocol.answered = self.handover.answered  # type: ignore[attr-defined]  # `initialize`: `lsp/early.py` answered it
        # The analysis pool; over TCP the connections' servers share one (`lsp/tcp.py`).
        self._owns_executor = executor is None
        self.executor = executor or analysis_pool()
        # What reads published analyses' isl objects: one thread (module docstring).
        self.requests = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hexplore-requests")
        # What waits for the back-end worker's offload decisions (it reads no isl object here).
        self.deciders = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hexplore-decisions")
        self.tasks: dict[str, asyncio.Future[None]] = {}
        self.dirty: set[str] = set()  # documents whose newest text (or settings) is not analysed
        self.failed: dict[str, int] = {}  # uri -> the revision whose analysis raised
        self.edits: dict[str, EditLog] = {}
        self.analyses = 0  # analyses started (the tests count them)
        self._background: set[asyncio.Future[None]] = set()
        self.deciding: dict[str, asyncio.Future[None]] = {}  # uri -> its offload decisions' task
        self.decided: dict[str, tuple[int, int]] = {}  # uri -> (revision, decisions) last published
        self.partial: dict[str, DocumentAnalysis] = {}  # uri -> its first analysis so far, as published
        self._register()

    # ------------------------------------------------------------------------- plumbing

    def _register(self) -> None:
        def f(method: str, options: Any = None) -> Callable[[Callable[..., Any]], Any]:
            return lambda handler: self.feature(method, options)(_plain(handler))

        f(types.INITIALIZE)(self.on_initialize)
        f(types.SHUTDOWN)(self.on_shutdown)
        f(types.EXIT)(self.on_exit)
        f(types.TEXT_DOCUMENT_DID_OPEN)(self.on_open)
        f(types.TEXT_DOCUMENT_DID_CHANGE)(self.on_change)
        f(types.TEXT_DOCUMENT_DID_CLOSE)(self.on_close)
        f(types.WORKSPACE_DID_CHANGE_CONFIGURATION)(self.on_configuration)
        f(types.TEXT_DOCUMENT_HOVER)(self.on_hover)
        f(types.TEXT_DOCUMENT_INLAY_HINT, types.InlayHintOptions(resolve_provider=False))(self.on_inlay_hints)
        f(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))(self.on_code_lens)
        actions = types.CodeActionOptions(code_action_kinds=list(code_actions.KINDS), resolve_provider=False)
        f(types.TEXT_DOCUMENT_CODE_ACTION, actions)(self.on_code_action)
        f(custom_requests.FUNCTIONS)(self.on_functions)
        f(custom_requests.PASSES)(self.on_passes)
        f(custom_requests.ARTIFACT)(self.on_artifact)
        f(custom_requests.SCHEDULE_TREE)(self.on_schedule_tree)
        f(custom_requests.RUN)(self.on_run)

    async def _in_worker(self, fn: Callable[[], T]) -> T:
        """`fn` on the request thread (module docstring)."""
        return await asyncio.get_running_loop().run_in_executor(self.requests, fn)

    def start_io(self, stdin: Any = None, stdout: Any = None) -> None:
        """stdio with `lsp/framing.py`'s reader instead of pygls' (which goes deaf on a bad header)."""
        self._stop_event = stop = threading.Event()
        self.protocol.set_writer(_Writer(stdout or sys.stdout.buffer))

        async def main() -> None:
            chunks = framing.stdin_chunks(None if stdin is None else stdin.fileno())
            replay = self.handover.replay  # what `lsp/early.py` read: read again, first

            async def after_replay() -> bytes:
                nonlocal replay
                if replay:
                    first, replay = replay, b""
                    return first
                return await chunks()

            await framing.serve(stop, after_replay, self.protocol)

        try:
            asyncio.run(main())
        except BrokenPipeError:
            log.error("the client went away")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Logged, never shown with Python details: pygls would send them as a showMessage."""
        log.error("%s: %s", getattr(source, "__name__", source), error)

    def _index(self, text: str) -> LineIndex:
        enc = self.workspace.position_encoding or "utf-16"
        return LineIndex(text, getattr(enc, "value", enc))

    def _capability(self, path: str) -> Any:
        """A client capability by its dotted path (None where the client did not say)."""
        caps: Any = self.client_capabilities
        for part in path.split("."):
            caps = getattr(caps, part, None)
        return caps

    def _supports(self, path: str) -> bool:
        return bool(self._capability(path))

    def _schedule(self, uri: str, title: str | None = None) -> None:
        """Analyse the document's newest text: a running analysis of it stops at its next
        function (`dirty` is its cancel flag) and the document's loop goes on with the newest."""
        self.dirty.add(uri)
        task = self.tasks.get(uri)
        if task is None or task.done():
            task = self.tasks[uri] = asyncio.ensure_future(self._analysis_loop(uri))
            if title is not None:
                progress = asyncio.ensure_future(self._progress_until(title, task))
                self._background.add(progress)
                progress.add_done_callback(self._background.discard)

    async def _progress_until(self, title: str, task: asyncio.Future[None]) -> None:
        async with self._progress(title, None):
            await asyncio.wait({task})

    async def _analysis_loop(self, uri: str) -> None:
        loop = asyncio.get_running_loop()
        while uri in self.dirty:
            self.dirty.discard(uri)
            self.analyses += 1
            analyze = functools.partial(
                self.explorer.analyze, uri, cancel=lambda: uri in self.dirty, progress=self._partial_publisher(uri, loop)
            )
            try:
                result = await loop.run_in_executor(self.executor, analyze)
            except Cancelled:
                continue  # a newer text or new settings: `dirty` is set again (or it closed)
            except UnknownDocument:
                return
            except Exception:
                log.exception("analysis of %s failed", uri)
                with contextlib.suppress(UnknownDocument):
                    self.failed[uri] = self.explorer.document(uri).revision
                continue
            with contextlib.suppress(UnknownDocument):
                if self.explorer.document(uri).revision == result.document.revision:
                    self.failed.pop(uri, None)
                    self._publish(result)
                if uri in self.edits:
                    self.edits[uri].forget(result.document.revision)

    def _partial_publisher(
        self, uri: str, loop: asyncio.AbstractEventLoop
    ) -> Callable[[DocumentAnalysis, int], None] | None:
        """Where the document has published nothing yet: what its analysis calls after each
        function (on its thread), publishing the diagnostics so far from the event loop, the first
        function's at once, then at most every `PARTIAL_PERIOD_S` (`PARTIAL_MIN_FUNCTIONS`)."""
        if uri in self.decided:
            return None
        last = -PARTIAL_PERIOD_S

        def progress(partial: DocumentAnalysis, left: int) -> None:
            nonlocal last
            now = time.monotonic()
            if left == 0 or len(partial.functions) + left < PARTIAL_MIN_FUNCTIONS or now - last < PARTIAL_PERIOD_S:
                return
            last = now
            loop.call_soon_threadsafe(self._publish_partial, partial)

        return progress

    def _publish_partial(self, partial: DocumentAnalysis) -> None:
        """`partial`'s diagnostics, while its text is current and no complete analysis of the
        document was published (the complete one is published after it: same loop, same order)."""
        uri = partial.uri
        with contextlib.suppress(UnknownDocument):
            current = self.explorer.document(uri).revision == partial.document.revision
            if current and uri not in self.dirty and uri not in self.decided:
                diags = diagnostics.diagnostics(partial, self._index(partial.document.text))
                self._send_diagnostics(types.PublishDiagnosticsParams(uri, diags, partial.version))
                self.partial[uri] = partial

    def _publish(self, analysis: DocumentAnalysis) -> None:
        """The analysis' diagnostics with the offload decisions known for it; the missing
        decisions are computed soon after, and published again with them."""
        index = self._index(analysis.document.text)
        decisions = self._known_decisions(analysis)
        diags = diagnostics.diagnostics(analysis, index, decisions)
        self._send_diagnostics(types.PublishDiagnosticsParams(analysis.uri, diags, analysis.version))
        self.decided[analysis.uri] = (analysis.document.revision, len(decisions))
        self.partial.pop(analysis.uri, None)
        self._decide_soon(analysis.uri)

    def _send_diagnostics(self, params: types.PublishDiagnosticsParams) -> None:
        """Publish, unless `lsp/early.py` published these very diagnostics (its first publish is
        this server's first of the document, made before pygls loaded)."""
        sent = self.handover.published.pop(params.uri, None)
        if sent is not None and sent == json.loads(json.dumps(params, default=self.protocol._serialize_message)):
            return
        self.text_document_publish_diagnostics(params)

    # ------------------------------------------------------------------------- offload decisions

    def _known_decisions(self, analysis: DocumentAnalysis) -> list[Remark]:
        return [r for fr in analysis.functions for r in self.explorer.known_decisions(fr) or ()]

    def _decide_soon(self, uri: str) -> None:
        """Compute the offload decisions of the document's newest analysis (`explorer/offload.py`)
        once it has stayed current for `DECISION_DELAY_S`, one function at a time in the back-end
        worker (where the back end ran here already, from its mappings, on the request thread),
        and publish its diagnostics again with them. A running task takes the newest analysis
        when it ends."""
        task = self.deciding.get(uri)
        if task is None or task.done():
            self.deciding[uri] = asyncio.ensure_future(self._decide(uri))

    def _current(self, analysis: DocumentAnalysis) -> bool:
        uri = analysis.uri
        with contextlib.suppress(UnknownDocument):
            doc = self.explorer.document(uri)
            return uri not in self.dirty and doc.revision == analysis.document.revision and self.explorer.latest(uri) is analysis
        return False

    async def _decide(self, uri: str) -> None:
        loop = asyncio.get_running_loop()
        await asyncio.sleep(DECISION_DELAY_S)  # typing goes on: decide when it pauses
        while (analysis := self.explorer.latest(uri)) is not None and self._current(analysis):
            todo = [fr for fr in analysis.functions if self.explorer.known_decisions(fr) is None]
            text = analysis.document.text
            for fr in todo:
                if not self._current(analysis):
                    return  # the newer analysis' publish decides again
                try:
                    if self.explorer.has_backend(fr):  # its mappings are here: cheap, reads isl
                        await self._in_worker(functools.partial(self.explorer.decisions, fr, text))
                    else:
                        await loop.run_in_executor(self.deciders, self.explorer.decide_in_worker, fr, text)
                except RuntimeError:  # the threads are gone: shutting down
                    return
            known = len(self._known_decisions(analysis))
            if not self._current(analysis):
                return
            if self.decided.get(uri) != (analysis.document.revision, known):
                self._publish(analysis)  # its _decide_soon finds this task running
                if self._supports("workspace.inlay_hint.refresh_support"):  # the decisions' hints
                    self.workspace_inlay_hint_refresh(None)
            if not todo:
                return

    async def snapshot(self, uri: str) -> Snapshot:
        """The document's newest finished analysis (of its current text or an older one), waiting
        only when there is none yet."""
        while True:
            doc = self._document(uri)
            latest = self.explorer.latest(uri)
            if latest is not None:
                return Snapshot(latest, doc, self.edits.setdefault(uri, EditLog()))
            if self.failed.get(uri) == doc.revision:
                raise JsonRpcInternalError(f"hexplore could not analyse {uri}; the server's log says why")
            task = self.tasks.get(uri)
            if task is None or task.done():
                self._schedule(uri)
                task = self.tasks[uri]
            await asyncio.shield(task)  # ends with an analysis, a failure, or the document closed

    def _partial_snapshot(self, uri: str, pos: types.Position) -> Snapshot | None:
        """While a document's first analysis runs: its published part, where the function at
        `pos` is done (a hover on it need not wait for the whole file), else None."""
        partial = self.partial.get(uri)
        if partial is None or self.explorer.latest(uri) is not None:
            return None
        doc = self._document(uri)
        if doc.revision != partial.document.revision:
            return None
        line, _ = self._index(partial.document.text).core_position(pos)
        if not any(f.analysis.function.range.line <= line <= f.analysis.function.range.end_line for f in partial.functions):
            return None
        return Snapshot(partial, doc, self.edits.setdefault(uri, EditLog()))

    def _document(self, uri: str) -> Document:
        try:
            return self.explorer.document(uri)
        except UnknownDocument as e:
            raise JsonRpcInvalidParams(
                f"hexplore: {e}; send textDocument/didOpen before asking about it"
            ) from e

    @contextlib.asynccontextmanager
    async def _progress(self, title: str, token: Any) -> AsyncIterator[None]:
        """Work-done progress around a long job: on the client's token if the request carried
        one, else on a server-created token when the client supports that."""
        if token is None and self._supports("window.work_done_progress"):
            token = f"hexplore/{uuid.uuid4()}"
            try:
                await asyncio.wait_for(self.work_done_progress.create_async(token), 2.0)
            except Exception:
                token = None
        if token is not None:
            self.work_done_progress.begin(token, types.WorkDoneProgressBegin(title=title))
        try:
            yield
        finally:
            if token is not None:
                self.work_done_progress.end(token, types.WorkDoneProgressEnd())

    def _apply_settings(self, data: object) -> None:
        settings, problems = Settings.from_json(data, self.explorer.settings)
        for p in problems:
            self.window_show_message(
                types.ShowMessageParams(types.MessageType.Warning, f"hexplore: ignoring {p}")
            )
        if settings != self.explorer.settings:
            self.explorer.set_settings(settings)
            for doc in self.explorer.documents():
                self._schedule(doc.uri)

    # ------------------------------------------------------------------------- lifecycle

    def on_initialize(self, params: types.InitializeParams) -> None:
        root = params.root_uri
        if root is None and params.workspace_folders:
            root = params.workspace_folders[0].uri
        if root is not None and root.startswith("file:"):
            self.explorer.root = urllib.parse.unquote(urllib.parse.urlparse(root).path)
        options = params.initialization_options
        if not (isinstance(options, dict) and options.get("clientCommands") is True):
            self._register_commands()  # before pygls computes the capabilities (executeCommandProvider)
        self._apply_settings(options)

    def _register_commands(self) -> None:
        for name in commands.ALL:
            if name not in self.protocol.fm.commands:
                self.command(name)(self._command_handler(name))

    def _command_handler(self, name: str) -> Callable[..., Any]:
        async def handler(*arguments: Any) -> Any:  # pygls passes the command's arguments as given
            return await self.on_command(name, arguments)

        return handler

    def on_shutdown(self, params: None) -> None:
        self.dirty.clear()  # running analyses stop at their next function
        self.requests.shutdown(wait=False, cancel_futures=True)
        self.deciders.shutdown(wait=False, cancel_futures=True)
        if self._owns_executor:
            self.executor.shutdown(wait=False, cancel_futures=True)

    def on_exit(self, params: None) -> None:
        # pygls then raises SystemExit, which ends a stdio server; over TCP, `lsp/tcp.py` ends
        # only this client's connection (its stop event, set here).
        self.shutdown()

    # ------------------------------------------------------------------------- text sync

    def on_open(self, params: types.DidOpenTextDocumentParams) -> None:
        doc = params.text_document
        if self.handover.adopted.pop(doc.uri, None) != (doc.text, doc.version):
            self.explorer.open(doc.uri, doc.text, doc.version, doc.language_id)
        # else `lsp/early.py` opened it: this analysis finds the functions it did in the cache
        self.edits[doc.uri] = EditLog()
        self.failed.pop(doc.uri, None)
        self._schedule(doc.uri, title=f"hexplore: analysing {os.path.basename(doc.uri)}")

    def on_change(self, params: types.DidChangeTextDocumentParams) -> None:
        uri, version = params.text_document.uri, params.text_document.version
        text = self.workspace.get_text_document(uri).source  # pygls applied the changes
        try:
            old = self.explorer.document(uri)
            doc = self.explorer.update(uri, text, version)
        except UnknownDocument:
            log.warning("didChange for %s, which was never opened", uri)
            return
        if version is not None and version <= old.version:  # the newest text is the truth all the same
            log.warning("didChange for %s went from version %s to %s; analysing the new text", uri, old.version, version)
        encoding = str(getattr(self.workspace.position_encoding, "value", self.workspace.position_encoding) or "utf-16")
        changes: list[Any] = [
            c.text if not isinstance(c, types.TextDocumentContentChangePartial)
            else ((c.range.start.line, c.range.start.character), (c.range.end.line, c.range.end.character), c.text)
            for c in params.content_changes
        ]  # fmt: skip
        self.edits.setdefault(uri, EditLog()).record(doc.revision, changes, encoding)
        self._schedule(uri)

    def on_close(self, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        self.explorer.close(uri)
        self.dirty.discard(uri)
        self.tasks.pop(uri, None)
        self.edits.pop(uri, None)
        self.failed.pop(uri, None)
        self.decided.pop(uri, None)
        self.partial.pop(uri, None)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, []))

    async def on_configuration(self, params: types.DidChangeConfigurationParams) -> None:
        data = params.settings
        ours = isinstance(data, dict) and (
            "hexplore" in data or bool(set(data) & set(SETTING_KEYS))
        )
        if not ours and self._supports("workspace.configuration"):
            item = types.ConfigurationItem(section="hexplore")
            try:
                got = await self.workspace_configuration_async(types.ConfigurationParams([item]))
                data = got[0] if got else None
            except Exception:
                log.exception("workspace/configuration failed")
                return
        self._apply_settings(data)

    # ------------------------------------------------------------------------- features

    async def on_hover(self, params: types.HoverParams) -> types.Hover | None:
        uri = params.text_document.uri
        snap = self._partial_snapshot(uri, params.position) or await self.snapshot(uri)
        analysis, position = snap.analysis, snap.position(params.position)
        formats = self._capability("text_document.hover.content_format")
        markdown = not formats or types.MarkupKind.Markdown in formats
        index = self._index(analysis.document.text)
        # Placements as the offload decisions found them: a hover never maps (seconds).
        known = self.explorer.known_placements
        found = await self._in_worker(lambda: hover.hover(analysis, index, position, markdown, known))
        if found is not None and found.range is not None and snap.stale:
            moved = snap.range(found.range)
            if moved is None:
                raise _modified(snap.current, "what is under the position was edited since")
            found.range = moved
        return found

    async def on_inlay_hints(self, params: types.InlayHintParams) -> list[types.InlayHint]:
        snap = await self.snapshot(params.text_document.uri)
        analysis = snap.analysis
        index = self._index(analysis.document.text)
        decided = inlay_hints.decision_hints(self._known_decisions(analysis), analysis.document.path, index)
        if not snap.stale:  # plain data: no isl
            return inlay_hints.inlay_hints(analysis, index, params.range) + [
                h for h in decided if _within(h.position, params.range)]  # fmt: skip
        out = []
        for hint in inlay_hints.inlay_hints(analysis, index, None) + decided:
            moved = snap.range(types.Range(hint.position, hint.position))
            if moved is not None and _within(moved.start, params.range):  # hints in edited text wait
                hint.position = moved.start
                out.append(hint)
        return out

    async def on_code_lens(self, params: types.CodeLensParams) -> list[types.CodeLens]:
        snap = await self.snapshot(params.text_document.uri)
        analysis = snap.analysis
        lenses = code_lens.code_lenses(analysis, self._index(analysis.document.text), self.explorer.settings.target)
        out = []
        for lens in lenses:
            moved = snap.range(lens.range)
            if moved is not None:  # a lens whose function's name was edited waits
                lens.range = moved
                out.append(lens)
        return out

    async def on_code_action(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        """Quick fixes and loop interchange (`lsp/code_actions.py`), from an analysis of the
        current text only: the edits are made on it."""
        snap = await self.snapshot(params.text_document.uri)
        if snap.stale:
            return []
        analysis = snap.analysis
        index = self._index(analysis.document.text)
        only = [str(k) for k in params.context.only or []]
        versioned = self._supports("workspace.workspace_edit.document_changes")
        out: list[types.CodeAction] = []
        if code_actions.wanted(types.CodeActionKind.QuickFix, only):
            out += code_actions.quick_fixes(analysis, index, params.range, list(params.context.diagnostics), versioned)
        if code_actions.wanted(types.CodeActionKind.RefactorRewrite, only):
            line, col = index.core_position(params.range.start)
            rewrite = await self._in_worker(lambda: interchange_at(analysis, line, col))  # reads isl objects
            disabled = self._supports("text_document.code_action.disabled_support")
            action = None if rewrite is None else code_actions.rewrite_action(rewrite, analysis, index, disabled, versioned)
            out += [action] if action is not None else []
            out += await self._directive_actions(analysis, index, (line, col), disabled, versioned)
            out += await self._schedule_actions(analysis, index, (line, col), disabled, versioned)
        return out

    async def _schedule_actions(
        self, analysis: DocumentAnalysis, index: LineIndex, at: tuple[int, int], disabled: bool, versioned: bool
    ) -> list[types.CodeAction]:
        """Tile, unroll-and-jam, skew, fuse, distribute on the loop at `at` (`explorer/fixes.py`)."""
        found = await self._in_worker(lambda: schedule_rewrites_at(analysis, *at))  # reads isl objects
        actions = [code_actions.rewrite_action(r, analysis, index, disabled, versioned) for r in found]
        return [a for a in actions if a is not None]

    async def _directive_actions(
        self, analysis: DocumentAnalysis, index: LineIndex, at: tuple[int, int], disabled: bool, versioned: bool
    ) -> list[types.CodeAction]:
        """Offload to the GPU / keep on the CPU on a nest's outer loop, remove on a
        ``#pragma hexplore`` line (`explorer/directive_actions.py`): where the decisions are known,
        only the action that changes the nest's."""
        decided = self._known_decisions(analysis)
        found = await self._in_worker(lambda: offload_actions_at(analysis, *at, decided))  # reads isl objects
        removal = remove_directive_at(analysis, at[0])
        actions = [code_actions.rewrite_action(r, analysis, index, disabled, versioned) for r in [*found, *([removal] if removal else [])]]
        return [a for a in actions if a is not None]

    async def on_functions(self, params: Any) -> list[dict[str, Any]]:
        uri = custom_requests.field(params, "uri", custom_requests.FUNCTIONS)
        snap = await self.snapshot(uri)
        analysis = snap.analysis

        def decisions() -> dict[str, tuple[Remark, ...]]:  # decided where the back end ran: cheap
            text = analysis.document.text
            return {fr.name: self.explorer.known_decisions(fr) or (
                        self.explorer.decisions(fr, text) if self.explorer.has_backend(fr) else ())
                    for fr in analysis.functions}  # fmt: skip

        known = await self._in_worker(decisions)
        result = custom_requests.functions_result(analysis, self._index(analysis.document.text), known)
        return snap.json_ranges(result)  # type: ignore[no-any-return]

    async def _function_request(self, params: Any, method: str) -> tuple[DocumentAnalysis, str]:
        analysis, name, _ = await self._function_snapshot(params, method)
        return analysis, name

    async def _function_snapshot(self, params: Any, method: str) -> tuple[DocumentAnalysis, str, Snapshot]:
        uri = custom_requests.field(params, "uri", method)
        name = custom_requests.field(params, "function", method)
        snap = await self.snapshot(uri)
        analysis = snap.analysis
        if analysis.function(name) is None:
            known = ", ".join(f.name for f in analysis.functions) or "none"
            raise JsonRpcInvalidParams(f"{method}: {uri} defines no function `{name}` (functions: {known})")
        return analysis, name, snap

    async def on_passes(self, params: Any) -> list[dict[str, Any]]:
        analysis, name = await self._function_request(params, custom_requests.PASSES)
        trace = await self._usage(lambda: self.explorer.trace(analysis.uri, name))
        return custom_requests.passes_result(trace)

    async def on_artifact(self, params: Any) -> dict[str, Any]:
        analysis, name = await self._function_request(params, custom_requests.ARTIFACT)
        pass_name = custom_requests.field(params, "pass", custom_requests.ARTIFACT)
        record = await self._usage(lambda: self.explorer.artifact(analysis.uri, name, pass_name))
        return custom_requests.artifact_result(record)

    async def on_schedule_tree(self, params: Any) -> dict[str, Any]:
        analysis, name, snap = await self._function_snapshot(params, custom_requests.SCHEDULE_TREE)
        fr = analysis.function(name)
        assert fr is not None
        index = self._index(analysis.document.text)

        def tree() -> dict[str, Any]:  # the scheduler's tree, as the TUI's Schedule tab shows it
            units = self.explorer.backend(analysis.uri, name).units
            return custom_requests.schedule_tree_json(schedule_tree(fr.analysis, units), index)

        return snap.json_ranges(await self._usage(tree))  # type: ignore[no-any-return]

    async def on_run(self, params: Any) -> dict[str, Any]:
        """The one run (`explorer.running.run_function`, as `hexplore run` and the TUI), on the
        document's current text, in a worker process that a cancelled request stops."""
        return await self._run(params, custom_requests.RUN)

    async def _run(self, params: Any, method: str) -> dict[str, Any]:
        analysis, name = await self._function_request(params, method)
        given = custom_requests.sizes(params, method)
        device = custom_requests.device(params, method)
        timeout_s = custom_requests.timeout(params, method, running.DEFAULT_TIMEOUT_S)
        fr = analysis.function(name)
        assert fr is not None
        stop = threading.Event()
        doc = analysis.document
        parse = self.explorer.parse_options(doc.path)
        sizes = running.default_params(fr.analysis, given)
        async with self._progress(f"hexplore: running {name} on {device}", params.get("workDoneToken")):
            try:  # a thread waits on the worker process, off the analysis thread
                report = await asyncio.to_thread(
                    running.run_function, doc.path, name, device, sizes, timeout_s, 1, parse,
                    text=doc.text, cancel=stop.is_set,
                )  # fmt: skip
            except asyncio.CancelledError:
                stop.set()  # $/cancelRequest: stop the worker process too
                raise
        return custom_requests.run_result(report)

    async def on_command(self, command: str, arguments: tuple[Any, ...]) -> dict[str, Any]:
        """A code lens's command (`lsp/commands.py`): its result, also shown to the user."""
        arg = commands.target(command, arguments)
        if command == commands.PREVIEW:
            return await self._preview(arg)
        if command == commands.RUN:
            result = await self._run(arg, command)
            result["message"] = message = commands.run_message(arg["function"], result)
            kind = types.MessageType.Info if result["status"] == "ok" else types.MessageType.Warning
            self.window_show_message(types.ShowMessageParams(kind, message))
            return result
        analysis, name = await self._function_request(arg, command)
        view = await self._usage(lambda: function_view(self.explorer, analysis.uri, name, commands.VIEW_OF[command]))
        if not (self._supports("window.show_document.support") and await self._show_document(view, analysis.uri)):
            self.window_show_message(types.ShowMessageParams(types.MessageType.Info, commands.view_message(view)))
        return commands.view_result(view)

    async def _preview(self, arg: dict[str, Any]) -> dict[str, Any]:
        """``hexplore.previewRewrite``: a loop rewrite's diffs (`explorer/fixes.py`), shown as a view."""
        analysis, name = await self._function_request(arg, commands.PREVIEW)
        line, column, title = arg.get("line"), arg.get("column"), arg.get("title")
        if not (isinstance(line, int) and isinstance(column, int) and isinstance(title, str)):
            raise JsonRpcInvalidParams(f"{commands.PREVIEW}: expected line, column (numbers) and title (a string)")
        options = self.explorer.parse_options(analysis.document.path)
        decided = self._known_decisions(analysis)
        text = await self._in_worker(lambda: rewrite_preview(analysis, line, column, title, options)
                                     or directive_preview(analysis, line, column, title, options, decided))  # fmt: skip
        if text is None:
            raise JsonRpcInvalidParams(f"{commands.PREVIEW}: no `{title}` is offered there in {name} any more")
        view = View(f"preview of {title}", "diff", text)
        if not (self._supports("window.show_document.support") and await self._show_document(view, analysis.uri)):
            self.window_show_message(types.ShowMessageParams(types.MessageType.Info, commands.view_message(view)))
        return commands.view_result(view)

    async def _show_document(self, view: View, uri: str) -> bool:
        """`view` written to a file and shown with ``window/showDocument``; False where that failed."""
        try:
            path = await asyncio.to_thread(commands.view_file, view, uri)
            params = types.ShowDocumentParams(path.as_uri(), take_focus=True)
            shown = await asyncio.wait_for(self.window_show_document_async(params), 10.0)
        except Exception as e:  # an unsafe cache directory, a client that fails the request
            log.warning("window/showDocument of %s failed: %s", view.title, e)
            return False
        return bool(getattr(shown, "success", False))

    async def _usage(self, fn: Callable[[], T]) -> T:
        """Run `fn` on the worker; a `UsageError` (unknown function or pass) is InvalidParams."""
        try:
            return await self._in_worker(fn)
        except UsageError as e:
            raise JsonRpcInvalidParams(str(e)) from e


def _within(pos: types.Position, r: types.Range) -> bool:
    return (r.start.line, r.start.character) <= (pos.line, pos.character) <= (r.end.line, r.end.character)


class _Writer:
    """stdout for pygls' protocol (`framing` answers through the protocol's `_send_data` too)."""

    def __init__(self, out: Any) -> None:
        self._out = out
        self._lock = threading.Lock()

    def write(self, data: bytes) -> None:
        with self._lock:
            self._out.write(data)
            self._out.flush()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._out.close()


_MALFORMED = object()


class _Protocol(LanguageServerProtocol):
    """pygls drops a request whose params do not fit the method's type without answering; answer
    it with InvalidParams instead, so the client is not left waiting. An exception a handler did
    not mean (a bug) is answered with a generic InternalError: pygls would send its type, message
    and traceback; the log has them."""

    answered: tuple[Any, dict[str, Any]] | None = None  # set by the server (`lsp/early.py`)

    def _send_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        if self.answered is not None and msg_id == self.answered[0]:
            sent, self.answered = self.answered[1], None  # `lsp/early.py` answered it already
            mine = None if result is None else json.loads(json.dumps(result, default=self._serialize_message))
            if error is not None or mine != sent:
                log.warning("initialize was answered with %s; pygls would have answered %s", sent, mine or error)
            return
        if error is not None and error.code == JsonRpcInternalError.CODE and error.data is not None:
            log.error("internal error answering request %s: %s", msg_id, error.message)
            error = JsonRpcInternalError(INTERNAL_ERROR_MESSAGE).to_response_error()
        super()._send_response(msg_id, result, error)

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as e:
            method = data.get("method", "?") if isinstance(data, dict) else "?"
            if isinstance(data, dict) and "id" in data:
                cause = str(e.__cause__ or e)[:300]
                error = JsonRpcInvalidParams(f"{method}: malformed params ({cause})")
                self._send_response(data["id"], error=error.to_response_error())
            log.warning("ignoring a malformed %s message", method)
            return _MALFORMED

    def handle_message(self, message: Any) -> None:
        if message is not _MALFORMED:
            super().handle_message(message)


def _converter() -> Any:
    """pygls' converter, except that params of methods lsprotocol does not know (``hexplore/*``)
    stay plain JSON objects: pygls would make namedtuples of them, renaming keys that are Python
    keywords (our ``pass``)."""
    converter = default_converter()

    def keep_params(obj: dict[str, Any], cls: type) -> Any:
        return cls(**obj)

    converter.register_structure_hook(JsonRPCRequestMessage, keep_params)
    converter.register_structure_hook(JsonRPCNotification, keep_params)
    return converter


def _plain(method: Callable[..., Any]) -> Callable[..., Any]:
    """A plain function calling a bound method: pygls tags handlers with attributes."""
    if inspect.iscoroutinefunction(method):

        async def handler_async(params: Any) -> Any:
            return await method(params)

        return handler_async

    def handler(params: Any) -> Any:
        return method(params)

    return handler


def main(argv: Sequence[str] | None = None, handover: early.Handover | None = None) -> int:
    """The server; `handover`: what `lsp/early.py` did before this module was imported."""
    args = parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="hexplore-lsp %(levelname)s %(message)s")
    sys.setswitchinterval(SWITCH_INTERVAL_S)  # the event loop is not starved by analysis threads
    warm_up()  # the front end's worker loads while the client initializes
    if args.tcp is not None:
        host, port = args.tcp
        return tcp.main(host, port, args.token_file, lambda executor: HexploreServer(executor=executor))
    HexploreServer(handover=handover).start_io()
    return 0

if __name__ == "__main__":
    raise SystemExit(main())
