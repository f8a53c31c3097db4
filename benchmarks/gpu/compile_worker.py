"""One hexplore, many `hexplore` command lines: reads a JSON list of arguments per line on stdin,
runs `tui.cli.main` on it in this process (saving the second of start-up that each `hexplore
compile` costs) and answers each with one line `@@HXRESULT@@ {"rc": ..., "log": ...}` on stdout.
Run with the hexplore to use on PYTHONPATH (bundle.py does)."""

from __future__ import annotations

import contextlib
import io
import json
import sys
import traceback

MARK = "@@HXRESULT@@ "


def run(argv: list[str]) -> dict[str, object]:
    log = io.StringIO()
    with contextlib.redirect_stderr(log), contextlib.redirect_stdout(log):
        try:
            from tui.cli import main  # a revision that does not import says so in the log

            rc = main(argv)
        except SystemExit as e:
            rc = e.code if isinstance(e.code, int) else 1
        except Exception:
            traceback.print_exc()
            rc = 99
    return {"rc": rc or 0, "log": log.getvalue()}


def serve() -> None:
    for line in sys.stdin:
        result = run(json.loads(line))
        sys.stdout.write(MARK + json.dumps(result) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    serve()
