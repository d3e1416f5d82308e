"""Grouped counterfactuals: every call site of one callee flipped together, and a greedy
search that accumulates such groups per module.

A single flip cannot show what inlining a static callee at *all* its call sites does
(the callee's body is deleted once no call is left), nor refusing every call of a
small helper. A group flip does: the episode answers clang's default at every decision
except those whose callee is in the flipped set, where it answers the other way.

Naming the callee: none of clang's 38 inlining features identifies it (they are sizes,
counts and costs; callee_users even changes as call sites are inlined). The IR2Vec
``callee_embedding`` does: it is the embedding of the callee's body, and the bottom-up
inliner has finished a callee (an earlier SCC) before it asks about its call sites, so
every call site of a callee shows the same vector. The key is a hash of that vector
(rounded): two different functions with identical bodies share a key, which is
harmless here (flipping both is a grouped flip too). The environment must be made with
an IR2Vec vocabulary (``ir2vec_vocab="default"``). The decider decides online from the
key, so the group stays well defined when a flip adds or removes later decisions (an
inlined body brings its own call sites).

:func:`greedy_round` tries, on every module still searching, its next untried callee
group on top of the module's best set so far; a group that shrinks the module is kept,
and the callees its new trajectory shows for the first time join the module's queue.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from .. import episodes as ep
from ..policies.margin_policy import margin_spec
from ..policies.policy import feature_row, margin_column
from .identity import site_features  # those a site key hashes

EMBEDDING = "callee_embedding"
#: the margin block of the constant-shift base policies (baselines.shift_policy's)
_ANCHORED = margin_spec(anchored=True)


def callee_key(obs: Any) -> str:
    """A short hash naming the call site's callee (its IR2Vec embedding, rounded)."""
    if EMBEDDING not in obs:
        raise ValueError("grouped flips need the IR2Vec callee embedding in the "
                         "observation (make the environment with ir2vec_vocab)")
    vec = np.round(np.asarray(obs[EMBEDDING], dtype=np.float64).reshape(-1), 3)
    return hashlib.blake2b((vec + 0.0).tobytes(), digest_size=8).hexdigest()


def site_keys(player: "GroupPlayer") -> list[str]:
    """A key per decision of `player`'s trajectory naming the call site across edits of
    other functions: its callee's key and its own features (rounded), without those a site
    key leaves out (identity.site_features). Two sites alike in every feature share a key."""
    kept = set(site_features(player.names))
    local = [i for i, n in enumerate(player.names) if n in kept]
    out = []
    for key, row in zip(player.keys, player.rows):
        values = np.round(np.asarray(row, dtype=np.float64)[local], 3) + 0.0
        out.append(hashlib.blake2b(key.encode() + values.tobytes(), digest_size=8).hexdigest())
    return out


class GroupPlayer:
    """Answers clang's default (or, with `shift`, clang's anchored margin moved by that
    constant: the baseline policy mlgo_env.tuning.baselines.shift_policy), flipped where
    the callee's key is in `flipped`, and flipped again at the decisions whose ordinal is
    in `steps`; records each step's raw feature row (in `names` order), key, default and
    answer."""

    def __init__(self, names: Sequence[str], flipped: frozenset[str],
                 shift: float | None = None, steps: frozenset[int] = frozenset()) -> None:
        self.names, self.flipped, self.shift, self.steps = list(names), flipped, shift, steps
        needed = [_ANCHORED[k] for k in ("plus", "minus", "anchor")]
        if shift is not None and not set(needed) <= set(self.names):
            raise ValueError(f"a constant-shift base needs the features {', '.join(needed)}")
        self.rows: list[np.ndarray] = []
        self.keys: list[str] = []
        self.defaults: list[int] = []
        self.actions: list[int] = []

    def __call__(self, obs: Any, info: dict) -> int:
        default = int(info["default_action"])
        row = feature_row(obs, info, self.names)
        key = callee_key(obs)
        base = default if self.shift is None else int(
            margin_column(row[None, :], self.names, _ANCHORED)[0] + self.shift > 0.0)
        action = 1 - base if key in self.flipped else base
        if len(self.actions) in self.steps:
            action = 1 - action
        self.rows.append(row)
        self.keys.append(key)
        self.defaults.append(default)
        self.actions.append(action)
        return action


@dataclass
class ModuleSearch:
    """One module's greedy search: its best flipped set and trajectory so far."""

    module: str
    default_bytes: float
    bytes: float
    reward: float
    flipped: frozenset
    best: GroupPlayer
    queue: list[str] = field(default_factory=list)   # callee keys not tried yet
    tried: set = field(default_factory=set)
    kept: int = 0
    changed: bool = False  # its best moved since the last `take_changed`
    shift: float | None = None  # the base policy: None for clang's default, else a shift
    #: callee key -> the module reward its group added when kept (> 0) ...
    gains: dict = field(default_factory=dict)
    #: ... or cost when tried and not kept (>= 0; 0: flipping it changed no byte)
    losses: dict = field(default_factory=dict)

    def enqueue(self, player: GroupPlayer) -> None:
        known = self.tried | set(self.queue)
        for k in dict.fromkeys(player.keys):
            if k not in known:
                self.queue.append(k)


def start(pool: ep.EpisodePool, modules: Sequence[str], names: Sequence[str],
          shift: float | None = None) -> tuple[list[ModuleSearch], list[ep.EpisodeResult]]:
    """Plays each module's base policy (the default, or the constant `shift`) once,
    recording its callees; the searches of the modules that make decisions, and the
    results played. Groups flip the base policy's decisions."""
    players = [GroupPlayer(names, frozenset(), shift) for _ in modules]
    results = pool.play(list(zip(modules, players)))
    out = []
    for m, p, r in zip(modules, players, results):
        if p.actions:
            s = ModuleSearch(m, r.default_score, r.policy_score, r.reward, frozenset(), p,
                             shift=shift)
            s.enqueue(p)
            out.append(s)
    return out, results


def greedy_round(pool: ep.EpisodePool, searches: Sequence[ModuleSearch],
                 names: Sequence[str], limit: int | None = None) -> list[ep.EpisodeResult]:
    """Tries the next queued callee group of (at most `limit`) searching modules; keeps
    the groups that shrink their module. Returns the results played."""
    active = [s for s in searches if s.queue][:limit]
    if not active:
        return []
    trials = [next_trial(s, names) for s in active]
    results = pool.play([(s.module, p) for s, (_, p) in zip(active, trials)])
    for s, (key, p), r in zip(active, trials, results):
        settle(s, key, p, r)
    return results


def next_trial(s: ModuleSearch, names: Sequence[str], steps: frozenset[int] = frozenset()
               ) -> tuple[str, GroupPlayer]:
    """Takes the next queued callee of `s`: (its key, the player flipping it on top of the
    best set, and of the single decisions `steps`). The search must have a queue."""
    key = s.queue.pop(0)
    s.tried.add(key)
    return key, GroupPlayer(names, s.flipped ^ {key}, s.shift, steps)


def settle(s: ModuleSearch, key: str, player: GroupPlayer, result: ep.EpisodeResult) -> bool:
    """Keeps the trial of `key` when it shrank the module; queues the callees its
    trajectory showed. Returns whether it was kept."""
    kept = result.reward > s.reward + 1e-12
    if kept:
        s.gains[key] = result.reward - s.reward
        s.flipped, s.best, s.reward, s.bytes = player.flipped, player, result.reward, \
            result.policy_score
        s.kept += 1
        s.changed = True
    else:
        s.losses[key] = max(s.reward - result.reward, 0.0)
    s.enqueue(player)
    return kept


def totals(searches: Sequence[ModuleSearch]) -> tuple[float, float]:
    """(default bytes, best bytes) summed over the searches."""
    return (sum(s.default_bytes for s in searches), sum(s.bytes for s in searches))
