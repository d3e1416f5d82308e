#!/usr/bin/env python3
"""Diagnosis: can a policy network learn where the searched eviction decisions depart
from the default's emulation, on packages it was not fitted to?

Reads the decisions research/regalloc_ceiling.py --decisions wrote (every step of the
searches' final incumbents; the last feature is the emulation's choice). Packages (a
module's first path component) are split into --folds groups; for each, the cloning
network (mlgo_env.training.regalloc_cloning: the trainer's, with the emulation as one more
input) is fitted to the other groups' steps, its departures weighted by --oversample
(each departure repeated that many times: they are a few percent of the steps), and
judged on the held-out group's steps:

- departures: steps where the search's incumbent left the emulation, and where the
  network does;
- right: network departures that pick the search's column (precision = right / the
  network's departures, recall = right / the search's);
- agreement with the search's actions, beside the emulation's own agreement with them.

The same on the fitted steps (in sample) says whether the features separate the
departures at all. --min-gain keeps as departures only those whose gain (the share of
its module's default score the search's departure saved) reaches it; the others count as
following the emulation, in fitting and in judging: are the big ones learnable? No clang;
about ten seconds per fit.

    PYTHONPATH=python /usr/bin/python3 research/regalloc_label_fit.py DECISIONS.npz \\
        [--folds=4] [--oversample=1,3,8] [--min-gain=0,0.001] [--hidden=16] [--steps=300]
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from mlgo_env.training import regalloc_cloning as rc  # noqa: E402


def load(path: str, min_gain: float) -> rc.Decisions:
    """The decisions, departures that gained less than `min_gain` turned into the
    emulation's choice."""
    z = np.load(path, allow_pickle=False)
    d = rc.Decisions([str(f) for f in z["features"]], z["rows"], z["mask"].astype(bool),
                     z["actions"].astype(np.int64), [str(m) for m in z["modules"]], {})
    small = z["gains"] < min_gain
    d.actions = np.where(small, emulated(d), d.actions)
    return d.subset(d.allowed[np.arange(len(d)), d.actions])


def emulated(d: rc.Decisions) -> np.ndarray:
    return d.rows[np.arange(len(d)), :, -1].argmax(axis=1)


def oversampled(d: rc.Decisions, times: int) -> rc.Decisions:
    i = np.arange(len(d))
    departs = i[d.actions != emulated(d)]
    keep = np.concatenate([i] + [departs] * (times - 1))
    return rc.Decisions(d.features, d.rows[keep], d.mask[keep], d.actions[keep],
                        [d.modules[k] for k in keep], d.counts)


def judge(policy, d: rc.Decisions) -> np.ndarray:
    """[search departures, network departures, right, agreeing, emulation agreeing, steps]."""
    chosen, emu = rc.choices(policy, d), emulated(d)
    searched, departs = d.actions != emu, chosen != emu
    return np.array([searched.sum(), departs.sum(), (departs & (chosen == d.actions)).sum(),
                     (chosen == d.actions).sum(), (emu == d.actions).sum(), len(d)])


def line(name: str, c: np.ndarray) -> str:
    s, p, r, agree, emu, n = (int(x) for x in c)
    return (f"  {name:<9} {n:>7} steps; departures: search {s} ({s / n:.2%}), network {p}, "
            f"right {r} (precision {r / max(p, 1):.1%}, recall {r / max(s, 1):.1%}); "
            f"agreement {agree / n:.2%} (emulation {emu / n:.2%})")


def package_folds(d: rc.Decisions, folds: int, seed: int) -> np.ndarray:
    """Each decision's fold: packages (a module's first path component) dealt to `folds`
    groups in a seeded order."""
    package = [m.split("/")[0] for m in d.modules]
    names = sorted(set(package))
    order = np.random.default_rng(seed).permutation(len(names))
    fold_of = {names[i]: k % folds for k, i in enumerate(order)}
    return np.asarray([fold_of[x] for x in package], dtype=np.int64)


def cross_fit(d: rc.Decisions, folds: int, times: int, hidden: int, steps: int, seed: int
              ) -> tuple[np.ndarray, np.ndarray]:
    """judge()'s counts summed over the folds: (in sample, held out)."""
    fold = package_folds(d, folds, seed)
    inside, outside = np.zeros(6), np.zeros(6)
    for k in range(folds):
        fitted, held = d.subset(fold != k), d.subset(fold == k)
        if not len(fitted) or not len(held):
            continue
        r = rc.fit(oversampled(fitted, times), hidden, np.random.default_rng(seed + k),
                   steps=steps)
        inside += judge(r.policy, fitted)
        outside += judge(r.policy, held)
    return inside, outside


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("decisions")
    p.add_argument("--folds", type=int, default=4)
    p.add_argument("--oversample", default="1,3,8")
    p.add_argument("--min-gain", default="0")
    p.add_argument("--hidden", type=int, default=16)
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    d = load(a.decisions, 0.0)
    print(f"{len(d)} steps of {len(set(d.modules))} modules in "
          f"{len(set(m.split('/')[0] for m in d.modules))} packages, {a.folds} folds of packages")
    runs = [(float(g), int(t)) for g in a.min_gain.split(",") for t in a.oversample.split(",")]
    for min_gain, times in runs:
        inside, outside = cross_fit(load(a.decisions, min_gain), a.folds, times, a.hidden,
                                    a.steps, a.seed)
        print(f"departures gaining >= {min_gain:g} of their module, weighted x{times}:")
        print(line("in sample", inside))
        print(line("held out", outside))
    return 0


if __name__ == "__main__":
    sys.exit(main())
