"""`python -m mlgo_env.tune pick`: a regalloc table's hot functions chosen by what the
project's own workload executes, not by static cost alone.

    python -m mlgo_env.tune pick --tuning=DIR --corpus=DIR --build=CMD --workload=CMD
        [--candidates=3] [--hot=0.001] [--timeout=3600] [--directory=D] [--workers=2]

The static search stays the cheap filter: it gave each function its candidates (the static
best and earlier incumbents of its search, mlgo_env.tuning.pick_plan). The project's own
build (`--build`, a shell command that rebuilds every object through
``mlgo-env-launch --tuning="$MLGO_TUNING"``) is run with one table per variant, and its
workload (`--workload`, a shell command running the measured programs as ``"$MLGO_RUN"
PROGRAM ARGS``) counts the instructions each function executes (mlgo_env.tuning.workload):

1. the table as tune wrote it: its counts name the hot functions;
2. a build per candidate index, every hot function given that candidate at once, and a
   build without the hot modules' entries (clang's own decisions);
3. per hot function the candidate that executed least; a module keeps an entry only when
   that beats clang's own; the table so chosen is built and measured (*picked*);
4. of every table measured, the one whose workload executed fewest instructions in all is
   written to DIR (ties: the table as it was, then the picked one); DIR/workload.json says
   what was measured and chosen.

Every variant's table is recorded by the environment like tune's (stream identities), and
each build's launcher log must show each hot module's compile getting its entry, so what was
measured is what the launcher builds from the written table. A build or workload that
fails, outlives `--timeout`, or a log that shows a fallback raises
mlgo_env.tuning.workload.CommandError; Ctrl-C raises KeyboardInterrupt: in both cases DIR
is left as it was and the variants' directory is removed.

Blocks for K + 2 or K + 3 builds and workload runs, and the record episodes.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from .. import episodes as ep
from ..cluster import Failure, TaskRunner, open_runner
from . import pick_plan as plan
from .identity import identity_features, is_profile_digest, module_opt_level, tuned_identity
from .record import Recorder
from .regalloc_tuner import Replay
from .state import load_states, save_state
from .table import Entry, read_entries, read_manifest, write_atomic, write_table
from .workload import CommandError, Counts, Runner

#: relative difference tolerated between a composition's recorded score and its parts'
TOLERANCE = 1e-9


@dataclass
class PickOptions:
    tuning: str
    corpus: str
    #: shell commands: the project's build (through the launcher, --tuning="$MLGO_TUNING")
    #: and its workload (the measured programs run as "$MLGO_RUN" PROGRAM ARGS)
    build: str
    workload: str
    candidates: int = 3
    #: a function is hot from this share of the tuned modules' executed instructions
    hot: float = 0.001
    #: seconds each build and each workload run may take
    timeout: float = 3600.0
    workers: int = 2
    #: where the commands run (default: the current directory)
    directory: str | None = None
    temp_dir: str | None = None
    cache_dir: str | None = None


@dataclass
class Run:
    """One measured table: the hot modules' entries in it (None: clang's own) and what the
    workload executed."""
    name: str
    entries: dict[str, Entry | None]
    counts: Counts = field(default_factory=Counts)
    build_seconds: float = 0.0
    workload_seconds: float = 0.0
    same_as: str | None = None
    #: the launcher's log of its build
    log: str = ""


@dataclass
class PickSummary:
    runs: list[Run] = field(default_factory=list)
    hot: dict[str, int] = field(default_factory=dict)
    modules: list[str] = field(default_factory=list)
    chosen: str = "tuned"
    record_seconds: float = 0.0
    seconds: float = 0.0


def pick(o: PickOptions, say: Callable[[str], None] = print) -> PickSummary:
    """Runs the pick (see the module's docstring). ValueError for a table that is not
    regalloc's or does not match the corpus; CommandError for a failed command;
    KeyboardInterrupt passes through. DIR changes only when the pick finishes."""
    started = time.monotonic()
    if o.candidates < 1 or not 0.0 <= o.hot < 1.0 or o.timeout <= 0:
        raise ValueError("--candidates must be at least 1, --hot in [0, 1), --timeout > 0")
    manifest = read_manifest(o.tuning)
    if manifest["problem"] != "regalloc":
        raise ValueError(f"{o.tuning} is a table of problem '{manifest['problem']}'; the "
                         "workload picks eviction decisions (--problem=regalloc)")
    work = tempfile.mkdtemp(prefix="mlgo-env-pick-", dir=o.temp_dir)
    try:
        p = _Pick(o, manifest, work, say)
        try:
            summary = p.run()
        finally:
            p.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    summary.seconds = time.monotonic() - started
    say(f"pick: {len(summary.runs)} tables measured in {summary.seconds:.0f} s (builds "
        f"{sum(r.build_seconds for r in summary.runs):.0f} s, workload runs "
        f"{sum(r.workload_seconds for r in summary.runs):.0f} s, record episodes "
        f"{summary.record_seconds:.0f} s)")
    return summary


class _Pick:
    def __init__(self, o: PickOptions, manifest: dict[str, Any], work: str,
                 say: Callable[[str], None]) -> None:
        self.o, self.manifest, self.work, self.say = o, manifest, work, say
        self.table = {e.module: e for e in read_entries(o.tuning)}
        self.states = _matching_states(o, manifest, say)
        self.commands = Runner(os.path.abspath(o.directory or os.getcwd()), o.timeout, work)
        self.runner: TaskRunner | None = None
        self.measured: dict[tuple, Run] = {}
        self.summary = PickSummary()

    def close(self) -> None:
        if self.runner is not None:
            self.runner.close()

    def run(self) -> PickSummary:
        s = self.summary
        tuned = self._measure(Run("tuned", {}))
        names = {n for st in self.states.values()
                 for n in (st.get("search") or {}).get("incumbents", {})}
        s.hot = plan.hot_functions(tuned.counts.functions, names, self.o.hot)
        modules = [m for m in plan.hot_modules(self.states, set(s.hot), self.o.candidates,
                                               {k: e.actions for k, e in self.table.items()})
                   if any(c.actions for cs in m.candidates.values() for c in cs)]
        s.modules = [m.module for m in modules]
        if not modules:
            self.say("pick: no function of a tuned module carries the workload; the table "
                     "stays as it was")
            self._write_report(modules, None, tuned)
            return s
        tuned.entries = {m.module: self.table.get(m.module) for m in modules}
        self._check_log(tuned, modules)
        self.measured[_key(tuned.entries)] = tuned
        self._say_hot(s.hot, tuned.counts, modules)
        recorded = self._record([(m, v) for m in modules for v in range(self.o.candidates)])
        variants = [self._measure(Run(f"candidate {v}", {m.module: recorded[m.module, v]
                                                         for m in modules}), modules)
                    for v in range(self.o.candidates)]
        clang = self._measure(Run("clang", {m.module: None for m in modules}), modules)
        choice = plan.choose(modules, [r.counts.functions for r in variants],
                             clang.counts.functions)
        final = self._record([(m, choice.index) for m in modules if choice.entry[m.module]])
        picked = self._measure(Run("picked", {m.module: final.get((m.module, None))
                                              for m in modules}), modules)
        self._say_choice(modules, variants, clang, choice, picked)
        order = [tuned, picked] + variants + [clang]
        winner = min(order, key=lambda r: (r.counts.total, order.index(r)))
        s.chosen = winner.name
        self._apply(winner, modules, choice)
        self._write_report(modules, choice, winner)
        return s

    # -- measuring ------------------------------------------------------------------------
    def _measure(self, run: Run, modules: list[plan.HotModule] | None = None) -> Run:
        """Builds with `run`'s table and runs the workload (or takes the counts of a table
        measured before with the same entries)."""
        self.summary.runs.append(run)
        key = _key(run.entries)
        if modules is not None and key in self.measured:
            first = self.measured[key]
            run.counts, run.same_as = first.counts, first.name
            self.say(f"pick: {run.name}: the same table as {first.name}")
            return run
        where = os.path.join(self.work, run.name.replace(" ", "-"))
        table = os.path.join(where, "table")
        entries = [e for m, e in self.table.items() if m not in run.entries]
        entries += [e for e in run.entries.values() if e is not None]
        write_table(table, "regalloc", self.manifest["features"], self.manifest["clang"],
                    entries)
        env = dict(os.environ, MLGO_TUNING=table)
        t0 = time.monotonic()
        self.commands.run(f"the build ({run.name})", self.o.build, env,
                          os.path.join(where, "build.log"))
        t1 = time.monotonic()
        run.counts = self.commands.measure(self.o.workload, env, os.path.join(where, "counts"))
        run.build_seconds, run.workload_seconds = t1 - t0, time.monotonic() - t1
        run.log = os.path.join(table, "launch.log")
        if modules is not None:
            self._check_log(run, modules)
            self.measured[key] = run
        self.say(f"pick: {run.name}: {run.counts.total:,} instructions in "
                 f"{run.counts.processes} processes (build {run.build_seconds:.0f} s, "
                 f"workload {run.workload_seconds:.0f} s)")
        return run

    def _check_log(self, run: Run, modules: list[plan.HotModule]) -> None:
        """The build's launcher log: every compile of a hot module with an entry in `run`
        got it, and some module defining each hot function was compiled."""
        path = run.log
        if not os.path.exists(path):
            raise CommandError(f"the build ({run.name}) compiled nothing through the "
                               f"launcher ({path} is missing): --build must rebuild every "
                               'object with mlgo-env-launch --tuning="$MLGO_TUNING"')
        names = {m.module: m for m in modules}
        seen: set[str] = set()
        with open(path, encoding="utf-8") as f:
            lines = [json.loads(line) for line in f if line.strip()]
        for line in lines:
            module = _module_of(line, names)
            if module is None:
                continue
            seen |= names[module].hot
            if run.entries.get(module) is not None and line.get("outcome") != "tuned":
                raise CommandError(
                    f"the build ({run.name}) compiled {line.get('output')} without its "
                    f"entry ({line.get('outcome')}: {line.get('why')}); what the workload "
                    "measured would not be the table's")
        missing = sorted(set().union(*(m.hot for m in modules)) - seen)
        if missing:
            raise CommandError(f"the build ({run.name}) compiled no module defining "
                               f"{', '.join(missing[:5])} through the launcher: --build "
                               "must rebuild every object (make clean first)")

    # -- recording ------------------------------------------------------------------------
    def _score(self) -> str:
        """The regalloc score the table was searched under (its states' identity "score";
        none: LLVM's), so recorded entries carry scores of the same kind. ValueError when
        its modules were searched under different scores."""
        scores = {st["identity"].get("score", "llvm") for st in self.states.values()}
        if len(scores) > 1:
            raise ValueError(f"{self.o.tuning} was searched under several scores "
                             f"({', '.join(sorted(scores))}): tune again with one")
        return scores.pop() if scores else "llvm"

    def _record(self, jobs: list[tuple[plan.HotModule, Any]]) -> dict[tuple, Entry]:
        """Entries of each (module, candidate index or per-function indices) composition,
        played by the environment with the stream identity recorded, keyed (module, v)
        (a per-function choice: (module, None)). ValueError when one cannot be recorded."""
        if self.runner is None:
            make = ep.env_factory("regalloc", self.o.corpus, None, self.o.cache_dir,
                                  ep.scratch_dir(self.o.temp_dir, None),
                                  regalloc_score=self._score())
            self.runner = open_runner(None, make, max(self.o.workers, 1), self.o.corpus)
            got = identity_features(self.runner.observation_features())
            if got != list(self.manifest["features"]):
                raise ValueError(f"{self.o.tuning} was made with other identity features "
                                 "than this environment sends: tune again")
        t0 = time.monotonic()
        features = list(self.manifest["features"])
        recorders = [Recorder(Replay(m.composition(v)), features) for m, v in jobs]
        outcomes = self.runner.play_outcomes([(m.module, r)
                                              for (m, _), r in zip(jobs, recorders)])
        out = {}
        for (m, v), rec, result in zip(jobs, recorders, outcomes):
            if isinstance(result, Failure) or rec.hash.first is None:
                raise ValueError(f"{m.module}: its candidates could not be recorded: "
                                 f"{getattr(result, 'message', 'no decision')}")
            expected = m.expected_score(v)
            if expected is not None and abs(result.policy_score - expected) > \
                    TOLERANCE * max(1.0, abs(expected)):
                self.say(f"pick: {m.module}: its functions' candidates together scored "
                         f"{result.policy_score:.6g}, not their sum {expected:.6g}")
            profile = self.states[m.module]["identity"].get("profile") or ""
            out[m.module, v if isinstance(v, int) else None] = Entry(
                m.module, rec.actions, rec.hash.first, rec.hash.hexdigest(),
                float(result.default_score), float(result.policy_score),
                module_opt_level(self.o.corpus, m.module), profile)
        self.summary.record_seconds += time.monotonic() - t0
        return out

    # -- the result -----------------------------------------------------------------------
    def _apply(self, winner: Run, modules: list[plan.HotModule], choice: plan.Choice) -> None:
        """Writes `winner`'s entries into the hot modules' states, then the table."""
        if winner.name == "tuned" or winner.same_as == "tuned":
            self.say("pick: the table as tuned executes least; it stays as it was")
            return
        for m in modules:
            st = self.states[m.module]
            e = winner.entries.get(m.module)
            st["entry"] = None if e is None else e.to_json()
            st["recorded_score"] = st.get("best_score")
            st["workload"] = {"table": winner.name,
                              "choice": {n: choice.index[n] for n in sorted(m.hot)}}
            save_state(self.o.tuning, m.module, st)
        entries = [e for k, e in self.table.items() if k not in winner.entries]
        entries += [e for e in winner.entries.values() if e is not None]
        write_table(self.o.tuning, "regalloc", self.manifest["features"],
                    self.manifest["clang"], entries)
        self.say(f"pick: {self.o.tuning} now holds the {winner.name} table")

    def _write_report(self, modules: list[plan.HotModule], choice: plan.Choice | None,
                      winner: Run) -> None:
        s = self.summary
        doc = {"format": "mlgo-env-workload-pick", "version": 1, "build": self.o.build,
               "workload": self.o.workload, "candidates": self.o.candidates,
               "hot_share": self.o.hot, "chosen": winner.name,
               "runs": [{"name": r.name, "instructions": r.counts.total,
                         "processes": r.counts.processes, "same_as": r.same_as,
                         "build_seconds": round(r.build_seconds, 1),
                         "workload_seconds": round(r.workload_seconds, 1)} for r in s.runs],
               "functions": [{"name": n, "modules": mods,
                              "instructions": {r.name: r.counts.functions.get(n, 0)
                                               for r in s.runs},
                              "chosen": choice.index[n] if choice else None}
                             for n, mods in sorted(plan.defined_by(modules).items())],
               "modules": [{"module": m.module,
                            "entry": winner.entries.get(m.module) is not None}
                           for m in modules]}
        write_atomic(os.path.join(self.o.tuning, "workload.json"),
                     json.dumps(doc, indent=1) + "\n")

    def _say_hot(self, hot: dict[str, int], counts: Counts, modules: list) -> None:
        shown = ", ".join(f"{n} {c / counts.total:.1%}"
                          for n, c in sorted(hot.items(), key=lambda x: -x[1])[:8])
        self.say(f"pick: {len(hot)} hot functions ({sum(hot.values()) / counts.total:.1%} of "
                 f"the workload's instructions) in {len(modules)} tuned modules: {shown}")

    def _say_choice(self, modules: list[plan.HotModule], variants: list[Run], clang: Run,
                    choice: plan.Choice, picked: Run) -> None:
        for name in sorted(choice.index, key=lambda n: -choice.instructions[n]):
            counts = ", ".join(f"{v.counts.functions.get(name, 0):,}" for v in variants)
            self.say(f"pick:   {name}: candidates {counts}; clang "
                     f"{clang.counts.functions.get(name, 0):,}; chose {choice.index[name]}, "
                     f"picked build {picked.counts.functions.get(name, 0):,}")
        dropped = [m.module for m in modules if not choice.entry[m.module]]
        if dropped:
            self.say(f"pick: clang's own decisions execute least in {len(dropped)} hot "
                     f"modules: {', '.join(dropped[:6])}")


def _matching_states(o: PickOptions, manifest: dict[str, Any],
                     say: Callable[[str], None]) -> dict[str, dict[str, Any]]:
    """The regalloc states of `o.tuning` whose module is unchanged in `o.corpus`."""
    states, problems = load_states(o.tuning, "regalloc")
    for line in problems:
        say(f"pick: {line}")
    corpus = set(ep.corpus_modules(o.corpus))
    version = manifest["clang"].get("version", "")
    out, changed = {}, []
    for module, st in states.items():
        profile = st["identity"].get("profile")
        if profile is not None and not is_profile_digest(profile):
            changed.append(module)  # a stale or unreadable profile: no entry is possible
        elif module in corpus and st["identity"] == tuned_identity(
                o.corpus, module, version, st["identity"].get("score")):
            out[module] = st
        else:
            changed.append(module)
    if changed:
        say(f"pick: {len(changed)} tuned modules are not in {o.corpus} as tuned (tune "
            f"again first): {', '.join(changed[:6])}")
    return out


def _key(entries: dict[str, Entry | None]) -> tuple:
    return tuple(sorted((m, None if e is None else tuple(e.actions)) for m, e in entries.items()))


def _module_of(line: dict[str, Any], modules: dict[str, Any]) -> str | None:
    """The hot module a launcher log line is about: its `module`, else the longest module
    name its output path ends with (component-wise)."""
    if line.get("module") in modules:
        return line["module"]
    parts = os.path.normpath(str(line.get("output", ""))).split(os.sep)
    best = None
    for name in modules:
        tail = os.path.normpath(name).split(os.sep)
        if parts[-len(tail):] == tail and (best is None or len(tail) > len(best[1])):
            best = (name, tail)
    return best[0] if best else None
