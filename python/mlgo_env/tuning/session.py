"""A tuning session: every module's search sharing the workers and the budget, then the table.

:func:`tune` keeps every slot of a task runner busy (mlgo_env.cluster: `workers`
environments in this process, or the workers of a Dask cluster with `scheduler`), one
thread per slot. A free slot takes the most promising module that is not in flight and
still has something to try, plays the episode its tuner proposes and hands back the
result (mlgo_env.tuning.tuner): modules
never played first (largest bitcode first: their clang score is not known yet), then the
one with the highest score per episode it has had (default score / (1 + episodes): big and
costly modules get more episodes, every module keeps moving). No worker waits while a
module is left, so the budget is never idle. With a profile (regalloc; `profile_order`,
on by default, when the modules read one instrumentation profile), the modules whose
functions the profiled workload ran come before the rest after the first round, each
taking episodes in proportion to its share of the profile's counts
(mlgo_env.tuning.profile_weights): a register-allocation decision changes only what its
own function executes, so for speed the budget goes where the workload runs.

The search stops when every module is done or the budget (`minutes`, which also covers the
record episodes that follow) runs out. Then each module whose best changed plays its best
decisions once more, recording the stream identity and the actions
(mlgo_env.tuning.record); the table (mlgo_env.tuning.table) is rewritten from the states.

Blocks until done. KeyboardInterrupt stops it: episodes in flight finish, every state is
saved as ``interrupted`` and the table keeps what was recorded (``--resume`` continues).
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from .. import episodes as ep
from ..cluster import Failure, TaskRunner, open_runner
from . import record
from .carry import CarriedTuner
from .identity import REGALLOC_SCORES, clang_identity, identity_features, tuned_identity
from .profile_weights import corpus_profile, main_file, profdata_tool, read_profile_weights
from .state import load_states, save_state, table_entry
from .table import write_table
from .tuner import ModuleTuner
from .tuners import tuner_class


@dataclass
class TuneOptions:
    problem: str
    corpus: str
    output: str
    minutes: float = 20.0
    workers: int = 2
    resume: bool = False
    cache_dir: str | None = None
    temp_dir: str | None = None
    #: progress lines every this many seconds (0: none)
    progress_every: float = 15.0
    #: only these modules (default: the whole corpus)
    modules: list[str] | None = None
    #: a Dask scheduler (mlgo_env.cluster.open_runner's address forms); None: in process
    scheduler: str | None = None
    #: the compiler the environments run (recorded in the table); None: clang-22 on PATH
    clang: str | None = None
    #: regalloc: the score the search lowers, "llvm" (LLVM's RegAllocScore),
    #: "instructions" (spills + reloads + copies, folded ones 0) or "executed" (the
    #: instructions the object's code is estimated to execute); kept in each module's
    #: state identity (as "score", when not "llvm"): another score searches afresh
    regalloc_score: str = "llvm"
    #: regalloc with a profile: search the modules the workload runs first (module doc)
    profile_order: bool = True


@dataclass
class TuneSummary:
    modules: int = 0
    searched: int = 0
    skipped: int = 0
    entries: int = 0
    episodes: int = 0
    default_total: float = 0.0
    tuned_total: float = 0.0
    rewards: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    #: edited modules whose old decisions still gave the old stream (kept after one episode)
    carried: list[str] = field(default_factory=list)
    interrupted: bool = False

    @property
    def change(self) -> float:
        return self.tuned_total / self.default_total - 1.0 if self.default_total else 0.0


class _Scheduler:
    """Hands modules to worker threads (see the module's docstring). Thread-safe."""

    def __init__(self, tuners: list[ModuleTuner], sizes: dict[str, int], end: float,
                 workers: int, weigh: Callable[[ModuleTuner], float] | None = None) -> None:
        self.tuners, self.sizes, self.end, self.workers = tuners, sizes, end, workers
        #: computes a played module's share of the profile (None: no profile orders the
        #: search)
        self.weigh = weigh
        #: each played module's share, computed once (its functions are known by then)
        self.shares: dict[str, float] = {}
        self.busy: set[str] = set()
        self.stop = False
        self.lock = threading.Condition()
        self.seconds: dict[str, float] = {}

    def _record_reserve(self) -> float:
        """Seconds the record episodes will take, spread over the workers."""
        return sum(self.seconds.get(t.module, 0.0) / max(t.episodes, 1)
                   for t in self.tuners if t.episodes) / self.workers

    def _priority(self, t: ModuleTuner) -> tuple:
        if t.episodes == 0:
            return (2, self.sizes.get(t.module, 0))
        if self.weigh is not None:
            if t.module not in self.shares:
                self.shares[t.module] = self.weigh(t)
            if self.shares[t.module] > 0:
                return (1, self.shares[t.module] / (1 + t.episodes))
        return (0, (t.default_score or 0.0) / (1 + t.episodes))

    def take(self) -> ModuleTuner | None:
        with self.lock:
            while True:
                if self.stop or time.monotonic() + self._record_reserve() >= self.end:
                    return None
                free = [t for t in self.tuners if t.module not in self.busy and
                        t.failure is None and not t.done() and t.has_decisions()]
                if free:
                    t = max(free, key=self._priority)
                    self.busy.add(t.module)
                    return t
                if not self.busy:
                    return None
                self.lock.wait(1.0)

    def give_back(self, t: ModuleTuner, seconds: float) -> None:
        with self.lock:
            self.busy.discard(t.module)
            self.seconds[t.module] = self.seconds.get(t.module, 0.0) + seconds
            self.lock.notify_all()


def _worker(runner: TaskRunner, sched: _Scheduler,
            save: Callable[[ModuleTuner, str], None], say: Callable[[str], None]) -> None:
    while True:
        t = sched.take()
        if t is None:
            return
        start = time.monotonic()
        try:
            decider = t.propose()
            (outcome,) = runner.play_outcomes([(t.module, decider)])
            if isinstance(outcome, Failure):
                raise RuntimeError(outcome.message)
            t.settle(decider, outcome)
        except Exception as e:  # a failed episode ends that module's search only
            t.abandon(f"{type(e).__name__}: {e}")
            say(f"tune: {t.module}: search ended by a failed episode: {t.failure}")
        try:
            if t.failure is not None or t.done():  # read while this thread owns it
                save(t, "done" if t.failure is None else "interrupted")
        finally:
            sched.give_back(t, time.monotonic() - start)


def tune(o: TuneOptions, say: Callable[[str], None] = print) -> TuneSummary:
    """Tunes the corpus's modules into `o.output` (see the module's docstring)."""
    started = time.monotonic()
    end = started + o.minutes * 60.0
    cls = tuner_class(o.problem)
    summary = TuneSummary()
    everything = ep.corpus_modules(o.corpus)
    modules = o.modules or everything
    clang = clang_identity(o.clang)  # a module tuned with another compiler is tuned again
    score = _score_identity(o)
    identities = {m: tuned_identity(o.corpus, m, clang["version"], score.get("score"))
                  for m in everything}
    states, problems = load_states(o.output, o.problem)
    for line in problems:
        say(f"tune: {line}")
    make_env = ep.env_factory(o.problem, o.corpus, None, o.cache_dir,
                              ep.scratch_dir(o.temp_dir, None), cls.ir2vec_vocab,
                              score.get("score"))
    runner = open_runner(o.scheduler, make_env, max(o.workers, 1), o.corpus, say)
    try:
        features = runner.observation_features()
        tuners, kept = _plan(o, cls, modules, features, identities, states)
        summary.modules, summary.skipped = len(modules), len(kept)
        edited = sum(1 for t in tuners if isinstance(t, CarriedTuner) and not t.refresh)
        reprofiled = sum(1 for t in tuners if _new_profile(states.get(t.module),
                                                           identities[t.module]))
        say(f"tune: {o.problem}, {len(modules)} modules: {len(tuners)} to search "
            f"({edited} edited since tuned: their old decisions first; {reprofiled} with "
            "another profile: afresh), "
            f"{len(kept)} unchanged and kept; {o.minutes:g} minutes, {runner.slots} slots")
        sizes = {m: os.path.getsize(os.path.join(o.corpus, m + ".bc")) for m in modules}
        sched = _Scheduler(tuners, sizes, end, runner.slots, _profile_weights(o, tuners, say))
        lock = threading.Lock()

        def save(t: ModuleTuner, status: str) -> None:
            with lock:
                _save(o, t, status, identities[t.module], states.get(t.module))

        summary.interrupted = _search(runner, sched, save, started, end, o.progress_every, say)
        for t in tuners:
            status = "interrupted" if summary.interrupted or t.failure else \
                ("done" if t.done() else "stopped")
            if t.default_score is not None:
                _save(o, t, status, identities[t.module], states.get(t.module))
        if not summary.interrupted:
            record.record_all(runner, o, tuners, say)
    finally:
        runner.close()
    return _finish(o, everything, identities, features, summary, tuners, say)


def _plan(o: TuneOptions, cls: type[ModuleTuner], modules: list[str], features: list[str],
          identities: dict, states: dict) -> tuple[list[ModuleTuner], dict]:
    """(the tuners to run, {module: state} of the unchanged modules kept as they are).
    A module edited since it was tuned with the same compiler starts from its old state
    (mlgo_env.tuning.carry); one tuned with another compiler, or with another profile (the
    profile moves which paths are hot, so the old search's refusals no longer hold),
    starts afresh."""
    tuners, kept = [], {}
    for m in modules:
        st = states.get(m)
        same = st is not None and st["identity"] == identities[m]
        if same and (st["status"] == "done" or not o.resume):
            if _without_site_keys(st):  # an entry older than site keys: recorded again
                tuners.append(CarriedTuner(cls, m, features, st, refresh=True))
            else:
                kept[m] = st
            continue
        if same or st is None or st["identity"].get("clang") != identities[m]["clang"] or \
                _new_profile(st, identities[m]) or _new_score(st, identities[m]):
            tuners.append(cls(m, features, st.get("search") if same and o.resume else None))
        elif st.get("entry") is not None:
            tuners.append(CarriedTuner(cls, m, features, st))
        else:
            tuners.append(cls.warm(m, features, st.get("search")))
    return tuners, kept


def _profile_weights(o: TuneOptions, tuners: list[ModuleTuner], say: Callable[[str], None]
                     ) -> Callable[[ModuleTuner], float] | None:
    """A played module's share of the profile the search is ordered by (module doc), or
    None: not regalloc, `profile_order` off, no module to search reads an instrumentation
    profile, or it cannot be read (said)."""
    if not o.profile_order or o.problem != "regalloc" or not tuners:
        return None
    path, problems = corpus_profile(o.corpus, [t.module for t in tuners])
    for line in problems:
        say(f"tune: {line}")
    if path is None:
        return None
    weights = read_profile_weights(path, profdata_tool(o.clang))
    if weights is None:
        say(f"tune: the profile {path} could not be read with llvm-profdata: the search "
            "is not ordered by it")
        return None
    files = {t.module: main_file(o.corpus, t.module) for t in tuners}
    hot = sum(1 for m, f in files.items() if weights.files.get(f or "", 0) > 0)
    say(f"tune: the search goes first to the modules whose functions the profile's workload "
        f"ran ({weights.ran()} of its functions and files ran, {hot} of the {len(files)} "
        f"modules' own files among them; {path})")
    return lambda t: weights.share(t.functions(), files.get(t.module))


def _without_site_keys(state: dict) -> bool:
    """An inlining entry recorded before entries held site keys (the launcher's stale-entry
    route needs them): one episode replays it and the record step writes them."""
    e = state.get("entry")
    return state.get("problem") == "inlining" and e is not None and "sites" not in e


def _score_identity(o: TuneOptions) -> dict[str, str]:
    """What the score adds to a module's identity: nothing for LLVM's (so states made
    before the option stay as they are), {"score": name} for another. ValueError for an
    unknown score, or a score other than LLVM's on a problem other than regalloc."""
    if o.regalloc_score not in REGALLOC_SCORES:
        raise ValueError(f"unknown regalloc score '{o.regalloc_score}' (expected "
                         f"{', '.join(REGALLOC_SCORES[:-1])} or {REGALLOC_SCORES[-1]})")
    if o.regalloc_score == "llvm":
        return {}
    if o.problem != "regalloc":
        raise ValueError(f"the regalloc score '{o.regalloc_score}' needs --problem=regalloc")
    return {"score": o.regalloc_score}


def _new_score(state: dict | None, identity: dict) -> bool:
    """Whether a module was searched under another score: its old scores and refusals are
    in other units, so it starts afresh (like a new profile)."""
    return state is not None and state["identity"].get("score") != identity.get("score")


def _new_profile(state: dict | None, identity: dict) -> bool:
    """Whether a module tuned before (`state`) now reads another profile, or a profile where
    it read none, or none where it read one (identity.module_identity's "profile")."""
    return state is not None and state["identity"].get("profile") != identity.get("profile")


def _search(runner: TaskRunner, sched: _Scheduler, save: Callable[[ModuleTuner, str], None],
            started: float, end: float, every: float, say: Callable[[str], None]) -> bool:
    """Runs a worker thread per slot until the search ends; True when interrupted."""
    threads = [threading.Thread(target=_worker, args=(runner, sched, save, say), daemon=True)
               for _ in range(runner.slots)]
    for th in threads:
        th.start()
    try:
        _watch(threads, sched.tuners, started, end, every, say)
        return False
    except KeyboardInterrupt:
        sched.stop = True
        say("tune: interrupted; waiting for the episodes in flight, then saving")
        for th in threads:
            th.join()
        return True


def _save(o: TuneOptions, t: ModuleTuner, status: str, identity: dict, old: dict | None
          ) -> None:
    same = old is not None and old["identity"] == identity
    state = {"module": t.module, "problem": o.problem, "identity": identity, "status": status,
             "default_score": t.default_score, "best_score": t.best_score,
             "episodes": t.episodes + (old.get("episodes", 0) if same else 0),
             "has_decisions": t.has_decisions(), "failure": t.failure, "search": t.state(),
             "carried": bool(old.get("carried")) if getattr(t, "refresh", False) and old
             else bool(getattr(t, "carried", False)),
             "entry": None, "recorded_score": None}
    if same and old.get("entry") is not None:
        state["entry"], state["recorded_score"] = old["entry"], old.get("recorded_score")
    if same and old.get("priorities") is not None:  # state.table_entry says while it holds
        state["priorities"] = old["priorities"]
    save_state(o.output, t.module, state)


def _watch(threads: list[threading.Thread], tuners: list[ModuleTuner], started: float,
           end: float, every: float, say: Callable[[str], None]) -> None:
    shown = time.monotonic()
    while any(th.is_alive() for th in threads):
        for th in threads:
            th.join(timeout=0.5)
        now = time.monotonic()
        if every and now - shown >= every:
            shown = now
            say(progress_line(tuners, started, end))


def progress_line(tuners: list[ModuleTuner], started: float, end: float) -> str:
    played = [t for t in tuners if t.default_score is not None and t.best_score is not None]
    d = sum(t.default_score for t in played)
    b = sum(min(t.best_score, t.default_score) for t in played)
    episodes = sum(t.episodes for t in tuners)
    now = time.monotonic()
    done = sum(1 for t in tuners if t.done() or t.failure or not t.has_decisions())
    return (f"tune: {done}/{len(tuners)} modules done, {episodes} episodes "
            f"({episodes / max(now - started, 1e-9):.1f}/s), change "
            f"{(b / d - 1.0) if d else 0.0:+.2%}, {max(end - now, 0.0) / 60:.1f} min left")


def _finish(o: TuneOptions, modules: list[str], identities: dict, features: list[str],
            summary: TuneSummary, tuners: list[ModuleTuner], say: Callable[[str], None]
            ) -> TuneSummary:
    states, _ = load_states(o.output, o.problem)
    entries, rows = [], []
    for m in modules:  # the whole corpus: a run on some modules keeps the others' entries
        st = states.get(m)
        if st is None or st.get("default_score") is None or st["identity"] != identities[m]:
            continue
        default = float(st["default_score"])
        e = table_entry(st)
        tuned = float(e["tuned_score"]) if e else default
        if e:
            from .table import Entry
            entries.append(Entry.from_json(e, m))
        if st.get("has_decisions", True) and default > 0:
            summary.rewards.append(1.0 - tuned / default)
        summary.default_total += default
        summary.tuned_total += tuned
        rows.append((m, default, tuned, st["status"], st.get("failure") or ""))
    summary.searched = len(tuners)
    summary.carried = sorted(t.module for t in tuners if getattr(t, "carried", False)
                             and not getattr(t, "refresh", False))
    summary.episodes = sum(t.episodes for t in tuners)
    summary.failures = [f"{t.module}: {t.failure}" for t in tuners if t.failure]
    summary.entries = write_table(o.output, o.problem, identity_features(features),
                                  clang_identity(o.clang), entries)
    record.write_report(o.output, rows)
    mean = sum(summary.rewards) / len(summary.rewards) if summary.rewards else 0.0
    if summary.carried:
        say(f"tune: {len(summary.carried)} edited modules kept their decisions "
            f"(the same stream): {', '.join(summary.carried[:8])}"
            f"{', ...' if len(summary.carried) > 8 else ''}")
    say(f"tune: {summary.entries} modules in the table ({o.output}); "
        f"{summary.episodes} episodes; mean per-module reward {mean:+.4f} "
        f"over {len(summary.rewards)} modules")
    say(f"total: default {summary.default_total:.6g}, tuned {summary.tuned_total:.6g}, "
        f"change {summary.change:+.2%}")
    return summary
