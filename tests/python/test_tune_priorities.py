"""`python -m mlgo_env.tune priorities` and the launcher in a real -O2 build (ctest, label
clang).

tests/data/launch_project is captured at -O2 and its evictions tuned for a short while with
the real clang-22; then its modules' priorities are searched with the evictions:

- with a margin that keeps any joint decisions not worse than twice the eviction-only
  score, the table gets entries with priorities exactly for the modules the step says it
  kept, each state records the outcome, and a plain `tune` rerun (nothing changed) keeps
  them in the table; a resumed one keeps each where the module's eviction-only entry is
  still the one its joint decisions beat;
- built by make through the launcher, those modules are `tuned` with their recorded number
  of priority questions answered, and the programs print what the plain build's print;
- with a margin no joint decisions can beat, the step puts the eviction-only entries back:
  the table is again the one tune wrote.

Needs MLGO_ENV, MLGO_ENV_LAUNCH, MLGO_ENV_CORE_DIR, MLGO_CLANG and MLGO_CLANGXX (ctest sets
them; real_tools.py): a missing one fails.
"""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "python"))
from mlgo_env.tuning.priorities import PriorityOptions, tune_priorities  # noqa: E402
from mlgo_env.tuning.session import TuneOptions, tune  # noqa: E402
from mlgo_env.tuning.state import load_states  # noqa: E402
from mlgo_env.tuning.table import read_entries  # noqa: E402
from real_tools import needs  # noqa: E402
from test_launch import MLGO_ENV_LAUNCH, ProjectCopies  # noqa: E402
from test_tune import build, corpus_of, log_lines, program_output  # noqa: E402


def quiet(_line):
    pass


@needs("MLGO_ENV", "MLGO_ENV_LAUNCH", "MLGO_CLANG", "MLGO_CLANGXX")
class TunePriorities(ProjectCopies):
    prefix = "mlgo-tune-prio-"

    def test_priorities_kept_where_they_win_and_applied_by_the_launcher(self):
        corpus, tuning = os.path.join(self.dir, "corpus"), os.path.join(self.dir, "tuning")
        corpus_of(self.fresh("captured"), corpus, "-O2")
        evictions = TuneOptions("regalloc", corpus, tuning, minutes=0.3, workers=2,
                                progress_every=0)
        tune(evictions, quiet)

        outcomes = tune_priorities(PriorityOptions(tuning, corpus, minutes=0.4, margin=-1.0),
                                   quiet)
        kept = {o.module for o in outcomes if o.kept}
        self.assertTrue(kept, [(o.module, o.joint, o.alone, o.why) for o in outcomes])
        for o in outcomes:
            self.assertEqual(o.kept, o.joint < 2 * o.alone and not o.why, o)
        entries = {e.module: e for e in read_entries(tuning)}
        self.assertEqual({m for m, e in entries.items() if e.priorities}, kept)
        states, _ = load_states(tuning, "regalloc")
        for o in outcomes:  # a module whose step failed stays as it was
            self.assertEqual(states[o.module].get("priorities", {}).get("kept", False), o.kept)
        tune(evictions, quiet)  # nothing changed: the joint entries stay in the table
        self.assertEqual({e.module: e for e in read_entries(tuning)}, entries)
        resumed = TuneOptions("regalloc", corpus, tuning, minutes=0.1, workers=2,
                              progress_every=0, resume=True)
        tune(resumed, quiet)  # the stopped searches go on; a new best drops the joint entry
        after = {e.module: e for e in read_entries(tuning)}
        states, _ = load_states(tuning, "regalloc")
        for m in kept:
            same = states[m]["entry"] == states[m]["priorities"]["alone_entry"]
            self.assertEqual(after[m] == entries[m], same, m)
        tune_priorities(PriorityOptions(tuning, corpus, minutes=0.4, margin=-1.0), quiet)
        entries = {e.module: e for e in read_entries(tuning)}

        plain, built = self.fresh("plain"), self.fresh("built")
        build(plain, flags="-O2")
        log = os.path.join(self.dir, "log")
        build(built, [MLGO_ENV_LAUNCH, f"--tuning={tuning}", f"--log={log}"], "-O2")
        lines = {r["output"]: r for r in log_lines(log)}
        for module, entry in entries.items():
            self.assertEqual(lines[module]["outcome"], "tuned", lines[module])
            self.assertEqual(lines[module].get("priorities"),
                             entry.priorities["questions"] if entry.priorities else None)
        for program in ("ctool", "cxxtool"):
            self.assertEqual(program_output(built, program), program_output(plain, program))

        tune_priorities(PriorityOptions(tuning, corpus, minutes=0.2, margin=1.0,
                                        modules=sorted(kept)), quiet)
        states, _ = load_states(tuning, "regalloc")
        back = {m: st["priorities"]["alone_entry"] for m, st in states.items()
                if st.get("priorities")}
        for e in read_entries(tuning):
            self.assertIsNone(e.priorities, e.module)
            if e.module in back:
                self.assertEqual(e.to_json(), back[e.module], e.module)


if __name__ == "__main__":
    unittest.main()
