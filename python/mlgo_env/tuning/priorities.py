"""`python -m mlgo_env.tune priorities`: register priorities searched with the evictions, kept
in the table only where they win by a margin.

After a regalloc tune (the eviction search, and `tune pick` if run), for the modules that
carry the workload (the profile's share, else the largest default scores; `top` of them,
or those `modules` names), each in turn on a worker:

1. the priorities are searched under clang's own eviction advisor
   (mlgo_env.tuning.priority_search), for half the module's share of the budget;
2. the evictions are searched again (the tune's search, mlgo_env.tuning.regalloc_search)
   with the environment answering clang's priority channel with the priorities found
   (EnvironmentOptions::fixedPriorities), for the other half;
3. the joint decisions replace the module's eviction-only entry only when their score is
   below the eviction-only entry's (clang's own when it has none) by more than `margin`
   (relative): where the estimate promised 0.05-0.3% the workload lost (xz-utils' encoders),
   where it promised 0.45% and 1.7% it gained (gzip's deflate, xz's decoder), so the
   default margin is 0.4%; a larger promise is still no guarantee (xz's
   lzma_encoder_optimum_normal: 1.86% promised, 0.12 points lost; docs/tuning.md);
4. the kept decisions are played once more, recording the stream identity, the actions and
   the number of priority questions (mlgo_env.tuning.record's Recorder), which must score
   what the search found; the entry gets `priorities` (docs/tuning-format.md) and the table
   is rewritten (the launcher opens the priority channel for it: tuned_launch.h).

The eviction-only entry compared against is the table's (tune's, or `tune pick`'s choice):
run this step after those. Each module's state keeps the outcome under "priorities": the
scores, the joint entry when kept, and the eviction-only entry it was compared against
("alone_entry"); the state's own "entry" stays tune's eviction-only one, and `tune` itself
writes the joint entry only while that is the entry it beat (state.table_entry): a retune
that finds other evictions drops it. Blocks until done.
"""

from __future__ import annotations

import json
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any, Callable

from .. import episodes as ep
from .identity import clang_identity, identity_features, module_opt_level, tuned_identity
from .priority_search import search_priorities
from .profile_weights import corpus_profile, main_file, profdata_tool, read_profile_weights
from .record import TOLERANCE, Recorder
from .regalloc_search import ModuleSearch
from .regalloc_tuner import ALTERNATIVES, Replay
from .state import load_states, save_state
from .table import Entry, read_entries, read_manifest, write_table

#: the relative margin by which joint decisions must beat eviction alone (module doc)
MARGIN = 0.004


@dataclass
class PriorityOptions:
    tuning: str
    corpus: str
    minutes: float = 20.0
    #: only these modules (default: the `top` that carry the workload)
    modules: list[str] | None = None
    top: int = 4
    margin: float = MARGIN
    workers: int = 2
    cache_dir: str | None = None
    temp_dir: str | None = None
    clang: str | None = None


@dataclass
class PriorityOutcome:
    module: str
    clang: float            # clang's own priorities and evictions
    alone: float            # the eviction-only entry (clang's own when none)
    priorities: float       # the priorities found, with clang's evictions
    joint: float            # the priorities found, then evictions searched under them
    kept: bool
    episodes: int
    why: str = ""
    entry: Entry | None = None
    note: str = ""

    def report(self) -> dict[str, Any]:
        return {"clang": self.clang, "alone": self.alone, "priorities": self.priorities,
                "joint": self.joint, "kept": self.kept, "episodes": self.episodes,
                "why": self.why}


def tune_priorities(o: PriorityOptions, say: Callable[[str], None] = print
                    ) -> list[PriorityOutcome]:
    """Runs the step (module doc); returns each searched module's outcome. ValueError for a
    tuning directory that is not a regalloc table with searched modules, or modules tuned
    under different scores."""
    manifest = read_manifest(o.tuning)
    if manifest["problem"] != "regalloc":
        raise ValueError(f"{o.tuning}: a {manifest['problem']} table; priorities are regalloc's")
    states, problems = load_states(o.tuning, "regalloc")
    for line in problems:
        say(f"tune priorities: {line}")
    score = _table_score(states)
    clang = clang_identity(o.clang)
    current = {m: st for m, st in states.items() if st.get("default_score") is not None and
               st["identity"] == tuned_identity(o.corpus, m, clang["version"], score)}
    chosen = _choose(o, current, say)
    seconds = o.minutes * 60.0 * min(o.workers, len(chosen)) / len(chosen)
    say(f"tune priorities: {len(chosen)} modules, {seconds / 60:.1f} minutes each, under "
        f"the {score or 'llvm'} score: {', '.join(chosen)}")
    features = identity_features(manifest["features"])
    table = {e.module: e for e in read_entries(o.tuning)}
    alone = {m: _alone_entry(table.get(m), current[m]) for m in chosen}
    outcomes: list[PriorityOutcome] = []
    stop = threading.Event()
    pool = ThreadPoolExecutor(max_workers=max(1, o.workers))
    try:
        jobs = [pool.submit(_module, o, m, current[m], alone[m], score, seconds, features, stop)
                for m in chosen]
        for job in as_completed(jobs):
            found = job.result()
            out = _settle(found, table.get(found.module), o.margin)
            outcomes.append(out)
            say(_line(out))
            if not out.why:  # a failed module keeps its state and table entry as they were
                _save(o, out, current[out.module], alone[out.module])
                table = _rewrite_table(o, manifest, table, out, alone[out.module])
    except KeyboardInterrupt:
        stop.set()  # the searches end after their episode in flight; finished ones are saved
        say("tune priorities: interrupted; the modules finished are in the table")
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    kept = sum(1 for out in outcomes if out.kept)
    say(f"tune priorities: {kept} of {len(outcomes)} modules keep joint decisions; "
        f"{len(table)} modules in the table ({o.tuning})")
    return outcomes


def _settle(out: PriorityOutcome, current: Entry | None, margin: float) -> PriorityOutcome:
    """The outcome against an earlier run's joint entry still in the table (`current` with
    priorities): that one stays where it scores lower than the new joint decisions (or the
    new ones were not kept), as long as it beats eviction alone by the margin."""
    if out.why or current is None or current.priorities is None:
        return out
    earlier = float(current.tuned_score)
    if earlier < out.alone * (1.0 - margin) and (not out.kept or earlier <= out.joint):
        out.entry, out.kept = current, True
        out.note = f"an earlier run's joint decisions ({earlier:.6g}) kept"
    return out


def _table_score(states: dict[str, dict]) -> str | None:
    scores = {st["identity"].get("score") for st in states.values()}
    if len(scores) > 1:
        raise ValueError("the table's modules were searched under different scores "
                         f"({', '.join(sorted(s or 'llvm' for s in scores))}): tune again")
    return next(iter(scores), None)


def _choose(o: PriorityOptions, states: dict[str, dict], say: Callable[[str], None]
            ) -> list[str]:
    """The modules to search: `o.modules` (those tune searched), else the `o.top` with the
    largest share of the profile's counts, else of the largest default scores. Of modules
    compiled from one file (libtool's `.libs/x.o` and `x.o`: the same functions, the same
    share), the first by name only: the workload runs one of them, and the PIC one
    (`.libs/`, the shared library's) sorts first. ValueError naming what left none."""
    if o.modules is not None:
        chosen = [m for m in o.modules if m in states]
        if not chosen:
            raise ValueError("none of the modules named was searched by tune with this "
                             "compiler and corpus (run tune on them first)")
        return chosen
    if not states:
        raise ValueError(f"{o.tuning}: no module searched by tune with this compiler and "
                         "corpus (run tune first)")
    sources = {m: main_file(o.corpus, m) for m in sorted(states)}
    first: dict[str, str] = {}  # each source file's first module by name
    for m, source in sources.items():
        first.setdefault(source or m, m)
    path, _ = corpus_profile(o.corpus, sorted(states))
    weights = read_profile_weights(path, profdata_tool(o.clang)) if path else None
    if weights is None:
        return sorted(first.values(), key=lambda m: -float(states[m]["default_score"]))[:o.top]
    shares = {m: weights.share(states[m].get("search", {}).get("incumbents", {}), sources[m])
              for m in first.values()}
    hot = sorted((m for m, share in shares.items() if share > 0), key=lambda m: -shares[m])
    if not hot:
        raise ValueError(f"the profile {path} counts nothing in the searched modules")
    say(f"tune priorities: modules ordered by their share of the profile {path}")
    return hot[:o.top]


def _environment(o: PriorityOptions, problem: str, score: str | None, **extra: Any) -> Any:
    return ep.env_factory(problem, o.corpus, None, o.cache_dir, ep.scratch_dir(o.temp_dir, None),
                          None, score, clang=o.clang, **extra)()


def _alone_entry(current: Entry | None, state: dict) -> dict | None:
    """The module's eviction-only entry: the table's (tune's or `tune pick`'s choice), or,
    when the table holds an earlier run's joint entry, the one that run kept aside."""
    if current is not None and current.priorities is None:
        return current.to_json()
    earlier = state.get("priorities") or {}
    return earlier.get("alone_entry") if current is not None else state.get("entry")


def _module(o: PriorityOptions, module: str, state: dict, alone_entry: dict | None,
            score: str | None, seconds: float, features: list[str],
            stop: threading.Event) -> PriorityOutcome:
    """Steps 1-4 of the module doc for one module; a failed episode is its outcome's why."""
    alone = float(alone_entry["tuned_score"]) if alone_entry else float(state["default_score"])
    out = PriorityOutcome(module, float(state["default_score"]), alone, 0.0, 0.0, False, 0)
    try:
        env = _environment(o, "regalloc-priority", score, priority_fallback="weight")
        try:
            found = search_priorities(env, module, seconds / 2, stop)
        finally:
            env.close()
        out.priorities, out.episodes = found.best, found.episodes
        multipliers = found.multipliers()
        fixed = _fixed_priorities_file(o.tuning, module, multipliers)
        env = _environment(o, "regalloc", score, fixed_priorities=fixed)
        try:
            search = _search_evictions(env, module, seconds / 2, stop)
            out.joint, out.episodes = search.best, out.episodes + search.episodes
            if stop.is_set():
                raise KeyboardInterrupt("interrupted")
            out.kept = out.joint < alone * (1.0 - o.margin)
            if out.kept:
                out.entry = _record(env, module, search, features, multipliers,
                                    module_opt_level(o.corpus, module),
                                    state["identity"].get("profile"))
        finally:
            env.close()
    except (Exception, KeyboardInterrupt) as e:  # noqa: BLE001 - the module stays as it was
        out.kept, out.entry, out.why = False, None, f"{type(e).__name__}: {e}"
    return out


def _fixed_priorities_file(tuning: str, module: str, multipliers: dict) -> str:
    """The environment's fixed-priorities file for `module` (tune's own, in DIR/priorities/)."""
    folder = os.path.join(tuning, "priorities")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, module.replace("/", "%") + ".json")
    functions = {name: {"multipliers": steps} for name, steps in multipliers.items()}
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"modules": [{"module": module, "functions": functions}]}, f)
    return path


def _search_evictions(env: Any, module: str, seconds: float, stop: threading.Event
                      ) -> ModuleSearch:
    search = ModuleSearch(env, module, ALTERNATIVES)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not stop.is_set() and \
            not (search.done() and not search.next_pass()):
        search.step(env)
    return search


def _record(env: Any, module: str, search: ModuleSearch, features: list[str],
            multipliers: dict, opt: str, profile: str | None) -> Entry:
    """The joint entry: the search's best played once more under the same priorities.
    ValueError when it does not score what the search found."""
    incumbents = {n: list(map(int, f.incumbent.actions)) for n, f in search.functions.items()}
    rec = Recorder(Replay(incumbents), features)
    obs, info = env.reset(options={"module": module})
    while obs is not None:
        obs, _, terminated, truncated, info = env.step(rec(obs, info))
        if terminated or truncated:
            break
    score = float(info["policy_score"])
    if abs(score - search.best) > TOLERANCE * max(1.0, abs(search.best)):
        raise ValueError(f"replaying the joint decisions scored {score:.6g}, not "
                         f"{search.best:.6g}")
    if rec.hash.first is None:
        raise ValueError("under these priorities clang asks no eviction question, and the "
                         "launcher confirms a module by its evictions' stream")
    questions = int(info.get("priority_answers") or 0)
    if questions <= 0:
        raise ValueError("replaying the joint decisions answered no priority question")
    return Entry(module, rec.actions, rec.hash.first, rec.hash.hexdigest(),
                 float(info["default_score"]), score, opt, profile or "",
                 priorities={"questions": questions, "functions": multipliers})


def _line(out: PriorityOutcome) -> str:
    if out.why:
        return f"tune priorities: {out.module}: left as it was: {out.why}"
    change = (out.joint / out.alone - 1.0) if out.alone else 0.0
    kept = "kept" if out.kept else "not kept"
    return (f"tune priorities: {out.module}: clang {out.clang:.6g}, eviction alone "
            f"{out.alone:.6g}, priorities {out.priorities:.6g}, joint {out.joint:.6g} "
            f"({change:+.2%} against eviction alone; {out.episodes} episodes): "
            f"{out.note or kept}")


def _save(o: PriorityOptions, out: PriorityOutcome, state: dict, alone: dict | None) -> None:
    st = dict(state)
    st["priorities"] = {**out.report(), "margin": o.margin,
                        "entry": out.entry.to_json() if out.entry else None,
                        "alone_entry": alone}
    save_state(o.tuning, out.module, st)


def _rewrite_table(o: PriorityOptions, manifest: dict, table: dict[str, Entry],
                   out: PriorityOutcome, alone: dict | None) -> dict[str, Entry]:
    """The table with the module's joint entry where kept, else its eviction-only entry
    (none when it has none), written; the other modules' entries as they were."""
    entries = dict(table)
    entries.pop(out.module, None)
    chosen = out.entry if out.entry is not None else (
        Entry.from_json(alone, out.module) if alone is not None else None)
    if chosen is not None:
        entries[out.module] = chosen
    write_table(o.tuning, "regalloc", manifest["features"], manifest["clang"], entries.values())
    return entries
