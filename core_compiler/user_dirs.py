"""Where hexplore keeps files between runs, and the checks that make them safe to load.

The reference runner loads shared libraries it built earlier (`runtime/reference.py`), so whoever
can write into its cache directory can run code as the user. The cache is therefore per user:
``$HEXPLORE_CACHE_DIR``, else ``$XDG_CACHE_HOME/hexplore``, else ``~/.cache/hexplore``, and
`private_dir` uses a directory only if it is *private*:

- created with mode 0700 where missing (parents too, like ``mkdir -p``);
- a real directory (not a symbolic link) owned by the user (the effective uid), not writable by
  group or others;
- every directory above it owned by the user or by root and not writable by group or others,
  unless sticky (``/tmp``): nobody else can rename it away and put theirs in its place.

A directory that fails is refused with a message saying why (`UnsafeDirectory`); `cache_dir`
then warns (`UnsafeCacheWarning`) and uses a fresh private temporary directory of this process
(``tempfile.mkdtemp``: 0700, a random name), removed at exit, so nothing is reused. SECURITY.md
says the same for users.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import stat
import tempfile
import warnings
from pathlib import Path

from core_compiler.errors import HexploreError


class UnsafeDirectory(HexploreError):
    """A directory that others could write into (or replace): hexplore does not use it."""


class UnsafeCacheWarning(UserWarning):
    """The cache directory was refused; this process uses a private temporary one instead."""


def cache_root() -> Path:
    """``$HEXPLORE_CACHE_DIR``, else ``$XDG_CACHE_HOME/hexplore``, else ``~/.cache/hexplore``."""
    env = os.environ.get("HEXPLORE_CACHE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "hexplore"


def check_private(path: Path) -> None:
    """Raise `UnsafeDirectory` unless `path` is a directory only this user can change."""
    try:
        st = os.lstat(path)
    except OSError as e:
        raise UnsafeDirectory(f"{path}: {e.strerror}") from e
    if stat.S_ISLNK(st.st_mode):
        raise UnsafeDirectory(f"{path} is a symbolic link")
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafeDirectory(f"{path} is not a directory")
    if st.st_uid != os.geteuid():
        raise UnsafeDirectory(f"{path} is owned by uid {st.st_uid}, not by you (uid {os.geteuid()})")
    if st.st_mode & 0o022:
        raise UnsafeDirectory(f"{path} is writable by others (mode {stat.S_IMODE(st.st_mode):04o}); chmod 700 it")
    for parent in path.resolve().parents:
        pst = os.stat(parent)
        if pst.st_uid not in (0, os.geteuid()):
            raise UnsafeDirectory(f"{path} is inside {parent}, owned by uid {pst.st_uid}")
        if pst.st_mode & 0o022 and not pst.st_mode & stat.S_ISVTX:
            mode = stat.S_IMODE(pst.st_mode)
            raise UnsafeDirectory(f"{path} is inside {parent}, which others can write to (mode {mode:04o})")


def private_dir(path: Path) -> Path:
    """`path`, created 0700 where missing and checked with `check_private` (`UnsafeDirectory`)."""
    missing = []
    p = path
    while not os.path.lexists(p) and p != p.parent:
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        try:
            os.mkdir(d, 0o700)
        except FileExistsError:
            pass  # made meanwhile (another process): checked below like any other
        except OSError as e:
            raise UnsafeDirectory(f"cannot create {d}: {e.strerror}") from e
    check_private(path)
    return path


def cache_dir(name: str) -> Path:
    """The private cache directory `name` under `cache_root()`; where that is refused, a warning
    and a private temporary directory of this process."""
    root = cache_root()
    try:
        private_dir(root)
        return private_dir(root / name)
    except UnsafeDirectory as e:
        warnings.warn(
            f"hexplore: not using the cache directory: {e}; building in a private temporary "
            f"directory instead (set HEXPLORE_CACHE_DIR to a directory of your own)",
            UnsafeCacheWarning,
            stacklevel=2,
        )
        fallback = _temporary() / name
        fallback.mkdir(mode=0o700, exist_ok=True)  # inside a 0700 directory of ours
        return fallback


@functools.cache
def _temporary() -> Path:
    path = Path(tempfile.mkdtemp(prefix="hexplore-"))
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path
