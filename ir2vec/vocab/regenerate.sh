#!/usr/bin/env bash
# Regenerates the bundled IR2Vec vocabulary, ir2vec/vocab/demo-75d.json:
# compiles the demo corpus sources to pre-optimisation bitcode, generates
# triplets at O0, O1, O2, O3, Os and Oz, and trains TransE (75 dimensions,
# seed 1; the result does not depend on the number of threads).
#   ir2vec/vocab/regenerate.sh [BUILD_DIR]      (default: build/)
# Extra arguments after BUILD_DIR go to `mlgo-env ir2vec train`; set
# MLGO_VOCAB_OUTPUT to write elsewhere, e.g. to report link prediction:
#   MLGO_VOCAB_OUTPUT=/tmp/heldout.json ir2vec/vocab/regenerate.sh build --holdout=0.1
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="${1:-$root/build}"
shift || true
mlgo="$build/src/mlgo-env"
output="${MLGO_VOCAB_OUTPUT:-$here/demo-75d.json}"
clang="${CLANG:-clang-22}"
[[ -x "$mlgo" ]] || { echo "regenerate.sh: build mlgo-env first ($mlgo not found)" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir "$work/bc"
for src in "$root"/data/demo_corpus/src/*.c "$root"/data/demo_corpus/src/*.cpp; do
  [[ -e "$src" ]] || continue
  name="$(basename "$src")"
  "$clang" -O0 -Xclang -disable-O0-optnone -emit-llvm -c "$src" -o "$work/bc/${name%.*}.bc"
done
"$mlgo" ir2vec triplets "$work/bc" --output "$work/triplets.txt" --quiet
"$mlgo" ir2vec train --triplets "$work/triplets.txt" --output "$output" \
  --dim 75 --epochs 1000 --seed 1 --log-every 100 "$@"
