"""The `hexplore` command: subcommands print reports; the bare form opens the terminal UI.

    hexplore analyze FILE [-I DIR]... [-D NAME[=VAL]]... [--function F] [--format text|json|yaml|sarif]
    hexplore FILE [-I DIR]... [-D NAME[=VAL]]... [--function F]
    hexplore tui FILE [...]  (both open the terminal UI; they print the text report when stdout is not a terminal)

Exit codes: 0 success, 1 the analysis or check found a failure, 2 bad usage or unreadable input.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence

from core_compiler.analysis import FileAnalysis, analyze_file
from core_compiler.codegen.c import COptions
from core_compiler.compile import TARGETS, compile_file
from core_compiler.cpu import CpuOptions
from core_compiler.errors import UsageError
from core_compiler.frontend import ParseOptions
from core_compiler.gpu import MappingOptions
from core_compiler.memory import DEFAULT_MAX_SHARED_BYTES, MemoryOptions
from core_compiler.passes import Trace
from core_compiler.pipeline import GpuOptions, ScopUnit, run_passes
from core_compiler.report import FORMATS, remark_text, render_report
from core_compiler.runtime.footprint import default_sizes
from core_compiler.runtime.run import DEFAULT_SIZE, DEVICES, RunReport, run_function
from core_compiler.sizes import SizesError, parse_sizes

SUBCOMMANDS = ("analyze", "compile", "tui", "grad", "run")


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="C (.c) or CUDA (.cu) source file")
    p.add_argument("-I", dest="include", action="append", default=[], metavar="DIR", help="add an include directory")
    p.add_argument("-D", dest="define", action="append", default=[], metavar="NAME[=VAL]", help="define a macro")
    p.add_argument("--function", metavar="NAME", help="only this function")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hexplore", description="Explore how C loop nests map to GPUs.")
    sub = parser.add_subparsers(dest="command", required=True)
    analyze = sub.add_parser("analyze", help="SCoPs, polyhedral model, dependences and remarks")
    _common(analyze)
    analyze.add_argument("--format", choices=sorted(FORMATS), default="text")
    analyze.add_argument("--gpu", action="store_true", help="also the schedule tree, the GPU kernels, their mapping and memory placement (text format)")
    comp = sub.add_parser("compile", help="schedule, map to the GPU and generate CUDA or OpenCL, or tiled C (--target c)")
    _common(comp)
    comp.add_argument("--target", choices=TARGETS, default="cuda")
    comp.add_argument("--tile-size", type=int, default=32, metavar="N")
    comp.add_argument("--sizes", metavar="S", help='per-kernel sizes, PPCG syntax: "{kernel[0]->tile[32,32];kernel[0]->block[32,8]}"')
    comp.add_argument("--always-offload", action="store_true", help="generate GPU code even where the profitability model keeps a loop nest on the CPU")
    comp.add_argument("--no-shared-memory", action="store_true", help="keep every array in global memory")
    comp.add_argument("--no-private-memory", action="store_true", help="do not promote arrays to registers")
    comp.add_argument("--max-shared-memory", type=int, default=DEFAULT_MAX_SHARED_BYTES, metavar="BYTES", help="shared memory per block (default: %(default)s)")
    comp.add_argument("--openmp", action="store_true", help="with --target c: `#pragma omp parallel for` on parallel loops")
    comp.add_argument("-o", dest="out", metavar="DIR", help="write the files here (default: print them)")
    tui = sub.add_parser("tui", help="the terminal UI (the text report when stdout is not a terminal)")
    _common(tui)
    _grad_parser(sub)
    run = sub.add_parser("run", help="run the original and the optimized code, compare and time them")
    _common(run)
    run.add_argument("--device", choices=DEVICES, default="cpu")
    run.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", help=f"a size parameter (default {DEFAULT_SIZE} each, halved while the loops would run past an array of fixed size)")
    run.add_argument("--repeat", type=int, default=1, metavar="N", help="runs in one process, the fastest times reported; on a device, arrays the kernels only read stay there after the first run")
    run.add_argument("--check", action=argparse.BooleanOptionalAction, default=True, help="exit 1 when the results differ")
    run.add_argument("--json", action="store_true", help="one JSON object on stdout")
    run.add_argument("--timeout", type=float, default=120.0, metavar="S", help="time limit of one run (default %(default)s s)")
    return parser


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError as e:
        print(f"hexplore: error: cannot read '{path}': {e.strerror or e}", file=sys.stderr)
        return None


def cmd_analyze(args: argparse.Namespace) -> int:
    text = _read(args.file)
    if text is None:
        return 2
    opts = ParseOptions(tuple(args.include), tuple(args.define))
    fa = analyze_file(args.file, text, opts, only=args.function)
    if args.function and not fa.functions:
        print(f"hexplore: error: no function named '{args.function}' is defined in '{args.file}'", file=sys.stderr)
        return 2
    sys.stdout.write(render_report(fa, args.format))
    if args.gpu and args.format == "text":
        sys.stdout.write(gpu_report(fa))
    return 0


def gpu_report(fa: FileAnalysis) -> str:
    """Per SCoP: the schedule tree and how its kernels are mapped (``hexplore analyze --gpu``)."""
    out = []
    for f in fa.functions:
        for sa in f.scops:
            trace = Trace()
            run_passes(ScopUnit(sa, ""), GpuOptions().passes(), trace)
            schedule, mapping = trace.records
            out.append(f"\n{sa.scop.name}: schedule tree\n{schedule.text}")
            out.append(f"{sa.scop.name}: GPU kernels\n{mapping.text}")
            out += [remark_text(r) + "\n" for r in mapping.remarks]
    return "".join(out)


def cmd_compile(args: argparse.Namespace) -> int:
    text = _read(args.file)
    if text is None:
        return 2
    fa = analyze_file(args.file, text, ParseOptions(tuple(args.include), tuple(args.define)), only=args.function)
    if args.openmp and args.target != "c":
        print("hexplore: error: --openmp needs --target c", file=sys.stderr)
        return 2
    try:
        sizes = parse_sizes(args.sizes) if args.sizes else {}
    except SizesError as e:
        print(f"hexplore: error: {e}", file=sys.stderr)
        return 2
    memory = MemoryOptions(not args.no_shared_memory, not args.no_private_memory, args.max_shared_memory)
    mapping = MappingOptions(tile_size=args.tile_size, sizes=sizes, memory=memory)
    c_options = COptions(CpuOptions(tile_size=args.tile_size), openmp=args.openmp)
    result = compile_file(fa, args.target, GpuOptions(mapping=mapping), c_options=c_options, text=text, always_offload=args.always_offload)
    for r in result.remarks:
        print(remark_text(r), file=sys.stderr)
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

    opts = ParseOptions(tuple(args.include), tuple(args.define))
    app = HexploreApp(args.file, text, opts, function=args.function)
    if args.function and app.session.function(args.function) is None:
        print(f"hexplore: error: no function named '{args.function}' is defined in '{args.file}'", file=sys.stderr)
        return 2
    app.run()
    return 0


def _grad_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    g = sub.add_parser("grad", help="derivative code of a loop-nest function (forward or reverse mode)")
    _common(g)
    g.add_argument("--wrt", required=True, metavar="A,x", help="differentiate with respect to these parameters")
    g.add_argument("--of", metavar="OUT,...", help="outputs (default: every floating-point array the function writes)")
    g.add_argument("--mode", choices=("reverse", "forward"), default="reverse")
    g.add_argument("--target", choices=TARGETS, default="c", help="c: the derivative C itself; cuda/opencl: mapped to the GPU")
    g.add_argument("--check", action="store_true", help="finite-difference and dot-product tests (sizes from --param)")
    g.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", help="an integer parameter for --check")


def cmd_grad(args: argparse.Namespace) -> int:
    """`hexplore grad`: print the derivative; with --check, test it and exit 1 when it fails."""
    from core_compiler.ad import NotDifferentiable, differentiate
    from core_compiler.ad.check import check_gradients

    text = _read(args.file)
    if text is None:
        return 2
    if not args.function:
        print("hexplore: error: grad needs --function NAME", file=sys.stderr)
        return 2
    opts = ParseOptions(tuple(args.include), tuple(args.define))
    wrt = tuple(w.strip() for w in args.wrt.split(",") if w.strip())
    of = tuple(o.strip() for o in args.of.split(",") if o.strip()) if args.of else None
    try:
        d = differentiate(args.file, args.function, wrt, of, args.mode, text=text, parse_options=opts)
    except NotDifferentiable as e:
        for r in e.remarks:
            print(remark_text(r), file=sys.stderr)
        print(f"hexplore: error: {e}", file=sys.stderr)
        return 1
    for r in d.remarks:
        print(remark_text(r), file=sys.stderr)
    if args.target == "c":
        sys.stdout.write(d.source)
    else:
        fa = analyze_file(args.file, d.translation_unit, opts, only=d.core)
        for name, body in compile_file(fa, args.target, always_offload=True).files.items():
            sys.stdout.write(f"// ===== {name}\n{body}")
    if not args.check:
        return 0
    try:
        params = {k.strip(): int(v) for k, v in (p.split("=", 1) for p in args.param)}
    except ValueError:
        print("hexplore: error: --param takes NAME=INTEGER", file=sys.stderr)
        return 2
    failed = False
    for backend in ("c", "opencl"):
        try:
            result = check_gradients(args.file, args.function, wrt, params, of=of, backend=backend,
                                     text=text, parse=opts)  # fmt: skip
        except (NotDifferentiable, UsageError) as e:
            print(f"check [{backend}]: not run: {e}")
            failed = failed or backend == "c"
            continue
        print(f"check: {result.report()}")
        failed = failed or not result.ok
    return 1 if failed else 0


def cmd_run(args: argparse.Namespace) -> int:
    if not args.function:
        print("hexplore: error: run needs --function NAME", file=sys.stderr)
        return 2
    text = _read(args.file)
    if text is None:
        return 2
    parse = ParseOptions(tuple(args.include), tuple(args.define))
    fa = analyze_file(args.file, text, parse, only=args.function)
    if not fa.functions:
        print(f"hexplore: error: no function named '{args.function}' is defined in '{args.file}'", file=sys.stderr)
        return 2
    try:
        given = dict(_param(p) for p in args.param)
    except ValueError as e:
        print(f"hexplore: error: {e}", file=sys.stderr)
        return 2
    fn = fa.functions[0].function
    sizes = default_sizes(fn, fa.functions[0].scops, given, DEFAULT_SIZE)
    for name in sorted(set(given) - set(sizes)):
        known = ", ".join(sizes) or "none"
        print(f"hexplore: warning: `{args.function}` has no integer parameter `{name}` (it has: {known}); "
              f"--param {name}=... is ignored", file=sys.stderr)  # fmt: skip
    report = run_function(args.file, args.function, args.device, sizes, args.timeout, max(args.repeat, 1), parse)
    print(json.dumps(report.to_json()) if args.json else run_text(report))
    if report.message and not report.match and report.optimized_s == 0.0:
        return 2 if args.device == "cuda" else 1
    return 1 if args.check and not report.match else 0


def _param(text: str) -> tuple[str, int]:
    name, sep, value = text.partition("=")
    if not sep or not name or not value.lstrip("-").isdigit():
        raise ValueError(f"--param expects NAME=INTEGER, got '{text}'")
    return name, int(value)


def run_text(r: RunReport) -> str:
    params = ", ".join(f"{k}={v}" for k, v in r.params.items())
    if r.optimized_s == 0.0 and r.message:
        return f"{r.function} on {r.device} ({params}): {r.message}"
    verdict = "results match" if r.match else f"RESULTS DIFFER\n{r.message}"
    runs = f", fastest of {r.runs} runs" if r.runs > 1 else ""
    return (
        f"{r.function} on {r.device} ({params}{runs})\n"
        f"  reference (C compiler)  {r.reference_s * 1e3:10.3f} ms\n"
        f"  hexplore                {r.optimized_s * 1e3:10.3f} ms   speedup {r.speedup:.2f}x\n"
        f"  {transfer_text(r)}\n"
        f"  {verdict} (max abs error {r.max_abs_error:.3g})"
        + (f"\n  ran the {r.variant} code" + (f": {r.note}" if r.note else "") if r.variant else "")
    )


def transfer_text(r: RunReport) -> str:
    """What moved between host and device, e.g. "moved 24.0 MB (first run), 8.0 MB per later
    run: read-only arrays stayed on the device"."""
    if r.device == "cpu":
        return "no transfers: the code runs in host memory"
    first = f"moved {byte_size(r.bytes_transferred)}"
    later = r.bytes_transferred_repeat
    if later is None:
        return f"{first} between host and device"
    text = f"{first} (first run), {byte_size(later)} per later run"
    if later < r.bytes_transferred:
        return f"{text}: read-only arrays stayed on the device"
    return f"{text}: every array copied in is also written, so it moves again"


def byte_size(n: int) -> str:
    """``512 bytes``, ``43.8 kB``, ``24.0 MB``, ``1.5 GB`` (decimal units)."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] not in SUBCOMMANDS and not argv[0].startswith("-"):
        # `hexplore FILE ...` is `hexplore tui FILE ...`.
        argv = ["tui", *argv]
    args = _parser().parse_args(argv)
    handlers = {"analyze": cmd_analyze, "compile": cmd_compile, "tui": cmd_tui, "grad": cmd_grad, "run": cmd_run}
    return handlers[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
