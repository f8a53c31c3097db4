"""Settings from editors' JSON: every bad value is named and ignored, the rest applies."""

from __future__ import annotations

from core_compiler.analysis import AnalysisOptions
from explorer.settings import Settings


def test_all_keys_nested_or_not() -> None:
    data = {"includePaths": ["inc"], "defines": ["N=4"], "target": "opencl", "tileSizes": [32, 8], "maxIslOperations": 10}
    for payload in (data, {"hexplore": data}):
        settings, problems = Settings.from_json(payload)
        assert problems == []
        assert settings == Settings(("inc",), ("N=4",), "opencl", (32, 8), AnalysisOptions(10))


def test_bad_values_are_reported_by_key_and_ignored() -> None:
    base = Settings(defines=("KEEP",))
    settings, problems = Settings.from_json(
        {"defines": "N=4", "target": "fortran", "tileSizes": [True], "includePaths": ["ok"], "other": 1}, base
    )
    assert settings == Settings(include_paths=("ok",), defines=("KEEP",))
    assert problems == [
        "defines: expected a list of non-empty strings, got 'N=4'",
        "target: expected one of cuda, opencl, c, got 'fortran'",
        "tileSizes: expected a list of positive integers, got [True]",
    ]


def test_no_settings() -> None:
    assert Settings.from_json(None) == (Settings(), [])
    assert Settings.from_json([1]) == (Settings(), ["settings: expected an object, got [1]"])
