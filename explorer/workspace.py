"""The workspace both UIs share: open documents, their latest analyses, and the per-function cache.

A UI opens a document, feeds it edits, and asks for an analysis of a version::

    ws = Workspace()
    ws.open("file:///src/gemm.c", text, version=1)
    ws.update("file:///src/gemm.c", new_text, version=2)
    result = ws.analyze("file:///src/gemm.c")          # DocumentAnalysis of version 2
    result.function("kernel_gemm").remarks

`analyze` may run in a worker thread. It raises `Cancelled` as soon as it notices that a newer
text arrived (or the document closed): checks happen before the parse and between functions,
so stale work stops within one function's analysis. Functions whose key did not change come from
the cache (relocated when they moved); only edited functions are lowered and analysed again, and
an edited function whose IR is its last analysis' with positions moved (a space, a comment) gets
that analysis moved (`relocate.Remap`), not a new one. Where such an edit changed none of the
function's tokens and no line break (`explorer/tokens.py`), libclang is not even asked: the
last parse is moved through it (`_shifted_parse`; a 400-line file's reparse and lowering of the
edited function were 50 of a space edit's 77 ms).

Every text a document is given gets a new `Document.revision`, which only grows: staleness is
decided by revisions, never by the client's version numbers, which a client may reuse or send
backwards (the newest text is the truth, whatever its version says).

*Invariant:* nothing here knows about LSP, JSON-RPC or terminals; positions are the core's
(1-based lines and byte columns).
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import itertools
import logging
import os
import re
import threading
import time
import urllib.parse
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from core_compiler.analysis import FunctionAnalysis, ScopAnalysis, analyze_function
from core_compiler.frontend import ParseOptions, function_failure, ir, parse_failure
from core_compiler.frontend.worker import FrontendFailure, WorkerRaised
from core_compiler.passes import PassRecord
from core_compiler.remarks import Remark, missed
from core_compiler.source import SourceRange
from explorer.cache import CachedFunction, FunctionCache, FunctionKey, RelativeError
from explorer.compile_commands import NO_FLAGS, DatabaseCache
from explorer.errors import Cancelled, UnknownDocument, UnknownFunction, UnknownPass
from explorer.offload import (
    Decided,
    Placements,
    backend_worker,
    decide_in_worker,
    function_decisions,
    gpu_options,
    shifted,
)
from explorer.parsing import DocumentParser, FunctionSource, ParsedFile
from explorer.placement import gpu_mapping
from explorer.relocate import Remap, TextAt, relocate
from explorer.settings import Settings
from explorer.tokens import edit_context, edit_span, same_tokens

if TYPE_CHECKING:  # the back end loads when first used, not with the workspace (issue 29)
    from core_compiler.pipeline import Backend, GpuOptions
    from core_compiler.transform.gpu_mapping import GpuProgram

CUDA_LANGUAGES = ("cuda", "cuda-cpp")
log = logging.getLogger("hexplore.explorer")
DECISIONS_KEPT = 1024  # functions whose offload decisions are remembered


@dataclass(frozen=True)
class TextChange:
    """Replace `start`..`end` (0-based line, 0-based index into the line's str) with `text`; the
    whole document when `start` is None."""

    text: str
    start: tuple[int, int] | None = None
    end: tuple[int, int] | None = None


@dataclass(frozen=True)
class Document:
    uri: str
    path: str  # the file name libclang sees (a stand-in for URIs that are not files)
    text: str
    version: int  # the client's number, as given
    revision: int = 0  # the workspace's: grows with every new text of any document


@dataclass(frozen=True, eq=False)
class FunctionResult:
    analysis: FunctionAnalysis
    origin: str  # "analysed" | "cached" | "relocated"
    trace_current: bool  # False when the function moved after its pass texts were rendered
    key: FunctionKey | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return self.analysis.function.name

    @property
    def remarks(self) -> tuple[Remark, ...]:
        return self.analysis.remarks

    @property
    def scops(self) -> tuple[ScopAnalysis, ...]:
        return self.analysis.scops


@dataclass(frozen=True)
class AnalysisStats:
    analysed: int  # functions lowered and analysed
    reused: int  # functions taken from the cache as they were
    relocated: int  # functions taken from the cache and moved to new lines
    elapsed_s: float


@dataclass(frozen=True, eq=False)
class DocumentAnalysis:
    document: Document
    functions: tuple[FunctionResult, ...]
    remarks: tuple[Remark, ...]  # file-level: syntax errors
    stats: AnalysisStats

    @property
    def uri(self) -> str:
        return self.document.uri

    @property
    def version(self) -> int:
        return self.document.version

    def function(self, name: str) -> FunctionResult | None:
        return next((f for f in self.functions if f.name == name), None)

    def all_remarks(self) -> list[Remark]:
        return [*self.remarks, *(r for f in self.functions for r in f.remarks)]


@dataclass
class _Counters:
    analysed: int = 0
    reused: int = 0
    relocated: int = 0


def path_for_uri(uri: str, language_id: str | None = None) -> str:
    """The file name for a URI: the path of a ``file:`` URI, a stand-in name for others."""
    parsed = urllib.parse.urlparse(uri)
    if parsed.scheme in ("file", ""):
        return os.path.normpath(urllib.parse.unquote(parsed.path)) if parsed.path else uri
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in uri)
    if not name.endswith((".c", ".h", ".cu", ".cuh")):
        name += ".cu" if language_id in CUDA_LANGUAGES else ".c"
    return os.path.join(os.sep, "__hexplore__", name)


def apply_changes(text: str, changes: Sequence[TextChange]) -> str:
    for change in changes:
        if change.start is None or change.end is None:
            text = change.text
            continue
        text = text[: _offset(text, *change.start)] + change.text + text[_offset(text, *change.end) :]
    return text


def _offset(text: str, line: int, char: int) -> int:
    """The str index of (line, char), clamped to the document as LSP clients expect."""
    pos = 0
    for _ in range(max(line, 0)):
        nl = text.find("\n", pos)
        if nl < 0:
            return len(text)
        pos = nl + 1
    end = text.find("\n", pos)
    end = len(text) if end < 0 else end
    return min(pos + max(char, 0), end)


class Workspace:
    """Open documents and their analyses. Methods are safe to call from several threads; one
    document's analyses run one at a time."""

    def __init__(
        self,
        settings: Settings | None = None,
        root: str | None = None,
        cache: FunctionCache | None = None,
        use_compile_commands: bool = True,
    ) -> None:
        self.settings = settings or Settings()
        self.root = root
        self.cache = cache or FunctionCache()
        self.use_compile_commands = use_compile_commands
        self._lock = threading.Lock()
        self._revisions = itertools.count(1)
        self._docs: dict[str, Document] = {}
        self._parsers: dict[str, DocumentParser] = {}
        self._latest: dict[str, DocumentAnalysis] = {}
        # uri -> the parse its latest analysis was made from (an edit that changes no token is
        # applied to it instead of parsing again: `_shifted_parse`)
        self._parsed: dict[str, ParsedFile] = {}
        self._databases = DatabaseCache()
        self._backend: weakref.WeakKeyDictionary[FunctionAnalysis, Backend] = weakref.WeakKeyDictionary()
        # function (its cache key, else its analysis) -> (its first line then, its decisions)
        self._decisions: OrderedDict[object, tuple[int, Decided]] = OrderedDict()

    # ------------------------------------------------------------------------- documents

    def open(
        self, uri: str, text: str, version: int = 0, language_id: str | None = None
    ) -> Document:
        with self._lock:
            doc = Document(uri, path_for_uri(uri, language_id), text, version, next(self._revisions))
            self._docs[uri] = doc
            self._parsers.setdefault(uri, DocumentParser(doc.path))
            self._latest.pop(uri, None)
            self._parsed.pop(uri, None)
        return doc

    def open_file(self, path: str) -> Document:
        """Open a file from disk under its ``file:`` URI (raises OSError when unreadable)."""
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        return self.open("file://" + urllib.parse.quote(os.path.abspath(path)), text)

    def update(self, uri: str, text: str, version: int | None = None) -> Document:
        with self._lock:
            old = self._doc(uri)
            doc = replace(
                old, text=text, version=old.version + 1 if version is None else version,
                revision=next(self._revisions),
            )  # fmt: skip
            self._docs[uri] = doc
        return doc

    def edit(self, uri: str, changes: Sequence[TextChange], version: int | None = None) -> Document:
        with self._lock:
            old = self._doc(uri)
            text = apply_changes(old.text, changes)
            doc = replace(
                old, text=text, version=old.version + 1 if version is None else version,
                revision=next(self._revisions),
            )  # fmt: skip
            self._docs[uri] = doc
        return doc

    def close(self, uri: str) -> None:
        with self._lock:
            self._docs.pop(uri, None)
            self._latest.pop(uri, None)
            self._parsed.pop(uri, None)
            parser = self._parsers.pop(uri, None)
        if parser is not None:
            with parser.lock:
                parser.dispose()

    def document(self, uri: str) -> Document:
        with self._lock:
            return self._doc(uri)

    def documents(self) -> tuple[Document, ...]:
        with self._lock:
            return tuple(self._docs.values())

    def _doc(self, uri: str) -> Document:
        doc = self._docs.get(uri)
        if doc is None:
            raise UnknownDocument(f"no open document {uri}")
        return doc

    # ------------------------------------------------------------------------- settings

    def set_settings(self, settings: Settings) -> None:
        with self._lock:
            self.settings = settings  # part of every cache key: nothing stale can be reused

    def parse_options(self, path: str) -> ParseOptions:
        """The flags `path` parses with: its compile_commands.json entry, then the settings."""
        flags = self._databases.flags_for(path) if self.use_compile_commands else NO_FLAGS
        s = self.settings
        base = self.root or os.path.dirname(path)
        includes = tuple(os.path.normpath(os.path.join(base, p)) for p in s.include_paths)
        return ParseOptions(flags.include_dirs + includes, flags.defines + s.defines, flags.extra_args)

    # ------------------------------------------------------------------------- analysis

    def analyze(
        self,
        uri: str,
        version: int | None = None,
        cancel: Callable[[], bool] | None = None,
        progress: Callable[[DocumentAnalysis, int], None] | None = None,
    ) -> DocumentAnalysis:
        """Analyse the document as it is now (or raise `Cancelled` if it is no longer at `version`).

        `progress`, where given, is called after each function with the analysis so far (the
        functions done, in file order, and the file's syntax errors) and the number of functions
        left: the editor publishes a big file's first diagnostics before its last function."""
        start = time.perf_counter()
        with self._lock:
            doc = self._doc(uri)
            parser = self._parsers[uri]
            settings = self.settings
            before = self._latest.get(uri)

        def check() -> None:
            current = self._docs.get(uri)
            if current is None or current.revision != doc.revision or (cancel and cancel()):
                raise Cancelled(f"{uri} version {doc.version} was superseded")

        if version is not None and version != doc.version:
            raise Cancelled(f"{uri} is at version {doc.version}, not {version}")
        options = self.parse_options(doc.path)
        counters = _Counters()

        def report(results: Sequence[FunctionResult], parsed: ParsedFile) -> None:
            if progress is not None:
                progress(_partial(doc, results, parsed, counters, start), len(parsed.functions) - len(results))

        with parser.lock:
            check()
            unparsed = self._without_parsing(uri, doc, before, options, settings, counters, check, report)
            if unparsed is not None:
                parsed, results = unparsed
            else:  # the edit changed tokens (or there is no parse to apply it to)
                counters = _Counters()
                parsed = _parse(parser, doc, options)
                results = self._analyze_parsed(parsed, before, options, settings, counters, check, report)
        result = _partial(doc, results, parsed, counters, start)
        with self._lock:
            latest = self._latest.get(uri)
            if uri in self._docs and (latest is None or latest.document.revision <= doc.revision):
                self._latest[uri] = result
                self._parsed[uri] = parsed
        return result

    def _analyze_parsed(
        self,
        parsed: ParsedFile,
        before: DocumentAnalysis | None,
        options: ParseOptions,
        settings: Settings,
        counters: _Counters,
        check: Callable[[], None],
        report: Callable[[Sequence[FunctionResult], ParsedFile], None],
    ) -> list[FunctionResult]:
        """Every function of `parsed`: from the cache, moved, or lowered and analysed."""
        keys = [_function_key(parsed, src, options, settings) for src in parsed.functions]
        entries = [self.cache.get(key) if parsed.cacheable else None for key in keys]
        lowering = _Lowering(parsed, [src for src, e in zip(parsed.functions, entries, strict=True) if e is None])
        results: list[FunctionResult] = []
        try:
            for src, key, entry in zip(parsed.functions, keys, entries, strict=True):
                check()
                earlier = before.function(src.name) if before is not None and entry is None else None
                results.append(self._function(parsed, src, key, entry, lowering, settings, counters, earlier))
                report(results, parsed)
        finally:
            lowering.stop()  # before the parser is let go: nothing lowers from a stale parse
        return results

    def _without_parsing(
        self,
        uri: str,
        doc: Document,
        before: DocumentAnalysis | None,
        options: ParseOptions,
        settings: Settings,
        counters: _Counters,
        check: Callable[[], None],
        report: Callable[[Sequence[FunctionResult], ParsedFile], None],
    ) -> tuple[ParsedFile, list[FunctionResult]] | None:
        """Where the edit since `before` lies inside one function and changed none of its tokens
        nor its lines (a space, a comment: `explorer/tokens.py`), the analysis of `doc` without
        libclang: the last parse with the functions moved (`_shifted_parse`), the others from
        the cache, the edited one's last analysis moved (`_remapped`). None where anything is
        not known so (the caller parses)."""
        with self._lock:
            last = self._parsed.get(uri)
        if before is None or last is None or last.text != before.document.text:
            return None
        shift = _shifted_parse(last, doc.text)
        if shift is None:
            return None
        parsed, edited = shift
        results: list[FunctionResult] = []
        for src in parsed.functions:
            check()
            key = _function_key(parsed, src, options, settings)
            if src is edited:
                found = self._moved_unlowered(parsed, src, key, before.function(src.name), counters)
            else:
                entry = self.cache.get(key)
                found = None if entry is None else self._cached(parsed, src, key, entry, counters)
            if found is None:
                return None
            results.append(found)
            report(results, parsed)
        return parsed, results

    def _moved_unlowered(
        self, parsed: ParsedFile, src: FunctionSource, key: FunctionKey, earlier: FunctionResult | None, counters: _Counters
    ) -> FunctionResult | None:
        """`earlier` moved through the edit to `src`, not lowered again (its tokens are the same)."""
        moved = _remapped(earlier, key, src, None)
        if moved is None:
            return None
        counters.relocated += 1
        self.cache.put(key, CachedFunction(moved, src.line, src.end_line, _NO_TRACE_LINE), True)
        return FunctionResult(moved, "relocated", False, key)

    def _cached(
        self, parsed: ParsedFile, src: FunctionSource, key: FunctionKey, entry: CachedFunction, counters: _Counters
    ) -> FunctionResult | None:
        """`entry`, moved to where `src` is now (None where it cannot be moved)."""
        if entry.line == src.line:
            counters.reused += 1
            return FunctionResult(entry.analysis, "cached", entry.trace_line == src.line, key)
        moved = relocate(entry.analysis, parsed.path, entry.line, entry.end_line, src.line - entry.line)
        if moved is None:
            return None
        counters.relocated += 1
        self.cache.put(key, CachedFunction(moved, src.line, src.end_line, entry.trace_line), True)
        return FunctionResult(moved, "relocated", entry.trace_line == src.line, key)

    def _function(
        self,
        parsed: ParsedFile,
        src: FunctionSource,
        key: FunctionKey,
        entry: CachedFunction | None,
        lowering: _Lowering,
        settings: Settings,
        counters: _Counters,
        earlier: FunctionResult | None = None,
    ) -> FunctionResult:
        """`src`'s analysis: from the cache (moved where it moved), else from `earlier` (the
        function's last analysis) moved through a whitespace or comment edit when the new text
        lowers to the same IR, else analysed."""
        found = None if entry is None else self._cached(parsed, src, key, entry, counters)
        if found is not None:
            return found
        try:
            fn = lowering.get(src)
        except FrontendFailure as e:  # the worker crashed or ran out of budget on this function
            counters.analysed += 1
            fn = _unlowered(parsed, src)
            failed = FunctionAnalysis(fn, (), (function_failure(fn, e, "reading"),))
            return FunctionResult(failed, "analysed", True, None)  # not cached: read again next time
        except Exception as e:  # a bug in the front end: a remark on this function, not the file's end
            counters.analysed += 1
            failed = _internal_error(_unlowered(parsed, src), "reading", e)
            return FunctionResult(failed, "analysed", True, None)  # not cached: read again next time
        moved = _remapped(earlier, key, src, fn)
        if moved is not None:
            counters.relocated += 1
            if not parsed.cacheable:
                return FunctionResult(moved, "relocated", False, None)
            self.cache.put(key, CachedFunction(moved, src.line, src.end_line, _NO_TRACE_LINE), True)
            return FunctionResult(moved, "relocated", False, key)
        counters.analysed += 1
        analysis = _analyze_function(fn, settings, parsed.errors, None if earlier is None else earlier.analysis)
        if not parsed.cacheable:
            return FunctionResult(analysis, "analysed", True, None)
        self.cache.put(key, CachedFunction(analysis, src.line, src.end_line, src.line))
        return FunctionResult(analysis, "analysed", True, key)

    def latest(self, uri: str) -> DocumentAnalysis | None:
        """The newest finished analysis of the document (possibly of an older version)."""
        with self._lock:
            return self._latest.get(uri)

    def function(self, uri: str, name: str) -> FunctionResult:
        """A function of the latest analysis; raises UnknownDocument / UnknownFunction."""
        analysis = self.latest(uri)
        if analysis is None:
            analysis = self.analyze(uri)
        found = analysis.function(name)
        if found is None:
            known = ", ".join(f.name for f in analysis.functions) or "none"
            raise UnknownFunction(f"{uri} defines no function `{name}` (functions: {known})")
        return found

    # ------------------------------------------------------------------------- pass trace

    def trace(self, uri: str, name: str) -> tuple[PassRecord, ...]:
        """The function's pass trace: the analysis passes, then the back-end passes (schedule,
        GPU mapping, CUDA, OpenCL, LLVM IR, PTX), computed when first asked for and kept with the
        function's analysis."""
        front = self._front_trace(uri, name)
        return front + self.backend(uri, name).records

    def backend(self, uri: str, name: str) -> Backend:
        """The back-end pipeline of the function (`core_compiler.pipeline.backend`): its records
        and, per SCoP, what its passes built (the schedule the trees show), computed once per
        analysis of the function."""
        fa = self.function(uri, name).analysis
        with self._lock:
            back = self._backend.get(fa)
        if back is None:
            from core_compiler.pipeline import backend

            doc = self.document(uri)
            back = backend(fa, _backend_options(self.settings), (doc.path, doc.text))
            with self._lock:
                self._backend[fa] = back
        return back

    # ------------------------------------------------------------------------- offload decisions

    def known_decisions(self, fr: FunctionResult) -> tuple[Remark, ...] | None:
        """The offload decisions of `fr`'s loop nests (`explorer/offload.py`) if computed already,
        for this function's text and settings (moved to where it is now), else None."""
        if not fr.scops:
            return ()
        found = self._decided(fr)
        if found is None:
            return None
        line, decided = found
        return shifted(decided.remarks, fr.analysis.function.range.line - line)

    def known_placements(self, fr: FunctionResult) -> Placements | None:
        """Where the GPU mapping of each of `fr`'s nests puts each array, by (nest index,
        statement, array), if its offload decisions are computed already, else None."""
        found = self._decided(fr)
        return None if found is None else found[1].placements

    def _decided(self, fr: FunctionResult) -> tuple[int, Decided] | None:
        with self._lock:
            return self._decisions.get(_decision_key(fr))

    def has_backend(self, fr: FunctionResult) -> bool:
        """Whether the back end of `fr` ran (its offload decisions then cost no GPU mapping)."""
        with self._lock:
            return fr.analysis in self._backend

    def decisions(self, fr: FunctionResult, text: str) -> tuple[Remark, ...]:
        """The offload decisions of `fr`'s loop nests, computed in this process where they are not
        known: the GPU mapping of each nest (reads the analysis' isl objects: one thread; cheap
        where the back end ran). `text` is the file's text `fr` was analysed from."""
        known = self.known_decisions(fr)
        if known is not None:
            return known
        fa, settings = fr.analysis, self.settings
        with self._lock:
            back = self._backend.get(fa)
        mapper = functools.partial(_mapper, back=back, settings=settings)
        return self._keep(fr, function_decisions(fa, text, settings.target, mapper))

    def decide_in_worker(self, fr: FunctionResult, text: str) -> tuple[Remark, ...]:
        """`decisions`, made in the back-end worker process (`explorer/offload.py`) from the
        function's IR: touches no isl object of this process, so any thread may call it, and it
        holds no lock (the GIL included) while the worker maps. Where the worker crashes or runs
        out of time or memory, the function has no decisions (logged)."""
        known = self.known_decisions(fr)
        if known is not None:
            return known
        settings = self.settings
        fa = fr.analysis
        try:
            decided = backend_worker().call(
                decide_in_worker, fa.function, settings.analysis, settings.tile_sizes, text, settings.target
            )  # fmt: skip
        except (FrontendFailure, WorkerRaised) as e:
            log.warning("offload decisions of %s failed in the back-end worker: %s", fa.function.name, e)
            decided = Decided(())
        return self._keep(fr, decided)

    def _keep(self, fr: FunctionResult, decided: Decided) -> tuple[Remark, ...]:
        with self._lock:
            self._decisions[_decision_key(fr)] = (fr.analysis.function.range.line, decided)
            while len(self._decisions) > DECISIONS_KEPT:
                self._decisions.popitem(last=False)
        return decided.remarks

    def _front_trace(self, uri: str, name: str) -> tuple[PassRecord, ...]:
        """The analysis passes, re-rendered first if the function moved since they were made."""
        found = self.function(uri, name)
        if found.trace_current:
            return found.analysis.trace
        analysis = self.latest(uri)
        assert analysis is not None
        fresh = _analyze_function(found.analysis.function, self.settings, analysis.remarks)
        rng = fresh.function.range
        if found.key is not None:
            self.cache.put(found.key, CachedFunction(fresh, rng.line, rng.end_line, rng.line))
        updated = FunctionResult(fresh, found.origin, True, found.key)
        functions = tuple(updated if f is found else f for f in analysis.functions)
        with self._lock:
            if self._latest.get(uri) is analysis:
                self._latest[uri] = replace(analysis, functions=functions)
        return fresh.trace

    def artifact(self, uri: str, name: str, label: str) -> PassRecord:
        """The record titled `label` (``gpu-mapping[0]``, ``scop-detect``) in the function's trace."""
        trace = self.trace(uri, name)
        found = next((p for p in trace if p.label == label), None)
        if found is None:
            known = ", ".join(p.label for p in trace) or "none"
            raise UnknownPass(f"`{name}` has no pass `{label}` (passes: {known})")
        return found


# A cached entry's `trace_line` after a remap: no function starts on line 0, so its pass texts
# (rendered at the old columns) count as stale and are rendered again when asked for.
_NO_TRACE_LINE = 0


def _remapped(
    earlier: FunctionResult | None, key: FunctionKey, src: FunctionSource, fn: ir.Function | None
) -> FunctionAnalysis | None:
    """`earlier`'s analysis moved to `src` (`explorer/relocate.py`'s `Remap`) where the edit
    between them changed no IR but positions (a space, a comment, a line break), under the same
    surroundings, flags, settings and syntax errors: the analysis is a function of these and of
    the IR alone. None where anything else changed (the function is analysed again).

    `fn` is `src` lowered, which the moved IR must equal; None where the edit changed no token
    (`explorer/tokens.py`): the moved IR is then taken as it is, unless a text the IR quotes from
    the source (an unmodelled expression, a declaration, as written) spans the edit."""
    if earlier is None or earlier.key is None:
        return None
    old = earlier.key
    if replace(old, text=key.text, col=key.col) != key:  # surroundings, flags, settings, errors
        return None
    fa = earlier.analysis
    start = fa.function.range
    remap = Remap(key.path, TextAt(old.text, start.line, start.col), TextAt(src.text, src.line, src.col))
    if not remap.unseen():  # code changed: the IR cannot be the same
        return None
    if fn is None and (not same_tokens(old.text, src.text) or _quotes_edit(fa.function, old.text, src.text)):
        return None
    moved_fn = remap.move(fa.function)
    if moved_fn is None:
        return None
    if fn is None:
        fn = replace(moved_fn, text=src.text)
    elif replace(moved_fn, text=fn.text) != fn:
        return None
    moved = remap.move(replace(fa, trace=()))  # the trace is rendered again when asked for
    return None if moved is None else replace(moved, function=fn)


def _quotes_edit(fn: ir.Function, old: str, new: str) -> bool:
    """Whether a text in `fn` (other than its whole text) may be a slice of `old` that spans the
    edit that made `new`: one that holds the edit's tokens around it as written, or with its
    blanks collapsed (where in doubt, True: the function is lowered again)."""
    context = edit_context(old, new)
    if context is None:
        return True
    collapsed = " ".join(context.split())
    return any(context in s or collapsed in " ".join(s.split()) for s in _strings(replace(fn, text="")))


def _strings(value: object) -> Iterator[str]:
    """Every str in `value` (IR: dataclasses, tuples, mappings), each object visited once."""
    seen: set[int] = set()
    todo = [value]
    while todo:
        v = todo.pop()
        if isinstance(v, str):
            yield v
        elif isinstance(v, int | float | bool | SourceRange | None) or id(v) in seen:
            continue
        else:
            seen.add(id(v))
            if dataclasses.is_dataclass(v):
                todo += [getattr(v, f.name) for f in dataclasses.fields(v)]
            elif isinstance(v, tuple | list | frozenset | set):
                todo += list(v)
            elif isinstance(v, Mapping):
                todo += [*v.keys(), *v.values()]


def _shifted_parse(parsed: ParsedFile, text: str) -> tuple[ParsedFile, FunctionSource] | None:
    """`parsed` (of an earlier text) moved to `text`, where the edit between them lies inside one
    function, changed none of its tokens and no line break (a space, a comment: `__LINE__`, in
    `assert` say, expands to where it is, and every function below would move); with that
    function as it is now. None where it does not, where the earlier parse had syntax errors
    (their ranges would move too), or where a function starts on the edited function's last line
    (its columns would move)."""
    if parsed.errors or not parsed.cacheable:
        return None
    old = parsed.text
    begin, end, new_end = edit_span(old, text)
    if old.count("\n", begin, end) != text.count("\n", begin, new_end):
        return None
    starts = _line_starts(old)
    found = _edited_function(parsed, starts, begin, end)
    if found is None:
        return None
    k, first = found
    src = parsed.functions[k]
    new_text = text[first : first + len(src.text) + new_end - end]
    if "\r" in src.text or "\r" in new_text:  # a line break to clang, alone: lines are counted by "\n" here
        return None
    if not same_tokens(src.text, new_text) or _position(old, starts, first + len(src.text)) != (src.end_line, src.end_col):
        return None
    after = parsed.functions[k + 1 :]
    name = _str_offset(old, starts, src.name_line, src.name_col)
    if name is None or begin <= name < end or (after and after[0].line <= src.end_line):
        return None
    new_starts = _line_starts(text)
    name_line, name_col = _position(text, new_starts, name if name < begin else name + new_end - end)
    end_line, end_col = _position(text, new_starts, first + len(new_text))
    edited = replace(src, text=new_text, end_line=end_line, end_col=end_col, name_line=name_line, name_col=name_col)
    return replace(parsed, text=text, functions=(*parsed.functions[:k], edited, *after)), edited


def _edited_function(parsed: ParsedFile, starts: list[int], begin: int, end: int) -> tuple[int, int] | None:
    """The function whose text holds `begin`..`end` of `parsed`'s text, neither its first nor its
    last character: its index and where its text starts."""
    for k, src in enumerate(parsed.functions):
        first = _str_offset(parsed.text, starts, src.line, src.col)
        if first is None or parsed.text[first : first + len(src.text)] != src.text:
            return None
        if first < begin and end < first + len(src.text):
            return k, first
    return None


def _line_starts(text: str) -> list[int]:
    return [0, *(m.end() for m in re.finditer("\n", text))]


def _str_offset(text: str, starts: list[int], line: int, col: int) -> int | None:
    """The str index of clang's (1-based line, 1-based byte column)."""
    if not 1 <= line <= len(starts):
        return None
    begin = starts[line - 1]
    row = text[begin : starts[line] if line < len(starts) else len(text)]
    head = row.encode("utf-8")[: col - 1]
    return begin + len(head.decode("utf-8", errors="ignore")) if len(head) == col - 1 else None


def _position(text: str, starts: list[int], offset: int) -> tuple[int, int]:
    """Clang's (1-based line, 1-based byte column) of a str index."""
    k = bisect.bisect_right(starts, offset) - 1
    return k + 1, len(text[starts[k] : offset].encode("utf-8")) + 1


def _partial(
    doc: Document, results: Sequence[FunctionResult], parsed: ParsedFile, counters: _Counters, start: float
) -> DocumentAnalysis:
    """The analysis of `doc` as far as `results` go."""
    stats = AnalysisStats(counters.analysed, counters.reused, counters.relocated, time.perf_counter() - start)
    return DocumentAnalysis(doc, tuple(results), parsed.errors, stats)


def _function_key(parsed: ParsedFile, src: FunctionSource, options: ParseOptions, settings: Settings) -> FunctionKey:
    return FunctionKey(
        parsed.path, src.text, src.col, parsed.context, options, settings, _relative_errors(parsed, src)
    )


class _Lowering:
    """The functions an analysis will lower, lowered ahead in the front end's worker (a thread of
    this class sends the requests, one at a time) while the analysis thread analyses the ones
    before them: the worker's process and this one work on two cores. Any other function is
    lowered when asked for, on the same thread (the parser is used by one thread at a time).
    `stop` drops what was not started and waits for the one that was."""

    def __init__(self, parsed: ParsedFile, todo: Sequence[FunctionSource]) -> None:
        self._parsed = parsed
        self._pool: ThreadPoolExecutor | None = None
        self._ahead: dict[FunctionSource, Future[ir.Function]] = {}
        if len(todo) > 1:  # one function: nothing to overlap
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hexplore-lowering")
            self._ahead = {src: self._pool.submit(parsed.lower, src) for src in todo}

    def get(self, src: FunctionSource) -> ir.Function:
        """`src`'s IR (raises as `ParsedFile.lower` does)."""
        ahead = self._ahead.pop(src, None)
        if ahead is None and self._pool is not None:
            ahead = self._pool.submit(self._parsed.lower, src)
        return ahead.result() if ahead is not None else self._parsed.lower(src)

    def stop(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)


def _decision_key(fr: FunctionResult) -> object:
    return fr.key if fr.key is not None else fr.analysis


def _mapper(k: int, sa: ScopAnalysis, back: Backend | None, settings: Settings) -> Callable[[], GpuProgram | None]:
    """How to get the nest's GPU mapping: the back end's where it ran, else the hovers' (the same
    options unless tile sizes are set), else a mapping of its own."""

    def get() -> GpuProgram | None:
        if back is not None and k < len(back.units) and back.units[k].gpu is not None:
            return back.units[k].gpu
        if not settings.tile_sizes:
            return gpu_mapping(sa)
        from core_compiler.pipeline import gpu_program

        return gpu_program(sa, _backend_options(settings))

    return get


def _backend_options(settings: Settings) -> GpuOptions:
    return gpu_options(settings.tile_sizes)


def _parse(parser: DocumentParser, doc: Document, options: ParseOptions) -> ParsedFile:
    try:
        return parser.parse(doc.text, options)
    except FrontendFailure as e:  # libclang crashed, hung or ran out of memory on this text
        return ParsedFile(doc.path, doc.text, (), (parse_failure(doc.path, doc.text, e),), "", None)
    except Exception as e:  # libclang could not even start: say so on line 1, never crash the UI
        parser.dispose()
        note = missed(
            "frontend",
            "InternalError",
            f"hexplore could not parse this file: {e}",
            SourceRange(doc.path, 1, 1, 1, 1),
        )
        return ParsedFile(doc.path, doc.text, (), (note,), "", None)


def _analyze_function(
    fn: ir.Function, settings: Settings, errors: tuple[Remark, ...], previous: FunctionAnalysis | None = None
) -> FunctionAnalysis:
    """`fn`'s analysis; `previous` (its last one) lends its isl context and, where a loop nest's
    model is unchanged by the edit (``1 * `` inserted), its dependences (`reuse_dependences`)."""
    try:
        return analyze_function(fn, settings.analysis, errors, previous)
    except Exception as e:  # a bug in the core: report it on the function, keep serving the rest
        return _internal_error(fn, "analysing", e)


def _internal_error(fn: ir.Function, doing: str, e: Exception) -> FunctionAnalysis:
    note = missed(
        "explorer",
        "InternalError",
        f"hexplore hit an internal error {doing} `{fn.name}` ({_type_name(e)}: {e}); "
        "the other functions are unaffected — please report this",
        fn.name_range,
        fn.name,
    )
    return FunctionAnalysis(fn, (), (note,))


def _unlowered(parsed: ParsedFile, src: FunctionSource) -> ir.Function:
    """A function the front end failed to lower, as far as its source says: its name, range and text."""
    rng = SourceRange(parsed.path, src.line, src.col, src.end_line, src.end_col)
    name_range = SourceRange(parsed.path, src.name_line, src.name_col, src.name_line, src.name_col + len(src.name))
    return ir.Function(src.name, ir.OtherType(src.result_type), (), (), rng, name_range, text=src.text)


def _type_name(e: Exception) -> str:
    """The exception's type, the original one's for an exception raised in the front end's worker."""
    return e.type_name if isinstance(e, WorkerRaised) else type(e).__name__


def _relative_errors(parsed: ParsedFile, src: FunctionSource) -> tuple[RelativeError, ...]:
    """The syntax errors `analyze_function` counts against this function, relative to its first
    line. The test is the core's own (`contains`), so that cached results equal fresh ones even
    for the odd diagnostic whose range ends at 0:0."""
    fn_range = SourceRange(parsed.path, src.line, src.col, src.end_line, src.end_col)
    return tuple(
        (e.range.line - src.line, e.range.col, e.range.end_line - src.line, e.range.end_col, e.message)
        for e in parsed.errors
        if fn_range.contains(e.range)
    )
