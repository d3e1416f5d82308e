#!/usr/bin/env bash
# Installs, builds and runs the whole test suite: every test in build/, then
# the unit tests again under AddressSanitizer+UndefinedBehaviorSanitizer, then
# a short bounded fuzzing run. Exits non-zero on any failure. Idempotent.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
jobs="$(nproc)"

# The cluster tests start a real single-node Slurm (slurmctld, slurmd, munged) and a
# second network namespace themselves; they need these beyond the build.
# Every target (tests, fuzzers, benchmarks), whatever MLGO_BUILD_TARGETS says.
MLGO_BUILD_TARGETS="" MLGO_EXTRA_PACKAGES="slurm-wlm munge iproute2" "$here/scripts/setup.sh"
echo "== tests (build/)"
ctest --test-dir "$here/build" --output-on-failure --no-tests=error -j "$jobs"

echo "== unit tests under ASan+UBSan (build-asan/)"
MLGO_BUILD_TARGETS="" MLGO_BUILD_DIR="$here/build-asan" \
  MLGO_CMAKE_ARGS="-DMLGO_SANITIZE=ON -DMLGO_BENCHMARKS=OFF -DCMAKE_BUILD_TYPE=Debug" \
  "$here/scripts/setup.sh"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir "$here/build-asan" --output-on-failure --no-tests=error -j "$jobs" -L unit

echo "== fuzzing (bounded)"
"$here/scripts/fuzz.sh" "${MLGO_FUZZ_SECONDS:-30}"
echo "== all tests passed"
