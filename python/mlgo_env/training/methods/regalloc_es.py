"""``--problem=regalloc --method=es`` (the default): antithetic evolution strategies over an
eviction scorer cloned from the default, in the manner of ml-compiler-opt's ES.

- fit: behavioural cloning (mlgo_env.training.regalloc_cloning): a per-candidate scoring
  network (every per-candidate feature and progress, standardised, HIDDEN tanh units, one
  logit per candidate) fitted by masked-softmax cross-entropy to the fit modules' traced
  decisions. It starts exactly at the "lowest use_def_density" rule and keeps the step
  whose agreement with the default is highest on a fifth of the fit modules (early
  stopping); its agreement is reported on the check modules' decisions, which it never
  saw. Written as OUTPUT.clone.json. --start=emulation (the default) then anchors it on
  the host's emulation of the default (mlgo_env.training.regalloc_anchor): one more input,
  the ``host-emulation-v2`` feature, with a bonus that keeps the emulation's choice except
  on DEPARTURES of the fit decisions (where the clone disagrees most); the perturbation
  scale is then narrowed until perturbed starts stay within twice that share of the
  emulation. --start=clone searches from the clone itself.
- propose / tell: mlgo_env.training.antithetic_es over all the start's parameters: --pairs
  mirrored perturbations of --sigma times the clone's parameter RMS, centred-rank shaped,
  and a gradient step of STEP perturbation scales. No elitism: the trainer checks the
  current point on the check modules now and then.
"""

from __future__ import annotations

import time
from typing import Any, Sequence

import numpy as np

from ...policies.policy import Policy, save_policy
from .. import regalloc_anchor as ra
from .. import regalloc_baselines as rbl
from .. import regalloc_cloning as rc
from ..antithetic_es import AntitheticES
from ..method import Method, register

#: tanh hidden units of the cloned scorer
HIDDEN = 8
#: full-batch Adam steps of cloning (early stopping keeps the best)
CLONE_STEPS = 300
#: --start=emulation: the share of the fit decisions on which the start departs
DEPARTURES = 0.01
#: the gradient step, in perturbation scales
STEP = 1.0


@register
class RegallocES(Method):
    problem = "regalloc"
    name = "es"
    default = True
    summary = ("behavioural cloning of the default's evictions, anchored on the host's "
               "emulation of it, then antithetic ES (mlgo_env.training.methods.regalloc_es)")
    writes = (".clone.json",)

    @classmethod
    def add_arguments(cls, group: Any) -> None:
        group.add_argument("--start", choices=("emulation", "clone"), default="emulation",
                           help="where ES starts: the clone anchored on the host's emulation "
                                "of the default, or the clone alone")
        group.add_argument("--pairs", type=int, default=4, help="mirrored pairs per round")
        group.add_argument("--sigma", type=float, default=0.05,
                           help="perturbation scale, relative to the clone's parameter RMS "
                                "(--start=emulation: narrowed until perturbed starts stay "
                                "near the emulation)")

    def __init__(self, args: Any) -> None:
        super().__init__(args)
        self.clone: Policy | None = None
        self.anchored: Policy | None = None
        self.es: AntitheticES | None = None
        self.moved = 0.0  # the length of the last move

    def fit(self, trainer: Any, data: Any) -> np.ndarray:
        """Cloning on `data` = (fit decisions, check decisions); anchoring for
        --start=emulation. Returns the start's parameters."""
        fit, held = data
        self.clone = self._clone(trainer, fit, held)
        scale = float(np.sqrt(np.mean(self.clone.flat() ** 2))) * self.args.sigma
        if self.args.start == "emulation":
            self.anchored, scale = self._anchor(trainer, fit, held, scale)
        theta0 = self.base().flat()
        self.es = AntitheticES(theta0.copy(), scale, scale * STEP, self.args.pairs)
        return theta0

    def base(self) -> Policy:
        """The policy the search perturbs: the anchored start, or the clone."""
        return self.anchored or self.clone

    def learned_starts(self) -> list[tuple[str, Policy]]:
        """The fit's policies, checked beside the search's points."""
        return [("clone", self.clone)] + ([("anchored start", self.anchored)]
                                          if self.anchored else [])

    def _clone(self, trainer: Any, fit: rc.Decisions, held: rc.Decisions) -> Policy:
        """Cloning on the fit modules' decisions: a fifth of those modules (seeded) choose
        when to stop; agreement is then reported on the check modules' decisions."""
        a = self.args
        t = time.monotonic()
        names = sorted(set(fit.modules))
        stop = set(names[i] for i in np.random.default_rng([a.seed, 2]).permutation(
            len(names))[:max(1, len(names) // 5)]) if len(names) > 1 else set()
        in_stop = np.asarray([m in stop for m in fit.modules], dtype=bool)
        budget = time.monotonic() + max(10.0, 0.15 * trainer.left())
        result = rc.fit(fit.subset(~in_stop), HIDDEN, trainer.rng, steps=CLONE_STEPS,
                        deadline=lambda: time.monotonic() > budget, held=fit.subset(in_stop))
        held_agreement = rc.agreement(result.policy, held)
        rule = rbl.one_number_policy("", "use_def_density", -1.0)
        result.policy.metadata.update({
            "cloning_decisions": len(fit), "cloning_agreement": rc.agreement(result.policy, fit),
            "cloning_steps": result.steps, "check_decisions": len(held),
            "check_agreement": held_agreement,
            "check_agreement_lowest_use_def_density": rc.agreement(rule, held)})
        m = result.policy.metadata
        trainer.log(f"behavioural cloning: {len(fit)} decisions of {len(names)} fit modules "
                    f"({len(stop)} of them to stop on), best at step {result.steps} "
                    f"({time.monotonic() - t:.0f} s); agrees with the default on "
                    f"{m['cloning_agreement']:.2%} of the fit decisions and on "
                    f"{held_agreement:.2%} of {len(held)} decisions of "
                    f"{len(set(held.modules))} held-out check modules (the "
                    f"lowest-use_def_density rule: "
                    f"{m['check_agreement_lowest_use_def_density']:.2%})")
        save_policy(result.policy, a.output + ".clone.json")
        return result.policy

    def _anchor(self, trainer: Any, fit: rc.Decisions, held: rc.Decisions,
                scale: float) -> tuple[Policy, float]:
        """The clone anchored on the emulation (regalloc_anchor), departing from it on
        DEPARTURES of the fit decisions, and its ES perturbation scale (`scale` narrowed
        by ra.calibrated_scale); logs its agreement with the emulation on the fit and the
        check modules' decisions."""
        start, bonus = ra.anchored(self.clone, fit, DEPARTURES)
        fit = ra.with_emulation(fit)   # one copy of the fit rows, for both uses below
        held_agreement = rc.agreement(start, ra.with_emulation(held))
        start.metadata["anchor_check_agreement"] = held_agreement
        trainer.log(f"anchored on the emulation: bonus {bonus:.4f}, agrees with it on "
                    f"{rc.agreement(start, fit):.2%} of the fit decisions and "
                    f"{held_agreement:.2%} of the check modules' decisions")
        scale = ra.calibrated_scale(start, fit, scale, DEPARTURES, trainer.rng)
        trainer.log(f"ES perturbation scale {scale:.5f} (calibrated: perturbed starts depart "
                    f"from the emulation on at most {2 * DEPARTURES:.1%} of the fit "
                    "decisions on average)")
        return start, scale

    def propose(self, rng: np.random.Generator) -> list[np.ndarray]:
        return self.es.propose(rng)

    def tell(self, candidates: Sequence[np.ndarray], scores: Sequence[float]) -> bool:
        self.moved = self.es.tell(scores)
        return self.moved > 0

    def incumbent(self) -> tuple[np.ndarray, float]:
        return self.es.theta, float("nan")

    def rounds(self) -> int:
        """Rounds told so far."""
        return self.es.rounds

    def step_size(self) -> float:
        return float(self.es.sigma)

    def policy(self, u: np.ndarray, metadata: dict[str, Any] | None = None) -> Policy:
        p = self.base().with_flat(u)
        p.metadata.update(metadata or {})
        return p
