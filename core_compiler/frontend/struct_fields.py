"""The fields of an array of structs, read as arrays: ``bodies[i].vx`` is column 1 of ``bodies``.

Before::

    struct body { double x, vx; };
    void move(int n, struct body *bodies, double dt) {
      for (int i = 0; i < n; i++)
        bodies[i].x += dt * bodies[i].vx;
    }

After: ``bodies`` is ``double (*bodies)[2]`` with the columns named ``x`` and ``vx``
(`ir.Array.fields`), and the statement is ``bodies[i][0] += dt * bodies[i][1]``. That is the
struct's memory exactly, not a copy: the columns are the fields' offsets in units of their type and
a row is ``sizeof(struct body)``, both as the compiler lays them out (libclang's offsets and sizes),
so two fields of one element are two columns (distinct memory) and one field is one column (the
same memory). The C target prints the access back as ``bodies[i].vx``; LLVM addresses it with the
struct's stride. An `ir.Note` (`FieldsAsArrays`) says so.

Read this way: a parameter that points to structs (``struct body *p``, ``struct body p[n]``), used
only as ``p[e].f`` or ``p->f`` (``p[0].f``), whose fields used are numbers of one type at offsets
that are multiples of its size. Anything else that reaches a field is refused with a remark naming
the field (`StructField`): a field of another type than the others, an array, pointer or struct
field (``p->x[i]``, ``s.a[i][j]``), a struct that is not such a parameter, a parameter also used
whole (``f(bodies)``, ``bodies[i] = b``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import clang.cindex as ci

from core_compiler.frontend import ir
from core_compiler.frontend.clang_parse import unwrap
from core_compiler.frontend.clang_types import NO_RANGE, ctype
from core_compiler.source import SourceRange

K = ci.CursorKind
T = ci.TypeKind


@dataclass(frozen=True)
class FieldUse:
    """``p[e1]...[ek].f`` (``p->f``: no index) with `p` a parameter."""

    param: str
    indices: tuple[ci.Cursor, ...]
    field: str
    cursor: ci.Cursor


@dataclass(frozen=True)
class View:
    """Parameter `param`'s structs read as rows of `width` numbers of type `elem`."""

    param: str
    struct: str  # "struct body"
    elem: str  # "double"
    width: int  # sizeof(struct) / sizeof(elem)
    columns: dict[str, int]  # field -> column, for the fields used
    rows: int  # the parameter's own array dimensions (1 for a pointer)

    @property
    def names(self) -> tuple[str, ...]:
        """The field at each column ("" where no field used starts)."""
        at = {c: f for f, c in self.columns.items()}
        return tuple(at.get(c, "") for c in range(self.width))


@dataclass(frozen=True)
class Views:
    views: dict[str, View]  # by parameter
    refused: dict[str, str]  # parameter -> why its fields are not read as arrays (names a field)


def field_use(cur: ci.Cursor, params: dict[str, ci.Cursor]) -> FieldUse | None:
    """`cur` (a member reference) as a field of a struct parameter's element, else None."""
    if cur.kind != K.MEMBER_REF_EXPR:
        return None
    base = next(iter(cur.get_children()), None)
    if base is None:
        return None
    node, indices = unwrap(base), []
    while node.kind == K.ARRAY_SUBSCRIPT_EXPR:
        inner, index = node.get_children()
        indices.append(index)
        node = unwrap(inner)
    if node.kind != K.DECL_REF_EXPR or node.spelling not in params or not _is_param(node):
        return None
    if not indices and node.type.get_canonical().kind != T.POINTER:
        return None  # `s.f` of a struct passed by value
    return FieldUse(node.spelling, tuple(reversed(indices)), cur.spelling, cur)


def views(body: ci.Cursor, params: list[ci.Cursor], text: Callable[[ci.Cursor], str]) -> Views:
    """Which struct parameters of the function with body `body` are read as rows of their fields."""
    structs = {p.spelling: p for p in params if _struct_of(p.type) is not None}
    if not structs:
        return Views({}, {})
    uses: dict[str, list[FieldUse]] = {}
    whole: dict[str, str] = {}
    for kind, found in _walk(body, structs):
        if isinstance(found, FieldUse):
            uses.setdefault(found.param, []).append(found)
        else:
            whole.setdefault(found.spelling, text(kind))
    out, refused = {}, {}
    for name, found in uses.items():
        if name in whole:
            refused[name] = (
                f"`{name}` is also used whole (`{whole[name]}`), not only through its fields; hexplore "
                f"reads the fields of an array of structs as arrays only where every use is a field "
                f"(`{name}[i].f`)"
            )
            continue
        view = _view(structs[name], found, text)
        if isinstance(view, str):
            refused[name] = view
        else:
            out[name] = view
    return Views(out, refused)


def _walk(cur: ci.Cursor, structs: dict[str, ci.Cursor]) -> Iterator[tuple[ci.Cursor, FieldUse | ci.Cursor]]:
    """Each field use of a struct parameter, and each other use (the parameter's reference)."""
    use = field_use(cur, structs)
    if use is not None:
        yield cur, use
        for index in use.indices:
            yield from _walk(index, structs)
        return
    if cur.kind == K.DECL_REF_EXPR and cur.spelling in structs and _is_param(cur):
        yield cur, cur
        return
    for child in cur.get_children():
        yield from _walk(child, structs)


def _is_param(ref: ci.Cursor) -> bool:
    """Whether the reference `ref` names a parameter (not a local that shadows one)."""
    return ref.referenced is not None and ref.referenced.kind == K.PARM_DECL


def _struct_of(typ: ci.Type) -> tuple[ci.Type, int] | None:
    """The struct type a parameter's elements are, and how many array dimensions lead to it."""
    typ, rows = typ.get_canonical(), 0
    while typ.kind in (T.POINTER, T.CONSTANTARRAY, T.VARIABLEARRAY, T.INCOMPLETEARRAY):
        typ = (typ.get_pointee() if typ.kind == T.POINTER else typ.element_type).get_canonical()
        rows += 1
    if typ.kind != T.RECORD or rows != 1:
        return None
    decl = typ.get_declaration()
    return (typ, rows) if decl.kind == K.STRUCT_DECL else None


def _view(param: ci.Cursor, uses: list[FieldUse], text: Callable[[ci.Cursor], str]) -> View | str:
    found = _struct_of(param.type)
    assert found is not None
    struct, rows = found
    fields = {f.spelling: f for f in struct.get_fields()}
    name, spelling = param.spelling, struct.spelling
    elem: tuple[str, int] | None = None
    columns: dict[str, int] = {}
    for use in uses:
        field = fields.get(use.field)
        if field is None:
            return f"`{text(use.cursor)}`: hexplore does not find the field `{use.field}` in `{spelling}`"
        typ = ctype(field.type, [])
        where = f"`{text(use.cursor)}`"
        if isinstance(typ, ir.Pointer):
            return (
                f"{where} is the pointer `{use.field}` stored in each `{spelling}`: hexplore cannot "
                f"tell which array it points to, nor that it stays the same; pass `{text(use.cursor)}` "
                f"to a function that takes it as a parameter (`{typ}{use.field}`) and loop there"
            )
        if not isinstance(typ, ir.Scalar) or field.is_bitfield():
            what = "a bit-field" if field.is_bitfield() else f"a field of type `{field.type.spelling}`"
            return (
                f"{where} is {what}; hexplore reads the fields of an array of structs as arrays only "
                f"where they are numbers (`double {use.field};`), so `{use.field}` of `{spelling}` "
                "is not modeled"
            )
        size = field.type.get_size()
        if elem is not None and elem[0] != typ.name:
            return (
                f"{where} is a `{typ.name}` field of `{spelling}`, and the loops also use its "
                f"`{elem[0]}` fields ({', '.join(f'`{f}`' for f in columns)}); hexplore reads the "
                "fields of an array of structs as arrays only where the fields used have one type"
            )
        elem = (typ.name, size)
        offset = struct.get_offset(use.field)
        if size <= 0 or offset < 0 or offset % (8 * size):
            return f"{where}: the field `{use.field}` of `{spelling}` is not at a multiple of its size"
        columns[use.field] = offset // (8 * size)
    assert elem is not None
    whole = struct.get_size()
    if whole <= 0 or whole % elem[1]:
        return f"`{spelling}` ({whole} bytes) is not a whole number of `{elem[0]}`s, the type of `{name}`'s fields used"
    return View(name, spelling, elem[0], whole // elem[1], columns, rows)


def view_type(typ: ir.CType, view: View) -> ir.CType:
    """A parameter's type with its structs as rows of `view.width` numbers: ``struct body *`` is
    ``double (*)[2]``, ``struct body b[n]`` is ``double b[n][2]``."""
    row = ir.Array(ir.Scalar(view.elem), (ir.IntLit(view.width, NO_RANGE),), view.names)
    if isinstance(typ, ir.Pointer):
        return ir.Pointer(row)
    assert isinstance(typ, ir.Array) and len(typ.dims) == 1
    return ir.Array(ir.Scalar(view.elem), (*typ.dims, ir.IntLit(view.width, NO_RANGE)), view.names)


def note(view: View, rng: SourceRange) -> ir.Note:
    cols = ", ".join(f"`{f}` is column {c}" for f, c in sorted(view.columns.items(), key=lambda fc: fc[1]))
    message = (
        f"`{view.param}` is read as an array of rows of {view.width} `{view.elem}`s, one row per "
        f"`{view.struct}` ({cols}): each field used is an array of its own, in the structs' memory "
        f"(`{view.param}[i].f` in the generated code)"
    )
    return ir.Note("FieldsAsArrays", message, rng)


def refusal(why: str | None, text: str) -> str:
    """The `StructField` message of the member access `text`."""
    if why is not None:
        return why
    return (
        f"`{text}` reads a field of a struct that is not an array-of-structs parameter (a pointer "
        "stored in a struct, a struct passed by value, a local or global struct); hexplore reads as "
        "arrays only the number fields of a parameter `struct s *p` used as `p[i].f`. Pass the "
        "array to a function that takes it as a parameter (`double *x`)"
    )
