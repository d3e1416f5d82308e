#!/usr/bin/env python3
"""Diagnosis: how far below clang's default can eviction decisions take each module?

Per module, mlgo_env.tuning.regalloc_search searches departures from the default's
emulation function by function (one episode tries one departure in every function at
once; a departure that lowers its function's static cost is kept and the search goes on
from it). The result is a per-module ceiling for eviction policies with stock clang's
observation: decisions fitted to each function, not a policy, and a lower bound of the
true ceiling (greedy; at most --alternatives columns per step; stopped by --minutes).
Beside it: clang's default (what rewards compare with) and the emulation the search
starts from, in total and as the mean of per-module rewards (1 - cost / default's).

Modules: every module of the corpus, or a seeded sample of --modules; the searches share
--workers environments, each taking the unfinished module with the fewest episodes.

With --decisions=OUT.npz it records every step of the final incumbents (candidate rows,
mask, the action, the emulation's choice as the last feature, the module, the
departure's gain as a share of its module's default score) for
research/regalloc_label_fit.py: can a network learn the departures on other packages?
--exclude-packages keeps packages out of the sample (e.g. the ones that check).

    PYTHONPATH=python /usr/bin/python3 research/regalloc_ceiling.py --corpus=DIR \
        [--modules=N] [--minutes=20] [--alternatives=2] [--poisoned-only] \
        [--exclude-packages=P,Q] [--decisions=OUT.npz] [--cache-dir=D]
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from mlgo_env import episodes as ep  # noqa: E402
from mlgo_env.training import regalloc_cloning as rc  # noqa: E402
from mlgo_env.tuning.regalloc_search import ModuleSearch  # noqa: E402
from mlgo_env.training.regalloc_cloning import regalloc_decisions as decisions  # noqa: E402
from mlgo_env.training.training_setup import env_factory, scratch_dir  # noqa: E402

from diagnosis import add_diagnosis_arguments  # noqa: E402


class Searches:
    """The modules' searches and which are being played (a lock guards both)."""

    def __init__(self, names: list[str], args: argparse.Namespace, deadline: float) -> None:
        self.pending, self.searches, self.busy = list(reversed(names)), [], set()
        self.args, self.deadline, self.lock = args, deadline, threading.Lock()
        self.played = self.kept = 0
        self.failed: list[str] = []

    def work(self, env) -> None:
        while time.perf_counter() < self.deadline:
            with self.lock:
                name = self.pending.pop() if self.pending else None
                search = None if name else self._next()
            if name is not None:
                self._start(env, name)
            elif search is None:
                return
            else:
                try:
                    kept = search.step(env)
                except Exception as e:  # the module's search ends; its incumbents stand
                    search.abandon()
                    kept = 0
                    with self.lock:
                        self.failed.append(f"{search.module} (searching, stopped): {e}")
                with self.lock:
                    self.busy.discard(id(search))
                    self.played, self.kept = self.played + 1, self.kept + kept

    def _start(self, env, name: str) -> None:
        try:
            search = ModuleSearch(env, name, self.args.alternatives, self.args.poisoned_only,
                                  rc.FEATURES if self.args.decisions else None)
        except Exception as e:  # a module clang cannot compile: named, the rest go on
            with self.lock:
                self.failed.append(f"{name}: {e}")
            return
        with self.lock:
            self.searches.append(search)
            self.played += 1

    def _next(self) -> ModuleSearch | None:
        free = [s for s in self.searches if not s.done() and id(s) not in self.busy]
        if not free:
            return None
        search = min(free, key=lambda s: s.episodes)
        self.busy.add(id(search))
        return search

    def totals(self) -> tuple[float, float, float]:
        with self.lock:
            return (sum(s.default for s in self.searches),
                    sum(s.emulation for s in self.searches),
                    sum(s.best for s in self.searches))


def change(cost: float, default: float) -> str:
    """The change against clang's default, as a percentage ("no cost" when the default has
    none: a module without spills)."""
    return f"{cost / default - 1:+.2%}" if default else ("no cost" if cost == 0 else "from 0")


def reward(cost: float, default: float) -> float:
    return 0.0 if cost == default else (1.0 - cost / default if default else -1.0)


def report(s: Searches, seconds: float) -> None:
    d, e, b = s.totals()
    searches = s.searches
    left = sum(len(f.queue) for m in searches for f in m.functions.values())
    print(f"{len(searches)} modules, {s.played} episodes in {seconds:.0f} s, "
          f"{s.kept} departures kept, {left} trials untried"
          f"{' (stopped by --minutes)' if left else ''}; {len(s.failed)} failed")
    for line in s.failed:
        print(f"  failed: {line}")
    for name, cost, rewards in (
            ("clang's default", d, [0.0] * len(searches)),
            ("emulation (start)", e, [reward(m.emulation, m.default) for m in searches]),
            ("search ceiling", b, [reward(m.best, m.default) for m in searches])):
        r = np.asarray(rewards)
        print(f"  {name:<18} total {cost:14.1f}, change {change(cost, d)}, mean per-module "
              f"reward {r.mean():+.5f} ({int((r > 0).sum())} better, {int((r < 0).sum())} "
              "worse than the default)")
    print("  the modules carrying most of the default's cost:")
    for m in sorted(searches, key=lambda m: -m.default)[:8]:
        print(f"    {m.module}: default {m.default:.1f}, emulation {change(m.emulation, m.default)}"
              f", ceiling {change(m.best, m.default)} ({m.episodes} episodes, "
              f"{sum(f.kept for f in m.functions.values())} kept, "
              f"{sum(len(f.queue) for f in m.functions.values())} untried)")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", required=True)
    p.add_argument("--modules", type=int, default=0, help="a seeded sample (0: all)")
    p.add_argument("--minutes", type=float, default=20.0)
    p.add_argument("--alternatives", type=int, default=2,
                   help="columns tried per step besides the incumbent's")
    p.add_argument("--poisoned-only", action="store_true",
                   help="try departures only at steps that show no weights")
    p.add_argument("--exclude-packages", default="",
                   help="comma-separated packages (a module's first path component) left out")
    p.add_argument("--decisions", help="write the incumbents' steps to this .npz")
    add_diagnosis_arguments(p)
    a = p.parse_args()
    excluded = {x for x in a.exclude_packages.split(",") if x}
    names = [m for m in ep.corpus_modules(a.corpus) if m.split("/")[0] not in excluded]
    if a.modules:
        rng = np.random.default_rng(a.seed)
        names = [names[i] for i in sorted(rng.permutation(len(names))[:a.modules])]
    start = time.perf_counter()
    searches = Searches(names, a, start + a.minutes * 60.0)
    make = env_factory("regalloc", a.corpus, None, a.cache_dir, scratch_dir(None, None))
    envs = [make() for _ in range(a.workers)]
    threads = [threading.Thread(target=searches.work, args=(env,)) for env in envs]
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        for t in threads:
            t.join(timeout=60.0)
        if any(t.is_alive() for t in threads):
            d, _, b = searches.totals()
            print(f"  {searches.played} episodes, {time.perf_counter() - start:.0f} s: "
                  f"ceiling so far {b / d - 1 if d else 0.0:+.3%} on "
                  f"{len(searches.searches)} modules", flush=True)
    for env in envs:
        env.close()
    report(searches, time.perf_counter() - start)
    if a.decisions:
        d, gains = decisions(searches.searches)
        np.savez_compressed(a.decisions, rows=d.rows, mask=d.mask, actions=d.actions,
                            modules=np.asarray(d.modules), features=np.asarray(d.features),
                            gains=gains)
        print(f"{len(d)} decisions written to {a.decisions}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
