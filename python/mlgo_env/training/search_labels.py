"""Labels for imitation from grouped-flip searches (mlgo_env.tuning.inlining_search): each
decision of a module's best trajectory, labelled by whether it departs from clang's default."""

from __future__ import annotations

from collections import Counter
from typing import Sequence

import numpy as np

from ..policies.policy import EMULATION_FEATURE
from ..tuning import regalloc_search as rs
from ..tuning.inlining_search import ModuleSearch
from .regalloc_cloning import Decisions
from .flip_search import FlipSet

#: weighted labels are in thousandths of their module's bytes
WEIGHT_UNIT = 1000.0


def imitation_labels(searches: Sequence[ModuleSearch], names: Sequence[str],
                     weighted: bool = False) -> FlipSet:
    """Every decision of each module's best trajectory, labelled by whether it differs
    from clang's default there (the sign of its reward: the flip classifier's positive
    and negative labels). Unweighted, every reward is +1 or -1. `weighted`: a decision's
    |reward| is what its callee's group was worth in the search, in thousandths of the
    module's default bytes, shared among the group's decisions in the trajectory: the
    gain it brought when kept, the loss it caused when tried and refused, a millionth
    (keeping the sign) when never tried or when flipping it changed no byte (the
    trainer's fit weighs labels by |reward|, so such a decision teaches almost nothing)."""
    col = list(names).index("inlining_default")
    rows, modules, steps, rewards = [], [], [], []
    for s in searches:
        p = s.best
        share = {k: 1.0 / n for k, n in Counter(p.keys).items()}
        for i, (row, d, a) in enumerate(zip(p.rows, p.defaults, p.actions)):
            row = row.copy()
            row[col] = d
            rows.append(row)
            modules.append(s.module)
            steps.append(i)
            sign = 1.0 if a != d else -1.0
            if weighted:
                key = p.keys[i]
                worth = s.gains.get(key, 0.0) if sign > 0 else s.losses.get(key, 0.0)
                sign *= max(WEIGHT_UNIT * worth * share[key], 1e-6)  # keeps the sign
            rewards.append(sign)
    arr = np.asarray(rows, dtype=np.float64).reshape(-1, len(names))
    return FlipSet(list(names), modules, np.asarray(steps, dtype=np.int64), arr,
                   (arr[:, col] > 0.5).astype(np.int64), np.asarray(rewards, dtype=np.float64),
                   {s.module: len(s.best.actions) for s in searches})


def regalloc_decisions(searches: Sequence[rs.ModuleSearch]) -> tuple[Decisions, np.ndarray]:
    """Every step of the searches' incumbents as a decision to imitate (searches made with
    `features`): the rows with EMULATION_FEATURE appended (1 at the emulation's choice in
    that state), the incumbent's action as the answer; and per decision the gain of its
    departure as a share of its module's default score (0 where it follows the
    emulation). Steps whose answer is not allowed (a NaN row) are dropped, as cloning
    drops them."""
    features = searches[0].features if searches else None
    if not features:
        raise ValueError("the searches recorded no features")
    rows, masks, actions, modules, gains = [], [], [], [], []
    for s in searches:
        for f in s.functions.values():
            t = f.incumbent
            for j, (row, mask, emulated, action) in enumerate(
                    zip(t.rows, t.masks, t.emulation, t.actions)):
                gains.append(f.gains.get(j, 0.0) / s.default if s.default else 0.0)
                column = np.zeros((row.shape[0], 1), dtype=np.float32)
                column[emulated, 0] = 1.0
                rows.append(np.concatenate([row, column], axis=1))
                masks.append(mask)
                actions.append(action)
                modules.append(s.module)
    names = list(features) + [EMULATION_FEATURE]
    if not rows:
        return Decisions(names, np.zeros((0, 33, len(names)), np.float32),
                            np.zeros((0, 33), bool), np.zeros(0, np.int64), [], {}), np.zeros(0)
    d = Decisions(names, np.stack(rows), np.stack(masks), np.asarray(actions, np.int64),
                     modules, {})
    keep = d.allowed[np.arange(len(d)), d.actions]
    return d.subset(keep), np.asarray(gains)[keep]
