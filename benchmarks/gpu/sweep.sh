#!/usr/bin/env bash
# On the GPU machine, after session.sh built the bundle: build and time the sweep (sweep.py).
# Per program: PolyBench's timer (end to end, best of 3 runs) and the launches alone (one run
# with each launch timed by CUDA events); registers and spills per kernel from the build log.
set -u
OUT=${OUT:-/tmp/bench_gpu_out}
B=/tmp/hx_bench_gpu/build
cd gpu_bundle || exit 1
timeout 150 make -k -j16 -f sweep.mk B=$B NVFLAGS="-O3 -arch=sm_90 -diag-suppress 177,550" sweep \
  > "$OUT/sweep_build.log" 2>&1 || tail -5 "$OUT/sweep_build.log"
for bin in $B/bin/sweep.*; do
  e2e=""
  for r in 1 2 3; do
    s=$(CUDA_MODULE_LOADING=EAGER timeout 20 "$bin" 2>/dev/null | tail -1) && e2e="$e2e $s"
  done
  kt="-"
  HX_KERNEL_TIME=/tmp/kt CUDA_MODULE_LOADING=EAGER timeout 30 "$bin" > /dev/null 2>&1 && kt=$(cat /tmp/kt)
  echo "$(basename "$bin") e2e_s:$e2e | launches,kernel_ms: $kt"
done | tee "$OUT/sweep.txt"
[ -x $B/bin/cublas_gemm ] && timeout 20 $B/bin/cublas_gemm 2>&1 | tail -3 | tee -a "$OUT/sweep.txt"
for o in $B/obj/sweep/gemm.*/*kernel.o; do
  echo "$o: $(cuobjdump -res-usage "$o" 2>/dev/null | grep -o 'REG:[0-9]* STACK:[0-9]* SHARED:[0-9]* LOCAL:[0-9]*' | tr '\n' ' ')"
done | sed "s|$B/obj/sweep/||" | tee -a "$OUT/sweep.txt"
