#!/usr/bin/env bash
# compute-sanitizer over a subset of the GPU suite that launches every kernel family:
# elementwise (table ops, layouts, ufunc.at), reductions and scans, indexing (gather, mask,
# scatter), sorting (radix sort, argsort, unique, searchsorted), random, and the library calls
# (cuBLAS matmul, cuSOLVER, cuFFT).  Sized to fit one 10-minute command on the H200 machine.
# Usage (GPU machine, repository root, kernel cache warm):
#   TOOL=memcheck bash benchmarks/sanitize_gpu.sh OUTDIR     (or TOOL=racecheck)
#   BUDGET (s, default 480) stops starting new selections; PER_TIMEOUT (s) bounds each one.
set -uo pipefail
out=${1:-./sanitize-run}
tool=${TOOL:-memcheck}
mkdir -p "$out"
export PYTHONUNBUFFERED=1 CUPYNUM_BACKEND=cuda
export CUPYNUM_CACHE_DIR=${CUPYNUM_CACHE_DIR:-/tmp/cupynum-cache}
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
# The selection: one or a few tests per kernel family (small arrays: the sanitizer slows every
# launch by orders of magnitude).
selection=(
  "tests/test_ufuncs.py::test_layouts"
  "tests/test_ufuncs.py::test_out_overlapping_inputs"
  "tests/test_ufuncs.py::test_at_forms"
  "tests/test_reductions.py::test_sum_axes"
  "tests/test_reductions.py::test_non_contiguous"
  "tests/test_reductions.py::test_scans"
  "tests/test_reductions.py::test_scan_layouts_and_variants"
  "tests/test_indexing.py"
  "tests/test_sorting.py::test_sort_argsort_dtypes"
  "tests/test_sorting.py::test_unique"
  "tests/test_sorting.py::test_searchsorted"
  "tests/test_random.py"
  "tests/test_linalg.py"
  "tests/test_fft.py"
)
# SELECTION="file[::test] ..." runs only those (e.g. the families a previous run's budget
# did not reach).
if [ -n "${SELECTION:-}" ]; then read -r -a selection <<<"$SELECTION"; fi
rc_all=0
start=$SECONDS
for sel in "${selection[@]}"; do
  if (( SECONDS - start > ${BUDGET:-480} )); then echo "$sel: not run (budget spent)"; rc_all=1; continue; fi
  name=$(echo "$sel" | tr '/:' '__')
  timeout ${PER_TIMEOUT:-120} compute-sanitizer --tool "$tool" --error-exitcode 99 \
    --target-processes all --log-file "$out/$tool-$name.%p.log" \
    python3 -m pytest -q -x -p no:cacheprovider -m "not slow" -k "${KEXPR:-not hypothesis}" "$sel" \
    >"$out/$tool-$name.pytest.log" 2>&1
  rc=$?
  errors=$(cat "$out"/"$tool-$name".*.log 2>/dev/null | sed -nE 's/.*ERROR SUMMARY: ([0-9]+) error.*/\1/p' |
    awk '{s += $1} END {print s + 0}')
  printf '%-70s exit %3d  sanitizer reports %s  %s\n' "$sel" "$rc" "$errors" \
    "$(tail -1 "$out/$tool-$name.pytest.log" | cut -c1-80)"
  [ "$rc" -ne 0 ] && rc_all=1
done
exit $rc_all
