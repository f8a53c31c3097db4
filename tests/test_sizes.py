"""PPCG's ``--sizes`` syntax: what parses to what, and the exact message for each mistake."""

from __future__ import annotations

import pytest

from core_compiler.errors import SizesError
from core_compiler.transform.sizes import format_sizes, parse_sizes, sizes_for


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "{kernel[0]->tile[32,32];kernel[0]->block[32,8];kernel[0]->grid[64,64]}",
            {0: {"tile": (32, 32), "block": (32, 8), "grid": (64, 64)}},
        ),
        ("{kernel[i]->tile[16,16]}", {None: {"tile": (16, 16)}}),
        ("  {  kernel [ 2 ] ->  block [ 8 , 4 , 2 ] ;  }  ", {2: {"block": (8, 4, 2)}}),
        (
            "{kernel[0]->tile[64]; kernel[1]->tile[8,8,8,8]; kernel[k]->grid[128]}",
            {0: {"tile": (64,)}, 1: {"tile": (8, 8, 8, 8)}, None: {"grid": (128,)}},
        ),
        ("{}", {}),
        ("{ }", {}),
    ],
)
def test_valid_forms(text: str, expected: dict[int | None, dict[str, tuple[int, ...]]]) -> None:
    assert parse_sizes(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{kernel[0]->tiles[32]}", "expected `tile`, `block` or `grid` after `->` at column 13 (found `tiles`)"),
        ("{kernel[0]->[32]}", "expected `tile`, `block` or `grid` after `->` at column 13 (found `[`)"),
        ("kernel[0]->tile[32]", "expected `{` at column 1 (found `kernel`)"),
        ("", "expected `{` at column 1 (found the end)"),
        ("{kernel[0]->tile[32]", "expected `;` or `}` at column 21 (found the end)"),
        ("{kernel[0]->tile[32]} extra", "unexpected `extra` after the closing `}` at column 23"),
        ("{kernal[0]->tile[32]}", "expected `kernel` at column 2 (found `kernal`)"),
        ("{kernel(0)->tile[32]}", "expected `[` after `kernel` at column 8 (found `(`)"),
        ("{kernel[-1]->tile[32]}", "expected a kernel number or a variable such as `i` in `kernel[...]` at column 9 (found `-`)"),
        ("{kernel[0 1]->tile[32]}", "expected `]` after the kernel index at column 11 (found `1`)"),
        ("{kernel[0] tile[32]}", "expected `->` after `kernel[...]` at column 12 (found `tile`)"),
        ("{kernel[0]->tile 32}", "expected `[` after `tile` at column 18 (found `32`)"),
        ("{kernel[0]->tile[32,]}", "expected a positive integer in the `tile` sizes at column 21 (found `]`)"),
        ("{kernel[0]->tile[]}", "expected a positive integer in the `tile` sizes at column 18 (found `]`)"),
        ("{kernel[0]->tile[32;32]}", "expected `,` or `]` in the `tile` sizes at column 20 (found `;`)"),
        ("{kernel[0]->grid[0,4]}", "grid sizes must be positive, got 0 at column 18"),
        ("{kernel[0]->block[4,4,4,4]}", "`block` takes at most 3 sizes, got 4 at column 13"),
        ("{kernel[0]->grid[4,4,4]}", "`grid` takes at most 2 sizes, got 3 at column 13"),
        ("{kernel[0]->tile[8]; kernel[0]->tile[16]}", "`tile` of kernel 0 is given twice, at columns 13 and 33"),
        ("{kernel[i]->block[8]; kernel[j]->block[4]}", "`block` of every kernel is given twice, at columns 13 and 34"),
        ("{kernel[0]->tile[8];; }", "expected `kernel` at column 21 (found `;`)"),
        ("{kernel[0]->tile[8] : i > 0}", "expected `;` or `}` at column 21 (found `:`)"),
    ],
)
def test_invalid_forms_name_the_bad_part_and_its_column(text: str, message: str) -> None:
    with pytest.raises(SizesError) as err:
        parse_sizes(text)
    assert str(err.value) == f"--sizes: {message}"
    assert isinstance(err.value, ValueError)


def test_kernel_specific_sizes_override_the_all_kernels_entry_kind_by_kind() -> None:
    sizes = parse_sizes("{kernel[i]->tile[16,16]; kernel[i]->block[16,4]; kernel[1]->tile[64,64,8]}")
    assert sizes_for(sizes, 0) == {"tile": (16, 16), "block": (16, 4)}
    assert sizes_for(sizes, 1) == {"tile": (64, 64, 8), "block": (16, 4)}
    assert sizes_for(parse_sizes("{kernel[3]->grid[2]}"), 0) == {}


def test_format_round_trips() -> None:
    text = "{kernel[i]->tile[16,16]; kernel[0]->tile[32,32]; kernel[0]->block[32,8]; kernel[2]->grid[4]}"
    sizes = parse_sizes(text)
    assert format_sizes(sizes) == text
    assert parse_sizes(format_sizes(sizes)) == sizes
