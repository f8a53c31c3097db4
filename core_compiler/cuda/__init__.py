"""CUDA programs as input: a `__global__` kernel modeled over its thread grid, and what that model
shows — data races, barriers that diverge or order nothing, uncoalesced global accesses and
shared-memory bank conflicts.

- `grid.py` — the kernel as a loop nest over blocks and threads (the block size from its
  launches), modeled by the same region checks and isl model as C loops (`KernelModel`);
- `races.py` — conflicting accesses of two threads that no barrier orders, with a witness;
  barriers under thread-dependent conditions, barriers that order nothing;
- `coalescing.py` — the addresses a warp's 32 threads touch: global segments, shared banks;
- `check.py` — the `cuda-kernel` pass: all of it as remarks.
"""
