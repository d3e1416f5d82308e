"""--method=residual: a network that moves clang's margin, starting from the best constant
shift (mlgo_env.policies.residual_policy).

1. The constant shifts of --base-shifts and the default are scored on the search modules;
   the best is the *base* (the default when no shift beats it).
2. Greedy searches of grouped flips start from the base's trajectories (flipping the
   base's decisions; mlgo_env.tuning.inlining_search) for --flip-share of the budget; the
   decisions of each module's best trajectory are the labels.
3. The residual network is fitted to them (--residual-bagging=packages: one network per
   searched package, fitted without that package's labels, averaged; see
   residual_policy.fit_bagged): inline iff m + shift + g(x) > 0, ``g`` clipped
   to +-(--residual-bound) cost units (only call sites near the shifted boundary can
   move; 0: unbounded) and pulled towards 0 by --l2, so where the labels say nothing it
   decides as the base.
4. The network's output is scored at the scales of --residual-scales (scale 0: the
   fitted shift alone); an ES over (v, shift) goes on from the best, exploring (more
   groups, new modules) and refitting as the imitation method does. The base shift
   itself is the first incumbent.

Everything else (exploration, refits, incumbents checked on the check modules, selection
against the one-number baselines) is mlgo_env.training.train_network's.
"""

from __future__ import annotations

import time

import numpy as np

from .. import episodes as ep
from ..policies import residual_policy as rp
from ..tuning.baselines import parse_shifts, shift_policy
from .flip_search import FlipSet
from .module_sets import package_of
from ..tuning.replay import ReplayCache
from .search import ElitistES, objective


class ResidualMethod:
    """Mixed into mlgo_env.training.train.Trainer with NetworkMethod and ImitationMethod."""

    def choose_base_shift(self, pool: ep.EpisodePool, cache: ReplayCache,
                          search: list[str]) -> float:
        """The best of the default and the --base-shifts constants on the search modules."""
        a = self.args
        shifts = [0.0] + parse_shifts(a.base_shifts)
        table, played = cache.evaluate(pool, [shift_policy(a.problem, s) for s in shifts],
                                       search)
        self.clock.account(played, len(shifts) * len(search) - len(played),
                           cache.last_seconds[1], cache.last_seconds[0])
        scores = [objective(r, a.total_weight) for r in table]
        for s, sc, r in zip(shifts, scores, table):
            summ = ep.summarise(r)
            self.log(f"  base candidate, constant shift {s:+g}: score {sc:+.5f} (mean reward "
                     f"{summ['reward_mean']:+.5f}, total {summ['total_change'] * 100:+.2f}%)")
        best = shifts[int(np.argmax(scores))]
        self.log(f"the residual network starts from constant shift {best:+g}")
        self.history.append({"phase": "base", "shift": best,
                             **{f"shift {s:+g}": sc for s, sc in zip(shifts, scores)}})
        return best

    def fit_residual(self, labels: FlipSet) -> tuple[rp.ResidualSpace, np.ndarray]:
        """The residual network imitating the labels' decisions (the best trajectories:
        the default's decision where the label is negative, the other one where positive)."""
        a = self.args
        t = time.monotonic()
        col = labels.names.index("inlining_default")
        decisions = ((labels.rows[:, col] > 0.5) != (labels.rewards > 0)).astype(float)
        options = dict(hidden=a.hidden, l2=a.l2, temperature=a.temperature, seed=a.seed,
                       bound=a.residual_bound or None)
        if a.residual_bagging == "packages":
            fitted = rp.fit_bagged(a.problem, labels.names, labels.rows, decisions,
                                   [package_of(m) for m in labels.modules], self.base_shift,
                                   **options)
        else:
            fitted = rp.fit(a.problem, labels.names, labels.rows, decisions, self.base_shift,
                            **options)
        self.clock.times["fitting"] += time.monotonic() - t
        g = fitted.space.residual(fitted.u, labels.rows)
        self.log(f"residual network fitted on {len(decisions)} decisions of "
                 f"{len(set(labels.modules))} modules: it agrees with {fitted.agreement:.2%} "
                 f"of them (the constant shift alone {fitted.base_agreement:.2%}); shift "
                 f"{fitted.u[-1]:+.2f}, |g| mean {np.mean(np.abs(g)) if len(g) else 0:.2f} "
                 f"cost units (bound {a.residual_bound:g}; 0: none)")
        return fitted.space, fitted.u

    def residual_base(self, cspace: rp.ResidualSpace, u_fit: np.ndarray) -> np.ndarray:
        """The search vector of the base constant shift in `cspace` (network silent)."""
        return rp.with_scale(u_fit, 0.0, self.base_shift)

    def start_residual_es(self, pool: ep.EpisodePool, cache: ReplayCache,
                          cspace: rp.ResidualSpace, u_fit: np.ndarray, rows: np.ndarray,
                          search: list[str], check: list[str], val: list[str],
                          iteration: int) -> ElitistES:
        """Scores the fitted network at each --residual-scales output scale; returns an ES
        over (v, shift) from the best of them."""
        a = self.args
        scales = [float(s) for s in a.residual_scales.split(",") if s]
        # Steps in cost units: the network's typical |g| for v, a temperature for the shift.
        g = np.abs(cspace.residual(u_fit, rows)) if len(rows) else np.zeros(1)
        spread = max(float(np.mean(g)), a.temperature)
        sigma0 = np.concatenate([np.abs(u_fit[:-1]) * 0.25 + 0.05 * spread / max(
            np.sqrt(u_fit.size), 1.0), [a.temperature]])
        return self.es_from_best(pool, cache, cspace, [rp.with_scale(u_fit, s) for s in scales],
                                 [f"residual scale {s:g}" for s in scales], sigma0,
                                 0.01 * spread, 20.0 * spread, search, check, val, iteration)
