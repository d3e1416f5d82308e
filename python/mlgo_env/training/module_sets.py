"""Which training modules a run searches on, checks on, and may explore (the trainer's
module sets; mlgo_env.training.train)."""

from __future__ import annotations

from typing import Any, Mapping, NamedTuple, Sequence

import numpy as np


def package_of(module: str) -> str:
    """The package a corpus module belongs to: its first path component."""
    return module.split("/", 1)[0]


class ModuleSets(NamedTuple):
    """A run's disjoint sets of training modules (module names, sorted or in the seeded
    order they were drawn in)."""

    search: list[str]   # scored every round
    check: list[str]    # score incumbents and the baselines: the selection
    holdout: list[str]  # the searched packages' modules kept out: the selection's second test


def choose_modules(trajectories: Mapping[str, Sequence[Any]], train: Sequence[str],
                   seed: int, search_modules: int, check_modules: int,
                   check_packages: set[str], holdout_share: float = 0.0) -> ModuleSets:
    """Disjoint fixed sets of the training modules the trace saw decide (`trajectories`:
    module -> recorded trajectories, each with `actions`). With `check_packages` the
    check set is drawn from those packages only and their modules are never searched (the
    check then measures transfer to other packages). `holdout_share` of the remaining deciding
    modules (those of the searched packages) are kept out of the search too: the
    selection asks them whether what was learned carries to modules of the same packages.
    ValueError when nothing decides, a named package has no training module, or the
    packages leave no side."""
    if not 0.0 <= holdout_share < 1.0:
        raise ValueError(f"the held-out share must be in [0, 1), not {holdout_share:g}")
    deciding = sorted(m for m in train if any(len(t.actions) for t in trajectories.get(m, ())))
    if not deciding:
        raise ValueError("no training module in the trace makes an inlining decision")
    # Its own generator: the same sets when a run is resumed.
    pick = np.random.default_rng([seed, 1])
    order = [deciding[i] for i in pick.permutation(len(deciding))]
    if not check_packages:
        n_check = min(check_modules, len(order) // 3)
        n_search = min(search_modules, len(order) - n_check)
        check = order[n_search:n_search + n_check]
        rest = order[:n_search] + order[n_search + n_check:]
    else:
        known = {package_of(m) for m in train}
        if not check_packages <= known:
            raise ValueError(f"--check-packages: no training module of "
                             f"{', '.join(sorted(check_packages - known))}")
        check = [m for m in order if package_of(m) in check_packages][:check_modules]
        rest = [m for m in order if package_of(m) not in check_packages]
        if not check or not rest:
            raise ValueError("--check-packages leaves no deciding module to check or to search")
    # The held-out modules are taken from the end: with share 0 the sets are as before.
    n_hold = min(int(round(holdout_share * len(rest))), len(rest) - 1)
    kept = len(rest) - n_hold
    return ModuleSets(rest[:kept][:search_modules], check, rest[kept:])
