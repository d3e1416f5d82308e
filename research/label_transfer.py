#!/usr/bin/env python3
"""Diagnosis: do the decisions a trainer's searches found carry from package to package?

Reads a trainer's labels (``OUTPUT.flips.npz``: every decision of each search module's best
trajectory, positive where it differs from what the search started from; written by
--method=classifier, imitation and residual) and fits the flip classifier
(mlgo_env.policies.flip_classifier, the trainer's own network over clang's features) in
two ways:

- leave one package out: fitted on the other packages' labels, scored on the package's
  decisions. This is the question a policy for unseen code has to answer;
- module-grouped 5-fold: fitted on four fifths of the modules of all packages, scored on
  the rest (labels of the same packages, other modules).

For each it prints the ranking quality (AUC: the chance that a flipped decision scores
above a kept one; 0.5 is chance) beside the AUC of nearness to clang's boundary alone
(``-|margin|``), and, at the operating point a trainer would use (flip the same share of the
package's decisions as the other packages flipped), the precision and recall. No clang,
no episodes: minutes (one fit per package and weighting).

    PYTHONPATH=python /usr/bin/python3 research/label_transfer.py OUTPUT.flips.npz \\
        [--hidden=16] [--min-positives=3]

AUC is not bytes: a label is "this decision was part of the module's best trajectory",
so a high AUC says which call sites a search picks, not that flipping them on unseen code
shrinks it. Labels written with --label-weights=bytes also carry what each decision's
callee group was worth (the removed imitation labels: the gain when
kept, the loss when tried and refused, shared among the group's decisions, in thousandths
of the module's bytes). For those the script adds a byte proxy: leaving one package out,
flip the top share of its decisions as the classifier ranks them (fitted with uniform,
byte and class-balanced byte weights) and add up their worths, per module on average.
The proxy is additive (groups interact in reality) but needs no compile; the oracle, every
flip of the best trajectories, is what the searches found.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from mlgo_env.policies import flip_classifier
from mlgo_env.policies.margin_policy import margin_spec
from mlgo_env.policies.policy import margin_column
from mlgo_env.training.module_sets import package_of

from flip_search import FlipSet


def auc(scores: np.ndarray, positive: np.ndarray) -> float:
    """Mann-Whitney AUC with tied scores sharing their mean rank (nan without both classes)."""
    n_pos = int(positive.sum())
    n_neg = len(positive) - n_pos
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    _, inverse, counts = np.unique(scores, return_inverse=True, return_counts=True)
    first = np.concatenate([[0], np.cumsum(counts)[:-1]])
    ranks = (first + (counts - 1) / 2.0)[inverse]
    return float((ranks[positive].sum() - n_pos * (n_pos - 1) / 2.0) / (n_pos * n_neg))


#: flip rates of the byte proxy
PROXY_RATES = (0.005, 0.01, 0.02, 0.04, 0.08)


def fit_weights(rewards: np.ndarray, kind: str) -> np.ndarray | None:
    """Sample weights of the classifier fit: None (uniform), the trainer's |worth|
    weights (bytes), or those with the positives scaled to weigh as much as the
    negatives in all (balanced)."""
    if kind == "uniform":
        return None
    w = flip_classifier.label_weights(rewards)
    if kind == "balanced":
        pos = rewards > 0
        w[pos] *= w[~pos].sum() / max(w[pos].sum(), 1e-12)
    return w


class LeavePackageOut:
    """The classifier's logits on each package's decisions, fitted on the other packages'
    labels; one fit per (package, weighting), made when first asked for."""

    def __init__(self, labels: FlipSet, packages: np.ndarray, hidden: int) -> None:
        self.labels, self.packages, self.hidden = labels, packages, hidden
        self._scores: dict[tuple[str, str], np.ndarray] = {}

    def scores(self, package: str, kind: str = "uniform") -> np.ndarray:
        if (package, kind) not in self._scores:
            test = self.packages == package
            self._scores[package, kind] = held_out_scores(self.labels, ~test, test,
                                                          self.hidden, kind)
        return self._scores[package, kind]


def held_out_scores(labels: FlipSet, train: np.ndarray, test: np.ndarray,
                    hidden: int, weights: str = "uniform") -> np.ndarray:
    """The classifier's logits on `test` rows, fitted on `train` rows only."""
    y = (labels.rewards > 0).astype(float)
    fit = flip_classifier.fit("inlining", labels.names, labels.rows[train], y[train],
                              fit_weights(labels.rewards[train], weights),
                              hidden=hidden, epochs=800)
    return fit.space.logits(fit.u, labels.rows[test])


def top_share(scores: np.ndarray, rate: float) -> np.ndarray:
    """Indices of the top `rate` share of `scores` (at least one): what a classifier
    flipping at that rate flips."""
    k = max(1, int(round(rate * len(scores))))
    return np.argsort(-scores, kind="stable")[:k]


def byte_proxy(labels: FlipSet, lpo: LeavePackageOut) -> None:
    """Prints, per fit weighting and flip rate, the summed worth of the decisions a
    classifier fitted on the other packages flips, in thousandths per module."""
    n_modules = len(set(labels.modules))
    pos = labels.rewards > 0
    print(f"byte proxy, leaving one package out (thousandths of a module's bytes, mean per "
          f"module; oracle {labels.rewards[pos].sum() / n_modules:+.3f}):")
    for kind in ("uniform", "bytes", "balanced"):
        cells = []
        for rate in PROXY_RATES:
            total = 0.0
            for p in sorted(set(lpo.packages)):
                worth = labels.rewards[lpo.packages == p]
                total += worth[top_share(lpo.scores(p, kind), rate)].sum()
            cells.append(f"{rate:.1%} {total / n_modules:+.3f}")
        print(f"  {kind:9s} " + "  ".join(cells))


def operating_point(scores: np.ndarray, positive: np.ndarray,
                    rate: float) -> tuple[float, float]:
    """(precision, recall) when the top `rate` share of `scores` is flipped."""
    top = top_share(scores, rate)
    hits = int(positive[top].sum())
    return hits / len(top), hits / max(int(positive.sum()), 1)


def with_embeddings(labels: FlipSet, path: str, columns: bool) -> FlipSet:
    """`labels` restricted to the decisions research/label_embeddings.py replayed, with
    their IR2Vec embeddings appended as features when `columns`. Raises ValueError when
    the file was made from other labels."""
    d = np.load(path, allow_pickle=False)
    if [str(m) for m in d["modules"]] != list(labels.modules):
        raise ValueError(f"{path} was not made from these labels")
    keep = d["replayed"].astype(bool)
    dropped = {m for m, k in zip(labels.modules, keep) if not k}
    out = labels.drop(dropped)
    if columns:
        out = FlipSet(out.names + [str(n) for n in d["names"]], out.modules, out.steps,
                      np.concatenate([out.rows, d["embeddings"][keep]], axis=1),
                      out.defaults, out.rewards, out.module_steps)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("labels", help="a trainer's OUTPUT.flips.npz")
    ap.add_argument("--hidden", type=int, default=16)
    ap.add_argument("--min-positives", type=int, default=3,
                    help="packages with fewer flipped decisions are not held out alone")
    ap.add_argument("--embeddings", default=None,
                    help="EMB.npz of research/label_embeddings.py: keep the decisions it "
                         "replayed and add the callee's and caller's IR2Vec embeddings")
    ap.add_argument("--embedding-columns", choices=("yes", "no"), default="yes",
                    help="with --embeddings: 'no' keeps only its rows (the comparison)")
    a = ap.parse_args(argv)
    try:
        labels = FlipSet.load(a.labels)
        if a.embeddings:
            labels = with_embeddings(labels, a.embeddings, a.embedding_columns == "yes")
    except (OSError, KeyError, ValueError) as e:
        print(f"label_transfer: cannot read {a.labels}: {e}", file=sys.stderr)
        return 1
    positive = labels.rewards > 0
    packages = np.array([package_of(m) for m in labels.modules])
    near = -np.abs(margin_column(labels.rows, labels.names, margin_spec(anchored=False)))
    print(f"{len(positive)} decisions of {len(set(labels.modules))} modules, "
          f"{int(positive.sum())} flipped ({positive.mean():.1%})")
    print(f"{'held-out package':20s} {'flipped':>13s} {'AUC':>6s} {'AUC -|m|':>8s} "
          f"{'precision':>9s} {'recall':>6s}")
    lpo = LeavePackageOut(labels, packages, a.hidden)
    weights, aucs, near_aucs = [], [], []
    for p in sorted(set(packages)):
        test = packages == p
        if positive[test].sum() < a.min_positives:
            continue
        scores = lpo.scores(p)
        rate = float(positive[~test].mean())
        prec, rec = operating_point(scores, positive[test], rate)
        aucs.append(auc(scores, positive[test]))
        near_aucs.append(auc(near[test], positive[test]))
        weights.append(int(positive[test].sum()))
        print(f"{p:20s} {weights[-1]:6d}/{int(test.sum()):6d} {aucs[-1]:6.3f} "
              f"{near_aucs[-1]:8.3f} {prec:9.3f} {rec:6.3f}")
    if weights:
        print(f"leave-one-package-out, weighted by flips: AUC {np.average(aucs, weights=weights):.3f}"
              f" (nearness to the boundary alone {np.average(near_aucs, weights=weights):.3f})")
    modules = np.array(sorted(set(labels.modules)))
    fold_of = dict(zip(modules, np.random.default_rng(1).integers(0, 5, len(modules))))
    folds = np.array([fold_of[m] for m in labels.modules])
    scores = np.zeros(len(positive))
    for k in range(5):
        scores[folds == k] = held_out_scores(labels, folds != k, folds == k, a.hidden)
    print(f"module-grouped 5-fold (same packages): AUC {auc(scores, positive):.3f} "
          f"(nearness alone {auc(near, positive):.3f})")
    if not np.all(np.abs(labels.rewards) == 1.0):
        byte_proxy(labels, lpo)
    return 0


if __name__ == "__main__":
    sys.exit(main())
