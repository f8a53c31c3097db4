#!/usr/bin/env bash
# check_suite.sh -- sanity checks for the kernel suite in this directory.
#
#  1. suite.json lists every *.c file exactly once, each `function` is defined
#     in its file, `sizes` / `size_limits` / `size_macros` cover exactly the
#     leading int parameters of the kernel, the macros exist in the file and
#     every default size is <= the macro's default value.
#  2. Every file compiles with `gcc -std=c99 -O2 -Wall -Wextra` without a
#     single warning (-Werror) and the program exits 0.
#  3. Every file compiles with -fsanitize=address,undefined (plus
#     float-divide-by-zero, no recovery) and runs cleanly with:
#       - the default sizes (again with -Werror),
#       - all size macros set to 0, 1, 2 and 37,
#       - each size macro set to 0, 1 and 37 on its own (others default).
#     At non-default sizes warnings are logged but not fatal: with a macro
#     at 0 the fixed-size arrays have length zero (a GCC extension) and at
#     0/1 GCC's -Warray-bounds / -Wstringop-overflow report accesses in loops
#     that never execute for those sizes.  The sanitizers check the runs.
#
# Usage: tests/kernels/check_suite.sh [-j JOBS] [file.c ...]
# Exit status 0 iff every check passed.
set -u

cd "$(dirname "$0")"
JOBS=$(nproc 2>/dev/null || echo 4)
if [ "${1:-}" = "-j" ]; then JOBS=$2; shift 2; fi
if [ $# -gt 0 ]; then FILES=("$@"); else FILES=(*.c); fi

CC=${CC:-gcc}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/check_suite.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
SAN="-fsanitize=address,undefined,float-divide-by-zero -fno-sanitize-recover=all -fno-omit-frame-pointer -g"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

fail=0

# ---------------------------------------------------------------- manifest
echo "== manifest (suite.json)"
if ! python3 - "${FILES[@]}" <<'PYEOF'
import json, os, re, sys

ok = True
def bad(msg):
    global ok
    ok = False
    print("  FAIL:", msg)

suite = json.load(open("suite.json"))
files = sorted(f for f in os.listdir(".") if f.endswith(".c"))
listed = [e["file"] for e in suite]
for f in files:
    if listed.count(f) != 1:
        bad(f"{f} appears {listed.count(f)} times in suite.json")
for f in listed:
    if f not in files:
        bad(f"suite.json lists missing file {f}")

cats = {"blas", "linear-algebra", "solver", "stencil", "datamining", "dynprog", "misc"}
for e in suite:
    f, fn = e["file"], e["function"]
    if not os.path.exists(f):
        continue
    src = open(f).read()
    kernels = re.findall(r"^\s*(?:static\s+)?void\s+(kernel_\w+)\s*\(", src, re.M)
    if kernels != [fn]:
        bad(f"{f}: expected exactly one kernel named {fn}, found {kernels}")
        continue
    if e["category"] not in cats:
        bad(f"{f}: unknown category {e['category']}")
    if not isinstance(e["parallel"], bool):
        bad(f"{f}: 'parallel' must be a boolean")
    m = re.search(r"void\s+" + fn + r"\s*\(([^)]*)\)", src, re.S)
    params = [" ".join(p.split()) for p in m.group(1).split(",")]
    ints = []
    for p in params:
        mm = re.fullmatch(r"int (\w+)", p)
        if not mm:
            break
        ints.append(mm.group(1))
    macros = dict(re.findall(r"#ifndef (\w+)\s*\n\s*#define \1 (\d+)", src))
    for key in ("sizes", "size_limits", "size_macros"):
        if list(e[key]) != ints:
            bad(f"{f}: {key} keys {list(e[key])} != int parameters {ints}")
    for p in ints:
        lim, mac, val = e["size_limits"].get(p), e["size_macros"].get(p), e["sizes"].get(p)
        if not isinstance(val, int) or val < 0:
            bad(f"{f}: sizes[{p}] = {val!r} is not a non-negative int")
        for what, name in (("size_limits", lim), ("size_macros", mac)):
            if name is not None and name not in macros:
                bad(f"{f}: {what}[{p}] = {name} is not a size macro of the file {sorted(macros)}")
        if lim is not None and lim in macros and isinstance(val, int) and val > int(macros[lim]):
            bad(f"{f}: sizes[{p}] = {val} exceeds {lim} = {macros[lim]}")
print(f"  {len(suite)} entries, {len(files)} C files:", "OK" if ok else "FAILED")
sys.exit(0 if ok else 1)
PYEOF
then
  fail=1
fi

# ------------------------------------------------------------- per file
# check_one FILE -> prints one summary line, writes details to $WORK/FILE.log
check_one() {
  local f=$1 base=${1%.c} log=$WORK/${1%.c}.log n=0 failed=0 nwarn=0
  : > "$log"
  local macros
  macros=$(sed -n 's/^[[:space:]]*#ifndef[[:space:]]\+\([A-Z_][A-Z0-9_]*\)[[:space:]]*$/\1/p' "$f" |
           while read -r m; do grep -q "^[[:space:]]*#define[[:space:]]\+$m[[:space:]]\+[0-9]" "$f" && echo "$m"; done)

  # build_and_run LABEL FLAGS DEFINES...   (FLAGS may contain -Werror)
  build_and_run() {
    local label=$1 flags=$2; shift 2
    local exe=$WORK/$base.$n; n=$((n + 1))
    # shellcheck disable=SC2086
    if ! "$CC" -std=c99 -O2 -Wall -Wextra $flags "$@" -o "$exe" "$f" -lm >"$exe.cc" 2>&1; then
      cat "$exe.cc" >>"$log"
      echo "  [$label] compile failed ($*)" >>"$log"; failed=1; return
    fi
    if [ -s "$exe.cc" ]; then nwarn=$((nwarn + 1)); fi
    if ! timeout 120 "$exe" >"$exe.out" 2>>"$log"; then
      echo "  [$label] run failed ($*)" >>"$log"; failed=1; return
    fi
    rm -f "$exe"
  }

  build_and_run plain "-Werror"
  build_and_run san-default "-Werror $SAN"
  local v d m
  for v in 0 1 2 37; do
    d=()
    for m in $macros; do d+=("-D$m=$v"); done
    build_and_run "san-all=$v" "$SAN" "${d[@]}"
  done
  for m in $macros; do
    for v in 0 1 37; do build_and_run "san-$m=$v" "$SAN" "-D$m=$v"; done
  done
  if [ $failed -eq 0 ]; then
    printf '  PASS %-22s %2d builds (%d warned at degenerate sizes), macros: %s\n' "$f" "$n" "$nwarn" "$(echo $macros)"
  else
    printf '  FAIL %-22s see below\n' "$f"
    sed 's/^/      /' "$log" | head -40
  fi
  return $failed
}
export -f check_one
export CC WORK SAN

echo "== compile (-Wall -Wextra -Werror) and run, plain + ASan/UBSan at several sizes"
printf '%s\n' "${FILES[@]}" | xargs -P "$JOBS" -I{} bash -c 'check_one "$1" > "$WORK/${1%.c}.sum"' _ {}
results=$(for f in "${FILES[@]}"; do cat "$WORK/${f%.c}.sum" 2>/dev/null || printf '  FAIL %s (no result)\n' "$f"; done)
echo "$results"
npass=$(echo "$results" | grep -c '^  PASS' || true)
nfail=$(echo "$results" | grep -c '^  FAIL' || true)

echo "== summary: ${npass} passed, ${nfail} failed, ${#FILES[@]} files"
if [ "$nfail" -ne 0 ] || [ "$npass" -ne "${#FILES[@]}" ]; then fail=1; fi
if [ $fail -eq 0 ]; then echo "ALL CHECKS PASSED"; else echo "SOME CHECKS FAILED"; fi
exit $fail
