"""explorer: the workspace both UIs (lsp/, tui/) share. Plain Python, no UI library.

Code map, in the order data flows:

- `api.py`: the faces' one door into the compiler: the plain data they show (`Remark`,
  `SourceRange`, `PassRecord`, `FileAnalysis`, ...) and the operations they call (analysis,
  reports, back-end passes, compile, run).
- `commands.py`: the drivers of the `hexplore` subcommands (`tui/cli.py` parses and prints).
- `workspace.py`: open documents (URI -> text, version), `Workspace.analyze` (one version of one
  document, cancellable), the latest analyses, pass traces and artifacts per function.
- `parsing.py`: one libclang translation unit per document, reparsed on edits (precompiled
  preamble); function texts and the digest of what lies outside function bodies.
- `cache.py`: the per-function cache, keyed by everything a function's analysis depends on.
- `relocate.py`: moves a cached analysis to a function's new lines.
- `tokens.py`: whether an edit changed C's tokens or only blanks and comments (such an edit
  is applied to the last parse: libclang is not asked).
- `compile_commands.py`: per-file flags from ``compile_commands.json``, found as clangd finds it.
- `settings.py`: user settings (include paths, macros, target, tile sizes), checked.
- `lookup.py`: what is at a position (loops, accesses) and the facts a UI shows about it.
- `schedule_tree.py`: the scheduler's tree of a function's SCoPs (the `schedule[k]` pass's), as
  plain data: what ``hexplore/scheduleTree`` and the TUI's Schedule tab show.
- `views.py`: a function's back-end views as text (generated code, passes, schedule tree), for
  the code-lens commands the editor's server executes.
- `offload.py`: each loop nest's offload decision as `hexplore compile` makes it, as remarks on
  its outer loop (made in the back-end worker process; `Workspace` keeps them per function text
  and settings, with the memory placements hovers show).
- `fixes.py`: source rewrites offered as code actions: `restrict` where hexplore assumes no
  aliasing, loop interchange where no dependence forbids it.
- `configuration.py`: one code-generation configuration (target, tile and block sizes, shared
  memory, always-offload) as the TUI's option editor edits it: checked, as pipeline options,
  `compile` of one function under it, and the diff of two configurations' code.
- `running.py`: the one run (`core_compiler.runtime.run.run_function`, in the core's one worker
  process with a time limit) and its `RunReport`, for `hexplore run`, the TUI and the editor.

*Architecture invariant:* explorer imports core_compiler and nothing of lsp/ or tui/; it never
imports pygls, lsprotocol or textual. lsp/ and tui/ import explorer, never core_compiler
(`tests/test_layering.py`). Positions are the core's (1-based lines, byte columns).

This file imports nothing, so that a worker process loading `explorer.jobs` does not load the
compiler with it; import `explorer.api` for the compiler's types and operations.

*Architecture invariant:* an incremental analysis equals a from-scratch one (the robustness tests
check this on random edits); the cache is an optimisation, never a source of different answers.
"""
