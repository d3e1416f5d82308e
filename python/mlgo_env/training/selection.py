"""The inlining trainer's last choice: the incumbent best on the check modules against the
one-number baselines there (mlgo_env.training.train documents the rule)."""

from __future__ import annotations

from typing import Any, Callable

from .. import episodes as ep
from ..policies.policy import Policy
from ..tuning.baselines import no_inline_policy, parse_shifts, shift_policy
from ..tuning.replay import ReplayCache
from .search import objective, paired_margin

#: the learned policy must beat the best baseline by more than this many standard errors
#: of the per-module differences of their scores (a margin a handful of modules cannot make)
SELECTION_Z = 1.0


class Selection:
    """Judges a learned policy against the one-number baselines, for a trainer: its
    options (--baseline-shifts, --total-weight, --problem), its clock (time booked to
    "selection"), its log and its history (a "selection" row)."""

    z = SELECTION_Z

    def __init__(self, args: Any, clock: Any, log: Callable[[str], None],
                 history: list[dict[str, Any]]) -> None:
        self.args, self.clock, self.log, self.history = args, clock, log, history

    def against_baselines(self, pool: ep.EpisodePool, cache: ReplayCache, best: Policy,
                          check: list[str], holdout: list[str] = ()) -> Policy:
        """`best` scored on the check modules beside each --baseline-shifts constant shift
        and no optional inline; the highest score is the result, except that the learned
        policy must beat the best baseline by more than `z` standard errors, on the check
        modules (`significant`) and on the `holdout` modules (`carries`). The log says
        when a baseline wins."""
        a = self.args
        shifts = parse_shifts(a.baseline_shifts)
        named = ([("learned", best)]
                 + [(f"constant shift {s:+g}", shift_policy(a.problem, s)) for s in shifts]
                 + [("no optional inline", no_inline_policy(a.problem))])
        table, played = cache.evaluate(pool, [p for _, p in named], check)
        self.clock.account(played, len(named) * len(check) - len(played),
                           cache.last_seconds[1], cache.last_seconds[0], "selection")
        rows = {}
        for (name, _), results in zip(named, table):
            s = ep.summarise(results)
            rows[name] = {"score": objective(results, a.total_weight),
                          "total_change": s["total_change"], "reward_mean": s["reward_mean"]}
            self.log(f"  check modules, {name}: score {rows[name]['score']:+.5f}, total "
                     f"{s['total_change'] * 100:+.2f}%, mean reward {s['reward_mean']:+.5f}")
        winner = max(range(len(named)), key=lambda i: (rows[named[i][0]]["score"], i == 0))
        if winner == 0 and len(named) > 1:
            winner = self.significant(named, table, rows)
            if winner == 0 and holdout:
                winner = self.carries(pool, cache, named, rows, holdout)
        name, policy = named[winner]
        if winner:
            self.log(f"the learned policy does not beat {name} on the check modules: the "
                     f"result is {name}")
        else:
            self.log("the learned policy beats every one-number baseline on the check modules")
        policy.metadata["selection"] = {"chosen": name, "check_modules": len(check), **rows}
        self.history.append({"phase": "selection", "chosen": name, **{
            k: v["score"] for k, v in rows.items()}})
        return policy

    def significant(self, named: list, table: list, rows: dict) -> int:
        """0 when the learned policy (named[0]) beats the best baseline on the check
        modules by more than `z` standard errors of the per-module
        differences of their scores; else that baseline's index. Records the margin."""
        best = max(range(1, len(named)), key=lambda i: rows[named[i][0]]["score"])
        margin, se, wins = self.beats(table[0], table[best])
        rows["learned"].update({"margin": margin, "standard_error": se,
                                "against": named[best][0], "z": self.z})
        if wins:
            return 0
        self.log(f"the learned policy beats {named[best][0]} on the check modules by "
                 f"{margin:+.5f}, within {self.z:g} standard error(s) ({se:.5f}) of "
                 f"the per-module differences: not enough to tell it from noise")
        return best

    def carries(self, pool: ep.EpisodePool, cache: ReplayCache, named: list, rows: dict,
                holdout: list[str]) -> int:
        """0 when the learned policy (named[0]) also beats the baseline it was measured
        against (rows["learned"]["against"]) by more than `z` standard errors
        on the searched packages' held-out modules; else that baseline's index. A network
        that learned the searched modules rather than their packages fails here. Records
        the margin."""
        against = next(i for i, (n, _) in enumerate(named) if n == rows["learned"]["against"])
        (mine, theirs), played = cache.evaluate(pool, [named[0][1], named[against][1]],
                                                holdout)
        self.clock.account(played, 2 * len(holdout) - len(played), cache.last_seconds[1],
                           cache.last_seconds[0], "selection")
        margin, se, wins = self.beats(mine, theirs)
        change = ep.summarise(mine)["total_change"], ep.summarise(theirs)["total_change"]
        rows["learned"].update({"holdout_modules": len(holdout), "holdout_margin": margin,
                                "holdout_standard_error": se})
        self.log(f"  held-out modules of the searched packages ({len(holdout)}): learned "
                 f"total {change[0] * 100:+.2f}%, {named[against][0]} {change[1] * 100:+.2f}%; "
                 f"margin {margin:+.5f}, standard error {se:.5f}")
        if wins:
            return 0
        self.log(f"the learned policy does not beat {named[against][0]} on the searched "
                 f"packages' held-out modules by more than {self.z:g} standard "
                 f"error(s): what it learned does not carry beyond the searched modules")
        return against

    def beats(self, mine: list[ep.EpisodeResult], theirs: list[ep.EpisodeResult]
              ) -> tuple[float, float, bool]:
        """(score margin of `mine` over `theirs` on the same modules, its standard error,
        whether the margin exceeds `z` standard errors)."""
        margin, se = paired_margin(mine, theirs, self.args.total_weight)
        return margin, se, margin > self.z * se
