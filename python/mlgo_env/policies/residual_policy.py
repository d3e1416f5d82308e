"""Residual margin policies: clang's margin moved by a shift *and* by a small network that
reads the call site.

    inline  iff  m + shift + g(x)  >  0,     g(x) = sum_j v_j * relu(W_j . z(x) + b_j)

``m`` is clang's anchored margin (mlgo_env.policies.margin_policy: ``max(threshold, 1) -
cost_estimate`` clamped to the default's side of the boundary), ``z`` every traced feature
through signed-log1p and standardised, and everything is in clang's cost units. With
``v = 0`` the policy *is* the constant shift, the strongest one-number policy; the network
only moves the boundary where it has learned to, by a number of cost units it states.
That is why the trainer's ``--method=residual`` learns in this form: the constant shift
that wins on training modules is its starting point, and what the network adds must beat
it on modules it was never fitted to.

The file is an ordinary version-2 policy (mlgo_env.policies.policy), no new decision: a
margin block, a relu layer whose first two units pass the margin through
(``relu(m) - relu(-m) = m`` exactly) and whose others are the network's hidden units, then
a linear layer with weights ``(1, -1, v)`` and bias ``shift``. The C++ runner of
``mlgo-env launch`` and ``trace --policy`` runs it with identical decisions.

A *bounded* residual clips ``g`` to ``[-B, B]`` cost units: only call sites whose shifted
margin is within ``B`` of the boundary can change their decision, so the network refines
the shift near the boundary instead of overruling clang far from it. The file has one
more relu layer for the clip (``clip(g, -B, B) = relu(g + B) - relu(g - B) - B``, the
margin passed through again): layer 2's units are ``relu(m), relu(-m), relu(g + B),
relu(g - B)``, layer 3 is linear with weights ``(1, -1, 1, -1)`` and bias ``shift - B``.

:func:`fit` is behavioural cloning of chosen decisions (the per-module best trajectories
of a grouped-flip search, mlgo_env.tuning.inlining_search): logistic regression of the
0/1 decisions on ``(m + shift + g(x)) / temperature`` with the margin's coefficient fixed
at 1 and weight decay pulling ``g`` towards 0 (towards the constant shift).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .optimiser import adam_step, standardisation
from .margin_policy import MARGIN_MINUS, MARGIN_PLUS, margin_spec
from .policy import DEFAULT_FEATURE, Layer, Policy, PolicyError, margin_column, transform

#: the anchored margin block every residual policy carries
MARGIN_SPEC = margin_spec(anchored=True)


@dataclass
class ResidualSpace:
    """Maps search vectors ``u = (v [hidden], shift)`` to residual policies with a fixed
    hidden layer (what the trainer's ES searches)."""

    problem: str
    features: list[str]
    mean: np.ndarray
    std: np.ndarray
    hidden: Layer  # [features, hidden] over the standardised features, relu
    #: g is clipped to [-bound, bound] cost units (None: unbounded)
    bound: float | None = None

    @property
    def size(self) -> int:
        return self.hidden.weights.shape[1] + 1

    def policy(self, u: np.ndarray, metadata: dict | None = None) -> Policy:
        u = np.asarray(u, dtype=np.float64)
        if u.shape != (self.size,):
            raise PolicyError(f"search vector has shape {u.shape}, expected ({self.size},)")
        n, h = self.hidden.weights.shape
        first = np.zeros((1 + n, 2 + h))
        first[0, 0], first[0, 1] = 1.0, -1.0       # relu(m) and relu(-m)
        first[1:, 2:] = self.hidden.weights
        layers = [Layer(first, np.concatenate([[0.0, 0.0], self.hidden.bias]), "relu")]
        if self.bound is None:
            out = np.concatenate([[1.0, -1.0], u[:-1]])[:, None]
            layers.append(Layer(out, u[-1:].copy(), "linear"))
        else:
            # relu(m), relu(-m) again, then relu(g + B) and relu(g - B): their difference
            # minus B is g clipped to [-B, B].
            b = float(self.bound)
            second = np.zeros((2 + h, 4))
            second[0, 0], second[1, 0], second[0, 1], second[1, 1] = 1.0, -1.0, -1.0, 1.0
            second[2:, 2] = second[2:, 3] = u[:-1]
            layers += [Layer(second, np.array([0.0, 0.0, b, -b]), "relu"),
                       Layer(np.array([[1.0], [-1.0], [1.0], [-1.0]]),
                             np.array([u[-1] - b]), "linear")]
        return Policy(self.problem, list(self.features), self.mean.copy(), self.std.copy(),
                      layers, dict(metadata or {}), ["signed-log1p"] * len(self.features),
                      dict(MARGIN_SPEC), "logit>0")

    def parts(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(anchored margin [n], hidden activations [n, hidden]) for raw rows in
        `features` order: the logit of ``u`` is ``m + a @ u[:-1] + u[-1]``."""
        rows = np.asarray(rows, dtype=np.float64)
        m = margin_column(rows, self.features, MARGIN_SPEC)
        z = (transform(rows) - self.mean) / self.std
        return m, np.maximum(z @ self.hidden.weights + self.hidden.bias, 0.0)

    def logits(self, u: np.ndarray, rows: np.ndarray) -> np.ndarray:
        m, a = self.parts(rows)
        return m + self.clip(a @ np.asarray(u[:-1], float)) + float(u[-1])

    def residual(self, u: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """g(x) alone (cost units, clipped to the bound), without margin and shift."""
        return self.clip(self.parts(rows)[1] @ np.asarray(u[:-1], float))

    def clip(self, g: np.ndarray) -> np.ndarray:
        return g if self.bound is None else np.clip(g, -self.bound, self.bound)


@dataclass
class Fit:
    space: ResidualSpace
    u: np.ndarray
    agreement: float     # share of the fitted decisions the policy reproduces
    base_agreement: float  # the same for the constant shift alone (v = 0)


def fit(problem: str, features: Sequence[str], rows: np.ndarray, decisions: np.ndarray,
        shift: float, hidden: int = 16, l2: float = 1e-2, temperature: float = 10.0,
        epochs: int = 1500, lr: float = 0.01, seed: int = 0,
        bound: float | None = None,
        scaling: tuple[np.ndarray, np.ndarray] | None = None) -> Fit:
    """The residual policy imitating the 0/1 `decisions` of raw `rows` (columns:
    `features`, which must hold threshold, cost_estimate and inlining_default), starting
    from the constant `shift`. Full-batch Adam on the logistic loss of
    ``(m + shift + c + g(x)) / temperature``, g clipped to [-bound, bound] when a bound
    is given. With a bound, the decisions whose shifted margin is farther than the bound
    from the boundary are left out of the loss: g cannot move them, so all they could
    teach is a larger c, a new constant shift that nobody evaluated (on real labels they
    pulled c to -13 cost units and the fit agreed with fewer decisions than the shift
    alone). `l2` decays W, v and c (c joins the shift). `scaling`: the features' (mean,
    std) after the transform, instead of those of `rows`; the scores count every row."""
    features = list(features)
    missing = [f for f in (MARGIN_PLUS, MARGIN_MINUS, DEFAULT_FEATURE) if f not in features]
    if missing:
        raise ValueError(f"a residual policy needs the feature(s) {', '.join(missing)}")
    rows = np.asarray(rows, dtype=np.float64)
    y = np.asarray(decisions, dtype=np.float64)
    t = transform(rows)
    mean, std = scaling if scaling is not None else standardisation(t)
    x = (t - mean) / std
    m = margin_column(rows, features, MARGIN_SPEC) + shift
    if bound is not None:
        movable = np.abs(m) <= bound
        x, m, y_fit = x[movable], m[movable], y[movable]
    else:
        y_fit = y
    rng = np.random.default_rng(seed)
    n_in = x.shape[1]
    # Unit scale inside: the output weights are in units of `temperature`.
    params = [rng.normal(0, 1 / np.sqrt(n_in), (n_in, hidden)), np.zeros(hidden),
              np.zeros(hidden), np.zeros(1)]
    mom = [np.zeros_like(p) for p in params]
    vel = [np.zeros_like(p) for p in params]
    inner = np.inf if bound is None else bound / temperature
    for step in range(1, epochs + 1):
        w1, b1, v, c = params
        pre = x @ w1 + b1
        a = np.maximum(pre, 0.0)
        r = a @ v
        logit = np.clip((m / temperature) + np.clip(r, -inner, inner) + c[0], -60, 60)
        p = 1.0 / (1.0 + np.exp(-logit))
        g = (p - y_fit) / max(len(y_fit), 1)
        gr = g * (np.abs(r) < inner)  # no gradient through the clip
        gv = a.T @ gr + l2 * v
        gc = np.array([g.sum() + l2 * c[0]])
        ga = np.outer(gr, v) * (pre > 0)
        gw1 = x.T @ ga + l2 * w1
        gb1 = ga.sum(axis=0)
        adam_step(params, (gw1, gb1, gv, gc), mom, vel, step, lr)
    w1, b1, v, c = params
    space = ResidualSpace(problem, features, mean, std, Layer(w1, b1, "relu"), bound)
    u = np.concatenate([v * temperature, [shift + c[0] * temperature]])
    return _scored(space, u, rows, y, shift)


def _scored(space: ResidualSpace, u: np.ndarray, rows: np.ndarray, decisions: np.ndarray,
            shift: float) -> Fit:
    """The Fit of `u`: how many of the 0/1 `decisions` it and the constant `shift` alone
    reproduce (1.0 without decisions)."""
    if not len(decisions):
        return Fit(space, u, 1.0, 1.0)
    label = decisions > 0.5
    m = margin_column(rows, space.features, MARGIN_SPEC) + shift
    return Fit(space, u, float(np.mean((space.logits(u, rows) > 0) == label)),
               float(np.mean((m > 0) == label)))


def fit_bagged(problem: str, features: Sequence[str], rows: np.ndarray,
               decisions: np.ndarray, groups: Sequence[str], shift: float,
               **options) -> Fit:
    """One network per group (a package) fitted on the other groups' rows, averaged: the
    hidden layers side by side, each output weight divided by the number of networks,
    the shift their mean. A correction only some packages' labels ask for is diluted by
    the networks that never saw them; what every package agrees on stays. One group: a
    plain :func:`fit`. Options as for :func:`fit` (not `scaling`: all networks share the
    standardisation of every row, so they can be added)."""
    rows = np.asarray(rows, dtype=np.float64)
    decisions = np.asarray(decisions, dtype=np.float64)
    names = sorted(set(groups))
    if len(names) < 2:
        return fit(problem, features, rows, decisions, shift, **options)
    scaling = standardisation(transform(rows))
    labels = np.asarray(groups)
    fits = [fit(problem, features, rows[labels != g], decisions[labels != g], shift,
                scaling=scaling, **options) for g in names]
    k = len(fits)
    hidden = Layer(np.concatenate([f.space.hidden.weights for f in fits], axis=1),
                   np.concatenate([f.space.hidden.bias for f in fits]), "relu")
    space = ResidualSpace(problem, list(features), scaling[0], scaling[1], hidden,
                          fits[0].space.bound)
    u = np.concatenate([np.concatenate([f.u[:-1] for f in fits]) / k,
                        [float(np.mean([f.u[-1] for f in fits]))]])
    return _scored(space, u, rows, decisions, shift)


def with_scale(u: np.ndarray, scale: float, shift: float | None = None) -> np.ndarray:
    """`u` with the network's output scaled by `scale` (0: the constant shift alone) and,
    if given, another shift."""
    out = np.asarray(u, dtype=np.float64).copy()
    out[:-1] *= scale
    if shift is not None:
        out[-1] = shift
    return out


def space_of(policy: Policy) -> tuple[ResidualSpace, np.ndarray]:
    """The residual space of a residual policy and its search vector (resuming);
    PolicyError when `policy` is not of this form."""
    layers = policy.layers
    ok = (policy.margin == MARGIN_SPEC and policy.decision == "logit>0"
          and len(layers) in (2, 3) and layers[0].activation == "relu"
          and layers[-1].activation == "linear")
    if ok:
        first = layers[0]
        ok = (np.array_equal(first.weights[0, :2], [1.0, -1.0])
              and not first.weights[1:, :2].any() and not first.weights[0, 2:].any()
              and not first.bias[:2].any())
    bound = None
    if ok and len(layers) == 2:
        v, shift = layers[1].weights[2:, 0], layers[1].bias[0]
        ok = np.array_equal(layers[1].weights[:2, 0], [1.0, -1.0])
    elif ok:
        second, out = layers[1], layers[2]
        bound = float(second.bias[2]) if second.bias.shape == (4,) else -1.0
        v, shift = second.weights[2:, 2], out.bias[0] + bound
        ok = (second.activation == "relu" and bound > 0
              and np.array_equal(second.bias, [0.0, 0.0, bound, -bound])
              and np.array_equal(second.weights[:2], [[1.0, -1.0, 0, 0], [-1.0, 1.0, 0, 0]])
              and np.array_equal(second.weights[2:, 3], v) and not second.weights[2:, :2].any()
              and np.array_equal(out.weights[:, 0], [1.0, -1.0, 1.0, -1.0]))
    if not ok:
        raise PolicyError("the policy is not a residual margin policy "
                          "(see mlgo_env.policies.residual_policy)")
    space = ResidualSpace(policy.problem, list(policy.features), policy.mean.copy(),
                          policy.std.copy(), Layer(first.weights[1:, 2:].copy(),
                                                   first.bias[2:].copy(), "relu"), bound)
    return space, np.concatenate([v, [shift]])
