#!/usr/bin/env python3
"""Diagnosis: where the host's emulation of clang's default eviction cannot see weights.

clang's ML eviction advisor divides every column's `use_def_density` by the largest one.
An unspillable interference weighs infinity, so when one sits in a legal column that
column reads NaN and *every other column, the live range's own included, reads 0*: the
step carries no weight order at all (a "poisoned" step). The emulation (host-emulation-v2,
include/mlgo/policy/default_eviction.h) then never finds a lighter interference and
evicts nothing, where clang, comparing the real weights, may evict.

Reads a regalloc trace of the emulation (`mlgo-env trace --problem=regalloc`, its CSV
beside it: each context's clang-default score and the emulation's) and prints how many
steps are poisoned and whether the contexts whose score differs from clang's default are
exactly those with poisoned steps.

    /usr/bin/python3 research/regalloc_poisoned_steps.py TRACE

(build the trace first, e.g. `build/src/mlgo-env trace --problem=regalloc
--corpus=/work/corpora/c-o2 --output=/tmp/ra.log --cache-dir=...`)
"""

from __future__ import annotations

import csv
import os
import sys
from collections import Counter

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from mlgo_env.trace_log import read_observations  # noqa: E402
from mlgo_env.tuning.regalloc_search import is_poisoned as poisoned  # noqa: E402


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    path = sys.argv[1]
    steps, bad, zeroed = Counter(), Counter(), 0
    for context, obs in read_observations(path):
        steps[context] += 1
        if poisoned(obs):
            bad[context] += 1
            weight = obs["use_def_density"].reshape(-1)
            finite = weight[~np.isnan(weight)]
            zeroed += int(finite.size == 0 or not finite.any())
    with open(path + ".csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    total = sum(steps.values())
    print(f"{total} steps in {len(steps)} contexts; poisoned: {sum(bad.values())} "
          f"({sum(bad.values()) / max(total, 1) * 100:.1f}%), of which every finite weight "
          f"reads 0 in {zeroed}")
    # A module's own row (context = the module) sums its functions: poisoned when any is.
    for context, n in list(bad.items()):
        module, colon, _ = context.rpartition(":")
        if colon:
            bad[module] += n
    table = Counter()
    for r in rows:
        same = abs(float(r["default_score"]) - float(r["policy_score"])) <= 1e-9 * max(
            1.0, abs(float(r["default_score"])))
        kind = "with poisoned steps" if bad[r["context"]] else "clean"
        table[(kind, same)] += 1
    for kind in ("clean", "with poisoned steps"):
        n_same, n_diff = table[(kind, True)], table[(kind, False)]
        print(f"contexts {kind:<20} {n_same + n_diff:>5}: emulation = clang's default in "
              f"{n_same}, differs in {n_diff}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
