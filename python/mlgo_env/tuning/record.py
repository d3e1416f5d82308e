"""Recording a module's best decisions as a table entry, and the session's report.

The record episode plays the tuner's best decisions once more while hashing every
observation's identity features (mlgo_env.tuning.identity): the entry holds the actions in
the order clang asked, the first observation's hash (how the launcher finds the entry),
the whole stream's (how it confirms the module), inlining's site keys (one per decision:
how the launcher keeps a changed module's unchanged call sites) and the scores. The episode
must score exactly what the search found (clang is deterministic for the same module, flags
and decisions); one that does not gets no entry and is reported.
"""

from __future__ import annotations

import csv
import io
import os
from typing import Any, Callable, Sequence

from .. import episodes as ep
from ..cluster import Failure, TaskRunner
from .identity import (StreamHash, identity_features, is_profile_digest, module_opt_level,
                       site_features, site_key)
from .state import load_states, save_state
from .table import Entry, write_atomic
from .tuner import ModuleTuner

#: relative difference allowed between the search's score and the record's (regalloc
#: scores are sums of doubles; inlining's are whole bytes and must match exactly)
TOLERANCE = 1e-9


class Recorder:
    """Wraps a decider: hashes each observation and keeps the actions answered, and with
    `sites` each observation's site key (identity.site_key). Plain data (digests, not hash
    objects): it pickles, so it may play on a Dask worker."""

    def __init__(self, decide: ep.Decide, features: Sequence[str], sites: bool = False) -> None:
        self.decide, self.hash, self.actions = decide, StreamHash(features), []
        self.site_features = site_features(features)
        self.sites: list[bytes] | None = [] if sites else None

    def __call__(self, obs: Any, info: dict) -> int:
        self.hash.add(obs)
        if self.sites is not None:
            self.sites.append(site_key(obs, self.site_features))
        action = int(self.decide(obs, info))
        self.actions.append(action)
        return action


def entry_of(t: ModuleTuner, rec: Recorder, result: ep.EpisodeResult, opt: str,
             profile: str | None = None) -> Entry:
    """The entry a record episode makes; `profile`: the profile identity of the module's
    compile (its state's identity; None when it reads none). ValueError when it did not
    score what the search found, made no decision, or has no profile identity (unreadable,
    or stale: identity.module_profile)."""
    if profile is not None and not is_profile_digest(profile):
        raise ValueError(f"its profile is {profile}")
    expected = float(t.best_score)
    if abs(result.policy_score - expected) > TOLERANCE * max(1.0, abs(expected)):
        raise ValueError(f"replaying its best decisions scored {result.policy_score:.6g}, "
                         f"not {expected:.6g}")
    if rec.hash.first is None:
        raise ValueError("replaying its best decisions made no decision")
    keys = getattr(rec, "sites", None)  # a recorder without site keys: none
    sites = None if keys is None else b"".join(keys)
    return Entry(t.module, rec.actions, rec.hash.first, rec.hash.hexdigest(),
                 float(result.default_score), float(result.policy_score), opt, profile or "",
                 sites)


def record_all(runner: TaskRunner, o: Any, tuners: list[ModuleTuner],
               say: Callable[[str], None]) -> None:
    """Records every tuner whose best should be in the table (inlining: all that decide;
    regalloc: those below clang's own cost) and changed since its last record, as tasks of
    `runner`; writes each entry (or its absence) into its module's state."""
    states, _ = load_states(o.output, o.problem)
    todo = []
    for t in tuners:
        st = states.get(t.module)
        if st is None or t.best_score is None or not t.has_decisions():
            continue
        if not (t.beats_default() or t.problem == "inlining"):
            if st.get("entry") is not None:
                st["entry"], st["recorded_score"] = None, None
                save_state(o.output, t.module, st)
            continue
        sites = t.problem == "inlining"
        if st.get("entry") is None or st.get("recorded_score") != t.best_score or \
                (sites and "sites" not in st["entry"]):  # an entry older than site keys
            try:
                todo.append((t, st, Recorder(t.decider(), identity_features(t.features),
                                             sites)))
            except RuntimeError as e:  # nothing to record: the module gets no entry
                say(f"tune: {t.module}: no table entry: {e}")
    if not todo:
        return
    outcomes = runner.play_outcomes([(t.module, rec) for t, _, rec in todo])
    for (t, st, rec), outcome in zip(todo, outcomes):
        try:
            if isinstance(outcome, Failure):
                raise ValueError(outcome.message)
            entry = entry_of(t, rec, outcome, module_opt_level(o.corpus, t.module),
                             st["identity"].get("profile"))
            st["entry"], st["recorded_score"] = entry.to_json(), t.best_score
        except ValueError as e:  # the module keeps no entry; the build uses the fallback
            st["entry"], st["recorded_score"] = None, None
            st["failure"] = f"record: {e}"
            say(f"tune: {t.module}: no table entry: {e}")
        save_state(o.output, t.module, st)


def write_report(directory: str, rows: Sequence[tuple]) -> None:
    """DIR/report.csv: module, default score, tuned score, reward, status, note."""
    path = os.path.join(directory, "report.csv")
    lines = [["module", "default_score", "tuned_score", "reward", "status", "note"]]
    for module, default, tuned, status, note in rows:
        reward = 1.0 - tuned / default if default else 0.0
        lines.append([module, f"{default:.10g}", f"{tuned:.10g}", f"{reward:.6f}", status, note])
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(lines)
    write_atomic(path, buf.getvalue())
