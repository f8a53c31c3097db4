#!/usr/bin/env bash
# Here (network): Python 3.12 wheels of what `hexplore run --device cuda` needs and the GPU
# machine lacks (it has numpy, llvmlite, attrs, typing-extensions, rich), plus pycuda's source
# (pycuda has no wheels), into .whl/ (ignored via .git/info/exclude; carry it: ~35 MiB).
# There: benchmarks/gpu/session.sh ptx installs them into /tmp/site and builds pycuda with
# benchmarks/gpu/parbuild.py (~35 s on 16 cores).
set -euo pipefail
cd "$(dirname "$0")/../.."
grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo '/.whl/' >> .git/info/exclude
PY=${PY:-.venv/bin/python}
mkdir -p .whl
pins=(islpy==2026.2.2 libclang==18.1.1 pyopencl==2026.1.4 pytools==2026.1.1 siphash24==1.9
      platformdirs==4.14.8)
for p in "${pins[@]}"; do
  ls .whl/"${p%%==*}"-"${p##*==}"-*.whl >/dev/null 2>&1 && continue
  "$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    --platform manylinux1_x86_64 --platform any -d .whl "$p"
done
if ! ls .whl/pycuda-*.tar.gz >/dev/null 2>&1; then
  # pip reads an sdist's metadata before saving it: without build isolation (which would build
  # numpy from source for that), with setuptools from the venv and `wheel` in a temporary folder.
  tools=$(mktemp -d)
  "$PY" -c 'import wheel' 2>/dev/null || "$PY" -m pip install -q --target "$tools" wheel
  PYTHONPATH="$tools" "$PY" -m pip download -q --no-binary=:all: --no-deps --no-build-isolation \
    -d .whl "pycuda==${PYCUDA:-2026.1}"
  rm -rf "$tools"
fi
du -sh .whl; ls .whl
