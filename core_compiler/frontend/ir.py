"""The loop IR: what the front end makes of a C function, as immutable dataclasses.

Every node carries the exact source range it came from. What the IR cannot represent becomes an
explicit opaque node (`OpaqueExpr`, `OpaqueStmt`, `OtherLoop`) carrying a stable reason name and a
message, never a silent drop: SCoP detection turns those into remarks.

Example: ``for (int i = 0; i < n; i++) A[i] += 2 * x;`` is
``For(var="i", init=IntLit(0), cond=Binary("<", Var("i"), Var("n")), step=1,
body=(Assign(Subscript("A", (Var("i"),)), "+=", Binary("*", IntLit(2), Var("x"))),))``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from core_compiler.source import SourceRange

# ---------------------------------------------------------------------------------------- types


@dataclass(frozen=True)
class Scalar:
    """A C arithmetic type, by its canonical spelling (``int``, ``double``, ``unsigned long``)."""

    name: str

    @property
    def is_integer(self) -> bool:
        return self.name not in ("float", "double", "long double", "half", "__half")

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Pointer:
    pointee: CType

    def __str__(self) -> str:
        return f"{self.pointee} *"


@dataclass(frozen=True)
class Array:
    """A (possibly variable-length) array type; ``dims`` outermost first, ``None`` for ``[]``."""

    elem: CType
    dims: tuple[Expr | None, ...]
    # an array of structs read as rows of their number fields (`struct_fields.py`): the field at
    # each position of the innermost dimension ("" for none), which the C target prints `p[i].vx`
    fields: tuple[str, ...] = ()

    def __str__(self) -> str:
        return str(self.elem) + "".join(f"[{'' if d is None else d}]" for d in self.dims)


@dataclass(frozen=True)
class OtherType:
    """Structs, function pointers and anything else the loop IR does not look into."""

    spelling: str

    def __str__(self) -> str:
        return self.spelling


CType = Scalar | Pointer | Array | OtherType

# ---------------------------------------------------------------------------------- expressions


@dataclass(frozen=True)
class IntLit:
    value: int
    range: SourceRange

    def __str__(self) -> str:
        return str(self.value)


@dataclass(frozen=True)
class FloatLit:
    value: float
    text: str
    range: SourceRange

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class StrLit:
    """A string literal as written (``"%f\\n"``): only an argument of a call hexplore does not see
    into (`CallSignature`), such as ``printf``'s format."""

    text: str
    range: SourceRange

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Var:
    name: str
    range: SourceRange
    type: CType | None = None  # the declared type, when the front end knows it

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Subscript:
    """``A[i][j]``: a named array (or pointer) and its subscripts, outermost first."""

    base: str
    indices: tuple[Expr, ...]
    range: SourceRange
    base_range: SourceRange
    field: str = ""  # `bodies[i].vx` read as `bodies[i][1]` (`struct_fields.py`): printed as written

    def __str__(self) -> str:
        if self.field:
            return self.base + "".join(f"[{i}]" for i in self.indices[:-1]) + "." + self.field
        return self.base + "".join(f"[{i}]" for i in self.indices)


@dataclass(frozen=True)
class Unary:
    op: str  # "-", "+", "!", "~"
    operand: Expr
    range: SourceRange

    def __str__(self) -> str:
        return f"({self.op}{self.operand})"


@dataclass(frozen=True)
class Binary:
    op: str  # + - * / % << >> & | ^ < <= > >= == != && ||
    lhs: Expr
    rhs: Expr
    range: SourceRange

    def __str__(self) -> str:
        return f"({self.lhs} {self.op} {self.rhs})"


@dataclass(frozen=True)
class Ternary:
    cond: Expr
    then: Expr
    other: Expr
    range: SourceRange

    def __str__(self) -> str:
        return f"({self.cond} ? {self.then} : {self.other})"


@dataclass(frozen=True)
class CallSignature:
    """What the prototype of a function whose body hexplore does not see says: the C types of its
    result and parameters (``double``, ``double *``), which pointer parameters point to `const`, and
    whether it is declared ``__attribute__((pure))`` or ``((const))`` (no effect but its value)."""

    result: str
    params: tuple[str, ...]
    const_pointees: tuple[bool, ...]
    pure: bool = False
    variadic: bool = False


@dataclass(frozen=True)
class Call:
    name: str
    args: tuple[Expr, ...]
    range: SourceRange
    declared: bool = True  # False: C89's implicit declaration, a function nothing is known of
    signature: CallSignature | None = None  # a prototyped function that is neither math nor inlined
    unknown: str = ""  # why a call of neither has no signature: "takes a `FILE *` (parameter 1)"

    def __str__(self) -> str:
        return f"{self.name}({', '.join(map(str, self.args))})"


@dataclass(frozen=True)
class Cast:
    type: CType
    operand: Expr
    range: SourceRange

    def __str__(self) -> str:
        return f"(({self.type}){self.operand})"


@dataclass(frozen=True)
class OpaqueExpr:
    """An expression the loop IR does not model (``*p``, ``s.x``, ``i++`` inside an expression)."""

    reason: str
    message: str
    text: str
    range: SourceRange

    def __str__(self) -> str:
        return self.text


Expr = IntLit | FloatLit | StrLit | Var | Subscript | Unary | Binary | Ternary | Call | Cast | OpaqueExpr

# The functions a `Call` may name in a modeled loop nest: pure math the backends know. The front
# end also needs them, to tell which small helpers it can inline (`lower.py`).
PURE_MATH = frozenset(
    ["sqrt", "sqrtf", "exp", "expf", "exp2", "log", "logf", "log2", "log10", "pow", "powf", "fabs", "fabsf", "abs", "labs", "sin", "sinf", "cos", "cosf", "tan", "tanf", "tanh", "tanhf", "sinh", "cosh", "asin", "acos", "atan", "atan2", "floor", "floorf", "ceil", "ceilf", "fmax", "fmaxf", "fmin", "fminf", "fmod", "fmodf", "round", "trunc", "cbrt", "hypot", "erf", "min", "max"]
)


def is_pure_math(call: Call) -> bool:
    """Whether `call` is one of `PURE_MATH`, declared (an undeclared `min` is not C's `min`)."""
    return call.declared and call.name in PURE_MATH


# ----------------------------------------------------------------------------------- statements


@dataclass(frozen=True)
class Assign:
    """``target op value`` with op ``=`` or a compound operator (``+=``, ``*=``, …).

    ``x++`` and ``x--`` as statements are lowered to ``x += 1`` and ``x -= 1``.
    """

    target: Var | Subscript
    op: str
    value: Expr
    range: SourceRange


@dataclass(frozen=True)
class Decl:
    """A local variable declaration, with its initializer if any."""

    name: str
    type: CType
    init: Expr | None
    range: SourceRange
    shared: bool = False  # CUDA's `__shared__`: one array per thread block


@dataclass(frozen=True)
class For:
    """A canonical for loop: ``var = init; cond; var += step`` with a constant non-zero step.

    ``cond`` is the whole loop condition; SCoP detection checks that it is affine.
    """

    var: str
    init: Expr
    cond: Expr
    step: int
    body: tuple[Stmt, ...]
    range: SourceRange
    header_range: SourceRange
    declares_var: bool


@dataclass(frozen=True)
class If:
    cond: Expr
    then: tuple[Stmt, ...]
    other: tuple[Stmt, ...]
    range: SourceRange


@dataclass(frozen=True)
class OtherLoop:
    """A loop that is not a canonical ``for`` (``while``, ``do``, or a ``for`` with a strange header).

    The body is still lowered so that SCoPs inside it can be found.
    """

    kind: str  # "while" | "do" | "for"
    reason: str
    message: str
    body: tuple[Stmt, ...]
    range: SourceRange
    header_range: SourceRange
    header: LoopHeader | None = None  # a `for` whose counter is changed otherwise than by a constant


@dataclass(frozen=True)
class LoopHeader:
    """The parts of ``for (var = init; cond; var op= value)`` whose step is not a constant addition:
    ``s >>= 1``, ``s *= 2``, ``k += blockDim.x``. A CUDA kernel's loop over a block size becomes
    canonical (or unrolled) once the size is known (`core_compiler.cuda.grid`)."""

    var: str
    init: Expr
    cond: Expr
    op: str  # "+=" | "-=" | "*=" | "/=" | "<<=" | ">>="
    value: Expr
    declares_var: bool


@dataclass(frozen=True)
class Jump:
    kind: str  # "return" | "break" | "continue" | "goto" | "label"
    value: Expr | None
    range: SourceRange


@dataclass(frozen=True)
class ExprStmt:
    """An expression evaluated for its effect: typically a call such as ``printf(...)``."""

    expr: Expr
    range: SourceRange


@dataclass(frozen=True)
class OpaqueStmt:
    reason: str
    message: str
    range: SourceRange
    body: tuple[Stmt, ...] = ()


Stmt = Assign | Decl | For | If | OtherLoop | Jump | ExprStmt | OpaqueStmt

# ------------------------------------------------------------------------------------ functions


@dataclass(frozen=True)
class Param:
    name: str
    type: CType
    range: SourceRange
    restrict: bool = False
    volatile: bool = False  # the elements are `volatile` or `_Atomic`: accessed exactly as written
    constant: bool = False  # a `const` global or local table: read, never set, by a run
    values: tuple[int | float, ...] | None = None  # a constant table's initial values, flat (the rest are 0)
    # the declaration as written, where `type` reads it otherwise: an array of structs read as rows
    # of its fields (`struct_fields.py`) is ``struct body *bodies`` to C code that calls the function
    declared: str = ""


@dataclass(frozen=True)
class Note:
    """Something the front end read differently from the letter of the source, for a remark:
    a local pointer read as elements of an array, a NULL check taken as false."""

    name: str  # the remark's name
    message: str
    range: SourceRange


@dataclass(frozen=True)
class Directive:
    """A ``#pragma hexplore`` line above a loop (`frontend/directives.py`): where the loop nest
    below it runs. ``gpu``: offloaded whatever the profitability model says, with `block` threads
    per block (x first, as PPCG's ``--sizes``) and `tile` sizes (outermost loop first) where given;
    ``cpu``: kept on the CPU."""

    kind: str  # "gpu" | "cpu"
    text: str  # as written, from `#pragma` on (for remarks)
    range: SourceRange  # the pragma, `#` to the end of its last token
    # the code below it (blank, comment and pragma lines skipped), its line's text: a range, so
    # that the editor's cached analyses move it with the function (`explorer/relocate.py`)
    below: SourceRange | None
    block: tuple[int, ...] = ()
    tile: tuple[int, ...] = ()

    @property
    def loop_line(self) -> int:
        """The line of the code it decides for (0: none, the function ends first)."""
        return self.below.line if self.below is not None else 0


@dataclass(frozen=True)
class DirectiveProblem:
    """A ``#pragma hexplore`` line the front end cannot read: the word at fault and why."""

    message: str
    range: SourceRange


@dataclass(frozen=True)
class Launch:
    """A CUDA launch ``kernel<<<grid, block>>>(...)``: each dimension's size where it is a constant."""

    kernel: str
    grid: tuple[int | None, int | None, int | None]
    block: tuple[int | None, int | None, int | None]
    range: SourceRange
    grid_exprs: tuple[Expr, ...] = ()  # x, y, z as written (`(n + 255) / 256`), for a run on the CPU
    block_exprs: tuple[Expr, ...] = ()
    template_args: tuple[int | None, ...] = ()  # `kernel<32><<<...>>>`: the integer template arguments


@dataclass(frozen=True)
class Function:
    name: str
    return_type: CType
    params: tuple[Param, ...]
    body: tuple[Stmt, ...]
    range: SourceRange
    name_range: SourceRange
    is_cuda_kernel: bool = False
    text: str = ""  # the function's source text, the key of per-function caches
    notes: tuple[Note, ...] = ()
    globals: tuple[Param, ...] = ()  # the file-scope variables it uses, and its `const` tables
    launches: tuple[Launch, ...] = ()  # a `__global__` kernel's launches anywhere in the file
    template_params: tuple[str, ...] = ()  # a template kernel's integer parameters (`BLOCK_SIZE`)
    directives: tuple[Directive, ...] = ()  # its `#pragma hexplore` lines, in source order
    bad_directives: tuple[DirectiveProblem, ...] = ()  # `#pragma hexplore` lines it could not read

    @property
    def inputs(self) -> tuple[Param, ...]:
        """What a call depends on: the parameters, then the globals it uses."""
        return self.params + self.globals

    def param(self, name: str) -> Param | None:
        """The parameter, or the global the function uses, named `name`."""
        return next((p for p in self.inputs if p.name == name), None)


def sub_statements(stmt: Stmt) -> tuple[Stmt, ...]:
    """The statements directly nested in `stmt`, in source order."""
    if isinstance(stmt, For | OtherLoop | OpaqueStmt):
        return stmt.body
    if isinstance(stmt, If):
        return stmt.then + stmt.other
    return ()


def sub_expressions(expr: Expr) -> tuple[Expr, ...]:
    if isinstance(expr, Subscript):
        return expr.indices
    if isinstance(expr, Unary | Cast):
        return (expr.operand,)
    if isinstance(expr, Binary):
        return (expr.lhs, expr.rhs)
    if isinstance(expr, Ternary):
        return (expr.cond, expr.then, expr.other)
    if isinstance(expr, Call):
        return expr.args
    return ()


def with_sub_expressions(expr: Expr, subs: tuple[Expr, ...]) -> Expr:
    """`expr` with its `sub_expressions` replaced by `subs` (in the same order)."""
    if isinstance(expr, Subscript | Call):
        return replace(expr, indices=subs) if isinstance(expr, Subscript) else replace(expr, args=subs)
    if isinstance(expr, Unary | Cast):
        return replace(expr, operand=subs[0])
    if isinstance(expr, Binary):
        return replace(expr, lhs=subs[0], rhs=subs[1])
    if isinstance(expr, Ternary):
        return replace(expr, cond=subs[0], then=subs[1], other=subs[2])
    return expr


def walk_expr(expr: Expr):  # type: ignore[no-untyped-def]
    """Pre-order traversal of an expression tree."""
    yield expr
    for sub in sub_expressions(expr):
        yield from walk_expr(sub)


def all_exprs(stmts: tuple[Stmt, ...]) -> list[Expr]:
    out: list[Expr] = []
    for s in stmts:
        for top in stmt_exprs(s):
            out += list(walk_expr(top))
        out += all_exprs(sub_statements(s))
    return out


def stmt_exprs(s: Stmt) -> list[Expr]:
    if isinstance(s, OtherLoop) and s.header is not None:
        h = s.header
        return [h.init, h.cond, h.value]
    names = ("target", "value", "init", "cond", "expr")
    return [v for v in (getattr(s, f, None) for f in names) if isinstance(v, Expr)]


def map_expr(e: Expr, f: Callable[[Expr], Expr]) -> Expr:
    """`e` with `f` applied to every sub-expression, innermost first."""
    subs = sub_expressions(e)
    if subs:
        e = with_sub_expressions(e, tuple(map_expr(s, f) for s in subs))
    return f(e)


def map_stmts(
    stmts: tuple[Stmt, ...], f: Callable[[Expr], Expr], names: dict[str, str] | None = None
) -> tuple[Stmt, ...]:
    """`stmts` with `f` applied to each expression, and declared names renamed by `names`."""
    names = names or {}
    out: list[Stmt] = []
    for s in stmts:
        if isinstance(s, Assign):
            target = f(s.target)
            assert isinstance(target, Var | Subscript)
            out.append(replace(s, target=target, value=f(s.value)))
        elif isinstance(s, Decl):
            out.append(replace(s, name=names.get(s.name, s.name), init=None if s.init is None else f(s.init)))
        elif isinstance(s, If):
            out.append(replace(s, cond=f(s.cond), then=map_stmts(s.then, f, names), other=map_stmts(s.other, f, names)))
        elif isinstance(s, For):
            body = map_stmts(s.body, f, names)
            out.append(replace(s, var=names.get(s.var, s.var), init=f(s.init), cond=f(s.cond), body=body))
        elif isinstance(s, ExprStmt):
            out.append(replace(s, expr=f(s.expr)))
        elif isinstance(s, OtherLoop | OpaqueStmt):
            out.append(replace(s, body=map_stmts(s.body, f, names)))
        else:
            out.append(s)
    return tuple(out)
