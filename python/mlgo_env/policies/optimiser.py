"""The numerical parts every fit and search of the package shares, in numpy alone:

- :func:`adam_step`: one Adam step (beta1 0.9, beta2 0.999, eps 1e-8) over a list of
  arrays, in place (the policy forms' fits, regalloc cloning);
- :func:`standardisation`: the (mean, std) a policy file stores for its inputs;
- :func:`centred_ranks`: fitness shaping for evolution strategies (regalloc's ES).

Nothing here runs compilers or draws random numbers.
"""

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


def standardisation(rows: np.ndarray, floor: float = 1e-3, constant: float | None = None
                    ) -> tuple[np.ndarray, np.ndarray]:
    """(mean, std) of each column of `rows` [n, features] (already transformed: a policy
    standardises after its transforms). A std not above `floor` becomes `floor`, or
    `constant` when given (regalloc cloning: a constant column gets std 1). Without rows:
    zeros and ones."""
    rows = np.asarray(rows, dtype=np.float64)
    if not len(rows):
        return np.zeros(rows.shape[1]), np.ones(rows.shape[1])
    std = rows.std(axis=0)
    return rows.mean(axis=0), np.where(std > floor, std, floor if constant is None else constant)


def centred_ranks(values: np.ndarray) -> np.ndarray:
    """Each value's rank mapped linearly onto [-0.5, 0.5] (equal values share their mean
    rank): one outlier cannot dominate an ES gradient estimate."""
    values = np.asarray(values, dtype=np.float64)
    if values.size < 2:
        return np.zeros(values.size)
    order = np.argsort(values, kind="stable")
    ranks = np.empty(values.size)
    ranks[order] = np.arange(values.size, dtype=np.float64)
    for v in np.unique(values):  # ties: the mean of their ranks
        same = values == v
        ranks[same] = ranks[same].mean()
    return ranks / (values.size - 1) - 0.5
