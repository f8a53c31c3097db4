"""Coverage on C as people write it (`tests/coverage/*.c`, issue 26): loops calling helpers,
undeclared built-ins (`min`, `floord`, `__pencil_assume`), induction variables, `break`,
`continue`, structs (`control.c`'s `move`, `structs.c`) and run-time steps (`steps.c`). Each function is *modeled* (every loop nest in a SCoP), *partly* (some)
or *no*; the test pins each function's state, so that a regression, or a construct that starts
to be modeled, shows here. ``python -m tests.test_coverage_corpus`` prints the table.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from core_compiler.analysis import FunctionAnalysis, analyze_file
from core_compiler.remarks import RemarkKind
from tests.helpers import runs_everywhere

CORPUS = Path(__file__).parent / "coverage"

# function -> (state, the first refusal's name or "")
EXPECTED = {
    "clip_then_scale": ("partly", "ImpureCall"),
    "tiled_copy": ("partly", "NonAffineLoopBound"),
    "assumed": ("yes", ""),
    "shift_left": ("yes", ""),
    "neighbours": ("yes", ""),
    "flat_rows": ("yes", ""),
    "stride_two": ("yes", ""),
    "running_offset": ("yes", ""),
    "copy_count": ("yes", ""),
    "interleave": ("no", "NonAffineSubscript"),
    "clamp_all": ("yes", ""),
    "bump_all": ("yes", ""),
    "through_index": ("yes", ""),
    "report": ("yes", ""),  # `printf("%f\n", a[i])`: a variadic opaque call (test_opaque_arguments.py)
    "axpy_rows": ("yes", ""),
    "signs": ("yes", ""),
    "sum_into_global": ("yes", ""),  # `accumulate(a[i])` is an opaque call (test_opaque_calls.py)
    "find_first": ("no", "NonAffineCondition"),
    "skip_odd": ("yes", ""),
    "lower_triangle": ("yes", ""),
    "move": ("yes", ""),  # `bodies[i].vx`: fields as arrays (test_struct_fields.py)
    "drift": ("yes", ""),
    "kick": ("yes", ""),
    "clear_samples": ("no", "StructField"),  # a `double` and an `int` field of one array of structs
    "scale_matrix": ("no", "StructField"),  # `mat->n`, `mat->data[i]`: fields of one struct
    "every_kth": ("yes", ""),  # `i += k`: a run-time step (test_run_time_steps.py)
    "block_sums": ("yes", ""),
    "countdown": ("yes", ""),  # `i -= k`
}


def state(fa: FunctionAnalysis) -> tuple[str, str, str]:
    """("yes" | "partly" | "no", the first refusal's name, its message)."""
    missed = [r for r in fa.remarks if r.kind is RemarkKind.MISSED]
    first = (missed[0].name, missed[0].message) if missed else ("", "")
    if not missed and fa.scops:
        return "yes", *first
    return ("partly" if fa.scops else "no"), *first


Row = tuple[str, str, str, str, str]  # file, function, state, first refusal, its message


def rows() -> list[Row]:
    out = []
    for path in sorted(CORPUS.glob("*.c")):
        for fa in analyze_file(str(path)).functions:
            if fa.function.name in ("clamp", "bump", "idx", "axpy_row", "sign", "accumulate"):
                continue  # the helpers themselves
            out.append((path.name, fa.function.name, *state(fa)))
    return out


@pytest.fixture(scope="module")
def table() -> list[Row]:
    return rows()


def test_every_function_is_where_it_was_left(table: list[Row]) -> None:
    got = {name: (st, first) for _, name, st, first, _ in table}
    assert got == EXPECTED


def test_no_syntax_errors() -> None:
    for path in sorted(CORPUS.glob("*.c")):
        assert not [r for r in analyze_file(str(path)).remarks if r.name == "SyntaxError"], path


@pytest.mark.parametrize(
    "file, function",
    [("induction.c", f) for f in ("shift_left", "neighbours", "flat_rows", "stride_two", "running_offset", "copy_count")]
    + [("control.c", "skip_odd"), ("control.c", "lower_triangle"), ("control.c", "move")]
    + [("structs.c", "drift"), ("structs.c", "kick")]
    + [("helpers.c", f) for f in ("clamp_all", "bump_all", "axpy_rows", "signs")],
)
def test_what_became_modeled_runs_and_matches(file: str, function: str) -> None:
    """The functions of the corpus that are one modeled nest; those of `builtins.c` call functions
    that exist nowhere, so they are not run (and a run checks one nest a function)."""
    sizes = [{"n": 37, "m": 5}, {"n": 1, "m": 1}, {"n": 0, "m": 0}, {"n": 2, "m": 33}]
    runs_everywhere(str(CORPUS / file), function, sizes)


def main() -> None:
    table = rows()
    modeled = sum(1 for r in table if r[2] == "yes")
    partly = sum(1 for r in table if r[2] == "partly")
    print(f"modeled {modeled}/{len(table)} (partly: {partly})")
    print("| file | function | modeled? | first refusal |")
    print("|---|---|---|---|")
    for file, name, st, first, message in table:
        said = f"{first}: {message}" if first else "-"
        print(f"| {file} | `{name}` | {st} | {said} |")


if __name__ == "__main__":
    main()
