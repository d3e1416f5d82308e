"""The learning parts of the trainer, in numpy alone: behavioural cloning of a policy on
recorded (features, decision) pairs, and antithetic evolution strategies.

Everything here is deterministic given its numpy Generator; nothing here runs compilers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..policies.policy import Layer, Policy, apply_transforms, forward, transform


class Adam:
    """Adam on a flat parameter vector (ascends when given a gradient to ascend)."""

    def __init__(self, size: int, lr: float, beta1: float = 0.9, beta2: float = 0.999,
                 eps: float = 1e-8) -> None:
        self.lr, self.beta1, self.beta2, self.eps = lr, beta1, beta2, eps
        self.m = np.zeros(size)
        self.v = np.zeros(size)
        self.t = 0

    def step(self, gradient: np.ndarray) -> np.ndarray:
        """The update to add to the parameters for `gradient` (a direction to go)."""
        self.t += 1
        self.m = self.beta1 * self.m + (1 - self.beta1) * gradient
        self.v = self.beta2 * self.v + (1 - self.beta2) * gradient * gradient
        m_hat = self.m / (1 - self.beta1 ** self.t)
        v_hat = self.v / (1 - self.beta2 ** self.t)
        return self.lr * m_hat / (np.sqrt(v_hat) + self.eps)

    def state(self) -> dict[str, np.ndarray]:
        return {"adam_m": self.m, "adam_v": self.v, "adam_t": np.asarray(self.t)}

    def load(self, state: dict[str, np.ndarray]) -> None:
        self.m = np.asarray(state["adam_m"], float).copy()
        self.v = np.asarray(state["adam_v"], float).copy()
        self.t = int(state["adam_t"])


def standardisation(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and std of the transformed features (std floored so constants stay finite)."""
    t = transform(rows)
    return t.mean(axis=0), np.maximum(t.std(axis=0), 1e-3)


def _gradients(layers: list[Layer], x: np.ndarray, y: np.ndarray, w: np.ndarray
               ) -> tuple[float, list[tuple[np.ndarray, np.ndarray]]]:
    """Weighted logistic loss and its gradients for every layer (backpropagation)."""
    activations = [x]
    for l in layers:
        z = activations[-1] @ l.weights + l.bias
        if l.activation == "tanh":
            z = np.tanh(z)
        elif l.activation == "relu":
            z = np.maximum(z, 0.0)
        activations.append(z)
    logit = activations[-1][:, 0]
    p = 1.0 / (1.0 + np.exp(-np.clip(logit, -40, 40)))
    total = w.sum()
    loss = float(-(w * (y * np.log(p + 1e-12) + (1 - y) * np.log(1 - p + 1e-12))).sum() / total)
    delta = ((p - y) * w / total)[:, None]
    grads: list[tuple[np.ndarray, np.ndarray]] = []
    for i in range(len(layers) - 1, -1, -1):
        l, out, inp = layers[i], activations[i + 1], activations[i]
        if l.activation == "tanh":
            delta = delta * (1 - out * out)
        elif l.activation == "relu":
            delta = delta * (out > 0)
        grads.append((inp.T @ delta, delta.sum(axis=0)))
        delta = delta @ l.weights.T
    grads.reverse()
    return loss, grads


@dataclass
class CloningResult:
    policy: Policy
    loss: float
    agreement: float  # weighted share of rows where the policy's decision equals the label


def clone(policy: Policy, rows: np.ndarray, labels: np.ndarray, weights: np.ndarray | None,
          epochs: int, rng: np.random.Generator, lr: float = 0.01, batch: int = 256
          ) -> CloningResult:
    """Behavioural cloning: fits `policy` (its normalisation kept) to decide `labels` (0/1)
    on raw feature `rows`, minimising weighted logistic loss with Adam in minibatches."""
    x = (apply_transforms(rows, policy.transforms) - policy.mean) / policy.std
    y = np.asarray(labels, dtype=np.float64)
    w = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=np.float64)
    current = policy.with_flat(policy.flat())
    opt = Adam(current.flat().size, lr)
    n = len(y)
    for _ in range(epochs):
        order = rng.permutation(n)
        for start in range(0, n, batch):
            idx = order[start:start + batch]
            _, grads = _gradients(current.layers, x[idx], y[idx], w[idx])
            flat_grad = np.concatenate([np.concatenate([g.ravel(), b.ravel()]) for g, b in grads])
            current = current.with_flat(current.flat() - opt.step(flat_grad))
    loss, _ = _gradients(current.layers, x, y, w)
    decisions = (forward(current.layers, x) > 0).astype(np.float64)
    agreement = float((w * (decisions == y)).sum() / w.sum()) if n else 1.0
    return CloningResult(current, loss, agreement)


def centered_ranks(values: np.ndarray) -> np.ndarray:
    """Maps values to ranks scaled into [-0.5, 0.5] (ties broken by position)."""
    values = np.asarray(values, dtype=np.float64)
    ranks = np.empty(len(values))
    ranks[np.argsort(values, kind="stable")] = np.arange(len(values))
    return ranks / max(len(values) - 1, 1) - 0.5


def antithetic_directions(rng: np.random.Generator, count: int, size: int) -> np.ndarray:
    """`count` Gaussian directions; each is evaluated at +sigma and -sigma."""
    return rng.standard_normal((count, size))


def es_gradient(directions: np.ndarray, plus: np.ndarray, minus: np.ndarray) -> np.ndarray:
    """The antithetic ES estimate of the gradient of the mean reward, from the rewards of
    theta + sigma*d and theta - sigma*d per direction d, centred-ranked together so one
    outlier module cannot dominate (the caller scales by its step size)."""
    ranked = centered_ranks(np.concatenate([plus, minus]))
    k = len(plus)
    weights = ranked[:k] - ranked[k:]
    return weights @ directions / max(k, 1)


def normalise_margin(policy: Policy, rows: np.ndarray, target: float = 2.0) -> Policy:
    """The same decisions with the last layer scaled so the median |logit| over `rows` is
    `target`: cloning on a near-deterministic default drives logits far from 0, and a
    perturbation of fixed size would then change nothing."""
    median = float(np.median(np.abs(policy.logits(rows)))) if len(rows) else 0.0
    if median <= 0:
        return policy
    scaled = policy.with_flat(policy.flat())
    last = scaled.layers[-1]
    last.weights *= target / median
    last.bias *= target / median
    return scaled


def calibrate_sigma(policy: Policy, rows: np.ndarray, flip_rate: float,
                    rng: np.random.Generator, directions: int = 8) -> float:
    """The perturbation scale at which a random direction changes about `flip_rate` of the
    decisions on `rows` (bisection on a log scale)."""
    theta = policy.flat()
    base = policy.logits(rows) > 0
    dirs = rng.standard_normal((directions, theta.size))

    def rate(sigma: float) -> float:
        return float(np.mean([(policy.with_flat(theta + sigma * d).logits(rows) > 0) != base
                              for d in dirs]))
    lo, hi = 1e-4, 10.0
    for _ in range(30):
        mid = (lo * hi) ** 0.5
        lo, hi = (mid, hi) if rate(mid) < flip_rate else (lo, mid)
    return (lo * hi) ** 0.5
