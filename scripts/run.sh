#!/usr/bin/env bash
# The main job: installs what is needed, builds, and plays the example agents
# of the Python package mlgo_env (python/) on the bundled demo corpus (inlining
# with IR2Vec features, and regalloc), printing a per-module table of scores
# and rewards. Idempotent. Flags go to `python -m mlgo_env.demo` (--serve, --jobs).
# Builds only what the demo needs (CMake target mlgo_main_job: mlgo-env, the
# launcher, the Python core, the demo corpus); scripts/test.sh builds the rest.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MLGO_BUILD_TARGETS=mlgo_main_job "$here/scripts/setup.sh"
cd "$here"
PYTHONPATH="$here/python${PYTHONPATH:+:$PYTHONPATH}" MLGO_ENV="$here/build/src/mlgo-env" \
  exec /usr/bin/python3 -m mlgo_env.demo "$@"
