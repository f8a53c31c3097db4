"""Gradient checks: central finite differences along random directions and the dot-product test.

For a function f taking the `wrt` variables to the `of` arrays, with J its Jacobian:

- forward mode against finite differences: ``J u ≈ (f(x + h u) - f(x - h u)) / 2h``;
- reverse mode against finite differences: ``<u, Jᵀ w> ≈ <FD, w>``;
- the dot-product test between the two modes: ``<J u, w> = <u, Jᵀ w>`` to round-off.

Inputs are deterministic (`make_inputs`, seed 0); the directions ``u`` and ``w`` are uniform in
[-1, 1) from a seeded generator. The derivative functions run compiled by the system C compiler
(backend ``c``) or mapped to the GPU by hexplore and run as OpenCL on PoCL (backend
``opencl``); the finite differences always use the original C function.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from core_compiler.ad.differentiate import RETURN, Derivative, differentiate
from core_compiler.analysis import AnalysisOptions, analyze_file
from core_compiler.codegen.opencl import generate_opencl
from core_compiler.errors import NotCheckable, NotDifferentiable
from core_compiler.frontend import ParseOptions
from core_compiler.pipeline import gpu_program
from core_compiler.runtime.differential import scop_values
from core_compiler.runtime.gpu_opencl import run_program_opencl
from core_compiler.runtime.inputs import make_inputs
from core_compiler.runtime.reference import build_reference, call_reference
from core_compiler.runtime.signature import ArraySlot, Layout, ScalarSlot, layout_for_source

FD_STEP = 1e-6
FD_TOL = 1e-5  # relative: truncation O(h^2) plus rounding O(eps / h)
DOT_TOL = 1e-10  # relative: round-off only
# single precision: a larger step, and tolerances for eps = 6e-8
FLOAT_FD_STEP, FLOAT_FD_TOL, FLOAT_DOT_TOL = 1e-2, 2e-2, 1e-4
NOISE_MARGIN = 4.0  # the tolerance over the finite differences' rounding measured at h and 2h
BACKENDS = ("c", "opencl")


@dataclass(frozen=True)
class GradCheck:
    function: str
    backend: str
    params: Mapping[str, int]
    fd_forward: float  # |J u - FD| / |FD|
    fd_reverse: float  # |<u, Jᵀ w> - <FD, w>| / scale
    dot: float  # |<J u, w> - <u, Jᵀ w>| / scale
    jvp_norm: float  # |J u|: a zero Jacobian would pass vacuously
    kernels: tuple[int, int] = (0, 0)  # OpenCL kernels of the jvp and the adjoint
    fd_tol: float = FD_TOL
    dot_tol: float = DOT_TOL
    fd_noise: float = 0.0  # |FD(h) - FD(2h)| / |FD(h)|: the finite differences' own rounding

    @property
    def fd_bound(self) -> float:
        """The finite differences' tolerance: `fd_tol`, or more where they are noisier than that
        (a `float` sum of 10,000 terms rounds by about 1e-3 of its value, and the differences of
        two such sums carry it divided by the step: fuzzer seed 1178, 2.4e-2)."""
        return max(self.fd_tol, NOISE_MARGIN * self.fd_noise)

    @property
    def ok(self) -> bool:
        return self.fd_forward <= self.fd_bound and self.fd_reverse <= self.fd_bound and self.dot <= self.dot_tol

    def report(self) -> str:
        verdict = "ok" if self.ok else "FAILED"
        sizes = ", ".join(f"{k}={v}" for k, v in self.params.items())
        return (
            f"{self.function} [{self.backend}] ({sizes}): "
            f"forward vs finite differences {self.fd_forward:.2e} (tol {self.fd_bound:.0e}), "
            f"reverse vs finite differences {self.fd_reverse:.2e} (tol {self.fd_bound:.0e}), "
            f"dot-product test {self.dot:.2e} (tol {self.dot_tol:.0e}): {verdict}"
        )


@dataclass(frozen=True)
class _Setup:
    path: str
    text: str | None
    function: str
    wrt: tuple[str, ...]
    of: tuple[str, ...]
    params: dict[str, int]
    size_limits: Mapping[str, str | None] | None
    layout: Layout
    step: float


def check_gradients(
    path: str,
    function: str,
    wrt: tuple[str, ...],
    params: Mapping[str, int],
    *,
    of: tuple[str, ...] | None = None,
    size_limits: Mapping[str, str | None] | None = None,
    backend: str = "c",
    seed: int = 0,
    text: str | None = None,
    parse: ParseOptions | None = None,
    derivatives: tuple[Derivative, Derivative] | None = None,
) -> GradCheck:
    """Check forward and reverse mode of `function` on `backend` ("c" or "opencl"); `parse`:
    the user's ``-I`` and ``-D``."""
    layout = layout_for_source(path, function, params, size_limits=size_limits, text=text, options=parse)
    fwd, rev = derivatives or _derive(path, function, wrt, of, layout, text)
    single = any(s.dtype == np.float32 for s in layout.arrays if s.name in (*wrt, *fwd.activity.of))
    step = FLOAT_FD_STEP if single else FD_STEP
    setup = _Setup(path, text, function, wrt, fwd.activity.of, dict(params), size_limits, layout, step)
    x0 = make_inputs(layout, seed)
    if RETURN in setup.of:  # what the function returns: an output array of one value
        x0[RETURN] = np.zeros(1, dtype=layout.return_dtype or np.float64)
    rng = np.random.default_rng([seed, 7])
    u = {n: _direction(rng, layout.slot(n)) for n in wrt}
    w = {n: rng.uniform(-1.0, 1.0, size=np.shape(x0[n])) for n in setup.of}
    fd, fd_wide = _finite_differences(setup, x0, u)
    ju, k1 = _run_jvp(setup, fwd, x0, u, backend)
    jtw, k2 = _run_vjp(setup, rev, x0, w, backend)
    return GradCheck(
        function, backend, dict(params),
        fd_forward=_rel(_norm(ju, fd, setup.of), _norm(fd, None, setup.of)),
        fd_reverse=_rel_pair(_dot(u, jtw), _dot(fd, w)),
        dot=_rel_pair(_dot(ju, w), _dot(u, jtw)),
        jvp_norm=_norm(ju, None, setup.of), kernels=(k1, k2),
        fd_tol=FLOAT_FD_TOL if single else FD_TOL, dot_tol=FLOAT_DOT_TOL if single else DOT_TOL,
        fd_noise=_rel(_norm(fd, fd_wide, setup.of), _norm(fd, None, setup.of)),
    )  # fmt: skip


def _derive(
    path: str, function: str, wrt: tuple[str, ...], of: tuple[str, ...] | None, layout: Layout, text: str | None
) -> tuple[Derivative, Derivative]:
    opts = layout.parse_options
    fwd = differentiate(path, function, wrt, of, "forward", text=text, parse_options=opts)
    rev = differentiate(path, function, wrt, of, "reverse", text=text, parse_options=opts)
    return fwd, rev


def _direction(rng: np.random.Generator, slot: ArraySlot | ScalarSlot) -> np.ndarray:
    shape = slot.shape if isinstance(slot, ArraySlot) else ()
    return np.asarray(rng.uniform(-1.0, 1.0, size=shape))


# ------------------------------------------------------------------------- primal and FD


def _finite_differences(
    setup: _Setup, x0: Mapping[str, np.ndarray], u: Mapping[str, np.ndarray]
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Central differences with the step h, and with 2h: where the function is smooth they differ by
    the rounding of the primal's values (O(eps / h)) more than by truncation (O(h^2))."""
    lib = build_reference(setup.path, setup.layout, text=setup.text)
    runs = [_call_primal(setup, lib, x0, u, k * setup.step) for k in (1, -1, 2, -2)]
    _require_finite(setup, *runs)
    plus, minus, plus2, minus2 = runs
    fd = {n: (plus[n] - minus[n]) / (2 * setup.step) for n in setup.of}
    return fd, {n: (plus2[n] - minus2[n]) / (4 * setup.step) for n in setup.of}


def _require_finite(setup: _Setup, *outputs: Mapping[str, np.ndarray]) -> None:
    """`NotCheckable` when the function itself computes infinities or NaNs at these sizes (a
    `+=` chain that overflows `float`, fuzzer seed 932): finite differences of them are NaN and
    would read as a wrong derivative."""
    bad = [n for n in setup.of if any(not np.isfinite(out[n]).all() for out in outputs)]
    if not bad:
        return
    sizes = ", ".join(f"{k}={v}" for k, v in setup.params.items())
    overflow = any(np.isinf(out[n]).any() for out in outputs for n in bad)
    types = " and ".join(sorted({_c_type(setup.layout, n) for n in bad}))
    what = f"overflow {types}" if overflow else "become NaN"
    raise NotCheckable(
        f"the values of {', '.join(f'`{n}`' for n in bad)} {what} in `{setup.function}` at "
        f"{sizes or 'these sizes'}, so its derivatives cannot be checked there; check at smaller sizes"
    )


def _c_type(layout: Layout, name: str) -> str:
    dtype = layout.return_dtype if name == RETURN else layout.slot(name).dtype
    return "float" if dtype == np.float32 else "double"


def _call_primal(setup: _Setup, lib, x0, u, h: float) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
    arrays = {k: np.array(v, dtype=np.float64) if v.dtype.kind == "f" else v for k, v in x0.items()}
    slots = []
    for s in setup.layout.slots:
        if isinstance(s, ScalarSlot) and s.name in u:
            s = dataclasses.replace(s, value=float(s.value) + h * float(u[s.name]))
        elif s.name in u:
            arrays[s.name] = arrays[s.name] + h * u[s.name]
        slots.append(s)
    layout = dataclasses.replace(setup.layout, slots=tuple(slots))
    result = call_reference(lib, layout, {k: v for k, v in arrays.items() if k != RETURN})
    out = {**result.arrays, RETURN: np.array([0.0 if result.returned is None else result.returned])}
    return {n: np.asarray(out[n], dtype=np.float64) for n in setup.of}


# ----------------------------------------------------------------------- derivative runs


def _run_jvp(setup: _Setup, d: Derivative, x0, u, backend: str) -> tuple[dict[str, np.ndarray], int]:  # type: ignore[no-untyped-def]
    values: dict[str, int | float] = {**setup.params}
    values.update({s.name: s.value for s in setup.layout.scalars})
    values.update({f"d_{n}": float(v) for n, v in u.items() if np.ndim(v) == 0})
    layout = _layout(setup, d.name, values, d.translation_unit)
    inputs = dict(x0)
    for name in d.shadows:
        if name in x0:
            inputs[f"d_{name}"] = np.array(u[name]) if name in u else np.zeros_like(x0[name])
    out, kernels = _run(setup, d, d.name, layout, inputs, backend)
    return {n: out[f"d_{n}"] for n in setup.of}, kernels


def _run_vjp(setup: _Setup, d: Derivative, x0, w, backend: str) -> tuple[dict[str, np.ndarray], int]:  # type: ignore[no-untyped-def]
    function = d.core if backend == "opencl" else d.name
    values: dict[str, int | float] = {**setup.params}
    values.update({s.name: s.value for s in setup.layout.scalars})
    layout = _layout(setup, function, values, d.translation_unit)
    inputs = dict(x0)
    for name in d.shadows:
        seed = w.get(name)
        inputs[f"d_{name}"] = np.array(seed) if seed is not None else np.zeros(layout.slot(f"d_{name}").shape)  # type: ignore[union-attr]
    for slot in layout.arrays:
        inputs.setdefault(slot.name, np.zeros(slot.shape, dtype=slot.dtype))  # tapes
    out, kernels = _run(setup, d, function, layout, inputs, backend)
    result = {}
    for n in setup.wrt:
        v = out[f"d_{n}"]
        result[n] = v[0] if np.ndim(x0.get(n, 0.0)) == 0 and n not in x0 else v
    return result, kernels


def _layout(setup: _Setup, function: str, values: Mapping[str, int | float], text: str) -> Layout:
    return layout_for_source(setup.path, function, values, text=text, options=setup.layout.parse_options)


def _run(setup: _Setup, d: Derivative, function: str, layout: Layout, inputs, backend: str) -> tuple[dict[str, np.ndarray], int]:  # type: ignore[no-untyped-def]
    if backend == "c":
        lib = build_reference(setup.path, layout, text=d.translation_unit)
        return dict(call_reference(lib, layout, inputs).arrays), 0
    if backend == "opencl":
        return run_opencl_function(setup.path, d.translation_unit, function, layout, inputs)
    raise ValueError(f"unknown backend {backend!r}: use one of {', '.join(BACKENDS)}")


def run_opencl_function(
    path: str, text: str, function: str, layout: Layout, inputs: Mapping[str, np.ndarray]
) -> tuple[dict[str, np.ndarray], int]:
    """Analyse `function` of `text`, map it to the GPU, run its OpenCL on PoCL with `inputs`."""
    fa = analyze_file(path, text, layout.parse_options, AnalysisOptions(), only=function)
    (fn,) = fa.functions
    try:
        values = scop_values(fn.function, fn.scops, layout)
    except NotCheckable as e:
        raise NotDifferentiable(f"the derivative cannot run on OpenCL: {e}") from e
    sa, ints, floats, prologue = values.scop, values.ints, values.floats, values.prologue
    gpu = gpu_program(sa)
    program = generate_opencl(gpu)
    arrays = {s.name: np.array(inputs[s.name], dtype=s.dtype, copy=True) for s in layout.arrays}
    result = run_program_opencl(program, arrays, ints, floats, initial_scalars=prologue)
    out = {n: np.asarray(result.arrays[n]).reshape(np.shape(arrays[n])) if n in result.arrays else arrays[n]
           for n in arrays}  # fmt: skip
    return out, len(gpu.kernels)


# --------------------------------------------------------------------------------- norms


def _norm(a: Mapping[str, np.ndarray], b: Mapping[str, np.ndarray] | None, names: tuple[str, ...]) -> float:
    total = 0.0
    for n in names:
        diff = np.asarray(a[n], dtype=np.float64) - (0.0 if b is None else np.asarray(b[n], dtype=np.float64))
        total += float(np.sum(diff * diff))
    return float(np.sqrt(total))


def _dot(a: Mapping[str, np.ndarray], b: Mapping[str, np.ndarray]) -> float:
    return float(sum(np.sum(np.asarray(a[n], dtype=np.float64) * np.asarray(b[n], dtype=np.float64)) for n in a))


def _rel(err: float, scale: float) -> float:
    return err / scale if scale > 1e-300 else err


def _rel_pair(a: float, b: float) -> float:
    scale = max(abs(a), abs(b))
    return abs(a - b) / scale if scale > 1e-300 else 0.0
