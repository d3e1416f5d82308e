"""Carrying a module's tuning across an edit: what a retune of a changed module starts from.

A module whose bitcode or command changed since it was tuned (a release bumps a version
string in a header every file includes; a commit edits one function) is not tuned again
from nothing. When its old state has a table entry, :class:`CarriedTuner` first plays the
entry's actions once, in the order clang asks, hashing every observation as the launcher
does (mlgo_env.tuning.identity):

- the stream is the entry's (same identity hash, same number of decisions): the edit did
  not touch anything the decisions see, the launcher applies the old entry to the new code
  as it is, and the module is *kept across the edit* after that one episode (its scores are
  the new code's; the record step writes its entry again);
- otherwise the problem's own tuner takes over, warm: it is made with the old search state
  as ``warm`` (the inlining tuner starts from the old callee groups and tries first the
  call sites the old search kept, and does not try again those it tried and refused; see
  mlgo_env.tuning.inlining_tuner), so an edit costs episodes in proportion to what changed.

Not thread-safe (a tuner is driven by one thread at a time, as every tuner).
"""

from __future__ import annotations

from typing import Any

from .. import episodes as ep
from .identity import identity_features
from .record import Recorder
from .tuner import ModuleTuner


class EntryPlayer(Recorder):
    """Answers a table entry's actions in order (clang's default past their end), recording
    as the record step does (mlgo_env.tuning.record.Recorder: the stream's hash and the
    actions answered). Plain data: it pickles (Dask workers)."""

    def __init__(self, actions: list[int], features: list[str]) -> None:
        super().__init__(self._answer, identity_features(features))
        self.recorded = list(actions)

    def _answer(self, obs: Any, info: dict) -> int:
        n = len(self.actions)  # Recorder appends after asking
        return self.recorded[n] if n < len(self.recorded) else int(info["default_action"])


class CarriedTuner(ModuleTuner):
    """A changed module's search: the old entry replayed once, then (if the stream moved)
    the problem's tuner started warm. Delegates everything after the first episode."""

    def __init__(self, cls: type[ModuleTuner], module: str, features: list[str],
                 old: dict[str, Any], refresh: bool = False) -> None:
        """`cls`: the problem's tuner; `old`: the module's state from before the edit,
        with an entry. `refresh`: the module is unchanged, its entry is only recorded again
        (to add what newer entries hold)."""
        super().__init__(module, features, None)
        self.refresh = refresh
        self.problem = cls.problem  # type: ignore[misc]
        self.ir2vec_vocab = cls.ir2vec_vocab  # type: ignore[misc]
        self.cls = cls
        self.entry = old["entry"]
        self.old_search = old.get("search")
        self.inner: ModuleTuner | None = None
        #: the old entry's stream was found again: kept across the edit
        self.carried = False
        self._checked = False
        #: the functions the entry's episode reported (its per-context scores' names)
        self._seen: list[str] = []

    def _actions(self) -> list[int]:
        from .table import Entry
        return Entry.from_json(self.entry, self.module).actions

    def propose(self) -> ep.Decide:
        if not self._checked:
            return EntryPlayer(self._actions(), self.features)
        return self._inner().propose()

    def settle(self, decider: ep.Decide, result: ep.EpisodeResult) -> None:
        if self._checked:
            inner = self._inner()
            inner.settle(decider, result)
            self._mirror(inner)
            return
        self._checked = True
        self.episodes += 1
        self.default_score = result.default_score
        self._seen = [str(c["name"]) for c in result.contexts or () if "name" in c]
        same = (isinstance(decider, EntryPlayer) and
                len(decider.actions) == len(decider.recorded) and
                decider.hash.hexdigest() == self.entry["stream"])
        if same:
            self.carried = True
            self.best_score = result.policy_score

    def _inner(self) -> ModuleTuner:
        if self.inner is None:
            self.inner = self.cls.warm(self.module, self.features, self.old_search)
        return self.inner

    def _mirror(self, inner: ModuleTuner) -> None:
        self.default_score = inner.default_score
        self.best_score = inner.best_score
        self.failure = inner.failure
        self.episodes = 1 + inner.episodes

    def done(self) -> bool:
        if not self._checked:
            return False
        return self.carried or self._inner().done()

    def decider(self) -> ep.Decide:
        if self.carried:
            return EntryPlayer(self._actions(), self.features)
        return self._inner().decider()

    def state(self) -> dict[str, Any]:
        if self.carried or not self._checked:
            return dict(self.old_search or {}, carried=self.carried)
        return dict(self._inner().state(), carried=False)

    def functions(self) -> list[str]:
        """The problem's tuner's functions once it has played, else those the entry's
        episode reported; [] when the problem's decisions are not a function's own."""
        if self.cls.functions is ModuleTuner.functions:
            return []
        if self.inner is not None and self.inner.episodes:
            return self.inner.functions()
        return list(self._seen)

    def has_decisions(self) -> bool:
        if self.inner is not None:
            return self.inner.has_decisions()
        return bool(self.entry.get("decisions", 1))

    def beats_default(self) -> bool:
        if self.inner is not None and not self.carried:
            return self.inner.beats_default()
        return super().beats_default()

    def abandon(self, why: str) -> None:
        self.failure = why
        if self.inner is not None:
            self.inner.abandon(why)
