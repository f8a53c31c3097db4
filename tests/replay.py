"""Process replay (tinygrad's): record every artifact hexplore generates for the bundled corpora,
then compare two recordings byte for byte. A refactor must reproduce them unchanged, except where a
change is intended and reviewed.

    python -m tests.replay record DIR [--only STEM] [-j N] [--timeout S]   # DIR/<corpus>/<file>/...
    python -m tests.replay diff BEFORE AFTER          # exit 1 and a unified diff when they differ

What is recorded, per source file of tests/kernels, tests/polybench and examples: the `analyze`
report as JSON (every remark), and per function with a modeled loop nest every pass of the
pipeline (front end, detection, model, dependences, schedule tree, GPU mapping, CUDA, OpenCL,
CPU LLVM IR, PTX, the reverse-mode derivative) and `compile` for cuda, opencl, c and c --openmp.
Elapsed times are not recorded; everything else is, so determinism is part of the check.
"""

from __future__ import annotations

import argparse
import difflib
import os
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
POLYBENCH = ROOT / "tests" / "polybench"


def corpus() -> Iterator[tuple[str, Path, tuple[str, ...], tuple[str, ...]]]:
    """(corpus, file, include dirs, defines) for every recorded source file."""
    for p in sorted((ROOT / "tests" / "kernels").glob("*.c")):
        yield "kernels", p, (), ()
    for d in sorted(POLYBENCH.iterdir()):
        if (d / f"{d.name}.c").exists():
            yield "polybench", d / f"{d.name}.c", (str(POLYBENCH / "utilities"),), ("MINI_DATASET",)
    for p in sorted((ROOT / "examples").glob("*.c")):
        yield "examples", p, (), ()


def artifacts(path: Path, include: tuple[str, ...], define: tuple[str, ...]) -> dict[str, str]:
    """Artifact name -> text, for one source file."""
    from core_compiler.codegen.c import COptions
    from core_compiler.compile import compile_file
    from core_compiler.frontend import ParseOptions
    from core_compiler.pipeline import analyze_file, backend_trace
    from core_compiler.report import render_report

    text = path.read_text(encoding="utf-8")
    fa = analyze_file(str(path), text, ParseOptions(include, define))
    out = {"analyze.json": render_report(fa, "json")}
    for f in fa.functions:
        if not f.scops:
            continue
        name = f.function.name
        for i, rec in enumerate((*f.trace, *backend_trace(f, source=(str(path), text)))):
            out[f"{name}/{i:02d}-{rec.label}.txt"] = rec.text + _remarks(rec.remarks)
    for target in ("cuda", "opencl", "c"):
        for openmp in (False, True) if target == "c" else (False,):
            c_options = COptions(openmp=openmp) if openmp else None
            result = compile_file(fa, target, c_options=c_options, text=text)
            tag = f"compile-{target}" + ("-openmp" if openmp else "")
            for fname, body in sorted(result.files.items()):
                out[f"{tag}/{fname}"] = body
            out[f"{tag}/remarks.txt"] = _remarks(result.remarks)
    return out


def _remarks(remarks: object) -> str:
    return "".join(f"-- remark {r.kind.value} {r.name} {r.range}: {r.message}\n" for r in remarks)  # type: ignore[attr-defined]


def _record_one(corpus_name: str, path: str, include: tuple[str, ...], define: tuple[str, ...], out: str) -> None:
    try:  # paths are the checkout's: a recording of another checkout must compare equal
        files = {k: v.replace(str(ROOT), "<root>") for k, v in artifacts(Path(path), include, define).items()}
    except Exception as e:  # recorded, so a refactor that fixes or breaks it shows in the diff
        files = {"error.txt": f"{type(e).__name__}: {e}\n"}
    _write(Path(out) / corpus_name / Path(path).stem, files)


def _write(base: Path, files: dict[str, str]) -> None:
    for name, body in files.items():
        target = base / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(body, encoding="utf-8")


def _record_in_worker(job: tuple[str, Path, tuple[str, ...], tuple[str, ...]], out: str, timeout: float) -> str:
    """One file in its own process with a time limit: a pass that runs away (isl) is recorded as
    such instead of holding the whole recording."""
    corpus_name, path, include, define = job
    cmd = [sys.executable, "-m", "tests.replay", "one", corpus_name, str(path), out,
           "--include", *include, "--define", *define]  # fmt: skip
    try:
        subprocess.run(cmd, cwd=ROOT, check=True, timeout=timeout, capture_output=True)
    except subprocess.TimeoutExpired:
        _write(Path(out) / corpus_name / path.stem, {"timeout.txt": f"took longer than {timeout:g} s\n"})
        return f"{corpus_name}/{path.stem}: TIMEOUT after {timeout:g} s"
    except subprocess.CalledProcessError as e:
        _write(Path(out) / corpus_name / path.stem, {"crash.txt": e.stderr.decode(errors="replace")[-2000:]})
        return f"{corpus_name}/{path.stem}: CRASHED"
    return f"{corpus_name}/{path.stem}"


def record(out: str, only: str | None, jobs: int, timeout: float) -> int:
    todo = [job for job in corpus() if only is None or job[1].stem == only]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for line in pool.map(lambda job: _record_in_worker(job, out, timeout), todo):
            print(line, flush=True)
    return 0


def diff(before: str, after: str) -> int:
    a, b = Path(before), Path(after)
    names = sorted({p.relative_to(a) for p in a.rglob("*") if p.is_file()} | {p.relative_to(b) for p in b.rglob("*") if p.is_file()})
    changed = 0
    for name in names:
        old = (a / name).read_text(encoding="utf-8").splitlines(keepends=True) if (a / name).exists() else []
        new = (b / name).read_text(encoding="utf-8").splitlines(keepends=True) if (b / name).exists() else []
        if old != new:
            changed += 1
            sys.stdout.writelines(difflib.unified_diff(old, new, f"before/{name}", f"after/{name}"))
    print(f"process replay: {len(names)} artifacts, {changed} changed", file=sys.stderr)
    return 1 if changed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.replay", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record")
    rec.add_argument("out")
    rec.add_argument("--only", metavar="STEM", help="only the source file with this stem")
    rec.add_argument("-j", type=int, default=os.cpu_count() or 1)
    rec.add_argument("--timeout", type=float, default=120.0, help="seconds per source file (default %(default)s)")
    one = sub.add_parser("one")  # one file, in the worker process `record` starts
    one.add_argument("corpus")
    one.add_argument("path")
    one.add_argument("out")
    one.add_argument("--include", nargs="*", default=[])
    one.add_argument("--define", nargs="*", default=[])
    cmp = sub.add_parser("diff")
    cmp.add_argument("before")
    cmp.add_argument("after")
    args = parser.parse_args(argv)
    if args.command == "record":
        return record(args.out, args.only, args.j, args.timeout)
    if args.command == "one":
        _record_one(args.corpus, args.path, tuple(args.include), tuple(args.define), args.out)
        return 0
    return diff(args.before, args.after)


if __name__ == "__main__":
    raise SystemExit(main())
