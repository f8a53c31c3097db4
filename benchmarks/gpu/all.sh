#!/usr/bin/env bash
# The whole device session in one call (carry gpu_bundle and .whl):
#   the bundle (session.sh: build, MINI checks, LARGE timings), the sweep (sweep.sh), then
#   `hexplore run --device cuda` at MINI (session.sh ptx).
# Budgets in seconds: HX_BENCH (default 280), HX_PTX (default 170). Everything lands in
# $OUT/all.tgz; the tables are also copied to $OUT (at most 8 files come back).
set -u
FINAL=${OUT:-/tmp/bench_gpu_out}
WORK=/tmp/hx_all
rm -rf "$WORK" && mkdir -p "$WORK/bench" "$WORK/ptx" "$FINAL"
OUT=$WORK/bench HX_BUDGET=${HX_BENCH:-280} bash benchmarks/gpu/session.sh
echo "== bench done after $SECONDS s"
OUT=$WORK/bench bash benchmarks/gpu/sweep.sh
echo "== sweep done after $SECONDS s"
OUT=$WORK/ptx HX_BUDGET=${HX_PTX:-170} bash benchmarks/gpu/session.sh ptx
echo "== ptx done after $SECONDS s"
tar -czf "$FINAL/all.tgz" -C "$WORK" .
for f in bench/table.md bench/sweep.txt ptx/ptx.md; do
  [ -f "$WORK/$f" ] && cp "$WORK/$f" "$FINAL/$(dirname "$f")_$(basename "$f")"
done
ls -la "$FINAL"
