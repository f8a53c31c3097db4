"""lsp: ``hexplore-lsp``, the language server (pygls 2). See PROTOCOL.md for what it speaks and
REMARKS.md for what its diagnostics mean.

- `server.py`: the server, its lifecycle, text sync, scheduling of analyses, request handlers.
- `positions.py`: core positions (1-based, byte columns) <-> LSP positions (0-based, UTF-16).
- `diagnostics.py`, `hover.py`, `inlay_hints.py`, `code_lens.py`: one LSP feature each, from an
  explorer `DocumentAnalysis`.
- `custom_requests.py`: the ``hexplore/*`` requests' parameters and results.

*Architecture invariant:* this is the only package that imports pygls or lsprotocol; everything it
knows about the compiler comes through explorer/, apart from the core's plain data types
(`Remark`, `SourceRange`, `PassRecord`, the error classes).
"""
