"""Without ray, `hexplore tune` runs on a process pool and says so; the records it writes read
back as written, and a record that is not one is a miss."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core_compiler.runtime import tuning
from core_compiler.tune import engine as engines


def test_without_ray_the_engine_is_a_process_pool_that_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engines, "ray_available", lambda: False)
    pool = engines.make_engine("auto", jobs=2)
    try:
        assert isinstance(pool, engines.PoolEngine) and pool.name == "a local pool of 2 processes (ray is not installed)"
    finally:
        pool.close()
    with pytest.raises(ImportError, match=r"hexplore\[tune\]"):
        engines.make_engine("ray", jobs=2)
    local = engines.make_engine("auto", jobs=1)
    assert isinstance(local, engines.LocalEngine) and "ray is not installed" in local.name


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HEXPLORE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HEXPLORE_TUNING", "on")
    source = tmp_path / "k.c"
    source.write_text("void k(int n, double a[n]) { for (int i = 0; i < n; i++) a[i] = 0; }\n")
    return source


def test_records_read_back(cache: Path) -> None:
    config = tuning.TunedConfig("opencl", "{kernel[i]->tile[64,16];kernel[i]->block[16,16]}", True, False,
                                "tile 64x16, block 16x16, no registers", 0.01, 0.018, 12, 300, "pocl")  # fmt: skip
    sized = tuning.config_key(str(cache), "k", "opencl", {"n": 100}, None, "pocl")
    unsized = tuning.config_key(str(cache), "k", "opencl", None, None)
    assert sized != unsized
    tuning.store_config(sized, config)
    assert tuning.load_config(sized) == config and tuning.load_config(unsized) is None
    assert config.line().startswith("tuned: tile 64x16, block 16x16, no registers, 1.80x over default, on pocl")
    tuned = tuning.Tuned("tiled", False, 1.0, 2.0, 3, 40, 0.0, (64, 16))
    key = tuning.tuning_key(str(cache), "k", {"n": 100}, None, 2)
    tuning.store(key, tuned)
    assert tuning.load(key) == tuned


def test_a_record_that_is_not_one_is_a_miss(cache: Path) -> None:
    key = tuning.config_key(str(cache), "k", "c", None, None)
    tuning.store_config(key, tuning.TunedConfig("c", "64,16", False, False, "tiled", 1.0, 2.0, 1, 2, "cpu"))
    path = next((cache.parent / "cache").rglob(f"{key}.json"))
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "seconds": "fast"}))
    assert tuning.load_config(key) is None
    cache.write_text(cache.read_text() + "\n")  # the source changed: another key
    assert tuning.config_key(str(cache), "k", "c", None, None) != key


def test_the_runoff_times_the_default_and_the_fastest_again_in_turns() -> None:
    """Interference only slows a call: the default timed at a busy moment (1.5) gets another
    chance (1.0), so the gain is not inflated; each keeps its best time."""
    from core_compiler.tune.driver import _runoff
    from core_compiler.tune.search import SearchResult, Trial
    from core_compiler.tune.space import Choice, Config, Space

    space = Space("cpu", (Choice("variant", ("default", "lucky", "good")),))
    default, lucky, good = (space.default.with_(variant=v) for v in ("default", "lucky", "good"))
    again = {default: 1.0, lucky: 2.0, good: 0.8}

    class Engine:
        name = "fake"

        def __init__(self) -> None:
            self.calls: list[Config] = []

        def map(self, task: object, configs: list[Config], deadline: float) -> list[Trial]:
            self.calls += configs
            return [Trial(c, again[c], True) for c in configs]

        def close(self) -> None:
            pass

    trials = (Trial(default, 1.5, True), Trial(lucky, 0.5, True), Trial(good, 0.9, True))
    engine = Engine()
    result = _runoff(SearchResult("exhaustive", trials, 3, "exhausted", 1.0), engine, None)  # type: ignore[arg-type]
    assert engine.calls == [default, lucky, good] * 2  # in turns
    assert result.best.config == lucky and result.speedup() == 2.0  # not 3.0
    assert result.default.seconds == 1.0 and [t.seconds for t in result.trials] == [1.0, 0.5, 0.8]


def test_compile_cuda_reads_the_opencl_record_without_its_vector_width(cache: Path) -> None:
    """`compile --target cuda` maps with what an OpenCL tuning recorded (tile 16, block 8) and
    says so; the vector width stays OpenCL's."""
    from explorer.commands import CompileSettings, compile_source

    config = tuning.TunedConfig("opencl", "{kernel[i]->tile[16];kernel[i]->block[8]}", False, False,
                                "tile 16, block 8, vector width 2", 0.01, 0.02, 5, 50, "pocl", 2)  # fmt: skip
    tuning.store_config(tuning.config_key(str(cache), "k", "opencl", None, None), config)
    out = compile_source(str(cache), cache.read_text(), None, "k", CompileSettings(target="cuda", always_offload=True))
    said = [r.message for r in out.result.remarks if r.name == "TunedConfiguration"]
    assert said and "carry over to CUDA" in said[0] and "vector width 2 does not" in said[0], said
    code = "".join(out.result.files.values())
    assert "16 * b0" in code and "<<<" in code, code
