"""Flip classifiers: a policy that answers clang's default decision except where a small
network says "flip here", learned from counterfactual labels.

The labels came from single flips of default trajectories (the removed classifier trainer):
the default episode of a training module with exactly one decision flipped; the flipped
decision saw exactly the recorded features, and the episode's reward says whether that
one deviation shrank the module. The classifier predicts, from the features of a
decision (including ``inlining_default``, so it learns "inline this refused call" and
"refuse this inlined call" apart), whether flipping it shrinks the module.

The policy file is an ordinary version-2 policy (mlgo_env.policies.policy) with
``"decision": "flip-default-if-logit>0"``: every feature through signed-log1p,
standardised, one tanh hidden layer, one logit; the answer is the default XOR
``logit > 0``. Shifting the output bias down makes it flip fewer call sites (only the
surest); a bias far below 0 is the default exactly.

Single-flip labels say nothing about interactions (a policy flips several call sites of
one module), so the trainer does not trust the classifier's probabilities: it plays the
classifier's policy at several output biases, and an evolution-strategies search over
the output layer, on training modules, and keeps what scores best on other training
modules (mlgo_env.train, --method=classifier).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .optimiser import adam_step, standardisation
from .policy import DEFAULT_FEATURE, Layer, Policy, transform

FLIP_DECISION = "flip-default-if-logit>0"


@dataclass
class ClassifierSpace:
    """Maps search vectors ``u = (output weights [hidden], output bias)`` to flip-classifier
    policies with a fixed first layer (what the ES searches)."""

    problem: str
    features: list[str]
    mean: np.ndarray
    std: np.ndarray
    hidden: Layer

    @property
    def size(self) -> int:
        return self.hidden.weights.shape[1] + 1

    def policy(self, u: np.ndarray, metadata: dict | None = None) -> Policy:
        u = np.asarray(u, dtype=np.float64)
        out = Layer(u[:-1].reshape(-1, 1).copy(), u[-1:].copy(), "linear")
        return Policy(self.problem, list(self.features), self.mean.copy(), self.std.copy(),
                      [Layer(self.hidden.weights.copy(), self.hidden.bias.copy(), "tanh"), out],
                      dict(metadata or {}), ["signed-log1p"] * len(self.features), None,
                      FLIP_DECISION)

    def logits(self, u: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Logits of search vector `u` for raw rows in `features` order."""
        return self.policy(u).logits(rows)


@dataclass
class Fit:
    space: ClassifierSpace
    u: np.ndarray              # the fitted output layer (weights, bias)
    train_loss: float


def label_weights(rewards: np.ndarray) -> np.ndarray:
    """The fit's sample weights for labels with signed `rewards`: |reward|, floored so a
    label worth nothing still counts a little."""
    return np.abs(np.asarray(rewards, dtype=np.float64)) + 1e-3


def fit(problem: str, features: Sequence[str], rows: np.ndarray, labels: np.ndarray,
        weights: np.ndarray | None = None, hidden: int = 16, l2: float = 1e-3,
        epochs: int = 1500, lr: float = 0.01, seed: int = 0,
        mean: np.ndarray | None = None, std: np.ndarray | None = None) -> Fit:
    """Weighted logistic regression of `labels` (1: flipping shrank the module) on the
    standardised signed-log1p features through one tanh hidden layer (full-batch Adam)."""
    features = list(features)
    if DEFAULT_FEATURE not in features:
        raise ValueError(f"a flip classifier needs the feature '{DEFAULT_FEATURE}'")
    rows = np.asarray(rows, dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    w = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=np.float64)
    w = w / max(w.sum(), 1e-12)
    if mean is None or std is None:
        mean, std = standardisation(transform(rows))
    x = (transform(rows) - mean) / std
    rng = np.random.default_rng(seed)
    n_in = x.shape[1]
    params = [rng.normal(0, 1 / np.sqrt(n_in), (n_in, hidden)), np.zeros(hidden),
              rng.normal(0, 1 / np.sqrt(hidden), (hidden,)),
              np.array([np.log(max(y @ w, 1e-3) / max(1 - y @ w, 1e-3))])]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    loss = 0.0
    for step in range(1, epochs + 1):
        w1, b1, w2, b2 = params
        h = np.tanh(x @ w1 + b1)
        logit = h @ w2 + b2[0]
        p = 1.0 / (1.0 + np.exp(-np.clip(logit, -30, 30)))
        loss = float(w @ (np.logaddexp(0, logit) - y * logit)
                     + 0.5 * l2 * (np.sum(w1 * w1) + np.sum(w2 * w2)))
        g = w * (p - y)
        gw2 = h.T @ g + l2 * w2
        gb2 = np.array([g.sum()])
        gh = np.outer(g, w2) * (1 - h * h)
        gw1 = x.T @ gh + l2 * w1
        gb1 = gh.sum(axis=0)
        adam_step(params, (gw1, gb1, gw2, gb2), m, v, step, lr)
    w1, b1, w2, b2 = params
    space = ClassifierSpace(problem, features, np.asarray(mean), np.asarray(std),
                            Layer(w1, b1, "tanh"))
    return Fit(space, np.concatenate([w2, b2]), loss)


def bias_for_rate(space: ClassifierSpace, u: np.ndarray, rows: np.ndarray,
                  rate: float) -> float:
    """The output bias under which the classifier flips a share `rate` of `rows` (the
    decisions of default trajectories): the (1 - rate) quantile of the logits without
    bias, negated."""
    base = space.logits(np.concatenate([u[:-1], [0.0]]), rows)
    if rate <= 0 or len(base) == 0:
        return float(-np.max(base, initial=0.0) - 1.0)
    return float(-np.quantile(base, 1.0 - rate))


def space_of(policy: Policy) -> tuple[ClassifierSpace, np.ndarray]:
    """The classifier space of a flip-classifier policy and its search vector (resuming)."""
    from .policy import PolicyError
    if (policy.decision != FLIP_DECISION or len(policy.layers) != 2
            or policy.layers[0].activation != "tanh" or policy.layers[1].activation != "linear"):
        raise PolicyError("the policy is not a flip classifier (see mlgo_env.policies.flip_classifier)")
    first, out = policy.layers
    space = ClassifierSpace(policy.problem, list(policy.features), policy.mean.copy(),
                            policy.std.copy(), Layer(first.weights.copy(), first.bias.copy(),
                                                     "tanh"))
    return space, np.concatenate([out.weights[:, 0], out.bias[:1]])
