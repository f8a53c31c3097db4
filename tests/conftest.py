"""Shared fixtures: the kernel suite, golden files (update with `pytest --update-golden`)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
KERNELS = ROOT / "tests" / "kernels"
GOLDEN = ROOT / "tests" / "golden"
# A run's variant is its race's, not what an earlier session's run left in the user's tuning cache
# (`core_compiler/runtime/tuning.py`; tests/runtime/test_tuning.py turns it on in a directory of its own).
os.environ["HEXPLORE_TUNING"] = "off"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", help="rewrite golden files")
    parser.addoption("--long", action="store_true", help="also the long tier (`make test-long`)")


# The slow tier, by path: modules that run generated code against the reference (C compilers, PoCL,
# LLVM JIT, libgomp), start the language server or the terminal UI, or search random programs.
# `make test-fast` leaves them out (`-m "not slow"`), `make test` runs everything. A module whose
# tests take more than about a second of CPU each belongs here (measure with `--durations=20`);
# a single slow test elsewhere gets `@pytest.mark.slow`.
SLOW_PATHS = (
    "tests/test_differential_c.py",
    "tests/test_differential_opencl.py",
    "tests/test_polybench.py",
    "tests/test_property_random_nests.py",
    "tests/test_cuda_codegen.py",
    "tests/test_cuda_translated.py",
    "tests/test_affine_terms.py",
    "tests/test_guarded_reads.py",
    "tests/test_name_hygiene.py",
    "tests/test_min_max.py",
    "tests/test_local_arrays.py",
    "tests/test_data_dependent_ifs.py",
    "tests/test_globals.py",
    "tests/test_unseen_c.py",
    "tests/test_coverage_corpus.py",
    "tests/test_barriers_uniform.py",
    "tests/test_modulo_guards.py",
    "tests/test_hostile_input.py",
    "tests/test_csmith.py",
    "tests/fuzz/",
    "tests/ad/test_gradient_checks.py",
    "tests/llvm/test_cpu_differential.py",
    "tests/llvm/test_cpu_variants.py",
    "tests/llvm/test_openmp.py",
    "tests/gpu/test_golden_kernels.py",
    "tests/explorer/test_robustness.py",
    "tests/explorer/test_one_run.py",
    "tests/runtime/",
    "tests/tune/test_ray_sweep.py",
    "tests/lsp/",
    "tests/tui/",
)


def pytest_configure(config: pytest.Config) -> None:
    """`HEXPLORE_LONG=1` for modules that size themselves by tier at import (xdist's workers
    configure too, so they see it)."""
    if config.getoption("--long"):
        os.environ["HEXPLORE_LONG"] = "1"


# Differential suites over every kernel: `make test` runs one case in N of each (the same ones every
# time, spread over the list), `make test-long` all of them. With all, `make test` took 20.6 min
# on 2 cores (35 min of CPU; these five alone about 15); CI should stay well under 15.
# A second cut (issue 25: `make test` took 17 min 14 s of pytest on 2 cores with the first) samples
# the per-kernel compile checks too: nvcc, the barrier check, PTX assembly. A third (issue 25: 32 min
# of CPU under load with the CUDA-input, tuning and editor tests added) samples more thinly where
# another test runs the same back end on the same kernels. A fourth (issue 25: `make test` 1091 s on a
# clean clone, pytest 16:41) samples the LLVM-CPU, OpenCL, PolyBench CPU, OpenCL-gradient, nvcc and
# ptxas checks more thinly again.
SAMPLED = {
    "tests/llvm/test_cpu_differential.py::test_llvm_cpu_matches_gcc": 9,
    "tests/test_differential_opencl.py::test_opencl_matches_original": 12,
    "tests/test_differential_c.py::test_c_matches_original": 3,
    "tests/test_differential_c.py::test_openmp_c_matches_original": 3,
    "tests/ad/test_gradient_checks.py::test_gradients_on_opencl": 10,
    "tests/ad/test_reverse_regressions.py::test_gradients_on_opencl": 10,
    "tests/test_polybench.py::test_kernels_run_and_match_on_the_cpu": 6,
    "tests/test_cuda_cpu.py::test_suite_kernel_cuda_matches_on_the_cpu": 8,
    "tests/test_cuda_codegen.py::test_generated_cuda_compiles_with_nvcc": 9,
    "tests/test_barriers_uniform.py::test_no_barrier_depends_on_a_thread_id": 3,
    "tests/llvm/test_nvptx.py::test_ptx_assembles": 5,
    "tests/test_affine_terms.py::test_llvm_cpu_matches": 3,
    "tests/test_name_hygiene.py::test_clashing_names_run_and_match": 3,
    "tests/test_data_dependent_ifs.py::test_data_dependent_ifs_run_and_match": 3,
    "tests/test_unseen_c.py::test_induction_variables_run_and_match": 3,
    "tests/test_affine_terms.py::test_cuda_compiles": 2,
    "tests/test_polybench.py::test_a_sample_runs_and_matches_on_opencl": 2,
    "tests/test_globals.py::test_functions_that_use_globals_run_and_match": 2,
    "tests/test_coverage_corpus.py::test_what_became_modeled_runs_and_matches": 2,
    "tests/test_cuda_on_cpu.py::test_translation_matches_the_cuda_shim": 3,
    "tests/test_cuda_on_cpu.py::test_several_devices_give_the_arrays_of_one": 2,
    "tests/test_cuda_input.py::test_hexplores_own_cuda_has_no_race_or_divergent_barrier": 2,
    "tests/test_min_max.py::test_min_and_max_code_matches_the_original": 2,
}


# The modules that take longest (`--durations`, 2026-11), first: xdist hands out whole modules
# (`--dist loadfile --no-loadscope-reorder`, the Makefile) in the order collected, so the last
# ones to start are short and the two workers finish together; and a module's fixtures (a
# language server, the remark registry's compiles of every corpus) are made once, not per worker.
FIRST = (
    "tests/test_golden_backend.py",
    "tests/test_cuda_cpu.py",
    "tests/tui/test_app.py",
    "tests/llvm/test_cpu_differential.py",
    "tests/test_name_hygiene.py",
    "tests/test_remark_registry.py",
    "tests/test_private_scalars.py",
    "tests/runtime/test_run_cli.py",
    "tests/test_differential_opencl.py",
    "tests/llvm/test_cpu_variants.py",
    "tests/tui/test_snapshots.py",
    "tests/test_property_random_nests.py",
    "tests/test_cuda_host_calls.py",
    "tests/gpu/test_golden_kernels.py",
    "tests/test_register_tiles.py",
    "tests/test_affine_terms.py",
    "tests/test_gpu_structure.py",
    "tests/llvm/test_nvptx.py",
    "tests/test_cuda_codegen.py",
    "tests/ad/test_reverse_regressions.py",
    "tests/ad/test_gradient_checks.py",
    "tests/test_differential_c.py",
    "tests/test_unseen_c.py",
    "tests/test_polybench.py",
    "tests/test_pointer_aliases.py",
    "tests/test_source_map.py",
    "tests/runtime/test_launch_geometry.py",
    "tests/lsp/test_lsp_e2e.py",
)


def _longest_first(items: list[pytest.Item]) -> None:
    rank = {path: k for k, path in enumerate(FIRST)}
    items.sort(key=lambda item: rank.get(item.path.relative_to(ROOT).as_posix(), len(FIRST)))  # stable


def _sample(items: list[pytest.Item]) -> None:
    seen: dict[str, int] = {}
    for item in items:
        key = item.nodeid.split("[")[0]
        every = SAMPLED.get(key)
        if every is None:
            continue
        seen[key] = seen.get(key, 0) + 1
        if (seen[key] - 1) % every:
            item.add_marker(pytest.mark.long)


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests under SLOW_PATHS are marked `slow`; tests marked `long` run only with `--long`;
    the longest modules first (`FIRST`). Tests marked `gpu` are skipped, with the reason,
    where pycuda or an NVIDIA GPU is missing."""
    long = config.getoption("--long")
    _sample(items)
    _longest_first(items)
    for item in items:
        if item.path.relative_to(ROOT).as_posix().startswith(SLOW_PATHS):
            item.add_marker(pytest.mark.slow)
        if item.get_closest_marker("long") and not long:  # bug hunting, not every `make test`
            item.add_marker(pytest.mark.skip(reason="long tier: run with `make test-long` (pytest --long)"))
    gpu = [item for item in items if item.get_closest_marker("gpu")]
    if not gpu:
        return
    from core_compiler.runtime.run import cuda_unavailable

    why = cuda_unavailable()
    for item in gpu if why else ():
        item.add_marker(pytest.mark.skip(reason=f"needs an NVIDIA GPU and pycuda: {why}"))


@pytest.fixture
def golden(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    """`golden("models/gemm.txt", text)` compares with (or, with --update-golden, rewrites) a file."""
    update = request.config.getoption("--update-golden")

    def check(name: str, actual: str) -> None:
        path = GOLDEN / name
        if update or not path.exists():
            if not update:
                pytest.fail(f"golden file {path} is missing; run pytest --update-golden")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(actual)
            return
        expected = path.read_text()
        assert actual == expected, f"{name} differs from its golden file (pytest --update-golden)"

    return check


def suite() -> list[dict[str, object]]:
    return json.loads((KERNELS / "suite.json").read_text())
