"""What hexplore loads and runs is the user's own (issue 31.4): the reference build cache is a
directory others neither own nor can write (else it is not used), a cached library that changed
since it was built is built again, never loaded, and the run worker imports nothing from the
current directory."""

from __future__ import annotations

import importlib.util
import os
import pwd
import sys
from pathlib import Path

import pytest

from core_compiler.runtime import (
    build_reference,
    call_reference,
    layout_for_source,
    make_inputs,
    reference,
)
from core_compiler.runtime.worker import run_in_worker
from core_compiler.user_dirs import UnsafeCacheWarning, UnsafeDirectory, cache_root, private_dir

DOT = "double dot(int n, double x[n], double y[n]) { double s = 0; for (int i = 0; i < n; i++) s += x[i] * y[i]; return s; }\n"


@pytest.fixture
def dot_c(tmp_path: Path) -> str:
    path = tmp_path / "src" / "dot.c"
    path.parent.mkdir()
    path.write_text(DOT)
    return str(path)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("HEXPLORE_CACHE_DIR", str(root))
    return root


def _build(dot_c: str) -> reference.ReferenceLibrary:
    return build_reference(dot_c, layout_for_source(dot_c, "dot", {"n": 3}))


def test_default_location_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("HEXPLORE_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "hexplore"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_root() == tmp_path / "home" / ".cache" / "hexplore"
    assert "/tmp/hexplore-" not in str(reference.cache_dir.__doc__)


def test_a_new_cache_is_private(cache: Path, dot_c: str) -> None:
    lib = Path(_build(dot_c).path)
    assert lib.parent == cache / "reference"
    for d in (cache, cache / "reference"):
        assert os.stat(d).st_mode & 0o777 == 0o700, oct(os.stat(d).st_mode)


def _assert_not_used(cache: Path, dot_c: str, why: str) -> None:
    with pytest.warns(UnsafeCacheWarning, match=why):
        lib = _build(dot_c)
    assert not Path(lib.path).is_relative_to(cache), lib.path
    assert not any((cache / "reference").glob("*.so")), "the refused directory was written"
    layout = layout_for_source(dot_c, "dot", {"n": 3})
    assert call_reference(lib, layout, make_inputs(layout)).returned is not None  # still runs


def test_a_world_writable_cache_is_not_used(cache: Path, dot_c: str) -> None:
    (cache / "reference").mkdir(parents=True, mode=0o700)
    os.chmod(cache, 0o777)
    _assert_not_used(cache, dot_c, "writable by others")


def test_a_group_writable_cache_subdirectory_is_not_used(cache: Path, dot_c: str) -> None:
    (cache / "reference").mkdir(parents=True, mode=0o700)
    os.chmod(cache / "reference", 0o770)
    _assert_not_used(cache, dot_c, "writable by others")


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
def test_a_cache_owned_by_another_user_is_not_used(cache: Path, dot_c: str) -> None:
    nobody = pwd.getpwnam("nobody")
    (cache / "reference").mkdir(parents=True, mode=0o700)
    os.chown(cache, nobody.pw_uid, nobody.pw_gid)
    _assert_not_used(cache, dot_c, f"owned by uid {nobody.pw_uid}")


def test_a_symlinked_cache_is_not_used(cache: Path, dot_c: str, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o700)
    cache.symlink_to(target)
    _assert_not_used(cache, dot_c, "symbolic link")


def test_a_cache_inside_a_directory_others_can_write_is_not_used(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)  # not sticky: anyone could rename our directory away
    with pytest.raises(UnsafeDirectory, match="which others can write to"):
        private_dir(shared / "hexplore")


def test_a_tampered_library_is_rebuilt_not_loaded(cache: Path, dot_c: str) -> None:
    first = _build(dot_c)
    assert not first.cached
    lib = Path(first.path)
    good = lib.read_bytes()
    assert _build(dot_c).cached  # unchanged: reused
    evil = bytearray(good)
    evil[-64:] = b"\xcc" * 64  # what another writer would leave: same name, other bytes
    lib.write_bytes(bytes(evil))
    again = _build(dot_c)
    assert not again.cached, "a library that changed since it was built was reused"
    assert lib.read_bytes() == good and again.sha256 == first.sha256
    (lib.parent / (lib.name + ".sha256")).unlink()  # no record of what was built: rebuilt too
    assert not _build(dot_c).cached


def test_a_library_changed_after_the_build_is_not_loaded(cache: Path, dot_c: str) -> None:
    lib = _build(dot_c)
    Path(lib.path).write_bytes(Path(lib.path).read_bytes() + b"\0")
    layout = layout_for_source(dot_c, "dot", {"n": 3})
    with pytest.raises(reference.BuildError, match="changed since it was built"):
        call_reference(lib, layout, make_inputs(layout))


# ------------------------------------------------------------------------------ the run worker


def worker_view(module: str) -> tuple[list[str], bool]:
    """In a worker: its sys.path, and whether `module` could be imported."""
    return list(sys.path), importlib.util.find_spec(module) is not None


def test_the_worker_imports_nothing_from_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "hexplore_planted.py").write_text("raise SystemExit('imported from the cwd')\n")
    monkeypatch.chdir(tmp_path)  # as `hexplore run` started in a cloned repository
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    path, found = run_in_worker(worker_view, ("hexplore_planted",), timeout_s=60).unwrap()
    assert "" not in path and str(tmp_path) not in path, path
    assert not found
