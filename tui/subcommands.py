"""The `hexplore` subcommands (`tui/cli.py` parses their command line first): each reads the
file, calls `explorer/commands.py` and prints what it returns."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable

from explorer import commands
from explorer.api import ParseOptions, remark_text, render_report
from explorer.commands import CommandError, CompileSettings


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


HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {
    "analyze": cmd_analyze, "compile": cmd_compile, "tui": cmd_tui, "grad": cmd_grad, "run": cmd_run, "tune": cmd_tune,
}
