"""Exact replays of episodes already played: a policy that would take the same decisions
as a recorded trajectory gets that trajectory's result without running clang.

clang is deterministic, and the features of decision k depend only on decisions
0..k-1. So if a policy, shown the recorded features of a trajectory step by step, decides
exactly as that trajectory did at every step, its episode *is* that trajectory, and its
bytes are the recorded bytes. Checking costs one vectorised policy evaluation over the
trajectory's rows. The trainer's candidates differ from each other on few call sites,
so most (module, candidate) pairs are replays and only the modules whose decisions
change are compiled.

Trajectories come from played episodes (recorded as they are played) and from the
default trace (its per-module decisions and the per-module scores of its CSV).
"""

from __future__ import annotations

import csv
import dataclasses
import time
from collections import defaultdict
from typing import Any, Sequence

import numpy as np

from .. import episodes as ep
from ..policies.policy import Policy
from ..trace_log import Trace


@dataclasses.dataclass
class Trajectory:
    rows: np.ndarray     # [steps, features] raw features, in the cache's feature order
    actions: np.ndarray  # [steps] the decisions taken (0/1)
    result: ep.EpisodeResult


class _Recorder:
    """Decides with `policy` and records each step's full feature row and decision."""

    def __init__(self, policy: Policy, names: Sequence[str]) -> None:
        self.policy, self.names = policy, list(names)
        self.columns = [self.names.index(f) for f in policy.features]
        self.rows: list[np.ndarray] = []
        self.actions: list[int] = []

    def __call__(self, obs: Any, info: dict) -> int:
        row = np.empty(len(self.names))
        for i, name in enumerate(self.names):
            if name in obs:
                row[i] = float(np.asarray(obs[name]).reshape(-1)[0])
            else:  # inlining_default, when clang does not show it as a feature
                row[i] = float(info.get("default_action", 0))
        action = int(self.policy.decisions(row[self.columns][None, :])[0])
        self.rows.append(row)
        self.actions.append(action)
        return action


class ReplayCache:
    """Recorded trajectories per module, at most `per_module` of them (oldest dropped)."""

    def __init__(self, names: Sequence[str], per_module: int = 64) -> None:
        self.names = list(names)
        self.per_module = per_module
        self.trajectories: dict[str, list[Trajectory]] = defaultdict(list)
        self._stacked: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self._columns: dict[tuple[str, ...], list[int]] = {}
        self.hits = 0
        self.misses = 0
        #: wall seconds of the last `evaluate`: replay look-ups, then compiles
        self.last_seconds = (0.0, 0.0)

    def add(self, module: str, rows: np.ndarray, actions: np.ndarray,
            result: ep.EpisodeResult) -> None:
        kept = self.trajectories[module]
        kept.insert(0, Trajectory(np.asarray(rows, float).reshape(-1, len(self.names)),
                                  np.asarray(actions, dtype=np.int8), result))
        del kept[self.per_module:]
        self._stacked.pop(module, None)

    def _stack(self, module: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """All of a module's trajectories as one array of rows, their actions, and the
        offsets where each trajectory starts (so one policy call checks them all)."""
        if module not in self._stacked:
            kept = self.trajectories.get(module, [])
            lengths = [len(t.actions) for t in kept]
            rows = (np.concatenate([t.rows for t in kept]) if kept
                    else np.empty((0, len(self.names))))
            actions = (np.concatenate([t.actions for t in kept]) if kept
                       else np.empty(0, np.int8))
            self._stacked[module] = (rows, actions, np.cumsum([0] + lengths))
        return self._stacked[module]

    def lookup(self, policy: Policy, module: str) -> ep.EpisodeResult | None:
        """The recorded result of the trajectory `policy` would follow on `module`, if any
        (the most recent such trajectory)."""
        kept = self.trajectories.get(module)
        if not kept:
            return None
        rows, actions, offsets = self._stack(module)
        key = tuple(policy.features)
        if key not in self._columns:
            self._columns[key] = [self.names.index(f) for f in policy.features]
        wrong = ((policy.decisions(rows[:, self._columns[key]]) != actions) if len(rows)
                 else np.zeros(0, bool))
        # Mismatches per trajectory: a cumulative count read at the offsets.
        errors = np.diff(np.concatenate([[0], np.cumsum(wrong)])[offsets])
        hits = np.flatnonzero(errors == 0)
        if len(hits) == 0:
            return None
        return dataclasses.replace(kept[int(hits[0])].result, seconds=0.0,
                                   policy_seconds=0.0, compile_seconds=0.0)

    def evaluate(self, pool: ep.EpisodePool, policies: Sequence[Policy],
                 modules: Sequence[str]) -> tuple[list[list[ep.EpisodeResult]],
                                                  list[ep.EpisodeResult]]:
        """Results of every policy on every module (replayed where possible, the rest
        played on `pool` in one batch), and the list of episodes actually played.
        `last_seconds` then holds the wall time of the look-ups and of the compiles."""
        start = time.monotonic()
        table: list[list[ep.EpisodeResult | None]] = []
        jobs, where = [], []
        for p_index, policy in enumerate(policies):
            row: list[ep.EpisodeResult | None] = []
            for m in modules:
                hit = self.lookup(policy, m)
                if hit is None:
                    rec = _Recorder(policy, self.names)
                    jobs.append((m, rec))
                    where.append((p_index, len(row), m, rec))
                row.append(hit)
            table.append(row)
        self.hits += sum(r is not None for row in table for r in row)
        self.misses += len(jobs)
        looked = time.monotonic()
        played = pool.play(jobs) if jobs else []
        self.last_seconds = (looked - start, time.monotonic() - looked)
        for (p_index, m_index, module, rec), result in zip(where, played):
            self.add(module, np.asarray(rec.rows), np.asarray(rec.actions), result)
            table[p_index][m_index] = result
        return [[r for r in row if r is not None] for row in table], played


def seed_from_trace(cache: ReplayCache, trace: Trace, csv_path: str,
                    modules: Sequence[str]) -> list[str]:
    """Adds the default trajectory of each of `modules` that the trace holds whole (its
    decisions, and its score in the trace's CSV); returns the modules added."""
    scores: dict[str, tuple[float, float]] = {}
    with open(csv_path, newline="", encoding="utf-8") as f:
        for rec in csv.DictReader(f):
            scores[rec["context"]] = (float(rec["default_score"]), float(rec["policy_score"]))
    columns = [trace.feature_names.index(n) if n in trace.feature_names else -1
               for n in cache.names]
    if min(columns, default=0) < 0:
        missing = [n for n, c in zip(cache.names, columns) if c < 0]
        raise ValueError(f"the trace lacks feature(s) {', '.join(missing)}")
    by_module: dict[str, list[int]] = defaultdict(list)
    for i, c in enumerate(trace.contexts):
        by_module[c].append(i)
    added = []
    for m in modules:
        if m not in scores:
            continue
        default, policy = scores[m]
        idx = by_module.get(m, [])
        reward = 1.0 - policy / default if default else 0.0
        result = ep.EpisodeResult(m, reward, policy, default, len(idx), 0.0, 0.0, 0.0)
        cache.add(m, trace.rows[idx][:, columns], trace.actions[idx], result)
        added.append(m)
    return added
