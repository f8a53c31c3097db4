"""Where candidates run: on Ray (``pip install 'hexplore[tune]'``) — a local instance started in
this process by default, using all cores, or an existing cluster at ``--address ray://host:port``
(each node needs hexplore installed; a node's candidates are timed one at a time there,
`measure.timing_lock`) — else on a local pool of processes, else in this process (``jobs=1``).

An engine measures a batch of configurations and returns a `Trial` for each, in order; what has
not finished by the deadline is a trial that did not count (``not finished in the budget``) and
is cancelled (Ray kills its worker; the pool's processes are killed when the engine closes)::

    with open_engine(jobs=0) as engine:          # ray if importable, else a process pool
        trials = engine.map(task, configs, deadline=time.monotonic() + 30)
"""

from __future__ import annotations

import contextlib
import math
import multiprocessing
import os
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any, Protocol

from core_compiler.tune.measure import Task, measure
from core_compiler.tune.search import Trial
from core_compiler.tune.space import Config

LATE = "not finished within the budget"


class Engine(Protocol):
    name: str  # in words, for the progress line: "ray (local instance), 2 CPUs"
    slots: int  # candidates it runs at once

    def map(self, task: Task, configs: Sequence[Config], deadline: float) -> list[Trial]: ...

    def close(self) -> None: ...


def ray_available() -> bool:
    try:
        import ray  # noqa: F401
    except ImportError:
        return False
    return True


@contextlib.contextmanager
def open_engine(kind: str = "auto", jobs: int = 0, address: str | None = None) -> Iterator[Engine]:
    """`kind`: "auto" (Ray where it imports, else a process pool, and the engine's `name` says
    so), "ray", "pool" or "local"; `jobs` candidates at once (0: the cores)."""
    engine = make_engine(kind, jobs, address)
    try:
        yield engine
    finally:
        engine.close()


def make_engine(kind: str = "auto", jobs: int = 0, address: str | None = None) -> Engine:
    jobs = jobs or os.cpu_count() or 1
    if kind == "ray" or (kind == "auto" and (address or ray_available())):
        if not ray_available():
            raise ImportError("ray is not installed: pip install 'hexplore[tune]'")
        return RayEngine.start(jobs, address)
    if address:
        raise ValueError("--address needs ray")
    if kind == "local" or jobs == 1:
        return LocalEngine("this process" + ("" if kind != "auto" else " (ray is not installed)"))
    note = " (ray is not installed)" if kind == "auto" else ""
    pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"))
    return PoolEngine(f"a local pool of {jobs} processes{note}", pool, jobs)


@dataclass
class LocalEngine:
    name: str = "this process"
    slots: int = 1

    def map(self, task: Task, configs: Sequence[Config], deadline: float) -> list[Trial]:
        return [measure(task, c) if time.monotonic() < deadline else Trial(c, math.inf, False, LATE) for c in configs]

    def close(self) -> None:
        pass


@dataclass
class PoolEngine:
    name: str
    pool: ProcessPoolExecutor
    slots: int
    late: bool = False  # a candidate ran past a deadline: its process must be killed at close

    def map(self, task: Task, configs: Sequence[Config], deadline: float) -> list[Trial]:
        futures: list[Future[Trial]] = [self.pool.submit(measure, task, c) for c in configs]
        wait(futures, timeout=max(deadline - time.monotonic(), 0.0))
        out = []
        for c, f in zip(configs, futures, strict=True):
            if f.done() and not f.cancelled() and f.exception() is None:
                out.append(f.result())
            elif f.done() and not f.cancelled():  # the process died (a crash in generated code)
                out.append(Trial(c, math.inf, False, f"the worker failed: {type(f.exception()).__name__}"))
            else:
                self.late = self.late or not f.cancel()
                out.append(Trial(c, math.inf, False, LATE))
        return out

    def close(self) -> None:
        processes = list(getattr(self.pool, "_processes", {}).values()) if self.late else []
        self.pool.shutdown(wait=not self.late, cancel_futures=True)
        for p in processes:  # a candidate still running past the budget
            with contextlib.suppress(Exception):
                p.kill()


@dataclass
class RayEngine:
    name: str
    slots: int
    ray: Any = field(repr=False)
    remote: Any = field(repr=False)
    owned: bool  # this process started the Ray instance: shut it down at close

    @staticmethod
    def start(jobs: int, address: str | None) -> RayEngine:
        import ray

        owned = not ray.is_initialized()
        if owned:
            options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
            if address:
                try:
                    ray.init(address=address, **options)
                except Exception as e:  # Ray's own errors: a timeout, a refused or unauthenticated connection
                    raise ConnectionError(f"cannot reach the Ray cluster at {address}: {e} (a cluster with token "
                                          "authentication needs RAY_AUTH_MODE=token and its token, Ray's ~/.ray/auth_token)") from e  # fmt: skip
            else:  # a new instance in this process: not a cluster `ray start` left running (or its stale address file)
                ray.init(address="local", num_cpus=jobs, **options)
        cpus = int(ray.cluster_resources().get("CPU", jobs))
        where = f"ray cluster at {address}" if address else "ray (local instance)"
        return RayEngine(f"{where}, {cpus} CPUs", cpus, ray, ray.remote(num_cpus=1, max_retries=0)(measure), owned)

    def map(self, task: Task, configs: Sequence[Config], deadline: float) -> list[Trial]:
        ray = self.ray
        shared = ray.put(task)
        refs = [self.remote.remote(shared, c) for c in configs]
        done, pending = ray.wait(refs, num_returns=len(refs), timeout=max(deadline - time.monotonic(), 0.0))
        for ref in pending:
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=True)
        finished = set(done)
        out = []
        for c, ref in zip(configs, refs, strict=True):
            try:
                out.append(ray.get(ref) if ref in finished else Trial(c, math.inf, False, LATE))
            except Exception as e:  # the worker died (a crash in generated code)
                out.append(Trial(c, math.inf, False, f"the worker failed: {type(e).__name__}"))
        return out

    def close(self) -> None:
        if self.owned:
            self.ray.shutdown()
