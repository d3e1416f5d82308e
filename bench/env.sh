#!/usr/bin/env bash
# Hosting cost of mlgo-env, measured side by side in one run per problem:
# default-policy episodes over the demo corpus against plain clang compiles
# of the same modules with the same flags (alternating per module). Prints
# the wall ratio, mlgo-env's own CPU time against clang's, and mlgo-env's
# CPU per observation, next to the kernel's floor for one blocking pipe
# round trip on this machine (see env/env_bench.cc).
#
#   bench/env.sh                      # all problems, build/ tree
#   MLGO_BUILD_DIR=dir bench/env.sh inlining --repeat=3 --temp-dir=/dev/shm
#
# The first argument, if it is a problem name, selects one problem; the
# remaining arguments go to env_bench (--repeat=N, --modules=N, --clang=PATH,
# --temp-dir=DIR for the per-compile directories, default $TMPDIR or /tmp).
# Run it on a quiet machine: other processes inflate both sides' CPU time.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${MLGO_BUILD_DIR:-$here/build}"

problems=(inlining regalloc regalloc-priority)
if [[ $# -gt 0 && $1 != --* ]]; then
  problems=("$1")
  shift
fi

if [[ ! -f "$build/build.ninja" ]]; then
  cmake -S "$here" -B "$build" -G Ninja \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22
fi
cmake --build "$build" --target env_bench mlgo_demo_corpus -j "$(nproc)" >/dev/null

for problem in "${problems[@]}"; do
  case "$problem" in
    inlining) corpus="$build/corpus/demo-Oz" ;;
    *) corpus="$build/corpus/demo-O2" ;;
  esac
  echo "== $problem ($corpus)"
  # Options given on the command line come first, so they win.
  "$build/env/env_bench" "$@" --problem="$problem" --corpus="$corpus" --repeat=2
done
