"""Runs from the editor (`explorer.running`): the document's text, built as the settings say."""

from __future__ import annotations

from pathlib import Path

from explorer.running import default_params, run_function
from explorer.settings import Settings
from explorer.workspace import Workspace

SOURCE = """#include <common.h>
#include "sizes.h"
extern void *alloc_elsewhere(unsigned long);  /* another file of the program */
void scale(int n, double A[N][N]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      A[i][j] *= FACTOR;
}
int main(void) { scale(N, alloc_elsewhere(N * N * sizeof(double))); return 0; }
"""


def test_a_run_finds_the_documents_headers_and_fits_its_fixed_arrays(tmp_path: Path) -> None:
    """The unsaved text runs from a scratch copy: its own directory and the settings' include
    paths are searched, the settings' macros set, and the default size (64) shrinks to the
    16 that ``A[N][N]`` with N = 20 holds."""
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "common.h").write_text("#define FACTOR 2.0\n")
    (tmp_path / "sizes.h").write_text("#ifndef N\n#define N 64\n#endif\n")
    path = tmp_path / "scale.c"
    path.write_text(SOURCE)
    ws = Workspace(Settings(include_paths=("inc",), defines=("N=20",)), root=str(tmp_path))
    doc = ws.open_file(str(path))
    fr = ws.analyze(doc.uri).function("scale")
    assert fr is not None and fr.analysis.scops
    path.write_text("")  # the run reads the document's text, not the file
    sizes = default_params(fr.analysis)
    report = run_function(doc.path, "scale", "opencl", sizes, parse=ws.parse_options(doc.path), text=doc.text)
    assert (report.status, report.params, report.kernels) == ("ok", {"n": 16}, 1), report.message
