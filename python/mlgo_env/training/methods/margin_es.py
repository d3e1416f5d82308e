"""``--problem=inlining --method=es`` (the default): evolution strategies over the margin
policy, ml-compiler-opt's way of training an inlining policy (a cluster makes it
worthwhile: every round compiles its candidates on the search modules).

The policy (mlgo_env.policies.margin_policy): inline iff ``m + shift + w.z > 0`` in clang's
cost units, ``m`` being clang's margin ``max(threshold, 1) - cost_estimate`` clamped to the
default's side of the boundary (anchored), ``z`` the standardised shape features of
DEFAULT_SHAPE.

- fit: behavioural cloning of the default: (shift, w) fitted to the training modules'
  traced decisions (ridge chosen by cross-validation over modules), written as
  OUTPUT.warmstart.json; the plain (unanchored) rule's agreement is logged beside it.
- propose / tell: an elitist ES (mlgo_env.training.search.ElitistES): --pairs mirrored
  perturbations of per-coordinate scale --sigma plus a step along the previous round's
  gradient estimate; the best candidate replaces the incumbent when it scores higher.
- widen: after a round that compiled nothing, the step grows fourfold (at least --sigma).
"""

from __future__ import annotations

import time
from typing import Any, Sequence

import numpy as np

from ...policies.margin_policy import (DEFAULT_SHAPE, MarginSpace, fit_margin_cv, make_space,
                                       space_of)
from ...policies.policy import Policy, policy_from_json, policy_to_json, save_policy
from ..search import ElitistES
from ..method import Method, register


@register
class MarginES(Method):
    problem = "inlining"
    name = "es"
    default = True
    summary = ("behavioural cloning of clang's decisions into a margin policy, then an "
               "elitist ES over its (shift, w) (mlgo_env.training.methods.margin_es)")
    writes = (".warmstart.json",)

    @classmethod
    def add_arguments(cls, group: Any) -> None:
        group.add_argument("--pairs", type=int, default=4, help="mirrored pairs per round")
        group.add_argument("--sigma", type=float, default=10.0,
                           help="typical initial step, in clang cost units (5 = one "
                                "instruction)")

    def __init__(self, args: Any) -> None:
        super().__init__(args)
        self.space: MarginSpace | None = None
        self.warm: Policy | None = None
        self.es: ElitistES | None = None

    def fit(self, trainer: Any, data: Any) -> np.ndarray:
        """Behavioural cloning on the training modules' traced decisions; `data` is
        (the default trace, the training modules)."""
        trace, train = data
        t = time.monotonic()
        keep = np.asarray([c in train for c in trace.contexts], dtype=bool)
        if not keep.any():
            raise ValueError("the default trace holds no decision of a training module "
                             "(raise --trace-sampling-rate?)")
        rows, labels = trace.rows[keep], trace.actions[keep]
        groups = [c for c, k in zip(trace.contexts, keep) if k]
        fits = {}
        for anchored in (False, True):  # the plain margin rule, then the anchored one
            space = make_space(self.problem, trace.feature_names, rows, list(DEFAULT_SHAPE),
                               anchored)
            cols = [trace.feature_names.index(f) for f in space.features]
            fits[anchored] = fit_margin_cv(space, rows[:, cols], labels, groups)
        trainer.clock.times["fitting"] += time.monotonic() - t
        (plain, _), (fit, ridge) = fits[False], fits[True]
        trainer.log(f"behavioural cloning: {len(labels)} decisions of {len(set(groups))} "
                    f"training modules; the margin rule agrees on {plain.agreement:.2%}, the "
                    f"anchored warm start on {fit.agreement:.2%} (shift {fit.u[0]:+.2f}, |w| "
                    f"{np.linalg.norm(fit.u[1:]):.2f}, ridge {ridge:g})")
        warm = space.policy(fit.u, {"cloning_agreement": fit.agreement,
                                    "margin_rule_agreement": plain.agreement,
                                    "cloning_decisions": int(len(labels))})
        save_policy(warm, self.args.output + ".warmstart.json")
        self._start(space, fit.u)
        return fit.u

    def _start(self, space: MarginSpace, u0: np.ndarray) -> None:
        self.space, self.warm = space, space.policy(u0)
        self.es = ElitistES(u0.copy(), np.full(u0.size, self.args.sigma), pairs=self.args.pairs)

    def start(self, score: float) -> None:
        self.es.score = score

    def propose(self, rng: np.random.Generator) -> list[np.ndarray]:
        return self.es.propose(rng)

    def tell(self, candidates: Sequence[np.ndarray], scores: Sequence[float]) -> bool:
        return self.es.tell(candidates, scores)

    def incumbent(self) -> tuple[np.ndarray, float]:
        return self.es.u, self.es.score

    def widen(self) -> None:
        es = self.es
        es.sigma = np.minimum(np.maximum(es.sigma * 4.0, self.args.sigma), es.sigma_max)

    def step_size(self) -> float:
        return float(np.mean(self.es.sigma))

    def policy(self, u: np.ndarray, metadata: dict[str, Any] | None = None) -> Policy:
        return self.space.policy(u, metadata)

    def state(self) -> dict[str, Any]:
        return {"es": self.es.state(), "warm": policy_to_json(self.warm)}

    def load(self, state: dict[str, Any]) -> None:
        space, u0 = space_of(policy_from_json(state["warm"], "checkpoint"))
        self._start(space, u0)
        self.es.load(state["es"])
