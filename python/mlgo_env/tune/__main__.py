"""Tune your build: search each module's decisions and write a table the build applies.

    python -m mlgo_env.tune --problem=inlining|regalloc --corpus=DIR --output=DIR \\
        [--minutes=20] [--workers=2 | --scheduler=ADDRESS|local[:N]] [--resume]
        [--cache-dir=D] [--modules=REGEX] [--build=CMD --workload=CMD ...]
    python -m mlgo_env.tune pick --tuning=DIR --corpus=DIR --build=CMD --workload=CMD
        [--candidates=3] [--hot=0.001] [--timeout=3600] [--directory=D] [--workers=2]
    python -m mlgo_env.tune status --tuning=DIR [--corpus=NEW] [--log=FILE]
    python -m mlgo_env.tune replay-file --tuning=DIR --corpus=DIR [--workers=2]
    python -m mlgo_env.tune priorities --tuning=DIR --corpus=DIR [--minutes=20] [--top=4]
        [--modules=REGEX] [--margin=0.004] [--workers=2]

The first form searches (mlgo_env.tuning.session) and writes DIR/ (docs/tuning-format.md):
a rerun skips the modules already tuned whose bitcode and command are unchanged; --resume
also continues searches cut short by the clock or Ctrl-C. Its last lines are the mean
per-module reward and ``total: default N, tuned M, change ±X.XX%``.

The second says how much of a build the table covers: with --corpus, which modules of a
newer corpus (`mlgo-env corpus build` of the edited project) are unchanged, changed or
new; with the launcher's log (DIR/launch.log unless --log), which compiles of the last
builds got their tuned decisions and which fell back, and why.

The third writes DIR/inline-replay.txt from an inlining table: the tuned decisions as lines
clang-22's own replay advisor reads (`-mllvm -cgscc-inline-replay=`), so a build can apply
them without the launcher; DIR/inline-replay.flags holds the flags, DIR/inline-replay.json
says which modules the file reproduces exactly (mlgo_env.tuning.inline_replay). tune runs it
after an inlining search when the corpus has the build's compile_commands.json, or is a
ThinLTO corpus (then lld's backends apply it: DIR/inline-replay.ldflags, the link's flags).

The fourth (regalloc) chooses the hot functions' decisions by what the project's own
workload executes: the project's build (--build, a shell command compiling every object
through mlgo-env-launch --tuning="$MLGO_TUNING") runs with a table per candidate, the
workload (--workload, running the measured programs as "$MLGO_RUN" PROGRAM ARGS) counts each
function's instructions under valgrind, and the table whose workload executes least is
written (mlgo_env.tuning.pick; docs/tuning.md). The first form runs it after the search
when given --build and --workload.

The fifth (regalloc, after the first and the fourth) searches register priorities with the
evictions in the modules that carry the workload (the profile's, else the largest) and
keeps them, in the table, where the joint decisions beat the eviction-only ones by more
than --margin (relative); the launcher then answers clang's priority channel too
(mlgo_env.tuning.priorities; docs/tuning.md).

Exit codes: 0 done; 1 a bad corpus, table or state; 2 bad options; 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys

from .. import cluster
from ..tuning import status as st
from ..tuning.identity import REGALLOC_SCORES
from ..tuning.session import TuneOptions, tune


def _tune(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m mlgo_env.tune", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--problem", required=True, choices=["inlining", "regalloc"])
    p.add_argument("--corpus", required=True, help="the project's corpus (mlgo-env corpus build)")
    p.add_argument("--output", required=True, help="the tuning directory to write")
    p.add_argument("--minutes", type=float, default=20.0, help="the whole budget")
    p.add_argument("--workers", type=int, default=2, help="environments at once")
    p.add_argument("--resume", action="store_true",
                   help="continue searches cut short by the clock or Ctrl-C")
    p.add_argument("--cache-dir", help="the environment's baseline cache")
    p.add_argument("--temp-dir", help="the compilers' scratch directory")
    p.add_argument("--modules", help="only the modules whose names match this regex")
    p.add_argument("--progress-every", type=float, default=15.0, help="seconds between lines")
    p.add_argument("--no-replay-file", action="store_true",
                   help="inlining: do not write DIR/inline-replay.txt after the search")
    p.add_argument("--launcher", help="mlgo-env-launch, for the replay file (default: the "
                   "build tree's, or PATH)")
    p.add_argument("--regalloc-score", default="llvm", choices=list(REGALLOC_SCORES),
                   help="regalloc: the score the search lowers: llvm (4*reloads + spills + "
                   "0.2*copies, LLVM's RegAllocScore), instructions (spills + reloads + "
                   "copies, folded ones 0) or executed (every instruction of the object "
                   "times its block's frequency and its function's profile entry count); a "
                   "module searched under another is searched afresh")
    p.add_argument("--no-profile-order", action="store_true",
                   help="regalloc: with a profile, do not search the modules its workload "
                   "runs first (by default they take the budget in proportion to their "
                   "share of the profile's counts)")
    cluster.add_arguments(p)
    _pick_arguments(p, required=False)
    a = p.parse_args(argv)
    if a.minutes <= 0 or a.workers < 1:
        p.error("--minutes must be positive and --workers at least 1")
    if (a.build is None) != (a.workload is None):
        p.error("--build and --workload go together")
    if a.workload is not None and a.problem != "regalloc":
        p.error("--workload picks eviction decisions: it needs --problem=regalloc")
    if a.regalloc_score != "llvm" and a.problem != "regalloc":
        p.error("--regalloc-score needs --problem=regalloc")
    if a.no_profile_order and a.problem != "regalloc":
        p.error("--no-profile-order needs --problem=regalloc (inlining is not ordered by a "
                "profile)")
    o = TuneOptions(a.problem, a.corpus, a.output, a.minutes, a.workers, a.resume,
                    a.cache_dir, a.temp_dir, a.progress_every, scheduler=a.scheduler,
                    regalloc_score=a.regalloc_score, profile_order=not a.no_profile_order)
    if a.modules:
        o.modules = _matching(p, a.modules, a.corpus)
        if not o.modules:
            print(f"tune: no module of {a.corpus} matches '{a.modules}'", file=sys.stderr)
            return 1
    try:
        summary = tune(o, lambda line: print(line, flush=True))
    except KeyboardInterrupt:
        print("tune: interrupted", file=sys.stderr)
        return 130
    except (ValueError, OSError, RuntimeError, subprocess.CalledProcessError) as e:
        print(f"tune: {e}", file=sys.stderr)
        return 1
    if summary.interrupted:
        return 130
    if a.workload is not None:
        return _run_pick(a, a.output)
    if a.problem == "inlining" and not a.no_replay_file and (
            os.path.isfile(os.path.join(a.corpus, "compile_commands.json"))
            or _is_thinlto(a.corpus)):
        # The table is written: a replay file that cannot be made is a warning, not a failure.
        if _replay_file([f"--tuning={a.output}", f"--corpus={a.corpus}",
                         f"--workers={a.workers}"] +
                        ([f"--launcher={a.launcher}"] if a.launcher else [])) == 130:
            return 130
    return 0


def _matching(p: argparse.ArgumentParser, regex: str, corpus: str) -> list[str]:
    """The corpus's modules whose names match `regex` (--modules); a bad regex is p.error."""
    from .. import episodes as ep
    try:
        pattern = re.compile(regex)
    except re.error as e:
        p.error(f"--modules: {e}")
    return [m for m in ep.corpus_modules(corpus) if pattern.search(m)]


def _is_thinlto(corpus: str) -> bool:
    """A ThinLTO corpus (its replay file is applied at the link: tuning/thinlto_replay.py)."""
    from ..tuning.thinlto_replay import is_thinlto
    try:
        return is_thinlto(corpus)
    except (OSError, ValueError):
        return False


def _status(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m mlgo_env.tune status")
    p.add_argument("--tuning", required=True, help="the tuning directory")
    p.add_argument("--corpus", help="a newer corpus of the project, to compare")
    p.add_argument("--log", help="the launcher's log (default: TUNING/launch.log)")
    a = p.parse_args(argv)
    try:
        for line in st.status_lines(a.tuning, a.corpus, a.log):
            print(line)
    except (ValueError, OSError) as e:  # TableError is a ValueError
        print(f"tune status: {e}", file=sys.stderr)
        return 1
    return 0


def _replay_file(argv: list[str]) -> int:
    from .._native import find_program
    from ..tuning.inline_replay import write_replay_file
    p = argparse.ArgumentParser(prog="python -m mlgo_env.tune replay-file")
    p.add_argument("--tuning", required=True, help="the tuning directory (inlining)")
    p.add_argument("--corpus", required=True, help="the corpus it was tuned on")
    p.add_argument("--workers", type=int, default=2, help="compiles at once")
    p.add_argument("--launcher", help="mlgo-env-launch (default: the build tree's, or PATH)")
    a = p.parse_args(argv)
    try:
        write_replay_file(a.tuning, a.corpus, find_program("mlgo-env-launch", a.launcher),
                          a.workers, lambda line: print(line, flush=True))
    except KeyboardInterrupt:
        print("tune replay-file: interrupted", file=sys.stderr)
        return 130
    except (ValueError, OSError) as e:
        print(f"tune replay-file: no inline-replay file written: {e}", file=sys.stderr)
        return 1
    return 0


def _pick_arguments(p: argparse.ArgumentParser, required: bool) -> None:
    p.add_argument("--build", required=required,
                   help='shell command rebuilding the project from scratch, every object '
                   'through mlgo-env-launch --tuning="$MLGO_TUNING"')
    p.add_argument("--workload", required=required,
                   help='shell command running the workload, each measured program as '
                   '"$MLGO_RUN" PROGRAM ARGS')
    p.add_argument("--candidates", type=int, default=3,
                   help="candidates per hot function (builds: this + 2 or 3)")
    p.add_argument("--hot", type=float, default=0.001,
                   help="a function is hot from this share of the tuned modules' "
                   "executed instructions")
    p.add_argument("--timeout", type=float, default=3600.0,
                   help="seconds each build and each workload run may take")
    p.add_argument("--directory", help="where the commands run (default: here)")


def _run_pick(a: argparse.Namespace, tuning: str) -> int:
    from ..tuning.pick import PickOptions, pick
    o = PickOptions(tuning, a.corpus, a.build, a.workload, a.candidates, a.hot, a.timeout,
                    a.workers, a.directory, a.temp_dir, a.cache_dir)
    try:
        pick(o, lambda line: print(line, flush=True))
    except KeyboardInterrupt:
        print(f"tune pick: interrupted; {tuning} is as it was", file=sys.stderr)
        return 130
    except (ValueError, OSError, RuntimeError) as e:  # CommandError is a RuntimeError
        print(f"tune pick: {e}\ntune pick: {tuning} is as it was", file=sys.stderr)
        return 1
    return 0


def _pick(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m mlgo_env.tune pick")
    p.add_argument("--tuning", required=True, help="the tuning directory (regalloc)")
    p.add_argument("--corpus", required=True, help="the corpus it was tuned on")
    p.add_argument("--workers", type=int, default=2, help="environments at once")
    p.add_argument("--cache-dir", help="the environment's baseline cache")
    p.add_argument("--temp-dir", help="scratch directory (the variants' tables)")
    _pick_arguments(p, required=True)
    a = p.parse_args(argv)
    if a.workers < 1:
        p.error("--workers must be at least 1")
    return _run_pick(a, a.tuning)


def _priorities(argv: list[str]) -> int:
    from ..tuning.priorities import MARGIN, PriorityOptions, tune_priorities
    p = argparse.ArgumentParser(prog="python -m mlgo_env.tune priorities")
    p.add_argument("--tuning", required=True, help="the tuning directory (regalloc)")
    p.add_argument("--corpus", required=True, help="the corpus it was tuned on")
    p.add_argument("--minutes", type=float, default=20.0, help="the whole budget")
    p.add_argument("--top", type=int, default=4,
                   help="modules searched: those with the largest share of the profile "
                   "(else of the default score)")
    p.add_argument("--modules", help="instead, the modules whose names match this regex")
    p.add_argument("--margin", type=float, default=MARGIN,
                   help="joint decisions are kept where their score is below the "
                   "eviction-only entry's by more than this (relative)")
    p.add_argument("--workers", type=int, default=2, help="modules at once")
    p.add_argument("--cache-dir", help="the environment's baseline cache")
    p.add_argument("--temp-dir", help="the compilers' scratch directory")
    a = p.parse_args(argv)
    if a.minutes <= 0 or a.workers < 1 or a.top < 1:
        p.error("--minutes must be positive, --workers and --top at least 1")
    o = PriorityOptions(a.tuning, a.corpus, a.minutes, None, a.top, a.margin, a.workers,
                        a.cache_dir, a.temp_dir)
    if a.modules:
        o.modules = _matching(p, a.modules, a.corpus)
        if not o.modules:
            print(f"tune priorities: no module of {a.corpus} matches '{a.modules}'",
                  file=sys.stderr)
            return 1
    try:
        tune_priorities(o, lambda line: print(line, flush=True))
    except KeyboardInterrupt:
        print("tune priorities: interrupted", file=sys.stderr)
        return 130
    except (ValueError, OSError, RuntimeError) as e:
        print(f"tune priorities: {e}", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "priorities":
        return _priorities(argv[1:])
    if argv and argv[0] == "status":
        return _status(argv[1:])
    if argv and argv[0] == "replay-file":
        return _replay_file(argv[1:])
    if argv and argv[0] == "pick":
        return _pick(argv[1:])
    return _tune(argv)


if __name__ == "__main__":
    sys.exit(main())
