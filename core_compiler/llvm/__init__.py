"""The LLVM backend: isl ASTs and SCoP statements lowered to LLVM IR with llvmlite.

Code map, in lowering order:

- `c_types`: C arithmetic types in LLVM (usual arithmetic conversions, casts, `CValue`);
- `isl_expr`: isl AST expressions as index arithmetic (``floord``, ``min``, ``pdiv_r``, …);
- `statements`: statement instances (``A[i][j] += …``) over flat row-major buffers, `Scope`;
- `math_calls`: ``sqrt``/``exp``/``fmax``… as intrinsics, libm (host) or libdevice (NVPTX);
- `ast_lower`: ``for``/``if``/blocks/marks/user nodes, user nodes dispatched by name from a table;
- `cpu`: one host function per SCoP, ``parallel`` loops outlined for libgomp's ``GOMP_parallel``;
- `jit`: O3 for the host CPU, MCJIT, calls on numpy buffers through ctypes;
- `kernel_body`: GPU phases, shared/register copies (``addrspace(3)``, ``alloca``), barriers, atomics;
- `nvptx`: GPU kernels for ``nvptx64-nvidia-cuda`` and PTX for ``sm_90``, ptxas;
- `target`: the host and NVPTX target machines and the O3 pipeline.

`core_compiler.runtime.cpu_variants` runs the CPU code against the gcc-compiled original.
"""
