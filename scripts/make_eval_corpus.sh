#!/usr/bin/env bash
# Builds an EVALUATION corpus: only the Debian packages reserved for evaluation, which
# the training corpora never contain (scripts/make_training_corpus.sh refuses them).
#
#   scripts/make_eval_corpus.sh [--opt=-Oz|-O2] [--thinlto] OUT [PACKAGE...]
#
# Without --thinlto: lua5.4 libzstd bzip2 (C, embedded bitcode). With --thinlto:
# ninja-build re2 (C++, ThinLTO modules after importing, each with its index). PACKAGE
# narrows that set; any other package is refused. OUT gets an EVALUATION-ONLY note and
# cannot be reused by a training build (nor the other way round). Same machinery,
# options and layout as make_training_corpus.sh (see its header): this runs it with
# --evaluation. Evaluate policies on it (`python -m mlgo_env.evaluate --corpus=OUT`);
# never train or tune on it.
set -euo pipefail
exec "$(dirname "${BASH_SOURCE[0]}")/make_training_corpus.sh" --evaluation "$@"
