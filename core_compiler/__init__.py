"""hexplore's compiler core: C/CUDA front end, polyhedral model, dependences, schedules, GPU
mapping and code generation. Knows nothing of editors or terminals; see ARCHITECTURE.md."""
