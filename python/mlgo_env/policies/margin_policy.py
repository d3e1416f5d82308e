"""Inlining policies of the "margin" form, the space the trainer searches.

clang's -Oz heuristic inlines a call site when its cost estimate is below the threshold
(``cost < max(1, threshold)`` in LLVM's InlineCost), i.e. when the margin
``m = max(threshold, 1) - cost_estimate`` is positive. A margin policy decides

    inline  iff  m + shift + sum_i w_i * z_i  >  0

where ``z_i`` are a few shape features (``sign(v) * log1p(|v|)``, standardised on the
training decisions). Everything is in clang's cost units (one instruction costs 5), so
``shift = +10`` means "inline call sites up to two instructions more expensive than the
default would", and ``w_i`` moves the boundary by ``w_i`` cost units per standard
deviation of feature ``i``.

The features clang exposes do not carry every bonus its heuristic adds (the vector
bonus, for one), so ``m > 0`` disagrees with the default on about 1% of decisions, and
those few can cost a module several percent. An *anchored* space (the trainer's default)
therefore clamps ``m`` to the side of the boundary the default chose (``inlining_default``):
``max(m, 0.5)`` where the default inlines, ``min(m, -0.5)`` where it does not. At
``shift = 0, w = 0`` that is the default exactly; ``shift = +b`` additionally inlines every
refused call site whose margin is above ``-b``, and ``w`` does the same per feature: the
search moves the boundary by known amounts, it does not flip random call sites.

A margin policy is an ordinary version-2 policy file with a ``"margin"`` block (see
mlgo_env.policies.policy): one linear layer whose weight is 1 on the margin input, 0 on the raw
margin features, ``w_i`` on the shape features, and whose bias is ``shift``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .policy import DEFAULT_FEATURE, Layer, Policy, PolicyError, margin_column, transform

MARGIN_PLUS = "threshold"
MARGIN_MINUS = "cost_estimate"
#: shape features the trainer uses unless told otherwise
DEFAULT_SHAPE = ("callee_users", "caller_users", "callsite_height", "nested_inlines",
                 "node_count", "callee_basic_block_count", "is_multiple_blocks",
                 "nr_ctant_params")


def margin_spec(anchored: bool = True) -> dict:
    """The margin block of clang's margin ``max(threshold, 1) - cost_estimate``, clamped
    to the default's side when `anchored` (mlgo_env.policies.policy.margin_column)."""
    spec = {"plus": MARGIN_PLUS, "floor": 1.0, "minus": MARGIN_MINUS, "epsilon": 0.5}
    if anchored:
        spec["anchor"] = DEFAULT_FEATURE
    return spec


@dataclass
class MarginSpace:
    """Maps search vectors ``u = (shift, w_1, ..., w_k)`` (cost units) to policies."""

    problem: str
    shape: list[str]
    mean: np.ndarray  # of the transformed shape features
    std: np.ndarray
    anchored: bool = True

    @property
    def raw(self) -> list[str]:
        """The features the margin is computed from."""
        return [MARGIN_PLUS, MARGIN_MINUS] + ([DEFAULT_FEATURE] if self.anchored else [])

    @property
    def features(self) -> list[str]:
        return [*self.raw, *self.shape]

    @property
    def size(self) -> int:
        return 1 + len(self.shape)

    def spec(self) -> dict:
        """The policy file's margin block."""
        return margin_spec(self.anchored)

    def policy(self, u: np.ndarray, metadata: dict | None = None) -> Policy:
        """The policy file for search vector `u`."""
        u = np.asarray(u, dtype=np.float64)
        if u.shape != (self.size,):
            raise PolicyError(f"search vector has shape {u.shape}, expected ({self.size},)")
        r = len(self.raw)
        weights = np.concatenate([[1.0], np.zeros(r), u[1:]])[:, None]
        return Policy(self.problem, self.features, np.concatenate([np.zeros(r), self.mean]),
                      np.concatenate([np.ones(r), self.std]),
                      [Layer(weights, u[:1].copy(), "linear")], dict(metadata or {}),
                      ["identity"] * r + ["signed-log1p"] * len(self.shape), self.spec())

    def standardised(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(margin input, z) for raw rows in `features` order."""
        rows = np.asarray(rows, dtype=np.float64)
        r = len(self.raw)
        return (margin_column(rows, self.features, self.spec()),
                (transform(rows[:, r:]) - self.mean) / self.std)


def make_space(problem: str, names: Sequence[str], rows: np.ndarray,
               shape: Sequence[str] = DEFAULT_SHAPE, anchored: bool = True) -> MarginSpace:
    """A margin space over the shape features present in `names` (a trace's columns),
    standardised on `rows`; PolicyError when a needed feature is missing."""
    needed = [MARGIN_PLUS, MARGIN_MINUS] + ([DEFAULT_FEATURE] if anchored else [])
    missing = [f for f in needed if f not in names]
    if missing:
        raise PolicyError(f"the features lack {', '.join(missing)}: a margin policy needs "
                          f"{', '.join(needed)}")
    unknown = [f for f in shape if f not in names]
    if unknown:
        raise PolicyError(f"unknown shape feature(s) {', '.join(unknown)}")
    cols = [list(names).index(f) for f in shape]
    t = transform(np.asarray(rows, dtype=np.float64)[:, cols])
    mean = t.mean(axis=0) if len(t) else np.zeros(len(cols))
    std = np.maximum(t.std(axis=0), 1e-3) if len(t) else np.ones(len(cols))
    return MarginSpace(problem, list(shape), mean, std, anchored)


@dataclass
class MarginFit:
    u: np.ndarray        # the fitted search vector
    agreement: float     # share of rows where the fitted policy decides as the labels
    loss: float          # mean logistic loss at the temperature used


def fit_margin(space: MarginSpace, rows: np.ndarray, labels: np.ndarray,
               temperature: float = 1.0, ridge: float = 1.0, iterations: int = 30
               ) -> MarginFit:
    """Behavioural cloning in the margin form: logistic regression of `labels` (0/1) on
    ``(margin + shift + w.z) / temperature`` with the margin's coefficient fixed at 1
    (Newton's method; `ridge` penalises |w|^2, not the shift). `rows` are raw feature rows
    in ``space.features`` order."""
    margin, z = space.standardised(rows)
    y = np.asarray(labels, dtype=np.float64)
    x = np.column_stack([np.ones(len(y)), z]) / temperature
    offset = margin / temperature
    penalty = np.full(space.size, ridge / max(len(y), 1))
    penalty[0] = 0.0
    beta = np.zeros(space.size)

    def loss_of(b: np.ndarray) -> float:
        logit = np.clip(offset + x @ b, -60, 60)
        return float(np.mean(np.logaddexp(0.0, logit) - y * logit)
                     + 0.5 * penalty @ (b * b))

    current = loss_of(beta)
    for _ in range(iterations):
        logit = np.clip(offset + x @ beta, -60, 60)
        p = 1.0 / (1.0 + np.exp(-logit))
        grad = x.T @ (p - y) / len(y) + penalty * beta
        hess = (x * (p * (1 - p))[:, None]).T @ x / len(y) + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hess, grad)
        scale = 1.0
        while scale > 1e-4 and loss_of(beta - scale * step) > current:
            scale *= 0.5
        if scale <= 1e-4:
            break
        beta = beta - scale * step
        previous, current = current, loss_of(beta)
        if previous - current < 1e-10:
            break
    # The logistic loss weighs a far-off disagreement by its distance, so a few outliers
    # can pull the shift across a crowd of ties at the boundary: set the shift to the
    # value that agrees with the most labels (the one nearest the fitted shift on ties).
    scores = margin + z @ beta[1:]
    beta[0] = best_shift(scores, y > 0.5, beta[0])
    decisions = (scores + beta[0]) > 0
    agreement = float(np.mean(decisions == (y > 0.5))) if len(y) else 1.0
    return MarginFit(beta, agreement, loss_of(beta))


def best_shift(scores: np.ndarray, labels: np.ndarray, prefer: float) -> float:
    """The shift maximising agreement of ``scores + shift > 0`` with boolean `labels`:
    candidates are the midpoints between consecutive distinct scores (negated); among
    the best, the one nearest `prefer`."""
    if len(scores) == 0:
        return prefer
    values = np.unique(scores)
    cuts = np.concatenate([[values[0] - 1.0], (values[:-1] + values[1:]) / 2, [values[-1] + 1.0]])
    order = np.argsort(scores)
    s, lab = scores[order], labels[order]
    # For cut c: agreement = #(label 0 with score <= c) + #(label 1 with score > c).
    below = np.searchsorted(s, cuts, side="right")
    zeros_below = np.concatenate([[0], np.cumsum(~lab)])[below]
    ones_above = lab.sum() - np.concatenate([[0], np.cumsum(lab)])[below]
    agree = zeros_below + ones_above
    best = np.flatnonzero(agree == agree.max())
    shifts = -cuts[best]
    return float(shifts[np.argmin(np.abs(shifts - prefer))])


def space_of(policy: Policy) -> tuple[MarginSpace, np.ndarray]:
    """The margin space a margin policy lives in, and its search vector (for resuming);
    PolicyError when `policy` is not of the margin form."""
    spec = policy.margin or {}
    anchored = bool(spec.get("anchor"))
    r = 3 if anchored else 2
    layer = policy.layers[0] if len(policy.layers) == 1 else None
    expected = MarginSpace(policy.problem, list(policy.features[r:]), policy.mean[r:].copy(),
                           policy.std[r:].copy(), anchored)
    if (not spec or spec != expected.spec() or policy.features[:r] != expected.raw
            or layer is None or layer.activation != "linear"
            or not np.allclose(layer.weights[:r + 1, 0], [1.0] + [0.0] * r)):
        raise PolicyError("the policy is not a margin policy (see mlgo_env.policies.margin_policy)")
    return expected, np.concatenate([layer.bias[:1], layer.weights[r + 1:, 0]])


def fit_margin_cv(space: MarginSpace, rows: np.ndarray, labels: np.ndarray,
                  groups: Sequence[str], ridges: Sequence[float] = (1.0, 30.0, 1e3, 1e5),
                  temperature: float = 1.0) -> tuple[MarginFit, float]:
    """`fit_margin` with the ridge chosen by agreement on held-out groups (modules): fit
    on two thirds of the groups, measure on the rest, refit on everything with the ridge
    that agreed best (the largest, on ties: the closest to the plain margin rule)."""
    names = sorted(set(groups))
    held = {g for i, g in enumerate(names) if i % 3 == 2}
    test = np.asarray([g in held for g in groups], dtype=bool)
    best_ridge, best_agreement = max(ridges), -1.0
    if test.any() and (~test).any():
        for ridge in sorted(ridges, reverse=True):
            fit = fit_margin(space, rows[~test], labels[~test], temperature, ridge)
            margin, z = space.standardised(rows[test])
            decided = (margin + np.column_stack([np.ones(len(z)), z]) @ fit.u) > 0
            agreement = float(np.mean(decided == (labels[test] > 0.5)))
            if agreement > best_agreement + 1e-4:
                best_ridge, best_agreement = ridge, agreement
    return fit_margin(space, rows, labels, temperature, best_ridge), best_ridge
