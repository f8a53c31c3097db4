"""The `hexplore` command: subcommands print reports; the bare form opens the terminal UI.

    hexplore analyze FILE [-I DIR]... [-D NAME[=VAL]]... [--function F] [--format text|json|yaml|sarif]
    hexplore FILE [-I DIR]... [-D NAME[=VAL]]... [--function F]
    hexplore tui FILE [...]  (both open the terminal UI; they print the text report when stdout is not a terminal)

Exit codes: 0 success, 1 the analysis or check found a failure (`compile`: the file has errors,
or nothing was generated, and why), 2 bad usage or unreadable input (one line on stderr).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from explorer import commands
from explorer.api import (
    DEFAULT_SIZE,
    DEVICES,
    FORMATS,
    TARGETS,
    ParseOptions,
    remark_text,
    render_report,
)
from explorer.commands import DEFAULT_MAX_SHARED_BYTES, CommandError, CompileSettings

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
    analyze.add_argument("--format", choices=sorted(FORMATS), default="text")
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
    run = sub.add_parser("run", help="run the original and the optimized code, compare and time them")
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
    t.add_argument("--target", choices=commands.TUNE_TARGETS, default="cpu", help="cpu: LLVM JIT + OpenMP; opencl: the OpenCL device (PoCL)")
    t.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", help=f"a size parameter (default {DEFAULT_SIZE} each, as run)")
    t.add_argument("--budget", type=float, default=60.0, metavar="S", help="seconds of search (default %(default)s; starting Ray is not counted)")
    t.add_argument("--address", metavar="ray://HOST:PORT", help="run the candidates on this Ray cluster (default: a local Ray instance on all cores, or a process pool without ray)")
    t.add_argument("--jobs", type=_non_negative, default=0, metavar="N", help="candidates at once (default: the cores)")
    t.add_argument("--engine", choices=("auto", "ray", "pool", "local"), default="auto", help="auto: ray if installed (pip install 'hexplore[tune]'), else a process pool")
    t.add_argument("--one-thread", action="store_true", help="cpu: tune for one core")
    t.add_argument("--seed", type=_non_negative, default=0, help="the evolutionary search's seed")


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError as e:
        print(f"hexplore: error: cannot read '{path}': {e.strerror or e}", file=sys.stderr)
        return None


def _parse_options(args: argparse.Namespace) -> ParseOptions:
    return ParseOptions(tuple(args.include), tuple(args.define))


def _error(e: CommandError) -> int:
    print(f"hexplore: error: {e}", file=sys.stderr)
    return 2


def cmd_analyze(args: argparse.Namespace) -> int:
    text = _read(args.file)
    if text is None:
        return 2
    if args.format == "text" and not args.gpu and not args.function:
        for piece in commands.analyze_progressively(args.file, text, _parse_options(args)):
            sys.stdout.write(piece)
            sys.stdout.flush()
        return 0
    try:
        fa = commands.analyze(args.file, text, _parse_options(args), args.function)
    except CommandError as e:
        return _error(e)
    sys.stdout.write(render_report(fa, args.format))
    if args.gpu and args.format == "text":
        try:
            sys.stdout.write(commands.gpu_report(fa, args.param, args.ptxas))
        except CommandError as e:
            return _error(e)
    return 0


def cmd_compile(args: argparse.Namespace) -> int:
    text = _read(args.file)
    if text is None:
        return 2
    settings = CompileSettings(
        target=args.target,
        tile_size=args.tile_size,
        sizes=args.sizes,
        always_offload=args.always_offload,
        shared_memory=not args.no_shared_memory,
        private_memory=not args.no_private_memory,
        max_shared_memory=args.max_shared_memory,
        double_buffer=not args.no_double_buffer,
        openmp=args.openmp,
    )
    try:
        compiled = commands.compile_source(args.file, text, _parse_options(args), args.function, settings)
    except CommandError as e:
        return _error(e)
    for r in compiled.errors:  # as a C compiler says them
        print(f"{r.range.file}:{r.range.line}:{r.range.col}: error: {r.message}", file=sys.stderr)
    if compiled.errors:
        print(f"hexplore: error: {args.file} has {len(compiled.errors)} error(s): nothing generated", file=sys.stderr)
        return 1
    result = compiled.result
    for r in (*result.remarks, *compiled.reasons):
        print(remark_text(r), file=sys.stderr)
    if compiled.nothing:
        print(f"hexplore: {compiled.nothing}", file=sys.stderr)
        return 1
    for name, body in result.files.items():
        if args.out:
            os.makedirs(args.out, exist_ok=True)
            with open(os.path.join(args.out, name), "w", encoding="utf-8") as f:
                f.write(body)
        else:
            sys.stdout.write(f"// ===== {name}\n{body}")
    return 0


def cmd_tui(args: argparse.Namespace) -> int:
    if not sys.stdout.isatty():
        args.format, args.gpu = "text", False  # the plain `analyze` report
        return cmd_analyze(args)
    text = _read(args.file)
    if text is None:
        return 2
    # Imported here so that `hexplore analyze` never pays for loading textual.
    from tui.app import HexploreApp

    app = HexploreApp(args.file, text, _parse_options(args), function=args.function)
    if args.function and app.session.function(args.function) is None:
        return _error(commands.missing_function(args.file, args.function))
    app.run()
    return 0


def _grad_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    g = sub.add_parser("grad", help="derivative code of a loop-nest function (forward or reverse mode)")
    _common(g)
    g.add_argument("--wrt", required=True, metavar="A,x", help="differentiate with respect to these parameters")
    g.add_argument("--of", metavar="OUT,...", help="outputs (default: every floating-point array the function writes)")
    g.add_argument("--mode", choices=("reverse", "forward"), default="reverse")
    g.add_argument("--target", choices=TARGETS, default="c", help="c: the derivative C itself; cuda/opencl: mapped to the GPU")
    g.add_argument("--check", action="store_true", help="finite-difference and dot-product tests (sizes from --param, else as run defaults them)")
    g.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", help=f"a size parameter for --check (default {DEFAULT_SIZE} each, halved while the loops would run past an array of fixed size)")


def cmd_grad(args: argparse.Namespace) -> int:
    """`hexplore grad`: print the derivative; with --check, test it and exit 1 when it fails."""
    text = _read(args.file)
    if text is None:
        return 2
    if not args.function:
        print("hexplore: error: grad needs --function NAME", file=sys.stderr)
        return 2
    req = commands.grad_request(args.file, text, _parse_options(args), args.function, args.wrt, args.of, args.mode)
    g = commands.gradient(req)
    for r in g.remarks:
        print(remark_text(r), file=sys.stderr)
    if g.derivative is None:
        print(f"hexplore: error: {g.error}", file=sys.stderr)
        return 1
    sys.stdout.write(commands.derivative_code(req, g.derivative, args.target))
    if not args.check:
        return 0
    try:
        params, warnings = commands.grad_params(req, args.param)
    except CommandError as e:
        return _error(e)
    for warning in warnings:
        print(f"hexplore: warning: {warning}", file=sys.stderr)
    print(f"check sizes: {', '.join(f'{k}={v}' for k, v in params.items()) or 'none'}")
    failed = False
    for check in commands.gradient_checks(req, params):
        print(check.line)
        failed = failed or check.failed
    return 1 if failed else 0


def cmd_run(args: argparse.Namespace) -> int:
    text = _read(args.file)
    if text is None:
        return 2
    if commands.is_cuda(args.file):
        return _run_cuda(args, text)
    try:
        if not args.function:
            args.function = commands.function_to_run(args.file, text, _parse_options(args))
        timeout_s = commands.run_timeout(args.timeout)
        memory = None if args.memory_limit is None else commands.memory_size(args.memory_limit)
        plan = commands.plan_run(args.file, text, _parse_options(args), args.function, args.param)
    except CommandError as e:
        return _error(e)
    for warning in plan.warnings:
        print(f"hexplore: warning: {warning}", file=sys.stderr)
    report = commands.run(plan, args.device, timeout_s, args.repeat, memory)
    print(json.dumps(report.to_json()) if args.json else commands.run_text(report))
    if report.message and not report.match and report.optimized_s == 0.0:
        return 2 if args.device == "cuda" else 1
    return 1 if args.check and not report.match else 0


def _run_cuda(args: argparse.Namespace, text: str) -> int:
    """A CUDA file: its host function's launches through the kernels' CPU translation."""
    try:
        report, match = commands.run_cuda(args.file, text, args.function, args.param, args.device,
                                          commands.run_timeout(args.timeout))  # fmt: skip
    except CommandError as e:
        return _error(e)
    print(report)
    return 0 if match else 1


def cmd_tune(args: argparse.Namespace) -> int:
    """`hexplore tune`: a line per candidate on stderr, the table and the tuned line on stdout."""
    text = _read(args.file)
    if text is None:
        return 2
    settings = commands.TuneSettings(args.target, args.budget, args.address, args.jobs, args.seed, args.engine, args.one_thread)
    try:
        if not args.function:
            args.function = commands.function_to_run(args.file, text, _parse_options(args))
        plan = commands.plan_run(args.file, text, _parse_options(args), args.function, args.param)
        for warning in plan.warnings:
            print(f"hexplore: warning: {warning}", file=sys.stderr)
        sizes = ", ".join(f"{k}={v}" for k, v in plan.sizes.items()) or "no sizes"
        print(f"tuning {args.function} for {args.target} at {sizes}, budget {args.budget:g} s", file=sys.stderr)
        best = [float("inf")]

        def progress(trial: commands.Trial, n: int) -> None:
            best[0] = min(best[0], trial.seconds) if trial.counts else best[0]
            what = f"{trial.seconds * 1e3:9.2f} ms" if trial.counts else f"{'failed':>12}: {trial.message[:60]}"
            print(f"  [{n:3}] {what}   best {best[0] * 1e3:.2f} ms", file=sys.stderr, flush=True)

        result = commands.tune(plan, settings, progress)
    except CommandError as e:
        return _error(e)
    print(f"{result.search.searcher} search on {result.engine}, {result.device}")
    print(result.table())
    print(result.line())
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] not in SUBCOMMANDS and not argv[0].startswith("-"):
        # `hexplore FILE ...` is `hexplore tui FILE ...`.
        argv = ["tui", *argv]
    args = _parser().parse_args(argv)
    handlers = {"analyze": cmd_analyze, "compile": cmd_compile, "tui": cmd_tui, "grad": cmd_grad, "run": cmd_run,
                "tune": cmd_tune}  # fmt: skip
    return handlers[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
