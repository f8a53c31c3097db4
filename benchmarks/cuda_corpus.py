"""CUDA nobody here wrote, through `hexplore analyze` (and `hexplore run` where a host function
launches kernels): a table of files, kernels, modeled or not (with the first reason), races,
uncoalesced accesses, bank conflicts, and crashes (issue 28: "checked again on CUDA code nobody
here wrote").

The corpus is not in the repository (its licenses are the packages'): ``--fetch`` downloads the
Debian source packages named in PACKAGES with ``apt-get source`` (it needs ``deb-src`` lines for
Debian's archive) into the corpus folder; without it, or where apt cannot, the script runs on what
the folder already holds, and on nothing, said so, where it holds nothing::

    python benchmarks/cuda_corpus.py --fetch                 # into $XDG_CACHE_HOME/hexplore-cuda-corpus
    python benchmarks/cuda_corpus.py DIR [DIR ...] --out table.md

Each file runs in its own ``hexplore analyze --format json`` process with a time limit; its
include folders are its own, and every ``include``/``src`` folder of its package (a header that
stays missing is a syntax error hexplore reports, not a crash). A crash is a non-zero exit with a
traceback, or no JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEXPLORE = [sys.executable, "-m", "tui.cli"]
PACKAGES = ("bart", "starpu")  # Debian source packages with CUDA kernels and their host code
TIMEOUT_S = 180
COUNTED = {"DataRace": "races", "UncoalescedAccess": "uncoalesced", "SharedBankConflict": "bank conflicts",
           "BarrierDivergence": "divergent barriers", "RedundantBarrier": "redundant barriers"}  # fmt: skip


@dataclass
class Kernel:
    file: str
    name: str
    modeled: bool
    reason: str = ""  # the first reason it is not modeled
    counts: dict[str, int] = field(default_factory=dict)
    findings: list[str] = field(default_factory=list)  # line: remark, for the table's notes


@dataclass
class FileResult:
    path: Path
    kernels: list[Kernel]
    crash: str = ""  # the traceback's last lines, or why there is no JSON


def default_dir() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return base / "hexplore-cuda-corpus"


def fetch(folder: Path) -> str:
    """Download PACKAGES' sources into `folder` with apt-get; what went wrong, or ""."""
    if shutil.which("apt-get") is None:
        return "apt-get is not installed"
    folder.mkdir(parents=True, exist_ok=True)
    missing = [p for p in PACKAGES if not any(folder.glob(f"{p}-*"))]
    if not missing:
        return ""
    run = subprocess.run(["apt-get", "source", "-q", *missing], cwd=folder, capture_output=True, text=True, timeout=900)
    return "" if run.returncode == 0 else f"apt-get source {' '.join(missing)} failed: {run.stderr.strip()[-400:]}"


def sources(folders: Iterable[Path]) -> list[Path]:
    return sorted(p for d in folders for p in d.rglob("*.cu") if p.is_file())


def include_dirs(path: Path, folders: Iterable[Path]) -> list[Path]:
    """The file's folder, and the `include` and `src` folders of the package it is in (the
    corpus folder's child that holds it)."""
    package = path.parent
    for d in folders:
        if d in path.parents and len(path.relative_to(d).parts) > 1:
            package = d / path.relative_to(d).parts[0]
    found = [path.parent, *sorted(p for p in package.rglob("*") if p.is_dir() and p.name in ("include", "src"))]
    return list(dict.fromkeys(found))


def analyze(path: Path, includes: list[Path]) -> FileResult:
    cmd = [*HEXPLORE, "analyze", str(path), "--format", "json", *(a for d in includes for a in ("-I", str(d)))]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return FileResult(path, [], crash=f"no answer in {TIMEOUT_S} s")
    if "Traceback" in proc.stderr or not proc.stdout.strip():
        return FileResult(path, [], crash=_tail(proc.stderr) or f"exit {proc.returncode}, no output")
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError as e:
        return FileResult(path, [], crash=f"not JSON: {e}")
    errors = [r["message"] for r in report["remarks"] if r["name"] == "SyntaxError"]
    return FileResult(path, [k for f in report["functions"] if (k := _kernel(path, f, errors)) is not None])


def _kernel(path: Path, fn: dict[str, object], errors: list[str]) -> Kernel | None:
    remarks = [r for r in fn["remarks"] if isinstance(r, dict)]  # type: ignore[attr-defined]
    mine = [r for r in remarks if r["pass"] == "cuda-kernel" or r["name"] == "FunctionHasErrors"]
    if not any(r["pass"] == "cuda-kernel" for r in remarks) and not _is_kernel_text(path, fn):
        return None
    modeled = any(r["name"] == "CudaKernelModeled" for r in mine)
    why = next((r["message"] for r in mine if r["name"] in ("CudaKernelNotModeled", "FunctionHasErrors")), "")
    if not modeled and not why:  # `__global__` in its text, but clang did not read a kernel there
        why = "not read as a `__global__` kernel" + (f" (the file's first error: {errors[0]})" if errors else "")
    counts: dict[str, int] = {}
    findings = []
    for r in mine:
        if r["name"] in COUNTED:
            counts[r["name"]] = counts.get(r["name"], 0) + 1
            findings.append(f"{r['range']['line']}: {r['name']}: {r['message']}")
    return Kernel(path.name, str(fn["name"]), modeled, str(why), counts, findings)


def _is_kernel_text(path: Path, fn: dict[str, object]) -> bool:
    """Whether the function's definition says `__global__` (a function with syntax errors has no
    `cuda-kernel` remarks)."""
    rng = fn["range"]
    assert isinstance(rng, dict)
    lines = path.read_text(errors="replace").splitlines()[rng["line"] - 1 : rng["line"] + 1]
    return "__global__" in " ".join(lines)


def _tail(text: str, lines: int = 4) -> str:
    return " | ".join(text.strip().splitlines()[-lines:])


# ------------------------------------------------------------------------------ the table


def table(results: list[FileResult], notes: str = "") -> str:
    kernels = [k for r in results for k in r.kernels]
    modeled = [k for k in kernels if k.modeled]
    out = [
        f"{len(results)} file(s), {len(kernels)} kernel(s), {len(modeled)} modeled, "
        f"{sum(1 for r in results if r.crash)} crash(es). {notes}".strip(),
        "",
        "| file | kernel | modeled | first reason not modeled | races | uncoalesced | bank conflicts | other |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        if r.crash:
            out.append(f"| {r.path.name} | — | CRASH | {_cell(r.crash)} | | | | |")
        for k in r.kernels:
            c = k.counts
            other = ", ".join(f"{COUNTED[n]}: {v}" for n, v in c.items() if n in ("BarrierDivergence", "RedundantBarrier"))
            out.append(
                f"| {k.file} | {k.name} | {'yes' if k.modeled else 'no'} | {_cell(k.reason)} | {c.get('DataRace', 0)} "
                f"| {c.get('UncoalescedAccess', 0)} | {c.get('SharedBankConflict', 0)} | {other} |"
            )
    findings = [f"- {k.file} `{k.name}` {f}" for k in kernels for f in k.findings if not f.split(": ")[1].startswith("Uncoalesced")]
    if findings:
        out += ["", "Races, conflicts and barriers reported:", *findings]
    return "\n".join(out) + "\n"


def _cell(text: str) -> str:
    text = text.replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= 160 else text[:157] + "..."


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="*", type=Path, help=f"where the .cu files are (default: {default_dir()})")
    parser.add_argument("--fetch", action="store_true", help=f"download {', '.join(PACKAGES)} with apt-get source first")
    parser.add_argument("--out", type=Path, help="write the table here (default: print it)")
    args = parser.parse_args(argv)
    folders = [f.resolve() for f in args.folders] or [default_dir()]
    notes = ""
    if args.fetch:
        notes = fetch(folders[0])
    files = sources(f for f in folders if f.exists())
    if not files:
        print(f"no .cu files under {', '.join(map(str, folders))}: nothing to check ({notes or 'run with --fetch'})")
        return 0
    results = []
    for path in files:
        result = analyze(path, include_dirs(path, folders))
        print(f"{path}: {len(result.kernels)} kernel(s){' CRASH' if result.crash else ''}", file=sys.stderr)
        results.append(result)
    text = table(results, notes)
    if args.out:
        args.out.write_text(text)
    else:
        print(text)
    return 1 if any(r.crash for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
