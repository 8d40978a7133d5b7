#!/usr/bin/env bash
# Run the array API conformance suite (data-apis/array-api-tests) against cupynum on the host
# backend, with the pinned suite commit, a fixed Hypothesis seed and example count, and our
# expected-failure list (tests/array_api/xfails.txt).  An expected failure that passes fails
# the run (strict xfail), so the list can only shrink.  See docs/internals.md.
#
#   tools/array_api_tests.sh CHECKOUT [COMMIT] [extra pytest arguments...]
#
# CHECKOUT is a clone of https://github.com/data-apis/array-api-tests with its `array-api`
# submodule (the spec) checked out; it must be at COMMIT (default: the pin below).  The suite
# is not on PyPI, and nothing of it is kept in this repository.
set -euo pipefail

PINNED_COMMIT=55fcc60179efa2680ddd6cd926ddf17b83530e2b  # array-api-tests, API version 2024.12
SEED=0
MAX_EXAMPLES=20

checkout=${1:?usage: tools/array_api_tests.sh CHECKOUT [COMMIT] [pytest args...]}
shift
commit=${1:-$PINNED_COMMIT}
[ $# -gt 0 ] && shift

repo=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-python}

head=$(git -C "$checkout" rev-parse HEAD)
if [ "$head" != "$commit" ]; then
    echo "array-api-tests checkout $checkout is at $head, expected $commit" >&2
    exit 2
fi
if [ ! -d "$checkout/array-api/spec" ]; then
    echo "$checkout/array-api (the spec submodule) is missing: git submodule update --init" >&2
    exit 2
fi

cd "$checkout"
PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}" \
ARRAY_API_TESTS_MODULE=cupynum \
ARRAY_API_TESTS_VERSION=2024.12 \
CUPYNUM_BACKEND=${CUPYNUM_BACKEND:-host} \
CUPYNUM_FALLBACK=silent \
exec "$python" -m pytest array_api_tests/ -q -p no:cacheprovider \
    -o xfail_strict=true \
    --xfails-file "$repo/tests/array_api/xfails.txt" \
    --disable-deadline --max-examples "$MAX_EXAMPLES" --hypothesis-seed "$SEED" \
    "$@"
