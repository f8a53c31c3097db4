"""What the user configures: include paths, macros, the code generation target and tile sizes.

Editors send these as JSON (camelCase keys, see ``lsp/PROTOCOL.md``); `Settings.from_json` checks
every value and says what it ignored, naming the key, instead of failing the whole configuration.

Example::

    settings, problems = Settings.from_json({"includePaths": ["inc"], "tileSizes": [32, 0]})
    # problems == ["tileSizes: expected a list of positive integers, got [32, 0]"]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from core_compiler.analysis import AnalysisOptions

TARGETS = ("cuda", "opencl", "c")
SETTING_KEYS = ("includePaths", "defines", "target", "tileSizes", "maxIslOperations")


@dataclass(frozen=True)
class Settings:
    include_paths: tuple[str, ...] = ()
    defines: tuple[str, ...] = ()
    target: str = "cuda"
    tile_sizes: tuple[int, ...] = ()  # empty: the scheduler's default
    analysis: AnalysisOptions = field(default_factory=AnalysisOptions)

    @staticmethod
    def from_json(data: object, base: Settings | None = None) -> tuple[Settings, list[str]]:
        """Settings from an editor's JSON object; keys that are absent keep `base`'s values."""
        out = base or Settings()
        problems: list[str] = []
        if data is None:
            return out, problems
        if not isinstance(data, Mapping):
            return out, [f"settings: expected an object, got {data!r}"]
        values: Mapping[str, object] = data
        nested = values.get("hexplore")
        if isinstance(nested, Mapping):  # {"hexplore": {...}}, as VS Code nests it
            values = nested
        for key, value in values.items():
            parsed = _parse(key, value)
            if isinstance(parsed, str):
                problems.append(parsed)
            elif parsed is not None:
                out = replace(out, **parsed)
        return out, problems


def _parse(key: str, value: Any) -> dict[str, Any] | str | None:
    if key in ("includePaths", "defines"):
        if not (isinstance(value, list) and all(isinstance(v, str) and v for v in value)):
            return f"{key}: expected a list of non-empty strings, got {value!r}"
        field = "include_paths" if key == "includePaths" else "defines"
        return {field: tuple(value)}
    if key == "target":
        if value not in TARGETS:
            return f"target: expected one of {', '.join(TARGETS)}, got {value!r}"
        return {"target": value}
    if key == "tileSizes":
        ok = isinstance(value, list) and all(
            isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value
        )
        if not ok:
            return f"tileSizes: expected a list of positive integers, got {value!r}"
        return {"tile_sizes": tuple(value)}
    if key == "maxIslOperations":
        if not (isinstance(value, int) and not isinstance(value, bool) and value > 0):
            return f"maxIslOperations: expected a positive integer, got {value!r}"
        return {"analysis": AnalysisOptions(max_isl_operations=value)}
    return None  # unknown keys belong to other tools (or newer versions): ignore them
