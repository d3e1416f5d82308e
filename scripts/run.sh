#!/usr/bin/env bash
# The main job: installs what is needed, builds, and plays the example agents
# against mlgo-env on the bundled demo corpus (inlining with IR2Vec features, and
# regalloc), printing a per-module table of scores and rewards. Idempotent.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$here/scripts/setup.sh"
exec python3 "$here/scripts/run_demo.py" --mlgo-env "$here/build/src/mlgo-env" "$@"
