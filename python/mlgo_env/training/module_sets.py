"""Which training modules a run searches on, checks on, and may explore (the trainer's
module sets; mlgo_env.training.train)."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np


def package_of(module: str) -> str:
    """The package a corpus module belongs to: its first path component."""
    return module.split("/", 1)[0]


def choose_modules(trajectories: Mapping[str, Sequence[Any]], train: Sequence[str],
                   seed: int, search_modules: int, check_modules: int,
                   check_packages: set[str]) -> tuple[list[str], list[str], list[str]]:
    """(search, check, fresh). search and check: disjoint fixed sets of training modules
    the trace saw decide (`trajectories`: module -> recorded trajectories, each with
    `actions`); fresh: the training modules the trace did not sample, which exploration
    may add. With `check_packages` the check set is drawn from those packages only and
    their modules are neither searched nor fresh. ValueError when nothing decides, a
    named package has no training module, or the packages leave no side."""
    deciding = sorted(m for m in train if any(len(t.actions) for t in trajectories.get(m, ())))
    if not deciding:
        raise ValueError("no training module in the trace makes an inlining decision")
    # Its own generator: the same sets when a run is resumed.
    pick = np.random.default_rng([seed, 1])
    order = [deciding[i] for i in pick.permutation(len(deciding))]
    fresh = sorted(m for m in train if m not in trajectories)
    if not check_packages:
        n_check = min(check_modules, len(order) // 3)
        n_search = min(search_modules, len(order) - n_check)
        return order[:n_search], order[n_search:n_search + n_check], fresh
    known = {package_of(m) for m in train}
    if not check_packages <= known:
        raise ValueError(f"--check-packages: no training module of "
                         f"{', '.join(sorted(check_packages - known))}")
    check = [m for m in order if package_of(m) in check_packages]
    search = [m for m in order if package_of(m) not in check_packages]
    if not check or not search:
        raise ValueError("--check-packages leaves no deciding module to check or to search")
    fresh = [m for m in fresh if package_of(m) not in check_packages]
    return search[:search_modules], check[:check_modules], fresh
