"""A small-budget sweep through a local Ray instance (`hexplore tune`'s engine, started in this
process), on the CPU and on OpenCL (PoCL), and its records read back: `compile --target c` and
`--target opencl` say "tuned: ..." and use the configuration, `run` runs it without a race.

Ray is the optional ``tune`` extra (``pip install 'hexplore[tune]'``), not in ``dev``: starting it
takes 10-15 s on a busy machine and the sweep ~40 s more, so a clean ``make test`` skips this."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core_compiler.frontend import ParseOptions
from core_compiler.runtime.run import run_function
from core_compiler.tune.driver import TuneOptions, tune
from core_compiler.tune.engine import Engine, make_engine, ray_available
from core_compiler.tune.measure import Task
from explorer.commands import CompileSettings, compile_source

pytestmark = pytest.mark.skipif(not ray_available(), reason="ray is not installed (pip install 'hexplore[tune]')")

ROOT = Path(__file__).resolve().parent.parent.parent
GEMM = str(ROOT / "tests" / "kernels" / "gemm.c")
N = 48
PARSE = ParseOptions((), (f"NI={N}", f"NJ={N}", f"NK={N}"))
SIZES = {"ni": N, "nj": N, "nk": N}
MATVEC = str(ROOT / "tests" / "kernels" / "matvec.c")  # maps in a second (gemm's register tiles take ~20 s)
MATVEC_SIZES = {"n": 256, "m": 256}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    """One local Ray instance for the module; its workers see this private cache (the env is
    read when Ray starts)."""
    patch = pytest.MonkeyPatch()
    patch.setenv("HEXPLORE_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    patch.setenv("HEXPLORE_TUNING", "on")
    ray_engine = make_engine("ray", jobs=2)
    try:
        yield ray_engine
    finally:
        ray_engine.close()
        patch.undo()


def _compiled(target: str, path: str = GEMM, function: str = "kernel_gemm", parse: ParseOptions = PARSE) -> tuple[list[str], str]:
    out = compile_source(path, Path(path).read_text(), parse, function, CompileSettings(target=target))
    return [r.message for r in out.result.remarks if r.name == "TunedConfiguration"], "".join(out.result.files.values())


def test_a_cpu_sweep_on_ray_is_read_back_by_compile_and_run(engine: Engine) -> None:
    task = Task.of(GEMM, "kernel_gemm", "cpu", SIZES, PARSE)
    result = tune(task, TuneOptions(budget_s=12, seed=1, population=4), engine=engine)
    assert engine.name.startswith("ray")
    assert result.search.default.counts, result.search.default
    assert all(t.ok or t.message for t in result.search.trials)
    assert len(result.search.trials) >= 2
    tuned, _ = _compiled("c")
    assert tuned and tuned[0].startswith("tuned: "), tuned
    report = run_function(GEMM, "kernel_gemm", "cpu", SIZES, parse=PARSE)
    assert report.match and report.tuned and report.variant == str(result.best.config["variant"]) + (
        ", one thread" if "one thread" in report.variant else "")


def test_an_opencl_sweep_on_ray_is_read_back_by_compile_and_run(engine: Engine) -> None:
    task = Task.of(MATVEC, "kernel_matvec", "opencl", MATVEC_SIZES)
    result = tune(task, TuneOptions(budget_s=20, seed=1, population=4), engine=engine)
    assert result.search.default.counts, result.search.default
    assert len(result.search.trials) >= 2
    tuned, code = _compiled("opencl", MATVEC, "kernel_matvec", ParseOptions())
    assert tuned and result.label(result.best.config) in tuned[0], tuned
    assert "__kernel" in code
    report = run_function(MATVEC, "kernel_matvec", "opencl", MATVEC_SIZES)
    assert report.match and report.tuned and report.note.startswith("tuned: ")
