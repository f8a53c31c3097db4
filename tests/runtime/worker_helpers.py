"""Functions for test_worker.py: top level in an importable module, as a fresh worker process needs."""

from __future__ import annotations

import ctypes
import os
import time


def add(a: int, b: int) -> int:
    return a + b


def fail() -> None:
    raise ValueError("the kernel did not compile")


def hang() -> None:
    time.sleep(3600)


def segfault() -> None:
    ctypes.string_at(0)


def exit_early() -> None:
    os._exit(3)


def unpicklable() -> object:
    return lambda: None


def allocate(n: int) -> int:
    return len(bytearray(n))
