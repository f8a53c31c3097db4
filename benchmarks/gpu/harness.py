"""PolyBench's program with its kernel calling hexplore's host function, by parameter name.

hexplore's `extern "C" void kernel_<k>(...)` need not take PolyBench's parameters in the same
order or all of them (539408e's heat-3d dropped `tsteps`, which its loops do not read: called
with PolyBench's arguments, it took `tsteps` for `n` and `n` for `A`, and crashed). So the host
.cu is compiled with `-Dkernel_<k>=hx_kernel_<k>`, and in a copy of `<k>.c` the body of PolyBench's
own `static void kernel_<k>` passes each of hexplore's parameters by its name:

    extern void hx_kernel_heat_3d(int n, double *A, double *B);
    static
    void kernel_heat_3d(int tsteps, int n, DATA_TYPE POLYBENCH_3D(A,N,N,N,n,n,n), ...)
    {
      hx_kernel_heat_3d(n, (void *)A, (void *)B);
    }
"""

from __future__ import annotations

import re


def _balanced(text: str, start: int, open_: str, close: str) -> int:
    """The index just past the bracket that closes the one at `start`."""
    depth = 0
    for i in range(start, len(text)):
        depth += (text[i] == open_) - (text[i] == close)
        if depth == 0:
            return i + 1
    raise ValueError(f"unbalanced {open_}{close} from offset {start}")


def split_params(text: str) -> list[str]:
    """`int n, DATA_TYPE POLYBENCH_2D(A,N,M,n,m)` -> its two parameters."""
    params, depth, cur = [], 0, ""
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            params.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return [p for p in [*params, cur.strip()] if p and p != "void"]


def _name(param: str) -> str:
    m = re.search(r"POLYBENCH_\dD\s*\(\s*(\w+)", param)
    return m.group(1) if m else re.findall(r"\w+", param)[-1]


def kernel_definition(source: str, fname: str) -> tuple[int, int, int]:
    """Offsets in `source` of `[static] void fname(`, of its `{` and just past its `}`."""
    m = re.search(rf"(?:\bstatic\s+)?\bvoid\s+{fname}\s*\(", source)
    if m is None:
        raise ValueError(f"no definition of {fname}")
    body = source.index("{", _balanced(source, m.end() - 1, "(", ")"))
    return m.start(), body, _balanced(source, body, "{", "}")


def hexplore_params(host_cu: str, fname: str) -> list[tuple[str, str, bool]]:
    """hexplore's parameters: (declaration, name, is a pointer)."""
    m = re.search(rf'extern\s+"C"\s+void\s+{fname}\s*\((.*?)\)', host_cu, re.S)
    if m is None:
        raise ValueError(f'no extern "C" {fname} in the host code')
    return [(p, _name(p), "*" in p) for p in split_params(m.group(1))]


def harness(source: str, fname: str, host_cu: str) -> tuple[str, str]:
    """`source` with `fname`'s body calling hexplore's, and a note where hexplore's leaves
    PolyBench's parameters out. Raises ValueError where hexplore's takes one PolyBench's lacks."""
    start, body, end = kernel_definition(source, fname)
    params = source[source.index("(", start) + 1 : source.rindex(")", start, body)]
    poly = [_name(p) for p in split_params(params)]
    hx = hexplore_params(host_cu, fname)
    foreign = [name for _, name, _ in hx if name not in poly]
    if foreign:
        raise ValueError(f"hexplore's {fname} takes {', '.join(foreign)}, which PolyBench's does not")
    unused = [n for n in poly if n not in {name for _, name, _ in hx}]
    note = f"hexplore's {fname} does not take {', '.join(unused)}" if unused else ""
    decl = f"extern void hx_{fname}({', '.join(d for d, _, _ in hx) or 'void'});\n"
    args = ", ".join(f"(void *){name}" if ptr else name for _, name, ptr in hx)
    call = "{\n  /* bench_gpu: hexplore's host function, by parameter name */\n"
    call += f"  hx_{fname}({args});\n}}"
    return source[:start] + decl + source[start:body] + call + source[end:], note
