#!/usr/bin/env bash
# side_by_side of this tree and of an older one, in turns, in one session (issue 17's
# before/after check: run-to-run noise on the GPU machine is as large as the differences
# sought, so each tree runs ROUNDS times, alternating).  On a GPU machine, from the
# repository root, after run_gpu.sh's set-up (wheels on PYTHONPATH, the kernel cache):
#
#   OLD=.before OLD_CACHE=/tmp/kc-before bash benchmarks/compare_trees.sh [ROUNDS] [ONLY] [OUTDIR]
#
# OLD: a folder holding the older tree's cupynum/ and kernels/, into which this tree's
# benchmarks/side_by_side.py, report.py and example_workloads.py and examples/ are copied
# (the script imports the package from its own repository root).  OLD_CACHE: that tree's
# kernel cache folder.  ONLY: side_by_side's --only (default: the per-call rows and the
# examples, the rows that moved last time).  CUPYNUM_PLACEMENT applies to both trees.
# PIN: a CPU list for taskset (say 3): every process of both trees runs on those cores, so
# that the scheduler's choice of core (and its memory node) is not one more difference.
set -uo pipefail
rounds=${1:-2}
only=${2:-"n=1000,example"}
out=${3:-${OUT:-./compare-run}}
: "${OLD:?set OLD to the folder of the older tree}"
mkdir -p "$out" "$OLD/benchmarks" "$OLD/examples"
cp benchmarks/side_by_side.py benchmarks/report.py benchmarks/example_workloads.py \
  "$OLD/benchmarks/" && cp examples/*.py "$OLD/examples/"
export PYTHONUNBUFFERED=1 CUPYNUM_BACKEND=cuda
site=${SITE:-/tmp/site}
for r in $(seq 1 "$rounds"); do
  for tree in new old; do
    if [ "$tree" = new ]; then
      script=benchmarks/side_by_side.py path=$site:$PWD cache=${CUPYNUM_CACHE_DIR:-/tmp/cupynum-cache}
    else
      script=$OLD/benchmarks/side_by_side.py path=$site cache=${OLD_CACHE:-$OLD/.kcache}
    fi
    echo "== $tree, round $r"
    PYTHONPATH=$path CUPYNUM_CACHE_DIR=$cache ${PIN:+taskset -c "$PIN"} timeout "${ROUND_TIMEOUT:-120}" python3 "$script" \
      --only "$only" --numpy-time none --no-cupy --json "$out/$tree-$r.json" 2>&1 |
      grep -E "\| cupynum:" | cut -c1-100
  done
done
python3 "$(dirname "$0")/compare_summary.py" "$out"
