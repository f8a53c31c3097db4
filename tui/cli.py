"""The `hexplore` command: subcommands print reports; the bare form opens the terminal UI.

    hexplore analyze FILE [-I DIR]... [-D NAME[=VAL]]... [--function F] [--format text|json|yaml|sarif]
    hexplore FILE [-I DIR]... [-D NAME[=VAL]]... [--function F]
    hexplore tui FILE [...]  (both open the terminal UI; they print the text report when stdout is not a terminal)

Exit codes: 0 success, 1 the analysis or check found a failure (`compile`: the file has errors,
or nothing was generated, and why), 2 bad usage or unreadable input (one line on stderr).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import NoReturn

from explorer.api import (
    DEFAULT_MAX_SHARED_BYTES,
    DEFAULT_SIZE,
    DEVICES,
    REPORT_FORMATS,
    TARGETS,
    TUNE_TARGETS,
)

SUBCOMMANDS = ("analyze", "compile", "tui", "grad", "run", "tune")


class _Parser(argparse.ArgumentParser):
    """argparse's, but a usage error is one line (``hexplore compile: error: …``), exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _positive(text: str) -> int:
    return _integer(text, 1, "a positive integer")


def _non_negative(text: str) -> int:
    return _integer(text, 0, "an integer of 0 or more")


def _integer(text: str, least: int, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = least - 1
    if value < least:
        raise argparse.ArgumentTypeError(f"expected {what}, got '{text}'")
    return value


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="C (.c) or CUDA (.cu) source file")
    p.add_argument("-I", dest="include", action="append", default=[], metavar="DIR", help="add an include directory")
    p.add_argument("-D", dest="define", action="append", default=[], metavar="NAME[=VAL]", help="define a macro")
    p.add_argument("--function", metavar="NAME", help="only this function")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="hexplore", description="Explore how C loop nests map to GPUs.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    analyze = sub.add_parser("analyze", help="SCoPs, polyhedral model, dependences and remarks")
    _common(analyze)
    analyze.add_argument("--format", choices=REPORT_FORMATS, default="text")
    analyze.add_argument("--gpu", action="store_true", help="also the schedule tree, the GPU kernels, their mapping and memory placement, and what they cost against the CPU (text format)")
    analyze.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", help="with --gpu: a size the GPU cost report and the offload decision are evaluated at")
    analyze.add_argument("--ptxas", action="store_true", help="with --gpu: registers, spills and occupancy of each kernel from nvcc -Xptxas -v (slow)")
    comp = sub.add_parser("compile", help="schedule, map to the GPU and generate CUDA or OpenCL, or tiled C (--target c)")
    _common(comp)
    comp.add_argument("--target", choices=TARGETS, default="cuda")
    comp.add_argument("--tile-size", type=_positive, default=32, metavar="N", help="tile size of every tiled loop (default: %(default)s)")
    comp.add_argument("--sizes", metavar="S", help='per-kernel sizes, PPCG syntax: "{kernel[0]->tile[32,32];kernel[0]->block[32,8]}"')
    comp.add_argument("--always-offload", action="store_true", help="generate GPU code even where the profitability model keeps a loop nest on the CPU")
    comp.add_argument("--no-shared-memory", action="store_true", help="keep every array in global memory")
    comp.add_argument("--no-private-memory", action="store_true", help="do not promote arrays to registers")
    comp.add_argument("--max-shared-memory", type=_non_negative, default=DEFAULT_MAX_SHARED_BYTES, metavar="BYTES", help="shared memory per block (default: %(default)s)")
    comp.add_argument("--no-double-buffer", action="store_true", help="one shared-memory copy per array: copy each tile after the last one is used, not while")
    comp.add_argument("--openmp", action="store_true", help="with --target c: `#pragma omp parallel for` on parallel loops")
    comp.add_argument("-o", dest="out", metavar="DIR", help="write the files here (default: print them)")
    tui = sub.add_parser("tui", help="the terminal UI (the text report when stdout is not a terminal)")
    _common(tui)
    _grad_parser(sub)
    run = sub.add_parser(
        "run", help="run the original and the optimized code, compare and time them",
        description="Run the original function and hexplore's code on the same inputs, compare the results and "
        "time both. The original is built with `cc -O2` (no -march: GCC 12 vectorizes there only loops that need "
        "no run-time checks), the baseline the speedup is against.",
    )
    _common(run)
    run.add_argument("--device", choices=DEVICES, default="cpu")
    run.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", help=f"a size parameter (default {DEFAULT_SIZE} each, halved while the loops would run past an array of fixed size)")
    run.add_argument("--repeat", type=_positive, default=1, metavar="N", help="runs in one process, the fastest times reported; on a device, arrays the kernels only read stay there after the first run")
    run.add_argument("--check", action=argparse.BooleanOptionalAction, default=True, help="exit 1 when the results differ")
    run.add_argument("--json", action="store_true", help="one JSON object on stdout")
    run.add_argument("--timeout", default="120", metavar="S", help="time limit of one run (default %(default)s s)")
    run.add_argument("--memory-limit", default=None, metavar="SIZE", help="memory the run may use, e.g. 8G or 512M; 0: no limit (default: half the machine's memory, at least 4G; none on cuda)")
    _tune_parser(sub)
    return parser


def _tune_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    t = sub.add_parser("tune", help="search tile sizes, variants, block sizes and promotion for the fastest checked code; compile and run reuse it")
    _common(t)
    t.add_argument("--target", choices=TUNE_TARGETS, default="cpu", help="cpu: LLVM JIT + OpenMP; opencl: the OpenCL device (PoCL)")
    t.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", help=f"a size parameter (default {DEFAULT_SIZE} each, as run)")
    t.add_argument("--budget", type=float, default=60.0, metavar="S", help="seconds of search (default %(default)s; starting Ray is not counted)")
    t.add_argument("--address", metavar="ray://HOST:PORT", help="run the candidates on this Ray cluster (default: a local Ray instance on all cores, or a process pool without ray)")
    t.add_argument("--jobs", type=_non_negative, default=0, metavar="N", help="candidates at once (default: the cores)")
    t.add_argument("--engine", choices=("auto", "ray", "pool", "local"), default="auto", help="auto: ray if installed (pip install 'hexplore[tune]'), else a process pool")
    t.add_argument("--one-thread", action="store_true", help="cpu: tune for one core")
    t.add_argument("--seed", type=_non_negative, default=0, help="the evolutionary search's seed")


def _grad_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    g = sub.add_parser("grad", help="derivative code of a loop-nest function (forward or reverse mode)")
    _common(g)
    g.add_argument("--wrt", required=True, metavar="A,x", help="differentiate with respect to these parameters")
    g.add_argument("--of", metavar="OUT,...", help="outputs (default: every floating-point array the function writes)")
    g.add_argument("--mode", choices=("reverse", "forward"), default="reverse")
    g.add_argument("--target", choices=TARGETS, default="c", help="c: the derivative C itself; cuda/opencl: mapped to the GPU")
    g.add_argument("--check", action="store_true", help="finite-difference and dot-product tests (sizes from --param, else as run defaults them)")
    g.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", help=f"a size parameter for --check (default {DEFAULT_SIZE} each, halved while the loops would run past an array of fixed size)")


def main(argv: Sequence[str] | None = None) -> int:
    """The command line is checked first, with nothing of the compiler loaded (`hexplore --help`
    and a usage error answer at once); then `tui/subcommands.py` runs the subcommand."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] not in SUBCOMMANDS and not argv[0].startswith("-"):
        # `hexplore FILE ...` is `hexplore tui FILE ...`.
        argv = ["tui", *argv]
    args = _parser().parse_args(argv)
    from tui import subcommands

    return subcommands.HANDLERS[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
