"""The inlining trainer's search over margin-policy vectors, scored with common random
numbers (every candidate on the same fixed training modules), and the score itself.

:class:`ElitistES` proposes `pairs` mirrored perturbations ``u +/- sigma * d`` of the incumbent
``u`` (``d`` Gaussian, per-coordinate scales `sigma`) plus, after the first round, one
step along the antithetic gradient estimate of the previous round (its length
proportional to sigma, like a learning rate tied to the perturbation scale). The best
candidate replaces the incumbent when it scores higher; sigma grows after a success and
shrinks after a failure (the one-fifth rule's spirit), within bounds; a round whose
candidates all tie with the incumbent (no decision moved) grows it too.

The score of a candidate on a set of modules blends the two things the project cares
about: the mean of per-module rewards (no module dominates) and the reduction of the
total bytes (what the target is stated in), see :func:`objective`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from .. import episodes as ep


def objective(results: Sequence[ep.EpisodeResult], total_weight: float) -> float:
    """``(1 - total_weight) * mean per-module reward + total_weight * total reduction``,
    where the total reduction is ``1 - sum(policy bytes) / sum(default bytes)``."""
    s = ep.summarise(results)
    return (1.0 - total_weight) * s["reward_mean"] - total_weight * s["total_change"]


def objective_terms(results: Sequence[ep.EpisodeResult], total_weight: float) -> np.ndarray:
    """Per-module terms whose mean is :func:`objective`: ``(1 - w) * reward_i + w * n *
    (default_i - policy_i) / sum(default)``."""
    d = np.asarray([r.default_score for r in results], dtype=np.float64)
    p = np.asarray([r.policy_score for r in results], dtype=np.float64)
    r = np.asarray([r.reward for r in results], dtype=np.float64)
    total = d.sum() or 1.0
    return (1.0 - total_weight) * r + total_weight * len(d) * (d - p) / total


def paired_margin(a: Sequence[ep.EpisodeResult], b: Sequence[ep.EpisodeResult],
                  total_weight: float) -> tuple[float, float]:
    """(objective(a) - objective(b), the standard error of that difference) for two
    policies played on the same modules in the same order, from the per-module terms'
    paired differences (0 with fewer than two modules)."""
    if [r.module for r in a] != [r.module for r in b]:
        raise ValueError("paired_margin: the two result lists are not of the same modules")
    diff = objective_terms(a, total_weight) - objective_terms(b, total_weight)
    if len(diff) == 0:
        return 0.0, 0.0
    se = float(np.std(diff, ddof=1) / np.sqrt(len(diff))) if len(diff) > 1 else 0.0
    return float(diff.mean()), se


@dataclass
class ElitistES:
    """(1+lambda)-ES with mirrored sampling and a gradient-step candidate."""

    u: np.ndarray                 # the incumbent
    sigma: np.ndarray             # per-coordinate perturbation scale
    pairs: int = 4
    grow: float = 1.4
    shrink: float = 0.75
    sigma_min: float = 0.25
    sigma_max: float = 200.0
    score: float = -np.inf        # the incumbent's score
    _directions: np.ndarray | None = field(default=None, repr=False)
    _gradient: np.ndarray | None = field(default=None, repr=False)

    def propose(self, rng: np.random.Generator) -> list[np.ndarray]:
        """This round's candidates: mirrored pairs first, then the gradient step if any."""
        d = rng.standard_normal((self.pairs, self.u.size))
        self._directions = d
        candidates = [self.u + s * self.sigma * v for v in d for s in (1.0, -1.0)]
        if self._gradient is not None:
            candidates.append(self.u + self.sigma * self._gradient)
        return candidates

    def tell(self, candidates: Sequence[np.ndarray], scores: Sequence[float]) -> bool:
        """Takes the round's scores (in `propose` order); True when the incumbent moved."""
        scores = np.asarray(scores, dtype=np.float64)
        k = 0 if self._directions is None else len(self._directions)
        if k:
            diff = scores[0:2 * k:2] - scores[1:2 * k:2]
            g = diff @ self._directions
            norm = float(np.linalg.norm(g))
            # A unit step along the estimate, as long as a typical perturbation.
            self._gradient = g / norm * np.sqrt(self.u.size) if norm > 0 else None
        best = int(np.argmax(scores))
        improved = bool(scores[best] > self.score)
        if improved:
            self.u, self.score = np.asarray(candidates[best], float).copy(), float(scores[best])
            self.sigma = np.minimum(self.sigma * self.grow, self.sigma_max)
        elif np.all(scores == self.score):
            # No candidate changed any module's bytes: the steps were too small to move a
            # decision (replays of the incumbent), so shrinking further would stall.
            self.sigma = np.minimum(self.sigma * self.grow, self.sigma_max)
        else:
            self.sigma = np.maximum(self.sigma * self.shrink, self.sigma_min)
        return improved

    def state(self) -> dict[str, Any]:
        return {"u": self.u.tolist(), "sigma": self.sigma.tolist(), "score": self.score,
                "gradient": None if self._gradient is None else self._gradient.tolist()}

    def load(self, state: dict[str, Any]) -> None:
        self.u = np.asarray(state["u"], float)
        self.sigma = np.asarray(state["sigma"], float)
        self.score = float(state["score"])
        g = state.get("gradient")
        self._gradient = None if g is None else np.asarray(g, float)
