"""explorer/tokens.py: which edits change C's tokens (the workspace skips libclang for the others)."""

from __future__ import annotations

import pytest

from explorer.tokens import edit_context, edit_span, lexemes, same_tokens


@pytest.mark.parametrize(
    ("old", "new", "same"),
    [
        ("c[i] = a * b;", "c[i]  =  a*b ;", True),
        ("c[i] = a * b;", "c[i] = a /* twice */ * b;", True),
        ("c[i] = a * b;", "c[i] =\n  a * b; // product", True),
        ("x = a + +b;", "x = a ++b;", False),  # maximal munch: `++` is one token
        ("x = a - -b;", "x = a --b;", False),
        ("x = a & &b;", "x = a &&b;", False),
        ("x = y / *p;", "x = y /*p;", False),  # a comment opens
        ("x = a; // c\n y = b;", "x = a; // c y = b;", False),  # the line comment swallows code
        ("s = L\"a\";", "s = L \"a\";", False),  # a wide string, or `L` then a string
        ("x = 1e+5;", "x = 1e +5;", False),  # one pp-number, or `1e` then `+5`
        ("x = .5;", "x = . 5;", False),
        ('s = "a b";', 's = "a  b";', False),  # inside a string literal
        ("foo(x);", "fo o(x);", False),
        ("x = a;", "x = b;", False),
    ],
)
def test_same_tokens(old: str, new: str, same: bool) -> None:
    assert same_tokens(old, new) is same
    assert same_tokens(new, old) is same


@pytest.mark.parametrize(
    "text",
    ["#define N 4\n", "%:define N 4\n", "x = a \\\n + b;", "x = a ??/\n;", 's = R"(a)";',
     "x = __LINE__;", "x = 'é';", "x = a @ b;", 'x = "open'],
)  # fmt: skip
def test_what_the_lexer_does_not_read_for_sure_is_never_the_same(text: str) -> None:
    assert lexemes(text) is None
    assert not same_tokens(text, text)


def test_edit_span_and_context() -> None:
    assert edit_span("x = alpha;", "x =  alpha;") == (4, 4, 5)
    assert edit_span("abc", "abc") == (3, 3, 3)
    assert edit_span("", "x") == (0, 0, 1)
    assert edit_context("y = x = alpha * b;", "y = x =  alpha * b;") == "= alpha"
    assert edit_context("a /* c */ b", "a /* cd */ b") == "a /* c */ b"
