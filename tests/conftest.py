"""Shared fixtures: the kernel suite, golden files (update with `pytest --update-golden`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
KERNELS = ROOT / "tests" / "kernels"
GOLDEN = ROOT / "tests" / "golden"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", help="rewrite golden files")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked `gpu` are skipped, with the reason, where pycuda or an NVIDIA GPU is missing."""
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
