"""One code-generation configuration, as the terminal UI's option editor edits it, and what it
generates: the target, tile and block sizes, shared memory on or off, and always-offload.

`CodeOptions.parse` checks what a person typed (sizes as ``32`` or ``32,16``) and says what is
wrong naming the field; `gpu_options` and `c_options` are the pipeline's options for it (as
`hexplore compile --tile-size/--sizes/--no-shared-memory` builds them); `compile_function` is
`hexplore compile --target T` of one function under it; `code_diff` compares two configurations'
code. Example::

    a, _ = CodeOptions.parse(target="cuda", tiles="32", blocks="", shared=True, always=False)
    b, problems = CodeOptions.parse(target="cuda", tiles="16,16", blocks="16,8", shared=False, always=False)
    # problems == []; b.describe() == "cuda, tiles 16x16, blocks 16x8, no shared memory"
    print(code_diff(compiled_a.text, compiled_b.text, a.describe(), b.describe()))
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from core_compiler.analysis import FileAnalysis, FunctionAnalysis
from core_compiler.codegen.c import COptions
from core_compiler.compile import compile_file
from core_compiler.pipeline import GpuOptions
from core_compiler.remarks import Remark
from core_compiler.source_map import SourceMap, join_mapped
from core_compiler.transform.cpu_schedule import CpuOptions
from core_compiler.transform.gpu_mapping import MappingOptions
from core_compiler.transform.memory import MemoryOptions
from core_compiler.transform.sizes import MAX_DIMS

# What the option editor offers, and the `hexplore compile --target` each one is: "cpu" is the
# tiled C (+OpenMP) of `--target c`.
TARGETS = ("cuda", "opencl", "cpu")
COMPILE_TARGET = {"cuda": "cuda", "opencl": "opencl", "cpu": "c"}
DEFAULT_TILE = MappingOptions.tile_size


@dataclass(frozen=True)
class CodeOptions:
    target: str = "cuda"  # one of TARGETS
    tiles: tuple[int, ...] = ()  # empty: 32 for every tiled loop; one size: every loop; else outermost first
    blocks: tuple[int, ...] = ()  # threads per block, outermost first; empty: the mapping's choice
    shared_memory: bool = True
    always_offload: bool = False  # GPU code even where the profitability model keeps the nest on the CPU

    @staticmethod
    def parse(target: str, tiles: str, blocks: str, shared: bool, always: bool) -> tuple[CodeOptions, list[str]]:
        """The options from the editor's fields; a field that does not parse keeps its default and
        is named in the problems."""
        problems: list[str] = []
        if target not in TARGETS:
            problems.append(f"target: expected one of {', '.join(TARGETS)}, got {target!r}")
            target = "cuda"
        tile_sizes = _sizes("tile sizes", tiles, problems)
        block_sizes = _sizes("block sizes", blocks, problems, MAX_DIMS["block"])
        return CodeOptions(target, tile_sizes, block_sizes, shared, always), problems

    def gpu_options(self) -> GpuOptions:
        tile = self.tiles[0] if self.tiles else DEFAULT_TILE
        sizes: dict[str, tuple[int, ...]] = {}
        if len(self.tiles) > 1:
            sizes["tile"] = self.tiles
        if self.blocks:
            sizes["block"] = self.blocks
        memory = MemoryOptions(shared=self.shared_memory)
        return GpuOptions(mapping=MappingOptions(tile_size=tile, sizes={None: sizes} if sizes else {}, memory=memory))

    def c_options(self) -> COptions:
        return COptions(CpuOptions(tile_size=self.tiles[0] if self.tiles else DEFAULT_TILE))

    def describe(self) -> str:
        """One line: `cuda, tiles 16x16, blocks 16x8, no shared memory, always offload`."""
        parts = [self.target]
        parts.append(f"tiles {'x'.join(map(str, self.tiles))}" if self.tiles else f"tiles {DEFAULT_TILE}")
        if self.target != "cpu":
            parts.append(f"blocks {'x'.join(map(str, self.blocks))}" if self.blocks else "blocks default")
            parts.append("shared memory" if self.shared_memory else "no shared memory")
            if self.always_offload:
                parts.append("always offload")
        return ", ".join(parts)


def _sizes(name: str, text: str, problems: list[str], most: int | None = None) -> tuple[int, ...]:
    words = [w for w in text.replace(",", " ").replace("x", " ").split()]
    if not all(w.isdigit() and int(w) > 0 for w in words):
        problems.append(f"{name}: expected positive integers like `32` or `16,16`, got {text.strip()!r}")
        return ()
    if most is not None and len(words) > most:
        problems.append(f"{name}: at most {most} numbers (a thread block has {most} dimensions), got {len(words)}")
        return ()
    return tuple(int(w) for w in words)


@dataclass(frozen=True)
class CompiledFunction:
    """`hexplore compile` of one function under one configuration: its files as one text (each
    headed by its name when there are several), which lines execute which statement, the
    decisions said as remarks, and why nothing was generated where nothing was."""

    options: CodeOptions
    text: str
    source_map: SourceMap = field(default_factory=SourceMap)
    remarks: tuple[Remark, ...] = ()
    nothing: str = ""


def compile_function(path: str, text: str, fa: FunctionAnalysis, options: CodeOptions) -> CompiledFunction:
    """`hexplore compile --target T` of `fa` alone (the other functions of `text` as they are)."""
    if not fa.scops:
        return CompiledFunction(options, "", nothing=f"`{fa.function.name}` has no loop nest hexplore models")
    result = compile_file(
        FileAnalysis(path, (fa,), ()),
        COMPILE_TARGET[options.target],
        options.gpu_options(),
        c_options=options.c_options(),
        text=text,
        always_offload=options.always_offload,
    )
    if not result.files:
        why = "every loop nest stays on the CPU (the profitability model; always-offload generates GPU code anyway)"
        if any(r.name == "KeptOnCpuByDirective" for r in result.remarks):
            why = "every loop nest stays on the CPU (a `#pragma hexplore cpu` line keeps a nest there whatever the options)"
        return CompiledFunction(options, "", remarks=result.remarks, nothing=why)
    parts = [(f"// ===== {name}\n{body}", result.source_maps.get(name, SourceMap()).shifted(1)) for name, body in result.files.items()]
    body, smap = join_mapped(parts, "\n") if len(parts) > 1 else (result.files[next(iter(result.files))], _only_map(result.source_maps))
    return CompiledFunction(options, body, smap, result.remarks)


def _only_map(maps: dict[str, SourceMap]) -> SourceMap:
    return next(iter(maps.values()), SourceMap())


def code_diff(a: str, b: str, a_name: str, b_name: str) -> str:
    """Unified diff of two configurations' code, `(no change)` when they are the same."""
    lines = difflib.unified_diff(a.splitlines(), b.splitlines(), f"A: {a_name}", f"B: {b_name}", lineterm="")
    return "\n".join(lines) or "(no change)"
