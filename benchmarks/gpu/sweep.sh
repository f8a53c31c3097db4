#!/usr/bin/env bash
# On the GPU machine, after session.sh built the bundle: build and time gemm's sweep (sweep.py).
set -u
OUT=${OUT:-/tmp/bench_gpu_out}
B=/tmp/hx_bench_gpu/build
cd gpu_bundle || exit 1
timeout 90 make -s -j16 -f sweep.mk B=$B sweep > "$OUT/sweep_build.log" 2>&1 || tail -5 "$OUT/sweep_build.log"
for bin in $B/bin/sweep.*; do
  best=""
  for r in 1 2 3; do
    HX_KERNEL_TIME=/tmp/kt CUDA_MODULE_LOADING=EAGER timeout 20 "$bin" > /dev/null 2>&1 && best="$best $(cat /tmp/kt)"
  done
  echo "$(basename "$bin") launches,kernel_ms:$best"
done | tee "$OUT/sweep.txt"
[ -x $B/bin/cublas_gemm ] && timeout 20 $B/bin/cublas_gemm 2>&1 | tail -3 | tee -a "$OUT/sweep.txt"
