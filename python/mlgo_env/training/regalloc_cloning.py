"""Behavioural cloning of the regalloc eviction default: a per-candidate scoring network
fitted to a default trace (numpy only).

A decision is one observation: 33 candidates, each a row of features (the per-candidate
``[1, 33]`` tensors, plus ``progress`` repeated), the mask of allowed candidates, and the
default's answer (the trace's ``index_to_evict``: the host's emulation of clang's default,
see the README's "Register allocation: the default decision"). The network is the
version-3 policy's: standardised rows -> one tanh hidden layer -> one logit per candidate;
the policy evicts the allowed candidate with the largest logit. Cloning minimises the
cross-entropy of the softmax over the allowed candidates against the default's choice
(Adam, minibatches, weight decay). A candidate row holding a NaN (an unspillable range's
``use_def_density``) gets a NaN logit, which the policy never takes; cloning treats it as
not allowed, and drops the decisions whose chosen row is NaN.

:func:`regalloc_decisions` turns per-function searches' incumbents
(mlgo_env.tuning.regalloc_search) into decisions of the same form.

Memory bound: :func:`load_decisions` keeps at most `per_module` decisions of each module,
as float32 ([decisions, 33, features]: 33 x 20 x 4 bytes = 2.6 KB each).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from ..policies.optimiser import adam_step, standardisation as column_standardisation
from ..policies.policy import EMULATION_FEATURE, Layer, Policy
from ..trace_log import read_observations
from ..tuning.regalloc_search import ModuleSearch, candidate_rows

#: the features the network reads (every per-candidate tensor but the mask, and progress)
FEATURES = ("is_free", "nr_urgent", "nr_broken_hints", "is_hint", "is_local",
            "nr_rematerializable", "nr_defs_and_uses", "weighed_reads_by_max",
            "weighed_writes_by_max", "weighed_read_writes_by_max", "weighed_indvars_by_max",
            "hint_weights_by_max", "start_bb_freq_by_max", "end_bb_freq_by_max",
            "hottest_bb_freq_by_max", "liverange_size", "use_def_density", "max_stage",
            "min_stage", "progress")
MASK = "mask"
ACTION = "index_to_evict"


@dataclass
class Decisions:
    """Traced decisions: rows [n, 33, features] (float32), clang's mask [n, 33], the
    default's answers [n], each decision's module, and how many decisions each module
    made in the trace (before sampling)."""

    features: list[str]
    rows: np.ndarray
    mask: np.ndarray
    actions: np.ndarray
    modules: list[str]
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def allowed(self) -> np.ndarray:
        """The mask without the rows holding a NaN (their logit is NaN: never taken)."""
        return self.mask & np.isfinite(self.rows).all(axis=2)

    def subset(self, keep: np.ndarray) -> "Decisions":
        keep = np.asarray(keep, dtype=bool)
        return Decisions(self.features, self.rows[keep], self.mask[keep], self.actions[keep],
                         [m for m, k in zip(self.modules, keep) if k], self.counts)

    def __len__(self) -> int:
        return int(self.actions.size)


def module_of(context: str, modules: Sequence[str]) -> str | None:
    """The module of a trace context ``module:function`` (None when none of `modules`)."""
    best = None
    for m in modules:
        if context.startswith(m + ":") and (best is None or len(m) > len(best)):
            best = m
    return best


def load_decisions(trace_path: str, modules: Sequence[str], per_module: int,
                   rng: np.random.Generator, features: Sequence[str] = FEATURES) -> Decisions:
    """The decisions of `modules` in a regalloc trace, at most `per_module` of each (a
    random sample of them, by `rng`). Raises TraceError for a broken trace and
    ValueError when the trace is not a regalloc one."""
    features = list(features)
    wanted = set(modules)
    per: dict[str, list[tuple[np.ndarray, np.ndarray, int]]] = {}
    seen: dict[str, int] = {}
    owner: dict[str, str | None] = {}
    for context, tensors in read_observations(trace_path):
        if context not in owner:
            owner[context] = module_of(context, list(wanted))
        module = owner[context]
        if module is None:
            continue
        if ACTION not in tensors or MASK not in tensors:
            raise ValueError(f"{trace_path} is not a regalloc trace (no '{ACTION}')")
        mask = tensors[MASK].reshape(-1)
        item = (candidate_rows(tensors, features), mask == 1,
                 int(tensors[ACTION].reshape(-1)[0]))
        # Reservoir sampling keeps a uniform sample of each module's decisions.
        k = seen.get(module, 0)
        seen[module] = k + 1
        bucket = per.setdefault(module, [])
        if len(bucket) < per_module:
            bucket.append(item)
        else:
            j = int(rng.integers(0, k + 1))
            if j < per_module:
                bucket[j] = item
    names = [m for m in modules if m in per for _ in per[m]]
    items = [it for m in modules if m in per for it in per[m]]
    if not items:
        return Decisions(features, np.zeros((0, 33, len(features)), np.float32),
                         np.zeros((0, 33), bool), np.zeros(0, np.int64), [], seen)
    actions = np.asarray([it[2] for it in items], dtype=np.int64)
    d = Decisions(features, np.stack([it[0] for it in items]),
                  np.stack([it[1] for it in items]), actions, names, seen)
    return d.subset(d.allowed[np.arange(len(actions)), actions])


def standardisation(d: Decisions) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard deviation of each feature over the allowed candidate rows (a
    constant feature gets std 1)."""
    return column_standardisation(d.rows[d.allowed], floor=1e-9, constant=1.0)


def policy_of(features: Sequence[str], mean: np.ndarray, std: np.ndarray, w1: np.ndarray,
              b1: np.ndarray, w2: np.ndarray, metadata: dict | None = None) -> Policy:
    """The version-3 policy file form of the network (identity transforms)."""
    layers = [Layer(w1.copy(), b1.copy(), "tanh"), Layer(w2.reshape(-1, 1).copy(), np.zeros(1),
                                                         "linear")]
    return Policy("regalloc", list(features), np.asarray(mean, float), np.asarray(std, float),
                  layers, dict(metadata or {}), ["identity"] * len(features), None,
                  "argmax-masked", MASK)


def candidate_logits(policy: Policy, d: Decisions) -> np.ndarray:
    """The policy's logit for every candidate of every decision, [n, candidates]
    (vectorised: numpy's tanh, see the policy module on the last bit)."""
    n, c, _ = d.rows.shape
    cols = [d.features.index(name) for name in policy.features]
    return policy.logits(d.rows[:, :, cols].reshape(n * c, len(cols))).reshape(n, c)


def choices(policy: Policy, d: Decisions) -> np.ndarray:
    """The policy's answer to every decision (candidate_logits): the allowed candidate
    with the largest logit, NaN as -infinity, ties to the lower index, the last index when
    none is allowed."""
    c = d.rows.shape[1]
    logits = candidate_logits(policy, d)
    scored = np.where(d.mask & ~np.isnan(logits), logits, -np.inf)
    # argmax takes the first maximum: ties (and all -inf among allowed) go to the lower
    # allowed index, as the runner does.
    first_allowed = np.argmax(d.mask, axis=1)
    best = np.where(np.isneginf(scored.max(axis=1)), first_allowed, np.argmax(scored, axis=1))
    return np.where(d.mask.any(axis=1), best, c - 1)


def agreement(policy: Policy, d: Decisions) -> float:
    """Share of the decisions on which the policy answers as the default did."""
    if not len(d):
        return float("nan")
    return float(np.mean(choices(policy, d) == d.actions))


@dataclass
class CloneFit:
    policy: Policy
    train_agreement: float
    loss: float
    steps: int


def fit(d: Decisions, hidden: int, rng: np.random.Generator, steps: int = 400,
        lr: float = 1e-2, l2: float = 1e-4, deadline: Callable[[], bool] | None = None,
        held: Decisions | None = None) -> CloneFit:
    """Fits the network by full-batch Adam on the masked softmax cross-entropy over the
    allowed candidates; stops after `steps` or when `deadline()` says so (checked every
    10 steps). With `held` (decisions of other modules), the parameters whose agreement
    on them is highest, checked every 10 steps from the start, are returned (early
    stopping: the cross-entropy's optimum is not the agreement's). The start is the
    "lowest use_def_density" rule (one hidden unit, monotone in it; the others silent).
    Memory: the allowed rows once, as float32."""
    if not len(d):
        raise ValueError("no traced decision to clone")
    mean, std = standardisation(d)
    x, starts, seg, target = _flattened(d, mean, std)
    params = _rule_start(d.features, hidden, rng)
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    loss, done = float("nan"), 0
    best = (-1.0, [q.copy() for q in params], 0)

    def keep_best() -> None:
        nonlocal best
        if held is not None and len(held):
            score = agreement(policy_of(d.features, mean, std, *params), held)
            if score > best[0]:
                best = (score, [q.copy() for q in params], done)

    keep_best()
    for done in range(1, steps + 1):
        loss, grads = _loss_and_grads(params, x, starts, seg, target, l2)
        adam_step(params, grads, m, v, done, lr)
        if done % 10 == 0:
            keep_best()
            if deadline is not None and deadline():
                break
    if best[0] >= 0:
        params, done = best[1], best[2]
    policy = policy_of(d.features, mean, std, params[0], params[1], params[2])
    return CloneFit(policy, agreement(policy, d), loss, done)


def _flattened(d: Decisions, mean: np.ndarray, std: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The allowed rows standardised [rows, features] (float32), grouped by decision: the
    first row of each decision, each row's decision, and the row each decision chose."""
    obs, cand = np.nonzero(d.allowed)                     # row-major: grouped by decision
    x = ((d.rows[obs, cand] - mean) / std).astype(np.float32)
    starts = np.flatnonzero(np.r_[True, obs[1:] != obs[:-1]])
    seg = np.cumsum(np.r_[0, (obs[1:] != obs[:-1]).astype(np.int64)])
    target = np.flatnonzero(cand == d.actions[obs])       # one per decision
    return x, starts, seg, target


def _rule_start(features: Sequence[str], hidden: int, rng: np.random.Generator
                ) -> list[np.ndarray]:
    """[w1, b1, w2]: the first hidden unit falls with use_def_density (the default's main
    criterion) and alone reaches the output, so the start decides exactly as the "lowest
    use_def_density" rule; the other units have random inputs and start silent."""
    f = len(features)
    w1 = rng.normal(0, 1.0 / math.sqrt(f), (f, hidden))
    w2 = np.zeros(hidden)
    if "use_def_density" in features:
        w1[:, 0] = 0.0
        w1[list(features).index("use_def_density"), 0] = -0.5
        w2[0] = 5.0
    return [w1, np.zeros(hidden), w2]


def _loss_and_grads(params: list[np.ndarray], x: np.ndarray, starts: np.ndarray,
                    seg: np.ndarray, target: np.ndarray, l2: float
                    ) -> tuple[float, list[np.ndarray]]:
    """Mean cross-entropy of the softmax within each decision's allowed rows (`x` [rows,
    features], decision k's rows from starts[k], `seg` the decision of each row, `target`
    the row the default chose) and its gradients (manual backprop)."""
    w1, b1, w2 = params
    n = starts.size
    h = np.tanh(x @ w1 + b1)                               # [rows, H]
    z = h @ w2                                             # [rows]
    z = z - np.maximum.reduceat(z, starts)[seg]
    e = np.exp(z)
    p = e / np.add.reduceat(e, starts)[seg]
    loss = float(-np.mean(np.log(p[target] + 1e-12)))
    dz = p
    dz[target] -= 1.0
    dz /= n
    gw2 = h.T @ dz + l2 * w2
    dh = dz[:, None] * w2 * (1 - h * h)                    # [rows, H]
    gw1 = x.T @ dh + l2 * w1
    gb1 = dh.sum(axis=0)
    return loss + 0.5 * l2 * float((w1 ** 2).sum() + (w2 ** 2).sum()), [gw1, gb1, gw2]


def regalloc_decisions(searches: Sequence[ModuleSearch]) -> tuple[Decisions, np.ndarray]:
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
