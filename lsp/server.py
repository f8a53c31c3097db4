"""``hexplore-lsp``: the language server (pygls 2) over stdio, or TCP with ``--tcp HOST:PORT``
(loopback only, a session token, one server per connection: `lsp/tcp.py`).

Each open document lives in an explorer `Workspace`. Every didOpen/didChange schedules an analysis
of that version on one worker thread; a newer version makes the queued or running analysis of an
older one stop (`Cancelled`), and diagnostics are published only for the version that is still
current, with the document version attached. Requests (hover, inlay hints, code lenses, the
``hexplore/*`` requests) wait for the analysis of the current version, then compute their answer
on the same worker thread, so isl and libclang are only ever used from one thread.

*Architecture invariant:* this package is the only one that imports pygls or lsprotocol.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import inspect
import logging
import os
import threading
import urllib.parse
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    LanguageServerProtocol,
    default_converter,
)

from explorer import running
from explorer.api import UsageError
from explorer.errors import Cancelled, UnknownDocument
from explorer.schedule_tree import schedule_tree
from explorer.settings import SETTING_KEYS, Settings
from explorer.workspace import Document, DocumentAnalysis, Workspace
from lsp import code_lens, custom_requests, diagnostics, hover, inlay_hints, tcp
from lsp.positions import LineIndex

__version__ = "0.1.0"
log = logging.getLogger("hexplore-lsp")
T = TypeVar("T")


class HexploreServer(LanguageServer):
    def __init__(self, workspace: Workspace | None = None, executor: ThreadPoolExecutor | None = None) -> None:
        super().__init__(
            "hexplore-lsp",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=_Protocol,
            converter_factory=_converter,
        )
        self.explorer = workspace or Workspace()
        # The analysis thread; over TCP the connections' servers share one (`lsp/tcp.py`).
        self._owns_executor = executor is None
        self.executor = executor or ThreadPoolExecutor(max_workers=1, thread_name_prefix="hexplore-analysis")
        self.tasks: dict[str, asyncio.Future[DocumentAnalysis | None]] = {}
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
        f(custom_requests.FUNCTIONS)(self.on_functions)
        f(custom_requests.PASSES)(self.on_passes)
        f(custom_requests.ARTIFACT)(self.on_artifact)
        f(custom_requests.SCHEDULE_TREE)(self.on_schedule_tree)
        f(custom_requests.RUN)(self.on_run)

    async def _in_worker(self, fn: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self.executor, fn)

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

    def _schedule(self, uri: str, version: int, title: str | None = None) -> None:
        self.tasks[uri] = asyncio.ensure_future(self._analyze(uri, version, title))

    async def _analyze(self, uri: str, version: int, title: str | None) -> DocumentAnalysis | None:
        job = asyncio.ensure_future(self._in_worker(lambda: self.explorer.analyze(uri, version)))
        try:
            if title is None:
                result = await job
            else:
                async with self._progress(title, None):
                    result = await job
        except (Cancelled, UnknownDocument):
            return None
        except Exception:
            log.exception("analysis of %s failed", uri)
            return None
        with contextlib.suppress(UnknownDocument):
            if self.explorer.document(uri).version == result.version:
                self._publish(result)
        return result

    def _publish(self, analysis: DocumentAnalysis) -> None:
        index = self._index(analysis.document.text)
        diags = diagnostics.diagnostics(analysis, index)
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(analysis.uri, diags, analysis.version)
        )

    async def snapshot(self, uri: str) -> DocumentAnalysis:
        """The analysis of the document's current version (waiting for it if needed)."""
        for _ in range(100):
            doc = self._document(uri)
            latest = self.explorer.latest(uri)
            if latest is not None and latest.version == doc.version:
                return latest
            task = self.tasks.get(uri)
            if task is None or task.done():
                self._schedule(uri, doc.version)
                task = self.tasks[uri]
            if await asyncio.shield(task) is None and self._document(uri).version == doc.version:
                raise JsonRpcInternalError(f"hexplore could not analyse {uri}; see the server log")
        raise JsonRpcException(message=f"{uri} keeps changing; try again")

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
                self._schedule(doc.uri, doc.version)

    # ------------------------------------------------------------------------- lifecycle

    def on_initialize(self, params: types.InitializeParams) -> None:
        root = params.root_uri
        if root is None and params.workspace_folders:
            root = params.workspace_folders[0].uri
        if root is not None and root.startswith("file:"):
            self.explorer.root = urllib.parse.unquote(urllib.parse.urlparse(root).path)
        self._apply_settings(params.initialization_options)

    def on_shutdown(self, params: None) -> None:
        if self._owns_executor:
            self.executor.shutdown(wait=False, cancel_futures=True)

    def on_exit(self, params: None) -> None:
        # pygls then raises SystemExit, which ends a stdio server; over TCP, `lsp/tcp.py` ends
        # only this client's connection (its stop event, set here).
        self.shutdown()

    # ------------------------------------------------------------------------- text sync

    def on_open(self, params: types.DidOpenTextDocumentParams) -> None:
        doc = params.text_document
        self.explorer.open(doc.uri, doc.text, doc.version, doc.language_id)
        self._schedule(doc.uri, doc.version, title=f"hexplore: analysing {os.path.basename(doc.uri)}")

    def on_change(self, params: types.DidChangeTextDocumentParams) -> None:
        uri, version = params.text_document.uri, params.text_document.version
        text = self.workspace.get_text_document(uri).source  # pygls applied the changes
        try:
            self.explorer.update(uri, text, version)
        except UnknownDocument:
            log.warning("didChange for %s, which was never opened", uri)
            return
        self._schedule(uri, version)

    def on_close(self, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        self.explorer.close(uri)
        self.tasks.pop(uri, None)
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
        analysis = await self.snapshot(params.text_document.uri)
        formats = self._capability("text_document.hover.content_format")
        markdown = not formats or types.MarkupKind.Markdown in formats
        index = self._index(analysis.document.text)
        return await self._in_worker(lambda: hover.hover(analysis, index, params.position, markdown))

    async def on_inlay_hints(self, params: types.InlayHintParams) -> list[types.InlayHint]:
        analysis = await self.snapshot(params.text_document.uri)
        index = self._index(analysis.document.text)
        return await self._in_worker(lambda: inlay_hints.inlay_hints(analysis, index, params.range))

    async def on_code_lens(self, params: types.CodeLensParams) -> list[types.CodeLens]:
        analysis = await self.snapshot(params.text_document.uri)
        return code_lens.code_lenses(analysis, self._index(analysis.document.text), self.explorer.settings.target)

    async def on_functions(self, params: Any) -> list[dict[str, Any]]:
        uri = custom_requests.field(params, "uri", custom_requests.FUNCTIONS)
        analysis = await self.snapshot(uri)
        return custom_requests.functions_result(analysis, self._index(analysis.document.text))

    async def _function_request(self, params: Any, method: str) -> tuple[DocumentAnalysis, str]:
        uri = custom_requests.field(params, "uri", method)
        name = custom_requests.field(params, "function", method)
        analysis = await self.snapshot(uri)
        if analysis.function(name) is None:
            known = ", ".join(f.name for f in analysis.functions) or "none"
            raise JsonRpcInvalidParams(f"{method}: {uri} defines no function `{name}` (functions: {known})")
        return analysis, name

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
        analysis, name = await self._function_request(params, custom_requests.SCHEDULE_TREE)
        fr = analysis.function(name)
        assert fr is not None
        index = self._index(analysis.document.text)

        def tree() -> dict[str, Any]:  # the scheduler's tree, as the TUI's Schedule tab shows it
            units = self.explorer.backend(analysis.uri, name).units
            return custom_requests.schedule_tree_json(schedule_tree(fr.analysis, units), index)

        return await self._usage(tree)

    async def on_run(self, params: Any) -> dict[str, Any]:
        """The one run (`explorer.running.run_function`, as `hexplore run` and the TUI), on the
        document's current text, in a worker process that a cancelled request stops."""
        analysis, name = await self._function_request(params, custom_requests.RUN)
        given = custom_requests.sizes(params, custom_requests.RUN)
        device = custom_requests.device(params, custom_requests.RUN)
        timeout_s = custom_requests.timeout(params, custom_requests.RUN, running.DEFAULT_TIMEOUT_S)
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

    async def _usage(self, fn: Callable[[], T]) -> T:
        """Run `fn` on the worker; a `UsageError` (unknown function or pass) is InvalidParams."""
        try:
            return await self._in_worker(fn)
        except UsageError as e:
            raise JsonRpcInvalidParams(str(e)) from e


_MALFORMED = object()


class _Protocol(LanguageServerProtocol):
    """pygls drops a request whose params do not fit the method's type without answering; answer
    it with InvalidParams instead, so the client is not left waiting."""

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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hexplore-lsp", description="hexplore's language server")
    parser.add_argument("--stdio", action="store_true", help="talk over stdin/stdout (the default)")
    parser.add_argument(
        "--tcp", metavar="HOST:PORT",
        help="listen on a loopback TCP socket instead (port 0: any free one); clients send the session token",
    )  # fmt: skip
    parser.add_argument(
        "--token-file", metavar="PATH",
        help="with --tcp: where to write the session token (default $XDG_RUNTIME_DIR/hexplore-lsp-PORT.token)",
    )  # fmt: skip
    parser.add_argument("--log-level", default="WARNING", help="logging level on stderr")
    args = parser.parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="hexplore-lsp %(levelname)s %(message)s")
    if args.tcp:
        host, _, port = args.tcp.rpartition(":")
        if not host or not port.isdigit():
            parser.error(f"--tcp expects HOST:PORT, got {args.tcp!r}")
        if not tcp.is_loopback(host):
            parser.error(f"--tcp listens on loopback addresses only (127.0.0.1, ::1, localhost), not {host!r}")
        return tcp.main(host, int(port), args.token_file, lambda executor: HexploreServer(executor=executor))
    if args.token_file:
        parser.error("--token-file goes with --tcp")
    HexploreServer().start_io()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
