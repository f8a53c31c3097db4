"""`hexplore tune`: a search over a kernel's compiler choices, each candidate built, checked
against the original and timed, the fastest kept in the tuning cache for `compile` and `run`.

- `space.py` — the choices per kernel (CPU: schedule variant, tile size per band member, threads;
  OpenCL: tile and block sizes per member, i.e. thread coarsening, shared and register promotion)
  and their static pruning (work-group size, shared memory, extents).
- `search.py` — the searchers: exhaustive, and Tensor Comprehensions' evolutionary search, with
  a time budget and early stopping; pure, tested with a cost function.
- `measure.py` — one candidate, in a worker: built, run, checked against the reference, timed
  (one timing at a time per machine: builds run in parallel, measurements do not contend).
- `engine.py` — where candidates run: Ray (in-process local instance, or ``ray://`` cluster),
  else a local process pool, else this process.
- `driver.py` — the tuning of one function: the space from the default mapping, the search,
  the records (`runtime/tuning.py`) and the result table.
"""
