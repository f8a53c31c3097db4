"""results.json (device.py) as a markdown table: times in seconds, ratios, checks, geomeans."""

from __future__ import annotations

import math
from collections.abc import Sequence

# PPCG's CUDA on one H100 80GB HBM3, 2026-11-25 (../shared/gpu/H100-2026-11-25.md): another run,
# on another machine; PolyBench's timer around the kernel call, best of 2. Strings where it did
# not give a time.
PPCG_H100_2026_11_25: dict[str, float | str] = {
    "gemm": 0.0099, "2mm": 0.0179, "3mm": 0.0476, "atax": 0.0090, "bicg": 0.0090,
    "mvt": 0.0078, "gemver": 0.0118, "gesummv": 0.0089, "syrk": 0.0079, "syr2k": 0.0123,
    "symm": 0.0080, "trmm": 0.0282, "doitgen": 0.2714, "correlation": 0.0239,
    "covariance": 0.0277, "durbin": 0.1116, "trisolv": 0.0251, "gramschmidt": 0.2525,
    "deriche": 0.1611, "adi": 0.656, "fdtd-2d": 0.0244, "jacobi-1d": 0.0049,
    "jacobi-2d": 0.0193, "seidel-2d": 0.0912, "nussinov": "no build", "heat-3d": "> 300",
    "cholesky": "> 12", "lu": "> 12", "ludcmp": "> 12", "floyd-warshall": "> 12",
}


def _num(x: float) -> str:
    return f"{x:.4f}" if x < 1 else f"{x:.3f}" if x < 100 else f"{x:.0f}"


def gpu_time(entry: dict | None) -> tuple[float | None, str]:
    """The best timed run, else the check run's time marked `*`, else why there is none."""
    if not entry:
        return None, "—"
    runs = [r["seconds"] for r in entry.get("runs", []) if r["rc"] == 0 and r["seconds"]]
    if runs:
        return min(runs), _num(min(runs))
    r = entry.get("check_run")
    if r is None:
        return None, str(entry.get("status", "—"))
    if r["rc"] == 0 and r["seconds"] is not None:
        return r["seconds"], _num(r["seconds"]) + "*"
    return None, r["note"] if r["rc"] is None else f"crash rc {r['rc']}"


def cpu_time(entry: dict | None) -> tuple[float | None, str]:
    if not entry:
        return None, "—"
    if entry["rc"] == 0 and entry["seconds"] is not None:
        return entry["seconds"], _num(entry["seconds"])
    return None, entry["note"] if entry["rc"] is None else f"rc {entry['rc']} {entry['note']}"


def _ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}" if a and b else "—"


def _check(entry: dict | None) -> str:
    c = (entry or {}).get("check")
    if not c:
        return "—"
    status = str(c["status"])
    return status if status == "ok" or "max_rel" not in c else f"{status} ({c['max_rel']:.1e})"


def _mini_cell(entry: dict, variants: list[str]) -> str:
    """The checks of hexplore's MINI runs, or without them (no GPU) what gcc's run gave."""
    if variants and any(v in entry for v in variants):
        return " / ".join(_check(entry.get(v)) for v in variants)
    cpu = entry.get("cpu")
    if not cpu:
        return "—"
    return f"gcc: {cpu['values']} values" if cpu["rc"] == 0 and "values" in cpu else (
        f"gcc: {cpu['note'] or 'rc ' + str(cpu['rc'])}")


def geomean(xs: Sequence[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def render(res: dict) -> str:
    """The markdown report of one device run (partial results render too)."""
    variants = [v for v in res["manifest"]["revisions"] if v in ("new", "base")]
    revs = res["manifest"]["revisions"]
    has_base = "base" in revs
    head = ["kernel", "gcc -O3 1T", f"hexplore new ({revs['new']})"]
    head += [f"hexplore base ({revs['base']})"] if has_base else []
    head += ["PPCG, H100 2026-11-25 (record)", *(["base/new"] if has_base else []), "PPCG/new",
             "new: kernels ms (launches)", "MINI check " + "/".join(variants),
             "LARGE check " + "/".join(variants)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    ratios: dict[str, list[float]] = {"base/new": [], "PPCG/new": [], "gcc/new": []}
    kernels = sorted(set(res.get("mini", {})) | set(res.get("cpu_large", {})))
    for k in kernels:
        lines.append(_row(res, k, variants, has_base, ratios))
    lines.append(_geomeans(ratios, has_base, len(head)))
    return "\n".join([*lines, "", *_notes(res)]) + "\n"


def _row(res: dict, k: str, variants: list[str], has_base: bool,
         ratios: dict[str, list[float]]) -> str:
    large = res.get("gpu_large", {}).get(k, {})
    cpu, cpu_s = cpu_time(res.get("cpu_large", {}).get(k))
    new, new_s = gpu_time(large.get("new"))
    base, base_s = gpu_time(large.get("base"))
    ppcg = PPCG_H100_2026_11_25.get(k, "—")
    ppcg_t = ppcg if isinstance(ppcg, float) else None
    for key, a, b in (("base/new", base, new), ("PPCG/new", ppcg_t, new), ("gcc/new", cpu, new)):
        if a and b:
            ratios[key].append(a / b)
    kn = large.get("new", {})
    kcell = f"{kn['kernel_ms']:.2f} ({kn['launches']})" if "kernel_ms" in kn else "—"
    cells = [k, cpu_s, new_s, *([base_s] if has_base else []),
             _num(ppcg) if isinstance(ppcg, float) else ppcg,
             *([_ratio(base, new)] if has_base else []), _ratio(ppcg_t, new), kcell,
             _mini_cell(res.get("mini", {}).get(k, {}), variants),
             " / ".join(_check(large.get(v)) for v in variants)]
    return "| " + " | ".join(str(c) for c in cells) + " |"


def _geomeans(ratios: dict[str, list[float]], has_base: bool, width: int) -> str:
    def g(key: str) -> str:
        xs = ratios[key]
        return f"**{geomean(xs):.2f}** ({len(xs)})" if xs else "—"

    cells = ["geomean (kernels)", f"gcc/new {g('gcc/new')}", "", *([""] if has_base else []), ""]
    cells += [*([g("base/new")] if has_base else []), g("PPCG/new")]
    cells += [""] * (width - len(cells))
    return "| " + " | ".join(cells) + " |"


def _notes(res: dict) -> list[str]:
    cb = res.get("cublas", {})
    cublas = (f"cuBLAS DGEMM at gemm LARGE: {cb['kernel_ms']:.3f} ms kernel only "
              f"({cb.get('tflops', 0):.1f} TFLOP/s), {cb['total_ms']:.2f} ms with cudaMalloc and "
              f"transfers" if cb.get("status") == "ok" else f"cuBLAS DGEMM: {cb.get('status', '—')}")
    build = res.get("build", {})
    return [
        f"GPU: {res['gpu']}; started {res['started']}; phases (s): {res['phases']}.",
        f"Build: make rc {build.get('rc')} in {build.get('seconds')} s"
        + (f"; {len(build['errors'])} error lines (build.log)" if build.get("errors") else "."),
        "Times in seconds: PolyBench's timer around the kernel call (cudaMalloc + transfers + "
        f"kernels; CUDA context made before main), best of {res['repeat']} runs; gcc: one run, "
        f"{res.get('cpu_workers', 1)} at a time on separate cores. "
        f"`*`: only the check run finished (it synchronizes after each launch). Timeouts: "
        f"{res['timeout']:g} s per GPU program, {res['cpu_timeout']:g} s per gcc program.",
        "Ratios above 1: the second named is faster (base/new > 1: new is faster). "
        "`kernels ms`: the launches of the check run, each timed with CUDA events.",
        "PPCG column: another run (../shared/gpu/H100-2026-11-25.md), not this card or call.",
        "Checks: PolyBench's dump printed exactly (%.17g) against gcc -O3's, relative 1e-6 "
        "(float 1e-4), max relative error in parentheses.",
        cublas + ".",
        *_failures(res),
    ]


def _failures(res: dict) -> list[str]:
    """What the programs that failed printed last (a CUDA error, a sanitizer line)."""
    lines = []
    for phase, size in (("mini", res.get("check_size")), ("gpu_large", res.get("time_size"))):
        for k, entry in sorted(res.get(phase, {}).items()):
            for v, r in sorted(entry.items()):
                run = r.get("check_run", r) if isinstance(r, dict) else {}
                if v != "cpu" and run.get("rc") not in (0, None) and run.get("note"):
                    lines.append(f"- {v} {size} {k}: rc {run['rc']}: {run['note'][:200]}")
    lines += [f"- {name}: {why}" for name, why in sorted(res.get("harness", {}).items())]
    lines += [f"- build: {e[:200]}" for e in res.get("build", {}).get("errors", [])[:12]]
    return ["", "Failures:", *lines] if lines else []
