"""A search that answers in time, and the tuning cache (issue 30).

- The race of CPU variants stops at its time budget and still answers with a variant checked
  against the original, saying how many it tried of how many (`RaceStopped`).
- Where full-size calls are too slow for the budget, a stencil's time steps shrink for a first
  ranking (`proxy.proxy_sizes`); only variants timed at full size, and checked, can win.
- Where the original is slow, each call runs in a forked child stopped at a cap (`capped.py`): a
  variant that hangs is dropped, not waited for; where none finishes in the budget, the source
  order runs with what is left of the limit; where nothing finishes, `NoVariantInTime`.
- The race's winner is written to the tuning cache and read back by the next run, which then
  runs it without a race (`TunedVariant`); a changed source, other sizes or other threads miss.

The runs are `run._measure`, what `run_function`'s worker calls, in this process: the variants
are built once for the module (`compile_variant`'s cache), not once per worker.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

import pytest

from core_compiler.runtime import cpu_variants, tuning
from core_compiler.runtime.budget import TimeLimit
from core_compiler.runtime.capped import NoVariantInTime, capped_call
from core_compiler.runtime.cpu_variants import (
    RACE_ORDER,
    case_variants,
    check_llvm_cpu,
    prepare,
    proxy_of,
    race_variants,
)
from core_compiler.runtime.proxy import proxy_sizes
from core_compiler.runtime.run import _measure
from core_compiler.runtime.worker import run_in_worker

SCALE = """void scale(int n, double A[n][n], double B[n][n]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      B[i][j] = 2.0 * A[i][j] + B[i][j];
}
"""
JACOBI = """void jacobi(int tsteps, int n, double A[n], double B[n]) {
  for (int t = 0; t < tsteps; t++) {
    for (int i = 1; i < n - 1; i++)
      B[i] = 0.33333 * (A[i - 1] + A[i] + A[i + 1]);
    for (int i = 1; i < n - 1; i++)
      A[i] = 0.33333 * (B[i - 1] + B[i] + B[i + 1]);
  }
}
"""


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The tuning cache on, in a directory of this test."""
    root = tmp_path / "cache"
    monkeypatch.setenv("HEXPLORE_CACHE_DIR", str(root))
    monkeypatch.setenv(tuning.ENVIRONMENT, "on")
    return root / "tuning"


def _tiny() -> TimeLimit:
    """A limit whose race budget (a third) is a millisecond: no time for a second variant."""
    return TimeLimit(0.003, time.time() + 60)


def test_the_race_budget_is_a_third_of_the_limit_and_leaves_room_after_it() -> None:
    now = time.time()
    assert TimeLimit(120, now + 120).race_budget() == pytest.approx(40, abs=0.1)
    assert TimeLimit(600, now + 600).race_budget() == 60  # at most a minute
    assert TimeLimit(120, now + 50).race_budget() == pytest.approx(25, abs=0.1)  # half of what is left
    assert TimeLimit(120, now + 85).race_budget(40.0) == pytest.approx(25, abs=0.1)  # and room for the source order
    assert TimeLimit(120, now - 1).race_budget() == 0
    assert TimeLimit(120, now + 120).answer_by() == pytest.approx(now + 115)


def test_the_race_stops_at_its_budget_and_answers_with_a_checked_variant(tmp_path: Path) -> None:
    path = _write(tmp_path, "scale.c", SCALE)
    result = check_llvm_cpu(path, "scale", {"n": 200}, limit=_tiny())
    search = result.choice.search
    assert search is not None and search.stopped and search.budget_s == pytest.approx(0.001)
    assert search.tried == (RACE_ORDER[0],) and search.candidates > 1  # the default, and only it
    assert result.choice.chosen == "tiled" and set(result.variants) == {"tiled"}
    assert result.ok and result.optimized.ok  # checked against the C compiler's build
    assert search.message().startswith(f"tried 1 of {search.candidates} schedule variants in ")
    (stopped,) = [r for r in result.choice.remarks if r.name == "RaceStopped"]
    assert stopped.message == search.message() and "; stopped at the time budget (1 ms)" in stopped.message


def test_a_run_says_how_many_variants_it_tried(tmp_path: Path) -> None:
    path = _write(tmp_path, "scale.c", SCALE)
    report = _measure(path, "scale", "cpu", {"n": 200}, limit=_tiny())
    assert report.status == "ok" and report.match and report.variant == "tiled"
    assert (report.variants_tried, report.tuned) == (1, False) and report.variants_total > 1
    assert f"tried 1 of {report.variants_total} schedule variants" in report.note
    assert report.search in report.note
    unlimited = _measure(path, "scale", "cpu", {"n": 200})
    assert unlimited.variants_tried == unlimited.variants_total == report.variants_total
    assert "tried" not in unlimited.note and unlimited.search.startswith(f"tried all {report.variants_total}")


def test_time_steps_shrink_for_a_first_ranking(tmp_path: Path) -> None:
    """The original's 10 s (as the race is told) times 8 variants do not fit 20 s: every variant
    runs at fewer time steps first, the fastest there again at full size, checked."""
    path = _write(tmp_path, "jacobi.c", JACOBI)
    params = {"tsteps": 400, "n": 3000}
    case = prepare(path, "jacobi", params)
    assert proxy_sizes(case.analysis.scop, case.ints, 0.1) == {"tsteps": 40, "n": 3000}
    checked: list[Any] = []

    def check(arrays: Any) -> Any:
        checked.append(arrays)
        return arrays

    _, choice, results = race_variants(case, False, 20.0, check, lambda _: True, proxy_of(case, params), hint_s=10.0)
    search = choice.search
    assert search is not None and not search.stopped and len(search.tried) == len(case_variants(case))
    (name, steps), = search.proxy
    assert name == "tsteps" and steps < 400
    assert choice.chosen in results and choice.chosen not in search.proxied  # only full-size runs win
    assert len(checked) == len(results) == len(search.tried) - len(search.proxied)
    assert not search.proxied or f"{len(search.proxied)} of them only at smaller sizes (tsteps={steps})" in search.message()


def test_a_nest_without_time_steps_gets_no_proxy(tmp_path: Path) -> None:
    case = prepare(_write(tmp_path, "scale.c", SCALE), "scale", {"n": 500})
    assert proxy_sizes(case.analysis.scop, case.ints, 0.1) == {}


def test_the_winner_is_cached_and_the_next_run_skips_the_race(tmp_path: Path, cache: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    path = _write(tmp_path, "scale.c", SCALE)
    first = _measure(path, "scale", "cpu", {"n": 150})
    assert first.status == "ok" and not first.tuned and first.variants_tried == first.variants_total > 1
    (record,) = cache.glob("*.json")
    stored = json.loads(record.read_text())
    assert stored["variant"] == first.variant.removesuffix(", one thread") and stored["tried"] == first.variants_tried

    def no_race(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the cached variant should run without a race")

    monkeypatch.setattr(cpu_variants, "race_variants", no_race)
    second = _measure(path, "scale", "cpu", {"n": 150})
    assert second.status == "ok" and second.match and second.tuned and second.variant == first.variant
    assert second.variants_tried == 0 and second.note.startswith(f"tuned: {first.variant}, ")
    assert ", cached: the fastest of all " in second.note and second.search in second.note


def test_other_sources_sizes_or_threads_miss_the_cache(tmp_path: Path, cache: Path) -> None:
    path = _write(tmp_path, "scale.c", SCALE)
    key = tuning.tuning_key(path, "scale", {"n": 150}, None, threads=2)
    tuning.store(key, tuning.Tuned("untiled", False, 0.5, 1.0, 9, 9))
    assert tuning.load(key) == tuning.Tuned("untiled", False, 0.5, 1.0, 9, 9)
    assert tuning.load(tuning.tuning_key(path, "scale", {"n": 151}, None, threads=2)) is None
    assert tuning.load(tuning.tuning_key(path, "scale", {"n": 150}, None, threads=1)) is None
    Path(path).write_text(SCALE.replace("2.0 *", "3.0 *"))
    assert tuning.load(tuning.tuning_key(path, "scale", {"n": 150}, None, threads=2)) is None
    Path(path).write_text(SCALE)
    assert tuning.load(tuning.tuning_key(path, "scale", {"n": 150}, None, threads=2)) is not None


def test_a_record_that_is_not_one_is_a_miss(tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key = tuning.tuning_key(_write(tmp_path, "scale.c", SCALE), "scale", {"n": 150}, None, threads=2)
    tuning.store(key, tuning.Tuned("untiled", False, 0.5, 1.0, 9, 9))
    (record,) = cache.glob("*.json")
    for text in ("{", "[]", json.dumps({"format": tuning.FORMAT, "variant": 3}), json.dumps({"format": "x/0"})):
        record.write_text(text)
        assert tuning.load(key) is None
    tuning.store(key, tuning.Tuned("untiled", False, 0.5, 1.0, 9, 9))
    monkeypatch.setenv(tuning.ENVIRONMENT, "off")
    assert tuning.load(key) is None


def test_a_cached_variant_the_nest_does_not_have_falls_back_to_the_race(tmp_path: Path) -> None:
    path = _write(tmp_path, "scale.c", SCALE)
    forged = tuning.Tuned("distributed+jam", False, 0.001, 1.0, 9, 9)  # one nest: no distributed variant
    result = check_llvm_cpu(path, "scale", {"n": 100}, tuned=forged)
    assert result.choice.search is not None and result.choice.tuned is None and result.ok
    assert result.choice.runs in result.variants and len(result.variants) > 1


def _sleep_then(seconds: float, value: Any) -> tuple[float, Any]:
    time.sleep(seconds)
    return seconds, value


def _raise() -> tuple[float, Any]:
    raise LookupError("no such array")


def test_a_capped_call_is_stopped_at_its_cap() -> None:
    assert capped_call(lambda: _sleep_then(0.0, {"A": 1}), 10.0) == (0.0, {"A": 1})
    start = time.perf_counter()
    assert capped_call(lambda: _sleep_then(30.0, None), 0.5) == (math.inf, None)
    assert time.perf_counter() - start < 5
    with pytest.raises(LookupError, match="no such array"):
        capped_call(_raise, 10.0)


def hanging_race(path: str, hang: tuple[str, ...], budget_s: float, deadline_s: float) -> tuple[Any, ...]:
    """In a fresh worker (no OpenMP threads started: the race forks): `race_variants` with the
    original said to take 1 s, the variants whose code is named with a suffix in `hang` sleeping
    for a minute before their call (the child inherits the patched `run_jit`)."""
    case = prepare(path, "jacobi", {"tsteps": 10, "n": 1000})
    real = cpu_variants.run_jit

    def hanging(jit: Any, case: Any) -> Any:
        if jit.module.name.endswith(hang):
            time.sleep(60)
        return real(jit, case)

    cpu_variants.run_jit = hanging  # type: ignore[assignment]
    start = time.perf_counter()
    try:
        _, choice, results = race_variants(case, False, budget_s, lambda a: True, lambda r: r, hint_s=1.0,
                                           deadline=time.time() + deadline_s)  # fmt: skip
    except NoVariantInTime as e:
        return ("none", str(e), time.perf_counter() - start)
    assert choice.search is not None
    return (choice.chosen, choice.search.dropped, time.perf_counter() - start, results)


@pytest.fixture(scope="module")
def jacobi(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("hang") / "jacobi.c"
    path.write_text(JACOBI)
    return str(path)


def test_a_variant_that_hangs_is_dropped_not_waited_for(jacobi: str) -> None:
    chosen, dropped, seconds, results = run_in_worker(hanging_race, (jacobi, ("_jam4",), 30.0, 60.0), timeout_s=90).unwrap()
    assert "untiled+jam2" in dropped and set(dropped) <= {"untiled+jam", "untiled+jam2", "tiled+jam", "tiled+jam2"}
    assert chosen not in dropped and results[chosen] is True  # checked, in the child
    assert seconds < 25  # each stopped after a second, not a minute


def test_where_none_finishes_in_the_budget_the_source_order_answers(jacobi: str) -> None:
    everything = ("_hexplore", "_untiled", "_jam4", "_tilable", "_distributed")
    chosen, dropped, seconds, _ = run_in_worker(hanging_race, (jacobi, everything, 2.0, 60.0), timeout_s=90).unwrap()
    assert chosen == "source order" and dropped and "source order" not in dropped and seconds < 20
    what, message, seconds = run_in_worker(hanging_race, (jacobi, (*everything, "_original"), 2.0, 6.0), timeout_s=90).unwrap()
    assert what == "none" and message.startswith("no schedule variant finished within the time limit (") and seconds < 20
