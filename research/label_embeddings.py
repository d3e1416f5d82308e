#!/usr/bin/env python3
"""Adds IR2Vec embeddings to a trainer's inlining labels, for research/label_transfer.py
--embeddings: does the callee's and caller's IR2Vec embedding tell, on a package not seen,
which call sites a search would flip?

A trainer's labels (``OUTPUT.flips.npz``) hold every decision of each search module's best
trajectory: clang's features, the decision the search started from (``defaults``) and
whether the trajectory differs there. This script replays each of those trajectories
(answer = start XOR flipped, decision by decision) in an environment with the shipped
IR2Vec vocabulary, and records at every decision clang's ``callee_embedding`` and
``caller_embedding``. The trajectory is the same one only if clang asks the same
questions: every replayed decision's ``inlining_default`` and the other features are
compared with the label's row, and a module whose replay differs (or whose episode fails)
is named and left out (its rows get NaN embeddings, which label_transfer drops).

    PYTHONPATH=python /usr/bin/python3 research/label_embeddings.py OUTPUT.flips.npz \\
        --corpus=CORPUS --output=EMB.npz [--workers=2] [--cache-dir=DIR]

Writes EMB.npz: ``embeddings`` [rows, 2 x dim] aligned with the labels' rows (callee
columns, then caller columns), ``names`` (``callee_embedding_0`` ...), ``modules`` (the
labels' module per row, for checking the alignment) and ``replayed`` (per row: whether
its module replayed the same trajectory).
"""

from __future__ import annotations

import argparse
import queue
import sys
import threading
from typing import Any

import numpy as np

from mlgo_env import episodes as ep
from mlgo_env.policies.policy import feature_row
from mlgo_env.training.training_setup import env_factory, scratch_dir

from flip_search import FlipSet

CALLEE, CALLER = "callee_embedding", "caller_embedding"


class Replayer:
    """Answers a module's recorded trajectory and records the embeddings at each step;
    `mismatch` names the first step whose features differ from the label's row."""

    def __init__(self, rows: np.ndarray, names: list[str], actions: np.ndarray) -> None:
        self.rows, self.names, self.actions = rows, names, actions
        self.embeddings: list[np.ndarray] = []
        self.mismatch: str | None = None

    def __call__(self, obs: Any, info: dict) -> int:
        i = len(self.embeddings)
        if i >= len(self.actions):
            self.mismatch = self.mismatch or f"more than the {len(self.actions)} recorded decisions"
            self.embeddings.append(np.zeros(0))
            return int(info["default_action"])
        seen = feature_row(obs, info, self.names)
        if self.mismatch is None and not np.array_equal(seen, self.rows[i]):
            bad = self.names[int(np.flatnonzero(seen != self.rows[i])[0])]
            self.mismatch = f"decision {i}: '{bad}' differs from the label's row"
        self.embeddings.append(np.concatenate([
            np.asarray(obs[CALLEE], dtype=np.float64).reshape(-1),
            np.asarray(obs[CALLER], dtype=np.float64).reshape(-1)]))
        return int(self.actions[i])


def play_all(make: Any, workers: int, replayers: dict[str, Replayer]) -> None:
    """Plays every module's replayer on `workers` environments; an episode that fails
    marks its replayer's mismatch with the error instead of ending the run."""
    todo = queue.SimpleQueue()
    for m in replayers:
        todo.put(m)

    def work() -> None:
        env = make()
        try:
            while True:
                try:
                    m = todo.get_nowait()
                except queue.Empty:
                    return
                try:
                    ep.play_episode(env, m, replayers[m])
                except Exception as e:  # noqa: BLE001 - a failed module is reported, not fatal
                    replayers[m].mismatch = f"episode failed: {e}"
        finally:
            env.close()

    threads = [threading.Thread(target=work) for _ in range(max(1, workers))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("labels", help="a trainer's OUTPUT.flips.npz (inlining)")
    ap.add_argument("--corpus", required=True, help="the corpus the labels were searched on")
    ap.add_argument("--output", required=True, help="EMB.npz to write")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--cache-dir", default=None)
    a = ap.parse_args(argv)
    try:
        labels = FlipSet.load(a.labels)
    except (OSError, KeyError, ValueError) as e:
        print(f"label_embeddings: cannot read {a.labels}: {e}", file=sys.stderr)
        return 1
    modules = list(dict.fromkeys(labels.modules))
    of_row = np.asarray(labels.modules)
    where = {}  # module -> its rows, in decision order
    replayers = {}
    for m in modules:
        rows = np.flatnonzero(of_row == m)
        where[m] = idx = rows[np.argsort(labels.steps[rows], kind="stable")]
        actions = labels.defaults[idx] ^ (labels.rewards[idx] > 0).astype(np.int64)
        replayers[m] = Replayer(labels.rows[idx], labels.names, actions)
    make = env_factory("inlining", a.corpus, None, a.cache_dir,
                       scratch_dir(None, None), ir2vec_vocab="default")
    play_all(make, a.workers, replayers)
    dim = next((len(r.embeddings[0]) for r in replayers.values()
                if r.embeddings and len(r.embeddings[0])), 0)
    if dim == 0:
        print("label_embeddings: no episode showed an embedding", file=sys.stderr)
        return 1
    emb = np.full((len(labels.modules), dim), np.nan)
    replayed = np.zeros(len(labels.modules), dtype=bool)
    left = 0
    for m in modules:
        r = replayers[m]
        if r.mismatch is None and len(r.embeddings) != len(where[m]):
            r.mismatch = f"{len(r.embeddings)} decisions, the labels have {len(where[m])}"
        if r.mismatch is not None:
            left += 1
            print(f"label_embeddings: {m}: left out ({r.mismatch})", file=sys.stderr)
            continue
        emb[where[m]] = np.stack(r.embeddings)
        replayed[where[m]] = True
    half = dim // 2
    names = [f"{CALLEE}_{k}" for k in range(half)] + [f"{CALLER}_{k}" for k in range(half)]
    np.savez_compressed(a.output, embeddings=emb, names=np.asarray(names),
                        modules=np.asarray(labels.modules), replayed=replayed)
    print(f"{len(modules) - left} of {len(modules)} modules replayed their labels' "
          f"trajectory ({int(replayed.sum())} of {len(replayed)} decisions); "
          f"{dim} embedding values per decision -> {a.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
