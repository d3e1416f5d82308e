#!/usr/bin/python3
"""Which site key lets a changed module keep most of its tuned inlining decisions?

The launcher's stale-entry route (docs/launch.md) answers each decision of a module whose
stream changed by its *site key*: a hash of the observation's features without the
module-wide ones; the k-th decision with a key gets the k-th recorded action with that key,
another key clang's own decision. This script replays that route, in Python, with several
candidate key definitions, on a package's next release:

    PYTHONPATH=python /usr/bin/python3 research/stale_keys.py --tuning=OLD_TUNING \\
        --old-corpus=CORPUS_N --new-corpus=CORPUS_N1 [--modules M ...]

For each module with an entry that both corpora have: the old corpus is played with the
entry's actions (its observations give the old keys), then the new corpus once per key
definition with the route's answers. Printed per definition: decisions answered from the
entry, and the new release's bytes against clang's own, as a share of the old gain.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Mapping, Sequence

import numpy as np

#: candidate key definitions: the features each leaves out (besides the IR2Vec embeddings)
VARIANTS: dict[str, frozenset[str]] = {
    "module-wide out": frozenset({"node_count", "edge_count"}),
    "+ caller's size and height out (the launcher's)": frozenset({
        "node_count", "edge_count", "caller_users", "caller_conditionally_executed_blocks",
        "caller_basic_block_count", "callsite_height"}),
    "+ callee_users out": frozenset({
        "node_count", "edge_count", "caller_users", "caller_conditionally_executed_blocks",
        "caller_basic_block_count", "callsite_height", "callee_users"}),
}
EMBEDDINGS = frozenset({"callee_embedding", "caller_embedding"})


def key(obs: Mapping[str, Any], features: Sequence[str]) -> bytes:
    """The launcher's site key over `features` (mlgo_env.tuning.identity.site_key: 8 bytes of
    SHA-256 of their raw little-endian bytes, in that order)."""
    from mlgo_env.tuning.identity import site_key
    return site_key(obs, list(features))


class StaleAnswers:
    """The route's answers: the k-th decision with a key gets the k-th recorded action with
    that key; a key the old stream lacks (or has fewer times) gets the default."""

    def __init__(self, old_keys: Sequence[bytes], actions: Sequence[int],
                 features: Sequence[str]) -> None:
        self.by_key: dict[bytes, list[int]] = {}
        for k, a in zip(old_keys, actions):
            self.by_key.setdefault(k, []).append(int(a))
        self.seen: dict[bytes, int] = {}
        self.features = list(features)
        self.from_entry = 0
        self.decisions = 0

    def __call__(self, obs: Any, info: dict) -> int:
        self.decisions += 1
        k = key(obs, self.features)
        n = self.seen.get(k, 0)
        self.seen[k] = n + 1
        recorded = self.by_key.get(k, [])
        if n < len(recorded):
            self.from_entry += 1
            return recorded[n]
        return int(info["default_action"])


class Replay:
    """Answers recorded actions in order (default past their end), keeping observations."""

    def __init__(self, actions: Sequence[int]) -> None:
        self.actions, self.observations = list(actions), []

    def __call__(self, obs: Any, info: dict) -> int:
        self.observations.append({k: np.array(v) for k, v in obs.items()})
        n = len(self.observations) - 1
        return self.actions[n] if n < len(self.actions) else int(info["default_action"])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tuning", required=True)
    p.add_argument("--old-corpus", required=True)
    p.add_argument("--new-corpus", required=True)
    p.add_argument("--modules", nargs="*")
    a = p.parse_args()
    import mlgo_env
    from mlgo_env import episodes as ep
    from mlgo_env.tuning.table import read_entries
    entries = {e.module: e for e in read_entries(a.tuning)}
    new_modules = set(ep.corpus_modules(a.new_corpus))
    modules = [m for m in (a.modules or sorted(entries)) if m in new_modules]
    old_env = mlgo_env.make("inlining", corpus=a.old_corpus)
    new_env = mlgo_env.make("inlining", corpus=a.new_corpus)
    totals = {v: [0, 0, 0, 0] for v in VARIANTS}  # from entry, decisions, default, stale
    old_gain = [0.0, 0.0]
    try:
        names = [n for n in old_env.observation_space.spaces if n not in EMBEDDINGS]
        for m in modules:
            e = entries[m]
            rec = Replay(e.actions)
            ep.play_episode(old_env, m, rec)
            old_gain[0] += e.default_score
            old_gain[1] += e.tuned_score
            for v, out in VARIANTS.items():
                feats = [n for n in names if n not in out]
                old_keys = [key(o, feats) for o in rec.observations]
                stale = StaleAnswers(old_keys, rec.actions, feats)
                r = ep.play_episode(new_env, m, stale)
                t = totals[v]
                t[0] += stale.from_entry
                t[1] += stale.decisions
                t[2] += r.default_score
                t[3] += r.policy_score
                print(f"{m}: {v}: {stale.from_entry}/{stale.decisions} from the entry, "
                      f"{r.default_score:.0f} -> {r.policy_score:.0f}", flush=True)
    finally:
        old_env.close()
        new_env.close()
    gain = 1 - old_gain[1] / old_gain[0] if old_gain[0] else 0.0
    print(f"release N: {len(modules)} modules, tuned {-gain:+.2%} against clang's own")
    for v, (fe, d, dflt, st) in totals.items():
        change = st / dflt - 1 if dflt else 0.0
        print(f"{v}: {fe}/{d} decisions from the entry ({fe / max(d, 1):.0%}); release N+1 "
              f"{change:+.2%} against clang's own, {(-change / gain) if gain else 0:.0%} of "
              "N's gain")
    return 0


if __name__ == "__main__":
    sys.exit(main())
