"""Random edits of C text, many of them breaking the syntax, for the robustness tests."""

from __future__ import annotations

import random

SNIPPETS = (
    ";", "{", "}", "(", ")", "[", "]", "\n", " ", "i", "n", "0", "1", "+", "*", "=", "+=",
    "a[i]", "A[i][j]", "a[i + 1]", "x[idx[i]]", "for (int q = 0; q < n; q++)\n", "if (i > 2) ",
    "double t = 0.0;\n", "/* comment */", "//", "/*", "*/", "#define M 3\n", "\"", "'",
    "printf(\"%d\", i);", "return;", "break;", "s += 1.0;", "int", "void f(void) {}\n",
    "é", "∑", "😀",
)  # fmt: skip


def random_edit(rng: random.Random, text: str) -> tuple[int, int, str]:
    """A (start, end, replacement) on `text`'s str indices."""
    n = len(text)
    start = rng.randint(0, n)
    op = rng.random()
    if op < 0.45:
        return start, start, rng.choice(SNIPPETS)
    if op < 0.8:
        return start, min(n, start + rng.randint(1, 12)), ""
    return start, min(n, start + rng.randint(1, 6)), rng.choice(SNIPPETS)


def position(text: str, index: int) -> tuple[int, int]:
    """(0-based line, 0-based str index in the line) of a str index."""
    line = text.count("\n", 0, index)
    return line, index - (text.rfind("\n", 0, index) + 1)
