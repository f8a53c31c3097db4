"""Whether an edit changed C's tokens, or only the blanks and comments between them.

An edit that leaves a function's tokens and lines as they were (a space, a comment) cannot change
what the function means, so the workspace moves its last analysis to the new text without asking
libclang to parse and lower it again (`explorer/workspace.py`). Deciding that must never be
wrong, so this lexer reads C's preprocessing tokens as the compiler does (maximal munch: ``a + +b``
is three tokens and ``a ++b`` two) and gives up (None) on anything it does not read for sure:
directives (``#``, ``%:``), line splices (``\\``), trigraphs, C++ raw strings, characters outside
ASCII, ``__LINE__``::

    lexemes("c[i] = a  /* two */ * b;") == lexemes("c[i]=a*b;")      # same tokens
    lexemes("x = a + +b;") != lexemes("x = a ++b;")                   # `+ +` is not `++`
    lexemes("#define N 4") is None                                    # a directive: not read here
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

# C's and C++'s punctuators, longest first (maximal munch), then any other single character.
_PUNCTUATORS = sorted(
    ["...", "<<=", ">>=", "<=>", "->*", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||",
     "*=", "/=", "%=", "+=", "-=", "&=", "^=", "|=", "::", ".*", "<:", ":>", "<%", "%>"],
    key=len,
    reverse=True,
)  # fmt: skip
_TOKEN = re.compile(
    r"(?P<blank>[ \t\n\r\f\v]+|/\*.*?\*/|//[^\n]*)"
    r"|(?P<literal>(?:u8|[uUL])?(?:\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*')\w*)"  # with a ud-suffix
    r"|(?P<number>\.?[0-9](?:[eEpP][+-]|[\w.'])*)"  # a pp-number (C23/C++ digit separators too)
    r"|(?P<word>[A-Za-z_$][\w$]*)"
    r"|(?P<punct>" + "|".join(map(re.escape, _PUNCTUATORS)) + r"|/(?!\*)|[-+*%<>=!&|^~?:;,.()\[\]{}])",
    re.S,
)
# What this lexer does not read for sure: directives, splices, trigraphs, raw strings, macros
# whose value is where they are written.
_REFUSED = re.compile(r"#|%:|\\|\?\?|\bR\"|\b(?:u8|[uUL])R\"|__LINE__|__COUNTER__")


def lexemes(text: str) -> tuple[str, ...] | None:
    """`text`'s preprocessing tokens, comments and blanks left out; None where the text holds
    something this lexer does not read for sure (module docstring)."""
    spans = _token_spans(text)
    return None if spans is None else tuple(text[a:b] for a, b in spans)


def same_tokens(old: str, new: str) -> bool:
    """Whether `new` is `old` with only blanks and comments changed (False where unsure)."""
    a = lexemes(old)
    return a is not None and a == lexemes(new)


def edit_context(old: str, new: str) -> str | None:
    """The text of `old` from the token before the edit that made `new` to the token after it, as
    written: what a slice of `old` that spans the edit (an expression's text, say) holds. None
    where `old` is not read here."""
    begin, end, _ = edit_span(old, new)
    spans = _token_spans(old)
    if spans is None:
        return None
    first = max((a for a, b in spans if b <= begin), default=0)
    last = min((b for a, b in spans if a >= end), default=len(old))
    return old[first:last]


@functools.lru_cache(maxsize=16)  # a function's old and new texts, asked about several times per edit
def _token_spans(text: str) -> tuple[tuple[int, int], ...] | None:
    """Where `text`'s tokens are (as `lexemes` reads them)."""
    if not text.isascii() or _REFUSED.search(text):
        return None
    out: list[tuple[int, int]] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:  # `@`, a backquote, an unterminated literal or comment: not C read here
            return None
        if m.lastgroup != "blank":
            out.append(m.span())
        pos = m.end()
    return tuple(out)


def edit_span(old: str, new: str) -> tuple[int, int, int]:
    """The edit that made `new` of `old`: where it begins, where it ends in `old` and in `new`
    (str indices; between the texts' common prefix and common suffix)."""
    limit = min(len(old), len(new))
    prefix = _common_length(lambda n: old[:n] == new[:n], limit)
    suffix = _common_length(lambda n: old[len(old) - n :] == new[len(new) - n :], limit - prefix)
    return prefix, len(old) - suffix, len(new) - suffix


def _common_length(same: Callable[[int], bool], limit: int) -> int:
    """The largest n <= `limit` with `same(n)` (which holds up to some n, then not): a bisection
    over slice comparisons, which run in C (a 400-line file compared a character at a time in
    Python took 4 ms)."""
    low, high = 0, limit
    while low < high:
        mid = (low + high + 1) // 2
        if same(mid):
            low = mid
        else:
            high = mid - 1
    return low
