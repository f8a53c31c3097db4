"""The `hexplore` command: subcommands print reports; the bare form opens the terminal UI.

    hexplore analyze FILE [-I DIR]... [-D NAME[=VAL]]... [--function F] [--format text|json|yaml|sarif]
    hexplore FILE [-I DIR]... [-D NAME[=VAL]]... [--function F]
    hexplore tui FILE [...]  (both open the terminal UI; they print the text report when stdout is not a terminal)

Exit codes: 0 success, 1 the analysis or check found a failure, 2 bad usage or unreadable input.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from core_compiler.analysis import analyze_file
from core_compiler.compile import TARGETS, compile_file
from core_compiler.frontend import ParseOptions
from core_compiler.gpu import MappingOptions
from core_compiler.report import FORMATS, remark_text, render_report

SUBCOMMANDS = ("analyze", "compile", "tui")


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
    comp = sub.add_parser("compile", help="schedule, map to the GPU and generate CUDA or OpenCL")
    _common(comp)
    comp.add_argument("--target", choices=TARGETS, default="cuda")
    comp.add_argument("--tile-size", type=int, default=32, metavar="N")
    comp.add_argument("-o", dest="out", metavar="DIR", help="write the files here (default: print them)")
    tui = sub.add_parser("tui", help="the terminal UI (the text report when stdout is not a terminal)")
    _common(tui)
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
    return 0


def cmd_compile(args: argparse.Namespace) -> int:
    text = _read(args.file)
    if text is None:
        return 2
    fa = analyze_file(args.file, text, ParseOptions(tuple(args.include), tuple(args.define)), only=args.function)
    result = compile_file(fa, args.target, MappingOptions(tile_size=args.tile_size))
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
        args.format = "text"
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


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] not in SUBCOMMANDS and not argv[0].startswith("-"):
        # `hexplore FILE ...` is `hexplore tui FILE ...`.
        argv = ["tui", *argv]
    args = _parser().parse_args(argv)
    handlers = {"analyze": cmd_analyze, "compile": cmd_compile, "tui": cmd_tui}
    return handlers[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
