#!/usr/bin/env bash
# One full GPU check: the whole suite on the CUDA backend, then the side-by-side benchmark.
# Usage (on a GPU machine, from the repository root):  bash benchmarks/run_gpu.sh [OUTDIR]
# Logs and the benchmark JSON go to OUTDIR (default ./gpu-run); a short summary is printed last.
set -uo pipefail
out=${1:-${OUT:-./gpu-run}}
mkdir -p "$out"
export PYTHONUNBUFFERED=1 CUPYNUM_BACKEND=cuda
export CUPYNUM_CACHE_DIR=${CUPYNUM_CACHE_DIR:-/tmp/cupynum-cache}
# A kernel cache filled on a CPU machine (python -m cupynum precompile --arch sm_90 with the
# GPU machine's NVRTC version, into CACHE_SEED) saves the GPU machine the compile.
seed=${CACHE_SEED:-.kcache}
if [ -d "$seed" ] && [ ! -e "$CUPYNUM_CACHE_DIR" ]; then
  # (the folder's entries are signed with its hmac.key, which must stay private: 0600)
  cp -r "$seed" "$CUPYNUM_CACHE_DIR" && chmod -R go-rwx "$CUPYNUM_CACHE_DIR" &&
    chmod 700 "$CUPYNUM_CACHE_DIR" && chmod 600 "$CUPYNUM_CACHE_DIR/hmac.key"
fi
if compgen -G ".whl/*.whl" >/dev/null; then  # wheels carried to a machine without an index
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
# The package's metadata (its entry points: Dask finds cupynum through them) from an install
# placed after the source tree on the path, so the source tree is still what is imported.
python3 -m pip install -q --no-deps --no-build-isolation --no-compile --target /tmp/cpn-meta . \
  >/dev/null 2>&1 && export PYTHONPATH=$PYTHONPATH:/tmp/cpn-meta
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
python3 -m cupynum info 2>&1 | tee "$out/info.txt"
# (the host path is interpreter-bound: how this Python was built bears on its figures)
python3 -c "import sys, sysconfig; print(sys.executable, sys.version.split()[0],
  sysconfig.get_config_var('CONFIG_ARGS'))" >>"$out/info.txt" 2>&1
/usr/bin/time -f "precompile: %e s" python3 -m cupynum precompile --jobs 16 >"$out/precompile.log" 2>&1
tail -2 "$out/precompile.log"
if [ "${SUITE:-1}" = 1 ]; then  # (SUITE=0: the benchmark stages only)
  timeout ${SUITE_TIMEOUT:-330} python3 -m pytest -q -n ${WORKERS:-8} -p no:cacheprovider \
    ${PYTEST_ARGS:-} >"$out/pytest.log" 2>&1
  echo "pytest exit: $?"
  grep -E "^(FAILED|ERROR)" "$out/pytest.log" | head -${SHOW_FAILED:-40}
fi
if [ -n "${MICRO:-}" ]; then  # launch/alloc/transfer variants (benchmarks/launch_micro.py)
  timeout ${MICRO_TIMEOUT:-60} python3 benchmarks/launch_micro.py ${MICRO_ARGS:-} \
    >"$out/micro.log" 2>&1
  echo "micro exit: $?"
  cut -c1-160 "$out/micro.log" | tail -${MICRO_LINES:-45}
fi
if [ "${BENCH:-1}" = 1 ]; then
  timeout ${BENCH_TIMEOUT:-200} python3 benchmarks/side_by_side.py ${BENCH_ARGS:-} \
    --json "$out/bench.json" >"$out/bench.log" 2>&1
  echo "bench exit: $?"
  grep -E "\| (cupynum|numpy):" "$out/bench.log" | cut -c1-200 | tail -${BENCH_LINES:-40}
  grep -A30 '"cold"' "$out/bench.log" | head -40
fi
if [ -n "${STATEMENTS:-}" ]; then  # the statement table under both placements
  timeout ${STATEMENTS_TIMEOUT:-120} python3 benchmarks/statements.py --placements auto,device \
    --json "$out/statements.json" >"$out/statements.log" 2>&1
  echo "statements exit: $?"; tail -${STATEMENTS_LINES:-25} "$out/statements.log" | cut -c1-200
fi
if [ -n "${PROGRAMS:-}" ]; then  # the loop-heavy program suite (benchmarks/programs)
  timeout ${PROGRAMS_TIMEOUT:-300} python3 benchmarks/programs/run.py ${PROGRAMS_ARGS:-} \
    --json "$out/programs.json" >"$out/programs.log" 2>&1
  echo "programs exit: $?"; tail -${PROGRAMS_LINES:-30} "$out/programs.log" | cut -c1-200
fi
[ -f "$out/pytest.log" ] && tail -1 "$out/pytest.log"
