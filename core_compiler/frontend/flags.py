"""The command line libclang sees for a file: language, builtin headers, includes, macros.

Apart from `clang_parse.py` (which imports clang's bindings) so that the editor's process, which
only sends the flags to the front end's worker, does not load libclang's bindings (issue 29.3).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

INCLUDE_DIR = Path(__file__).parent / "include"
CUDA_HEADER = INCLUDE_DIR / "hexplore_cuda.h"
CUDA_SUFFIXES = (".cu", ".cuh")


@dataclass(frozen=True)
class ParseOptions:
    include_dirs: tuple[str, ...] = ()
    defines: tuple[str, ...] = ()  # "N=100" or "DEBUG"
    extra_args: tuple[str, ...] = ()


@functools.cache
def _compiler_builtin_include() -> str | None:
    for cc in ("gcc", "cc", "clang"):
        exe = shutil.which(cc)
        if not exe:
            continue
        try:
            out = subprocess.run(
                [exe, "-print-file-name=include"], capture_output=True, text=True, timeout=10
            ).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            continue
        if out and os.path.isfile(os.path.join(out, "stddef.h")):
            return out
    return None


def clang_args(path: str, options: ParseOptions) -> list[str]:
    """The command line libclang sees for `path` (without the file name)."""
    is_cuda = path.endswith(CUDA_SUFFIXES)
    if is_cuda:
        args = ["-x", "cuda", "--cuda-host-only", "-nocudainc", "-nocudalib", "-std=c++17"]
        args += ["-include", str(CUDA_HEADER)]
    else:
        # A call to an undeclared function (`min`, `floord`, `__pencil_assume`) is C89's implicit
        # declaration: an error in C99 and later, which would hide the whole function. It stays a
        # warning, and the front end lowers the call as one to an unknown function
        # (`UndeclaredFunction`, `lower.py`). So does C89's implicit `int` (`static n;`,
        # `main() { ... }`): the type is `int`, as gcc reads it.
        args = ["-x", "c", "-std=gnu11", "-Wno-error=implicit-function-declaration", "-Wno-error=implicit-int"]
    builtin = _compiler_builtin_include()
    if builtin:
        args += ["-isystem", builtin]
    args += ["-idirafter", str(INCLUDE_DIR)]
    for d in options.include_dirs:
        args += ["-I", d]
    for d in options.defines:
        args += ["-D", d]
    args += list(options.extra_args)
    return args
