"""Eviction policies anchored on the host's emulation of clang's default: keep its choice,
learn where to depart from it.

The emulation (``host-emulation-v2``, the trace's and ``info["default_action"]``'s default)
is exact wherever the observation shows the spill weights (docs/regalloc.md); the cloned
network, which sees the same features, decides like the "lowest use_def_density" rule
instead. An anchored policy is the clone's network with one more input, the
``host-emulation-v2`` feature (1 for the candidate the emulation evicts), reaching the
logit through one more hidden unit with a bonus ``B``: a candidate other than the
emulation's is taken only when the clone's logit for it exceeds the emulation's
candidate's by more than ``B``. ``B`` is set so that the start departs from the emulation
on a chosen share of the traced decisions (those where the clone disagrees most); the ES
then moves every weight, the bonus included.
"""

from __future__ import annotations

import math

import numpy as np

from ..policies.policy import EMULATION_FEATURE, Layer, Policy
from . import regalloc_cloning as rc

#: the bonus unit's input weight: tanh(3) = 0.995, so the unit is 0 or about 1
_UNIT_GAIN = 3.0


def with_emulation(d: rc.Decisions) -> rc.Decisions:
    """The decisions with one more feature, EMULATION_FEATURE: 1 at the traced action (the
    trace records the emulation's choices), 0 elsewhere."""
    column = np.zeros(d.rows.shape[:2] + (1,), dtype=d.rows.dtype)
    column[np.arange(len(d)), d.actions, 0] = 1.0
    return rc.Decisions(d.features + [EMULATION_FEATURE], np.concatenate([d.rows, column], 2),
                        d.mask, d.actions, d.modules, d.counts)


def emulation_policy() -> Policy:
    """The emulation itself as a policy file: the logit is the EMULATION_FEATURE."""
    layer = Layer(np.ones((1, 1)), np.zeros(1), "linear")
    return Policy("regalloc", [EMULATION_FEATURE], np.zeros(1), np.ones(1), [layer],
                  {"form": "host emulation"}, ["identity"], None, "argmax-masked", rc.MASK)


def departure_gaps(clone: Policy, d: rc.Decisions) -> np.ndarray:
    """Per decision: the largest clone logit among the allowed candidates other than the
    traced one, minus the traced one's (-inf when no other candidate is allowed)."""
    n = len(d)
    logits = rc.candidate_logits(clone, d)
    allowed = d.allowed & ~np.isnan(logits)
    own = logits[np.arange(n), d.actions]
    others = np.where(allowed, logits, -np.inf)
    others[np.arange(n), d.actions] = -np.inf
    return others.max(axis=1) - own


def anchored(clone: Policy, d: rc.Decisions, departures: float) -> tuple[Policy, float]:
    """The clone anchored on the emulation (module doc), with the bonus that makes it depart
    on a `departures` share of `d` (the decisions without the emulation column); returns
    the policy and the bonus."""
    if not len(d):
        raise ValueError("no traced decision to anchor on")
    gaps = departure_gaps(clone, d)
    finite = gaps[np.isfinite(gaps)]
    bonus = float(np.quantile(finite, 1.0 - departures)) if finite.size else 0.0
    bonus = max(bonus, 1e-3)
    first, last = clone.layers
    f, h = first.weights.shape
    w1 = np.zeros((f + 1, h + 1))
    w1[:f, :h] = first.weights
    w1[f, h] = _UNIT_GAIN
    b1 = np.append(first.bias, 0.0)
    w2 = np.append(last.weights[:, 0], bonus / math.tanh(_UNIT_GAIN)).reshape(-1, 1)
    metadata = dict(clone.metadata)
    metadata.update({"form": "anchored on the host emulation", "anchor_bonus": bonus,
                     "anchor_departures": departures})
    policy = Policy("regalloc", clone.features + [EMULATION_FEATURE],
                    np.append(clone.mean, 0.0), np.append(clone.std, 1.0),
                    [Layer(w1, b1, first.activation), Layer(w2, last.bias.copy(), last.activation)],
                    metadata, list(clone.transforms or ["identity"] * f) + ["identity"], None,
                    "argmax-masked", clone.mask)
    return policy, bonus


def calibrated_scale(start: Policy, d: rc.Decisions, scale: float, departures: float,
                     rng: np.random.Generator, draws: int = 6) -> float:
    """The ES perturbation scale for an anchored start: `scale`, halved until perturbed
    copies of `start` (`draws` Gaussian draws of that scale) depart from the emulation on
    at most twice `departures` of `d` (decisions with the emulation column) on average.
    Too wide a scale sends whole candidates off the emulation (a perturbation of the
    clone's weights moves every gap), and the ES then learns nothing but to come back."""
    theta = start.flat()
    while scale > 1e-6:
        agreed = [rc.agreement(start.with_flat(theta + scale * rng.standard_normal(theta.size)),
                               d) for _ in range(draws)]
        if 1.0 - float(np.mean(agreed)) <= 2.0 * departures:
            return scale
        scale /= 2.0
    return scale
