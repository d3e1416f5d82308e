"""Antithetic evolution strategies over a flat parameter vector, in the manner of
ml-compiler-opt's ``compiler_opt/es`` (a Monte-Carlo gradient estimate from mirrored
perturbations, then a gradient step on the current point).

Each round proposes ``pairs`` Gaussian directions ``d_k`` and the candidates
``theta + sigma * d_k`` and ``theta - sigma * d_k``; the caller scores them all on the same
modules (common random numbers) and hands the scores back. The scores are replaced by
their centred ranks in [-0.5, 0.5] (fitness shaping: one disastrous candidate, which a
regalloc perturbation easily is, does not drown the differences among the others; a round
whose candidates all score alike moves nothing), the ``top`` directions with the best
``max(f+, f-)`` are kept (all by default), and the point moves by
``step * sum_k (f+_k - f-_k) * d_k / top``: with ``step`` proportional to ``sigma``, one
round moves about as far as a perturbation reaches. There is no elitism:
the point is judged elsewhere (the trainer scores it on check modules now and then).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ..policies.optimiser import centred_ranks


@dataclass
class AntitheticES:
    theta: np.ndarray      # the current point
    sigma: float           # perturbation scale (parameter units)
    step: float            # gradient step (parameter units per normalised unit)
    pairs: int = 4
    top: int = 0           # directions kept per round (0: all)
    rounds: int = 0
    _directions: np.ndarray | None = field(default=None, repr=False)

    def propose(self, rng: np.random.Generator) -> list[np.ndarray]:
        """This round's 2 x pairs candidates: (+d_0, -d_0, +d_1, -d_1, ...)."""
        d = rng.standard_normal((self.pairs, self.theta.size))
        self._directions = d
        return [self.theta + s * self.sigma * v for v in d for s in (1.0, -1.0)]

    def tell(self, scores: Sequence[float]) -> float:
        """Takes the scores of `propose`'s candidates (in order) and moves the point;
        returns the length of the move."""
        if self._directions is None:
            raise RuntimeError("tell() before propose()")
        f = np.asarray(scores, dtype=np.float64)
        if f.size != 2 * self.pairs:
            raise ValueError(f"{f.size} scores for {2 * self.pairs} candidates")
        self.rounds += 1
        d, self._directions = self._directions, None
        if np.all(f == f[0]):
            return 0.0
        shaped = centred_ranks(f)
        plus, minus = shaped[0::2], shaped[1::2]
        keep = np.argsort(-np.maximum(plus, minus), kind="stable")[:self.top or self.pairs]
        g = (plus[keep] - minus[keep]) @ d[keep] / len(keep)
        move = self.step * g
        self.theta = self.theta + move
        return float(np.linalg.norm(move))
