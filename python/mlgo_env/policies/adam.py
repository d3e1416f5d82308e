"""One Adam step (beta1 0.9, beta2 0.999, eps 1e-8) over a list of numpy arrays, in place:
what the policy forms' fits (flip_classifier.fit, residual_policy.fit) and the trainer's
regalloc cloning share. (mlgo_env.training.learning.Adam keeps its own state for a flat
vector and returns the update instead.)"""

from __future__ import annotations

from typing import Sequence

import numpy as np


def adam_step(params: Sequence[np.ndarray], grads: Sequence[np.ndarray],
              mom: Sequence[np.ndarray], vel: Sequence[np.ndarray], step: int,
              lr: float) -> None:
    """Descends every ``params[i]`` along ``grads[i]``; `mom` and `vel` are the moment
    arrays (zeros at first, same shapes), `step` counts from 1."""
    for p, g, m, v in zip(params, grads, mom, vel):
        m *= 0.9
        m += 0.1 * g
        v *= 0.999
        v += 0.001 * g * g
        p -= lr * (m / (1 - 0.9 ** step)) / (np.sqrt(v / (1 - 0.999 ** step)) + 1e-8)
