#!/usr/bin/env bash
# The one command on the lent GPU machine, run from the repository root:
#   bash benchmarks/gpu/session.sh          the bundle: build, MINI checks, LARGE timings
#                                           (carry gpu_bundle; prepare it here first:
#                                           .venv/bin/python benchmarks/bench_gpu.py prepare --baseline-rev REV)
#   bash benchmarks/gpu/session.sh ptx      `hexplore run --device cuda` on the 30 kernels at MINI
#                                           (carry .whl too: benchmarks/gpu/wheels.sh makes it)
# Writes into $OUT: table.md, results.json, build.log, log.txt (ptx: ptx.md, ptx.json), prints
# the table, and stops itself after HX_BUDGET seconds (default 400) whatever happens: the device
# phases get HX_BUDGET - 30 s (make <= 240 s; GPU runs stop starting 25 s before their end),
# `timeout` kills what is left 15 s before HX_BUDGET, and the table is rendered from what was
# measured by then.
set -u -o pipefail
OUT=${OUT:-/tmp/bench_gpu_out}
BUNDLE=${HX_BUNDLE:-gpu_bundle}
BUDGET=${HX_BUDGET:-400}
REPO=$(pwd)
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1

about() {
  echo "== $(date -u +%FT%TZ) $(hostname) $(nproc) cores, mode ${1}"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader || true
  nvcc --version | tail -2; gcc --version | head -1; python3 --version
}

bench() {
  if [ ! -f "$BUNDLE/manifest.json" ]; then
    echo "no $BUNDLE/manifest.json: prepare the bundle here and carry it"; return 1
  fi
  timeout -k 5 $((BUDGET - 15)) python3 benchmarks/bench_gpu.py device "$BUNDLE" --out "$OUT" \
    --budget $((BUDGET - 30)) --repeat "${HX_REPEAT:-2}" --timeout "${HX_TIMEOUT:-10}" \
    --cpu-timeout "${HX_CPU_TIMEOUT:-20}" ${HX_ARGS:-} > "$OUT/device.txt" 2>&1
  echo "== device step: rc $? after $SECONDS s"
  sed '/^| kernel/,$d' "$OUT/device.txt" | tail -40  # the table is printed once, below
  rm -f "$OUT/device.txt"
  if [ -f "$OUT/results.json" ]; then
    python3 benchmarks/bench_gpu.py render "$OUT"
  fi
}

ptx() {
  if ! ls .whl/pycuda-*.tar.gz >/dev/null 2>&1; then
    echo "no .whl/: run benchmarks/gpu/wheels.sh here and carry .whl"; return 1
  fi
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || return 1
  mkdir -p /tmp/pycuda && tar -xzf .whl/pycuda-*.tar.gz -C /tmp/pycuda --strip-components=1
  local cuda_root
  cuda_root=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")
  if ! (cd /tmp/pycuda && python3 configure.py --cuda-root="$cuda_root" > /dev/null &&
        timeout 200 python3 "$REPO/benchmarks/gpu/parbuild.py" build_ext --inplace) \
        > "$OUT/pycuda_build.log" 2>&1; then
    tail -20 "$OUT/pycuda_build.log"; return 1
  fi
  echo "== pycuda built after $SECONDS s"
  PYTHONPATH=/tmp/pycuda:/tmp/site:$REPO timeout -k 5 $((BUDGET - SECONDS - 10)) \
    python3 benchmarks/bench_gpu.py ptx --out "$OUT" ${HX_ARGS:-}
}

mode=${1:-bench}
case $mode in bench|ptx) ;; *) echo "usage: session.sh [bench|ptx]"; exit 2 ;; esac
{ about "$mode"; "$mode"; } 2>&1 | tee "$OUT/log.txt"
