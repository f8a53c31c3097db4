"""The transform stage: the isl schedule, the CPU schedule (tiling, parallel marks), the GPU
mapping with memory promotion, the profitability model, and the names generated code declares."""
