"""A CUDA program's host code run on the CPU: its launches through the kernels' CPU translation.

The host function is interpreted statement by statement: `int` and `double` declarations and
assignments, `for` loops and `if`s over them, device memory as numpy buffers and the CUDA runtime
calls a host function makes (as `compile --target cuda` writes them, macros expanded)::

    double *dev_A;
    HX_CHECK(cudaMalloc((void **)&dev_A, (40) * (30) * sizeof(double)));   a buffer of 1200 NaNs
    HX_CHECK(cudaMemcpy(dev_A, A, (40) * (30) * sizeof(double), cudaMemcpyHostToDevice));
    dim3 k0_grid(hx_max((nj + 63) / 64, 1), ...);                           read by the launch
    kernel0<<<k0_grid, k0_block>>>(dev_A, ni, ...);                          `cpu.CpuKernel`
    HX_CHECK(cudaFree(dev_A));

(``do { ... } while (0)`` is its body, `frontend/lower.py`.) What would fail on a GPU fails here
too, said in words (`HostCodeError`): a copy past an allocation or in the wrong direction, a
launch reaching past a buffer, a buffer used after `cudaFree`, device memory never freed, an
error path taken (`exit`). A freshly allocated float buffer holds NaN, so that a kernel reading
device memory nothing copied in gives NaN, not the right answer by luck. What the interpreter
does not read is `NotTranslatable` with its line.
"""

from __future__ import annotations

import contextlib
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from core_compiler.cuda.cpu import CpuKernel, NotTranslatable, compiled, footprint
from core_compiler.errors import UsageError
from core_compiler.frontend import ir
from core_compiler.llvm.jit import scalar_dtype
from core_compiler.source import SourceRange


class HostCodeError(UsageError):
    """The host code does what fails on a GPU (a copy past an allocation, a freed buffer used)."""


@dataclass(eq=False)
class Buffer:
    """What a pointer of the host code points to: an array the host function was given, or
    device memory from `cudaMalloc` (`device`)."""

    name: str
    data: np.ndarray  # flat, typed
    device: bool
    freed: bool = False


Value = int | float | Buffer | None  # None: a pointer not yet allocated


@dataclass
class HostRun:
    """A host function run on the CPU: its arrays after the run, and each launch's seconds; with
    `dry`, no kernel runs and `needs` gets the elements each array parameter must have."""

    arrays: dict[str, np.ndarray]
    launches: list[tuple[str, float]] = field(default_factory=list)
    dry: bool = False
    needs: dict[str, int] = field(default_factory=dict)
    launcher: Launcher | None = None  # how a launch runs (`devices.Devices` splits it); None: at once
    allocated: list[Buffer] = field(default_factory=list)  # every `cudaMalloc`, in order

    @property
    def leaked(self) -> tuple[str, ...]:
        """The device buffers the host code never freed."""
        return tuple(b.name for b in self.allocated if not b.freed)


Launcher = Callable[[ir.Function, CpuKernel, dict[str, object], dict[str, int], bool], float]


class _Return(Exception):
    """The host function returned."""


def run_host(functions: Mapping[str, ir.Function], host: str, arrays: Mapping[str, np.ndarray],
             scalars: Mapping[str, int | float], parallel: bool = True, launcher: Launcher | None = None) -> HostRun:  # fmt: skip
    """Run `host` with its array parameters bound to `arrays` (written in place) and its scalars
    to `scalars`; `launcher` runs each launch (default: the whole grid at once)."""
    return _run(functions, host, HostRun(dict(arrays), launcher=launcher), scalars, parallel)


def host_needs(functions: Mapping[str, ir.Function], host: str, arrays: tuple[str, ...],
               scalars: Mapping[str, int | float]) -> dict[str, int]:  # fmt: skip
    """The elements each array parameter of `host` must have for a run at `scalars`: what its
    copies and its launches reach."""
    params = {p.name: p for p in functions[host].params} if host in functions else {}
    empty = {a: np.zeros(0, dtype=_dtype(params[a].type) if a in params else np.float64) for a in arrays}
    return _run(functions, host, HostRun(empty, dry=True), scalars, False).needs


def _run(functions: Mapping[str, ir.Function], host: str, run: HostRun, scalars: Mapping[str, int | float],
         parallel: bool) -> HostRun:  # fmt: skip
    if host not in functions:
        raise NotTranslatable(f"no function `{host}` in this file")
    launches = {la.range: la for k in functions.values() for la in k.launches}
    env: dict[str, Value] = {**scalars, **{n: Buffer(n, a, device=False) for n, a in run.arrays.items()}}
    types = {p.name: p.type for p in functions[host].params}
    interpreter = _Interpreter(functions, launches, env, types, run, parallel)
    with contextlib.suppress(_Return):
        interpreter.block(functions[host].body)
    return run


@dataclass
class _Interpreter:
    functions: Mapping[str, ir.Function]
    launches: Mapping[SourceRange, ir.Launch]
    env: dict[str, Value]
    types: dict[str, ir.CType]
    run: HostRun
    parallel: bool

    # ---------------------------------------------------------------------------- statements

    def block(self, stmts: tuple[ir.Stmt, ...]) -> None:
        for s in stmts:
            self.stmt(s)

    def stmt(self, s: ir.Stmt) -> None:
        if isinstance(s, ir.Decl):
            self.decl(s)
        elif isinstance(s, ir.For):
            self.env[s.var] = _int(self.value(s.init), s.init)
            while self.value(s.cond):
                self.block(s.body)
                self.env[s.var] = _int(self.env[s.var], s.init) + s.step
        elif isinstance(s, ir.If):
            self.block(s.then if self.value(s.cond) else s.other)
        elif isinstance(s, ir.ExprStmt):
            self.value(s.expr, s.range)
        elif isinstance(s, ir.Assign) and isinstance(s.target, ir.Var) and s.target.name in self.env:
            self.assign(s)
        elif isinstance(s, ir.Jump) and s.kind == "return":
            raise _Return
        else:
            raise NotTranslatable(f"line {s.range.line}: the CPU translation runs host code of declarations, "
                                  "`for` loops, `if`s, CUDA runtime calls and kernel launches only")  # fmt: skip

    def decl(self, s: ir.Decl) -> None:
        self.types[s.name] = s.type
        if isinstance(s.type, ir.OtherType):
            return  # `dim3 block(16, 16);`: read by the launch
        if isinstance(s.type, ir.Array):
            raise NotTranslatable(f"line {s.range.line}: a local array in host code (`{s.name}`) is not run by the CPU translation")
        value = None if s.init is None else self.value(s.init)
        self.env[s.name] = _converted(value, s.type) if value is not None else None

    def assign(self, s: ir.Assign) -> None:
        assert isinstance(s.target, ir.Var)
        value = self.value(s.value)
        if s.op != "=":
            value = _arith(s.op[:-1], self.env[s.target.name], value, s.value)
        self.env[s.target.name] = _converted(value, self.types.get(s.target.name))

    # ---------------------------------------------------------------------------- expressions

    def value(self, e: ir.Expr, stmt: SourceRange | None = None) -> Value:
        """`e`'s value; a call runs (a launch where `e` is the statement `stmt`)."""
        if isinstance(e, ir.Call):
            return self.call(e, stmt)
        return evaluate(e, self.env, lambda c: self.call(c, None))

    def call(self, call: ir.Call, stmt: SourceRange | None) -> Value:
        if stmt is not None and stmt in self.launches and call.name in self.functions:
            self.launch(call, self.launches[stmt])
            return 0
        runtime = _RUNTIME.get(call.name)
        if runtime is None:
            raise NotTranslatable(f"line {call.range.line}: `{call.name}` is not a call the CPU translation runs "
                                  f"(it runs kernel launches and {', '.join(sorted(_RUNTIME))})")  # fmt: skip
        return runtime(self, call)

    def buffer(self, e: ir.Expr, what: str) -> Buffer:
        value = self.value(e)
        if not isinstance(value, Buffer):
            raise NotTranslatable(f"line {e.range.line}: {what} `{_text(e)}` is not an array or device buffer the host code holds")
        if value.freed:
            raise HostCodeError(f"line {e.range.line}: {what} `{value.name}` was freed by cudaFree before")
        return value

    # ---------------------------------------------------------------------------- the CUDA runtime

    def malloc(self, call: ir.Call) -> Value:
        target = call.args[0].operand if isinstance(call.args[0], ir.Cast) else call.args[0]
        name = target.text[1:] if isinstance(target, ir.OpaqueExpr) and target.text.startswith("&") else None
        if isinstance(target, ir.Unary) and target.op == "&" and isinstance(target.operand, ir.Var):  # an opaque call's `&p`
            name = target.operand.name
        declared = self.types.get(name) if name else None
        if name is None or not isinstance(declared, ir.Pointer):
            raise NotTranslatable(f"line {call.range.line}: cudaMalloc's first argument is not `&p` for a pointer `p` the host code declares")
        size = _int(self.value(call.args[1]), call.args[1])
        dtype = _dtype(declared)
        data = np.empty(size // dtype.itemsize, dtype=dtype)
        if dtype.kind == "f":
            data.fill(np.nan)
        else:
            data.view(np.uint8).fill(0x5A)  # garbage, as cudaMalloc's memory is
        buffer = Buffer(name, data, device=True)
        self.run.allocated.append(buffer)
        self.env[name] = buffer
        return 0

    def memcpy(self, call: ir.Call) -> Value:
        dst, src = self.buffer(call.args[0], "cudaMemcpy's destination"), self.buffer(call.args[1], "cudaMemcpy's source")
        count = _int(self.value(call.args[2]), call.args[2])
        kind = self.value(call.args[3])
        spaces = {1: (True, False), 2: (False, True)}.get(_int(kind, call.args[3]))  # HostToDevice, DeviceToHost
        line = call.range.line
        if spaces is not None and (dst.device, src.device) != spaces and (dst.device or src.device):
            direction = "host to device" if spaces[0] else "device to host"
            raise HostCodeError(f"line {line}: cudaMemcpy {direction} from `{src.name}` to `{dst.name}`: "
                                f"{'device' if src.device else 'host'} to {'device' if dst.device else 'host'} memory")  # fmt: skip
        for b in (dst, src):
            self.reach(b, count, f"line {line}: cudaMemcpy of {count} bytes")
        if not self.run.dry:
            dst.data.view(np.uint8)[:count] = src.data.view(np.uint8)[:count]
        return 0

    def memset(self, call: ir.Call) -> Value:
        dst = self.buffer(call.args[0], "cudaMemset's destination")
        value, count = _int(self.value(call.args[1]), call.args[1]), _int(self.value(call.args[2]), call.args[2])
        self.reach(dst, count, f"line {call.range.line}: cudaMemset of {count} bytes")
        if not self.run.dry:
            dst.data.view(np.uint8)[:count] = value & 0xFF
        return 0

    def reach(self, b: Buffer, count: int, what: str) -> None:
        """`count` bytes of `b` are used: past a device allocation is an error; an array parameter
        must have them (in a dry run: recorded)."""
        if b.device or not self.run.dry:
            if count > b.data.nbytes:
                error = HostCodeError if b.device else NotTranslatable
                raise error(f"{what} reaches past the end of `{b.name}` ({b.data.nbytes} bytes)")
        else:
            elements = -(-count // b.data.itemsize)
            self.run.needs[b.name] = max(self.run.needs.get(b.name, 0), elements)

    def free(self, call: ir.Call) -> Value:
        b = self.buffer(call.args[0], "cudaFree's argument")
        if not b.device:
            raise HostCodeError(f"line {call.range.line}: cudaFree of `{b.name}`, which cudaMalloc did not allocate")
        b.freed = True
        return 0

    def exits(self, call: ir.Call) -> Value:
        raise HostCodeError(f"line {call.range.line}: the host code calls `{call.name}` (its error path)")

    # ---------------------------------------------------------------------------- launches

    def launch(self, call: ir.Call, launch: ir.Launch) -> None:
        kernel = self.functions[call.name]
        buffers = {p.name: self.buffer(a, f"`{call.name}`'s argument") for p, a in zip(kernel.params, call.args, strict=True)
                   if isinstance(p.type, ir.Pointer | ir.Array)}  # fmt: skip
        numbers = {k: v for k, v in self.env.items() if isinstance(v, int | float)}
        cpu = compiled(kernel)
        values, grid = bind(kernel, call, launch, numbers, {k: b.data for k, b in buffers.items()}, by_param=True)
        need = footprint(cpu.model, {k: v for k, v in values.items() if isinstance(v, int)}, grid)
        for name, count in need.items():
            b = buffers[name]
            self.reach(b, count * b.data.itemsize, f"`{call.name}` at line {launch.range.line} touches {count} elements of `{name}`, which")
        if self.run.dry:
            return
        run = self.run
        seconds = run.launcher(kernel, cpu, values, grid, self.parallel) if run.launcher else cpu(values, grid, self.parallel)
        run.launches.append((call.name, seconds))


_RUNTIME: dict[str, Callable[[_Interpreter, ir.Call], Value]] = {
    "cudaMalloc": _Interpreter.malloc,
    "cudaMemcpy": _Interpreter.memcpy,
    "cudaMemset": _Interpreter.memset,
    "cudaFree": _Interpreter.free,
    "cudaDeviceSynchronize": lambda _, __: 0,
    "cudaThreadSynchronize": lambda _, __: 0,
    "cudaGetLastError": lambda _, __: 0,
    "cudaPeekAtLastError": lambda _, __: 0,
    "exit": _Interpreter.exits,
    "abort": _Interpreter.exits,
}


def evaluate(e: ir.Expr, env: Mapping[str, Value], call: Callable[[ir.Call], Value] | None = None) -> Value:
    """`e`'s value as C computes it from `env` (integers truncating, ``&&`` and ``?:`` lazy);
    calls go to `call`."""

    def ev(x: ir.Expr) -> Value:
        return evaluate(x, env, call)

    if isinstance(e, ir.IntLit | ir.FloatLit):
        return e.value
    if isinstance(e, ir.Var):
        if e.name not in env:
            raise NotTranslatable(f"line {e.range.line}: `{e.name}` is not a value the host code computes")
        return env[e.name]
    if isinstance(e, ir.Cast):
        return _converted(ev(e.operand), e.type)
    if isinstance(e, ir.Unary) and e.op in _UNARY:
        return _UNARY[e.op](_numeric(ev(e.operand), e))
    if isinstance(e, ir.Binary) and e.op in ("&&", "||"):
        first = bool(ev(e.lhs))
        return int(first if first == (e.op == "||") else bool(ev(e.rhs)))
    if isinstance(e, ir.Binary):
        return _arith(e.op, ev(e.lhs), ev(e.rhs), e)
    if isinstance(e, ir.Ternary):
        return ev(e.then) if ev(e.cond) else ev(e.other)
    if isinstance(e, ir.Call) and call is not None:
        return call(e)
    raise NotTranslatable(f"line {e.range.line}: `{_text(e)}` is not an expression the CPU translation computes")


def bind(kernel: ir.Function, call: ir.Call, launch: ir.Launch, env: Mapping[str, Value],
         arrays: Mapping[str, np.ndarray], by_param: bool = False) -> tuple[dict[str, object], dict[str, int]]:  # fmt: skip
    """A launch's arguments by the kernel's parameter names (`arrays` by the caller's names, or
    the kernel's with `by_param`; None where not given; numbers computed from `env`) and its grid."""
    values: dict[str, object] = {}
    for param, arg in zip(kernel.params, call.args, strict=True):
        if isinstance(param.type, ir.Pointer | ir.Array):
            key = param.name if by_param else arg.name if isinstance(arg, ir.Var) else None
            values[param.name] = arrays.get(key) if key is not None else None
        else:
            values[param.name] = _number(arg, env, param.type)
    return values, {a: _int(evaluate(e, env), e) for a, e in zip("xyz", launch.grid_exprs, strict=False)}


def _number(e: ir.Expr, env: Mapping[str, Value], typ: ir.CType) -> int | float:
    value = evaluate(e, env)
    if isinstance(typ, ir.Scalar) and not typ.is_integer:
        return float(_numeric(value, e))
    return _int(value, e)


# ------------------------------------------------------------------------------ C arithmetic


def _numeric(v: Value, e: ir.Expr) -> int | float:
    if not isinstance(v, int | float):
        raise NotTranslatable(f"line {e.range.line}: `{_text(e)}` is not a number")
    return v


def _int(v: Value, e: ir.Expr) -> int:
    if not isinstance(v, int):
        raise NotTranslatable(f"line {e.range.line}: `{_text(e)}` is not an integer the host code computes from its sizes")
    return v


def _c_div(a: int | float, b: int | float) -> int | float:
    if isinstance(a, int) and isinstance(b, int):
        q = abs(a) // abs(b)
        return q if (a < 0) == (b < 0) else -q
    return a / b


def _c_mod(a: int, b: int) -> int:
    return a - int(_c_div(a, b)) * b


_ARITH: dict[str, Callable[[int | float, int | float], int | float]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": _c_div, "%": _c_mod,  # type: ignore[dict-item]
    "<<": operator.lshift, ">>": operator.rshift, "&": operator.and_, "|": operator.or_, "^": operator.xor,  # type: ignore[dict-item]
    "<": lambda a, b: int(a < b), "<=": lambda a, b: int(a <= b), ">": lambda a, b: int(a > b),
    ">=": lambda a, b: int(a >= b), "==": lambda a, b: int(a == b), "!=": lambda a, b: int(a != b),
}  # fmt: skip
_UNARY: dict[str, Callable[[int | float], int | float]] = {
    "-": operator.neg, "+": operator.pos, "!": lambda a: int(not a), "~": operator.invert,  # type: ignore[dict-item]
}


def _arith(op: str, a: Value, b: Value, e: ir.Expr) -> int | float:
    x, y = _numeric(a, e), _numeric(b, e)
    if op not in _ARITH or (op in ("/", "%") and y == 0 and isinstance(y, int)):
        raise NotTranslatable(f"line {e.range.line}: `{_text(e)}` is not computed by the CPU translation")
    return _ARITH[op](x, y)


def _converted(v: Value, typ: ir.CType | None) -> Value:
    """`v` as C converts it to `typ`: truncated to an integer, or a float."""
    if isinstance(typ, ir.Scalar) and isinstance(v, int | float):
        return (int(v) if typ.name != "_Bool" else int(bool(v))) if typ.is_integer else float(v)
    return v


def _dtype(typ: ir.CType) -> np.dtype:
    elem = typ.pointee if isinstance(typ, ir.Pointer) else typ.elem if isinstance(typ, ir.Array) else typ
    return scalar_dtype(str(elem).replace("const ", "")) if isinstance(elem, ir.Scalar) else np.dtype(np.float64)


def _text(e: ir.Expr) -> str:
    if isinstance(e, ir.OpaqueExpr) and e.text:
        return e.text
    return e.name if isinstance(e, ir.Var) else f"the expression at column {e.range.col}"


# ------------------------------------------------------------------------------ `hexplore run` on CUDA


@dataclass(frozen=True)
class CudaRunReport:
    """`hexplore run FILE.cu --function HOST`: the host function run through the CPU translation on
    all cores, checked against the same translation on one thread (blocks in order)."""

    function: str
    sizes: dict[str, int]
    launches: tuple[tuple[str, float, float], ...]  # kernel, seconds in parallel, seconds on one thread
    mismatched: tuple[str, ...]  # arrays that differ between the two runs

    @property
    def match(self) -> bool:
        return not self.mismatched

    def text(self) -> str:
        sizes = ", ".join(f"{k}={v}" for k, v in self.sizes.items())
        lines = [f"CUDA on the CPU: {self.function}({sizes}), {len(self.launches)} launch(es), each kernel "
                 "translated from its model (blocks in parallel with OpenMP, threads as loops between barriers)"]  # fmt: skip
        width = max((len(k) for k, _, _ in self.launches), default=0)
        for kernel, par, seq in self.launches:
            lines.append(f"  {kernel:<{width}}  all cores {_ms(par)}  one thread {_ms(seq)}")
        verdict = "match" if self.match else f"DIFFER: {', '.join(self.mismatched)}"
        lines.append(f"arrays on all cores vs one thread: {verdict}")
        return "\n".join(lines)


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:8.3f} ms"


def check_host(path: str, text: str | None, host: str, sizes: Mapping[str, int]) -> CudaRunReport:
    """Run `host` of `path` on deterministic inputs twice: in parallel and on one thread."""
    from core_compiler.frontend import run_frontend

    functions = {f.name: f for f in run_frontend(path, text).functions}
    if host not in functions:
        raise NotTranslatable(f"no function `{host}` in {path}")
    fn = functions[host]
    pointers = [p for p in fn.params if isinstance(p.type, ir.Pointer)]
    scalars: dict[str, int | float] = {p.name: sizes.get(p.name, 64) for p in fn.params if p not in pointers}
    needs = host_needs(functions, host, tuple(p.name for p in pointers), scalars)
    rng = np.random.default_rng(0)
    inputs = {p.name: _random(p.type, needs.get(p.name, 0), rng) for p in pointers}
    runs = []
    for parallel in (True, False):
        arrays = {k: v.copy() for k, v in inputs.items()}
        runs.append((arrays, run_host(functions, host, arrays, scalars, parallel)))
    (par, par_run), (seq, seq_run) = runs
    differ = tuple(k for k in inputs if not np.allclose(par[k], seq[k], rtol=1e-5, atol=1e-6, equal_nan=True))
    timed = tuple((k, a, b) for (k, a), (_, b) in zip(par_run.launches, seq_run.launches, strict=True))
    return CudaRunReport(host, {k: int(v) for k, v in scalars.items()}, timed, differ)


def _random(typ: ir.CType, count: int, rng: np.random.Generator) -> np.ndarray:
    assert isinstance(typ, ir.Pointer)
    elem = typ.pointee
    dtype = scalar_dtype(str(elem).replace("const ", "")) if isinstance(elem, ir.Scalar) else np.dtype(np.float64)
    size = max(count, 1)
    if dtype.kind == "f":
        return rng.random(size).astype(dtype)
    return rng.integers(0, 10, size).astype(dtype)
