"""Run a C function of a source file (the original program, with its own ``main``) via ctypes.

The source is not compiled on its own: a wrapper translation unit ``#include``s it and adds one
exported trampoline per function::

    void hx_call_kernel_gemm(void **args, void *ret)
    { kernel_gemm(*(int *)args[0], ..., args[5], args[6], args[7]); }

so that ``static`` kernels are callable too. Array parameters are passed as ``void *``, which C
converts implicitly to any object pointer type the parameter has, VLA row pointers such as
``double (*)[m]`` included; scalars are read through a pointer of their own type. ``main`` is
renamed with ``-Dmain=hexplore_unused_main``.

Builds are cached by content: the wrapper is preprocessed, and the hash of the preprocessed text,
the compiler and the flags names a shared library in the user's private cache directory
(`core_compiler.user_dirs`: ``$XDG_CACHE_HOME/hexplore/reference`` by default, 0700, its owner and
mode checked; one that fails the checks is not used). Edited headers therefore give a new build.
The library's SHA-256 is written next to it (``<name>.so.sha256``) when it is built and checked
before it is reused or loaded: a library that changed since is built again, never loaded. Files
appear atomically, so concurrent builds (pytest-xdist) are safe.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from core_compiler.errors import BuildError, LayoutError
from core_compiler.runtime.inputs import aligned_empty, make_inputs
from core_compiler.runtime.signature import ArraySlot, Layout, ScalarSlot
from core_compiler.user_dirs import cache_dir as user_cache_dir

# Only the trampolines are exported, and the linker drops what they do not reach: a `main` that
# calls functions of other files of the program (PolyBench's ``polybench_alloc_data``) links.
BASE_FLAGS = ("-O2", "-shared", "-fPIC", "-std=gnu11", "-fvisibility=hidden", "-ffunction-sections",
              "-fdata-sections", "-Wl,--gc-sections")  # fmt: skip
# GCC 12.2 (Debian 12's cc) miscompiles `A[i] = 0.5 * A[i] + 0.25 * B[n - i + 2*j] + 0.125 * B[i + j]`
# in an i/j nest at -O1 and above: induction-variable optimisation leaves A unchanged (found by
# tests/test_property_random_nests.py; reduced in tests/runtime/test_reference_compiler.py). A wrong
# reference turns right code into a reported mismatch, and the same bug in hexplore's C goes unseen.
GCC_WORKAROUNDS = ("-fno-ivopts",)  # for GCC older than 14
MAIN_RENAME = "-Dmain=hexplore_unused_main"
BUILD_TIMEOUT_S = 120
TIMING_BUDGET_S = 1.0  # what `timed_call` spends on calls beyond the first, at most (plus one)


@dataclass(frozen=True)
class BuildOptions:
    defines: tuple[str, ...] = ()  # added to the layout's: "N=37" or "DEBUG"
    include_dirs: tuple[str, ...] = ()
    extra_flags: tuple[str, ...] = ()  # e.g. ("-O0", "-fopenmp"); later flags win
    compiler: str | None = None  # default: $CC, else cc


@dataclass(frozen=True)
class ReferenceLibrary:
    path: str  # the shared library
    function: str
    trampoline: str  # the exported symbol, hx_call_<function>
    cached: bool  # True when an earlier build was reused
    sha256: str  # of the library when it was built: checked before it is loaded


@dataclass(frozen=True)
class ReferenceResult:
    function: str
    arrays: Mapping[str, np.ndarray] = field(repr=False)  # every array argument after the call
    returned: int | float | None  # the return value of a non-void function
    elapsed_s: float  # the call alone
    library: str
    return_dtype: np.dtype | None = None  # C's type of `returned` (float: compared as a float)


# ------------------------------------------------------------------------------------ wrapper


def trampoline_name(function: str) -> str:
    return f"hx_call_{function}"


def address_getter(function: str) -> str:
    """The exported symbol whose call returns the address of `function` (`wrapper_source`)."""
    return f"hx_address_of_{function}"


def wrapper_source(source_path: str, layout: Layout, externals: tuple[str, ...] = ()) -> str:
    """The translation unit that includes `source_path` and exports the trampoline; for a function
    that uses globals, also ``hx_in_f(args)``, which sets them from their slots, and
    ``hx_out_f(args)``, which copies the global arrays back (``A`` in ``args[3]``)::

        void hx_in_f(void **args) { __builtin_memcpy(A, args[3], sizeof A); }

    For each of `externals` (functions generated code calls: opaque calls, even `static` ones),
    ``void *hx_address_of_g(void)`` returns its address.
    """
    args = ", ".join(
        f"*({s.c_type} *)args[{i}]" if isinstance(s, ScalarSlot) else f"args[{i}]"
        for i, s in enumerate(layout.slots)
        if not s.glob
    )
    call = f"{layout.function}({args})"
    if layout.returns != "void":
        call = f"*({layout.returns} *)ret = {call}"
    out = f'#include "{Path(source_path).resolve()}"\n\n'
    out += _exported(trampoline_name(layout.function), "void **args, void *ret", ["(void)ret;", f"{call};"])
    if any(s.glob for s in layout.slots):
        sets = [_set_global(s, i) for i, s in enumerate(layout.slots) if s.glob in ("scalar", "array", "pointer")]
        gets = [f"__builtin_memcpy(args[{i}], {s.name}, sizeof {s.name});" for i, s in enumerate(layout.slots) if s.glob == "array"]
        out += _exported(f"hx_in_{layout.function}", "void **args", sets)
        out += _exported(f"hx_out_{layout.function}", "void **args", gets)
    for name in externals:
        head = f'__attribute__((visibility("default"))) void *{address_getter(name)}(void)'
        out += f"{head};\n{head} {{ return (void *)&{name}; }}\n"
    return out


def _exported(name: str, params: str, lines: list[str]) -> str:
    body = "".join(f"  {line}\n" for line in ["(void)args;", *lines])
    head = f'__attribute__((visibility("default"))) void {name}({params})'
    return f"{head};\n{head}\n{{\n{body}}}\n"


def _set_global(slot: ScalarSlot | ArraySlot, k: int) -> str:
    if isinstance(slot, ScalarSlot):
        return f"{slot.name} = *({slot.c_type} *)args[{k}];"
    if slot.glob == "pointer":
        return f"{slot.name} = args[{k}];"
    return f"__builtin_memcpy({slot.name}, args[{k}], sizeof {slot.name});"


# -------------------------------------------------------------------------------------- build


def cache_dir() -> Path:
    """The private ``reference`` cache directory (`core_compiler.user_dirs.cache_dir`)."""
    return user_cache_dir("reference")


def build_reference(
    source_path: str,
    layout: Layout,
    *,
    text: str | None = None,
    options: BuildOptions | None = None,
    externals: tuple[str, ...] = (),
) -> ReferenceLibrary:
    """Compile `source_path` (from `text`, an unsaved buffer, when given) with the trampoline, and
    the address getters of `externals` (`wrapper_source`)."""
    options = options or BuildOptions()
    cc = _compiler(options.compiler)
    directory = cache_dir()
    source = _source_file(directory, source_path, text)
    wrapper = _write_once(directory, ".c", wrapper_source(str(source), layout, externals))
    pp_flags = _preprocessor_flags(source_path, layout, options)
    preprocessed = _run([cc, "-E", *pp_flags, str(wrapper)], "preprocessing", source_path)
    flags = (*BASE_FLAGS, *_workarounds(_compiler_id(cc)), *options.extra_flags)
    key = _digest(_compiler_id(cc).encode(), "\0".join(flags).encode(), preprocessed)
    lib = directory / f"{layout.function}-{key}.so"
    digest = _verified_digest(lib)
    cached = digest is not None
    if digest is None:  # not built yet, or changed since it was: (re)build
        digest = _compile(cc, flags, preprocessed, lib, source_path)
    return ReferenceLibrary(str(lib), layout.function, trampoline_name(layout.function), cached, digest)


def _preprocessor_flags(source_path: str, layout: Layout, options: BuildOptions) -> list[str]:
    flags = ["-std=gnu11", MAIN_RENAME, "-iquote", str(Path(source_path).resolve().parent)]
    flags += [f"-D{d}" for d in (*layout.defines, *options.defines)]
    flags += [f"-I{d}" for d in (*layout.include_dirs, *options.include_dirs)]
    return flags


def _source_file(directory: Path, source_path: str, text: str | None) -> Path:
    if text is None:
        return Path(source_path).resolve()
    return _write_once(directory, ".c", text, stem=Path(source_path).stem)


def _write_once(directory: Path, suffix: str, text: str, stem: str = "wrapper") -> Path:
    """A file named by the hash of `text`, written atomically unless it exists."""
    path = directory / f"{stem}-{_digest(text.encode())[:24]}{suffix}"
    if not path.exists():
        tmp = _private(path, ".tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    return path


def _private(path: Path, suffix: str) -> Path:
    """A name beside `path` that no other process or thread uses."""
    return path.with_name(f"{path.stem}.{os.getpid()}.{threading.get_ident()}{suffix}")


def _compile(cc: str, flags: tuple[str, ...], preprocessed: bytes, lib: Path, source: str) -> str:
    """Build `lib`; its SHA-256, also written to its ``.sha256`` file."""
    tmp_i, tmp_so, tmp_sum = _private(lib, ".i"), _private(lib, ".tmp.so"), _private(lib, ".tmp.sha256")
    tmp_i.write_bytes(preprocessed)
    try:
        _run([cc, "-x", "cpp-output", *flags, str(tmp_i), "-x", "none", "-o", str(tmp_so), "-lm"],
             "compilation", source)  # fmt: skip
        digest = _file_digest(tmp_so)
        tmp_sum.write_text(digest + "\n", encoding="ascii")
        os.replace(tmp_sum, _digest_file(lib))
        os.replace(tmp_so, lib)
    finally:
        for tmp in (tmp_i, tmp_so, tmp_sum):
            tmp.unlink(missing_ok=True)
    return digest


def _digest_file(lib: Path) -> Path:
    return lib.with_name(lib.name + ".sha256")


def _file_digest(path: Path | str) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _verified_digest(lib: Path) -> str | None:
    """The SHA-256 of a cached `lib` that still matches the one recorded when it was built;
    None when it is missing, has no record, or changed."""
    try:
        recorded = _digest_file(lib).read_text(encoding="ascii").strip()
        actual = _file_digest(lib)
    except (OSError, UnicodeDecodeError):
        return None
    return actual if recorded == actual else None


def _run(cmd: list[str], what: str, source: str) -> bytes:
    try:
        proc = subprocess.run(cmd, capture_output=True, timeout=BUILD_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise BuildError(f"{what} of {source} failed: {e}") from e
    if proc.returncode != 0:
        errors = proc.stderr.decode(errors="replace").strip()
        raise BuildError(f"{what} of {source} failed ({' '.join(cmd)}):\n{errors}")
    return proc.stdout


def _compiler(name: str | None) -> str:
    cc = name or os.environ.get("CC") or "cc"
    path = shutil.which(cc)
    if path is None:
        raise BuildError(f"C compiler {cc!r} not found")
    return path


@functools.cache
def _compiler_id(cc: str) -> str:
    proc = subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=30)
    return f"{cc}\n{proc.stdout}"


def _workarounds(compiler_id: str) -> tuple[str, ...]:
    """`GCC_WORKAROUNDS` for GCC before 14 (``cc (Debian 12.2.0-14) 12.2.0``), else nothing."""
    lines = compiler_id.splitlines()
    if "Free Software Foundation" not in compiler_id or len(lines) < 2:  # clang says nothing of the FSF
        return ()
    version = re.search(r"(\d+)\.\d+(\.\d+)?\s*$", lines[1])
    return GCC_WORKAROUNDS if version is not None and int(version[1]) < 14 else ()


def _digest(*parts: bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p)
        h.update(b"\0")
    return h.hexdigest()


# ---------------------------------------------------------------------------------------- run


def run_reference(
    source_path: str,
    layout: Layout,
    inputs: Mapping[str, np.ndarray] | None = None,
    *,
    text: str | None = None,
    options: BuildOptions | None = None,
    rounds: int = 1,
) -> ReferenceResult:
    """Build (or reuse) and call `layout.function` on copies of `inputs` (default: seed 0), timed
    as `timed_call` does."""
    lib = build_reference(source_path, layout, text=text, options=options)
    return timed_call(lib, layout, make_inputs(layout) if inputs is None else inputs, rounds)


def timed_call(lib: ReferenceLibrary, layout: Layout, inputs: Mapping[str, np.ndarray], rounds: int = 1) -> ReferenceResult:
    """`call_reference`; with `rounds` > 1 it is called again, up to that many times in all while
    the calls take under `TIMING_BUDGET_S`, and the best time counts: the first call also binds
    the library's symbols and pages its code in, tens of microseconds that at small sizes would
    count as the code's."""
    result = call_reference(lib, layout, inputs)
    times = [result.elapsed_s]
    while len(times) < rounds and sum(times) < TIMING_BUDGET_S:
        times.append(call_reference(lib, layout, inputs).elapsed_s)
    return replace(result, elapsed_s=min(times))


def call_reference(
    lib: ReferenceLibrary, layout: Layout, inputs: Mapping[str, np.ndarray]
) -> ReferenceResult:
    """Call the trampoline of `lib`; `inputs` are copied, never written."""
    buffers = [_buffer(slot, inputs) for slot in layout.slots]
    argv = (ctypes.c_void_p * max(1, len(buffers)))(*(b.ctypes.data for b in buffers))
    ret = np.zeros(1, dtype=_return_dtype(layout))
    library = _load(lib.path, layout.function, lib.sha256)
    fn = getattr(library, lib.trampoline)
    fn.argtypes, fn.restype = [ctypes.c_void_p, ctypes.c_void_p], None
    sets, gets = _global_copies(library, layout)
    sets(ctypes.addressof(argv))
    start = time.perf_counter()
    fn(ctypes.addressof(argv), ret.ctypes.data)
    elapsed = time.perf_counter() - start
    gets(ctypes.addressof(argv))
    arrays = {s.name: _view(b, s) for s, b in zip(layout.slots, buffers, strict=True)
              if isinstance(s, ArraySlot)}  # fmt: skip
    returned = None if layout.returns == "void" else ret[0].item()
    return ReferenceResult(layout.function, arrays, returned, elapsed, lib.path, layout.return_dtype)


def _global_copies(library: ctypes.CDLL, layout: Layout) -> tuple[Callable[[int], None], Callable[[int], None]]:
    """``hx_in_f`` and ``hx_out_f`` (`wrapper_source`), or functions that do nothing."""
    if not any(s.glob for s in layout.slots):
        return (lambda _: None), (lambda _: None)
    copies = []
    for which in ("in", "out"):
        copy = getattr(library, f"hx_{which}_{layout.function}")
        copy.argtypes, copy.restype = [ctypes.c_void_p], None
        copies.append(copy)
    return copies[0], copies[1]


def _buffer(slot: ScalarSlot | ArraySlot, inputs: Mapping[str, np.ndarray]) -> np.ndarray:
    """A C-contiguous, non-empty backing array (a 0-sized array still gets a valid pointer)."""
    if isinstance(slot, ScalarSlot):
        return np.array([slot.value], dtype=slot.dtype)
    if slot.name not in inputs:
        raise LayoutError(f"missing input array {slot.name!r}")
    data = np.asarray(inputs[slot.name])
    if data.shape != slot.shape:
        raise LayoutError(f"input {slot.name!r} has shape {data.shape}, expected {slot.shape}")
    if not np.can_cast(data.dtype, slot.dtype, "same_kind"):
        raise LayoutError(f"input {slot.name!r} has dtype {data.dtype}, expected {slot.dtype}")
    backing = aligned_empty((max(1, slot.size),), slot.dtype)
    backing[:] = 0
    backing[: slot.size] = data.astype(slot.dtype, copy=False).reshape(-1)
    return backing


def _view(backing: np.ndarray, slot: ArraySlot) -> np.ndarray:
    return backing[: slot.size].reshape(slot.shape)


def _return_dtype(layout: Layout) -> np.dtype:
    return layout.return_dtype or np.dtype("u1")


@functools.cache
def _load(path: str, function: str, sha256: str) -> ctypes.CDLL:
    """The library at `path`, once its SHA-256 is checked to be `sha256` (what was built)."""
    try:
        changed = _file_digest(path) != sha256
    except OSError as e:
        raise BuildError(f"the library built for `{function}` cannot be read: {e}") from e
    if changed:
        raise BuildError(f"{path} changed since it was built for `{function}`: not loading it")
    try:
        return ctypes.CDLL(path)
    except OSError as e:
        missing = re.search(r"undefined symbol: (\w+)", str(e))
        if missing is None:
            raise
        raise BuildError(
            f"`{function}` uses `{missing[1]}`, which its file does not define; hexplore builds the file on its "
            f"own, without the rest of your program: define `{missing[1]}` in the file (or in a header it includes)"
        ) from e
